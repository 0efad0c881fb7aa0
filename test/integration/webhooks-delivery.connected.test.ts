import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, expect, it, vi } from "vitest";
import { readHead } from "../../lib/db/sync.js";
import { localWebhookQueue } from "../../lib/domain/webhooks/queue.js";
import { useApiServer, type ApiClient, type TestResponse } from "../support/api.js";
import { inBatches } from "../support/batches.js";
import { expectValidation } from "../support/assertions.js";
import { idempotencyKey, newAccount, newUser, updateUser, type TestAccount } from "../support/fixtures.js";
import { waitFor } from "../support/local-stack.js";
import { salesWorld } from "../support/sales.js";
import { scaled } from "../support/timeouts.js";
import { type Answer, type WebhookInbox, useWebhookStack } from "../support/webhook-receiver.js";

/**
 * Fault injection for the at-least-once tests (and nothing else: every other call goes to the
 * real fan-out): a change armed here makes the first fan-out that carries it throw, as a
 * transient DynamoDB or SQS error inside it would; the stream batch then fails and is retried.
 */
const injected = vi.hoisted(() => ({ failOnce: new Set<string>() }));
vi.mock("../../lib/domain/webhooks/fan-out.js", async (importOriginal) => {
  const actual = await importOriginal<typeof import("../../lib/domain/webhooks/fan-out.js")>();
  return {
    ...actual,
    fanOutChanges: async (changes: Parameters<typeof actual.fanOutChanges>[0]) => {
      const hit = changes.find((change) => injected.failOnce.delete(`${change.recordId}|${change.operation}`));
      if (hit) throw new Error(`injected: the fan-out of ${hit.resource} ${hit.recordId} (${hit.operation}) fails once`);
      return actual.fanOutChanges(changes);
    },
  };
});

/**
 * Delivery of the change feed to webhook endpoints (architecture section 9), end to end: the
 * API writes, the stream poller drives the stream processor in-process, the change markers it
 * writes are fanned out to the endpoints, and the in-process queue POSTs the messages to a
 * real HTTP receiver that verifies each one with `standardwebhooks`. Covers the message
 * (body, headers, signature), each resource and the filter, tenant isolation, permissions at
 * delivery, retries, failed attempts of each kind, exhaustion and disabling, deletion, private
 * addresses, a fan-out that fails once (at least once), and 100 concurrent writes against
 * `GET /sync`. Every test uses its own account and its own inbox of the one receiver.
 */
const api = useApiServer();
const webhooks = useWebhookStack("0.2,0.2,0.2"); // 4 attempts, 0.2 s apart

const ATTEMPTS = 4;
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const MESSAGE_ID = /^msg_[A-Za-z0-9_-]{27}$/;
const DELIVERY_KEYS = [
  "attempt",
  "created_at",
  "duration_ms",
  "error",
  "event_type",
  "id",
  "message_id",
  "next_attempt_at",
  "object",
  "response_status",
  "status",
];
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function ownerOf(): Promise<{ account: TestAccount; owner: ApiClient }> {
  const account = await newAccount();
  return { account, owner: api().withKey(account.ownerKey) };
}

/** An endpoint on a fresh inbox of the receiver, the inbox verifying with its secret. */
async function endpointOn(client: ApiClient, body: Record<string, unknown> = {}): Promise<{ endpoint: Record<string, any>; inbox: WebhookInbox }> {
  const inbox = webhooks.receiver.inbox();
  const created = await client.post("/webhook-endpoints", { url: inbox.url, ...body });
  expect(created.status, created.text).toBe(201);
  inbox.secrets = [created.body.secret];
  return { endpoint: created.body, inbox };
}

async function createItem(client: ApiClient, name = "Widget"): Promise<Record<string, any>> {
  const created = await client.post("/items", { name });
  expect(created.status, created.text).toBe(201);
  return created.body;
}

async function deliveriesOf(client: ApiClient, endpointId: string, query: Record<string, number> = {}): Promise<TestResponse> {
  const listed = await client.get(`/webhook-endpoints/${endpointId}/deliveries`, query);
  expect(listed.status, listed.text).toBe(200);
  return listed;
}

/** Waits until the endpoint lists `count` attempts; returns them, newest first. */
async function waitForDeliveries(client: ApiClient, endpointId: string, count: number): Promise<any[]> {
  let data: any[] = [];
  await waitFor(`${count} delivery attempt(s) of endpoint ${endpointId}`, async () => {
    data = (await deliveriesOf(client, endpointId, { limit: 100 })).body.data;
    return data.length >= count;
  });
  return data;
}

/** Waits until the in-process webhook queue has no attempt running and no retry waiting. */
async function queueIdle(): Promise<void> {
  await waitFor("the local webhook queue to be idle", () => {
    const queue = localWebhookQueue();
    return queue.inFlight === 0 && queue.waiting === 0;
  });
}

/**
 * Waits until the account's feed head has moved past `fromSeq` (the write was marked), the
 * stream has been processed (markers written and fanned out) and the head stays
 * put; then until the local queue is idle. After it, a message that was going to be sent has been.
 */
async function settle(accountId: string, fromSeq: number): Promise<void> {
  await waitFor(`the sync head of ${accountId} to move past ${fromSeq}`, async () => (await readHead(accountId)).seq > fromSeq);
  await webhooks.poller.drain();
  await webhooks.poller.drain();
  let head = (await readHead(accountId)).seq;
  let stable = 0;
  for (let round = 0; round < 40 && stable < 2; round++) {
    await sleep(60);
    await webhooks.poller.drain();
    const next = (await readHead(accountId)).seq;
    stable = next === head ? stable + 1 : 0;
    head = next;
  }
  await webhooks.poller.drain();
  await queueIdle();
}

/** A loopback port nothing listens on (one just released). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

const headOf = async (accountId: string) => (await readHead(accountId)).seq;

async function getEndpoint(client: ApiClient, endpointId: string): Promise<Record<string, any>> {
  const got = await client.get(`/webhook-endpoints/${endpointId}`);
  expect(got.status, got.text).toBe(200);
  return got.body;
}

describe("webhook delivery: the message", () => {
  it("an item create is one item.upsert message: exact thin body, Standard Webhooks headers verifying with standardwebhooks, one recorded attempt", async () => {
    const { owner } = await ownerOf();
    const { endpoint, inbox } = await endpointOn(owner, { resources: ["item"] });
    const wrong = `whsec_${Buffer.alloc(32, 1).toString("base64")}`;
    inbox.secrets = [wrong, endpoint.secret];
    const item = await createItem(owner);
    await waitFor("the item's message", () => inbox.about(item.id).length > 0);
    const message = inbox.about(item.id)[0]!;

    expect(message.method).toBe("POST");
    expect(message.path).toBe(inbox.path);
    expect(JSON.parse(message.body)).toEqual({
      type: "item.upsert",
      timestamp: expect.stringMatching(ISO),
      data: { object: "change", resource: "item", id: item.id, operation: "upsert" },
    });
    expect(Object.keys(message.payload)).toEqual(["type", "timestamp", "data"]);
    // The change's time: not before the item was written, not after the message arrived.
    const at = Date.parse(message.payload.timestamp);
    expect(at).toBeGreaterThanOrEqual(Date.parse(item.created_at));
    expect(at).toBeLessThanOrEqual(message.receivedAt);
    // Headers: webhook-id msg_..., webhook-timestamp the Unix seconds of the attempt, one v1 signature.
    expect(message.id).toMatch(MESSAGE_ID);
    expect(message.timestamp).toMatch(/^\d{10}$/);
    expect(Math.abs(Number(message.timestamp) - message.receivedAt / 1000)).toBeLessThan(5);
    expect(message.signature).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
    expect(message.headers["content-type"]).toBe("application/json");
    // standardwebhooks verifies it with the endpoint's secret, and only with it.
    expect(message.verifiedWith).toEqual([endpoint.secret]);

    const deliveries = await waitForDeliveries(owner, endpoint.id, 1);
    expect(deliveries).toHaveLength(1);
    expect(Object.keys(deliveries[0]).sort()).toEqual(DELIVERY_KEYS);
    expect(deliveries[0]).toEqual({
      id: expect.stringMatching(UUID),
      object: "webhook_delivery",
      message_id: message.id,
      event_type: "item.upsert",
      attempt: 1,
      status: "succeeded",
      response_status: 204,
      error: null,
      duration_ms: expect.any(Number),
      next_attempt_at: null,
      created_at: expect.stringMatching(ISO),
    });
    expect(deliveries[0].duration_ms).toBeGreaterThanOrEqual(0);
    const listed = await deliveriesOf(owner, endpoint.id);
    expect(listed.body).toMatchObject({ object: "list", has_more: false, pagination: { total_records: 1 } });
    await queueIdle();
    expect(inbox.messages).toHaveLength(1);
  });

  it("a URL with a host name (resolved through the delivery's guarded lookup) is delivered to", async () => {
    const { owner } = await ownerOf();
    const inbox = webhooks.receiver.inbox();
    const url = inbox.url.replace("127.0.0.1", "localhost");
    const created = await owner.post("/webhook-endpoints", { url, resources: ["item"] });
    expect(created.status, created.text).toBe(201);
    inbox.secrets = [created.body.secret];
    const item = await createItem(owner);
    await waitFor("the item's message via localhost", () => inbox.about(item.id).length > 0);
    expect(inbox.about(item.id)[0]!.verifiedWith).toEqual([created.body.secret]);
    const [delivery] = await waitForDeliveries(owner, created.body.id, 1);
    expect(delivery).toMatchObject({ attempt: 1, status: "succeeded", response_status: 204, error: null });
  });

  it("changes reach only their own account's endpoints", async () => {
    const { account, owner } = await ownerOf();
    const { owner: other } = await ownerOf();
    const mine = await endpointOn(owner, { resources: ["item"] });
    const theirs = await endpointOn(other, { resources: ["item"] });
    const seq = await headOf(account.accountId);
    const item = await createItem(owner);
    await waitFor("the item's message", () => mine.inbox.about(item.id).length > 0);
    await settle(account.accountId, seq);
    expect(theirs.inbox.messages).toEqual([]);
    expect((await deliveriesOf(other, theirs.endpoint.id)).body.pagination.total_records).toBe(0);
  });

  it("PATCH url and resources take effect for the next change: the new URL receives, the old one does not; the new resources filter", async () => {
    const { account, owner } = await ownerOf();
    const { endpoint, inbox } = await endpointOn(owner, { resources: ["invoice"] });
    const moved = webhooks.receiver.inbox();
    moved.secrets = [endpoint.secret];
    const changed = await owner.patch(`/webhook-endpoints/${endpoint.id}`, { url: moved.url, resources: ["item"] });
    expect(changed.status, changed.text).toBe(200);
    expect(changed.body).toMatchObject({ url: moved.url, resources: ["item"] });
    const seq = await headOf(account.accountId);
    const item = await createItem(owner);
    await waitFor("the item's message at the new URL", () => moved.about(item.id).length > 0);
    expect(moved.about(item.id)[0]!.verifiedWith).toEqual([endpoint.secret]);
    await settle(account.accountId, seq);
    expect(inbox.messages).toEqual([]);
  });

  it("an item delete is an item.delete message", async () => {
    const { account, owner } = await ownerOf();
    const { endpoint, inbox } = await endpointOn(owner, { resources: ["item"] });
    const item = await createItem(owner);
    await waitFor("the item's upsert", () => inbox.about(item.id).some((m) => m.payload.type === "item.upsert"));
    const deleted = await owner.request("DELETE", `/items/${item.id}`);
    expect(deleted.status, deleted.text).toBe(200);
    await waitFor("the item's delete", () => inbox.about(item.id).some((m) => m.payload.type === "item.delete"));
    const message = inbox.about(item.id).find((m) => m.payload.type === "item.delete")!;
    expect(message.payload).toEqual({
      type: "item.delete",
      timestamp: expect.stringMatching(ISO),
      data: { object: "change", resource: "item", id: item.id, operation: "delete" },
    });
    expect(message.verifiedWith).toEqual([endpoint.secret]);
    const upsert = inbox.about(item.id).find((m) => m.payload.type === "item.upsert")!;
    expect(message.id).not.toBe(upsert.id);
    await settle(account.accountId, 0);
    expect(inbox.messages.map((m) => m.payload.type).sort()).toEqual(["item.delete", "item.upsert"]);
    const deliveries = await waitForDeliveries(owner, endpoint.id, 2);
    expect(deliveries.map((d) => d.event_type)).toEqual(["item.delete", "item.upsert"]);
  });

  it("an invoice is an invoice.upsert message; an endpoint of [invoice] gets no item messages, one of [item] no invoice messages", async () => {
    const world = await salesWorld((key) => api().withKey(key));
    const owner = world.client;
    const invoices = await endpointOn(owner, { resources: ["invoice"] });
    const items = await endpointOn(owner, { resources: ["item"] });
    const invoice = await owner.post("/invoices", { customer_id: world.customer.id, lines: [{ item_id: world.item.id, quantity: 2 }] });
    expect(invoice.status, invoice.text).toBe(201);
    const item = await createItem(owner, "After the invoice");

    await waitFor("the invoice's message", () => invoices.inbox.about(invoice.body.id).length > 0);
    await waitFor("the new item's message", () => items.inbox.about(item.id).length > 0);
    const message = invoices.inbox.about(invoice.body.id)[0]!;
    expect(message.payload).toEqual({
      type: "invoice.upsert",
      timestamp: expect.stringMatching(ISO),
      data: { object: "change", resource: "invoice", id: invoice.body.id, operation: "upsert" },
    });
    expect(message.verifiedWith).toEqual([invoices.endpoint.secret]);

    await settle(world.account.accountId, 0);
    expect(invoices.inbox.messages.length).toBeGreaterThan(0);
    expect(invoices.inbox.messages.every((m) => m.payload.data.resource === "invoice" && m.payload.type.startsWith("invoice."))).toBe(true);
    expect(items.inbox.messages.length).toBeGreaterThan(0);
    expect(items.inbox.messages.every((m) => m.payload.data.resource === "item" && m.payload.type.startsWith("item."))).toBe(true);
    // Each endpoint recorded only its own messages.
    const recorded = (await deliveriesOf(owner, invoices.endpoint.id, { limit: 100 })).body.data;
    expect(recorded.every((d: any) => d.event_type === "invoice.upsert")).toBe(true);
    expect(recorded).toHaveLength(invoices.inbox.messages.length);
  });
});

describe("webhook delivery: permissions", () => {
  it("the creating user loses the permission: the next change disables the endpoint (permission_revoked) and sends nothing", async () => {
    const { account, owner } = await ownerOf();
    const staff = await newUser(account, { permissions: ["inventory.list", "inventory.modify"] });
    const staffClient = api().withKey(staff.key);
    const { endpoint, inbox } = await endpointOn(staffClient);
    expect(endpoint.resources).toEqual(["item"]);
    expect(endpoint.user_id).toBe(staff.userId);

    // While the user may list items, their changes arrive.
    const before = await createItem(owner, "Before");
    await waitFor("the message of the item made before the revocation", () => inbox.about(before.id).length > 0);

    await updateUser(staff.userId, { permissions: ["inventory.modify"] });
    const seq = await headOf(account.accountId);
    const after = await createItem(owner, "After");
    await waitFor("the endpoint to be disabled", async () => (await getEndpoint(owner, endpoint.id)).status === "disabled");
    expect(await getEndpoint(owner, endpoint.id)).toMatchObject({ status: "disabled", disabled_reason: "permission_revoked" });

    await settle(account.accountId, seq);
    expect(inbox.about(after.id)).toEqual([]);
    expect(inbox.messages).toHaveLength(1);
    const deliveries = await deliveriesOf(owner, endpoint.id);
    expect(deliveries.body.pagination.total_records).toBe(1);
    expect(deliveries.body.data[0].message_id).toBe(inbox.messages[0]!.id);
  });

  it("the user loses one of the endpoint's resources: a change of another one disables it too (permission_revoked), and is not sent", async () => {
    const { account, owner } = await ownerOf();
    const staff = await newUser(account, { permissions: ["inventory.list", "invoices.list", "records.view_all"] });
    const { endpoint, inbox } = await endpointOn(api().withKey(staff.key), { resources: ["invoice", "item"] });
    expect(endpoint.resources).toEqual(["invoice", "item"]);
    await updateUser(staff.userId, { permissions: ["inventory.list", "records.view_all"] });
    const seq = await headOf(account.accountId);
    const item = await createItem(owner, "After the invoices went");
    await waitFor("the endpoint to be disabled", async () => (await getEndpoint(owner, endpoint.id)).status === "disabled");
    expect(await getEndpoint(owner, endpoint.id)).toMatchObject({ status: "disabled", disabled_reason: "permission_revoked" });
    await settle(account.accountId, seq);
    expect(inbox.about(item.id)).toEqual([]);
    // It cannot be enabled again while its user may not sync all of it (422 on status); with the
    // resources that user still may sync, it can.
    expectValidation(await owner.patch(`/webhook-endpoints/${endpoint.id}`, { status: "enabled" }), "status");
    expect(await getEndpoint(owner, endpoint.id)).toMatchObject({ status: "disabled", disabled_reason: "permission_revoked" });
    const narrowed = await owner.patch(`/webhook-endpoints/${endpoint.id}`, { status: "enabled", resources: ["item"] });
    expect(narrowed.status, narrowed.text).toBe(200);
    expect(narrowed.body).toMatchObject({ status: "enabled", disabled_reason: null, resources: ["item"] });
  });

  it("a user bound to a location, or deactivated, after creating the endpoint: permission_revoked too; the owner's endpoint still receives", async () => {
    const { account, owner } = await ownerOf();
    const bound = await newUser(account, { permissions: ["inventory.list"] });
    const inactive = await newUser(account, { permissions: ["inventory.list"] });
    const boundEndpoint = await endpointOn(api().withKey(bound.key), { resources: ["item"] });
    const inactiveEndpoint = await endpointOn(api().withKey(inactive.key), { resources: ["item"] });
    const ownerEndpoint = await endpointOn(owner, { resources: ["item"] });
    const location = await owner.post("/locations", { name: "Shop", short_name: "SHOP" }, { idempotencyKey: idempotencyKey() });
    expect(location.status, location.text).toBe(201);
    await updateUser(bound.userId, { locationId: location.body.id });
    await updateUser(inactive.userId, { status: "inactive" });
    const seq = await headOf(account.accountId);
    const item = await createItem(owner);
    await waitFor("the owner's endpoint to get the item", () => ownerEndpoint.inbox.about(item.id).length > 0);
    for (const { endpoint } of [boundEndpoint, inactiveEndpoint]) {
      await waitFor("the endpoint to be disabled", async () => (await getEndpoint(owner, endpoint.id)).status === "disabled");
      expect(await getEndpoint(owner, endpoint.id)).toMatchObject({ status: "disabled", disabled_reason: "permission_revoked" });
    }
    await settle(account.accountId, seq);
    expect(boundEndpoint.inbox.messages).toEqual([]);
    expect(inactiveEndpoint.inbox.messages).toEqual([]);
    expect(await getEndpoint(owner, ownerEndpoint.endpoint.id)).toMatchObject({ status: "enabled", disabled_reason: null });
  });
});

describe("webhook delivery: retries, exhaustion, disabling", () => {
  it("a 500 then a 204: the same webhook-id twice; the deliveries show attempt 1 failed (500, next_attempt_at) and attempt 2 succeeded, newest first", async () => {
    const { owner } = await ownerOf();
    const { endpoint, inbox } = await endpointOn(owner, { resources: ["item"] });
    inbox.respond = (message) => (message.attempt === 1 ? 500 : 204);
    const item = await createItem(owner);
    await waitFor("the retry of the item's message", () => inbox.about(item.id).length >= 2);
    const [first, second] = inbox.about(item.id) as [any, any];
    expect(second.id).toBe(first.id);
    expect(second.body).toBe(first.body);
    expect(second.receivedAt - first.receivedAt).toBeGreaterThanOrEqual(200);
    // Each attempt is signed at its own time.
    expect(Number(second.timestamp)).toBeGreaterThanOrEqual(Number(first.timestamp));
    expect(first.verifiedWith).toEqual([endpoint.secret]);
    expect(second.verifiedWith).toEqual([endpoint.secret]);

    const deliveries = await waitForDeliveries(owner, endpoint.id, 2);
    expect(deliveries).toHaveLength(2);
    const [newest, oldest] = deliveries as [any, any];
    expect(oldest).toMatchObject({
      message_id: first.id,
      event_type: "item.upsert",
      attempt: 1,
      status: "failed",
      response_status: 500,
      error: null,
      next_attempt_at: expect.stringMatching(ISO),
    });
    expect(Date.parse(oldest.next_attempt_at) - Date.parse(oldest.created_at)).toBe(200);
    expect(newest).toMatchObject({
      message_id: first.id,
      event_type: "item.upsert",
      attempt: 2,
      status: "succeeded",
      response_status: 204,
      error: null,
      next_attempt_at: null,
    });
    expect(newest.created_at >= oldest.next_attempt_at).toBe(true);
    await queueIdle();
    expect(inbox.about(item.id)).toHaveLength(2);
    expect((await getEndpoint(owner, endpoint.id)).status).toBe("enabled");
  });

  it("3 consecutive messages failing every attempt disable the endpoint (failing); a delivered one resets the run (a test message does not); re-enabling resumes deliveries", async () => {
    const { account, owner } = await ownerOf();
    const { endpoint, inbox } = await endpointOn(owner, { resources: ["item"] });
    let answer = 500;
    inbox.respond = () => answer;

    /** One item; waits for all its attempts (1 when delivered, 4 when failing) and the queue to finish. */
    const message = async (status: number) => {
      answer = status;
      const item = await createItem(owner, `Status ${status}`);
      const expected = status === 500 ? ATTEMPTS : 1;
      await waitFor(`${expected} attempt(s) of the message of ${item.id}`, () => inbox.about(item.id).length >= expected);
      await queueIdle();
      expect(inbox.about(item.id)).toHaveLength(expected);
      return item;
    };

    const failed = await message(500);
    const attempts = (await waitForDeliveries(owner, endpoint.id, ATTEMPTS)).filter((d) => d.message_id === inbox.about(failed.id)[0]!.id);
    expect(attempts.map((d) => d.attempt)).toEqual([4, 3, 2, 1]);
    expect(attempts.every((d) => d.status === "failed" && d.response_status === 500 && d.error === null)).toBe(true);
    expect(attempts[0].next_attempt_at).toBeNull();
    expect(attempts.slice(1).every((d: any) => d.next_attempt_at !== null)).toBe(true);
    expect(await getEndpoint(owner, endpoint.id)).toMatchObject({ status: "enabled", disabled_reason: null });

    await message(204); // resets the run
    await message(500);
    await message(500);
    expect(await getEndpoint(owner, endpoint.id)).toMatchObject({ status: "enabled", disabled_reason: null });
    // A test message delivered in between neither counts nor ends the run.
    answer = 204;
    const test = await owner.post(`/webhook-endpoints/${endpoint.id}/test`, {});
    expect(test.status, test.text).toBe(202);
    await waitFor("the test message", () => inbox.messages.some((m) => m.id === test.body.message_id));
    await queueIdle();
    await message(500); // the third in a row
    await waitFor("the endpoint to be disabled", async () => (await getEndpoint(owner, endpoint.id)).status === "disabled");
    const disabled = await getEndpoint(owner, endpoint.id);
    expect(disabled).toMatchObject({ status: "disabled", disabled_reason: "failing" });
    // The list pages through every attempt, newest first, and its total counts them.
    const all = (await deliveriesOf(owner, endpoint.id, { limit: 100 })).body;
    expect(all.pagination.total_records).toBe(4 * ATTEMPTS + 2);
    expect(all.data).toHaveLength(4 * ATTEMPTS + 2);
    const paged: any[] = [];
    for (let page = 1; page <= 4; page++) {
      const listed = (await deliveriesOf(owner, endpoint.id, { limit: 5, page })).body;
      expect(listed.pagination).toMatchObject({ page, per_page: 5, total_pages: 4, total_records: 4 * ATTEMPTS + 2 });
      expect(listed.has_more).toBe(page < 4);
      paged.push(...listed.data);
    }
    expect(paged).toEqual(all.data);
    const times = all.data.map((d: any) => d.created_at);
    expect(times).toEqual([...times].sort().reverse());

    // Disabled: a change is not sent (nor later, once enabled again).
    answer = 204;
    const seq = await headOf(account.accountId);
    const skipped = await createItem(owner, "While disabled");
    await settle(account.accountId, seq);
    expect(inbox.about(skipped.id)).toEqual([]);

    const enabled = await owner.patch(`/webhook-endpoints/${endpoint.id}`, { status: "enabled" });
    expect(enabled.status, enabled.text).toBe(200);
    expect(enabled.body).toMatchObject({ status: "enabled", disabled_reason: null });
    const resumed = await message(204);
    expect(inbox.about(resumed.id)[0]!.verifiedWith).toEqual([endpoint.secret]);
    expect(inbox.about(skipped.id)).toEqual([]);
    const latest = (await waitForDeliveries(owner, endpoint.id, 4 * ATTEMPTS + 2))[0];
    expect(latest).toMatchObject({ message_id: inbox.about(resumed.id)[0]!.id, attempt: 1, status: "succeeded", response_status: 204 });
    // After re-enabling, the run starts again from 0: two more failures do not disable it.
    await message(500);
    await message(500);
    expect(await getEndpoint(owner, endpoint.id)).toMatchObject({ status: "enabled", disabled_reason: null });
  });

  it("a redirect is a failed attempt (its status recorded) and is not followed; a 200 with a body succeeds", async () => {
    const { owner } = await ownerOf();
    const { endpoint, inbox } = await endpointOn(owner, { resources: ["item"] });
    const elsewhere = webhooks.receiver.inbox();
    inbox.respond = (message): Answer =>
      message.attempt === 1
        ? { status: 307, headers: { location: elsewhere.url } }
        : { status: 200, headers: { "content-type": "text/plain" }, body: "thanks" };
    const sent = await owner.post(`/webhook-endpoints/${endpoint.id}/test`);
    expect(sent.status, sent.text).toBe(202);
    const [second, first] = (await waitForDeliveries(owner, endpoint.id, 2)) as [any, any];
    expect(first).toMatchObject({ message_id: sent.body.message_id, attempt: 1, status: "failed", response_status: 307, error: null });
    expect(second).toMatchObject({ message_id: sent.body.message_id, attempt: 2, status: "succeeded", response_status: 200, error: null });
    await queueIdle();
    expect(elsewhere.messages).toEqual([]);
    expect(inbox.withId(sent.body.message_id)).toHaveLength(2);
  });

  it("a connection dropped unanswered is connection_reset; a closed port is connection_refused", async () => {
    const { owner } = await ownerOf();
    const { endpoint, inbox } = await endpointOn(owner, { resources: ["item"] });
    inbox.respond = (message) => (message.attempt === 1 ? "reset" : 204);
    const reset = await owner.post(`/webhook-endpoints/${endpoint.id}/test`);
    expect(reset.status, reset.text).toBe(202);
    const [second, first] = (await waitForDeliveries(owner, endpoint.id, 2)) as [any, any];
    expect(first).toMatchObject({ attempt: 1, status: "failed", response_status: null, error: "connection_reset" });
    expect(second).toMatchObject({ attempt: 2, status: "succeeded", response_status: 204 });

    const closed = await closedPort();
    const refused = await owner.post("/webhook-endpoints", { url: `http://127.0.0.1:${closed}/hooks`, resources: ["item"] });
    expect(refused.status, refused.text).toBe(201);
    const test = await owner.post(`/webhook-endpoints/${refused.body.id}/test`);
    expect(test.status, test.text).toBe(202);
    const attempts = await waitForDeliveries(owner, refused.body.id, ATTEMPTS);
    expect(attempts.map((d) => d.attempt)).toEqual([4, 3, 2, 1]);
    for (const attempt of attempts) expect(attempt).toMatchObject({ status: "failed", response_status: null, error: "connection_refused" });
  });

  it("test messages that fail every attempt do not disable the endpoint", async () => {
    const { owner } = await ownerOf();
    const { endpoint, inbox } = await endpointOn(owner, { resources: ["item"] });
    inbox.respond = () => 503;
    for (let i = 0; i < 3; i++) {
      const sent = await owner.post(`/webhook-endpoints/${endpoint.id}/test`);
      expect(sent.status, sent.text).toBe(202);
      await waitFor("every attempt of the test message", () => inbox.withId(sent.body.message_id).length >= ATTEMPTS);
      await queueIdle();
    }
    expect(inbox.messages).toHaveLength(3 * ATTEMPTS);
    expect(await getEndpoint(owner, endpoint.id)).toMatchObject({ status: "enabled", disabled_reason: null });
  });
});

describe("webhook delivery: deletion", () => {
  it("a deleted endpoint receives nothing more: a later change is not sent (the account's other endpoint gets it)", async () => {
    const { account, owner } = await ownerOf();
    const gone = await endpointOn(owner, { resources: ["item"] });
    const kept = await endpointOn(owner, { resources: ["item"] });
    const deleted = await owner.request("DELETE", `/webhook-endpoints/${gone.endpoint.id}`);
    expect(deleted.status, deleted.text).toBe(200);
    const seq = await headOf(account.accountId);
    const item = await createItem(owner);
    await waitFor("the item's message at the kept endpoint", () => kept.inbox.about(item.id).length > 0);
    await settle(account.accountId, seq);
    expect(gone.inbox.messages).toEqual([]);
    expect(webhooks.receiver.messages.filter((m) => m.path === gone.inbox.path)).toEqual([]);
  });

  /**
   * An item's attempts failing (500), the last of `failing` held open until `change` (an
   * endpoint write, or a change of its user) has answered: its retry waits. The endpoint is the
   * owner's, or that of `creator` (a user of the account). Returns the item, the endpoint and its
   * inbox, the feed settled.
   */
  async function attemptFailingAfter(
    change: (owner: ApiClient, endpointId: string) => Promise<TestResponse | undefined>,
    options: { failing?: number; creator?: (account: TestAccount) => Promise<ApiClient>; resources?: string[] } = {},
  ) {
    const failing = options.failing ?? 1;
    const { account, owner } = await ownerOf();
    const { endpoint, inbox } = await endpointOn(options.creator ? await options.creator(account) : owner, { resources: options.resources ?? ["item"] });
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    inbox.respond = async (message) => {
      if (message.attempt > failing) return 204;
      if (message.attempt === failing) await released;
      return 500;
    };
    const item = await createItem(owner);
    await waitFor(`attempt ${failing}`, () => inbox.about(item.id).length >= failing);
    const changed = await change(owner, endpoint.id);
    if (changed) expect(changed.status, changed.text).toBe(200);
    release();
    await settle(account.accountId, 0);
    return { owner, endpoint, inbox, item };
  }
  const firstAttemptFailingAfter = (change: (owner: ApiClient, endpointId: string) => Promise<TestResponse>) => attemptFailingAfter(change);

  it("deleting an endpoint while a message waits for its retry drops the retry", async () => {
    const { inbox, item } = await firstAttemptFailingAfter((owner, id) => owner.request("DELETE", `/webhook-endpoints/${id}`));
    expect(inbox.about(item.id)).toHaveLength(1);
    expect(inbox.messages).toHaveLength(1);
  });

  it("disabling an endpoint while a message waits for its retry drops the retry, and its attempt no longer shows a next_attempt_at", async () => {
    const { owner, endpoint, inbox, item } = await firstAttemptFailingAfter((client, id) => client.patch(`/webhook-endpoints/${id}`, { status: "disabled" }));
    expect(inbox.about(item.id)).toHaveLength(1);
    const deliveries = (await deliveriesOf(owner, endpoint.id)).body.data;
    expect(deliveries).toHaveLength(1);
    expect(deliveries[0]).toMatchObject({ attempt: 1, status: "failed", response_status: 500, next_attempt_at: null });
  });

  it("a retry dropped after two attempts clears only the planned attempt of the second: the first's retry did run", async () => {
    const { owner, endpoint, inbox, item } = await attemptFailingAfter((client, id) => client.patch(`/webhook-endpoints/${id}`, { status: "disabled" }), {
      failing: 2,
    });
    expect(inbox.about(item.id)).toHaveLength(2);
    const [second, first] = (await deliveriesOf(owner, endpoint.id)).body.data;
    expect(second).toMatchObject({ attempt: 2, next_attempt_at: null });
    expect(first).toMatchObject({ attempt: 1, next_attempt_at: expect.stringMatching(ISO) });
  });

  it("disabling and enabling again while a message waits for its retry still drops it (later changes arrive)", async () => {
    const { owner, endpoint, inbox, item } = await attemptFailingAfter(async (client, id) => {
      expect((await client.patch(`/webhook-endpoints/${id}`, { status: "disabled" })).status).toBe(200);
      return client.patch(`/webhook-endpoints/${id}`, { status: "enabled" });
    });
    expect(inbox.about(item.id)).toHaveLength(1);
    expect(await getEndpoint(owner, endpoint.id)).toMatchObject({ status: "enabled", disabled_reason: null });
    const later = await createItem(owner, "Later");
    await waitFor("the later item's message", () => inbox.about(later.id).length > 0);
  });

  it("an endpoint that stops selecting the message's resource while it waits for its retry: the retry is not sent (its other resources still arrive)", async () => {
    const { owner, endpoint, inbox, item } = await attemptFailingAfter((client, id) => client.patch(`/webhook-endpoints/${id}`, { resources: ["invoice"] }), {
      resources: ["invoice", "item"],
    });
    expect(inbox.about(item.id)).toHaveLength(1);
    const deliveries = (await deliveriesOf(owner, endpoint.id)).body.data;
    expect(deliveries).toHaveLength(1);
    expect(deliveries[0]).toMatchObject({ attempt: 1, status: "failed", next_attempt_at: null });
    expect(await getEndpoint(owner, endpoint.id)).toMatchObject({ status: "enabled", resources: ["invoice"] });
    const customer = (await owner.post("/customers", { name: "Buyer" })).body;
    const invoice = (await owner.post("/invoices", { customer_id: customer.id, lines: [{ name: "Service", unit_price: "1" }] })).body;
    await waitFor("the invoice's message", () => inbox.about(invoice.id).length > 0);
  });

  it("the endpoint's user losing the right while a message waits for its retry: the retry is not sent, the endpoint is disabled (permission_revoked)", async () => {
    let userId = "";
    const { owner, endpoint, inbox, item } = await attemptFailingAfter(
      async () => {
        await updateUser(userId, { permissions: ["inventory.modify"] });
        return undefined;
      },
      {
        creator: async (account) => {
          const staff = await newUser(account, { permissions: ["inventory.list", "inventory.modify"] });
          userId = staff.userId;
          return api().withKey(staff.key);
        },
      },
    );
    expect(inbox.about(item.id)).toHaveLength(1);
    expect(await getEndpoint(owner, endpoint.id)).toMatchObject({ status: "disabled", disabled_reason: "permission_revoked" });
  });
});

describe("webhook delivery: at least once, when a fan-out fails", () => {
  /** An endpoint of [item], an item whose upsert has arrived, and the feed settled. */
  async function deliveredItem() {
    const { account, owner } = await ownerOf();
    const { endpoint, inbox } = await endpointOn(owner, { resources: ["item"] });
    const item = await createItem(owner);
    await waitFor("the item's upsert", () => inbox.about(item.id).length > 0);
    await settle(account.accountId, 0);
    const start = await owner.get("/sync", { start: "now", resources: "item" });
    expect(start.status, start.text).toBe(200);
    return { account, owner, endpoint, inbox, item, cursor: start.body.cursor as string };
  }

  it("the fan-out of an upsert fails once: the stream batch is retried and the upsert still arrives", async () => {
    const { account, owner, inbox, item } = await deliveredItem();
    const seq = await headOf(account.accountId);
    injected.failOnce.add(`${item.id}|upsert`);
    const renamed = await owner.patch(`/items/${item.id}`, { name: "Renamed" });
    expect(renamed.status, renamed.text).toBe(200);
    await waitFor("the injected failure", () => !injected.failOnce.has(`${item.id}|upsert`));
    await waitFor("the rename's upsert after the retry", () => inbox.about(item.id).length >= 2);
    await settle(account.accountId, seq);
    expect(inbox.about(item.id).every((m) => m.payload.type === "item.upsert")).toBe(true);
  });

  // The retried batch finds the record's pointer already at `delete` and writes no marker;
  // writeMarkers reports that delete again (with its sequence), so it is fanned out again.
  it("the fan-out of a delete fails once: the stream batch is retried and the delete still arrives", async () => {
    const { account, owner, inbox, item, cursor } = await deliveredItem();
    const seq = await headOf(account.accountId);
    injected.failOnce.add(`${item.id}|delete`);
    const deleted = await owner.request("DELETE", `/items/${item.id}`);
    expect(deleted.status, deleted.text).toBe(200);
    await waitFor("the injected failure", () => !injected.failOnce.has(`${item.id}|delete`));
    await settle(account.accountId, seq);
    // The feed reports the delete...
    const page = await owner.get("/sync", { cursor });
    expect(page.status, page.text).toBe(200);
    expect(page.body.changes).toContainEqual({ resource: "item", id: item.id, operation: "delete" });
    // ...and so must the endpoint (at least once).
    expect(inbox.about(item.id).map((m) => m.payload.type)).toContain("item.delete");
  });
});

describe("webhook delivery: addresses and load", () => {
  it("an https URL to a private, link-local or metadata address: create is allowed, each attempt fails with address_not_allowed", async () => {
    const { owner } = await ownerOf();
    const urls = ["https://10.0.0.1/hooks", "https://169.254.169.254/latest/meta-data", "https://[::ffff:192.168.1.1]/hooks", "https://[fd00:ec2::254]/"];
    const endpoints: Record<string, any>[] = [];
    for (const url of urls) {
      const created = await owner.post("/webhook-endpoints", { url, resources: ["item"] });
      expect(created.status, created.text).toBe(201);
      endpoints.push(created.body);
    }
    // A change goes to every one of them (fan-out), and a test message to the metadata one.
    await createItem(owner);
    const test = await owner.post(`/webhook-endpoints/${endpoints[1]!.id}/test`);
    expect(test.status, test.text).toBe(202);
    for (const endpoint of endpoints) {
      const deliveries = await waitForDeliveries(owner, endpoint.id, endpoint === endpoints[1] ? 2 * ATTEMPTS : ATTEMPTS);
      for (const delivery of deliveries) {
        expect(delivery, endpoint.url).toMatchObject({ status: "failed", response_status: null, error: "address_not_allowed" });
      }
      const first = deliveries.filter((d) => d.event_type === "item.upsert").at(-1);
      expect(first).toMatchObject({ attempt: 1, next_attempt_at: expect.stringMatching(ISO) });
    }
    const metadata = await waitForDeliveries(owner, endpoints[1]!.id, 2 * ATTEMPTS);
    expect(metadata.filter((d) => d.event_type === "webhook.test" && d.message_id === test.body.message_id)).toHaveLength(ATTEMPTS);
  });

  it(
    "100 parallel item creates: every change GET /sync reports reaches the endpoint at least once, and nothing else",
    async () => {
      const { account, owner } = await ownerOf();
      const { endpoint, inbox } = await endpointOn(owner, { resources: ["item"] });
      const start = await owner.get("/sync", { start: "now", resources: "item" });
      expect(start.status, start.text).toBe(200);
      const seq = await headOf(account.accountId);

      const items = await inBatches(100, (i) => createItem(owner, `Load ${i}`), 20);
      const created = new Set(items.map((item) => `item|${item.id}`));
      expect(created.size).toBe(100);

      const received = () => new Set(inbox.messages.map((m) => `${m.payload.data.resource}|${m.payload.data.id}`));
      await waitFor("a message about each of the 100 items", () => [...created].every((key) => received().has(key)), scaled(30_000));
      await settle(account.accountId, seq);

      // The feed since the start, read to its end.
      const reported = new Set<string>();
      let cursor = start.body.cursor as string;
      for (let round = 0; round < 20; round++) {
        const page = await owner.get("/sync", { cursor, limit: 500 });
        expect(page.status, page.text).toBe(200);
        for (const change of page.body.changes) reported.add(`${change.resource}|${change.id}`);
        cursor = page.body.next_cursor;
        if (!page.body.has_more) break;
      }
      expect([...reported].sort()).toEqual([...created].sort());
      expect([...received()].sort()).toEqual([...reported].sort());
      expect(inbox.messages.every((m) => m.verifiedWith.length === 1 && m.payload.type === "item.upsert")).toBe(true);
      // Every message was recorded once (all succeeded first time), and the list's total agrees.
      const total = (await deliveriesOf(owner, endpoint.id)).body.pagination.total_records;
      expect(total).toBe(inbox.messages.length);
      expect(new Set(inbox.messages.map((m) => m.id)).size).toBe(inbox.messages.length);
    },
    scaled(60_000),
  );
});
