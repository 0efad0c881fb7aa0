import * as z from "zod";
import { errorBody } from "../schemas/common.js";
import { ROUTES, type RouteDefinition } from "../routes/index.js";

/**
 * Builds the OpenAPI 3.1 document from the route table and its zod schemas: nothing about
 * the HTTP surface is written twice. Named schemas (`.meta({id})`) become components.
 */
type JsonSchema = Record<string, unknown>;

function rewriteRefs(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(rewriteRefs);
  if (node === null || typeof node !== "object") return node;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === "$schema") continue;
    if (key === "$ref" && typeof value === "string") out[key] = value.replace("#/$defs/", "#/components/schemas/");
    else out[key] = rewriteRefs(value);
  }
  return out;
}

function schemaOf(schema: z.ZodType, io: "input" | "output", components: Record<string, JsonSchema>): JsonSchema {
  const generated = z.toJSONSchema(schema, { io, unrepresentable: "any", target: "draft-2020-12" }) as JsonSchema;
  const defs = (generated.$defs ?? {}) as Record<string, JsonSchema>;
  delete generated.$defs;
  for (const [name, definition] of Object.entries(defs)) components[name] = rewriteRefs(definition) as JsonSchema;
  return rewriteRefs(generated) as JsonSchema;
}

const ERROR_RESPONSES: Record<string, string> = {
  "400": "Malformed request: invalid JSON, or a missing or invalid Idempotency-Key.",
  "401": "Missing, malformed, invalid, revoked or expired API key; inactive, deleted or moved user.",
  "403": "The key lacks a required scope (`insufficient_scope`) or the user a permission (`permission_denied`).",
  "404": "The record does not exist or is outside the caller's account or visibility (`resource_missing`).",
  "409": "Idempotency conflict (`idempotency_key_reused`, `idempotency_in_progress`).",
  "422": "Invalid fields (`validation_failed`, with `details`) or query values (`invalid_query_parameter`).",
  "429": "Rate limit exceeded (`rate_limited`); see `Retry-After`.",
};

function errorStatuses(route: RouteDefinition): string[] {
  const statuses = ["400", "422", "429"];
  if (route.authenticated) statuses.push("401", "403");
  if (route.request.path) statuses.push("404");
  if (route.idempotency !== "none") statuses.push("409");
  return statuses.sort();
}

function queryParameters(route: RouteDefinition, components: Record<string, JsonSchema>): unknown[] {
  const parameters: unknown[] = [];
  for (const [location, schema] of [
    ["path", route.request.path],
    ["query", route.request.query],
  ] as const) {
    if (!schema) continue;
    for (const [name, field] of Object.entries(schema.shape)) {
      const fieldSchema = schemaOf(field as z.ZodType, "input", components);
      parameters.push({
        name,
        in: location,
        required: location === "path" || !(field as z.ZodType).safeParse(undefined).success,
        description: (fieldSchema.description as string | undefined) ?? undefined,
        schema: fieldSchema,
      });
    }
  }
  if (route.idempotency !== "none") {
    parameters.push({
      name: "Idempotency-Key",
      in: "header",
      required: route.idempotency === "required",
      description:
        "1 to 255 visible ASCII characters. A retry with the same key and body within 300 s replays the original response with `Idempotent-Replayed: true`.",
      schema: { type: "string", minLength: 1, maxLength: 255 },
    });
  }
  return parameters;
}

const RATE_HEADERS = {
  "RateLimit-Limit": { description: "Requests allowed per window for this API key.", schema: { type: "integer" } },
  "RateLimit-Remaining": { description: "Requests left in the current window.", schema: { type: "integer" } },
  "RateLimit-Reset": { description: "Seconds until the window resets.", schema: { type: "integer" } },
};

/** `Cache-Control: no-store` on every response (errors included) of routes that declare `noStore`. */
const NO_STORE_HEADER = {
  "Cache-Control": { description: "Always `no-store`: no cache may keep this response.", schema: { type: "string", const: "no-store" } },
};
const noStoreHeaders = (route: RouteDefinition) => (route.noStore ? NO_STORE_HEADER : {});

export function buildOpenApiDocument(): Record<string, unknown> {
  const components: Record<string, JsonSchema> = {};
  const paths: Record<string, Record<string, unknown>> = {};
  schemaOf(errorBody, "output", components);

  for (const route of ROUTES) {
    const responses: Record<string, unknown> = {};
    for (const [status, schema] of Object.entries(route.responses)) {
      responses[status] = {
        description: route.summary,
        headers: { ...RATE_HEADERS, ...noStoreHeaders(route) },
        content: { "application/json": { schema: schemaOf(schema, "output", components) } },
      };
    }
    for (const status of errorStatuses(route)) {
      responses[status] = {
        description: ERROR_RESPONSES[status],
        ...(route.noStore ? { headers: NO_STORE_HEADER } : {}),
        content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } },
      };
    }
    const operation: Record<string, unknown> = {
      operationId: route.operationId,
      summary: route.summary,
      description: route.description,
      tags: [route.group],
      parameters: queryParameters(route, components),
      responses,
    };
    if (route.scopes.length > 0) operation["x-required-scopes"] = route.scopes;
    operation.security = route.authenticated ? [{ apiKey: [] }] : [];
    if (route.request.body) {
      operation.requestBody = {
        required: true,
        content: { "application/json": { schema: schemaOf(route.request.body, "input", components) } },
      };
    }
    (paths[route.path] ??= {})[route.method.toLowerCase()] = operation;
  }

  return {
    openapi: "3.1.0",
    info: {
      title: "Inventory and Sales Management API",
      version: "3.0.0",
      description:
        "Multi-account inventory and sales management. Authenticate with `Authorization: Bearer isk_live_...`. Errors have the shape `{error: {type, code, message, param?, details?}}`.",
    },
    servers: [{ url: "/" }],
    components: {
      securitySchemes: { apiKey: { type: "http", scheme: "bearer", description: "An API key: isk_live_ followed by 40 characters." } },
      schemas: components,
    },
    paths,
  };
}
