import { API_PREFIX, route, type RouteDefinition } from "./define.js";
import { contactCreateBody, contactList, contactListQuery, contactPath, contactResource, contactUpdateBody } from "../schemas/contacts.js";

/** Endpoint group `contacts` (spec part 1, section 4.3). */
export const contactRoutes: RouteDefinition[] = [
  route({
    operationId: "listContacts",
    method: "GET",
    path: `${API_PREFIX}/contacts`,
    group: "contacts",
    summary: "List contacts ordered by name",
    description: "Users without records.view_all see only contacts linked to records they own.",
    scopes: ["contacts:read"],
    permissions: ["accounts.manage"],
    idempotency: "none",
    request: { query: contactListQuery },
    errors: { 422: ["invalid_query_parameter"] },
    responses: { 200: contactList },
  }),
  route({
    operationId: "getContact",
    method: "GET",
    path: `${API_PREFIX}/contacts/{contact_id}`,
    group: "contacts",
    summary: "Retrieve a visible contact",
    scopes: ["contacts:read"],
    idempotency: "none",
    request: { path: contactPath },
    responses: { 200: contactResource },
  }),
  route({
    operationId: "createContact",
    method: "POST",
    path: `${API_PREFIX}/contacts`,
    group: "contacts",
    summary: "Create a contact",
    description: "account_record_ids must be unique ids of customers, prospects or suppliers the caller can see.",
    scopes: ["contacts:write"],
    idempotency: "optional",
    request: { body: contactCreateBody },
    example: { body: { first_name: "Ann", last_name: "Lee", email_1: "ann@acme.example", account_record_ids: [] } },
    responses: { 201: contactResource },
  }),
  route({
    operationId: "updateContact",
    method: "PATCH",
    path: `${API_PREFIX}/contacts/{contact_id}`,
    group: "contacts",
    summary: "Update a contact",
    description:
      "Fields sent replace the stored ones. account_record_ids omitted keeps the links; an array replaces the links the caller can see; [] removes them.",
    scopes: ["contacts:write"],
    idempotency: "optional",
    request: { path: contactPath, body: contactUpdateBody },
    example: { body: { job_title: "Buyer" } },
    responses: { 200: contactResource },
  }),
];
