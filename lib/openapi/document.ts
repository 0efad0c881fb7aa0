import * as z from "zod";
import { errorBody } from "../schemas/common.js";
import { API_PREFIX, ROUTES, type RouteDefinition } from "../routes/index.js";
import { describeErrorResponse, errorCodesOf, errorTypeOf, meaningOf } from "./errors.js";

/**
 * Builds the OpenAPI 3.1 document from the route table and its zod schemas: nothing about
 * the HTTP surface is written twice. Named schemas (`.meta({id})`) become components. Each
 * operation documents every status it can answer: its success responses, and one response
 * per error status whose schema constrains `error.code` (and `error.type`) to the codes that
 * route can answer (`./errors.ts` derives them from the route's shape and its `errors`
 * field), with the headers each response carries.
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

const ref = (kind: "schemas" | "headers" | "responses", name: string) => ({ $ref: `#/components/${kind}/${name}` });

/** Response headers (components.headers); `required` says the header is always present. */
const HEADERS: Record<string, JsonSchema> = {
  "X-Request-Id": { description: "Identifies the request in the API's logs; quote it when reporting a problem.", required: true, schema: { type: "string" } },
  "RateLimit-Limit": { description: "Requests allowed per window for this API key.", required: true, schema: { type: "integer", minimum: 1 } },
  "RateLimit-Remaining": { description: "Requests left in the current window.", required: true, schema: { type: "integer", minimum: 0 } },
  "RateLimit-Reset": { description: "Seconds until the window resets (never an epoch).", required: true, schema: { type: "integer", minimum: 1, maximum: 60 } },
  "Retry-After": { description: "Whole seconds to wait before retrying.", required: true, schema: { type: "integer", minimum: 1 } },
  "WWW-Authenticate": { description: "The authentication scheme: `Bearer`.", required: true, schema: { type: "string", enum: ["Bearer"] } },
  "Idempotent-Replayed": {
    description: "`true` when this response is the stored outcome of an earlier request with the same `Idempotency-Key` (absent otherwise).",
    required: false,
    schema: { type: "string", enum: ["true"] },
  },
  ETag: { description: "The record's revision; send it back in `If-Match`.", required: true, schema: { type: "string" } },
  Location: { description: "URL of the created record.", required: true, schema: { type: "string" } },
  Allow: { description: "The methods the path has, comma-separated.", required: true, schema: { type: "string" } },
  "Content-Security-Policy": { description: "The page may load nothing but this API's own resources.", required: true, schema: { type: "string" } },
  "Cache-Control": { description: "How long the response may be cached.", required: true, schema: { type: "string" } },
};

const COMMON_HEADERS = ["X-Request-Id", "RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset"];
const headersOf = (names: readonly string[]) => Object.fromEntries(names.map((name) => [name, ref("headers", name)]));

/** Statuses answered before a route's handler runs: an idempotent outcome is never one of them. */
const BEFORE_HANDLER = new Set([400, 401, 413, 429]);

/** The error schema of one response: the `Error` shape, with `type` and `code` narrowed to this response's. */
function errorSchema(status: number, codes: readonly string[]): JsonSchema {
  return {
    allOf: [
      ref("schemas", "Error"),
      {
        type: "object",
        properties: { error: { type: "object", properties: { type: { type: "string", enum: [errorTypeOf(status)] }, code: { type: "string", enum: [...codes] } } } },
      },
    ],
  };
}

function parameters(route: RouteDefinition, components: Record<string, JsonSchema>): unknown[] {
  const list: unknown[] = [];
  for (const [location, schema] of [
    ["path", route.request.path],
    ["query", route.request.query],
  ] as const) {
    if (!schema) continue;
    for (const [name, field] of Object.entries(schema.shape)) {
      const generated = schemaOf(field as z.ZodType, "input", components);
      const documented = generated["x-parameter"] as { schema: JsonSchema; explode?: false } | undefined;
      const { description, ...rest } = generated;
      delete rest["x-parameter"];
      const parameter: Record<string, unknown> = {
        name,
        in: location,
        required: location === "path" || !(field as z.ZodType).safeParse(undefined).success,
      };
      if (typeof description === "string") parameter.description = description;
      const example = location === "query" ? route.example?.query?.[name] : undefined;
      if (example !== undefined) parameter.example = example;
      if (documented?.explode === false) Object.assign(parameter, { style: "form", explode: false });
      parameter.schema = documented ? documented.schema : rest;
      list.push(parameter);
    }
  }
  if (route.idempotency !== "none") {
    list.push({
      name: "Idempotency-Key",
      in: "header",
      required: route.idempotency === "required",
      description:
        "1 to 255 visible ASCII characters. A retry with the same key and body within 300 s replays the original response with `Idempotent-Replayed: true`; the same key with other data is 409 `idempotency_key_reused`.",
      schema: { type: "string", minLength: 1, maxLength: 255, pattern: "^[\\x21-\\x7E]+$" },
    });
  }
  return list;
}

function responses(route: RouteDefinition, components: Record<string, JsonSchema>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const mediaType = route.produces ?? "application/json";
  for (const [status, schema] of Object.entries(route.responses)) {
    const names = [...COMMON_HEADERS, ...(route.idempotency !== "none" ? ["Idempotent-Replayed"] : []), ...(route.headers ?? [])];
    out[status] = {
      description: route.summary,
      headers: headersOf(names),
      content: { [mediaType]: { schema: schemaOf(schema, "output", components) } },
    };
  }
  for (const [status, codes] of errorCodesOf(route)) {
    const names = [...COMMON_HEADERS];
    if (status === 401) names.push("WWW-Authenticate");
    if (status === 429 || status === 503) names.push("Retry-After");
    if (route.idempotency !== "none" && status < 500 && !BEFORE_HANDLER.has(status)) names.push("Idempotent-Replayed");
    // Routes that declare `noStore` send `Cache-Control: no-store` on errors too.
    if (route.noStore) names.push("Cache-Control");
    out[String(status)] = {
      description: describeErrorResponse(status, codes),
      headers: headersOf(names),
      content: { "application/json": { schema: errorSchema(status, codes) } },
    };
  }
  return out;
}

const DESCRIPTION = `Multi-account inventory and sales management (spec: API v3).

Authenticate with \`Authorization: Bearer isk_live_...\`. Every response carries \`X-Request-Id\` and \`RateLimit-Limit\`, \`RateLimit-Remaining\`, \`RateLimit-Reset\` (seconds); errors have the shape \`{error: {type, code, message, param?, details?}}\`, and each operation lists, per status, every \`code\` it can answer.

Requests that match no operation: an unknown path is 404 \`route_not_found\` (${meaningOf(404, "route_not_found")}); a known path with a method it does not have is 405 \`method_not_allowed\` with an \`Allow\` header (see the \`RouteNotFound\` and \`MethodNotAllowed\` responses under components).

\`GET ${API_PREFIX}\` links this document and its HTML rendering.`;

/** Tag descriptions of the known endpoint groups (other groups are listed by name). */
const GROUP_DESCRIPTIONS: Record<string, string> = {
  platform: "The API's own documents: its index, this OpenAPI document and its HTML reference (public).",
  locations: "Locations and zones (spec part 1, section 4.1).",
  "item-categories": "Item categories and their custom fields (spec part 1, section 4.2).",
  items: "Items, variations, stock adjustments and units.",
  contacts: "Contacts (spec part 1, section 4.3).",
  parties: "Customers, prospects and suppliers (spec part 1, section 4.4).",
  sync: "Incremental change feed (spec part 1, section 4.7).",
};

export function buildOpenApiDocument(routes: readonly RouteDefinition[] = ROUTES): Record<string, unknown> {
  const components: Record<string, JsonSchema> = {};
  const paths: Record<string, Record<string, unknown>> = {};
  schemaOf(errorBody, "output", components);

  for (const route of routes) {
    const operation: Record<string, unknown> = {
      operationId: route.operationId,
      summary: route.summary,
      description: route.description,
      tags: [route.group],
      parameters: parameters(route, components),
      responses: responses(route, components),
    };
    if (route.scopes.length > 0) operation["x-required-scopes"] = route.scopes;
    operation.security = route.authenticated ? [{ apiKey: [] }] : [];
    if (route.request.body) {
      const content: Record<string, unknown> = { schema: schemaOf(route.request.body, "input", components) };
      if (route.example?.body !== undefined) content.example = route.example.body;
      operation.requestBody = { required: true, content: { "application/json": content } };
    }
    (paths[route.path] ??= {})[route.method.toLowerCase()] = operation;
  }

  const groups = [...new Set(routes.map((route) => route.group))];
  return {
    openapi: "3.1.0",
    info: { title: "Inventory and Sales Management API", version: "3.0.0", description: DESCRIPTION },
    servers: [{ url: "/" }],
    tags: groups.map((name) => ({ name, description: GROUP_DESCRIPTIONS[name] ?? name })),
    components: {
      securitySchemes: { apiKey: { type: "http", scheme: "bearer", description: "An API key: isk_live_ followed by 40 letters and digits." } },
      headers: HEADERS,
      responses: {
        RouteNotFound: {
          description: "No operation has this path: 404 `route_not_found`.",
          headers: headersOf(COMMON_HEADERS),
          content: { "application/json": { schema: errorSchema(404, ["route_not_found"]) } },
        },
        MethodNotAllowed: {
          description: "The path exists, but not with this method: 405 `method_not_allowed`; `Allow` lists the path's methods.",
          headers: headersOf([...COMMON_HEADERS, "Allow"]),
          content: { "application/json": { schema: errorSchema(405, ["method_not_allowed"]) } },
        },
      },
      schemas: components,
    },
    paths,
  };
}
