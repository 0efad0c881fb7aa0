import { Validator } from "@seriousme/openapi-schema-validator";
import { describe, expect, it } from "vitest";
import { buildOpenApiDocument } from "../../lib/openapi/document.js";
import { ROUTES } from "../../lib/routes/index.js";

/** The OpenAPI 3.1 document is generated from the route table (architecture section 2). */
type Operation = {
  operationId: string;
  parameters?: Array<{ name: string; in: string; required?: boolean; schema?: Record<string, unknown> }>;
  requestBody?: { required?: boolean; content: Record<string, { schema: unknown }> };
  responses: Record<string, { content?: Record<string, { schema: unknown }> }>;
  security?: unknown[];
};
type Doc = {
  openapi: string;
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, unknown>; securitySchemes: Record<string, unknown> };
};

const document = () => buildOpenApiDocument() as unknown as Doc;

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
      expect(ref).toMatch(/^#\/components\/schemas\//);
      expect(doc.components.schemas[ref.replace("#/components/schemas/", "")], ref).toBeDefined();
    }
  });

  it("describes the item category the way spec part 1, section 2.4 shows it", () => {
    const category = document().components.schemas.ItemCategory as { properties: Record<string, unknown>; required?: string[] };
    expect(Object.keys(category.properties).sort()).toEqual(["custom_fields", "id", "inventory_type", "name", "object", "parent_id"]);
    expect(category.properties.inventory_type).toMatchObject({ enum: ["quantity", "unique"] });
  });
});
