import { describe, expect, it } from "vitest";
import { useApiServer, type TestResponse } from "../support/api.js";
import { idempotencyKey, newAccount, newKey } from "../support/fixtures.js";

/**
 * The request pipeline shared by every endpoint (architecture sections 3 and 4; spec part 1,
 * sections 7 and 8): route resolution, JSON body parsing, validation details, common headers,
 * the per-key rate limit and the public OpenAPI document. Through HTTP against DynamoDB Local.
 */
const api = useApiServer();

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The rate window is a fixed minute (the handlers run in this process, on this clock): when
 * fewer than 5 s of it are left, wait for the next one so a short sequence never straddles it.
 */
async function stayInOneWindow(): Promise<void> {
  const secondsLeft = 60 - ((Date.now() / 1000) % 60);
  if (secondsLeft < 5) await sleep(secondsLeft * 1000 + 250);
}

function expectError(response: TestResponse, status: number, code: string, type = "invalid_request_error"): void {
  expect(response.status, response.text).toBe(status);
  expect(response.body?.error, response.text).toMatchObject({ type, code, message: expect.any(String) });
}

/** Architecture section 4: the headers every response carries. */
function expectCommonHeaders(response: TestResponse): void {
  expect(response.headers.get("content-type") ?? "").toMatch(/^application\/json\b/);
  expect(response.headers.get("x-request-id") ?? "").not.toBe("");
  for (const name of ["ratelimit-limit", "ratelimit-remaining", "ratelimit-reset"]) {
    expect(response.headers.get(name), `${name} on a ${response.status}`).toMatch(/^\d+$/);
  }
  const limit = Number(response.headers.get("ratelimit-limit"));
  const remaining = Number(response.headers.get("ratelimit-remaining"));
  const reset = Number(response.headers.get("ratelimit-reset"));
  expect(limit).toBeGreaterThan(0);
  expect(remaining).toBeGreaterThanOrEqual(0);
  expect(remaining).toBeLessThanOrEqual(limit);
  // Seconds until the window resets, never an epoch.
  expect(reset).toBeGreaterThanOrEqual(1);
  expect(reset).toBeLessThanOrEqual(60);
}

async function locationCount(ownerKey: string): Promise<number> {
  const list = await api().withKey(ownerKey).get("/locations");
  expect(list.status).toBe(200);
  return list.body.pagination.total_records;
}

describe("routing (architecture 4: route_not_found)", () => {
  it("an unknown path is 404 route_not_found without any credential", async () => {
    const response = await api().get("/nope");
    expectError(response, 404, "route_not_found");
    expectCommonHeaders(response);
  });

  it("a known path with a method it does not have is 404 route_not_found with Allow, even with a bad credential", async () => {
    for (const response of [
      await api().request("DELETE", "/locations"),
      await api().withKey("not-a-key").request("DELETE", "/locations"),
      await api().request("PUT", "/locations"),
    ]) {
      expectError(response, 404, "route_not_found");
      expect(response.headers.get("allow")).toBe("GET, POST");
      expectCommonHeaders(response);
    }
  });

  it("under /tasks, whose every response is no-store, a wrong method and an unknown path (both 404) are no-store too", async () => {
    const wrongMethod = await api().request("DELETE", "/tasks/00000000-0000-4000-8000-000000000001");
    expectError(wrongMethod, 404, "route_not_found");
    const unknown = await api().request("GET", "/tasks/00000000-0000-4000-8000-000000000001/history");
    expectError(unknown, 404, "route_not_found");
    for (const response of [wrongMethod, unknown]) expect(response.headers.get("cache-control")).toBe("no-store");
    expect((await api().request("DELETE", "/locations")).headers.get("cache-control")).toBeNull();
  });

  it("a path segment outside its fixed set names no route (404 route_not_found); a malformed id names no record (404 resource_missing)", async () => {
    const client = api().withKey((await newAccount()).ownerKey);
    const reminder = "00000000-0000-4000-8000-000000000001";
    for (const operation of ["foo", "READ", "read-all"]) {
      const response = await client.post(`/tasks/reminders/${reminder}/${operation}`, {}, { idempotencyKey: idempotencyKey() });
      expectError(response, 404, "route_not_found");
      expect(response.headers.get("cache-control")).toBe("no-store");
    }
    expectError(await client.post("/tasks/reminders/not-a-uuid/read", {}, { idempotencyKey: idempotencyKey() }), 404, "resource_missing");
    expectError(await client.post(`/tasks/reminders/${reminder}/read`, {}, { idempotencyKey: idempotencyKey() }), 404, "resource_missing");
  });
});

describe("JSON bodies (architecture 1 gotchas, 4: invalid_json)", () => {
  it("a malformed JSON body is 400 invalid_json, stores nothing, and the same Idempotency-Key then works", async () => {
    const account = await newAccount();
    const client = api().withKey(account.ownerKey);
    const key = idempotencyKey();
    const bad = await client.post("/locations", undefined, { raw: '{"name": "Broken", "short_name": ', idempotencyKey: key });
    expectError(bad, 400, "invalid_json");
    expectCommonHeaders(bad);
    expect(await locationCount(account.ownerKey)).toBe(0);

    // Requests rejected before they run store nothing (architecture 4, idempotency).
    const good = await client.post("/locations", { name: "Fixed", short_name: "F" }, { idempotencyKey: key });
    expect(good.status, good.text).toBe(201);
    expect(good.headers.get("idempotent-replayed")).toBeNull();
  });

  it("a JSON array body is 400 invalid_json", async () => {
    const account = await newAccount();
    const response = await api()
      .withKey(account.ownerKey)
      .post("/locations", [{ name: "Array", short_name: "A" }], { idempotencyKey: idempotencyKey() });
    expectError(response, 400, "invalid_json");
    expect(await locationCount(account.ownerKey)).toBe(0);
  });

  it("JSON scalars (string, number, null) as the body are 400 invalid_json", async () => {
    const account = await newAccount();
    const client = api().withKey(account.ownerKey);
    for (const raw of ['"text"', "42", "null"]) {
      expectError(await client.post("/item-categories", undefined, { raw }), 400, "invalid_json");
    }
  });

  it("a body sent with a content type that is not JSON (text/plain, application/jsonx) is 400 invalid_json saying to send JSON (never 415)", async () => {
    const account = await newAccount();
    for (const type of ["text/plain", "application/jsonx"]) {
      const response = await api()
        .withKey(account.ownerKey)
        .post("/locations", undefined, {
          raw: JSON.stringify({ name: "Plain", short_name: "P" }),
          headers: { "content-type": type },
          idempotencyKey: idempotencyKey(),
        });
      expectError(response, 400, "invalid_json");
      expect(response.body.error.message, type).toBe("Send the request body as JSON with Content-Type: application/json.");
    }
    // A JSON media type whose body is not JSON: the body is the problem.
    const broken = await api().withKey(account.ownerKey).post("/locations", undefined, { raw: "{nope", idempotencyKey: idempotencyKey() });
    expectError(broken, 400, "invalid_json");
    expect(broken.body.error.message).toBe("The request body is not valid JSON.");
    expect(await locationCount(account.ownerKey)).toBe(0);
  });

  it("a JSON content type with parameters (charset) is accepted", async () => {
    const account = await newAccount();
    const response = await api()
      .withKey(account.ownerKey)
      .post("/locations", undefined, {
        raw: JSON.stringify({ name: "Charset", short_name: "C" }),
        headers: { "content-type": "application/json; charset=utf-8" },
        idempotencyKey: idempotencyKey(),
      });
    expect(response.status, response.text).toBe(201);
  });
});

describe("validation errors (spec 7; architecture 4: details [{param, code, message}])", () => {
  it("an empty body on location create is 422 validation_failed with a required detail for name and short_name", async () => {
    const account = await newAccount();
    const response = await api().withKey(account.ownerKey).post("/locations", undefined, { idempotencyKey: idempotencyKey() });
    expectError(response, 422, "validation_failed");
    expectCommonHeaders(response);
    const details = response.body.error.details as { param: string; code: string; message: string }[];
    expect(details).toEqual(
      expect.arrayContaining([
        { param: "name", code: "required", message: expect.any(String) },
        { param: "short_name", code: "required", message: expect.any(String) },
      ]),
    );
    expect(response.body.error.param).toBe(details[0]!.param);
    expect(await locationCount(account.ownerKey)).toBe(0);
  });

  it("details name nested fields with JSON paths such as custom_fields[1].name", async () => {
    const account = await newAccount();
    const client = api().withKey(account.ownerKey);
    const response = await client.post("/item-categories", {
      name: "Gadgets",
      inventory_type: "quantity",
      custom_fields: [{ name: "ok" }, { name: "" }],
    });
    expectError(response, 422, "validation_failed");
    expect(response.body.error.details).toEqual([{ param: "custom_fields[1].name", code: "blank", message: expect.any(String) }]);
    expect(response.body.error.param).toBe("custom_fields[1].name");
    for (const detail of response.body.error.details) expect(Object.keys(detail).sort()).toEqual(["code", "message", "param"]);
    const list = await client.get("/item-categories");
    expect(list.body.data).toEqual([]);
  });

  it("every offending field gets its own detail with its own code", async () => {
    const account = await newAccount();
    const response = await api()
      .withKey(account.ownerKey)
      .post("/locations", { name: "x".repeat(101), short_name: "   ", email: "not-an-email" }, { idempotencyKey: idempotencyKey() });
    expectError(response, 422, "validation_failed");
    expect(response.body.error.details).toEqual(
      expect.arrayContaining([
        { param: "name", code: "too_long", message: expect.any(String) },
        { param: "short_name", code: "blank", message: expect.any(String) },
        { param: "email", code: "invalid_email", message: expect.any(String) },
      ]),
    );
  });

  it("an unknown body field is 422 with an unknown_field detail naming it", async () => {
    const account = await newAccount();
    const response = await api()
      .withKey(account.ownerKey)
      .post("/locations", { name: "Known", short_name: "K", colour: "red" }, { idempotencyKey: idempotencyKey() });
    expectError(response, 422, "validation_failed");
    expect(response.body.error.details).toContainEqual({ param: "colour", code: "unknown_field", message: expect.any(String) });
    expect(await locationCount(account.ownerKey)).toBe(0);
  });

  it("a wrong type and an invalid enum value get invalid_type and invalid_value", async () => {
    const account = await newAccount();
    const response = await api().withKey(account.ownerKey).post("/item-categories", { name: 5, inventory_type: "bulk" });
    expectError(response, 422, "validation_failed");
    expect(response.body.error.details).toEqual(
      expect.arrayContaining([
        { param: "name", code: "invalid_type", message: expect.any(String) },
        { param: "inventory_type", code: "invalid_value", message: expect.any(String) },
      ]),
    );
  });

  it("a non-integer page or limit is 422 invalid_query_parameter naming the parameter", async () => {
    const account = await newAccount();
    const client = api().withKey(account.ownerKey);
    const limit = await client.get("/locations", { limit: "ten" });
    expectError(limit, 422, "invalid_query_parameter");
    expect(limit.body.error.param).toBe("limit");
    const page = await client.get("/locations", { page: "1.5" });
    expectError(page, 422, "invalid_query_parameter");
    expect(page.body.error.param).toBe("page");
  });
});

describe("common response headers (architecture 4)", () => {
  it("200, 401, 403, 404 and 422 responses all carry RateLimit-*, X-Request-Id and a JSON content type", async () => {
    const account = await newAccount();
    const readOnly = await newKey(account.ownerUserId, { scopes: ["items:read"] });
    const client = api().withKey(account.ownerKey);
    const responses = [
      await client.get("/locations"),
      await api().get("/locations"),
      await api().withKey(readOnly.key).post("/locations", { name: "N", short_name: "N" }, { idempotencyKey: idempotencyKey() }),
      await client.get("/locations/00000000-0000-4000-8000-000000000000/zones"),
      await client.post("/locations", {}, { idempotencyKey: idempotencyKey() }),
    ];
    expect(responses.map((r) => r.status)).toEqual([200, 401, 403, 404, 422]);
    for (const response of responses) expectCommonHeaders(response);
    const ids = responses.map((r) => r.headers.get("x-request-id"));
    expect(new Set(ids).size).toBe(ids.length);
  });

  it("an authenticated request counts against its key: RateLimit-Remaining decreases by one per request", async () => {
    const account = await newAccount();
    const fresh = await newKey(account.ownerUserId);
    const client = api().withKey(fresh.key);
    await stayInOneWindow();
    const first = await client.get("/locations");
    const second = await client.get("/locations");
    const limit = Number(first.headers.get("ratelimit-limit"));
    expect(process.env.RATE_LIMIT_PER_MINUTE).toBe(String(limit));
    expect(Number(first.headers.get("ratelimit-remaining"))).toBe(limit - 1);
    expect(Number(second.headers.get("ratelimit-remaining"))).toBe(limit - 2);
  });
});

describe("rate limit (spec 8; architecture 3.5 and 4: per API key, 429 rate_limited)", () => {
  it("the request over the per-key limit is 429 rate_limited with Retry-After, runs nothing, and another key of the same user is not limited", async () => {
    const account = await newAccount();
    const previous = process.env.RATE_LIMIT_PER_MINUTE;
    process.env.RATE_LIMIT_PER_MINUTE = "3";
    try {
      await stayInOneWindow();

      const limited = await newKey(account.ownerUserId);
      const client = api().withKey(limited.key);
      const ok = [await client.get("/locations"), await client.get("/locations"), await client.get("/locations")];
      expect(ok.map((r) => r.status)).toEqual([200, 200, 200]);
      expect(ok.map((r) => r.headers.get("ratelimit-limit"))).toEqual(["3", "3", "3"]);
      expect(ok.map((r) => r.headers.get("ratelimit-remaining"))).toEqual(["2", "1", "0"]);
      for (const response of ok) expectCommonHeaders(response);

      const over = await client.post("/locations", { name: "Over the limit", short_name: "OVER" }, { idempotencyKey: idempotencyKey() });
      expect(over.status, over.text).toBe(429);
      expect(over.body).toEqual({ error: { type: "rate_limit_error", code: "rate_limited", message: expect.any(String) } });
      const retryAfter = over.headers.get("retry-after") ?? "";
      expect(retryAfter).toMatch(/^\d+$/);
      expect(Number(retryAfter)).toBeGreaterThanOrEqual(1);
      expect(Number(retryAfter)).toBeLessThanOrEqual(60);
      expectCommonHeaders(over);
      expect(over.headers.get("ratelimit-remaining")).toBe("0");
      expect((await client.get("/locations")).status).toBe(429);

      // The limit is per API key: a second key of the same user has its own quota.
      const other = await newKey(account.ownerUserId);
      const otherResponse = await api().withKey(other.key).get("/locations");
      expect(otherResponse.status).toBe(200);
      expect(otherResponse.headers.get("ratelimit-remaining")).toBe("2");
      // The rejected create ran nothing.
      expect(otherResponse.body.data).toEqual([]);
    } finally {
      if (previous === undefined) delete process.env.RATE_LIMIT_PER_MINUTE;
      else process.env.RATE_LIMIT_PER_MINUTE = previous;
    }
  });
});

describe("OpenAPI document (architecture intro)", () => {
  it("GET /api/v3/openapi.json needs no credential and is an OpenAPI 3.1.0 document", async () => {
    const response = await api().get("/openapi.json");
    expect(response.status, response.text).toBe(200);
    expect(response.headers.get("content-type") ?? "").toMatch(/^application\/json\b/);
    expect(response.body.openapi).toBe("3.1.0");
    expect(Object.keys(response.body.paths ?? {}).some((path) => path.endsWith("/locations"))).toBe(true);
  });
});
