import { Validator } from "@seriousme/openapi-schema-validator";
import { describe, expect, it } from "vitest";
import { buildOpenApiDocument } from "../../lib/openapi/document.js";
import { errorCodesOf } from "../../lib/openapi/errors.js";
import { ROUTES, type RouteDefinition } from "../../lib/routes/index.js";

/** The OpenAPI 3.1 document is generated from the route table (architecture section 2). */
type Operation = {
  operationId: string;
  parameters?: Array<{ name: string; in: string; required?: boolean; schema?: Record<string, any>; style?: string; explode?: boolean }>;
  requestBody?: { required?: boolean; content: Record<string, { schema: unknown }> };
  responses: Record<string, { description: string; headers?: Record<string, unknown>; content?: Record<string, { schema: any }> }>;
  security?: unknown[];
};
type Doc = {
  openapi: string;
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, unknown>; securitySchemes: Record<string, unknown> };
};

let built: Doc | undefined;
/** The document, built once for the checks that only read it. */
const document = () => (built ??= buildOpenApiDocument() as unknown as Doc);

describe("offline: OpenAPI document", () => {
  it("validates as OpenAPI 3.1", async () => {
    const doc = buildOpenApiDocument();
    expect(doc.openapi).toBe("3.1.0");
    const validator = new Validator();
    const result = await validator.validate(doc);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(validator.version).toBe("3.1");
  });

  it("is plain JSON (survives a JSON round trip) and is built the same way each time", () => {
    const doc = buildOpenApiDocument();
    expect(JSON.parse(JSON.stringify(doc))).toEqual(doc);
    expect(buildOpenApiDocument()).toEqual(doc);
  });

  it.each(ROUTES.map((r) => [r.operationId, r] as const))("documents %s under its path and method", (operationId, route) => {
    const operation = document().paths[route.path]?.[route.method.toLowerCase()];
    expect(operation, `${route.method} ${route.path}`).toBeDefined();
    expect(operation!.operationId).toBe(operationId);
    for (const status of Object.keys(route.responses)) expect(operation!.responses[status]).toBeDefined();
  });

  it("documents nothing the route table does not have", () => {
    const doc = document();
    const documented = Object.entries(doc.paths).flatMap(([path, methods]) =>
      Object.entries(methods).map(([method, op]) => `${method.toUpperCase()} ${path} ${op.operationId}`),
    );
    expect(documented.sort()).toEqual(ROUTES.map((r) => `${r.method} ${r.path} ${r.operationId}`).sort());
  });

  it("operation ids are unique", () => {
    const ids = ROUTES.map((r) => r.operationId);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it("routes with idempotency `required` document a required Idempotency-Key header", () => {
    const required = ROUTES.filter((r) => r.idempotency === "required");
    expect(required.length).toBeGreaterThan(0);
    const doc = document();
    for (const route of required) {
      const header = doc.paths[route.path]![route.method.toLowerCase()]!.parameters?.find(
        (p) => p.in === "header" && p.name.toLowerCase() === "idempotency-key",
      );
      expect(header, route.operationId).toBeDefined();
      expect(header!.required, route.operationId).toBe(true);
      expect(header!.schema).toMatchObject({ type: "string", minLength: 1, maxLength: 255 });
    }
  });

  it("optional-idempotency routes document an optional header, and the others none", () => {
    const doc = document();
    for (const route of ROUTES) {
      const header = doc.paths[route.path]![route.method.toLowerCase()]!.parameters?.find(
        (p) => p.in === "header" && p.name.toLowerCase() === "idempotency-key",
      );
      if (route.idempotency === "optional") {
        expect(header, route.operationId).toBeDefined();
        expect(header!.required, route.operationId).toBe(false);
      } else if (route.idempotency === "none") {
        expect(header, route.operationId).toBeUndefined();
      }
    }
  });

  it("every path placeholder is a required path parameter", () => {
    const doc = document();
    for (const route of ROUTES) {
      const names = [...route.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]);
      const parameters = doc.paths[route.path]![route.method.toLowerCase()]!.parameters ?? [];
      for (const name of names) {
        expect(parameters.find((p) => p.in === "path" && p.name === name), `${route.operationId} ${name}`).toMatchObject({ required: true });
      }
    }
  });

  it("routes with a body document a JSON request body; authenticated routes require the API key", () => {
    const doc = document();
    for (const route of ROUTES) {
      const operation = doc.paths[route.path]![route.method.toLowerCase()]!;
      if (route.request.body) expect(operation.requestBody?.content["application/json"], route.operationId).toBeDefined();
      else expect(operation.requestBody, route.operationId).toBeUndefined();
      expect(operation.security, route.operationId).toEqual(route.authenticated ? [{ apiKey: [] }] : []);
    }
    expect(doc.components.securitySchemes.apiKey).toMatchObject({ type: "http", scheme: "bearer" });
  });

  it("every $ref resolves to a component", () => {
    const doc = document();
    const refs: string[] = [];
    const walk = (node: unknown): void => {
      if (Array.isArray(node)) node.forEach(walk);
      else if (node && typeof node === "object") {
        for (const [key, value] of Object.entries(node)) {
          if (key === "$ref" && typeof value === "string") refs.push(value);
          else walk(value);
        }
      }
    };
    walk(doc);
    expect(refs.length).toBeGreaterThan(0);
    for (const ref of refs) {
      const match = /^#\/components\/(schemas|headers|responses)\/(.+)$/.exec(ref);
      expect(match, ref).not.toBeNull();
      const [, kind, name] = match!;
      expect((doc.components as unknown as Record<string, Record<string, unknown>>)[kind!]![name!], ref).toBeDefined();
    }
  });

  it("describes the item category the way spec part 1, section 2.4 shows it", () => {
    const category = document().components.schemas.ItemCategory as { properties: Record<string, unknown>; required?: string[] };
    expect(Object.keys(category.properties).sort()).toEqual(["custom_fields", "id", "inventory_type", "name", "object", "parent_id"]);
    expect(category.properties.inventory_type).toMatchObject({ enum: ["quantity", "unique"] });
  });

  it.each(ROUTES.map((r) => [r.operationId, r] as const))("%s: every error status it can answer, error.code an enum of exactly its codes", (_id, route) => {
    const operation = operationOf(route);
    const codes = errorCodesOf(route);
    const documented = Object.keys(operation.responses).filter((status) => Number(status) >= 400);
    expect(documented.sort()).toEqual([...codes.keys()].map(String).sort());
    for (const [status, list] of codes) {
      const narrowed = operation.responses[String(status)]!.content!["application/json"]!.schema.allOf[1].properties.error.properties;
      expect(narrowed.code.enum, `${route.operationId} ${status}`).toEqual(list);
      expect(narrowed.type.enum, `${route.operationId} ${status}`).toEqual([status === 401 ? "authentication_error" : status === 429 ? "rate_limit_error" : status >= 500 ? "api_error" : "invalid_request_error"]);
      expect(operation.responses[String(status)]!.description).toContain(list[0]!);
    }
  });

  it("derives the generic codes from the route's shape", () => {
    for (const route of ROUTES) {
      const codes = errorCodesOf(route);
      const has = (status: number, code: string) => codes.get(status)?.includes(code) ?? false;
      const body = Boolean(route.request.body);
      expect(has(400, "invalid_json"), route.operationId).toBe(body);
      expect(has(413, "request_too_large"), route.operationId).toBe(body);
      if (body) expect(has(422, "validation_failed"), route.operationId).toBe(true);
      expect(has(400, "idempotency_key_required"), route.operationId).toBe(route.idempotency === "required");
      expect(has(400, "invalid_idempotency_key"), route.operationId).toBe(route.idempotency !== "none");
      expect(has(409, "idempotency_key_reused") && has(409, "idempotency_in_progress"), route.operationId).toBe(route.idempotency !== "none");
      expect(has(401, "authentication_required"), route.operationId).toBe(route.authenticated);
      expect(has(429, "rate_limited"), route.operationId).toBe(route.authenticated);
      expect(has(403, "insufficient_scope"), route.operationId).toBe(route.authenticated && route.scopes.length > 0);
      expect(has(404, "resource_missing"), route.operationId).toBe(route.path.includes("{"));
      expect(has(500, "internal_error"), route.operationId).toBe(true);
      expect(has(503, "resource_busy"), route.operationId).toBe(route.method !== "GET");
      for (const status of codes.keys()) expect([...codes.get(status)!].some((c) => c === "route_not_found" || c === "method_not_allowed")).toBe(false);
      for (const [status, own] of Object.entries(route.errors ?? {})) for (const code of own ?? []) expect(has(Number(status), code), `${route.operationId} ${code}`).toBe(true);
    }
    // A query that can refuse a value is 422 invalid_query_parameter; the sync query (checked by the domain, 400) is not.
    expect(errorCodesOf(byId("listLocations")).get(422)).toEqual(["invalid_query_parameter"]);
    expect(errorCodesOf(byId("sync")).get(422)).toBeUndefined();
  });

  it("the sync route declares every code of spec section 7 it answers", () => {
    expect(Object.fromEntries(errorCodesOf(byId("sync")))).toMatchObject({
      400: ["invalid_query_parameter", "sync_cursor_invalid"],
      403: ["sync_permission_denied", "sync_cursor_owner_mismatch"],
      409: ["sync_scope_changed", "sync_cursor_expired", "sync_full_refresh_required"],
    });
  });

  it("route-specific codes: permission checks, deletes refused while documents reference the record", () => {
    expect(errorCodesOf(byId("listContacts")).get(403)).toContain("permission_denied");
    expect(errorCodesOf(byId("createLocation")).get(403)).toContain("permission_denied");
    expect(errorCodesOf(byId("getItem")).get(403)).toContain("permission_denied");
    for (const id of ["deleteCustomer", "deleteProspect", "deleteSupplier", "deleteItem"]) expect(errorCodesOf(byId(id)).get(422), id).toContain("validation_failed");
    expect(errorCodesOf(byId("getCustomer")).get(403)).toEqual(["insufficient_scope"]);
  });

  it("documents the headers of every response: X-Request-Id and RateLimit-* always, WWW-Authenticate on 401, Retry-After on 429 and 503, Idempotent-Replayed on idempotent successes", () => {
    const doc = document() as unknown as { components: { headers: Record<string, { required: boolean }> } };
    expect(doc.components.headers["X-Request-Id"]!.required).toBe(true);
    expect(doc.components.headers["Idempotent-Replayed"]!.required).toBe(false);
    for (const route of ROUTES) {
      for (const [status, response] of Object.entries(operationOf(route).responses)) {
        const names = Object.keys(response.headers ?? {});
        for (const name of ["X-Request-Id", "RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset"]) expect(names, `${route.operationId} ${status}`).toContain(name);
        expect(names.includes("WWW-Authenticate"), `${route.operationId} ${status}`).toBe(status === "401");
        expect(names.includes("Retry-After"), `${route.operationId} ${status}`).toBe(status === "429" || status === "503");
        if (Number(status) < 300) {
          expect(names.includes("Idempotent-Replayed"), `${route.operationId} ${status}`).toBe(route.idempotency !== "none");
          for (const header of route.headers ?? []) expect(names, `${route.operationId} ${status}`).toContain(header);
        }
      }
    }
  });

  it("each 400 says what makes that route answer 400", () => {
    const descriptions = new Map<string, string>();
    for (const route of ROUTES) {
      const response = operationOf(route).responses["400"];
      if (response) descriptions.set(route.operationId, response.description);
    }
    expect(descriptions.get("createLocation")).toContain("idempotency_key_required");
    expect(descriptions.get("createItem")).not.toContain("idempotency_key_required");
    expect(descriptions.get("sync")).toContain("sync_cursor_invalid");
    expect(descriptions.get("sync")).not.toContain("invalid_json");
    expect(descriptions.has("listLocations")).toBe(false); // nothing makes it 400
    expect(new Set([descriptions.get("createLocation"), descriptions.get("createItem"), descriptions.get("sync")]).size).toBe(3);
  });

  it("types query parameters: page and limit integers with defaults, sync parameters, ids as a comma-separated UUID list, query ids as UUIDs", () => {
    const parameter = (operationId: string, name: string) => operationOf(byId(operationId)).parameters!.find((p) => p.name === name)!;
    expect(parameter("listLocations", "page").schema).toMatchObject({ type: "integer", default: 1 });
    expect(parameter("listLocations", "limit").schema).toMatchObject({ type: "integer", default: 20 });
    expect(parameter("listLocations", "limit").schema).not.toHaveProperty("pattern");
    expect(parameter("sync", "start").schema).toEqual({ type: "string", enum: ["now"] });
    expect(parameter("sync", "limit").schema).toEqual({ type: "integer", minimum: 1, maximum: 500, default: 100 });
    expect(parameter("sync", "resources")).toMatchObject({ style: "form", explode: false, schema: { type: "array" } });
    expect(parameter("listItems", "ids")).toMatchObject({ style: "form", explode: false, schema: { type: "array", maxItems: 50, items: { type: "string", format: "uuid" } } });
    for (const [operationId, name] of [["listItems", "category_id"], ["listItems", "location_id"], ["listContacts", "account_record_id"]] as const) {
      expect(parameter(operationId, name).schema, `${operationId} ${name}`).toEqual({ type: "string", format: "uuid" });
    }
    const parent = new RegExp(parameter("listItemCategories", "parent_id").schema!.pattern as string);
    expect(parent.test("root")).toBe(true);
    expect(parent.test("3f0c8f9e-6a53-4f0a-9a57-0b5e1b1c2d3e")).toBe(true);
    expect(parent.test("roots")).toBe(false);
    expect(parameter("listItems", "include_sold").schema).toMatchObject({ type: "boolean" });
    for (const route of ROUTES) for (const p of operationOf(route).parameters ?? []) expect(p.schema, `${route.operationId} ${p.name}`).not.toHaveProperty("x-parameter");
  });

  it("formats: date-time timestamps, YYYY-MM-DD dates, UUID ids, unique contact links", () => {
    const schemas = document().components.schemas as Record<string, { properties: Record<string, any> }>;
    const nullable = (schema: any) => schema.anyOf?.find((s: any) => s.type !== "null") ?? schema;
    expect(schemas.Customer!.properties.created_at).toMatchObject({ format: "date-time" });
    expect(nullable(schemas.Customer!.properties.last_invoice_date)).toMatchObject({ format: "date" });
    expect(nullable(schemas.Prospect!.properties.prospect_date)).toMatchObject({ format: "date" });
    expect(schemas.ProspectCreate!.properties.prospect_date.anyOf[0]).toMatchObject({ format: "date" });
    expect(nullable(schemas.Contact!.properties.updated_at)).toMatchObject({ format: "date-time" });
    expect(schemas.InventoryAdjustment!.properties.id).toMatchObject({ format: "uuid" });
    expect(schemas.InventoryAdjustment!.properties.created_at).toMatchObject({ format: "date-time" });
    expect(nullable(schemas.Customer!.properties.owner_user_id)).toMatchObject({ format: "uuid" });
    expect(schemas.ContactCreate!.properties.account_record_ids).toMatchObject({ uniqueItems: true, items: { format: "uuid" } });
    expect(schemas.ContactUpdate!.properties.account_record_ids).toMatchObject({ uniqueItems: true });
  });

  it("documents unknown routes once: 404 route_not_found and 405 method_not_allowed with Allow", () => {
    const doc = document() as unknown as { info: { description: string }; components: { responses: Record<string, any> } };
    expect(doc.info.description).toContain("route_not_found");
    expect(doc.info.description).toContain("method_not_allowed");
    expect(Object.keys(doc.components.responses.MethodNotAllowed.headers)).toContain("Allow");
  });
});

function byId(operationId: string): RouteDefinition {
  const route = ROUTES.find((r) => r.operationId === operationId);
  if (!route) throw new Error(`no route ${operationId}`);
  return route;
}

function operationOf(route: RouteDefinition): Operation {
  return document().paths[route.path]![route.method.toLowerCase()]!;
}
