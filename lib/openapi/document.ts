import * as z from "zod";
import { errorBody, SAFE_TEXT } from "../schemas/common.js";
import { API_PREFIX, ROUTES, type RouteDefinition } from "../routes/index.js";
import { describeErrorResponse, errorCodesOf, errorTypeOf } from "./errors.js";
import type { ErrorCode } from "../core/error-codes.js";
import { errorExample, exampleOf, parameterExample } from "./examples.js";
import { HEADER_PARAMETERS } from "./header-parameters.js";

/**
 * Builds the OpenAPI 3.1 document from the route table and its zod schemas: nothing about
 * the HTTP surface is written twice. Named schemas (`.meta({id})`) become components. Each
 * operation documents every status it can answer: its success responses, and one response
 * per error status whose schema constrains `error.code` (and `error.type`) to the codes that
 * route can answer (`./errors.ts` derives them from the route's shape and its `errors`
 * field), with the headers each response carries.
 *
 * What several operations share is written once and referenced: schemas
 * (`components.schemas`), error responses with the same status, codes and headers
 * (`components.responses`), parameters with the same definition (`components.parameters`)
 * and response headers (`components.headers`). The document holds no component nothing
 * references, and every response and parameter has an example (`./examples.ts`).
 */
type JsonSchema = Record<string, unknown>;

/**
 * The character rule of every text field (`text`, `requiredText` in lib/schemas/common.ts), one
 * component: a text property is `{$ref: Text, maxLength, ...}` (OpenAPI 3.1 applies a `$ref`
 * with its sibling keywords) instead of repeating the pattern on some 280 properties.
 */
const TEXT_COMPONENT: JsonSchema = { type: "string", pattern: SAFE_TEXT.source, description: "No NUL characters or unpaired surrogates" };

/**
 * Points `$defs` references at `components.schemas`; drops zod's ±(2^53 - 1) integer bounds from
 * responses (no use to a client); a text field refers to the `Text` component for its pattern.
 */
function rewriteRefs(node: unknown, io: "input" | "output"): unknown {
  if (Array.isArray(node)) return node.map((entry) => rewriteRefs(entry, io));
  if (node === null || typeof node !== "object") return node;
  const textRule = (node as JsonSchema).type === "string" && (node as JsonSchema).pattern === SAFE_TEXT.source;
  const out: Record<string, unknown> = textRule ? { $ref: "#/components/schemas/Text" } : {};
  for (const [key, value] of Object.entries(node)) {
    if (key === "$schema") continue;
    if (textRule && (key === "type" || key === "pattern")) continue;
    if (io === "output" && (key === "maximum" || key === "minimum") && Math.abs(Number(value)) === Number.MAX_SAFE_INTEGER) continue;
    if (key === "$ref" && typeof value === "string") out[key] = value.replace("#/$defs/", "#/components/schemas/");
    else out[key] = rewriteRefs(value, io);
  }
  return out;
}

function schemaOf(schema: z.ZodType, io: "input" | "output", components: Record<string, JsonSchema>): JsonSchema {
  const generated = z.toJSONSchema(schema, { io, unrepresentable: "any", target: "draft-2020-12" }) as JsonSchema;
  const defs = (generated.$defs ?? {}) as Record<string, JsonSchema>;
  delete generated.$defs;
  for (const [name, definition] of Object.entries(defs)) components[name] = rewriteRefs(definition, io) as JsonSchema;
  return rewriteRefs(generated, io) as JsonSchema;
}

const ref = (kind: "schemas" | "headers" | "responses" | "parameters", name: string) => ({ $ref: `#/components/${kind}/${name}` });

/** Response headers (components.headers); `required` says the header is always present. */
const HEADERS: Record<string, JsonSchema> = {
  "X-Request-Id": {
    description: "Identifies the request in the API's logs; quote it when reporting a problem.",
    required: true,
    schema: { type: "string", example: "0b6f3c2e-4f3a-4d2b-9b51-2f0f3b8f6a11" },
  },
  "RateLimit-Limit": { description: "Requests allowed per window for this API key.", required: true, schema: { type: "integer", minimum: 1, example: 120 } },
  "RateLimit-Remaining": { description: "Requests left in the current window.", required: true, schema: { type: "integer", minimum: 0, example: 119 } },
  "RateLimit-Reset": {
    description: "Seconds until the window resets (never an epoch).",
    required: true,
    schema: { type: "integer", minimum: 1, maximum: 60, example: 42 },
  },
  "Retry-After": { description: "Whole seconds to wait before retrying.", required: true, schema: { type: "integer", minimum: 1, example: 1 } },
  "WWW-Authenticate": { description: "The authentication scheme: `Bearer`.", required: true, schema: { type: "string", enum: ["Bearer"] } },
  "Idempotent-Replayed": {
    description: "`true` when this response is the stored outcome of an earlier request with the same `Idempotency-Key` (absent otherwise).",
    required: false,
    schema: { type: "string", enum: ["true"] },
  },
  ETag: {
    description: "The record's revision; send it back in `If-Match`.",
    required: true,
    schema: { type: "string", example: '"inv_0mf3k2q1a9c4e1b2d3f4a5b6"' },
  },
  Location: { description: "URL of the created record.", required: true, schema: { type: "string" } },
  Allow: { description: "On a path other operations have: their methods, comma-separated.", schema: { type: "string", example: "GET, POST" } },
  "Content-Security-Policy": { description: "The page may load nothing but this API's own resources.", required: true, schema: { type: "string" } },
  "Cache-Control": { description: "How long the response may be cached.", required: true, schema: { type: "string", example: "no-store" } },
};

const COMMON_HEADERS = ["X-Request-Id", "RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset"];

/** Statuses answered before a route's handler runs: an idempotent outcome is never one of them. */
const BEFORE_HANDLER = new Set([400, 401, 413, 429]);

/** The error schema of one response: the `Error` shape, with `type` and `code` narrowed to this response's. */
function errorSchema(status: number, codes: readonly string[]): JsonSchema {
  return {
    allOf: [
      ref("schemas", "Error"),
      {
        type: "object",
        properties: {
          error: { type: "object", properties: { type: { type: "string", enum: [errorTypeOf(status)] }, code: { type: "string", enum: [...codes] } } },
        },
      },
    ],
  };
}

function parameters(route: RouteDefinition, components: Record<string, JsonSchema>): JsonSchema[] {
  const list: JsonSchema[] = [];
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
      const parameter: JsonSchema = {
        name,
        in: location,
        required: location === "path" || !(field as z.ZodType).safeParse(undefined).success,
      };
      if (typeof description === "string") parameter.description = description;
      if (documented?.explode === false) Object.assign(parameter, { style: "form", explode: false });
      parameter.schema = documented ? documented.schema : rest;
      const example = parameterExample(
        parameter.schema as JsonSchema,
        location === "query" ? route.example?.query?.[name] : undefined,
        documented?.explode === false,
      );
      if (example !== undefined) parameter.example = example;
      list.push(parameter);
    }
  }
  if (route.idempotency !== "none") list.push(ref("parameters", route.idempotency === "required" ? "IdempotencyKeyRequired" : "IdempotencyKey"));
  if (route.ifMatch) list.push(ref("parameters", route.ifMatch === "required" ? "IfMatchRequired" : "IfMatch"));
  return list;
}

interface ErrorResponse {
  status: number;
  codes: readonly string[];
  replayable: boolean;
  noStore: boolean;
  body: JsonSchema;
}

function successResponses(route: RouteDefinition, components: Record<string, JsonSchema>, usedHeaders: Set<string>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const mediaType = route.produces ?? "application/json";
  for (const [status, schema] of Object.entries(route.responses)) {
    const names = [...COMMON_HEADERS, ...(route.idempotency !== "none" ? ["Idempotent-Replayed"] : []), ...(route.headers ?? [])];
    out[status] = {
      description: route.summary,
      headers: headersOf(names, usedHeaders),
      content: { [mediaType]: { schema: schemaOf(schema, "output", components) } },
    };
  }
  return out;
}

function errorResponses(route: RouteDefinition, usedHeaders: Set<string>): ErrorResponse[] {
  const out: ErrorResponse[] = [];
  for (const [status, codes] of errorCodesOf(route)) {
    const names = [...COMMON_HEADERS];
    if (status === 401) names.push("WWW-Authenticate");
    if (status === 429 || status === 503) names.push("Retry-After");
    const replayable = route.idempotency !== "none" && status < 500 && !BEFORE_HANDLER.has(status);
    if (replayable) names.push("Idempotent-Replayed");
    // Routes that declare `noStore` send `Cache-Control: no-store` on errors too.
    const noStore = route.noStore === true;
    if (noStore) names.push("Cache-Control");
    out.push({
      status,
      codes,
      replayable,
      noStore,
      body: {
        description: describeErrorResponse(status, codes),
        headers: headersOf(names, usedHeaders),
        content: { "application/json": { schema: errorSchema(status, codes), example: errorExample(status, codes) } },
      },
    });
  }
  return out;
}

function headersOf(names: readonly string[], used: Set<string>): Record<string, unknown> {
  for (const name of names) used.add(name);
  return Object.fromEntries(names.map((name) => [name, ref("headers", name)]));
}

/** Component names of error responses: the status's title, a number per code set (by first use), and the header variants. */
const RESPONSE_TITLES: Record<number, string> = {
  400: "BadRequest",
  401: "Unauthenticated",
  403: "Forbidden",
  404: "NotFound",
  409: "Conflict",
  413: "RequestTooLarge",
  422: "Unprocessable",
  428: "PreconditionRequired",
  429: "TooManyRequests",
  500: "InternalError",
  503: "Busy",
};

/**
 * The error responses several operations share become components: one per status, code set
 * and header set (`Forbidden2Replayable`: the second code set of 403, with
 * `Idempotent-Replayed`). A response only one operation has stays inline.
 */
function shareErrorResponses(all: ErrorResponse[][]): { components: Record<string, unknown>; refOf: (response: ErrorResponse) => unknown } {
  const keyOf = (r: ErrorResponse) => JSON.stringify(r.body);
  const uses = new Map<string, number>();
  for (const responses of all) for (const r of responses) uses.set(keyOf(r), (uses.get(keyOf(r)) ?? 0) + 1);
  const codeSets = new Map<number, string[]>();
  const names = new Map<string, string>();
  const components: Record<string, unknown> = {};
  for (const responses of all) {
    for (const r of responses) {
      const key = keyOf(r);
      if ((uses.get(key) ?? 0) < 2 || names.has(key)) continue;
      const sets = codeSets.get(r.status) ?? [];
      const codes = r.codes.join(",");
      if (!sets.includes(codes)) sets.push(codes);
      codeSets.set(r.status, sets);
      const index = sets.indexOf(codes) + 1;
      const name = `${RESPONSE_TITLES[r.status] ?? `Status${r.status}`}${index > 1 ? index : ""}${r.replayable ? "Replayable" : ""}${r.noStore ? "NoStore" : ""}`;
      names.set(key, name);
      components[name] = r.body;
    }
  }
  return { components, refOf: (r) => (names.has(keyOf(r)) ? ref("responses", names.get(keyOf(r))!) : r.body) };
}

/**
 * Path and query parameters several operations define alike become components, named
 * `{in}.{name}` (the most used definition of that name) or `{in}.{name}.{operationId}` (another
 * definition, by the first operation that has it). A parameter only one operation has stays inline.
 */
function shareParameters(all: { operationId: string; parameters: JsonSchema[] }[]): {
  components: Record<string, JsonSchema>;
  refOf: (parameter: JsonSchema) => unknown;
} {
  const variants = new Map<string, { key: string; uses: number; first: string; parameter: JsonSchema }[]>();
  for (const { operationId, parameters } of all) {
    for (const parameter of parameters) {
      if (typeof parameter.$ref === "string") continue;
      const base = `${parameter.in}.${parameter.name}`;
      const key = JSON.stringify(parameter);
      const list = variants.get(base) ?? [];
      const found = list.find((v) => v.key === key);
      if (found) found.uses += 1;
      else list.push({ key, uses: 1, first: operationId, parameter });
      variants.set(base, list);
    }
  }
  const names = new Map<string, string>();
  const components: Record<string, JsonSchema> = {};
  for (const [base, list] of variants) {
    const shared = list.filter((v) => v.uses > 1).sort((a, b) => b.uses - a.uses);
    shared.forEach((variant, i) => {
      const name = i === 0 ? base : `${base}.${variant.first}`;
      names.set(variant.key, name);
      components[name] = variant.parameter;
    });
  }
  return {
    components,
    refOf: (parameter) => {
      const name = typeof parameter.$ref === "string" ? undefined : names.get(JSON.stringify(parameter));
      return name ? ref("parameters", name) : parameter;
    },
  };
}

/** What each operation needs, generated from the route table: its scopes and permissions. */
function accessOf(route: RouteDefinition): string {
  if (!route.authenticated) return "**Access:** public (no API key).";
  const list = (names: readonly string[]) => names.map((name) => `\`${name}\``).join(", ");
  const scopes = route.scopes.length > 0 ? `**Scopes:** ${list(route.scopes)}.` : "**Scopes:** none beyond those its description names.";
  const permissions = route.permissions?.length ? `**Permissions:** ${list(route.permissions)}.` : "**Permissions:** none always needed.";
  return `${scopes} ${permissions}`;
}

const DESCRIPTION = `Multi-account inventory and sales management (spec: API v3).

Authenticate with \`Authorization: Bearer isk_live_...\`. Every response carries \`X-Request-Id\` and \`RateLimit-Limit\`, \`RateLimit-Remaining\`, \`RateLimit-Reset\` (seconds); errors have the shape \`{error: {type, code, message, param?, details?}}\`, and each operation lists, per status, every \`code\` it can answer.

Each operation names the API key **scopes** it needs (403 \`insufficient_scope\` without one) and the user **permissions** every call of it needs (403 \`permission_denied\` without one); an operation's description says when some inputs need more.

Rules every write shares: text is stored trimmed; in an optional field, blank text (\`""\` or only whitespace) is the same as \`null\` and clears the field (a required text field refuses it); a record's GET body is accepted by its PATCH or PUT and changes nothing: the fields the service controls, which the update schemas leave out, may be sent back as read (with another value they are refused), and a write that changes nothing writes nothing; dates are real calendar dates from \`0001-01-01\`. A user assigned to a location sees and acts on documents and stock at that location only: others are 404 \`resource_missing\`, a body naming another location 422 on that field (stock transfers are account-wide).

An unknown route is 404 \`route_not_found\` (a known path with a method it lacks too, with \`Allow\` listing the methods it has); a request that is not well-formed HTTP is 400 \`malformed_request\`, and one whose headers are over 16 KB together 431 \`request_too_large\` (see \`x-unmatched-responses\`).

\`GET ${API_PREFIX}\` links this document and its HTML rendering.`;

/** Answers to requests that match no operation: status, component name, code, description, extra headers. */
const UNMATCHED: readonly (readonly [number, string, ErrorCode, string, readonly string[]])[] = [
  [
    400,
    "MalformedRequest",
    "malformed_request",
    "Not well-formed HTTP (an unknown or lower-case method, a path or header byte HTTP does not allow, a malformed header): 400 `malformed_request`.",
    [],
  ],
  [
    404,
    "RouteNotFound",
    "route_not_found",
    "No operation has this method and path: 404 `route_not_found`; when the path has other methods, `Allow` lists them.",
    ["Allow"],
  ],
  [431, "HeadersTooLarge", "request_too_large", "The request's headers together are over 16 KB: 431 `request_too_large`.", []],
];

/** Tag descriptions of the known endpoint groups (other groups are listed by name). */
const GROUP_DESCRIPTIONS: Record<string, string> = {
  platform: "The API's own documents: its index, this OpenAPI document and its HTML reference (public).",
  locations: "Locations and zones (spec part 1, section 4.1).",
  "item-categories": "Item categories and their custom fields (spec part 1, section 4.2).",
  items: "Items, variations, stock adjustments and units.",
  contacts: "Contacts (spec part 1, section 4.3).",
  parties: "Customers, prospects and suppliers (spec part 1, section 4.4).",
  sync: "Incremental change feed (spec part 1, section 4.7).",
  webhooks:
    'Push delivery of the change feed, signed per Standard Webhooks (`webhook-id`, `webhook-timestamp`, `webhook-signature`). Body: `{type: "<resource>.<operation>", timestamp, data: {object: "change", resource, id, operation}}`; a 2xx within 10 s succeeds, else retries (5 s to 10 h, 8 attempts).',
};

/** Every `$ref` target in a node, as `kind/name`. */
function referenced(node: unknown, into: Set<string>): Set<string> {
  if (Array.isArray(node)) for (const n of node) referenced(n, into);
  else if (node && typeof node === "object") {
    for (const [key, value] of Object.entries(node)) {
      if (key === "$ref" && typeof value === "string") into.add(value.replace("#/components/", ""));
      else referenced(value, into);
    }
  }
  return into;
}

export function buildOpenApiDocument(routes: readonly RouteDefinition[] = ROUTES): Record<string, unknown> {
  const components: Record<string, JsonSchema> = { Text: TEXT_COMPONENT };
  const usedHeaders = new Set<string>();
  schemaOf(errorBody(), "output", components);

  const built = routes.map((route) => {
    const operation: Record<string, unknown> = {
      operationId: route.operationId,
      summary: route.summary,
      description: route.description ? `${route.description}\n\n${accessOf(route)}` : accessOf(route),
      tags: [route.group],
    };
    if (route.scopes.length > 0) operation["x-required-scopes"] = route.scopes;
    if (route.permissions?.length) operation["x-required-permissions"] = route.permissions;
    if (!route.authenticated) operation.security = []; // the document's `security` (the key) covers the rest
    if (route.request.body) {
      const content: Record<string, unknown> = { schema: schemaOf(route.request.body, "input", components) };
      if (route.example?.body !== undefined) content.example = route.example.body;
      operation.requestBody = { required: !route.request.body.safeParse({}).success, content: { "application/json": content } }; // no body reads as {}
    }
    return {
      route,
      operation,
      parameters: parameters(route, components),
      success: successResponses(route, components, usedHeaders),
      errors: errorResponses(route, usedHeaders),
    };
  });

  const sharedResponses = shareErrorResponses(built.map((b) => b.errors));
  const sharedParameters = shareParameters(built.map((b) => ({ operationId: b.route.operationId, parameters: b.parameters })));
  const paths: Record<string, Record<string, unknown>> = {};
  for (const { route, operation, parameters: list, success, errors } of built) {
    const responses: Record<string, unknown> = { ...success };
    for (const error of errors) responses[String(error.status)] = sharedResponses.refOf(error);
    const { operationId, summary, description, tags, ...rest } = operation;
    const parameters = list.length > 0 ? { parameters: list.map(sharedParameters.refOf) } : {};
    paths[route.path] ??= {};
    paths[route.path]![route.method.toLowerCase()] = { operationId, summary, description, tags, ...parameters, ...rest, responses };
  }

  // What a request that matches no operation gets, by status (the document's `x-unmatched-responses`).
  const unmatched: Record<string, JsonSchema> = {};
  const unmatchedByStatus: Record<number, JsonSchema> = {};
  for (const [status, name, code, description, extra] of UNMATCHED) {
    const content = { "application/json": { schema: errorSchema(status, [code]), example: errorExample(status, [code]) } };
    unmatched[name] = { description, headers: headersOf([...COMMON_HEADERS, ...extra], usedHeaders), content };
    unmatchedByStatus[status] = ref("responses", name);
  }

  const groups = [...new Set(routes.map((route) => route.group))];
  // biome-ignore lint/suspicious/noExplicitAny: a JSON document assembled by path (its shape is checked by the OpenAPI validator test)
  const document: Record<string, any> = {
    openapi: "3.1.0",
    info: { title: "Inventory and Sales Management API", version: "3.0.0", description: DESCRIPTION },
    servers: [{ url: "/" }],
    security: [{ apiKey: [] }],
    tags: groups.map((name) => ({ name, description: GROUP_DESCRIPTIONS[name] ?? name })),
    paths,
    "x-unmatched-responses": unmatchedByStatus,
    components: {
      securitySchemes: { apiKey: { type: "http", scheme: "bearer", description: "An API key: isk_live_ followed by 40 letters and digits." } },
      headers: Object.fromEntries(Object.entries(HEADERS).filter(([name]) => usedHeaders.has(name))),
      parameters: { ...HEADER_PARAMETERS, ...sharedParameters.components },
      responses: { ...unmatched, ...sharedResponses.components },
      schemas: components,
    },
  };

  // Only what something references: schemas only other components use count when those are kept.
  const keep = referenced({ ...document, components: undefined }, new Set());
  for (let size = -1; size !== keep.size; ) {
    size = keep.size;
    for (const name of [...keep]) {
      const [kind, key] = name.split("/") as [string, string];
      referenced(document.components[kind]?.[key], keep);
    }
  }
  for (const kind of ["parameters", "responses", "schemas"] as const) {
    for (const name of Object.keys(document.components[kind])) if (!keep.has(`${kind}/${name}`)) delete document.components[kind][name];
  }

  // An example on every success response: on the component its schema names (shared by the
  // operations that answer it), else on the response itself.
  for (const { route, success } of built) {
    const path = route.path.replace(/\{\w+\}/g, "3f0c8f9e-6a53-4f0a-9a57-0b5e1b1c2d3e");
    for (const response of Object.values(success) as { content: Record<string, { schema: JsonSchema; example?: unknown }> }[]) {
      for (const media of Object.values(response.content)) {
        const name = typeof media.schema.$ref === "string" ? media.schema.$ref.replace("#/components/schemas/", "") : undefined;
        if (name && components[name]) components[name].example ??= exampleOf(components[name], components, { name, path });
        else media.example = exampleOf(media.schema, components, { path });
      }
    }
  }
  return document;
}
