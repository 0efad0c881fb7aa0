import middy from "@middy/core";
import httpJsonBodyParser from "@middy/http-json-body-parser";
import type { Context } from "aws-lambda";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { Permission, Principal } from "../../auth/permissions.js";
import { ROUTES, type RouteDefinition } from "../../routes/index.js";
import { ContentionError, errors } from "../../core/errors.js";
import type { HttpEvent, HttpResult, PipelineMiddleware, PipelineRequest, PipelineState } from "../types.js";
import { errorHandler } from "./error-handler.js";
import { jsonBody } from "./json-body.js";
import { rateLimit } from "./rate-limit.js";
import { requestContext } from "./request-context.js";
import { requireScopes } from "./scopes.js";
import { recordNamedBy, validateRequest } from "./validate-request.js";

/**
 * The pipeline's middlewares (architecture section 3), each wrapped in a REAL middy() handler
 * the way Middy's own tests do. The request state that authentication would set up is built
 * by hand: no DynamoDB (authentication and idempotency need it and are left out).
 */
const route = (operationId: string): RouteDefinition => {
  const found = ROUTES.find((r) => r.operationId === operationId);
  if (!found) throw new Error(`no route ${operationId}`);
  return found;
};
const CREATE = route("createItemCategory");
const LIST = route("listItemCategories");
const GET = route("getItemCategory");
const OPENAPI = route("getOpenApiDocument");

function principal(overrides: Partial<Principal> = {}): Principal {
  return {
    accountId: "5b0b8c7e-1d2c-4b8a-9d61-0f3a2c1e7a11",
    userId: "user-1",
    role: "staff",
    permissions: new Set<Permission>(["inventory.modify"]),
    assignedLocationId: null,
    timeZone: null,
    keyId: "key_1",
    keyHash: "0".repeat(64),
    scopes: null,
    ...overrides,
  };
}

function event(overrides: Partial<HttpEvent> & { method?: string } = {}): HttpEvent {
  const { method = "POST", ...rest } = overrides;
  return {
    version: "2.0",
    routeKey: `${method} /api/v3/item-categories`,
    rawPath: "/api/v3/item-categories",
    rawQueryString: "",
    headers: { "content-type": "application/json" },
    isBase64Encoded: false,
    requestContext: {
      accountId: "000000000000",
      apiId: "test",
      domainName: "localhost",
      domainPrefix: "localhost",
      http: { method, path: "/api/v3/item-categories", protocol: "HTTP/1.1", sourceIp: "127.0.0.1", userAgent: "vitest" },
      requestId: "req-test-1",
      routeKey: `${method} /api/v3/item-categories`,
      stage: "$default",
      time: new Date().toUTCString(),
      timeEpoch: Date.now(),
    },
    ...rest,
  } as HttpEvent;
}

type State = Partial<PipelineState> & Record<string, unknown>;

/** Seeds `request.internal` with what earlier middlewares would have put there. */
const seed = (state: State): PipelineMiddleware => ({
  before: (request: PipelineRequest) => {
    Object.assign(request.internal, { requestId: "req-test-1", startedAt: Date.now() }, state);
  },
});

interface Run {
  response: HttpResult;
  handlerCalls: number;
  seenBody: unknown;
  internal: PipelineRequest["internal"] | undefined;
}

/** A real middy() handler: `outer` middlewares, the seeded state, then `inner` ones. */
async function run(
  options: { outer?: PipelineMiddleware[]; state?: State; inner?: PipelineMiddleware[]; handler?: (event: HttpEvent) => Promise<HttpResult> },
  input: HttpEvent,
): Promise<Run> {
  let handlerCalls = 0;
  let seenBody: unknown;
  let internal: PipelineRequest["internal"] | undefined;
  const capture: PipelineMiddleware = {
    before: (request: PipelineRequest) => {
      internal = request.internal;
    },
  };
  const handler = middy<HttpEvent, HttpResult, Error, Context, PipelineRequest["internal"]>()
    .use([...(options.outer ?? []), seed(options.state ?? {}), capture, ...(options.inner ?? [])])
    .handler(async (evt: HttpEvent) => {
      handlerCalls += 1;
      seenBody = evt.body;
      if (options.handler) return options.handler(evt);
      return { statusCode: 200, headers: { "Content-Type": "application/json" }, body: JSON.stringify({ ok: true }) };
    });
  const response = (await handler(input, {} as Context)) as HttpResult;
  return { response, handlerCalls, seenBody, internal };
}

const bodyOf = (response: HttpResult) => JSON.parse(String(response.body));

let stdout: ReturnType<typeof vi.spyOn>;
beforeEach(() => {
  stdout = vi.spyOn(process.stdout, "write").mockImplementation(() => true);
});
afterEach(() => {
  stdout.mockRestore();
  vi.unstubAllEnvs();
});
const logged = () => stdout.mock.calls.map((call: unknown[]) => String(call[0])).join("");

describe("offline: errorHandler", () => {
  it("renders an ApiError as {statusCode, body {error:{type, code, message, param}}}", async () => {
    const { response } = await run(
      {
        outer: [errorHandler()],
        handler: async () => {
          throw errors.insufficientScope("items:write");
        },
      },
      event(),
    );
    expect(response.statusCode).toBe(403);
    expect(response.headers["Content-Type"]).toBe("application/json");
    expect(bodyOf(response)).toEqual({
      error: { type: "invalid_request_error", code: "insufficient_scope", message: expect.any(String), param: "items:write" },
    });
  });

  it("omits param when the error names none, and keeps validation details", async () => {
    const missing = await run({ outer: [errorHandler()], handler: async () => Promise.reject(errors.resourceMissing("item category", "x")) }, event());
    expect(missing.response.statusCode).toBe(404);
    expect(bodyOf(missing.response)).toEqual({
      error: { type: "invalid_request_error", code: "resource_missing", message: expect.any(String) },
    });

    const details = [{ param: "custom_fields[0].name", code: "required" as const, message: "is required." }];
    const invalid = await run({ outer: [errorHandler()], handler: async () => Promise.reject(errors.validationFailed(details)) }, event());
    expect(invalid.response.statusCode).toBe(422);
    expect(bodyOf(invalid.response).error).toMatchObject({ code: "validation_failed", param: "custom_fields[0].name", details });
  });

  it("keeps the error's own headers (401 WWW-Authenticate: Bearer)", async () => {
    const { response } = await run({ outer: [errorHandler()], handler: async () => Promise.reject(errors.authenticationRequired()) }, event());
    expect(response.statusCode).toBe(401);
    expect(response.headers["WWW-Authenticate"]).toBe("Bearer");
    expect(bodyOf(response)).toEqual({
      error: { type: "authentication_error", code: "authentication_required", message: expect.any(String) },
    });
  });

  it("renders errors thrown by a before middleware too, and the handler never runs", async () => {
    const failing: PipelineMiddleware = {
      before: () => {
        throw errors.invalidIdempotencyKey();
      },
    };
    const { response, handlerCalls } = await run({ outer: [errorHandler()], inner: [failing] }, event());
    expect(handlerCalls).toBe(0);
    expect(response.statusCode).toBe(400);
    expect(bodyOf(response).error).toMatchObject({ code: "invalid_idempotency_key", param: "Idempotency-Key" });
  });

  it("turns an unknown Error into 500 api_error with no internals in the body, and logs it with the request id", async () => {
    const secret = "connect ECONNREFUSED dynamodb.internal:8000 password=hunter2";
    const { response } = await run(
      {
        outer: [errorHandler()],
        handler: async () => {
          throw new TypeError(secret);
        },
      },
      event(),
    );
    expect(response.statusCode).toBe(500);
    const body = bodyOf(response);
    expect(body).toEqual({ error: { type: "api_error", code: expect.any(String), message: expect.any(String) } });
    const text = String(response.body);
    expect(text).not.toContain("hunter2");
    expect(text).not.toContain("ECONNREFUSED");
    expect(text).not.toContain("TypeError");
    expect(text).not.toMatch(/\bat .*\(|\.ts:\d+|node_modules/);
    expect(text).not.toContain("stack");
    expect(logged()).toContain("req-test-1");
  });

  it("turns exhausted retries into 503 resource_busy with Retry-After, and the log line says why", async () => {
    vi.stubEnv("LOG_LEVEL", "INFO");
    const { response } = await run(
      {
        outer: [requestContext(), errorHandler()],
        state: { route: LIST },
        handler: async () => {
          throw new ContentionError("next customer number", 60);
        },
      },
      event(),
    );
    expect(response.statusCode).toBe(503);
    expect(response.headers["Retry-After"]).toBe("1");
    expect(bodyOf(response)).toEqual({ error: { type: "api_error", code: "resource_busy", message: expect.any(String) } });
    const line = logged()
      .trim()
      .split("\n")
      .map((l: string) => JSON.parse(l))
      .find((l: { message: string }) => l.message === "request");
    expect(line).toMatchObject({ level: "WARN", status: 503, reason: "Retries exhausted: next customer number lost its race 60 times." });
  });

  it("a non-Error throw is also a plain 500", async () => {
    const { response } = await run({ outer: [errorHandler()], handler: async () => Promise.reject("boom: internal detail") }, event());
    expect(response.statusCode).toBe(500);
    expect(bodyOf(response).error.type).toBe("api_error");
    expect(String(response.body)).not.toContain("internal detail");
  });

  it("a 415 from Middy's JSON parser (malformed JSON) becomes 400 invalid_json", async () => {
    const { response, handlerCalls } = await run(
      { outer: [errorHandler()], inner: [httpJsonBodyParser() as unknown as PipelineMiddleware] },
      event({ body: '{"name": "Tools",' }),
    );
    expect(handlerCalls).toBe(0);
    expect(response.statusCode).toBe(400);
    expect(bodyOf(response)).toEqual({ error: { type: "invalid_request_error", code: "invalid_json", message: expect.any(String) } });
  });

  it("a 415 from Middy's JSON parser (no JSON content type) becomes 400 invalid_json", async () => {
    const { response } = await run(
      { outer: [errorHandler()], inner: [httpJsonBodyParser() as unknown as PipelineMiddleware] },
      event({ headers: { "content-type": "text/plain" }, body: '{"name":"Tools"}' }),
    );
    expect(response.statusCode).toBe(400);
    expect(bodyOf(response).error).toMatchObject({ type: "invalid_request_error", code: "invalid_json" });
  });
});

describe("offline: jsonBody", () => {
  const withRoute = (r: RouteDefinition) => ({ outer: [errorHandler()], state: { route: r }, inner: [jsonBody()] });

  it("ignores the body of a route without a body schema (API Gateway forwards a GET's or DELETE's): it reaches nothing", async () => {
    expect(LIST.request.body).toBeUndefined();
    const result = await run(withRoute(LIST), event({ method: "GET", headers: {}, body: "not json at all" }));
    expect(result.response.statusCode).toBe(200);
    expect(result.seenBody).toBeUndefined();
  });

  it("refuses a body over 1 MB with 413 request_too_large before parsing it (base64 bodies by their decoded size)", async () => {
    const big = JSON.stringify({ name: "x".repeat(1024 * 1024) });
    const refused = await run(withRoute(CREATE), event({ body: big }));
    expect(refused.handlerCalls).toBe(0);
    expect(refused.response.statusCode).toBe(413);
    expect(bodyOf(refused.response).error).toMatchObject({ type: "invalid_request_error", code: "request_too_large" });
    const encoded = Buffer.from(JSON.stringify({ name: "x".repeat(900 * 1024) })).toString("base64");
    const accepted = await run(withRoute(CREATE), event({ body: encoded, isBase64Encoded: true }));
    expect(accepted.response.statusCode).not.toBe(413);
  });

  it("does nothing when no route was resolved", async () => {
    const result = await run({ outer: [errorHandler()], inner: [jsonBody()] }, event({ body: "{{{" }));
    expect(result.response.statusCode).toBe(200);
    expect(result.seenBody).toBe("{{{");
  });

  it.each([
    ["an empty string", ""],
    ["no body", undefined],
  ])("reads %s as {}", async (_label, body) => {
    const result = await run(withRoute(CREATE), event({ body }));
    expect(result.response.statusCode).toBe(200);
    expect(result.seenBody).toEqual({});
  });

  it("parses a JSON object", async () => {
    const result = await run(withRoute(CREATE), event({ body: '{"name":"Tools","inventory_type":"quantity"}' }));
    expect(result.seenBody).toEqual({ name: "Tools", inventory_type: "quantity" });
  });

  it("accepts the JSON media type in any case (media types are case-insensitive)", async () => {
    for (const type of ["Application/JSON", "APPLICATION/JSON; charset=UTF-8", "application/vnd.api+JSON"]) {
      const result = await run(withRoute(CREATE), event({ headers: { "content-type": type }, body: '{"name":"Tools"}' }));
      expect(result.response.statusCode, type).toBe(200);
      expect(result.seenBody).toEqual({ name: "Tools" });
    }
  });

  it("accepts a JSON content type with parameters", async () => {
    const result = await run(withRoute(CREATE), event({ headers: { "content-type": "application/json; charset=utf-8" }, body: '{"name":"Tools"}' }));
    expect(result.seenBody).toEqual({ name: "Tools" });
  });

  it("rejects invalid JSON with an error before the handler (400 invalid_json once rendered)", async () => {
    const bare = middy<HttpEvent, HttpResult, Error, Context, PipelineRequest["internal"]>()
      .use([seed({ route: CREATE }), jsonBody()])
      .handler(async () => ({ statusCode: 200, headers: {}, body: "" }));
    await expect(bare(event({ body: "{not json" }), {} as Context)).rejects.toMatchObject({ statusCode: 415 });

    const result = await run(withRoute(CREATE), event({ body: "{not json" }));
    expect(result.handlerCalls).toBe(0);
    expect(result.response.statusCode).toBe(400);
    expect(bodyOf(result.response).error).toMatchObject({ type: "invalid_request_error", code: "invalid_json" });
  });

  it("rejects a body sent without a JSON content type", async () => {
    const result = await run(withRoute(CREATE), event({ headers: {}, body: '{"name":"Tools"}' }));
    expect(result.handlerCalls).toBe(0);
    expect(result.response.statusCode).toBe(400);
    expect(bodyOf(result.response).error.code).toBe("invalid_json");
  });

  it.each([
    ["an array", '[{"name":"Tools"}]'],
    ["null", "null"],
    ["a string", '"Tools"'],
    ["a number", "42"],
    ["a boolean", "true"],
  ])("rejects %s: the body must be a JSON object (400 invalid_json)", async (_label, body) => {
    const result = await run(withRoute(CREATE), event({ body }));
    expect(result.handlerCalls).toBe(0);
    expect(result.response.statusCode).toBe(400);
    expect(bodyOf(result.response)).toEqual({ error: { type: "invalid_request_error", code: "invalid_json", message: expect.any(String) } });
  });
});

describe("offline: requireScopes", () => {
  const scoped = (r: RouteDefinition, scopes: string[] | null) => ({
    outer: [errorHandler()],
    state: { route: r, principal: principal({ scopes: scopes === null ? null : new Set(scopes) }) },
    inner: [requireScopes()],
  });

  it("a key without the route's scope is 403 insufficient_scope naming the scope", async () => {
    const result = await run(scoped(CREATE, ["items:read"]), event());
    expect(result.handlerCalls).toBe(0);
    expect(result.response.statusCode).toBe(403);
    expect(bodyOf(result.response)).toEqual({
      error: { type: "invalid_request_error", code: "insufficient_scope", message: expect.stringContaining("items:write"), param: "items:write" },
    });
  });

  it("a key with no scopes at all is refused even a read", async () => {
    const result = await run(scoped(LIST, []), event({ method: "GET" }));
    expect(result.response.statusCode).toBe(403);
    expect(bodyOf(result.response).error.param).toBe("items:read");
  });

  it("a key holding the scope passes", async () => {
    const result = await run(scoped(CREATE, ["items:read", "items:write"]), event());
    expect(result.handlerCalls).toBe(1);
    expect(result.response.statusCode).toBe(200);
  });

  it("an all-actions key (scopes null) passes", async () => {
    const result = await run(scoped(CREATE, null), event());
    expect(result.response.statusCode).toBe(200);
  });

  it("a public route with no principal passes", async () => {
    expect(OPENAPI.scopes).toEqual([]);
    const result = await run({ outer: [errorHandler()], state: { route: OPENAPI }, inner: [requireScopes()] }, event({ method: "GET" }));
    expect(result.response.statusCode).toBe(200);
  });

  it("the scope is checked by the route, not the user's permissions", async () => {
    const result = await run(
      { outer: [errorHandler()], state: { route: CREATE, principal: principal({ role: "owner", scopes: new Set(["items:read"]) }) }, inner: [requireScopes()] },
      event(),
    );
    expect(result.response.statusCode).toBe(403);
  });
});

describe("offline: rateLimit", () => {
  const counted = (count: number) => ({ route: LIST, principal: principal(), rateCount: { window: 1, count } });

  it("a count over the limit is 429 rate_limited with Retry-After in whole seconds (at least 1)", async () => {
    const result = await run({ outer: [errorHandler()], state: counted(4), inner: [rateLimit({ limit: 3 })] }, event({ method: "GET" }));
    expect(result.handlerCalls).toBe(0);
    expect(result.response.statusCode).toBe(429);
    expect(bodyOf(result.response)).toEqual({ error: { type: "rate_limit_error", code: "rate_limited", message: expect.any(String) } });
    const retryAfter = result.response.headers["Retry-After"];
    expect(retryAfter).toMatch(/^\d+$/);
    expect(Number(retryAfter)).toBeGreaterThanOrEqual(1);
    expect(Number(retryAfter)).toBeLessThanOrEqual(60);
    expect(result.internal?.rateLimit).toMatchObject({ limit: 3, remaining: 0, exceeded: true });
  });

  it("a count at the limit passes with nothing remaining", async () => {
    const result = await run({ outer: [errorHandler()], state: counted(3), inner: [rateLimit({ limit: 3 })] }, event({ method: "GET" }));
    expect(result.response.statusCode).toBe(200);
    expect(result.internal?.rateLimit).toMatchObject({ limit: 3, remaining: 0, exceeded: false });
  });

  it("a count under the limit passes and reports what remains", async () => {
    const result = await run({ outer: [errorHandler()], state: counted(1), inner: [rateLimit({ limit: 3 })] }, event({ method: "GET" }));
    expect(result.response.statusCode).toBe(200);
    expect(result.internal?.rateLimit).toMatchObject({ limit: 3, remaining: 2, exceeded: false });
    expect(result.internal?.rateLimit?.reset).toBeGreaterThanOrEqual(1);
  });

  it("an unattributed request (no count) is not limited", async () => {
    const result = await run({ outer: [errorHandler()], state: { route: OPENAPI }, inner: [rateLimit({ limit: 1 })] }, event({ method: "GET" }));
    expect(result.response.statusCode).toBe(200);
    expect(result.internal?.rateLimit).toMatchObject({ limit: 1, remaining: 1, exceeded: false });
  });

  it("reads the limit from RATE_LIMIT_PER_MINUTE when none is given", async () => {
    vi.stubEnv("RATE_LIMIT_PER_MINUTE", "5");
    const over = await run({ outer: [errorHandler()], state: counted(6), inner: [rateLimit()] }, event({ method: "GET" }));
    expect(over.response.statusCode).toBe(429);
    const at = await run({ outer: [errorHandler()], state: counted(5), inner: [rateLimit()] }, event({ method: "GET" }));
    expect(at.response.statusCode).toBe(200);
  });
});

describe("offline: requestContext", () => {
  it("adds the request id and RateLimit-* headers to every response, errors included", async () => {
    const result = await run(
      { outer: [requestContext({ logRequests: false }), errorHandler()], state: counted429(), inner: [rateLimit({ limit: 2 })] },
      event({ method: "GET" }),
    );
    expect(result.response.statusCode).toBe(429);
    expect(result.response.headers["X-Request-Id"]).toBe("req-test-1");
    expect(result.response.headers["Retry-After"]).toMatch(/^\d+$/);
    expect(result.response.headers["RateLimit-Limit"]).toBe("2");
    expect(result.response.headers["RateLimit-Remaining"]).toBe("0");
    const reset = Number(result.response.headers["RateLimit-Reset"]);
    expect(Number.isInteger(reset)).toBe(true);
    expect(reset).toBeGreaterThanOrEqual(1);
    expect(reset).toBeLessThanOrEqual(60); // seconds until reset, never an epoch
  });

  it("writes one structured log line per request", async () => {
    vi.stubEnv("LOG_LEVEL", "INFO");
    await run({ outer: [requestContext(), errorHandler()], state: { route: LIST } }, event({ method: "GET" }));
    const lines = logged()
      .trim()
      .split("\n")
      .filter(Boolean)
      .map((line: string) => JSON.parse(line));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: "INFO", message: "request", requestId: "req-test-1", route: "listItemCategories", status: 200 });
    expect(typeof lines[0].latencyMs).toBe("number");
  });

  function counted429() {
    return { route: LIST, principal: principal(), rateCount: { window: 1, count: 3 } };
  }
});

describe("offline: validateRequest", () => {
  const validating = (r: RouteDefinition) => ({ outer: [errorHandler()], state: { route: r }, inner: [jsonBody(), validateRequest()] });

  it("a malformed path id is 404 resource_missing", async () => {
    const result = await run(validating(GET), event({ method: "GET", pathParameters: { category_id: "not-a-uuid" } }));
    expect(result.handlerCalls).toBe(0);
    expect(result.response.statusCode).toBe(404);
    expect(bodyOf(result.response).error).toMatchObject({ code: "resource_missing", message: "No such item category: not-a-uuid." });
  });

  it("names the record a malformed path parameter stands for", () => {
    expect(recordNamedBy("/api/v3/sales-orders/{sales_order_id}/fulfillments/{fulfillment_id}/ship", "sales_order_id")).toBe("sales order");
    expect(recordNamedBy("/api/v3/sales-orders/{sales_order_id}/fulfillments/{fulfillment_id}/ship", "fulfillment_id")).toBe("fulfillment");
    expect(recordNamedBy("/api/v3/webhook-endpoints/{id}", "id")).toBe("webhook endpoint");
    expect(recordNamedBy("/api/v3/tasks/reminders/{id}/{operation}", "id")).toBe("reminder");
    expect(recordNamedBy("/api/v3/customers/{id}", "id")).toBe("customer");
  });

  it("a bad query value is 422 invalid_query_parameter naming the parameter", async () => {
    const result = await run(validating(LIST), event({ method: "GET", queryStringParameters: { page: "abc" } }));
    expect(result.response.statusCode).toBe(422);
    expect(bodyOf(result.response).error).toMatchObject({ code: "invalid_query_parameter", param: "page" });
  });

  it("a bad body is 422 validation_failed with one detail per field", async () => {
    const result = await run(validating(CREATE), event({ body: JSON.stringify({ name: "x".repeat(256), custom_fields: [{}] }) }));
    expect(result.response.statusCode).toBe(422);
    const error = bodyOf(result.response).error;
    expect(error.code).toBe("validation_failed");
    expect(error.details.map((d: { param: string }) => d.param).sort()).toEqual(["custom_fields[0].name", "inventory_type", "name"]);
  });

  it("valid inputs reach request.internal.input with defaults applied", async () => {
    const result = await run(validating(CREATE), event({ body: JSON.stringify({ name: " Tools ", inventory_type: "unique" }) }));
    expect(result.response.statusCode).toBe(200);
    expect(result.internal?.input?.body).toEqual({ name: "Tools", inventory_type: "unique", custom_fields: [] });
  });
});
