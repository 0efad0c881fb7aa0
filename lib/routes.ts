import * as z from "zod";
import { pageQuery } from "./schemas/common.js";
import {
  locationCreateBody,
  locationList,
  locationPath,
  locationResource,
  zoneList,
  zonePath,
  zoneResource,
  zoneWriteBody,
} from "./schemas/locations.js";
import {
  itemCategoryCreateBody,
  itemCategoryList,
  itemCategoryListQuery,
  itemCategoryPath,
  itemCategoryResource,
  itemCategoryUpdateBody,
} from "./schemas/item-categories.js";

import {
  adjustmentBody,
  adjustmentList,
  adjustmentResource,
  deletedItem,
  itemCreateBody,
  itemList,
  itemListQuery,
  itemPath,
  itemResource,
  itemUpdateBody,
  unitList,
  variationList,
  variationListQuery,
} from "./schemas/items.js";
import { syncPage, syncQuery, syncStart } from "./schemas/sync.js";
import {
  contactCreateBody,
  contactList,
  contactListQuery,
  contactPath,
  contactResource,
  contactUpdateBody,
} from "./schemas/contacts.js";
import {
  PARTY_COLLECTIONS,
  PARTY_KINDS,
  deletedResource,
  partyCreateBody,
  partyList,
  partyListQuery,
  partyPath,
  partyResource,
  partyUpdateBody,
  type PartyKind,
} from "./schemas/parties.js";

/**
 * THE route table: the single source of truth for the HTTP surface. The CDK stack creates one
 * API Gateway route per entry (and one Lambda per `group`), the local server dispatches by it,
 * the scope middleware checks `scopes`, the idempotency middleware reads `idempotency`, and the
 * OpenAPI document is generated from it.
 */
export const API_PREFIX = "/api/v3";

export type HttpMethod = "GET" | "POST" | "PATCH" | "PUT" | "DELETE";
export type IdempotencyMode = "required" | "optional" | "none";

/** Endpoint groups: one Lambda function each (architecture section 2). */
export const ENDPOINT_GROUPS = ["platform", "locations", "item-categories", "items", "contacts", "parties", "sync"] as const;
export type EndpointGroup = (typeof ENDPOINT_GROUPS)[number];

export interface RouteDefinition {
  /** Unique name; the group's handler module implements a function under this name. */
  operationId: string;
  method: HttpMethod;
  /** Full path with `{param}` placeholders, as API Gateway writes it. */
  path: string;
  group: EndpointGroup;
  summary: string;
  description?: string;
  /** Scopes required of the API key (all of them); empty for public routes. */
  scopes: readonly string[];
  /** False only for public documents such as the OpenAPI file. */
  authenticated: boolean;
  idempotency: IdempotencyMode;
  request: {
    path?: z.ZodObject;
    query?: z.ZodObject;
    body?: z.ZodType;
  };
  /** Success responses by status code. */
  responses: Record<number, z.ZodType>;
}

const route = (definition: Omit<RouteDefinition, "authenticated"> & { authenticated?: boolean }): RouteDefinition => ({
  authenticated: true,
  ...definition,
});

export const ROUTES: readonly RouteDefinition[] = [
  route({
    operationId: "getOpenApiDocument",
    method: "GET",
    path: `${API_PREFIX}/openapi.json`,
    group: "platform",
    summary: "The OpenAPI 3.1 document of this API",
    scopes: [],
    authenticated: false,
    idempotency: "none",
    request: {},
    responses: { 200: z.record(z.string(), z.unknown()) },
  }),
  route({
    operationId: "listLocations",
    method: "GET",
    path: `${API_PREFIX}/locations`,
    group: "locations",
    summary: "List active locations ordered by name",
    description: "A user restricted to one location receives only that location.",
    scopes: ["items:read"],
    idempotency: "none",
    request: { query: pageQuery },
    responses: { 200: locationList },
  }),
  route({
    operationId: "createLocation",
    method: "POST",
    path: `${API_PREFIX}/locations`,
    group: "locations",
    summary: "Create a location",
    description:
      "Requires the inventory-modify permission and a user not restricted to one location (else 403 permission_denied).",
    scopes: ["items:write"],
    idempotency: "required",
    request: { body: locationCreateBody },
    responses: { 201: locationResource },
  }),
  route({
    operationId: "listZones",
    method: "GET",
    path: `${API_PREFIX}/locations/{location_id}/zones`,
    group: "locations",
    summary: "List the zones of an active, accessible location ordered by name",
    scopes: ["items:read"],
    idempotency: "none",
    request: { path: locationPath, query: pageQuery },
    responses: { 200: zoneList },
  }),
  route({
    operationId: "createZone",
    method: "POST",
    path: `${API_PREFIX}/locations/{location_id}/zones`,
    group: "locations",
    summary: "Create a zone in a location",
    description: "Requires the inventory-modify permission.",
    scopes: ["items:write"],
    idempotency: "required",
    request: { path: locationPath, body: zoneWriteBody },
    responses: { 201: zoneResource },
  }),
  route({
    operationId: "updateZone",
    method: "PATCH",
    path: `${API_PREFIX}/locations/{location_id}/zones/{zone_id}`,
    group: "locations",
    summary: "Update a zone",
    description:
      "Send the complete zone: `name` and `short_name` (required) and `description` (omitted or null clears it). The zone's location cannot change.",
    scopes: ["items:write"],
    idempotency: "required",
    request: { path: zonePath, body: zoneWriteBody },
    responses: { 200: zoneResource },
  }),
  route({
    operationId: "listItemCategories",
    method: "GET",
    path: `${API_PREFIX}/item-categories`,
    group: "item-categories",
    summary: "List item categories ordered by weight, then name",
    scopes: ["items:read"],
    idempotency: "none",
    request: { query: itemCategoryListQuery },
    responses: { 200: itemCategoryList },
  }),
  route({
    operationId: "getItemCategory",
    method: "GET",
    path: `${API_PREFIX}/item-categories/{category_id}`,
    group: "item-categories",
    summary: "Retrieve an item category with its ordered custom fields",
    scopes: ["items:read"],
    idempotency: "none",
    request: { path: itemCategoryPath },
    responses: { 200: itemCategoryResource },
  }),
  route({
    operationId: "createItemCategory",
    method: "POST",
    path: `${API_PREFIX}/item-categories`,
    group: "item-categories",
    summary: "Create an item category",
    description: "Requires the inventory-modify permission. `parent_id` must name a top-level category of the account.",
    scopes: ["items:write"],
    idempotency: "optional",
    request: { body: itemCategoryCreateBody },
    responses: { 201: itemCategoryResource },
  }),
  route({
    operationId: "updateItemCategory",
    method: "PATCH",
    path: `${API_PREFIX}/item-categories/{category_id}`,
    group: "item-categories",
    summary: "Update an item category",
    description:
      "Fields sent replace the stored ones; `custom_fields`, when sent, is the complete desired list. Requires the inventory-modify permission.",
    scopes: ["items:write"],
    idempotency: "optional",
    request: { path: itemCategoryPath, body: itemCategoryUpdateBody },
    responses: { 200: itemCategoryResource },
  }),
  route({
    operationId: "listItems",
    method: "GET",
    path: `${API_PREFIX}/items`,
    group: "items",
    summary: "List items ordered by name",
    description:
      "Archived items are left out unless archived=all, sold unique items unless include_sold=true. ids (at most 50) returns every existing requested item in one response: per_page is the number requested, total_records the number returned; an absent id no longer exists. Requires the inventory-list permission; a location-restricted user sees quantities of its own location only.",
    scopes: ["items:read"],
    idempotency: "none",
    request: { query: itemListQuery },
    responses: { 200: itemList },
  }),
  route({
    operationId: "createItem",
    method: "POST",
    path: `${API_PREFIX}/items`,
    group: "items",
    summary: "Create an item (with one base variation, or the variations given)",
    description: "item_number comes from the account's item sequence; inventory_type defaults from the category. Requires the inventory-modify permission (and costs.view to write costs).",
    scopes: ["items:write"],
    idempotency: "optional",
    request: { body: itemCreateBody },
    responses: { 201: itemResource },
  }),
  route({
    operationId: "getItem",
    method: "GET",
    path: `${API_PREFIX}/items/{id}`,
    group: "items",
    summary: "Retrieve an item",
    scopes: ["items:read"],
    idempotency: "none",
    request: { path: itemPath },
    responses: { 200: itemResource },
  }),
  route({
    operationId: "updateItem",
    method: "PATCH",
    path: `${API_PREFIX}/items/{id}`,
    group: "items",
    summary: "Update an item (archived: true archives, false restores)",
    scopes: ["items:write"],
    idempotency: "optional",
    request: { path: itemPath, body: itemUpdateBody },
    responses: { 200: itemResource },
  }),
  route({
    operationId: "deleteItem",
    method: "DELETE",
    path: `${API_PREFIX}/items/{id}`,
    group: "items",
    summary: "Delete an item that no document references",
    description: "While a document references the item: 422 validation_failed with a detail on document_count.",
    scopes: ["items:write"],
    idempotency: "none",
    request: { path: itemPath },
    responses: { 200: deletedItem },
  }),
  route({
    operationId: "listItemVariations",
    method: "GET",
    path: `${API_PREFIX}/items/{id}/variations`,
    group: "items",
    summary: "List an item's variations (include=locations embeds the stock rows)",
    scopes: ["items:read"],
    idempotency: "none",
    request: { path: itemPath, query: variationListQuery },
    responses: { 200: variationList },
  }),
  route({
    operationId: "createItemAdjustment",
    method: "POST",
    path: `${API_PREFIX}/items/{id}/adjustments`,
    group: "items",
    summary: "Adjust on-hand stock at a location",
    description:
      "Signed quantity; optional item_variation_id or item_variation_location_id (required for items with several variations). The first stock at a location creates its row. Refuses to take on hand below zero (422). Requires the inventory-modify permission.",
    scopes: ["items:write"],
    idempotency: "optional",
    request: { path: itemPath, body: adjustmentBody },
    responses: { 201: adjustmentResource },
  }),
  route({
    operationId: "listItemAdjustments",
    method: "GET",
    path: `${API_PREFIX}/items/{id}/adjustments`,
    group: "items",
    summary: "List an item's adjustments, newest first",
    scopes: ["items:read"],
    idempotency: "none",
    request: { path: itemPath, query: pageQuery },
    responses: { 200: adjustmentList },
  }),
  route({
    operationId: "listUnits",
    method: "GET",
    path: `${API_PREFIX}/units`,
    group: "items",
    summary: "List units of measure by unit_id",
    scopes: ["items:read"],
    idempotency: "none",
    request: { query: pageQuery },
    responses: { 200: unitList },
  }),
  route({
    operationId: "listContacts",
    method: "GET",
    path: `${API_PREFIX}/contacts`,
    group: "contacts",
    summary: "List contacts ordered by name",
    description:
      "Requires the account-management permission. Users without records.view_all see only contacts linked to records they own.",
    scopes: ["contacts:read"],
    idempotency: "none",
    request: { query: contactListQuery },
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
    responses: { 200: contactResource },
  }),
  ...PARTY_KINDS.flatMap(partyRoutes),
  route({
    operationId: "sync",
    method: "GET",
    path: `${API_PREFIX}/sync`,
    group: "sync",
    summary: "Incremental change feed",
    description:
      "start=now returns a sync_start checkpoint; since or cursor return a sync_page of {resource, id, operation} changes. Needs the read scope of every selected resource (items:read, invoices:read, estimates:read, purchase_orders:read, sales_orders:read) and account-wide visibility, else 403 sync_permission_denied. Parameter errors are 400 invalid_query_parameter; cursor errors are 400 sync_cursor_invalid, 403 sync_cursor_owner_mismatch, 409 sync_scope_changed, 409 sync_cursor_expired; since older than 90 days is 409 sync_full_refresh_required.",
    scopes: [],
    idempotency: "none",
    request: { query: syncQuery },
    responses: { 200: z.union([syncStart, syncPage]) },
  }),
];

/** The five operations of spec section 4.4 (PATCH and PUT both partial) for one kind. */
function partyRoutes(kind: PartyKind): RouteDefinition[] {
  const collection = PARTY_COLLECTIONS[kind];
  const title = kind[0]!.toUpperCase() + kind.slice(1);
  const base = `${API_PREFIX}/${collection}`;
  const visibility = "Limited to the caller's record visibility: records.view_all sees every record, other users only the records they own.";
  const update = (method: "PATCH" | "PUT") =>
    route({
      operationId: `${method === "PATCH" ? "update" : "replace"}${title}`,
      method,
      path: `${base}/{id}`,
      group: "parties",
      summary: `Update a ${kind} (${method}: only the fields sent change)`,
      description: `Both PATCH and PUT keep omitted writable fields; null clears a field. ${visibility}`,
      scopes: [`${collection}:write`],
      idempotency: "optional",
      request: { path: partyPath, body: partyUpdateBody(kind) },
      responses: { 200: partyResource(kind) },
    });
  return [
    route({
      operationId: `list${title}s`,
      method: "GET",
      path: base,
      group: "parties",
      summary: `List ${collection} ordered by name`,
      description: visibility,
      scopes: [`${collection}:read`],
      idempotency: "none",
      request: { query: partyListQuery },
      responses: { 200: partyList(kind) },
    }),
    route({
      operationId: `get${title}`,
      method: "GET",
      path: `${base}/{id}`,
      group: "parties",
      summary: `Retrieve a ${kind}`,
      description: visibility,
      scopes: [`${collection}:read`],
      idempotency: "none",
      request: { path: partyPath },
      responses: { 200: partyResource(kind) },
    }),
    route({
      operationId: `create${title}`,
      method: "POST",
      path: base,
      group: "parties",
      summary: `Create a ${kind}`,
      description: `The service assigns customer_number (${kind === "supplier" ? "the supplier sequence" : "the sequence customers and prospects share"}) and makes the key's user the owner.`,
      scopes: [`${collection}:write`],
      idempotency: "optional",
      request: { body: partyCreateBody(kind) },
      responses: { 201: partyResource(kind) },
    }),
    update("PATCH"),
    update("PUT"),
    route({
      operationId: `delete${title}`,
      method: "DELETE",
      path: `${base}/{id}`,
      group: "parties",
      summary: `Delete a ${kind} that has no documents`,
      description: `A record with associated documents is 422 validation_failed with a detail on document_count. ${visibility}`,
      scopes: [`${collection}:delete`],
      idempotency: "none",
      request: { path: partyPath },
      responses: { 200: deletedResource(kind) },
    }),
  ];
}

/** API Gateway's route key of a route, e.g. `GET /api/v3/locations`. */
export const routeKey = (route: Pick<RouteDefinition, "method" | "path">): string => `${route.method} ${route.path}`;

const byKey = new Map(ROUTES.map((r) => [routeKey(r), r]));

export function findRouteByKey(key: string): RouteDefinition | undefined {
  return byKey.get(key);
}

export function routesOfGroup(group: EndpointGroup): RouteDefinition[] {
  return ROUTES.filter((r) => r.group === group);
}

const compiled = ROUTES.map((r) => ({
  route: r,
  names: [...r.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!),
  pattern: new RegExp(`^${r.path.replace(/\{\w+\}/g, "([^/]+)")}$`),
}));

/**
 * Matches a concrete request the way API Gateway does: returns the route and the decoded
 * path parameters, or undefined when no route has this method and path.
 */
export function matchRoute(method: string, path: string): { route: RouteDefinition; pathParameters: Record<string, string> } | undefined {
  for (const { route: candidate, names, pattern } of compiled) {
    if (candidate.method !== method) continue;
    const match = pattern.exec(path);
    if (!match) continue;
    const pathParameters: Record<string, string> = {};
    names.forEach((name, i) => {
      pathParameters[name] = decodeURIComponent(match[i + 1]!);
    });
    return { route: candidate, pathParameters };
  }
  return undefined;
}
