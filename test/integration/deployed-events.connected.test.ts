import { randomUUID } from "node:crypto";
import type { Context } from "aws-lambda";
import { beforeAll, describe, expect, it } from "vitest";
import { handler as estimatesHandler } from "../../functions/estimates/handler.js";
import { handler as tasksHandler } from "../../functions/tasks/handler.js";
import type { HttpEvent, HttpResult } from "../../lib/http/types.js";
import { useApiServer } from "../support/api.js";
import { newAccount, type TestAccount } from "../support/fixtures.js";

/**
 * What API Gateway sends that the local server does not (probe: the deployed request path):
 * a body on a route that takes none (GET, DELETE), a path with a trailing slash routed to the
 * route without it, a receipt time from a saved event. The handler, called with the event API
 * Gateway would build, answers as the local stack does.
 */
const api = useApiServer();
let account: TestAccount;
beforeAll(async () => {
  account = await newAccount();
});

const context = { awsRequestId: "deployed-events", getRemainingTimeInMillis: () => 30_000 } as unknown as Context;

/** A payload 2.0 event as API Gateway builds it for `routeKey`, at `path`. */
function event(
  routeKey: string,
  path: string,
  options: { body?: string; base64?: boolean; headers?: Record<string, string>; pathParameters?: Record<string, string>; timeEpoch?: number } = {},
): HttpEvent {
  const [method] = routeKey.split(" ");
  return {
    version: "2.0",
    routeKey,
    rawPath: path,
    rawQueryString: "",
    headers: { authorization: `Bearer ${account.ownerKey}`, ...options.headers },
    pathParameters: options.pathParameters,
    body: options.body,
    isBase64Encoded: options.base64 ?? false,
    requestContext: {
      accountId: "000000000000",
      apiId: "deployed",
      domainName: "api.example.com",
      domainPrefix: "api",
      http: { method: method!, path, protocol: "HTTP/1.1", sourceIp: "203.0.113.1", userAgent: "test" },
      requestId: randomUUID(),
      routeKey,
      stage: "$default",
      time: new Date().toUTCString(),
      timeEpoch: options.timeEpoch ?? Date.now(),
    },
  } as HttpEvent;
}

const invoke = async (e: HttpEvent) => (await estimatesHandler(e, context)) as HttpResult;

async function newEstimate(): Promise<string> {
  const client = api().withKey(account.ownerKey);
  const customer = (await client.post("/customers", { name: `Deployed ${randomUUID().slice(0, 6)}` })).body;
  const estimate = await client.post("/estimates", { customer_id: customer.id, lines: [{ name: "Service", unit_price: "5" }] });
  expect(estimate.status, estimate.text).toBe(201);
  return estimate.body.id;
}

describe("connected: the handlers with API Gateway's events", () => {
  it("a DELETE ignores a body API Gateway forwards: an idempotent retry without it (or with another) is the replay", async () => {
    const id = await newEstimate();
    const path = `/api/v3/estimates/${id}`;
    const key = `deployed-${randomUUID()}`;
    const at = (options: Parameters<typeof event>[2]) =>
      event("DELETE /api/v3/estimates/{estimate_id}", path, {
        ...options,
        headers: { "idempotency-key": key, ...options?.headers },
        pathParameters: { estimate_id: id },
      });
    const first = await invoke(at({ body: "{}", headers: { "content-type": "application/json" } }));
    expect(first.statusCode, first.body).toBe(200);
    for (const retry of [
      at({}),
      at({ body: Buffer.from("{}").toString("base64"), base64: true }),
      at({ body: '{"x":1}', headers: { "content-type": "application/json" } }),
    ]) {
      const replay = await invoke(retry);
      expect(replay.statusCode, replay.body).toBe(200);
      expect(replay.headers["Idempotent-Replayed"] ?? replay.headers["idempotent-replayed"]).toBe("true");
      expect(JSON.parse(replay.body!)).toEqual({ id, object: "estimate", deleted: true });
    }
  });

  it("a path with a trailing slash that API Gateway routes to the route without it is 404 route_not_found, as locally", async () => {
    const id = await newEstimate();
    const cases: [string, string, Record<string, string> | undefined][] = [
      ["GET /api/v3/estimates", "/api/v3/estimates/", undefined],
      ["GET /api/v3/estimates/{estimate_id}", `/api/v3/estimates/${id}/`, { estimate_id: id }],
      ["POST /api/v3/estimates/preview", "/api/v3/estimates/preview/", undefined],
    ];
    for (const [routeKey, path, pathParameters] of cases) {
      const answer = await invoke(
        event(routeKey, path, { pathParameters, body: routeKey.startsWith("POST") ? "{}" : undefined, headers: { "content-type": "application/json" } }),
      );
      expect(answer.statusCode, `${routeKey} at ${path}: ${answer.body}`).toBe(404);
      expect(JSON.parse(answer.body!).error.code).toBe("route_not_found");
      const local = await api()
        .withKey(account.ownerKey)
        .request(routeKey.split(" ")[0]!, path.replace("/api/v3", ""), routeKey.startsWith("POST") ? {} : undefined);
      expect(local.status).toBe(404);
      expect(local.body.error.code).toBe("route_not_found");
    }
    const plain = await invoke(event("GET /api/v3/estimates/{estimate_id}", `/api/v3/estimates/${id}`, { pathParameters: { estimate_id: id } }));
    expect(plain.statusCode, plain.body).toBe(200);
    // Under a group whose every answer is no-store (tasks), that 404 is too, as the local one.
    const tasks = (await tasksHandler(event("GET /api/v3/tasks", "/api/v3/tasks/"), context)) as HttpResult;
    expect(tasks.statusCode, tasks.body).toBe(404);
    expect(JSON.parse(tasks.body!).error.code).toBe("route_not_found");
    expect(tasks.headers["Cache-Control"]).toBe("no-store");
    const local = await api().withKey(account.ownerKey).get("/tasks/");
    expect(local.status).toBe(404);
    expect(local.headers.get("cache-control")).toBe("no-store");
  });
});
