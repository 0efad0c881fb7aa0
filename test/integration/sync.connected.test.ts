import { beforeAll, describe, expect, it } from "vitest";
import { db } from "../../lib/db/service.js";
import { GetCommand } from "@aws-sdk/lib-dynamodb";
import { getDocumentClient } from "../../lib/db/client.js";
import { readHead } from "../../lib/db/sync.js";
import { indexOpenEstimateExpiries } from "../../lib/db/estimate-expiries.js";
import { markPassedEstimateExpiries } from "../../lib/domain/documents/estimates/expiries.js";
import { RESTORE_GAP } from "../../lib/db/sync-restore.js";
import { decodeCursor, encodeCursor } from "../../lib/sync/cursor.js";
import { useStreamPoller } from "../support/stream-poller.js";
import { useApiServer, type ApiClient, type TestResponse } from "../support/api.js";
import { expectError } from "../support/assertions.js";
import { idempotencyKey, newAccount, newKey, newUser, updateUser, type TestAccount } from "../support/fixtures.js";

/**
 * `GET /api/v3/sync` through HTTP (spec part 1, sections 2.7, 4.6, 4.7, 6, 7; architecture
 * sections 4 and 6), with the stream processor driven by the local poller against DynamoDB
 * Local. Every scenario uses a fresh account, so its feed holds only its own markers.
 */
const api = useApiServer();
const poller = useStreamPoller();

const DAY = 24 * 3600;
const ALL_RESOURCES = "estimate,invoice,item,purchase_order,sales_order";
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const nowSeconds = () => Math.floor(Date.now() / 1000);

interface Change {
  resource: string;
  id: string;
  operation: "upsert" | "delete";
}

/**
 * Waits until the stream has been processed and the account's feed head stays put (other test
 * files may run pollers over the same table: their late re-deliveries settle too).
 */
async function settle(accountId: string): Promise<void> {
  await poller.drain();
  await poller.drain();
  let head = (await readHead(accountId)).seq;
  let stable = 0;
  for (let round = 0; round < 40 && stable < 2; round++) {
    await sleep(60);
    await poller.drain();
    const next = (await readHead(accountId)).seq;
    stable = next === head ? stable + 1 : 0;
    head = next;
  }
}

async function startCursor(client: ApiClient, resources = "item"): Promise<string> {
  const response = await client.get("/sync", { start: "now", resources });
  expect(response.status, response.text).toBe(200);
  return response.body.cursor as string;
}

/** Reads the feed from a cursor to its end: every change in order, the pages and the last cursor. */
async function consume(client: ApiClient, cursor: string, limit = 100) {
  const changes: Change[] = [];
  const pages: TestResponse[] = [];
  for (let round = 0; round < 50; round++) {
    const page = await client.get("/sync", { cursor, limit });
    expect(page.status, page.text).toBe(200);
    pages.push(page);
    changes.push(...(page.body.changes as Change[]));
    cursor = page.body.next_cursor;
    if (!page.body.has_more) break;
  }
  return { changes, pages, cursor };
}

async function createItem(client: ApiClient, name: string, extra: Record<string, unknown> = {}) {
  const created = await client.post("/items", { name, ...extra });
  expect(created.status, created.text).toBe(201);
  return created.body as { id: string; created_at: string; name: string };
}

async function createLocation(client: ApiClient, name = "Main"): Promise<string> {
  const created = await client.post("/locations", { name, short_name: name.slice(0, 5) }, { idempotencyKey: idempotencyKey() });
  expect(created.status, created.text).toBe(201);
  return created.body.id as string;
}

/** `YYYY-MM-DDTHH:MM:SS` of an epoch second in a fixed offset (minutes east of UTC). */
function isoAt(second: number, offsetMinutes: number): string {
  const local = new Date((second + offsetMinutes * 60) * 1000).toISOString().slice(0, 19);
  if (offsetMinutes === 0) return `${local}+00:00`;
  const sign = offsetMinutes > 0 ? "+" : "-";
  const abs = Math.abs(offsetMinutes);
  return `${local}${sign}${String(Math.floor(abs / 60)).padStart(2, "0")}:${String(abs % 60).padStart(2, "0")}`;
}

describe("start=now", () => {
  it("returns exactly {object: sync_start, resources (sorted), retention_days: 90, cursor}", async () => {
    const account = await newAccount();
    const client = api().withKey(account.ownerKey);
    const response = await client.get("/sync", { start: "now", resources: "item,invoice" });
    expect(response.status, response.text).toBe(200);
    expect(response.body).toEqual({ object: "sync_start", resources: ["invoice", "item"], retention_days: 90, cursor: expect.any(String) });
    expect(Object.keys(response.body).sort()).toEqual(["cursor", "object", "resources", "retention_days"]);
    expect(response.body.cursor.length).toBeGreaterThan(0);

    const all = await client.get("/sync", { start: "now", resources: "sales_order,item,estimate,item,purchase_order,invoice" });
    expect(all.status, all.text).toBe(200);
    expect(all.body.resources).toEqual(["estimate", "invoice", "item", "purchase_order", "sales_order"]);

    // Nothing happened since the checkpoint: an empty, final sync_page.
    const page = await client.get("/sync", { cursor: response.body.cursor });
    expect(page.status, page.text).toBe(200);
    expect(page.body).toEqual({ object: "sync_page", resources: ["invoice", "item"], changes: [], has_more: false, next_cursor: expect.any(String) });
  });
});

describe("since", () => {
  it("epoch seconds, ISO 8601 with +00:00 or another offset, and the boundary second included", async () => {
    const account = await newAccount();
    const client = api().withKey(account.ownerKey);
    const before = nowSeconds() - 1;
    const item = await createItem(client, "Since widget");
    await settle(account.accountId);
    const expected = [{ resource: "item", id: item.id, operation: "upsert" }];

    const epoch = await client.get("/sync", { since: String(before), resources: "item" });
    expect(epoch.status, epoch.text).toBe(200);
    expect(epoch.body).toEqual({ object: "sync_page", resources: ["item"], changes: expected, has_more: false, next_cursor: expect.any(String) });

    // The client URL-encodes "+" as %2B.
    const iso = await client.get("/sync", { since: isoAt(before, 0), resources: "item" });
    expect(iso.status, iso.text).toBe(200);
    expect(iso.body.changes).toEqual(expected);
    const offset = await client.get("/sync", { since: isoAt(before, 120), resources: "item" });
    expect(offset.status, offset.text).toBe(200);
    expect(offset.body.changes).toEqual(expected);
    const zulu = await client.get("/sync", { since: new Date(before * 1000).toISOString().replace(".000Z", "Z"), resources: "item" });
    expect(zulu.status, zulu.text).toBe(200);
    expect(zulu.body.changes).toEqual(expected);

    // The second of the write itself is included.
    const writeSecond = Math.floor(Date.parse(item.created_at) / 1000);
    const boundary = await client.get("/sync", { since: String(writeSecond), resources: "item" });
    expect(boundary.status, boundary.text).toBe(200);
    expect(boundary.body.changes).toEqual(expected);

    // The feed uses the change log's time: the marker's own second is included, the next one is not.
    const { data: markers } = await db().entities.syncMarker.query.primary({ accountId: account.accountId }).go({ consistent: true });
    expect(markers.map((m) => m.recordId)).toEqual([item.id]);
    const markerSecond = Math.floor(markers[0]!.at / 1000);
    const atMarker = await client.get("/sync", { since: String(markerSecond), resources: "item" });
    expect(atMarker.status, atMarker.text).toBe(200);
    expect(atMarker.body.changes).toEqual(expected);
    while (nowSeconds() <= markerSecond) await sleep(50);
    const after = await client.get("/sync", { since: String(markerSecond + 1), resources: "item" });
    expect(after.status, after.text).toBe(200);
    expect(after.body).toMatchObject({ changes: [], has_more: false });

    // Other resources selected: the item marker is not listed.
    const invoices = await client.get("/sync", { since: String(before), resources: "invoice" });
    expect(invoices.status, invoices.text).toBe(200);
    expect(invoices.body).toMatchObject({ resources: ["invoice"], changes: [], has_more: false });

    // Continuing from since's next_cursor brings nothing new.
    const next = await client.get("/sync", { cursor: epoch.body.next_cursor });
    expect(next.status, next.text).toBe(200);
    expect(next.body).toMatchObject({ changes: [], has_more: false });
  });
});

describe("cursor paging and compaction", () => {
  it("7 items with limit=3: pages with has_more true, true, false listing each id once", async () => {
    const account = await newAccount();
    const client = api().withKey(account.ownerKey);
    const cursor = await startCursor(client);
    const ids: string[] = [];
    for (let i = 0; i < 7; i++) ids.push((await createItem(client, `Paged ${i}`)).id);
    await settle(account.accountId);

    const { changes, pages, cursor: last } = await consume(client, cursor, 3);
    expect(pages.map((p) => p.body.has_more)).toEqual([true, true, false]);
    expect(pages.map((p) => p.body.changes.length)).toEqual([3, 3, 1]);
    for (const page of pages) {
      expect(page.body.object).toBe("sync_page");
      expect(page.body.resources).toEqual(["item"]);
    }
    expect(changes.every((c) => c.resource === "item" && c.operation === "upsert")).toBe(true);
    expect(changes.map((c) => c.id).sort()).toEqual([...ids].sort());
    expect(new Set(changes.map((c) => c.id)).size).toBe(7);

    const end = await client.get("/sync", { cursor: last, limit: 3 });
    expect(end.status, end.text).toBe(200);
    expect(end.body).toMatchObject({ changes: [], has_more: false });

    // limit counts markers examined: with another resource selected, the pages are empty but
    // has_more still says to continue (spec 4.7 rule 4).
    const since = await client.get("/sync", { since: String(nowSeconds() - 60), resources: "invoice", limit: 3 });
    expect(since.status, since.text).toBe(200);
    expect(since.body).toMatchObject({ changes: [], has_more: true });
    const rest = await consume(client, since.body.next_cursor, 3);
    expect(rest.changes).toEqual([]);
    expect(rest.pages.map((p) => p.body.has_more)).toEqual([true, false]);
  });

  it("deleting an item yields a delete change", async () => {
    const account = await newAccount();
    const client = api().withKey(account.ownerKey);
    const item = await createItem(client, "Doomed");
    await settle(account.accountId);
    const cursor = await startCursor(client);
    const deleted = await client.request("DELETE", `/items/${item.id}`);
    expect(deleted.status, deleted.text).toBe(200);
    await settle(account.accountId);
    const { changes } = await consume(client, cursor);
    expect(changes).toEqual([{ resource: "item", id: item.id, operation: "delete" }]);

    // The documented client removes it; a fetch by id confirms it is gone.
    const fetched = await client.get("/items", { ids: item.id });
    expect(fetched.status, fetched.text).toBe(200);
    expect(fetched.body.data).toEqual([]);
  });

  it("several updates of an item yield one marker after compaction", async () => {
    const account = await newAccount();
    const client = api().withKey(account.ownerKey);
    const item = await createItem(client, "Busy");
    const other = await createItem(client, "Quiet");
    await settle(account.accountId);
    const cursor = await startCursor(client);
    for (let i = 0; i < 4; i++) {
      const updated = await client.patch(`/items/${item.id}`, { name: `Busy ${i}`, price: i + 1 });
      expect(updated.status, updated.text).toBe(200);
    }
    const archived = await client.patch(`/items/${item.id}`, { archived: true });
    expect(archived.status, archived.text).toBe(200);
    await settle(account.accountId);
    const { changes } = await consume(client, cursor);
    expect(changes).toEqual([{ resource: "item", id: item.id, operation: "upsert" }]);
    expect(changes.some((c) => c.id === other.id)).toBe(false);
  });
});

describe("what marks and what does not", () => {
  let account: TestAccount;
  let client: ApiClient;
  let location: string;
  let item: { id: string };

  beforeAll(async () => {
    account = await newAccount();
    client = api().withKey(account.ownerKey);
    location = await createLocation(client, "Store");
    item = await createItem(client, "Stocked", { location_id: location });
    await settle(account.accountId);
  });

  it("an adjustment of an item's stock marks the item with upsert", async () => {
    const cursor = await startCursor(client);
    const first = await client.post(`/items/${item.id}/adjustments`, { location_id: location, quantity: 5, reason: "count" });
    expect(first.status, first.text).toBe(201);
    await settle(account.accountId);
    const afterFirst = await consume(client, cursor);
    expect(afterFirst.changes).toEqual([{ resource: "item", id: item.id, operation: "upsert" }]);

    const second = await client.post(`/items/${item.id}/adjustments`, { location_id: location, quantity: -2, reason: "damage" });
    expect(second.status, second.text).toBe(201);
    await settle(account.accountId);
    const afterSecond = await consume(client, afterFirst.cursor);
    expect(afterSecond.changes).toEqual([{ resource: "item", id: item.id, operation: "upsert" }]);
  });

  it("a custom field deleted from an item category: its items drop their values (updated_at kept) and are marked with upsert", async () => {
    const category = await client.post("/item-categories", {
      name: "Tools",
      inventory_type: "quantity",
      custom_fields: [{ name: "Voltage" }, { name: "Plug" }],
    });
    expect(category.status, category.text).toBe(201);
    const [voltage, plug] = category.body.custom_fields.map((field: { id: string }) => field.id);
    const values = [
      { custom_field_id: voltage, value: "230V" },
      { custom_field_id: plug, value: "Type G" },
    ];
    const holding = await createItem(client, "Kettle", { category_id: category.body.id, custom_field_values: values });
    const other = await createItem(client, "Lamp", { category_id: category.body.id, custom_field_values: [values[1]] });
    await settle(account.accountId);
    const cursor = await startCursor(client);
    const kept = await client.patch(`/item-categories/${category.body.id}`, { custom_fields: [{ id: plug, name: "Plug" }] });
    expect(kept.status, kept.text).toBe(200);
    await settle(account.accountId);
    const { changes } = await consume(client, cursor);
    expect(changes).toEqual([{ resource: "item", id: holding.id, operation: "upsert" }]);
    const stored = await db().entities.item.get({ accountId: account.accountId, itemId: holding.id }).go();
    expect(stored.data?.customFieldValues).toEqual([{ id: plug, value: "Type G" }]);
    expect(stored.data?.updatedAt).toBe(holding.created_at);
    expect((await client.get(`/items/${other.id}`)).body.custom_field_values).toEqual([values[1]]);
  });

  it("reads publish nothing: the head does not move", async () => {
    await settle(account.accountId);
    const headBefore = await readHead(account.accountId);
    const cursor = await startCursor(client, ALL_RESOURCES);
    const reads = [
      await client.get("/items"),
      await client.get("/items", { archived: "all", include_sold: "true" }),
      await client.get("/items", { ids: item.id }),
      await client.get(`/items/${item.id}`),
      await client.get(`/items/${item.id}/variations`),
      await client.get(`/items/${item.id}/variations`, { include: "locations" }),
      await client.get(`/items/${item.id}/adjustments`),
      await client.get("/locations"),
      await client.get("/item-categories"),
    ];
    for (const read of reads) expect(read.status, read.text).toBe(200);
    await settle(account.accountId);
    const page = await client.get("/sync", { cursor });
    expect(page.status, page.text).toBe(200);
    expect(page.body).toMatchObject({ changes: [], has_more: false });
    expect(decodeCursor(page.body.next_cursor)!.p).toBe(decodeCursor(cursor)!.p);
    expect((await readHead(account.accountId)).seq).toBe(headBefore.seq);
  });

  it("customers, suppliers, prospects, contacts, locations and categories publish no markers", async () => {
    await settle(account.accountId);
    const headBefore = await readHead(account.accountId);
    const cursor = await startCursor(client, ALL_RESOURCES);
    const writes = [
      await client.post("/customers", { name: "Buyer" }),
      await client.post("/suppliers", { name: "Maker" }),
      await client.post("/prospects", { name: "Maybe" }),
      await client.post("/contacts", { first_name: "Someone" }),
      await client.post("/locations", { name: "Annex", short_name: "ANX" }, { idempotencyKey: idempotencyKey() }),
      await client.post("/item-categories", { name: "Widgets", inventory_type: "quantity" }),
    ];
    for (const write of writes) expect(write.status, write.text).toBe(201);
    await settle(account.accountId);
    const { changes, cursor: last } = await consume(client, cursor);
    expect(changes).toEqual([]);
    expect(decodeCursor(last)!.p).toBe(decodeCursor(cursor)!.p);
    expect((await readHead(account.accountId)).seq).toBe(headBefore.seq);
  });
});

describe("errors", () => {
  let account: TestAccount;
  let client: ApiClient;
  let cursor: string;

  beforeAll(async () => {
    account = await newAccount();
    client = api().withKey(account.ownerKey);
    cursor = await startCursor(client);
  });

  it("a tampered or malformed cursor is 400 sync_cursor_invalid", async () => {
    const [version, body, signature] = cursor.split(".") as [string, string, string];
    const flippedSignature = `${version}.${body}.${(signature[0] === "A" ? "B" : "A") + signature.slice(1)}`;
    const payload = decodeCursor(cursor)!;
    const otherBody = Buffer.from(JSON.stringify({ ...payload, p: payload.p + 1000 })).toString("base64url");
    for (const bad of [flippedSignature, `${version}.${otherBody}.${signature}`, `v2.${body}.${signature}`, "garbage", "v1..", ""]) {
      expectError(await client.get("/sync", { cursor: bad }), 400, "sync_cursor_invalid");
    }
  });

  it("a cursor of another user of the same account, or of another account, is 403 sync_cursor_owner_mismatch", async () => {
    const colleague = await newUser(account, { permissions: ["inventory.list"] });
    expectError(await api().withKey(colleague.key).get("/sync", { cursor }), 403, "sync_cursor_owner_mismatch");
    // The colleague's own cursor works for the colleague, not for the owner.
    const theirs = await startCursor(api().withKey(colleague.key));
    expect((await api().withKey(colleague.key).get("/sync", { cursor: theirs })).status).toBe(200);
    expectError(await client.get("/sync", { cursor: theirs }), 403, "sync_cursor_owner_mismatch");

    const stranger = await newAccount();
    expectError(await api().withKey(stranger.ownerKey).get("/sync", { cursor }), 403, "sync_cursor_owner_mismatch");
  });

  it("a change of the user's permissions makes an old cursor 409 sync_scope_changed", async () => {
    const user = await newUser(account, { permissions: ["inventory.list"] });
    const userClient = api().withKey(user.key);
    const old = await startCursor(userClient);
    expect((await userClient.get("/sync", { cursor: old })).status).toBe(200);
    await updateUser(user.userId, { permissions: ["inventory.list", "costs.view"] });
    expectError(await userClient.get("/sync", { cursor: old }), 409, "sync_scope_changed");
    // A new checkpoint under the new permissions works.
    const fresh = await startCursor(userClient);
    expect((await userClient.get("/sync", { cursor: fresh })).status).toBe(200);
    // A change that takes syncing its resources away is a change too (architecture section 4:
    // "any change ... makes an old sync cursor 409"); the rebuild's start=now says what is missing.
    const branch = await createLocation(client, "Sync branch");
    await updateUser(user.userId, { permissions: ["inventory.list", "costs.view"], locationId: branch });
    expectError(await userClient.get("/sync", { cursor: fresh }), 409, "sync_scope_changed", "cursor");
    expectError(await userClient.get("/sync", { start: "now", resources: "item" }), 403, "sync_permission_denied", "resources");
  });

  it("an edit that changes nothing the user may do keeps its cursors: an owner's stored permissions", async () => {
    const ownerClient = api().withKey(account.ownerKey);
    const cursor = await startCursor(ownerClient);
    await updateUser(account.ownerUserId, { permissions: ["inventory.list"] });
    expect((await ownerClient.get("/sync", { cursor })).status).toBe(200);
  });

  it("another key of the same user with other scopes gets 409 sync_scope_changed for the old cursor", async () => {
    const narrow = await newKey(account.ownerUserId, { scopes: ["items:read"] });
    expectError(await api().withKey(narrow.key).get("/sync", { cursor }), 409, "sync_scope_changed");
  });

  it("a cursor older than the retained history is 409 sync_cursor_expired", async () => {
    const payload = decodeCursor(cursor)!;
    const young = encodeCursor({ ...payload, t: payload.t - 89 * DAY });
    expect((await client.get("/sync", { cursor: young })).status).toBe(200);
    const expired = encodeCursor({ ...payload, t: payload.t - 91 * DAY });
    expectError(await client.get("/sync", { cursor: expired }), 409, "sync_cursor_expired");
  });

  it("a key without items:read asking for items is 403 sync_permission_denied; scopes of other resources are not needed", async () => {
    const invoicesOnly = await newKey(account.ownerUserId, { scopes: ["invoices:read"] });
    const invoicesClient = api().withKey(invoicesOnly.key);
    const noScope = await invoicesClient.get("/sync", { start: "now", resources: "item" });
    expectError(noScope, 403, "sync_permission_denied", "resources");
    expect(noScope.body.error.message).toBe("Syncing item requires the items:read scope.");
    expectError(await invoicesClient.get("/sync", { since: String(nowSeconds() - 60), resources: "item" }), 403, "sync_permission_denied");
    expectError(await invoicesClient.get("/sync", { start: "now", resources: "invoice,item" }), 403, "sync_permission_denied");
    expect((await invoicesClient.get("/sync", { start: "now", resources: "invoice" })).status).toBe(200);

    const itemsOnly = await newKey(account.ownerUserId, { scopes: ["items:read"] });
    const itemsClient = api().withKey(itemsOnly.key);
    expectError(await itemsClient.get("/sync", { start: "now", resources: "invoice" }), 403, "sync_permission_denied");
    expect((await itemsClient.get("/sync", { start: "now", resources: "item" })).status).toBe(200);
  });

  it("a location-restricted user is 403 sync_permission_denied", async () => {
    const location = await createLocation(client, "Branch");
    const restricted = await newUser(account, { permissions: ["inventory.list", "records.view_all", "invoices.list"], locationId: location });
    const restrictedClient = api().withKey(restricted.key);
    expect((await restrictedClient.get("/items")).status).toBe(200);
    expectError(await restrictedClient.get("/sync", { start: "now", resources: "item" }), 403, "sync_permission_denied", "resources");
    expectError(await restrictedClient.get("/sync", { since: String(nowSeconds() - 60), resources: "item" }), 403, "sync_permission_denied");
  });

  it("a user without inventory.list, or without account-wide visibility of invoices, is 403 sync_permission_denied", async () => {
    const noInventory = await newUser(account, { permissions: ["records.view_all", "invoices.list", "inventory.modify"] });
    const noInventoryClient = api().withKey(noInventory.key);
    expectError(await noInventoryClient.get("/sync", { start: "now", resources: "item" }), 403, "sync_permission_denied", "resources");
    expect((await noInventoryClient.get("/sync", { start: "now", resources: "invoice" })).status).toBe(200);

    const ownInvoicesOnly = await newUser(account, { permissions: ["inventory.list", "invoices.list"] });
    const ownClient = api().withKey(ownInvoicesOnly.key);
    expectError(await ownClient.get("/sync", { start: "now", resources: "invoice" }), 403, "sync_permission_denied");
    expect((await ownClient.get("/sync", { start: "now", resources: "item" })).status).toBe(200);
  });

  it("parameter errors are 400 invalid_query_parameter naming the parameter", async () => {
    const now = nowSeconds();
    expectError(await client.get("/sync", { modifiedSince: String(now - 60), resources: "item" }), 400, "invalid_query_parameter", "modifiedSince");
    expectError(await client.get("/sync", { start: "now", resources: "item", page: 2 }), 400, "invalid_query_parameter", "page");
    expectError(await client.get("/sync", { start: "now", since: String(now - 60), resources: "item" }), 400, "invalid_query_parameter");
    expectError(await client.get("/sync", { resources: "item" }), 400, "invalid_query_parameter");
    expectError(await client.get("/sync", { cursor, resources: "item" }), 400, "invalid_query_parameter", "resources");
    expectError(await client.get("/sync", { start: "now" }), 400, "invalid_query_parameter", "resources");
    expectError(await client.get("/sync", { start: "now", resources: "item,customer" }), 400, "invalid_query_parameter", "resources");
    expectError(await client.get("/sync", { start: "later", resources: "item" }), 400, "invalid_query_parameter", "start");
    for (const limit of ["0", "501", "abc", "1.5"]) {
      expectError(await client.get("/sync", { cursor, limit }), 400, "invalid_query_parameter", "limit");
    }
    expectError(await client.get("/sync", { since: String(now - 60), resources: "item", limit: 501 }), 400, "invalid_query_parameter", "limit");
    for (const since of [
      `${now - 60}000`,
      "1.7e9",
      `${now - 60}.5`,
      isoAt(now - 60, 0).replace("+00:00", ".5Z"),
      isoAt(now - 60, 0).replace("+00:00", ""),
      "2026-02-30T00:00:00Z",
      "-1",
    ]) {
      expectError(await client.get("/sync", { since, resources: "item" }), 400, "invalid_query_parameter", "since");
    }
    // An unencoded "+" arrives as a space: malformed.
    const raw = await fetch(`${client.baseUrl}/api/v3/sync?resources=item&since=${isoAt(now - 60, 60)}`, {
      headers: { authorization: `Bearer ${account.ownerKey}` },
    });
    expect(raw.status).toBe(400);
    expect(((await raw.json()) as { error: { code: string } }).error.code).toBe("invalid_query_parameter");
  });

  it("since in the future is 400; older than 90 days is 409 sync_full_refresh_required", async () => {
    const now = nowSeconds();
    expectError(await client.get("/sync", { since: String(now + 120), resources: "item" }), 400, "invalid_query_parameter", "since");
    expectError(await client.get("/sync", { since: isoAt(now + 3600, 0), resources: "item" }), 400, "invalid_query_parameter", "since");
    expectError(await client.get("/sync", { since: String(now - 91 * DAY), resources: "item" }), 409, "sync_full_refresh_required", "since");
    expectError(await client.get("/sync", { since: isoAt(now - 91 * DAY, -300), resources: "item" }), 409, "sync_full_refresh_required", "since");
    expect((await client.get("/sync", { since: String(now - 89 * DAY), resources: "item" })).status).toBe(200);
  });
});

describe("the documented procedure", () => {
  it("start=now, full download, create items, consume the feed, fetch the upserts by ids", async () => {
    const account = await newAccount();
    const client = api().withKey(account.ownerKey);
    const existing = await createItem(client, "Before the checkpoint");
    await settle(account.accountId);

    const cursor = await startCursor(client);
    const download = await client.get("/items", { archived: "all", include_sold: "true" });
    expect(download.status, download.text).toBe(200);
    const copy = new Map<string, string>(download.body.data.map((i: { id: string; name: string }) => [i.id, i.name]));
    expect([...copy.keys()]).toEqual([existing.id]);

    const created = [];
    for (const name of ["Alpha", "Bravo", "Charlie"]) created.push(await createItem(client, name));
    await settle(account.accountId);

    const { changes } = await consume(client, cursor, 2);
    const upserts = changes.filter((c) => c.operation === "upsert").map((c) => c.id);
    expect([...new Set(upserts)].sort()).toEqual(created.map((c) => c.id).sort());
    expect(changes.some((c) => c.id === existing.id)).toBe(false);

    const fetched = await client.get("/items", { ids: [...new Set(upserts)].join(",") });
    expect(fetched.status, fetched.text).toBe(200);
    for (const item of fetched.body.data as { id: string; name: string }[]) copy.set(item.id, item.name);
    expect(Object.fromEntries(copy)).toEqual({
      [existing.id]: "Before the checkpoint",
      ...Object.fromEntries(created.map((c) => [c.id, c.name])),
    });
  });
});

describe("after a point-in-time restore (docs/operations.md)", () => {
  it("an estimate that time makes Expired is marked once its expiry moment passes (the scheduled sweep), never before, never twice", async () => {
    const { accountId, ownerKey } = await newAccount();
    const client = api().withKey(ownerKey);
    const customer = (await client.post("/customers", { name: "Expiring Co" })).body;
    const estimate = async (expiry_date: string) => {
      const created = await client.post("/estimates", { customer_id: customer.id, expiry_date, lines: [{ name: "Survey", unit_price: "10" }] });
      expect(created.status, created.text).toBe(201);
      return created.body as { id: string };
    };
    const inDays = (days: number) => new Date(Date.now() + days * DAY * 1000).toISOString().slice(0, 10);
    const expiring = await estimate(inDays(2));
    const converted = await estimate(inDays(2));
    const moved = await estimate(inDays(2));
    expect((await client.post(`/estimates/${converted.id}/convert-to-invoice`, {})).status).toBe(201);
    expect((await client.patch(`/estimates/${moved.id}`, { expiry_date: inDays(20) })).status).toBe(200);
    // The raw item: the index keys are hidden from the entity's reads.
    const stored = async (id: string) => {
      const { Key, TableName } = db().entities.document.get({ accountId, documentId: id }).params() as { Key: Record<string, unknown>; TableName: string };
      return (await getDocumentClient().send(new GetCommand({ TableName, Key, ConsistentRead: true }))).Item as Record<string, string>;
    };
    const instant = (await stored(expiring.id)).expiryInstant!;
    expect((await stored(expiring.id)).ex1sk).toBe(`${instant}#${accountId}#${expiring.id}`);
    expect((await stored(converted.id)).ex1sk).toBeUndefined();
    await settle(accountId);
    let cursor = await startCursor(client, "estimate");

    // A moment before: nothing passed, nothing marked.
    const before = new Date(Date.parse(instant) - 1).toISOString();
    expect(await markPassedEstimateExpiries(before, accountId)).toBe(0);
    // At the moment: the estimate leaves the index and its upsert reaches the feed, once.
    expect(await markPassedEstimateExpiries(instant, accountId)).toBe(1);
    expect(await markPassedEstimateExpiries(instant, accountId)).toBe(0);
    expect((await stored(expiring.id)).ex1sk).toBeUndefined();
    await settle(accountId);
    const page = await consume(client, cursor);
    expect(page.changes).toEqual([{ resource: "estimate", id: expiring.id, operation: "upsert" }]);
    cursor = page.cursor;
    // The moved estimate's entry moved with it: a sweep a day after the old moment finds nothing.
    expect(await markPassedEstimateExpiries(new Date(Date.parse(instant) + DAY * 1000).toISOString(), accountId)).toBe(0);
    expect((await consume(client, cursor)).changes).toEqual([]);
  });

  it("open estimates written before the expiry index existed join it once (a table from an older version), and are then marked when they expire", async () => {
    const { accountId, ownerKey } = await newAccount();
    const client = api().withKey(ownerKey);
    const customer = (await client.post("/customers", { name: "Older Co" })).body;
    const expiry = new Date(Date.now() + 3 * DAY * 1000).toISOString().slice(0, 10);
    const older = (await client.post("/estimates", { customer_id: customer.id, expiry_date: expiry, lines: [{ name: "Survey", unit_price: "10" }] })).body;
    // As an older version wrote it: no index entry.
    await db().entities.document.patch({ accountId, documentId: older.id }).remove(["ex1pk", "ex1sk"]).go({ response: "none" });
    const { Key, TableName } = db().entities.document.get({ accountId, documentId: older.id }).params() as { Key: Record<string, unknown>; TableName: string };
    const stored = async () => (await getDocumentClient().send(new GetCommand({ TableName, Key, ConsistentRead: true }))).Item!;
    expect((await stored()).ex1sk).toBeUndefined();

    expect(await indexOpenEstimateExpiries()).toBeGreaterThanOrEqual(1);
    const instant = String((await stored()).expiryInstant);
    expect((await stored()).ex1sk).toBe(`${instant}#${accountId}#${older.id}`);
    // Indexed already: a repeat leaves it as it is.
    await indexOpenEstimateExpiries();
    expect((await stored()).ex1sk).toBe(`${instant}#${accountId}#${older.id}`);
    await settle(accountId);
    const cursor = await startCursor(client, "estimate");
    expect(await markPassedEstimateExpiries(instant, accountId)).toBe(1);
    await settle(accountId);
    expect((await consume(client, cursor)).changes).toEqual([{ resource: "estimate", id: older.id, operation: "upsert" }]);
  });

  it("a cursor positioned among the changes the restore lost, or past the head, is 409 sync_cursor_expired; one before them still pages", async () => {
    const account = await newAccount();
    const client = api().withKey(account.ownerKey);
    const start = await startCursor(client);
    for (const name of ["one", "two", "three"]) await createItem(client, name);
    await settle(account.accountId);
    const read = await consume(client, start);
    expect(read.changes).toHaveLength(3);
    const atThree = read.cursor;
    const three = decodeCursor(atThree)!.p;
    const atOne = encodeCursor({ ...decodeCursor(atThree)!, p: three - 2 });

    // What `table prepare-restored` leaves on a head restored to just after the first change
    // (lib/db/sync-restore.ts): the lost sequences noted, the head moved past them.
    const after = three - 2;
    const upTo = after + RESTORE_GAP;
    await db()
      .entities.syncHead.update({ accountId: account.accountId })
      .set({ seq: upTo, restoreGaps: [{ table: "restored-1", after, upTo }] })
      .go();
    const lost = await client.get("/sync", { cursor: atThree });
    expectError(lost, 409, "sync_cursor_expired", "cursor");
    expect(lost.body.error.message).toContain("rebuild with start=now");
    expect((await client.get("/sync", { cursor: atOne })).status).toBe(200);
    // New changes are numbered after the gap: a cursor issued now pages them.
    const fresh = await startCursor(client);
    await createItem(client, "four");
    await settle(account.accountId);
    const later = await consume(client, fresh);
    expect(later.changes.map((c) => c.operation)).toEqual(["upsert"]);
    // (The item's later stream records may move its marker on: the position is past upTo, not fixed.)
    expect(decodeCursor(later.cursor)!.p).toBeGreaterThan(upTo);

    // A restore whose feed was not carried forward: the head is behind the cursor.
    await db().entities.syncHead.update({ accountId: account.accountId }).set({ seq: 1 }).remove(["restoreGaps"]).go();
    expectError(await client.get("/sync", { cursor: later.cursor }), 409, "sync_cursor_expired");
  });
});
