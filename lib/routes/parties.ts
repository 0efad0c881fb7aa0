import { API_PREFIX, route, type RouteDefinition } from "./define.js";
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
} from "../schemas/parties.js";

/** Documented example bodies per kind: a create, and the change an update sends. */
const EXAMPLES: Record<PartyKind, { create: Record<string, unknown>; update: Record<string, unknown> }> = {
  customer: { create: { name: "Acme Retail", office_email: "orders@acme.example", billing_city: "Springfield" }, update: { office_phone: "+1 555 0100" } },
  prospect: { create: { name: "Globex", closing_percentage: 40, prospect_date: "2026-12-01" }, update: { sale_opportunity: "Fleet renewal" } },
  supplier: { create: { name: "Initech Supply", url: "https://initech.example" }, update: { office_fax: "+1 555 0199" } },
};

/** Endpoint group `parties`: customers, prospects and suppliers (spec part 1, section 4.4). */
export const partyRoutes: RouteDefinition[] = PARTY_KINDS.flatMap(routesOfKind);

/** The five operations of spec section 4.4 (PATCH and PUT both partial) for one kind. */
function routesOfKind(kind: PartyKind): RouteDefinition[] {
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
      request: { path: partyPath, body: () => partyUpdateBody(kind) },
      example: { body: EXAMPLES[kind].update },
      responses: { 200: () => partyResource(kind) },
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
      responses: { 200: () => partyList(kind) },
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
      responses: { 200: () => partyResource(kind) },
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
      request: { body: () => partyCreateBody(kind) },
      example: { body: EXAMPLES[kind].create },
      responses: { 201: () => partyResource(kind) },
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
      errors: { 422: ["validation_failed"] },
      responses: { 200: () => deletedResource(kind) },
    }),
  ];
}
