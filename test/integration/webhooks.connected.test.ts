import { randomUUID } from "node:crypto";
import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import { localWebhookQueue } from "../../lib/domain/webhooks/queue.js";
import { useApiServer, type ApiClient, type TestResponse } from "../support/api.js";
import { expectError, expectValidation } from "../support/assertions.js";
import { idempotencyKey, newAccount, newKey, newUser, updateUser, type TestAccount } from "../support/fixtures.js";
import { waitFor } from "../support/local-stack.js";
import { scaled } from "../support/timeouts.js";
import { useWebhookStack } from "../support/webhook-receiver.js";

/**
 * Webhook endpoints through HTTP against DynamoDB Local (architecture section 9): the endpoints
 * API (create, read, list, update, delete, the limit of 10, URL rules, scopes and the
 * `GET /sync` rule for resources, tenant isolation, idempotency), secret rotation, test
 * messages and the delivery timeout. Delivery of the change feed is in
 * webhooks-delivery.connected.test.ts. Every test uses its own account and its own inbox of
 * the one receiver (a real HTTP server verifying each message with `standardwebhooks`).
 */
const api = useApiServer();
const webhooks = useWebhookStack("0.2,0.2,0.2"); // 4 attempts, 0.2 s apart

const ALL_RESOURCES = ["estimate", "invoice", "item", "purchase_order", "sales_order"];
const ENDPOINT_KEYS = ["created_at", "description", "disabled_reason", "id", "object", "resources", "status", "updated_at", "url", "user_id"];
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
/** `whsec_` + base64 of 32 bytes. */
const SECRET = /^whsec_[A-Za-z0-9+/]{43}=$/;
const MESSAGE_ID = /^msg_[A-Za-z0-9_-]+$/;

async function ownerOf(): Promise<{ account: TestAccount; owner: ApiClient }> {
  const account = await newAccount();
  return { account, owner: api().withKey(account.ownerKey) };
}

async function createEndpoint(client: ApiClient, body: Record<string, unknown>): Promise<Record<string, any>> {
  const created = await client.post("/webhook-endpoints", body);
  expect(created.status, created.text).toBe(201);
  return created.body;
}

/** The endpoint's delivery attempts (newest first) as the API lists them. */
async function deliveriesOf(client: ApiClient, endpointId: string): Promise<TestResponse> {
  const listed = await client.get(`/webhook-endpoints/${endpointId}/deliveries`);
  expect(listed.status, listed.text).toBe(200);
  return listed;
}

/** Waits until the endpoint lists `count` attempts; returns them, newest first. */
async function waitForDeliveries(client: ApiClient, endpointId: string, count: number, timeoutMs = scaled(10_000)): Promise<any[]> {
  let data: any[] = [];
  await waitFor(
    `${count} delivery attempt(s) of endpoint ${endpointId}`,
    async () => {
      data = (await deliveriesOf(client, endpointId)).body.data;
      return data.length >= count;
    },
    timeoutMs,
  );
  return data;
}

/** Waits until the in-process webhook queue has no attempt running and no retry waiting. */
async function queueIdle(): Promise<void> {
  await waitFor("the local webhook queue to be idle", () => {
    const queue = localWebhookQueue();
    return queue.inFlight === 0 && queue.waiting === 0;
  });
}

/** An endpoint as get/list/patch show it: exactly the fields, never the secret. */
function expectNoSecret(response: TestResponse, secret: string): void {
  expect(response.text).not.toContain(secret);
  expect(response.text).not.toContain("whsec_");
  expect(response.text).not.toContain('"secret"');
}

describe("webhook endpoints: create, read, list", () => {
  it("create is 201 with exactly the endpoint's fields and a whsec_ secret; get and list show it without the secret", async () => {
    const { account, owner } = await ownerOf();
    const before = Date.now();
    const created = await owner.post("/webhook-endpoints", {
      url: "https://example.com/hooks/inventory",
      resources: ["item", "invoice"],
      description: "Stock mirror",
    });
    expect(created.status, created.text).toBe(201);
    expect(Object.keys(created.body).sort()).toEqual([...ENDPOINT_KEYS, "secret"].sort());
    expect(created.body).toEqual({
      id: expect.stringMatching(UUID),
      object: "webhook_endpoint",
      url: "https://example.com/hooks/inventory",
      description: "Stock mirror",
      resources: ["invoice", "item"],
      status: "enabled",
      disabled_reason: null,
      user_id: account.ownerUserId,
      created_at: expect.stringMatching(ISO),
      updated_at: created.body.created_at,
      secret: expect.stringMatching(SECRET),
    });
    expect(Buffer.from(created.body.secret.slice("whsec_".length), "base64")).toHaveLength(32);
    expect(Date.parse(created.body.created_at)).toBeGreaterThanOrEqual(before - 1000);
    const { secret, ...shown } = created.body;

    const got = await owner.get(`/webhook-endpoints/${created.body.id}`);
    expect(got.status, got.text).toBe(200);
    expect(got.body).toEqual(shown);
    expectNoSecret(got, secret);

    const listed = await owner.get("/webhook-endpoints");
    expect(listed.status, listed.text).toBe(200);
    expect(listed.body).toMatchObject({ object: "list", has_more: false, pagination: { total_records: 1 } });
    expect(listed.body.data).toEqual([shown]);
    expectNoSecret(listed, secret);

    // Another endpoint gets another secret; description omitted is null.
    const other = await createEndpoint(owner, { url: "https://example.com/other" });
    expect(other.secret).not.toBe(secret);
    expect(other.description).toBeNull();
  });

  it("list is newest first, and pages", async () => {
    const { owner } = await ownerOf();
    const made: Record<string, any>[] = [];
    for (let i = 0; i < 3; i++) made.push(await createEndpoint(owner, { url: `https://example.com/hooks/${i}`, resources: ["item"] }));
    const listed = await owner.get("/webhook-endpoints");
    expect(listed.status, listed.text).toBe(200);
    expect(listed.body.data.map((e: any) => e.id)).toEqual(made.map((e) => e.id).reverse());
    expect(listed.body.pagination.total_records).toBe(3);
    for (const endpoint of made) expectNoSecret(listed, endpoint.secret);

    const second = await owner.get("/webhook-endpoints", { limit: 2, page: 2 });
    expect(second.status, second.text).toBe(200);
    expect(second.body.data.map((e: any) => e.id)).toEqual([made[0]!.id]);
    expect(second.body.pagination).toMatchObject({ page: 2, per_page: 2, total_pages: 2, total_records: 3 });
  });

  it("resources omitted: every resource the key may sync (owner: all five, sorted; staff with inventory.list: item)", async () => {
    const { account, owner } = await ownerOf();
    expect((await createEndpoint(owner, { url: "https://example.com/all" })).resources).toEqual(ALL_RESOURCES);
    // Duplicates and order do not matter.
    expect((await createEndpoint(owner, { url: "https://example.com/dup", resources: ["sales_order", "item", "item", "estimate"] })).resources).toEqual([
      "estimate",
      "item",
      "sales_order",
    ]);
    const staff = await newUser(account, { permissions: ["inventory.list"] });
    const staffClient = api().withKey(staff.key);
    const mine = await createEndpoint(staffClient, { url: "https://example.com/staff" });
    expect(mine.resources).toEqual(["item"]);
    expect(mine.user_id).toBe(staff.userId);
    // A key whose scopes allow only items:read (and webhooks:write) of the owner: item alone.
    const narrow = await newKey(account.ownerUserId, { scopes: ["webhooks:write", "items:read"] });
    expect((await createEndpoint(api().withKey(narrow.key), { url: "https://example.com/narrow" })).resources).toEqual(["item"]);
  });
});

describe("webhook endpoints: update and delete", () => {
  it("PATCH changes url, description, resources and status (disabled: manual; enabled: null), moves updated_at, never shows the secret", async () => {
    const { owner } = await ownerOf();
    const created = await createEndpoint(owner, { url: "https://example.com/a", resources: ["item"], description: "first" });
    const path = `/webhook-endpoints/${created.id}`;

    const changed = await owner.patch(path, { url: "https://example.com/b", description: "second", resources: ["invoice", "estimate"] });
    expect(changed.status, changed.text).toBe(200);
    expect(Object.keys(changed.body).sort()).toEqual(ENDPOINT_KEYS);
    expect(changed.body).toMatchObject({
      id: created.id,
      url: "https://example.com/b",
      description: "second",
      resources: ["estimate", "invoice"],
      status: "enabled",
      disabled_reason: null,
      user_id: created.user_id,
      created_at: created.created_at,
    });
    expect(changed.body.updated_at > created.updated_at).toBe(true);
    expectNoSecret(changed, created.secret);

    const disabled = await owner.patch(path, { status: "disabled" });
    expect(disabled.status, disabled.text).toBe(200);
    expect(disabled.body).toMatchObject({ status: "disabled", disabled_reason: "manual", url: "https://example.com/b", description: "second" });
    expect(disabled.body.updated_at > changed.body.updated_at).toBe(true);
    expectNoSecret(disabled, created.secret);

    const enabled = await owner.patch(path, { status: "enabled", description: null });
    expect(enabled.status, enabled.text).toBe(200);
    expect(enabled.body).toMatchObject({ status: "enabled", disabled_reason: null, description: null, resources: ["estimate", "invoice"] });
    expectNoSecret(enabled, created.secret);

    // The stored endpoint is what the last response said.
    const got = await owner.get(path);
    expect(got.status, got.text).toBe(200);
    expect(got.body).toEqual(enabled.body);

    // What it read, sent back (or nothing at all), changes nothing: not even updated_at.
    const { id: _id, object: _object, created_at: _created, updated_at: _updated, ...readBack } = got.body;
    for (const body of [readBack, got.body, {}]) {
      const same = await owner.patch(path, body);
      expect(same.status, same.text).toBe(200);
      expect(same.body).toEqual(got.body);
    }
    expect((await owner.get(path)).body).toEqual(got.body);
  });

  it("DELETE answers {id, object, deleted: true}; the endpoint is then 404 resource_missing everywhere", async () => {
    const { owner } = await ownerOf();
    const kept = await createEndpoint(owner, { url: "https://example.com/kept", resources: ["item"] });
    const created = await createEndpoint(owner, { url: "https://example.com/gone", resources: ["item"] });
    const path = `/webhook-endpoints/${created.id}`;
    const key = idempotencyKey();
    const deleted = await owner.request("DELETE", path, undefined, { idempotencyKey: key });
    expect(deleted.status, deleted.text).toBe(200);
    expect(deleted.body).toEqual({ id: created.id, object: "webhook_endpoint", deleted: true });
    // The same Idempotency-Key replays the answer.
    const replayed = await owner.request("DELETE", path, undefined, { idempotencyKey: key });
    expect(replayed.status, replayed.text).toBe(200);
    expect(replayed.body).toEqual(deleted.body);

    expectError(await owner.get(path), 404, "resource_missing");
    expectError(await owner.patch(path, { description: "x" }), 404, "resource_missing");
    expectError(await owner.request("DELETE", path), 404, "resource_missing");
    expectError(await owner.post(`${path}/rotate-secret`), 404, "resource_missing");
    expectError(await owner.post(`${path}/test`), 404, "resource_missing");
    expectError(await owner.get(`${path}/deliveries`), 404, "resource_missing");
    const listed = await owner.get("/webhook-endpoints");
    expect(listed.body.data.map((e: any) => e.id)).toEqual([kept.id]);
    expect(listed.body.pagination.total_records).toBe(1);
  });

  it("the 11th endpoint is 409 webhook_endpoint_limit_reached and writes nothing; after a delete a create works again", async () => {
    const { owner } = await ownerOf();
    const made: Record<string, any>[] = [];
    for (let i = 0; i < 10; i++) made.push(await createEndpoint(owner, { url: `https://example.com/hooks/${i}`, resources: ["item"] }));
    const eleventh = await owner.post("/webhook-endpoints", { url: "https://example.com/hooks/eleventh", resources: ["item"] });
    expectError(eleventh, 409, "webhook_endpoint_limit_reached");
    const listed = await owner.get("/webhook-endpoints", { limit: 100 });
    expect(listed.body.pagination.total_records).toBe(10);
    expect(listed.body.data).toHaveLength(10);
    expect(listed.body.data.some((e: any) => e.url.endsWith("/eleventh"))).toBe(false);

    const deleted = await owner.request("DELETE", `/webhook-endpoints/${made[4]!.id}`);
    expect(deleted.status, deleted.text).toBe(200);
    const again = await createEndpoint(owner, { url: "https://example.com/hooks/again", resources: ["item"] });
    const after = await owner.get("/webhook-endpoints", { limit: 100 });
    expect(after.body.pagination.total_records).toBe(10);
    expect(after.body.data[0].id).toBe(again.id);
    expectError(await owner.post("/webhook-endpoints", { url: "https://example.com/hooks/twelfth" }), 409, "webhook_endpoint_limit_reached");
  });

  it("12 concurrent creates: exactly 10 are written, the others are 409", async () => {
    const { owner } = await ownerOf();
    const responses = await Promise.all(
      Array.from({ length: 12 }, (_, i) => owner.post("/webhook-endpoints", { url: `https://example.com/race/${i}`, resources: ["item"] })),
    );
    const statuses = responses.map((r) => r.status).sort();
    expect(statuses, responses.map((r) => r.text).join("\n")).toEqual([201, 201, 201, 201, 201, 201, 201, 201, 201, 201, 409, 409]);
    for (const refused of responses.filter((r) => r.status === 409)) expectError(refused, 409, "webhook_endpoint_limit_reached");
    const listed = await owner.get("/webhook-endpoints", { limit: 100 });
    expect(listed.body.pagination.total_records).toBe(10);
    expect(listed.body.data.map((e: any) => e.id).sort()).toEqual(
      responses
        .filter((r) => r.status === 201)
        .map((r) => r.body.id)
        .sort(),
    );
  });

  it("an Idempotency-Key replays the create (same id and secret) and writes one endpoint", async () => {
    const { owner } = await ownerOf();
    const key = idempotencyKey();
    const body = { url: "https://example.com/once", resources: ["item"] };
    const first = await owner.post("/webhook-endpoints", body, { idempotencyKey: key });
    const second = await owner.post("/webhook-endpoints", body, { idempotencyKey: key });
    expect(first.status, first.text).toBe(201);
    expect(second.status, second.text).toBe(201);
    expect(second.body).toEqual(first.body);
    expect((await owner.get("/webhook-endpoints")).body.pagination.total_records).toBe(1);
  });
});

describe("webhook endpoints: validation, scopes, permissions, isolation", () => {
  it("URL rules: only https (loopback http on the local stack), no user info, at most 2048 characters: else 422 validation_failed on url", async () => {
    const { owner } = await ownerOf();
    const base = "https://example.com/";
    for (const url of [
      "http://example.com/hooks",
      "ftp://example.com/hooks",
      "https://user:pass@example.com/hooks",
      "https://user@example.com/hooks",
      `${base}${"a".repeat(2049 - base.length)}`,
      "example.com/hooks",
      "not a url",
      "",
    ]) {
      const response = await owner.post("/webhook-endpoints", { url, resources: ["item"] });
      expectValidation(response, "url");
    }
    expectValidation(await owner.post("/webhook-endpoints", { resources: ["item"] }), "url");
    // Exactly 2048 characters is fine, as are the local stack's loopback http URLs.
    await createEndpoint(owner, { url: `${base}${"a".repeat(2048 - base.length)}`, resources: ["item"] });
    for (const url of ["http://127.0.0.1:9/x", "http://localhost:9/x", "http://[::1]:9/x"]) await createEndpoint(owner, { url, resources: ["item"] });
    // Nothing refused was written.
    expect((await owner.get("/webhook-endpoints")).body.pagination.total_records).toBe(4);

    // PATCH follows the same rules and changes nothing when refused.
    const endpoint = await createEndpoint(owner, { url: "https://example.com/ok", resources: ["item"] });
    for (const url of ["http://example.com/x", "https://a:b@example.com/x", `${base}${"b".repeat(2100)}`]) {
      expectValidation(await owner.patch(`/webhook-endpoints/${endpoint.id}`, { url }), "url");
    }
    expect((await owner.get(`/webhook-endpoints/${endpoint.id}`)).body.url).toBe("https://example.com/ok");
  });

  it("unknown or empty resources, a long description and unknown fields are 422 validation_failed; nothing is written", async () => {
    const { owner } = await ownerOf();
    const url = "https://example.com/hooks";
    const unknown = await owner.post("/webhook-endpoints", { url, resources: ["item", "customer"] });
    expectError(unknown, 422, "validation_failed");
    expect(JSON.stringify(unknown.body.error.details)).toContain("resources");
    expectError(await owner.post("/webhook-endpoints", { url, resources: [] }), 422, "validation_failed");
    expectError(await owner.post("/webhook-endpoints", { url, resources: "item" }), 422, "validation_failed");
    expectValidation(await owner.post("/webhook-endpoints", { url, description: "x".repeat(501) }), "description");
    expectError(await owner.post("/webhook-endpoints", { url, secret: "whsec_mine" }), 422, "validation_failed");
    expect((await owner.get("/webhook-endpoints")).body.pagination.total_records).toBe(0);

    const endpoint = await createEndpoint(owner, { url, resources: ["item"] });
    expectError(await owner.patch(`/webhook-endpoints/${endpoint.id}`, { resources: ["widget"] }), 422, "validation_failed");
    expectError(await owner.patch(`/webhook-endpoints/${endpoint.id}`, { status: "paused" }), 422, "validation_failed");
    expect((await owner.get(`/webhook-endpoints/${endpoint.id}`)).body).toMatchObject({ resources: ["item"], status: "enabled" });
    // rotate-secret and test take an empty object or no body: anything else is refused and does nothing.
    for (const action of ["rotate-secret", "test"]) {
      const path = `/webhook-endpoints/${endpoint.id}/${action}`;
      expectError(await owner.request("POST", path, undefined, { raw: '{"a":' }), 400, "invalid_json");
      expectError(await owner.request("POST", path, undefined, { raw: '{"zzz":1}', headers: { "content-type": "text/plain" } }), 400, "invalid_json");
      expectError(await owner.post(path, { zzz: 1 }), 422, "validation_failed");
    }
    expect((await owner.get(`/webhook-endpoints/${endpoint.id}/deliveries`)).body.pagination.total_records).toBe(0);
    expect((await owner.post(`/webhook-endpoints/${endpoint.id}/rotate-secret`, {})).status).toBe(200);
  });

  it("scopes: writes need webhooks:write, reads webhooks:read (403 insufficient_scope)", async () => {
    const { account, owner } = await ownerOf();
    const endpoint = await createEndpoint(owner, { url: "https://example.com/hooks", resources: ["item"] });
    const path = `/webhook-endpoints/${endpoint.id}`;
    const readOnly = api().withKey((await newKey(account.ownerUserId, { scopes: ["webhooks:read", "items:read"] })).key);
    const writeOnly = api().withKey((await newKey(account.ownerUserId, { scopes: ["webhooks:write", "items:read"] })).key);

    expectError(await readOnly.post("/webhook-endpoints", { url: "https://example.com/x", resources: ["item"] }), 403, "insufficient_scope", "webhooks:write");
    expectError(await readOnly.patch(path, { description: "x" }), 403, "insufficient_scope", "webhooks:write");
    expectError(await readOnly.request("DELETE", path), 403, "insufficient_scope", "webhooks:write");
    expectError(await readOnly.post(`${path}/rotate-secret`), 403, "insufficient_scope", "webhooks:write");
    expectError(await readOnly.post(`${path}/test`), 403, "insufficient_scope", "webhooks:write");
    expect((await readOnly.get(path)).status).toBe(200);
    expect((await readOnly.get(`${path}/deliveries`)).status).toBe(200);

    expectError(await writeOnly.get("/webhook-endpoints"), 403, "insufficient_scope", "webhooks:read");
    expectError(await writeOnly.get(path), 403, "insufficient_scope", "webhooks:read");
    expectError(await writeOnly.get(`${path}/deliveries`), 403, "insufficient_scope", "webhooks:read");

    // Nothing the refused requests asked for happened.
    const { secret: _secret, ...shown } = endpoint;
    expect((await owner.get(path)).body).toEqual(shown);
    expect((await owner.get("/webhook-endpoints")).body.pagination.total_records).toBe(1);
  });

  it("each resource needs what GET /sync needs for it: else 403 sync_permission_denied, nothing written", async () => {
    const { account, owner } = await ownerOf();
    const url = "https://example.com/hooks";
    // A staff user that may list items only: invoices need invoices.list and records.view_all.
    const staff = api().withKey((await newUser(account, { permissions: ["inventory.list", "invoices.list"] })).key);
    expectError(await staff.post("/webhook-endpoints", { url, resources: ["invoice"] }), 403, "sync_permission_denied");
    expectError(await staff.post("/webhook-endpoints", { url, resources: ["item", "invoice"] }), 403, "sync_permission_denied");
    const mine = await createEndpoint(staff, { url, resources: ["item"] });
    expectError(await staff.patch(`/webhook-endpoints/${mine.id}`, { resources: ["invoice"] }), 403, "sync_permission_denied");
    expect((await staff.get(`/webhook-endpoints/${mine.id}`)).body.resources).toEqual(["item"]);

    // A user bound to a location never sees an account-wide feed.
    const location = await owner.post("/locations", { name: "Shop", short_name: "SHOP" }, { idempotencyKey: idempotencyKey() });
    expect(location.status, location.text).toBe(201);
    const bound = api().withKey((await newUser(account, { permissions: ["inventory.list"], locationId: location.body.id })).key);
    expectError(await bound.post("/webhook-endpoints", { url, resources: ["item"] }), 403, "sync_permission_denied", "resources");
    expectError(await bound.post("/webhook-endpoints", { url }), 403, "sync_permission_denied", "resources");

    // The key's scope counts too (the owner may see everything, the key may not read items).
    const noItems = api().withKey((await newKey(account.ownerUserId, { scopes: ["webhooks:write", "webhooks:read", "invoices:read"] })).key);
    expectError(await noItems.post("/webhook-endpoints", { url, resources: ["item"] }), 403, "sync_permission_denied");
    expect((await createEndpoint(noItems, { url })).resources).toEqual(["invoice"]);
    // A key that may sync nothing cannot create an endpoint with resources omitted.
    const nothing = api().withKey((await newKey(account.ownerUserId, { scopes: ["webhooks:write", "webhooks:read"] })).key);
    expectError(await nothing.post("/webhook-endpoints", { url }), 403, "sync_permission_denied", "resources");

    expect((await owner.get("/webhook-endpoints")).body.pagination.total_records).toBe(2);
  });

  it("changing another user's endpoint needs what creating it needed: 403 sync_permission_denied, unchanged; a user who may sync its resources can", async () => {
    const { account, owner } = await ownerOf();
    const url = "https://example.com/owner-hooks";
    const endpoint = await createEndpoint(owner, { url, resources: ["invoice", "item"] });
    const itemsOnly = api().withKey((await newUser(account, { permissions: ["inventory.list"] })).key);
    const path = `/webhook-endpoints/${endpoint.id}`;
    expectError(await itemsOnly.patch(path, { url: "https://attacker.example.com/x" }), 403, "sync_permission_denied");
    expectError(await itemsOnly.patch(path, { status: "disabled" }), 403, "sync_permission_denied");
    expectError(await itemsOnly.post(`${path}/rotate-secret`), 403, "sync_permission_denied");
    // Nor may it delete or test it.
    expectError(await itemsOnly.request("DELETE", path), 403, "sync_permission_denied");
    expectError(await itemsOnly.post(`${path}/test`), 403, "sync_permission_denied");
    const stored = (await owner.get(path)).body;
    expect(stored).toMatchObject({ url, status: "enabled", updated_at: endpoint.updated_at });
    expect((await owner.get(`${path}/deliveries`)).body.pagination.total_records).toBe(0);
    const seesAll = api().withKey((await newUser(account, { permissions: ["inventory.list", "invoices.list", "records.view_all"] })).key);
    const changed = await seesAll.patch(path, { description: "kept by a colleague" });
    expect(changed.status, changed.text).toBe(200);
    expect(changed.body).toMatchObject({ description: "kept by a colleague", user_id: account.ownerUserId });
    const tested = await seesAll.post(`${path}/test`);
    expect(tested.status, tested.text).toBe(202);

    // New resources for another user's endpoint must be ones that user may sync (deliveries follow its permissions).
    const itemsUser = await newUser(account, { permissions: ["inventory.list"] });
    const theirs = await createEndpoint(api().withKey(itemsUser.key), { url, resources: ["item"] });
    expectValidation(await owner.patch(`/webhook-endpoints/${theirs.id}`, { resources: ["invoice", "item"] }), "resources");
    expect((await owner.get(`/webhook-endpoints/${theirs.id}`)).body).toMatchObject({ resources: ["item"], updated_at: theirs.updated_at });
    const same = await owner.patch(`/webhook-endpoints/${theirs.id}`, { resources: ["item"], description: "items only" });
    expect(same.status, same.text).toBe(200);
    // Another user cannot narrow an endpoint whose resources it may not all sync either.
    expectError(await itemsOnly.patch(path, { resources: ["item"] }), 403, "sync_permission_denied");
    // One who may sync them all deletes it.
    const deleted = await seesAll.request("DELETE", path);
    expect(deleted.status, deleted.text).toBe(200);
    expectError(await owner.get(path), 404, "resource_missing");
  });

  it("an endpoint's own user who lost one of its resources may narrow it to the others and enable it again; enabled on an enabled endpoint writes nothing", async () => {
    const { account, owner } = await ownerOf();
    const staff = await newUser(account, { permissions: ["inventory.list", "invoices.list", "records.view_all"] });
    const client = api().withKey(staff.key);
    const endpoint = await createEndpoint(client, { url: "https://example.com/staff-hooks", resources: ["invoice", "item"] });
    const path = `/webhook-endpoints/${endpoint.id}`;
    // `enabled` again, or the GET body sent back: nothing to write.
    const again = await client.patch(path, { status: "enabled" });
    expect(again.status, again.text).toBe(200);
    expect(again.body.updated_at).toBe(endpoint.updated_at);
    const spare = await createEndpoint(client, { url: "https://example.com/staff-spare", resources: ["invoice"] });
    await updateUser(staff.userId, { permissions: ["inventory.list"] });
    expectError(await client.patch(path, { description: "still invoices" }), 403, "sync_permission_denied");
    // Its own endpoints stay its own to test and delete.
    const tested = await client.post(`${path}/test`);
    expect(tested.status, tested.text).toBe(202);
    const deleted = await client.request("DELETE", `/webhook-endpoints/${spare.id}`);
    expect(deleted.status, deleted.text).toBe(200);
    expectError(await owner.get(`/webhook-endpoints/${spare.id}`), 404, "resource_missing");
    const narrowed = await client.patch(path, { resources: ["item"] });
    expect(narrowed.status, narrowed.text).toBe(200);
    expect(narrowed.body.resources).toEqual(["item"]);
    expect((await owner.get(path)).body.resources).toEqual(["item"]);
  });

  it("another account's endpoint is 404 resource_missing on get, patch, delete, rotate-secret, test and deliveries, and unchanged", async () => {
    const { owner } = await ownerOf();
    const { owner: stranger } = await ownerOf();
    const inbox = webhooks.receiver.inbox();
    const endpoint = await createEndpoint(owner, { url: inbox.url, resources: ["item"] });
    const path = `/webhook-endpoints/${endpoint.id}`;
    expectError(await stranger.get(path), 404, "resource_missing");
    expectError(await stranger.patch(path, { status: "disabled" }), 404, "resource_missing");
    expectError(await stranger.request("DELETE", path), 404, "resource_missing");
    expectError(await stranger.post(`${path}/rotate-secret`), 404, "resource_missing");
    expectError(await stranger.post(`${path}/test`), 404, "resource_missing");
    expectError(await stranger.get(`${path}/deliveries`), 404, "resource_missing");
    expect((await stranger.get("/webhook-endpoints")).body.data).toEqual([]);
    // A random id is 404 too.
    expectError(await owner.get(`/webhook-endpoints/${randomUUID()}`), 404, "resource_missing");

    const { secret, ...shown } = endpoint;
    expect((await owner.get(path)).body).toEqual(shown);
    await queueIdle();
    expect(inbox.messages).toEqual([]);
    expect(secret).toMatch(SECRET);
  });
});

describe("webhook endpoints: rotation, test messages, timeout", () => {
  it("rotate-secret returns a new secret; later messages carry two signatures and verify with both the old and the new secret", async () => {
    const { owner } = await ownerOf();
    const inbox = webhooks.receiver.inbox();
    const endpoint = await createEndpoint(owner, { url: inbox.url, resources: ["item"] });
    const old = endpoint.secret as string;
    inbox.secrets = [old];

    // Before the rotation: one signature, the old secret.
    const before = await owner.post(`/webhook-endpoints/${endpoint.id}/test`);
    expect(before.status, before.text).toBe(202);
    await waitFor("the test message before rotation", () => inbox.withId(before.body.message_id).length > 0);
    expect(inbox.withId(before.body.message_id)[0]!.signature.split(" ")).toHaveLength(1);

    const rotated = await owner.post(`/webhook-endpoints/${endpoint.id}/rotate-secret`);
    expect(rotated.status, rotated.text).toBe(200);
    expect(Object.keys(rotated.body).sort()).toEqual([...ENDPOINT_KEYS, "secret"].sort());
    const fresh = rotated.body.secret as string;
    expect(fresh).toMatch(SECRET);
    expect(fresh).not.toBe(old);
    expect(rotated.body).toMatchObject({ id: endpoint.id, url: endpoint.url, resources: ["item"], status: "enabled", created_at: endpoint.created_at });
    expect(rotated.body.updated_at > endpoint.updated_at).toBe(true);
    expectNoSecret(await owner.get(`/webhook-endpoints/${endpoint.id}`), fresh);
    expectNoSecret(await owner.get("/webhook-endpoints"), fresh);

    // A change after the rotation: two signatures, space-separated; each secret verifies it alone.
    inbox.secrets = [old, fresh, `whsec_${Buffer.alloc(32, 7).toString("base64")}`];
    const item = await owner.post("/items", { name: "Rotated" });
    expect(item.status, item.text).toBe(201);
    await waitFor("the item's message after rotation", () => inbox.about(item.body.id).length > 0);
    const message = inbox.about(item.body.id)[0]!;
    const signatures = message.signature.split(" ");
    expect(signatures).toHaveLength(2);
    for (const signature of signatures) expect(signature).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    expect(message.verifiedWith).toEqual([old, fresh]);
    // The new secret's signature first, then the old one's.
    const verifiesAlone = (secret: string, signature: string) => {
      try {
        new Webhook(secret).verify(message.body, { "webhook-id": message.id, "webhook-timestamp": message.timestamp, "webhook-signature": signature });
        return true;
      } catch {
        return false;
      }
    };
    expect([verifiesAlone(fresh, signatures[0]!), verifiesAlone(old, signatures[1]!), verifiesAlone(old, signatures[0]!)]).toEqual([true, true, false]);

    // A second rotation: the secret of the first rotation is now the previous one; the original no longer signs.
    const again = await owner.post(`/webhook-endpoints/${endpoint.id}/rotate-secret`);
    expect(again.status, again.text).toBe(200);
    const third = again.body.secret as string;
    inbox.secrets = [old, fresh, third];
    const test = await owner.post(`/webhook-endpoints/${endpoint.id}/test`);
    await waitFor("the test message after the second rotation", () => inbox.withId(test.body.message_id).length > 0);
    expect(inbox.withId(test.body.message_id)[0]!.verifiedWith).toEqual([fresh, third]);
  });

  it("an Idempotency-Key replays rotate-secret: the same secret, one rotation (the original secret still signs as the previous one)", async () => {
    const { owner } = await ownerOf();
    const inbox = webhooks.receiver.inbox();
    const endpoint = await createEndpoint(owner, { url: inbox.url, resources: ["item"] });
    const key = idempotencyKey();
    const first = await owner.post(`/webhook-endpoints/${endpoint.id}/rotate-secret`, undefined, { idempotencyKey: key });
    const replay = await owner.post(`/webhook-endpoints/${endpoint.id}/rotate-secret`, undefined, { idempotencyKey: key });
    expect(first.status, first.text).toBe(200);
    expect(replay.status, replay.text).toBe(200);
    expect(replay.body).toEqual(first.body);
    inbox.secrets = [endpoint.secret, first.body.secret];
    const sent = await owner.post(`/webhook-endpoints/${endpoint.id}/test`);
    await waitFor("the test message", () => inbox.withId(sent.body.message_id).length > 0);
    expect(inbox.withId(sent.body.message_id)[0]!.verifiedWith).toEqual([endpoint.secret, first.body.secret]);
  });

  it("POST .../test is 202 {object: webhook_test, message_id}: a signed webhook.test message, recorded, sent even when disabled, once per idempotency key", async () => {
    const { owner } = await ownerOf();
    const inbox = webhooks.receiver.inbox();
    const endpoint = await createEndpoint(owner, { url: inbox.url, resources: ["item"] });
    inbox.secrets = [endpoint.secret];
    const path = `/webhook-endpoints/${endpoint.id}`;

    const sent = await owner.post(`${path}/test`);
    expect(sent.status, sent.text).toBe(202);
    expect(sent.body).toEqual({ object: "webhook_test", message_id: expect.stringMatching(MESSAGE_ID) });
    await waitFor("the test message", () => inbox.withId(sent.body.message_id).length > 0);
    const message = inbox.withId(sent.body.message_id)[0]!;
    expect(message.method).toBe("POST");
    expect(message.headers["content-type"]).toBe("application/json");
    expect(message.verifiedWith).toEqual([endpoint.secret]);
    expect(message.payload).toEqual({ type: "webhook.test", timestamp: expect.stringMatching(ISO), data: { object: "webhook_endpoint", id: endpoint.id } });
    expect(Object.keys(message.payload).sort()).toEqual(["data", "timestamp", "type"]);
    const deliveries = await waitForDeliveries(owner, endpoint.id, 1);
    expect(deliveries[0]).toMatchObject({
      message_id: sent.body.message_id,
      event_type: "webhook.test",
      attempt: 1,
      status: "succeeded",
      response_status: 204,
    });

    // Disabled: change messages stop, test messages still go.
    const disabled = await owner.patch(path, { status: "disabled" });
    expect(disabled.body.disabled_reason).toBe("manual");
    const whileDisabled = await owner.post(`${path}/test`);
    expect(whileDisabled.status, whileDisabled.text).toBe(202);
    expect(whileDisabled.body.message_id).not.toBe(sent.body.message_id);
    await waitFor("the test message to the disabled endpoint", () => inbox.withId(whileDisabled.body.message_id).length > 0);
    expect(inbox.withId(whileDisabled.body.message_id)[0]!.payload.data).toEqual({ object: "webhook_endpoint", id: endpoint.id });
    await waitForDeliveries(owner, endpoint.id, 2);
    // The test message does not change the endpoint.
    expect((await owner.get(path)).body).toMatchObject({ status: "disabled", disabled_reason: "manual" });

    // The same Idempotency-Key: the same answer, one message.
    const key = idempotencyKey();
    const first = await owner.post(`${path}/test`, undefined, { idempotencyKey: key });
    const replay = await owner.post(`${path}/test`, undefined, { idempotencyKey: key });
    expect(first.status, first.text).toBe(202);
    expect(replay.status, replay.text).toBe(202);
    expect(replay.body).toEqual(first.body);
    await waitFor("the keyed test message", () => inbox.withId(first.body.message_id).length > 0);
    await queueIdle();
    expect(inbox.ofType("webhook.test")).toHaveLength(3);
    expect((await deliveriesOf(owner, endpoint.id)).body.pagination.total_records).toBe(3);
  });

  it("the secret and the message body are never logged (at DEBUG, through create, rotation, failed and retried attempts, delete)", async () => {
    const lines: string[] = [];
    const write = process.stdout.write;
    const level = process.env.LOG_LEVEL;
    process.env.LOG_LEVEL = "DEBUG";
    process.stdout.write = ((chunk: unknown, ...rest: unknown[]) => {
      lines.push(String(chunk));
      const callback = rest.find((arg) => typeof arg === "function") as (() => void) | undefined;
      if (callback) process.nextTick(callback);
      return true;
    }) as typeof process.stdout.write;
    const secrets: string[] = [];
    try {
      const { owner } = await ownerOf();
      const inbox = webhooks.receiver.inbox();
      inbox.respond = (message) => (message.attempt === 1 ? 500 : 204);
      const endpoint = await createEndpoint(owner, { url: inbox.url, resources: ["item"] });
      secrets.push(endpoint.secret);
      const rotated = await owner.post(`/webhook-endpoints/${endpoint.id}/rotate-secret`, undefined, { idempotencyKey: idempotencyKey() });
      expect(rotated.status, rotated.text).toBe(200);
      secrets.push(rotated.body.secret);
      const item = await owner.post("/items", { name: "Logged" });
      expect(item.status, item.text).toBe(201);
      const sent = await owner.post(`/webhook-endpoints/${endpoint.id}/test`);
      await waitFor("the item's retried message", () => inbox.about(item.body.id).length >= 2);
      await waitFor("the retried test message", () => inbox.withId(sent.body.message_id).length >= 2);
      await queueIdle();
      expect((await owner.request("DELETE", `/webhook-endpoints/${endpoint.id}`)).status).toBe(200);
    } finally {
      process.stdout.write = write;
      if (level === undefined) delete process.env.LOG_LEVEL;
      else process.env.LOG_LEVEL = level;
    }
    const logged = lines.join("");
    // The attempts were logged (the capture worked)...
    expect(logged).toContain('"message":"webhook attempt"');
    expect(logged).toContain('"message":"request"');
    // ...never a secret (whole, or its key), nor a message body.
    expect(logged).not.toContain("whsec_");
    for (const secret of secrets) expect(logged).not.toContain(secret.slice("whsec_".length, "whsec_".length + 20));
    expect(logged).not.toContain('"object":"change"');
    expect(logged).not.toContain('\\"object\\":\\"change\\"');
    expect(logged).not.toContain('"object":"webhook_endpoint","id"');
  });

  it(
    "an endpoint that does not answer within 10 s: the attempt is recorded failed with error timeout, and retried",
    async () => {
      const { owner } = await ownerOf();
      const inbox = webhooks.receiver.inbox();
      const endpoint = await createEndpoint(owner, { url: inbox.url, resources: ["item"] });
      inbox.secrets = [endpoint.secret];
      inbox.respond = (message) => (message.attempt === 1 ? "hang" : 204);
      const sent = await owner.post(`/webhook-endpoints/${endpoint.id}/test`);
      expect(sent.status, sent.text).toBe(202);
      const deliveries = await waitForDeliveries(owner, endpoint.id, 2, scaled(20_000));
      const [second, first] = deliveries as [Record<string, any>, Record<string, any>];
      expect(first).toMatchObject({
        message_id: sent.body.message_id,
        event_type: "webhook.test",
        attempt: 1,
        status: "failed",
        response_status: null,
        error: "timeout",
        next_attempt_at: expect.stringMatching(ISO),
      });
      expect(first.duration_ms).toBeGreaterThanOrEqual(9_900);
      expect(Date.parse(first.next_attempt_at) - Date.parse(first.created_at)).toBe(200);
      expect(second).toMatchObject({
        message_id: sent.body.message_id,
        attempt: 2,
        status: "succeeded",
        response_status: 204,
        error: null,
        next_attempt_at: null,
      });
      const attempts = inbox.withId(sent.body.message_id);
      expect(attempts.map((m) => m.attempt)).toEqual([1, 2]);
      expect(attempts.every((m) => m.verifiedWith.length === 1)).toBe(true);
    },
    scaled(40_000),
  );
});
