import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { useApiServer, type ApiClient } from "../support/api.js";
import { idempotencyKey, newAccount, newKey, newUser, updateUser, storedLocations, storedZones, type TestAccount } from "../support/fixtures.js";
import { db } from "../../lib/db/service.js";
import { expectError } from "../support/assertions.js";
import { idempotencyScope, requestFingerprint } from "../../lib/core/idempotency.js";

/**
 * Idempotency-Key behaviour (spec part 1, section 8 "Idempotency behaviour" and the
 * Idempotency-Key rows of the limits table; architecture section 4 "Idempotency" and
 * "Readings of the contract"). Every assertion on an outcome is paired with the stored effect
 * read straight from DynamoDB Local.
 */
const api = useApiServer();

const REPLAYED = "idempotent-replayed";

async function setup(): Promise<{ account: TestAccount; client: ApiClient }> {
  const account = await newAccount();
  return { account, client: api().withKey(account.ownerKey) };
}

async function storedRecords(accountId: string) {
  const { data } = await db()
    .entities.idempotencyRecord.scan.where(({ accountId: attr }, { eq }) => eq(attr, accountId))
    .go({ pages: "all" });
  return data;
}

async function createLocation(client: ApiClient, name = `Loc ${randomUUID().slice(0, 6)}`) {
  const response = await client.post("/locations", { name, short_name: name.slice(0, 20) }, { idempotencyKey: idempotencyKey() });
  expect(response.status).toBe(201);
  return response.body as { id: string; name: string; short_name: string };
}

async function createZone(client: ApiClient, locationId: string, name = `Zone ${randomUUID().slice(0, 6)}`) {
  const response = await client.post(`/locations/${locationId}/zones`, { name, short_name: name.slice(0, 20) }, { idempotencyKey: idempotencyKey() });
  expect(response.status).toBe(201);
  return response.body as { id: string; location_id: string; name: string };
}

describe("Idempotency-Key header", () => {
  it("is required on POST /locations: a missing key is 400 idempotency_key_required and creates nothing", async () => {
    const { account, client } = await setup();
    const response = await client.post("/locations", { name: "No key", short_name: "NK" });
    expectError(response, 400, "idempotency_key_required", "Idempotency-Key");
    expect(await storedLocations(account.accountId)).toHaveLength(0);
    expect(await storedRecords(account.accountId)).toHaveLength(0);
  });

  it("is required on zone create and zone update", async () => {
    const { account, client } = await setup();
    const location = await createLocation(client);
    const zone = await createZone(client, location.id, "Original");

    const create = await client.post(`/locations/${location.id}/zones`, { name: "No key", short_name: "NK" });
    expectError(create, 400, "idempotency_key_required", "Idempotency-Key");
    const update = await client.patch(`/locations/${location.id}/zones/${zone.id}`, { name: "Changed", short_name: "C" });
    expectError(update, 400, "idempotency_key_required", "Idempotency-Key");

    const zones = await storedZones(account.accountId, location.id);
    expect(zones).toHaveLength(1);
    expect(zones[0]!.name).toBe("Original");
  });

  it("is optional on POST /item-categories", async () => {
    const { account, client } = await setup();
    const response = await client.post("/item-categories", { name: "Tools", inventory_type: "quantity" });
    expect(response.status, response.text).toBe(201);
    expect(response.headers.get(REPLAYED)).toBeNull();
    expect(await storedRecords(account.accountId)).toHaveLength(0);
  });

  it("rejects invalid keys with 400 invalid_idempotency_key and creates nothing", async () => {
    const { account, client } = await setup();
    const body = { name: "Bad key", short_name: "BK" };
    const invalidKeys = [
      "k".repeat(256), // longer than 255
      "a b", // a space is not a visible character
      "", // empty
      "caf\u00e9", // non-ASCII (sent as a Latin-1 byte)
    ];
    for (const key of invalidKeys) {
      const response = await client.post("/locations", body, { idempotencyKey: key });
      expectError(response, 400, "invalid_idempotency_key", "Idempotency-Key");
    }
    expect(await storedLocations(account.accountId)).toHaveLength(0);
    expect(await storedRecords(account.accountId)).toHaveLength(0);
  });

  it("accepts a 255-character key and any visible ASCII characters", async () => {
    const { account, client } = await setup();
    const long = await client.post("/locations", { name: "Long key", short_name: "LK" }, { idempotencyKey: "k".repeat(255) });
    expect(long.status, long.text).toBe(201);
    const symbols = await client.post("/locations", { name: "Symbols", short_name: "SY" }, { idempotencyKey: "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~" });
    expect(symbols.status, symbols.text).toBe(201);
    expect(await storedLocations(account.accountId)).toHaveLength(2);
  });
});

describe("replay", () => {
  it("returns the original status and identical body with Idempotent-Replayed: true, and creates one location", async () => {
    const { account, client } = await setup();
    const key = idempotencyKey();
    const body = { name: "Warehouse", short_name: "WH", city: "Lyon" };

    const first = await client.post("/locations", body, { idempotencyKey: key });
    expect(first.status, first.text).toBe(201);
    expect(first.headers.get(REPLAYED)).toBeNull();

    const second = await client.post("/locations", body, { idempotencyKey: key });
    expect(second.status).toBe(201);
    expect(second.headers.get(REPLAYED)).toBe("true");
    expect(second.body).toEqual(first.body);
    expect(second.text).toBe(first.text);
    expect(second.headers.get("content-type")).toMatch(/^application\/json/);

    const third = await client.post("/locations", body, { idempotencyKey: key });
    expect(third.status).toBe(201);
    expect(third.headers.get(REPLAYED)).toBe("true");
    expect(third.body).toEqual(first.body);

    const locations = await storedLocations(account.accountId);
    expect(locations).toHaveLength(1);
    expect(locations[0]!.locationId).toBe(first.body.id);
    expect(await storedRecords(account.accountId)).toHaveLength(1);
  });

  it("treats the same JSON with other key order and whitespace as the same request", async () => {
    const { account, client } = await setup();
    const key = idempotencyKey();
    const first = await client.post("/locations", undefined, {
      idempotencyKey: key,
      raw: JSON.stringify({ name: "Ordered", short_name: "OR" }),
    });
    expect(first.status, first.text).toBe(201);
    const second = await client.post("/locations", undefined, {
      idempotencyKey: key,
      raw: '{ "short_name" : "OR",\n  "name": "Ordered" }',
    });
    expect(second.status, second.text).toBe(201);
    expect(second.headers.get(REPLAYED)).toBe("true");
    expect(second.body).toEqual(first.body);
    expect(await storedLocations(account.accountId)).toHaveLength(1);
  });

  it("answers 409 idempotency_key_reused when the same key comes with a different body", async () => {
    const { account, client } = await setup();
    const key = idempotencyKey();
    const first = await client.post("/locations", { name: "First", short_name: "F" }, { idempotencyKey: key });
    expect(first.status).toBe(201);

    const reused = await client.post("/locations", { name: "Second", short_name: "S" }, { idempotencyKey: key });
    expectError(reused, 409, "idempotency_key_reused", "Idempotency-Key");
    expect(reused.headers.get(REPLAYED)).toBeNull();

    const locations = await storedLocations(account.accountId);
    expect(locations.map((l) => l.name)).toEqual(["First"]);

    // The original request can still be replayed afterwards.
    const replay = await client.post("/locations", { name: "First", short_name: "F" }, { idempotencyKey: key });
    expect(replay.status).toBe(201);
    expect(replay.headers.get(REPLAYED)).toBe("true");
    expect(replay.body).toEqual(first.body);
  });

  it("replays a zone PATCH with its original 200", async () => {
    const { account, client } = await setup();
    const location = await createLocation(client);
    const zone = await createZone(client, location.id, "Before");
    const key = idempotencyKey();
    const body = { name: "After", short_name: "AF", description: "patched" };
    const path = `/locations/${location.id}/zones/${zone.id}`;

    const first = await client.patch(path, body, { idempotencyKey: key });
    expect(first.status, first.text).toBe(200);
    expect(first.headers.get(REPLAYED)).toBeNull();
    expect(first.body).toMatchObject({ id: zone.id, name: "After", short_name: "AF", description: "patched" });

    // Change the zone with another key; the replay still returns the stored outcome.
    const other = await client.patch(path, { name: "Later", short_name: "LA" }, { idempotencyKey: idempotencyKey() });
    expect(other.status).toBe(200);

    const replay = await client.patch(path, body, { idempotencyKey: key });
    expect(replay.status).toBe(200);
    expect(replay.headers.get(REPLAYED)).toBe("true");
    expect(replay.body).toEqual(first.body);

    const zones = await storedZones(account.accountId, location.id);
    expect(zones).toHaveLength(1);
    expect(zones[0]!.name).toBe("Later"); // the replay wrote nothing

    const reused = await client.patch(path, { name: "Other", short_name: "OT" }, { idempotencyKey: key });
    expectError(reused, 409, "idempotency_key_reused", "Idempotency-Key");
    expect((await storedZones(account.accountId, location.id))[0]!.name).toBe("Later");
  });
});

describe("isolation of keys", () => {
  it("keeps the same key value apart for another API key of the same user", async () => {
    const { account, client } = await setup();
    const second = await newKey(account.ownerUserId);
    const key = idempotencyKey();
    const body = { name: "Shared key", short_name: "SK" };

    const a = await client.post("/locations", body, { idempotencyKey: key });
    const b = await api().withKey(second.key).post("/locations", body, { idempotencyKey: key });
    expect(a.status).toBe(201);
    expect(b.status, b.text).toBe(201);
    expect(b.headers.get(REPLAYED)).toBeNull();
    expect(b.body.id).not.toBe(a.body.id);
    expect(await storedLocations(account.accountId)).toHaveLength(2);
    expect(await storedRecords(account.accountId)).toHaveLength(2);
  });

  it("keeps the same key value apart for another account", async () => {
    const one = await setup();
    const two = await setup();
    const key = idempotencyKey();
    const body = { name: "Same everywhere", short_name: "SE" };

    const a = await one.client.post("/locations", body, { idempotencyKey: key });
    const b = await two.client.post("/locations", body, { idempotencyKey: key });
    expect(a.status).toBe(201);
    expect(b.status, b.text).toBe(201);
    expect(b.headers.get(REPLAYED)).toBeNull();
    expect(b.body.id).not.toBe(a.body.id);
    expect(await storedLocations(one.account.accountId)).toHaveLength(1);
    expect(await storedLocations(two.account.accountId)).toHaveLength(1);
  });

  it("keeps the same key value apart for another path and another method", async () => {
    const { account, client } = await setup();
    const key = idempotencyKey();
    const body = { name: "Multi", short_name: "MU" };

    // POST /locations
    const location = await client.post("/locations", body, { idempotencyKey: key });
    expect(location.status).toBe(201);
    // POST /locations/{L}/zones: another path, same key and same body
    const zone = await client.post(`/locations/${location.body.id}/zones`, body, { idempotencyKey: key });
    expect(zone.status, zone.text).toBe(201);
    expect(zone.headers.get(REPLAYED)).toBeNull();
    expect(zone.body.object).toBe("zone");
    // POST zones of another location: another path again
    const otherLocation = await createLocation(client);
    const zone2 = await client.post(`/locations/${otherLocation.id}/zones`, body, { idempotencyKey: key });
    expect(zone2.status, zone2.text).toBe(201);
    expect(zone2.headers.get(REPLAYED)).toBeNull();
    // PATCH of the zone: another method
    const patched = await client.patch(
      `/locations/${location.body.id}/zones/${zone.body.id}`,
      { name: "Multi patched", short_name: "MP" },
      { idempotencyKey: key },
    );
    expect(patched.status, patched.text).toBe(200);
    expect(patched.headers.get(REPLAYED)).toBeNull();
    expect(patched.body.name).toBe("Multi patched");

    expect(await storedZones(account.accountId, location.body.id)).toHaveLength(1);
    expect(await storedZones(account.accountId, otherLocation.id)).toHaveLength(1);
    expect(await storedLocations(account.accountId)).toHaveLength(2);
    // one record per scope: the location, two zone creates, the patch (+ the helper's own key)
    expect(await storedRecords(account.accountId)).toHaveLength(5);
  });

  it("treats every spelling of one path as the same endpoint (upper-case UUID, percent-encoded character): a replay, not a second record", async () => {
    const { account, client } = await setup();
    const location = await createLocation(client);
    const key = idempotencyKey();
    const body = { name: "Case zone", short_name: "CZ" };
    const first = await client.post(`/locations/${location.id}/zones`, body, { idempotencyKey: key });
    expect(first.status, first.text).toBe(201);
    const upper = await client.post(`/locations/${location.id.toUpperCase()}/zones`, body, { idempotencyKey: key });
    expect(upper.status, upper.text).toBe(201);
    expect(upper.headers.get(REPLAYED)).toBe("true");
    expect(upper.body).toEqual(first.body);
    const encoded = `%${location.id.charCodeAt(0).toString(16)}${location.id.slice(1)}`;
    const escaped = await client.post(`/locations/${encoded}/zones`, body, { idempotencyKey: key });
    expect(escaped.status, escaped.text).toBe(201);
    expect(escaped.headers.get(REPLAYED)).toBe("true");
    expect(await storedZones(account.accountId, location.id)).toHaveLength(1);
  });
});

describe("outcomes once the handler ran are stored", () => {
  it("stores and replays a 404 resource_missing from the domain", async () => {
    const { account, client } = await setup();
    const key = idempotencyKey();
    const missing = randomUUID();
    const body = { name: "Nowhere", short_name: "NW" };

    const first = await client.post(`/locations/${missing}/zones`, body, { idempotencyKey: key });
    expectError(first, 404, "resource_missing");
    expect(first.headers.get(REPLAYED)).toBeNull();

    const records = await storedRecords(account.accountId);
    expect(records).toHaveLength(1);
    expect(records[0]!.statusCode).toBe(404);

    const replay = await client.post(`/locations/${missing}/zones`, body, { idempotencyKey: key });
    expect(replay.status).toBe(404);
    expect(replay.headers.get(REPLAYED)).toBe("true");
    expect(replay.body).toEqual(first.body);
    expect(await storedZones(account.accountId, missing)).toHaveLength(0);
  });

  it("stores no 403 permission_denied: once the permission is granted, the same key runs the request", async () => {
    const { account } = await setup();
    const user = await newUser(account, { permissions: [] });
    const client = api().withKey(user.key);
    const key = idempotencyKey();
    const body = { name: "Denied", short_name: "DN" };

    const denied = await client.post("/locations", body, { idempotencyKey: key });
    expectError(denied, 403, "permission_denied");
    expect(denied.headers.get(REPLAYED)).toBeNull();
    expect(await storedLocations(account.accountId)).toHaveLength(0);

    // Refused again while nothing changed: still not a replay.
    const again = await client.post("/locations", body, { idempotencyKey: key });
    expectError(again, 403, "permission_denied");
    expect(again.headers.get(REPLAYED)).toBeNull();

    await updateUser(user.userId, { permissions: ["inventory.modify"] });

    const granted = await client.post("/locations", body, { idempotencyKey: key });
    expect(granted.status, granted.text).toBe(201);
    expect(granted.headers.get(REPLAYED)).toBeNull();
    expect(await storedLocations(account.accountId)).toHaveLength(1);
    // From then on the key replays that 201.
    const replay = await client.post("/locations", body, { idempotencyKey: key });
    expect(replay.status).toBe(201);
    expect(replay.headers.get(REPLAYED)).toBe("true");
    expect(replay.body).toEqual(granted.body);
    expect(await storedLocations(account.accountId)).toHaveLength(1);
  });

  it("stores no stale If-Match 409: the retry with the current revision and the same key runs", async () => {
    const { client } = await setup();
    const customer = (await client.post("/customers", { name: "Revision retry" })).body as { id: string };
    const invoice = (await client.post("/invoices", { customer_id: customer.id, lines: [{ name: "Service", unit_price: "10" }] })).body as {
      id: string;
      revision: string;
    };
    const key = idempotencyKey();
    const body = { name: "Renamed" };
    const stale = await client.patch(`/invoices/${invoice.id}`, body, { idempotencyKey: key, headers: { "if-match": '"inv_stale"' } });
    expectError(stale, 409, "mobile_mutation_conflict");
    expect((await client.get(`/invoices/${invoice.id}`)).body.name).not.toBe("Renamed");

    const current = await client.patch(`/invoices/${invoice.id}`, body, { idempotencyKey: key, headers: { "if-match": `"${invoice.revision}"` } });
    expect(current.status, current.text).toBe(200);
    expect(current.headers.get(REPLAYED)).toBeNull();
    expect(current.body.name).toBe("Renamed");
    const replay = await client.patch(`/invoices/${invoice.id}`, body, { idempotencyKey: key, headers: { "if-match": `"${invoice.revision}"` } });
    expect(replay.status).toBe(200);
    expect(replay.headers.get(REPLAYED)).toBe("true");
    expect(replay.body).toEqual(current.body);
  });
});

describe("requests rejected before the handler store nothing", () => {
  it("replays only to a user who still holds the access the request used: a lost permission it consulted is 403, a location out of reach 404, and nothing replays", async () => {
    const { account, client: owner } = await setup();
    const location = await createLocation(owner);
    const permissions = ["inventory.list", "inventory.modify", "costs.view"] as const;
    const user = await newUser(account, { permissions: [...permissions] });
    const client = api().withKey(user.key);
    const key = idempotencyKey();
    const body = { name: "Kept zone", short_name: "KZ" };
    const created = await client.post(`/locations/${location.id}/zones`, body, { idempotencyKey: key });
    expect(created.status, created.text).toBe(201);

    // A permission the request never consulted (a zone shows no cost): the stored 201 still replays.
    await updateUser(user.userId, { permissions: ["inventory.list", "inventory.modify"] });
    const unrelated = await client.post(`/locations/${location.id}/zones`, body, { idempotencyKey: key });
    expect(unrelated.status, unrelated.text).toBe(201);
    expect(unrelated.headers.get(REPLAYED)).toBe("true");
    expect(unrelated.body).toEqual(created.body);

    // The permission the request needed: the replay would answer with what the user may no longer do.
    await updateUser(user.userId, { permissions: ["inventory.list"] });
    const lost = await client.post(`/locations/${location.id}/zones`, body, { idempotencyKey: key });
    expectError(lost, 403, "permission_denied");
    expect(lost.headers.get(REPLAYED)).toBeNull();
    expect(lost.text).not.toContain(created.body.id);
    // Restricted to another location since: the zone is out of its sight (404, as its other routes answer).
    const elsewhere = await createLocation(owner);
    await updateUser(user.userId, { permissions: [...permissions], locationId: elsewhere.id });
    expectError(await client.post(`/locations/${location.id}/zones`, body, { idempotencyKey: key }), 404, "resource_missing");
    expect(await storedZones(account.accountId, location.id)).toHaveLength(1);
    // Restricted to the zone's own location: the one place the request acted at is still theirs.
    await updateUser(user.userId, { permissions: [...permissions], locationId: location.id });
    const ownPlace = await client.post(`/locations/${location.id}/zones`, body, { idempotencyKey: key });
    expect(ownPlace.status, ownPlace.text).toBe(201);
    expect(ownPlace.headers.get(REPLAYED)).toBe("true");

    // The same access again, or more: the stored 201 replays.
    await updateUser(user.userId, { permissions: [...permissions, "tasks.assign"], locationId: null });
    const replay = await client.post(`/locations/${location.id}/zones`, body, { idempotencyKey: key });
    expect(replay.status, replay.text).toBe(201);
    expect(replay.headers.get(REPLAYED)).toBe("true");
    expect(replay.body).toEqual(created.body);
    expect(await storedZones(account.accountId, location.id)).toHaveLength(1);
  });

  it("replays a request about the user's own records after they lose records.view_all (ownership alone let it see them)", async () => {
    const { account } = await setup();
    const permissions = ["records.view_all", "invoices.list", "invoices.modify"] as const;
    const user = await newUser(account, { permissions: [...permissions] });
    const client = api().withKey(user.key);
    const customer = (await client.post("/customers", { name: "Own customer" })).body as { id: string };
    const key = idempotencyKey();
    const body = { customer_id: customer.id, lines: [{ name: "Service", unit_price: "10" }] };
    const created = await client.post("/invoices", body, { idempotencyKey: key });
    expect(created.status, created.text).toBe(201);
    await updateUser(user.userId, { permissions: ["invoices.list", "invoices.modify"] });
    const replay = await client.post("/invoices", body, { idempotencyKey: key });
    expect(replay.status, replay.text).toBe(201);
    expect(replay.headers.get(REPLAYED)).toBe("true");
    expect(replay.body).toEqual(created.body);
  });

  it("answers 404 to a user who no longer sees the document the request wrote (restricted to another location, or records.view_all lost); its effect stands", async () => {
    const { account, client: owner } = await setup();
    const [here, elsewhere] = [await createLocation(owner), await createLocation(owner)];
    const customer = (await owner.post("/customers", { name: "Replay sight" })).body as { id: string };
    const permissions = ["records.view_all", "sales_orders.list", "sales_orders.modify", "invoices.list", "invoices.modify"] as const;
    const user = await newUser(account, { permissions: [...permissions] });
    const client = api().withKey(user.key);
    const orderKey = idempotencyKey();
    const orderBody = { customer_id: customer.id, location_id: here.id, lines: [{ name: "Service", unit_price: "10" }] };
    const order = await client.post("/sales-orders", orderBody, { idempotencyKey: orderKey });
    expect(order.status, order.text).toBe(201);
    await updateUser(user.userId, { permissions: [...permissions], locationId: elsewhere.id });
    const unseen = await client.post("/sales-orders", orderBody, { idempotencyKey: orderKey });
    expectError(unseen, 404, "resource_missing");
    expect(unseen.text).not.toContain(order.body.id);
    expectError(await client.get(`/sales-orders/${order.body.id}`), 404, "resource_missing");

    // The owner's invoice, changed while the user saw every record.
    await updateUser(user.userId, { permissions: [...permissions], locationId: null });
    const invoice = (await owner.post("/invoices", { customer_id: customer.id, lines: [{ name: "Service", unit_price: "10" }] })).body as { id: string };
    const patchKey = idempotencyKey();
    const patched = await client.patch(`/invoices/${invoice.id}`, { name: "Seen" }, { idempotencyKey: patchKey });
    expect(patched.status, patched.text).toBe(200);
    await updateUser(user.userId, { permissions: ["sales_orders.list", "sales_orders.modify", "invoices.list", "invoices.modify"] });
    expectError(await client.patch(`/invoices/${invoice.id}`, { name: "Seen" }, { idempotencyKey: patchKey }), 404, "resource_missing");
    expect((await owner.get(`/invoices/${invoice.id}`)).body.name).toBe("Seen");
    expect((await owner.get(`/sales-orders/${order.body.id}`)).status).toBe(200);
  });

  it("replays a sales order and an invoice created before the user was restricted to the location they are at (or to any, for one at none): a default location is not access the answer used", async () => {
    const { account, client: owner } = await setup();
    const here = await createLocation(owner);
    const customer = (await owner.post("/customers", { name: "Replay default" })).body as { id: string };
    const permissions = ["records.view_all", "sales_orders.list", "sales_orders.modify", "invoices.list", "invoices.modify"] as const;
    const user = await newUser(account, { permissions: [...permissions] });
    const client = api().withKey(user.key);
    const requests = [
      { path: "/sales-orders", body: { customer_id: customer.id, location_id: here.id, lines: [{ name: "Service", unit_price: "10" }] } },
      { path: "/sales-orders", body: { customer_id: customer.id, lines: [{ name: "Service", unit_price: "11" }] } },
      { path: "/invoices", body: { customer_id: customer.id, lines: [{ name: "Service", unit_price: "12" }] } },
    ].map((request) => ({ ...request, key: idempotencyKey() }));
    const created = [];
    for (const { path, body, key } of requests) {
      const response = await client.post(path, body, { idempotencyKey: key });
      expect(response.status, response.text).toBe(201);
      created.push(response);
    }
    await updateUser(user.userId, { permissions: [...permissions], locationId: here.id });
    for (const [index, { path, body, key }] of requests.entries()) {
      const replay = await client.post(path, body, { idempotencyKey: key });
      expect(replay.status, `${path} ${replay.text}`).toBe(201);
      expect(replay.headers.get(REPLAYED)).toBe("true");
      expect(replay.body).toEqual(created[index]!.body);
    }
    expect((await owner.get(`/sales-orders?customer_id=${customer.id}`)).body.data).toHaveLength(2);
    expect((await owner.get(`/invoices?customer_id=${customer.id}`)).body.data).toHaveLength(1);
  });

  it("does not replay costs to a user who lost costs.view since: the invoice it showed them on is 403, its creation stands", async () => {
    const { account, client: owner } = await setup();
    const customer = (await owner.post("/customers", { name: "Replay costs" })).body as { id: string };
    const permissions = ["records.view_all", "invoices.list", "invoices.modify", "costs.view"] as const;
    const user = await newUser(account, { permissions: [...permissions] });
    const client = api().withKey(user.key);
    const key = idempotencyKey();
    const body = { customer_id: customer.id, lines: [{ name: "Service", unit_price: "10" }] };
    const created = await client.post("/invoices", body, { idempotencyKey: key });
    expect(created.status, created.text).toBe(201);
    expect(created.body.lines[0]).toHaveProperty("unit_cost");

    await updateUser(user.userId, { permissions: ["records.view_all", "invoices.list", "invoices.modify"] });
    const lost = await client.post("/invoices", body, { idempotencyKey: key });
    expectError(lost, 403, "permission_denied");
    expect(lost.text).not.toContain("unit_cost");
    const listed = await owner.get(`/invoices?customer_id=${customer.id}`);
    expect(listed.body.data).toHaveLength(1);
  });

  it("lets a corrected body run with the key of a 422 validation failure", async () => {
    const { account, client } = await setup();
    const key = idempotencyKey();

    const invalid = await client.post("/locations", { name: "x".repeat(101), short_name: "TL" }, { idempotencyKey: key });
    expectError(invalid, 422, "validation_failed");
    expect(await storedRecords(account.accountId)).toHaveLength(0);

    const corrected = await client.post("/locations", { name: "Fixed", short_name: "FX" }, { idempotencyKey: key });
    expect(corrected.status, corrected.text).toBe(201);
    expect(corrected.headers.get(REPLAYED)).toBeNull();
    expect(await storedLocations(account.accountId)).toHaveLength(1);
  });

  it("lets a corrected body run with the key of a malformed JSON request", async () => {
    const { account, client } = await setup();
    const key = idempotencyKey();

    const malformed = await client.post("/locations", undefined, { idempotencyKey: key, raw: '{"name": "Broken",' });
    expectError(malformed, 400, "invalid_json");
    expect(await storedRecords(account.accountId)).toHaveLength(0);

    const corrected = await client.post("/locations", { name: "Broken", short_name: "BR" }, { idempotencyKey: key });
    expect(corrected.status, corrected.text).toBe(201);
    expect(await storedLocations(account.accountId)).toHaveLength(1);
  });

  it("stores nothing for a 403 insufficient_scope", async () => {
    const { account } = await setup();
    const readOnly = await newKey(account.ownerUserId, { scopes: ["items:read"] });
    const key = idempotencyKey();
    const body = { name: "Scoped", short_name: "SC" };

    const rejected = await api().withKey(readOnly.key).post("/locations", body, { idempotencyKey: key });
    expectError(rejected, 403, "insufficient_scope");
    expect(await storedRecords(account.accountId)).toHaveLength(0);
    expect(await storedLocations(account.accountId)).toHaveLength(0);
  });
});

describe("concurrent requests with one key", () => {
  it("creates exactly one location for 10 identical parallel requests", async () => {
    const { account, client } = await setup();
    const key = idempotencyKey();
    const body = { name: "Race", short_name: "RC" };

    const responses = await Promise.all(Array.from({ length: 10 }, () => client.post("/locations", body, { idempotencyKey: key })));

    const statuses = responses.map((r) => r.status);
    for (const response of responses) {
      if (response.status === 201) continue;
      expectError(response, 409, "idempotency_in_progress", "Idempotency-Key");
    }
    const created = responses.filter((r) => r.status === 201);
    expect(created.length, JSON.stringify(statuses)).toBeGreaterThanOrEqual(1);
    expect(new Set(created.map((r) => r.body.id)).size).toBe(1);
    // at most one response is the original; every other 201 is a replay
    expect(created.filter((r) => r.headers.get(REPLAYED) !== "true").length).toBeLessThanOrEqual(1);

    const locations = await storedLocations(account.accountId);
    expect(locations).toHaveLength(1);
    expect(locations[0]!.locationId).toBe(created[0]!.body.id);
    expect(await storedRecords(account.accountId)).toHaveLength(1);
  });

  it("creates at most one location for 10 parallel requests with one key and different bodies", async () => {
    const { account, client } = await setup();
    const key = idempotencyKey();

    const responses = await Promise.all(
      Array.from({ length: 10 }, (_, i) => client.post("/locations", { name: `Race ${i}`, short_name: `R${i}` }, { idempotencyKey: key })),
    );

    const created = responses.filter((r) => r.status === 201);
    const statuses = responses.map((r) => r.status);
    expect(created.length, JSON.stringify(statuses)).toBeLessThanOrEqual(1);
    for (const response of responses) {
      if (response.status === 201) continue;
      expect(response.status, response.text).toBe(409);
      expect(["idempotency_key_reused", "idempotency_in_progress"]).toContain(response.body.error.code);
      expect(response.body.error.param).toBe("Idempotency-Key");
    }

    const locations = await storedLocations(account.accountId);
    expect(locations).toHaveLength(created.length);
    if (created[0]) expect(locations[0]!.locationId).toBe(created[0].body.id);
  });
});

describe("a request still running", () => {
  it("holds its key with an in-progress claim: the same key meanwhile is 409 idempotency_in_progress; a claim past its lease is taken over", async () => {
    const { account, client } = await setup();
    const key = idempotencyKey();
    const body = { name: "Claimed", short_name: "CL" };
    // The claim a request writes before its handler runs (as if one were running now).
    const scope = idempotencyScope({ accountId: account.accountId, keyId: account.ownerKeyId, method: "POST", path: "/api/v3/locations", key });
    const claim = {
      accountId: account.accountId,
      scope,
      fingerprint: requestFingerprint("POST", "/api/v3/locations", body),
      statusCode: 0,
      claim: randomUUID(),
      headers: {},
      createdAt: new Date().toISOString(),
    };
    await db()
      .entities.idempotencyRecord.put({ ...claim, expiresAt: Math.floor(Date.now() / 1000) + 60 })
      .go();

    expectError(await client.post("/locations", body, { idempotencyKey: key }), 409, "idempotency_in_progress", "Idempotency-Key");
    expectError(await client.post("/locations", { ...body, name: "Other" }, { idempotencyKey: key }), 409, "idempotency_key_reused", "Idempotency-Key");
    expect(await storedLocations(account.accountId)).toHaveLength(0);

    // The claimant died: once its lease ran out, the retry runs, and a repeat replays it.
    await db()
      .entities.idempotencyRecord.put({ ...claim, expiresAt: Math.floor(Date.now() / 1000) - 1 })
      .go();
    const retried = await client.post("/locations", body, { idempotencyKey: key });
    expect(retried.status, retried.text).toBe(201);
    const replay = await client.post("/locations", body, { idempotencyKey: key });
    expect(replay.status).toBe(201);
    expect(replay.headers.get(REPLAYED)).toBe("true");
    expect(replay.body).toEqual(retried.body);
    expect(await storedLocations(account.accountId)).toHaveLength(1);
    const [record] = await storedRecords(account.accountId);
    expect(record).toMatchObject({ statusCode: 201 });
    expect(record!.claim).toBeUndefined();
  });

  it("a handler's 4xx replaces the claim with its stored outcome: no claim is left behind", async () => {
    const { account, client } = await setup();
    const key = idempotencyKey();
    const missing = await client.post(`/locations/${randomUUID()}/zones`, { name: "Z", short_name: "Z" }, { idempotencyKey: key });
    expectError(missing, 404, "resource_missing");
    const records = await storedRecords(account.accountId);
    expect(records.map((r) => r.statusCode)).toEqual([404]);
    expect(records[0]!.claim).toBeUndefined();
  });
});

describe("replay window", () => {
  it("lets the key create another location once the stored record has expired", async () => {
    const { account, client } = await setup();
    const key = idempotencyKey();
    const body = { name: "Windowed", short_name: "WI" };

    const first = await client.post("/locations", body, { idempotencyKey: key });
    expect(first.status).toBe(201);

    const records = await storedRecords(account.accountId);
    expect(records).toHaveLength(1);
    const record = records[0]!;
    // the window is about five minutes
    const now = Math.floor(Date.now() / 1000);
    expect(record.expiresAt).toBeGreaterThan(now + 240);
    expect(record.expiresAt).toBeLessThanOrEqual(now + 360);

    await db()
      .entities.idempotencyRecord.patch({ accountId: account.accountId, scope: record.scope })
      .set({ expiresAt: now - 10 })
      .go();

    const second = await client.post("/locations", body, { idempotencyKey: key });
    expect(second.status, second.text).toBe(201);
    expect(second.headers.get(REPLAYED)).toBeNull();
    expect(second.body.id).not.toBe(first.body.id);
    expect(await storedLocations(account.accountId)).toHaveLength(2);

    // the new outcome is the one replayed from now on
    const third = await client.post("/locations", body, { idempotencyKey: key });
    expect(third.status).toBe(201);
    expect(third.headers.get(REPLAYED)).toBe("true");
    expect(third.body).toEqual(second.body);
    expect(await storedLocations(account.accountId)).toHaveLength(2);
  });
});
