import { readFileSync } from "node:fs";
import { Validator } from "@seriousme/openapi-schema-validator";
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormatsModule from "ajv-formats";
import { describe, expect, it } from "vitest";
import { ERROR_CODES, type ErrorCode } from "../../lib/core/error-codes.js";
import { ESTIMATE_STATUS } from "../../lib/domain/documents/estimates/model.js";
import { INVOICE_STATUS } from "../../lib/domain/documents/invoices/model.js";
import { SO_STATUS } from "../../lib/domain/documents/sales-orders/model.js";
import { buildOpenApiDocument } from "../../lib/openapi/document.js";
import { pageQuery } from "../../lib/schemas/common.js";
import { errorCodesOf } from "../../lib/openapi/errors.js";
import { ENDPOINT_GROUPS, ROUTES, type RouteDefinition } from "../../lib/routes/index.js";
import { STATUS_IDS, type StatusKind } from "../../lib/schemas/documents.js";
import { estimateListQuery } from "../../lib/schemas/estimates.js";
import { moneyInput, percentInput, signedMoneyInput } from "../../lib/schemas/amounts.js";

/** The OpenAPI 3.1 document is generated from the route table (architecture section 2). */
type Parameter = {
  name: string;
  in: string;
  required?: boolean;
  schema?: Record<string, any>;
  style?: string;
  explode?: boolean;
  example?: unknown;
  $ref?: string;
};
type Operation = {
  operationId: string;
  description?: string;
  parameters?: Parameter[];
  requestBody?: { required?: boolean; content: Record<string, { schema: unknown }> };
  responses: Record<string, { description: string; headers?: Record<string, unknown>; content?: Record<string, { schema: any }> }>;
  security?: unknown[];
};
type Doc = {
  openapi: string;
  security?: unknown[];
  paths: Record<string, Record<string, Operation>>;
  components: {
    schemas: Record<string, any>;
    securitySchemes: Record<string, unknown>;
    responses: Record<string, any>;
    parameters: Record<string, Parameter>;
    headers: Record<string, any>;
  };
};

let built: Doc | undefined;
/** The document, built once for the checks that only read it. */
const document = () => (built ??= buildOpenApiDocument() as unknown as Doc);

/** A `$ref` (`#/components/...`) resolved in the document; anything else as it is. */
function deref<T>(node: T): T {
  const target = (node as { $ref?: string }).$ref;
  if (typeof target !== "string") return node;
  return target
    .slice(2)
    .split("/")
    .reduce((at: any, part) => at?.[part], document()) as T;
}
/** An operation's parameters with references resolved. */
const parametersOf = (operation: Operation): Parameter[] => (operation.parameters ?? []).map(deref);
/** An operation's responses with references resolved. */
const responsesOf = (operation: Operation) => Object.fromEntries(Object.entries(operation.responses).map(([status, response]) => [status, deref(response)]));

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
      const header = parametersOf(doc.paths[route.path]![route.method.toLowerCase()]!).find(
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
      const header = parametersOf(doc.paths[route.path]![route.method.toLowerCase()]!).find(
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
      const parameters = parametersOf(doc.paths[route.path]![route.method.toLowerCase()]!);
      for (const name of names) {
        expect(
          parameters.find((p) => p.in === "path" && p.name === name),
          `${route.operationId} ${name}`,
        ).toMatchObject({ required: true });
      }
    }
  });

  it("routes with a body document a JSON request body; authenticated routes require the API key", () => {
    const doc = document();
    for (const route of ROUTES) {
      const operation = doc.paths[route.path]![route.method.toLowerCase()]!;
      if (route.request.body) expect(operation.requestBody?.content["application/json"], route.operationId).toBeDefined();
      else expect(operation.requestBody, route.operationId).toBeUndefined();
      // Required only where no body (read as {}) fails the schema: send, receive and convert take an optional one.
      if (route.request.body) expect(operation.requestBody?.required, route.operationId).toBe(!route.request.body.safeParse({}).success);
      // The document's `security` applies to every operation that does not say its own.
      expect(operation.security ?? doc.security, route.operationId).toEqual(route.authenticated ? [{ apiKey: [] }] : []);
    }
    expect(doc.security).toEqual([{ apiKey: [] }]);
    expect(doc.paths["/api/v3/purchase-orders/{purchase_order_id}/send"]!.post!.requestBody?.required).toBe(false);
    expect(doc.paths["/api/v3/invoices"]!.post!.requestBody?.required).toBe(true);
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
      const match = /^#\/components\/(schemas|headers|responses|parameters)\/(.+)$/.exec(ref);
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
    const responses = responsesOf(operationOf(route));
    const codes = errorCodesOf(route);
    const documented = Object.keys(responses).filter((status) => Number(status) >= 400);
    expect(documented.sort()).toEqual([...codes.keys()].map(String).sort());
    for (const [status, list] of codes) {
      const narrowed = responses[String(status)]!.content!["application/json"]!.schema.allOf[1].properties.error.properties;
      expect(narrowed.code.enum, `${route.operationId} ${status}`).toEqual(list);
      expect(narrowed.type.enum, `${route.operationId} ${status}`).toEqual([
        status === 401 ? "authentication_error" : status === 429 ? "rate_limit_error" : status >= 500 ? "api_error" : "invalid_request_error",
      ]);
      expect(responses[String(status)]!.description).toContain(list[0]!);
    }
  });

  it("answers every code of the catalogue (lib/core/error-codes.ts) on some route, but the two for unknown routes and malformed HTTP", () => {
    const answered = new Set(ROUTES.flatMap((route) => [...errorCodesOf(route).values()].flat()));
    expect(ERROR_CODES.filter((code) => !answered.has(code))).toEqual(["route_not_found", "malformed_request"]);
  });

  it("derives the generic codes from the route's shape", () => {
    for (const route of ROUTES) {
      const codes = errorCodesOf(route);
      const has = (status: number, code: ErrorCode) => codes.get(status)?.includes(code) ?? false;
      const body = Boolean(route.request.body);
      expect(has(400, "invalid_json"), route.operationId).toBe(body);
      expect(has(413, "request_too_large"), route.operationId).toBe(body);
      if (body) expect(has(422, "validation_failed"), route.operationId).toBe(route.bodyProblems !== "report");
      expect(has(400, "idempotency_key_required"), route.operationId).toBe(route.idempotency === "required");
      expect(has(400, "invalid_idempotency_key"), route.operationId).toBe(route.idempotency !== "none");
      expect(has(409, "idempotency_key_reused") && has(409, "idempotency_in_progress"), route.operationId).toBe(route.idempotency !== "none");
      expect(has(401, "authentication_required"), route.operationId).toBe(route.authenticated);
      expect(has(429, "rate_limited"), route.operationId).toBe(route.authenticated);
      expect(has(403, "insufficient_scope"), route.operationId).toBe(route.authenticated && route.scopes.length > 0);
      // A path id, or a replay whose record the user no longer sees.
      expect(has(404, "resource_missing"), route.operationId).toBe(route.path.includes("{") || (route.authenticated && route.idempotency !== "none"));
      expect(has(500, "internal_error"), route.operationId).toBe(true);
      expect(has(503, "resource_busy"), route.operationId).toBe(route.method !== "GET");
      for (const status of codes.keys()) expect([...codes.get(status)!].some((c) => c === "route_not_found")).toBe(false);
      for (const [status, own] of Object.entries(route.errors ?? {}))
        for (const code of own ?? []) expect(has(Number(status), code), `${route.operationId} ${code}`).toBe(true);
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
    for (const id of ["deleteCustomer", "deleteProspect", "deleteSupplier", "deleteItem"])
      expect(errorCodesOf(byId(id)).get(422), id).toContain("validation_failed");
    expect(errorCodesOf(byId("getCustomer")).get(403)).toEqual(["insufficient_scope"]);
  });

  it("documents the headers of every response: X-Request-Id and RateLimit-* always, WWW-Authenticate on 401, Retry-After on 429 and 503, Idempotent-Replayed on idempotent successes", () => {
    const doc = document() as unknown as { components: { headers: Record<string, { required: boolean }> } };
    expect(doc.components.headers["X-Request-Id"]!.required).toBe(true);
    expect(doc.components.headers["Idempotent-Replayed"]!.required).toBe(false);
    for (const route of ROUTES) {
      for (const [status, response] of Object.entries(responsesOf(operationOf(route)))) {
        const names = Object.keys(response.headers ?? {});
        for (const name of ["X-Request-Id", "RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset"])
          expect(names, `${route.operationId} ${status}`).toContain(name);
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
      const response = responsesOf(operationOf(route))["400"];
      if (response) descriptions.set(route.operationId, response.description);
    }
    expect(descriptions.get("createLocation")).toContain("idempotency_key_required");
    expect(descriptions.get("createItem")).not.toContain("idempotency_key_required");
    expect(descriptions.get("sync")).toContain("sync_cursor_invalid");
    expect(descriptions.get("sync")).not.toContain("invalid_json");
    expect(descriptions.get("listLocations") ?? "").not.toContain("invalid_query_parameter"); // a query's problems are 422 (spec part 1, section 7)
    expect(descriptions.get("sync")).toContain("invalid_query_parameter");
    expect(new Set([descriptions.get("createLocation"), descriptions.get("createItem"), descriptions.get("sync")]).size).toBe(3);
  });

  it("types query parameters: page and limit integers with defaults, sync parameters, ids as a comma-separated UUID list, query ids as UUIDs", () => {
    const parameter = (operationId: string, name: string) => parametersOf(operationOf(byId(operationId))).find((p) => p.name === name)!;
    expect(parameter("listLocations", "page").schema).toMatchObject({ type: "integer", default: 1 });
    expect(parameter("listLocations", "limit").schema).toMatchObject({ type: "integer", default: 20 });
    // Any integer is taken and normalised (spec part 1, section 8), so none is documented as out of range.
    expect(parameter("listLocations", "page").schema).not.toHaveProperty("maximum");
    expect(parameter("listLocations", "limit").schema).not.toHaveProperty("minimum");
    expect(pageQuery().safeParse({ page: "9".repeat(100), limit: `-${"9".repeat(100)}` }).success).toBe(true);
    expect(pageQuery().safeParse({ page: "9".repeat(101) }).success).toBe(false);
    expect(pageQuery().safeParse({ page: "1.5" }).success).toBe(false);
    expect(parameter("listLocations", "limit").schema).not.toHaveProperty("pattern");
    expect(parameter("sync", "start").schema).toEqual({ type: "string", enum: ["now"] });
    expect(parameter("sync", "limit").schema).toEqual({ type: "integer", minimum: 1, maximum: 500, default: 100 });
    expect(parameter("sync", "resources")).toMatchObject({ style: "form", explode: false, schema: { type: "array" } });
    expect(parameter("listItems", "ids")).toMatchObject({
      style: "form",
      explode: false,
      schema: { type: "array", maxItems: 50, items: { type: "string", format: "uuid" } },
    });
    for (const [operationId, name] of [
      ["listItems", "category_id"],
      ["listItems", "location_id"],
      ["listContacts", "account_record_id"],
    ] as const) {
      expect(parameter(operationId, name).schema, `${operationId} ${name}`).toEqual({ type: "string", format: "uuid" });
    }
    const parent = new RegExp(parameter("listItemCategories", "parent_id").schema!.pattern as string);
    expect(parent.test("root")).toBe(true);
    expect(parent.test("3f0c8f9e-6a53-4f0a-9a57-0b5e1b1c2d3e")).toBe(true);
    expect(parent.test("roots")).toBe(false);
    expect(parameter("listItems", "include_sold").schema).toMatchObject({ type: "boolean" });
    for (const route of ROUTES)
      for (const p of parametersOf(operationOf(route))) expect(p.schema, `${route.operationId} ${p.name}`).not.toHaveProperty("x-parameter");
  });

  it("formats: date-time timestamps, YYYY-MM-DD dates, UUID ids, unique contact links", () => {
    const schemas = document().components.schemas as Record<string, { properties: Record<string, any> }>;
    const nullable = (schema: any) => deref(schema.anyOf?.find((s: any) => s.type !== "null") ?? schema);
    expect(deref(schemas.Customer!.properties.created_at)).toMatchObject({ format: "date-time" });
    expect(nullable(schemas.Customer!.properties.last_invoice_date)).toMatchObject({ format: "date" });
    expect(nullable(schemas.Prospect!.properties.prospect_date)).toMatchObject({ format: "date" });
    // An optional date: a date, null, or blank text (the same as null).
    expect(schemas.ProspectCreate!.properties.prospect_date.anyOf).toEqual([
      { $ref: "#/components/schemas/Blank" },
      { anyOf: [expect.objectContaining({ format: "date" }), { type: "null" }] },
    ]);
    expect(nullable(schemas.Contact!.properties.updated_at)).toMatchObject({ format: "date-time" });
    expect(deref(schemas.InventoryAdjustment!.properties.id)).toMatchObject({ format: "uuid" });
    expect(deref(schemas.InventoryAdjustment!.properties.created_at)).toMatchObject({ format: "date-time" });
    expect(nullable(schemas.Customer!.properties.owner_user_id)).toMatchObject({ format: "uuid" });
    expect(schemas.ContactCreate!.properties.account_record_ids).toMatchObject({ uniqueItems: true });
    expect(deref(schemas.ContactCreate!.properties.account_record_ids.items)).toMatchObject({ format: "uuid" });
    expect(schemas.ContactUpdate!.properties.account_record_ids).toMatchObject({ uniqueItems: true });
  });

  it("documents unmatched requests once: 404 route_not_found (with Allow on a known path), 400 malformed_request, 431 request_too_large", () => {
    const doc = document() as unknown as { info: { description: string }; components: { responses: Record<string, any> } };
    for (const code of ["route_not_found", "malformed_request", "431 `request_too_large`"]) expect(doc.info.description).toContain(code);
    expect(Object.keys(doc.components.responses.RouteNotFound.headers)).toContain("Allow");
    expect(Object.keys(doc.components.responses.MalformedRequest.headers)).toContain("X-Request-Id");
    expect((doc as unknown as Record<string, unknown>)["x-unmatched-responses"]).toEqual({
      400: { $ref: "#/components/responses/MalformedRequest" },
      404: { $ref: "#/components/responses/RouteNotFound" },
      431: { $ref: "#/components/responses/HeadersTooLarge" },
    });
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

const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default;

/** Validates values against schemas of the document (JSON Schema 2020-12 with formats), component references included. */
function schemaValidator() {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  const shared = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(shared);
    if (!node || typeof node !== "object") return node;
    return Object.fromEntries(
      Object.entries(node).map(([k, v]) => [k, k === "$ref" && typeof v === "string" ? v.replace("#/components/schemas/", "openapi.json#/$defs/") : shared(v)]),
    );
  };
  ajv.addSchema({ $id: "openapi.json", $defs: shared(document().components.schemas) as Record<string, unknown> });
  const compiled = new Map<string, ReturnType<typeof ajv.compile>>();
  return (schema: unknown, value: unknown): string | undefined => {
    const key = JSON.stringify(schema);
    let validate = compiled.get(key);
    if (!validate) {
      const target = (schema as { $ref?: string }).$ref;
      validate =
        (target ? ajv.getSchema(target.replace("#/components/schemas/", "openapi.json#/$defs/")) : undefined) ??
        ajv.compile(shared(schema) as Record<string, unknown>);
      compiled.set(key, validate);
    }
    return validate(value) ? undefined : ajv.errorsText(validate.errors);
  };
}

describe("offline: OpenAPI document, the whole truth and small", () => {
  it("is at most half its former size (1,102,128 bytes minified): at most 551,000 bytes", () => {
    const size = Buffer.byteLength(JSON.stringify(buildOpenApiDocument()));
    expect(size).toBeLessThanOrEqual(551_000);
  });

  it("holds no component that nothing references (from outside components, directly or through other components)", () => {
    const doc = document() as unknown as Record<string, unknown> & { components: Record<string, Record<string, unknown>> };
    const reached = new Set<string>();
    const walk = (node: unknown): void => {
      if (Array.isArray(node)) node.forEach(walk);
      else if (node && typeof node === "object") {
        for (const [key, value] of Object.entries(node)) {
          if (key === "$ref" && typeof value === "string") {
            const name = value.replace("#/components/", "");
            if (!reached.has(name)) {
              reached.add(name);
              const [kind, component] = name.split("/") as [string, string];
              walk(doc.components[kind]?.[component]);
            }
          } else walk(value);
        }
      }
    };
    walk({ ...doc, components: undefined });
    const unused: string[] = [];
    for (const kind of ["schemas", "responses", "parameters", "headers"]) {
      for (const name of Object.keys(doc.components[kind] ?? {})) if (!reached.has(`${kind}/${name}`)) unused.push(`${kind}/${name}`);
    }
    expect(unused).toEqual([]);
    expect(reached).toContain("responses/RouteNotFound");
    expect(reached).toContain("headers/Allow");
  });

  it("shares what repeats: error responses, parameters and building-block schemas are components", () => {
    const doc = document();
    expect(Object.keys(doc.components.responses).length).toBeGreaterThan(20);
    expect(Object.keys(doc.components.parameters)).toEqual(
      expect.arrayContaining(["IdempotencyKey", "IdempotencyKeyRequired", "IfMatch", "IfMatchRequired", "query.page", "query.limit"]),
    );
    for (const name of ["Uuid", "Money", "MoneyInput", "Timestamp", "Error"]) expect(doc.components.schemas[name], name).toBeDefined();
    // Customers, prospects and suppliers: one record path is a few KB, its schemas referenced.
    for (const path of ["/api/v3/customers/{id}", "/api/v3/prospects/{id}", "/api/v3/suppliers/{id}"]) {
      expect(JSON.stringify(doc.paths[path]).length, path).toBeLessThan(9_000);
    }
    // Each error response an operation shares with another is a reference.
    const inline = new Map<string, string[]>();
    for (const route of ROUTES) {
      for (const [status, response] of Object.entries(operationOf(route).responses)) {
        if (Number(status) < 400 || (response as { $ref?: string }).$ref) continue;
        const key = JSON.stringify(response);
        inline.set(key, [...(inline.get(key) ?? []), route.operationId]);
      }
    }
    expect([...inline.values()].filter((ids) => ids.length > 1)).toEqual([]);
  });

  it("every response has an example, and every example validates against its own schema", () => {
    const doc = document();
    const check = schemaValidator();
    const problems: string[] = [];
    const expectValid = (label: string, schema: unknown, example: unknown) => {
      if (example === undefined) problems.push(`${label}: no example`);
      else {
        const error = check(schema, example);
        if (error) problems.push(`${label}: ${error}`);
      }
    };
    for (const route of ROUTES) {
      const operation = operationOf(route);
      for (const [status, response] of Object.entries(responsesOf(operation))) {
        for (const [mediaType, media] of Object.entries(response.content ?? {}) as [string, { schema: any; example?: unknown }][]) {
          const example = media.example ?? deref(media.schema).example;
          if (mediaType.startsWith("application/json")) expectValid(`${route.operationId} ${status}`, media.schema, example);
          else if (typeof example !== "string" || example.length === 0) problems.push(`${route.operationId} ${status}: no ${mediaType} example`);
        }
      }
      const body = operation.requestBody?.content["application/json"] as { schema: unknown; example?: unknown } | undefined;
      if (body) expectValid(`${route.operationId} request body`, body.schema, body.example);
      for (const parameter of parametersOf(operation))
        if (parameter.example !== undefined) expectValid(`${route.operationId} ${parameter.name}`, parameter.schema, parameter.example);
    }
    for (const [name, schema] of Object.entries(doc.components.schemas))
      if (schema.example !== undefined) expectValid(`components.schemas.${name}`, { $ref: `#/components/schemas/${name}` }, schema.example);
    for (const [name, response] of Object.entries(doc.components.responses))
      expectValid(`components.responses.${name}`, response.content["application/json"].schema, response.content["application/json"].example);
    expect(problems).toEqual([]);
  });

  it("examples read like records: no invented negative numbers, documents numbered from 1, query examples typed as their parameters", () => {
    const text = JSON.stringify(document());
    expect(text).not.toContain("-9007199254740991");
    const invoice = document().components.schemas.Invoice.example;
    expect(invoice.invoice_number).toBeGreaterThanOrEqual(1);
    expect(invoice.status_id).toBeGreaterThanOrEqual(9);
    const resources = parametersOf(operationOf(byId("sync"))).find((p) => p.name === "resources")!;
    expect(resources).toMatchObject({ style: "form", explode: false, schema: { type: "array" }, example: ["item"] });
  });

  it("each operation's description names its scopes and the permissions every call needs, from the route table", () => {
    for (const route of ROUTES) {
      const { description = "" } = operationOf(route);
      if (!route.authenticated) {
        expect(description, route.operationId).toContain("public");
        continue;
      }
      for (const scope of route.scopes) expect(description, route.operationId).toContain(`\`${scope}\``);
      for (const permission of route.permissions ?? []) expect(description, route.operationId).toContain(`\`${permission}\``);
      expect(description, route.operationId).toContain("**Permissions:**");
    }
  });

  it("a route that always needs a permission documents 403 permission_denied: the kit operations too", () => {
    for (const route of ROUTES) {
      if (!route.permissions?.length) continue;
      const codes = responsesOf(operationOf(route))["403"]!.content!["application/json"]!.schema.allOf[1].properties.error.properties.code.enum;
      expect(codes, route.operationId).toContain("permission_denied");
    }
    expect(byId("listKits").permissions).toEqual(["inventory.list"]);
    expect(byId("getKit").permissions).toEqual(["inventory.list"]);
    expect(byId("listKitBuilds").permissions).toEqual(["inventory.list"]);
    expect(byId("createKitBuild").permissions).toEqual(["inventory.modify"]);
    expect(byId("deleteKitBuild").permissions).toEqual(["inventory.modify"]);
  });

  it("documents If-Match on exactly the operations whose handlers read it", () => {
    const reading = new Set<string>();
    for (const group of ENDPOINT_GROUPS) {
      let current: string | undefined;
      for (const line of readFileSync(new URL(`../../functions/${group}/handler.ts`, import.meta.url), "utf8").split("\n")) {
        current = /^ {2}(\w+): async/.exec(line)?.[1] ?? current;
        if (current && line.includes('headers["if-match"]')) reading.add(current);
      }
    }
    expect(reading.size).toBe(24);
    expect(
      ROUTES.filter((r) => r.ifMatch)
        .map((r) => r.operationId)
        .sort(),
    ).toEqual([...reading].sort());
    for (const route of ROUTES) {
      const header = parametersOf(operationOf(route)).find((p) => p.in === "header" && p.name === "If-Match");
      if (!route.ifMatch) expect(header, route.operationId).toBeUndefined();
      else expect(header, route.operationId).toMatchObject({ required: route.ifMatch === "required", schema: { type: "string" } });
      if (route.ifMatch) expect(errorCodesOf(route).get(409), route.operationId).toContain("mobile_mutation_conflict");
    }
    expect(byId("previewEstimateChanges").ifMatch).toBe("required");
  });

  it("every write of an existing revisioned document honours If-Match (spec part 2, common rules)", () => {
    const revisioned = ["estimates", "invoices", "sales-orders", "purchase-orders"];
    const ofExisting = ROUTES.filter((r) => r.method !== "GET" && revisioned.includes(r.group) && r.path.includes("{"));
    expect(ofExisting.length).toBe(24);
    for (const route of ofExisting) expect(route.ifMatch, route.operationId).toBeDefined();
  });

  it("money that may not be negative refuses a sign in the document as on the server; signed money accepts one", () => {
    const doc = document();
    const textPattern = (name: string) => new RegExp(doc.components.schemas[name].anyOf.find((s: any) => s.type === "string").pattern);
    for (const name of ["MoneyInput", "PercentInput"]) {
      for (const text of ["-1.0000", "-0", "-12.5"]) expect(textPattern(name).test(text), `${name} ${text}`).toBe(false);
      expect(textPattern(name).test("12.5000"), name).toBe(true);
    }
    expect(textPattern("SignedMoneyInput").test("-1.0000")).toBe(true);
    expect(moneyInput().safeParse("-1.0000").success).toBe(false);
    expect(percentInput().safeParse("-0").success).toBe(false);
    expect(signedMoneyInput().safeParse("-1.0000").success).toBe(true);
    expect(moneyInput().safeParse("0").success).toBe(true);
  });

  it("positive quantities are exclusiveMinimum 0, a signed adjustment is documented non-zero", () => {
    const schemas = document().components.schemas;
    expect(schemas.KitBuildCreate.properties.quantity).toMatchObject({ type: "number", exclusiveMinimum: 0 });
    expect(schemas.InventoryAdjustmentCreate.properties.quantity).toMatchObject({ type: "number", not: { const: 0 } });
    const check = schemaValidator();
    expect(check({ $ref: "#/components/schemas/KitBuildCreate" }, { location_id: "3f0c8f9e-6a53-4f0a-9a57-0b5e1b1c2d3e", quantity: 0 })).toBeDefined();
    expect(
      check({ $ref: "#/components/schemas/InventoryAdjustmentCreate" }, { location_id: "3f0c8f9e-6a53-4f0a-9a57-0b5e1b1c2d3e", quantity: 0 }),
    ).toBeDefined();
    expect(
      check({ $ref: "#/components/schemas/InventoryAdjustmentCreate" }, { location_id: "3f0c8f9e-6a53-4f0a-9a57-0b5e1b1c2d3e", quantity: -2 }),
    ).toBeUndefined();
  });

  it("status ids are closed sets: list filters and responses enumerate their kind's ids (those the domain uses), other filter values are refused", () => {
    expect(Object.keys(STATUS_IDS.invoice).map(Number)).toEqual(Object.values(INVOICE_STATUS).map((s) => s.id));
    expect(Object.keys(STATUS_IDS.sales_order).map(Number)).toEqual(Object.values(SO_STATUS).map((s) => s.id));
    expect(Object.keys(STATUS_IDS.estimate).map(Number)).toEqual(Object.values(ESTIMATE_STATUS).map((s) => s.id));
    const lists: Record<StatusKind, [string, string]> = {
      estimate: ["listEstimates", "Estimate"],
      invoice: ["listInvoices", "Invoice"],
      purchase_order: ["listPurchaseOrders", "PurchaseOrder"],
      stock_transfer: ["listStockTransfers", "StockTransfer"],
      sales_order: ["listSalesOrders", "SalesOrder"],
    };
    for (const [kind, [operationId, schema]] of Object.entries(lists) as [StatusKind, [string, string]][]) {
      const ids = Object.keys(STATUS_IDS[kind]).map(Number);
      const filter = parametersOf(operationOf(byId(operationId))).find((p) => p.name === "status_id")!;
      expect(filter.schema, operationId).toEqual({ type: "integer", enum: ids });
      expect(document().components.schemas[schema].properties.status_id, schema).toMatchObject({ type: "integer", enum: ids });
    }
    expect(document().components.schemas.Item.properties.status_id).toMatchObject({ enum: [1, 2, 3] });
    expect(estimateListQuery().safeParse({ status_id: "5" }).success).toBe(true);
    for (const other of ["9", "0", "99"]) expect(estimateListQuery().safeParse({ status_id: other }).success, other).toBe(false);
  });

  it("task list limit and activity before_version are integers with their ranges; record_type an enum", () => {
    const parameter = (operationId: string, name: string) => parametersOf(operationOf(byId(operationId))).find((p) => p.name === name)!;
    expect(parameter("listTasks", "limit").schema).toEqual({ type: "integer", minimum: 1, maximum: 100, default: 40 });
    expect(parameter("listTaskActivity", "before_version").schema).toMatchObject({ type: "integer", minimum: 1 });
    expect(parameter("listTasks", "record_type").schema).toMatchObject({ type: "string", enum: expect.arrayContaining(["customer", "invoice", "kit"]) });
    expect(parameter("listInvoices", "ids")).toMatchObject({ style: "form", explode: false, schema: { type: "array", maxItems: 50 } });
  });
});
