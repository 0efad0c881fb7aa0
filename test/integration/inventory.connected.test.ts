import { chunkIndexes, type StockChange } from "../../lib/domain/inventory/stock-changes.js";
import { randomUUID } from "node:crypto";
import { Decimal } from "../../lib/core/decimal.js";
import { describe, expect, it } from "vitest";
import { useApiServer, type ApiClient, type TestResponse } from "../support/api.js";
import { deactivateLocation, idempotencyKey, newAccount, type TestAccount } from "../support/fixtures.js";
import { expectValidation } from "../support/assertions.js";
import { insertJournal, readJournal } from "../../lib/db/inventory.js";
import { db } from "../../lib/db/service.js";
import { applyJournal, journalRecord, postJournal } from "../../lib/domain/inventory/service.js";
import { scaled } from "../support/timeouts.js";

/**
 * The inventory ledger against DynamoDB Local (architecture sections 4 "Items, variations and
 * stock" and 5, the inventory-ledger paragraph): adjustments through the API (rows created by
 * the first stock, no stock below zero, nothing written on a refusal, idempotent replays, no
 * lost update under parallel requests), and journals larger than one transaction applied
 * exactly once even when the applier is interrupted and run again concurrently.
 */
const api = useApiServer();

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;
const ADJUSTMENT_KEYS = [
  "id",
  "object",
  "item_id",
  "item_variation_id",
  "item_variation_location_id",
  "location_id",
  "quantity",
  "quantity_after",
  "reason",
  "user_id",
  "created_at",
];

async function setup(): Promise<{ account: TestAccount; client: ApiClient }> {
  const account = await newAccount();
  return { account, client: api().withKey(account.ownerKey) };
}

async function createLocation(client: ApiClient, name = `Location ${randomUUID().slice(0, 8)}`): Promise<string> {
  const response = await client.post("/locations", { name, short_name: name.slice(0, 25) }, { idempotencyKey: idempotencyKey() });
  expect(response.status, response.text).toBe(201);
  return response.body.id as string;
}

async function createItem(client: ApiClient, body: Record<string, unknown> = {}): Promise<Record<string, any> & { id: string }> {
  const response = await client.post("/items", { name: `Item ${randomUUID().slice(0, 8)}`, ...body });
  expect(response.status, response.text).toBe(201);
  return response.body;
}

const adjust = (client: ApiClient, itemId: string, body: Record<string, unknown>, options = {}) => client.post(`/items/${itemId}/adjustments`, body, options);

async function adjustOk(client: ApiClient, itemId: string, body: Record<string, unknown>) {
  const response = await adjust(client, itemId, body);
  expect(response.status, response.text).toBe(201);
  return response.body as Record<string, any>;
}

async function getItem(client: ApiClient, itemId: string) {
  const response = await client.get(`/items/${itemId}`);
  expect(response.status, response.text).toBe(200);
  return response.body as Record<string, any>;
}

async function variations(client: ApiClient, itemId: string) {
  const response = await client.get(`/items/${itemId}/variations`, { include: "locations", limit: 100 });
  expect(response.status, response.text).toBe(200);
  return response.body.data as Record<string, any>[];
}

async function adjustments(client: ApiClient, itemId: string, query: Record<string, string | number> = { limit: 100 }) {
  const response = await client.get(`/items/${itemId}/adjustments`, query);
  expect(response.status, response.text).toBe(200);
  return response.body as { data: Record<string, any>[]; has_more: boolean; pagination: Record<string, number>; url: string; object: string };
}

/** Everything the API shows of an item's stock (to prove that a refusal changed nothing). */
async function stockSnapshot(client: ApiClient, itemId: string) {
  const item = await getItem(client, itemId);
  return {
    quantity: item.quantity,
    quantity_available: item.quantity_available,
    variations: await variations(client, itemId),
    adjustments: await adjustments(client, itemId),
  };
}

/** Stock rows of one item, read straight from the table. */
async function storedRows(accountId: string, itemId: string) {
  const { data } = await db().entities.stockRow.query.primary({ accountId, itemId }).go({ pages: "all", consistent: true });
  return data;
}

function statuses(responses: TestResponse[]): Record<number, number> {
  const counts: Record<number, number> = {};
  for (const r of responses) counts[r.status] = (counts[r.status] ?? 0) + 1;
  return counts;
}

describe("POST /items/{id}/adjustments", () => {
  it("returns 201 with the adjustment; the first stock at a location creates its row; negative quantities reduce stock", async () => {
    const { account, client } = await setup();
    const locationId = await createLocation(client);
    const item = await createItem(client);
    const [base] = await variations(client, item.id);
    expect(base!.locations).toEqual([]);

    const first = await adjust(client, item.id, { location_id: locationId, quantity: 5, reason: "Initial count" });
    expect(first.status, first.text).toBe(201);
    const body = first.body;
    expect(Object.keys(body).sort()).toEqual([...ADJUSTMENT_KEYS].sort());
    expect(body.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/); // the ledger entry's public UUID (version 5)
    expect(body.object).toBe("inventory_adjustment");
    expect(body.item_id).toBe(item.id);
    expect(body.item_variation_id).toBe(base!.id);
    expect(Number.isInteger(body.item_variation_location_id)).toBe(true);
    expect(body.location_id).toBe(locationId);
    expect(body.quantity).toBe(5);
    expect(body.quantity_after).toBe(5);
    expect(body.reason).toBe("Initial count");
    expect(body.user_id).toBe(account.ownerUserId);
    expect(body.created_at).toMatch(ISO);

    const [withRow] = await variations(client, item.id);
    expect(withRow!.quantity).toBe(5);
    expect(withRow!.location_count).toBe(1);
    expect(withRow!.locations).toEqual([
      {
        object: "item_variation_location",
        item_variation_location_id: body.item_variation_location_id,
        location_id: locationId,
        zone_id: null,
        quantity: 5,
        quantity_reserved: 0,
        quantity_incoming: 0,
        in_transit: 0,
      },
    ]);
    expect((await getItem(client, item.id)).quantity).toBe(5);

    const down = await adjustOk(client, item.id, { location_id: locationId, quantity: -2 });
    expect(down.quantity).toBe(-2);
    expect(down.quantity_after).toBe(3);
    expect(down.reason).toBeNull();
    expect(down.item_variation_location_id).toBe(body.item_variation_location_id);
    expect(down.id).not.toBe(body.id);

    // Decimals add exactly: 3 + 0.1 + 0.2 = 3.3.
    expect((await adjustOk(client, item.id, { location_id: locationId, quantity: 0.1 })).quantity_after).toBe(3.1);
    expect((await adjustOk(client, item.id, { location_id: locationId, quantity: 0.2 })).quantity_after).toBe(3.3);
    const after = await getItem(client, item.id);
    expect(after.quantity).toBe(3.3);
    expect(after.quantity_available).toBe(3.3);
    const [again] = await variations(client, item.id);
    expect(again!.locations).toHaveLength(1);
    expect(again!.locations[0].quantity).toBe(3.3);
    expect((await storedRows(account.accountId, item.id)).map((r) => r.onHand)).toEqual([3.3]);
    // The item's own location figures follow too.
    const listed = await client.get("/items", { ids: item.id, location_id: locationId });
    expect(listed.status, listed.text).toBe(200);
    expect(listed.body.data[0].location_inventory).toMatchObject({ location_id: locationId, quantity: 3.3 });
  });

  it("refuses a change below zero with 422 on quantity and changes nothing", async () => {
    const { client, account } = await setup();
    const [locationId, otherLocationId] = [await createLocation(client), await createLocation(client)];
    const item = await createItem(client);
    await adjustOk(client, item.id, { location_id: locationId, quantity: 3 });
    const before = await stockSnapshot(client, item.id);

    const refused = await adjust(client, item.id, { location_id: locationId, quantity: -3.0001, reason: "too much" });
    expectValidation(refused, "quantity");
    expect(await stockSnapshot(client, item.id)).toEqual(before);

    // A decrease where there is no stock yet: refused, and no row is created.
    const nowhere = await adjust(client, item.id, { location_id: otherLocationId, quantity: -1 });
    expectValidation(nowhere, "quantity");
    expect(await stockSnapshot(client, item.id)).toEqual(before);
    expect(await storedRows(account.accountId, item.id)).toHaveLength(1);

    // Exactly to zero is allowed.
    expect((await adjustOk(client, item.id, { location_id: locationId, quantity: -3 })).quantity_after).toBe(0);
    expect((await getItem(client, item.id)).quantity).toBe(0);
  });

  it("refuses quantity 0 and quantities with more than four decimals", async () => {
    const { client } = await setup();
    const locationId = await createLocation(client);
    const item = await createItem(client);
    expectValidation(await adjust(client, item.id, { location_id: locationId, quantity: 0 }), "quantity");
    expectValidation(await adjust(client, item.id, { location_id: locationId, quantity: 0.00001 }), "quantity");
    expect((await adjustments(client, item.id)).data).toEqual([]);
    expect((await variations(client, item.id))[0]!.locations).toEqual([]);
  });

  it("refuses an inactive, unknown or other account's location with 422 on location_id", async () => {
    const { account, client } = await setup();
    const item = await createItem(client);
    const inactive = await createLocation(client);
    await deactivateLocation(account.accountId, inactive);
    const other = await setup();
    const foreign = await createLocation(other.client);

    for (const locationId of [inactive, randomUUID(), foreign]) {
      const response = await adjust(client, item.id, { location_id: locationId, quantity: 1 });
      expectValidation(response, "location_id");
    }
    expect((await getItem(client, item.id)).quantity).toBe(0);
    expect((await adjustments(client, item.id)).data).toEqual([]);
    expect(await storedRows(account.accountId, item.id)).toEqual([]);
    // The other account's location got nothing either.
    const { data } = await db().entities.stockRow.query.primary({ accountId: other.account.accountId, itemId: item.id }).go({ pages: "all" });
    expect(data).toEqual([]);
  });

  it("needs item_variation_id for an item with several variations; item_variation_location_id selects the row", async () => {
    const { client } = await setup();
    const [l1, l2] = [await createLocation(client), await createLocation(client)];
    const item = await createItem(client, { variations: [{ values: { Size: "S" } }, { values: { Size: "M" } }] });
    const vars = await variations(client, item.id);
    expect(vars).toHaveLength(2);
    const [small, medium] = vars as [Record<string, any>, Record<string, any>];

    expectValidation(await adjust(client, item.id, { location_id: l1, quantity: 1 }), "item_variation_id");
    expectValidation(await adjust(client, item.id, { location_id: l1, quantity: 1, item_variation_id: randomUUID() }), "item_variation_id");
    expect((await getItem(client, item.id)).quantity).toBe(0);

    const s1 = await adjustOk(client, item.id, { location_id: l1, quantity: 4, item_variation_id: small.id });
    const m1 = await adjustOk(client, item.id, { location_id: l1, quantity: 6, item_variation_id: medium.id });
    expect(s1.item_variation_id).toBe(small.id);
    expect(m1.item_variation_id).toBe(medium.id);
    expect(m1.item_variation_location_id).not.toBe(s1.item_variation_location_id);

    // The row alone says which variation.
    const byRow = await adjustOk(client, item.id, { location_id: l1, quantity: -2, item_variation_location_id: m1.item_variation_location_id });
    expect(byRow).toMatchObject({ item_variation_id: medium.id, item_variation_location_id: m1.item_variation_location_id, quantity_after: 4 });
    // Both given and consistent.
    const both = await adjustOk(client, item.id, {
      location_id: l1,
      quantity: 1,
      item_variation_id: small.id,
      item_variation_location_id: s1.item_variation_location_id,
    });
    expect(both.quantity_after).toBe(5);

    // The row must be at location_id, of this item, and agree with item_variation_id.
    const before = await stockSnapshot(client, item.id);
    expectValidation(
      await adjust(client, item.id, { location_id: l2, quantity: 1, item_variation_location_id: s1.item_variation_location_id }),
      "item_variation_location_id",
    );
    expectValidation(await adjust(client, item.id, { location_id: l1, quantity: 1, item_variation_location_id: 999_999 }), "item_variation_location_id");
    expectValidation(
      await adjust(client, item.id, { location_id: l1, quantity: 1, item_variation_id: medium.id, item_variation_location_id: s1.item_variation_location_id }),
      "item_variation_id",
    );
    expect(await stockSnapshot(client, item.id)).toEqual(before);

    const after = await variations(client, item.id);
    expect(after.map((v) => [v.id, v.quantity, v.locations.map((l: any) => [l.item_variation_location_id, l.location_id, l.quantity])])).toEqual([
      [small.id, 5, [[s1.item_variation_location_id, l1, 5]]],
      [medium.id, 4, [[m1.item_variation_location_id, l1, 4]]],
    ]);
    expect((await getItem(client, item.id)).quantity).toBe(9);
  });

  it("GET lists adjustments newest first, with pagination", async () => {
    const { client } = await setup();
    const locationId = await createLocation(client);
    const item = await createItem(client);
    const made: Record<string, any>[] = [];
    for (let q = 1; q <= 5; q++) made.push(await adjustOk(client, item.id, { location_id: locationId, quantity: q, reason: `r${q}` }));

    const all = await adjustments(client, item.id);
    expect(all.object).toBe("list");
    expect(all.url).toBe(`/api/v3/items/${item.id}/adjustments`);
    expect(all.data).toEqual([...made].reverse());
    expect(all.data.map((a) => a.quantity_after)).toEqual([15, 10, 6, 3, 1]);
    expect(all.pagination.total_records).toBe(5);
    expect(all.has_more).toBe(false);

    const page1 = await adjustments(client, item.id, { limit: 2 });
    expect(page1.data.map((a) => a.quantity)).toEqual([5, 4]);
    expect(page1.has_more).toBe(true);
    expect(page1.pagination).toEqual({ page: 1, per_page: 2, total_pages: 3, total_records: 5 });
    const page2 = await adjustments(client, item.id, { limit: 2, page: 2 });
    expect(page2.data.map((a) => a.quantity)).toEqual([3, 2]);
    expect(page2.has_more).toBe(true);
    const page3 = await adjustments(client, item.id, { limit: 2, page: 3 });
    expect(page3.data.map((a) => a.quantity)).toEqual([1]);
    expect(page3.has_more).toBe(false);
    const past = await adjustments(client, item.id, { limit: 2, page: 4 });
    expect(past.data).toEqual([]);
    expect(past.has_more).toBe(false);

    // Another item's list is its own.
    const other = await createItem(client);
    expect((await adjustments(client, other.id)).data).toEqual([]);
  });

  it("replays an adjustment sent again with the same Idempotency-Key without applying it twice", async () => {
    const { client } = await setup();
    const locationId = await createLocation(client);
    const item = await createItem(client);
    const key = idempotencyKey();
    const body = { location_id: locationId, quantity: 7, reason: "received" };

    const first = await adjust(client, item.id, body, { idempotencyKey: key });
    expect(first.status, first.text).toBe(201);
    expect(first.headers.get("idempotent-replayed")).not.toBe("true");
    const replay = await adjust(client, item.id, body, { idempotencyKey: key });
    expect(replay.status, replay.text).toBe(201);
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    expect(replay.body).toEqual(first.body);

    expect((await getItem(client, item.id)).quantity).toBe(7);
    expect((await adjustments(client, item.id)).data).toEqual([first.body]);

    // A new key applies again.
    const second = await adjust(client, item.id, body, { idempotencyKey: idempotencyKey() });
    expect(second.status, second.text).toBe(201);
    expect(second.body.quantity_after).toBe(14);
    expect((await getItem(client, item.id)).quantity).toBe(14);
  });
});

describe("adjustments under concurrency", () => {
  it("20 parallel +1 adjustments on one item and location: quantity exactly 20, 20 entries, no lost update", async () => {
    const { account, client } = await setup();
    const locationId = await createLocation(client);
    const item = await createItem(client);

    const responses = await Promise.all(Array.from({ length: 20 }, () => adjust(client, item.id, { location_id: locationId, quantity: 1 })));
    expect(responses.filter((r) => r.status !== 201).map((r) => `${r.status} ${r.text}`)).toEqual([]);
    // Every change saw the one before it: the balances after are exactly 1..20.
    expect(responses.map((r) => r.body.quantity_after).sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    expect(new Set(responses.map((r) => r.body.item_variation_location_id)).size).toBe(1);

    expect((await getItem(client, item.id)).quantity).toBe(20);
    const list = await adjustments(client, item.id);
    expect(list.data).toHaveLength(20);
    expect(list.pagination.total_records).toBe(20);
    const rows = await storedRows(account.accountId, item.id);
    expect(rows.map((r) => r.onHand)).toEqual([20]);
  });

  it("with stock 5, exactly 5 of 10 parallel -1 adjustments succeed and stock never goes below zero", async () => {
    const { client } = await setup();
    const locationId = await createLocation(client);
    const item = await createItem(client);
    await adjustOk(client, item.id, { location_id: locationId, quantity: 5 });

    const responses = await Promise.all(Array.from({ length: 10 }, () => adjust(client, item.id, { location_id: locationId, quantity: -1 })));
    expect(statuses(responses)).toEqual({ 201: 5, 422: 5 });
    for (const refused of responses.filter((r) => r.status === 422)) expectValidation(refused, "quantity");
    expect(
      responses
        .filter((r) => r.status === 201)
        .map((r) => r.body.quantity_after)
        .sort(),
    ).toEqual([0, 1, 2, 3, 4]);

    expect((await getItem(client, item.id)).quantity).toBe(0);
    const [variation] = await variations(client, item.id);
    expect(variation!.locations[0].quantity).toBe(0);
    expect((await adjustments(client, item.id)).data).toHaveLength(6);
  });

  it("parallel first stock at 3 new locations of one item creates 3 rows with distinct item_variation_location_ids", async () => {
    const { account, client } = await setup();
    const locations = [await createLocation(client), await createLocation(client), await createLocation(client)];
    const item = await createItem(client);

    const responses = await Promise.all(locations.map((locationId, i) => adjust(client, item.id, { location_id: locationId, quantity: i + 1 })));
    expect(responses.filter((r) => r.status !== 201).map((r) => `${r.status} ${r.text}`)).toEqual([]);
    const ivls = responses.map((r) => r.body.item_variation_location_id);
    expect(new Set(ivls).size).toBe(3);

    const [variation] = await variations(client, item.id);
    expect(variation!.location_count).toBe(3);
    expect(variation!.quantity).toBe(6);
    expect([...variation!.locations.map((l: any) => l.item_variation_location_id)].sort()).toEqual([...ivls].sort());
    expect(Object.fromEntries(variation!.locations.map((l: any) => [l.location_id, l.quantity]))).toEqual({
      [locations[0]!]: 1,
      [locations[1]!]: 2,
      [locations[2]!]: 3,
    });
    expect((await storedRows(account.accountId, item.id)).map((r) => r.ivlId).sort()).toEqual([...ivls].sort());
    expect((await getItem(client, item.id)).quantity).toBe(6);
  });
});

/** Per item and location: the quantity shown by `GET /items?ids=...&location_id=...`, 50 ids at a time. */
async function quantitiesAt(client: ApiClient, itemIds: string[], locationId: string): Promise<Map<string, { atLocation: number; total: number }>> {
  const out = new Map<string, { atLocation: number; total: number }>();
  for (let i = 0; i < itemIds.length; i += 50) {
    const batch = itemIds.slice(i, i + 50);
    const response = await client.get("/items", { ids: batch.join(","), location_id: locationId });
    expect(response.status, response.text).toBe(200);
    expect(response.body.data).toHaveLength(batch.length);
    for (const item of response.body.data) out.set(item.id, { atLocation: item.location_inventory?.quantity ?? 0, total: item.quantity });
  }
  return out;
}

async function historyOf(accountId: string, itemId: string, sourceType: string) {
  const { data } = await db().entities.stockHistory.query.primary({ accountId, itemId, sourceType }).go({ pages: "all", consistent: true });
  return data;
}

describe("stock journals", () => {
  it(
    "applies a journal of 150 balance changes exactly once, even interrupted and then run concurrently",
    async () => {
      const { account, client } = await setup();
      const accountId = account.accountId;
      const [from, to] = [await createLocation(client, "From"), await createLocation(client, "To")];
      const itemIds: string[] = [];
      for (let i = 0; i < 75; i += 5) {
        const created = await Promise.all(Array.from({ length: 5 }, (_, j) => createItem(client, { name: `Journal item ${String(i + j).padStart(3, "0")}` })));
        itemIds.push(...created.map((c) => c.id));
      }
      const variationOf = new Map<string, string>();
      await Promise.all(
        itemIds.map(async (itemId) => {
          const [base] = await variations(client, itemId);
          variationOf.set(itemId, base!.id);
        }),
      );

      // Starting stock: 10 (plus a decimal part) at `from` for each item, posted as one journal.
      const start = new Map(itemIds.map((id, i) => [id, new Decimal(10).plus(new Decimal(i % 4).div(10))]));
      await postJournal({
        accountId,
        source: { sourceType: "opening_balance", sourceId: "test" },
        changes: itemIds.map((itemId) => ({
          itemId,
          variationId: variationOf.get(itemId)!,
          locationId: from,
          deltas: { onHand: start.get(itemId)!.toNumber() },
        })),
      });
      const opening = await quantitiesAt(client, itemIds, from);
      for (const itemId of itemIds) expect(opening.get(itemId)).toEqual({ atLocation: start.get(itemId)!.toNumber(), total: start.get(itemId)!.toNumber() });

      // A transfer: every item sends k from `from` and `to` receives k + 0.1 (150 distinct
      // balances; the `to` rows do not exist yet). All sends first, then all receipts. k is
      // more than half the starting stock, so applying any send twice would break the
      // no-negative-stock rule.
      const k = new Map(itemIds.map((id, i) => [id, new Decimal(i % 5).times("0.5").plus("6.25")]));
      const changes: StockChange[] = [
        ...itemIds.map((itemId) => ({ itemId, variationId: variationOf.get(itemId)!, locationId: from, deltas: { onHand: k.get(itemId)!.neg().toNumber() } })),
        ...itemIds.map((itemId) => ({
          itemId,
          variationId: variationOf.get(itemId)!,
          locationId: to,
          deltas: { onHand: k.get(itemId)!.plus("0.1").toNumber() },
        })),
      ];
      expect(changes).toHaveLength(150);
      const chunks = chunkIndexes(changes);
      expect(chunks.length).toBeGreaterThan(1);
      const expectedFrom = new Map(itemIds.map((id) => [id, start.get(id)!.minus(k.get(id)!).toNumber()]));
      const expectedTo = new Map(itemIds.map((id) => [id, k.get(id)!.plus("0.1").toNumber()]));

      const journalId = randomUUID();
      await insertJournal(journalRecord(accountId, journalId, { sourceType: "stock_transfer", sourceId: "test" }, changes));
      expect((await readJournal(accountId, journalId))?.status).toBe("pending");

      // A crash after the first chunk.
      expect(await applyJournal(accountId, journalId, { stopAfterChunks: 1 })).toBe("interrupted");
      const stored = await readJournal(accountId, journalId);
      expect(stored?.status).toBe("pending");
      expect([...(stored?.appliedChunks ?? [])]).toEqual([0]);
      const firstChunkItems = new Set(chunks[0]!.map((i) => changes[i]!.itemId));
      expect(firstChunkItems.size).toBeGreaterThan(0);
      expect(firstChunkItems.size).toBeLessThan(itemIds.length);
      const [midFrom, midTo] = [await quantitiesAt(client, itemIds, from), await quantitiesAt(client, itemIds, to)];
      for (const itemId of itemIds) {
        const moved = firstChunkItems.has(itemId);
        expect(midFrom.get(itemId)!.atLocation, itemId).toBe(moved ? expectedFrom.get(itemId) : start.get(itemId)!.toNumber());
        expect(midTo.get(itemId)!.atLocation, itemId).toBe(moved ? expectedTo.get(itemId) : 0);
      }

      // Two appliers at once (a retry racing the original), then one more: every chunk still
      // applies exactly once. Their outcomes are checked last, after the stored effects.
      const concurrent = await Promise.allSettled([applyJournal(accountId, journalId), applyJournal(accountId, journalId)]);
      expect(await applyJournal(accountId, journalId)).toBe("applied");
      const done = await readJournal(accountId, journalId);
      expect(done?.status).toBe("applied");
      expect([...(done?.appliedChunks ?? [])].sort((a, b) => a - b)).toEqual(chunks.map((_, n) => n));

      const [endFrom, endTo] = [await quantitiesAt(client, itemIds, from), await quantitiesAt(client, itemIds, to)];
      for (const itemId of itemIds) {
        expect(endFrom.get(itemId)!.atLocation, itemId).toBe(expectedFrom.get(itemId));
        expect(endTo.get(itemId)!.atLocation, itemId).toBe(expectedTo.get(itemId));
        expect(endFrom.get(itemId)!.total, itemId).toBe(start.get(itemId)!.plus("0.1").toNumber());
      }

      // Exactly one history entry per change, with the balance each one produced.
      const entries = (await Promise.all(itemIds.map((itemId) => historyOf(accountId, itemId, "stock_transfer")))).flat();
      expect(entries).toHaveLength(150);
      expect(entries.every((e) => e.journalId === journalId)).toBe(true);
      expect(new Set(entries.map((e) => e.entryId))).toEqual(new Set(changes.map((_, i) => `${journalId}:${i}`)));
      for (const entry of entries) {
        const index = Number(entry.entryId.split(":")[1]);
        const changed = changes[index]!;
        expect(entry).toMatchObject({ itemId: changed.itemId, locationId: changed.locationId, onHandDelta: changed.deltas.onHand });
        expect(entry.onHandAfter).toBe(changed.locationId === from ? expectedFrom.get(entry.itemId) : expectedTo.get(entry.itemId));
      }

      // Rows: one per item and location, distinct item_variation_location_ids, and each item's
      // stock moved exactly once per journal.
      const rows = (await Promise.all(itemIds.map((itemId) => storedRows(accountId, itemId)))).flat();
      expect(rows).toHaveLength(150);
      expect(new Set(rows.map((r) => r.ivlId)).size).toBe(150);
      // The account's row sequence has no gaps: 75 rows from the opening journal, 75 from the transfer.
      expect(rows.map((r) => r.ivlId).sort((a, b) => a - b)).toEqual(Array.from({ length: 150 }, (_, i) => i + 1));
      for (const r of rows) expect(r.onHand, `${r.itemId} ${r.locationId}`).toBe(r.locationId === from ? expectedFrom.get(r.itemId) : expectedTo.get(r.itemId));
      const { data: items } = await db()
        .entities.item.get(itemIds.map((itemId) => ({ accountId, itemId })))
        .go({ consistent: true });
      expect(items).toHaveLength(75);
      expect(items.map((i) => i.stockVersion)).toEqual(items.map(() => 2));
      const visible = await variations(client, itemIds[0]!);
      expect(visible[0]!.locations.map((l: any) => l.location_id).sort()).toEqual([from, to].sort());

      // Both concurrent appliers finished with "applied": one that finds a chunk already
      // applied by the other skips it (it must not fail on a rule the chunk would break twice).
      expect(concurrent.map((r) => (r.status === "fulfilled" ? r.value : String(r.reason)))).toEqual(["applied", "applied"]);
    },
    scaled(60_000),
  );

  it("postJournal applies a small set of changes end to end", async () => {
    const { account, client } = await setup();
    const accountId = account.accountId;
    const [l1, l2] = [await createLocation(client), await createLocation(client)];
    const a = await createItem(client);
    const b = await createItem(client, { variations: [{ values: { Colour: "Red" } }, { values: { Colour: "Blue" } }] });
    const [aBase] = await variations(client, a.id);
    const [red, blue] = await variations(client, b.id);
    await adjustOk(client, a.id, { location_id: l1, quantity: 2 });

    const changes: StockChange[] = [
      { itemId: a.id, variationId: aBase!.id, locationId: l1, deltas: { onHand: 3 } },
      { itemId: b.id, variationId: red!.id, locationId: l2, deltas: { onHand: 1.25 } },
      { itemId: a.id, variationId: aBase!.id, locationId: l1, deltas: { onHand: -4.5 } },
      { itemId: b.id, variationId: blue!.id, locationId: l2, deltas: { onHand: 2, incoming: 1 } },
    ];
    const journalId = await postJournal({ accountId, source: { sourceType: "purchase_order", sourceId: "po-1", reason: "test" }, changes });
    expect(journalId).toMatch(UUID);
    expect((await readJournal(accountId, journalId))?.status).toBe("applied");
    // Running it again changes nothing.
    expect(await applyJournal(accountId, journalId)).toBe("applied");

    expect((await getItem(client, a.id)).quantity).toBe(0.5);
    const bItem = await getItem(client, b.id);
    expect(bItem.quantity).toBe(3.25);
    expect(bItem.quantity_incoming).toBe(1);
    const bVars = await variations(client, b.id);
    expect(bVars.map((v) => [v.id, v.quantity, v.quantity_incoming, v.locations.map((l: any) => l.location_id)])).toEqual([
      [red!.id, 1.25, 0, [l2]],
      [blue!.id, 2, 1, [l2]],
    ]);

    const aHistory = await historyOf(accountId, a.id, "purchase_order");
    expect(aHistory.map((e) => [e.entryId, e.onHandDelta, e.onHandAfter, e.sourceId, e.reason])).toEqual([
      [`${journalId}:0`, 3, 5, "po-1", "test"],
      [`${journalId}:2`, -4.5, 0.5, "po-1", "test"],
    ]);
    const bHistory = await historyOf(accountId, b.id, "purchase_order");
    expect(bHistory.map((e) => e.entryId).sort()).toEqual([`${journalId}:1`, `${journalId}:3`]);
    const ivls = [...(await storedRows(accountId, a.id)), ...(await storedRows(accountId, b.id))].map((r) => r.ivlId);
    expect(new Set(ivls).size).toBe(3);
  });

  it("applies a journal of one item with many variations (60 balances of one item, more than one transaction holds)", async () => {
    // E.g. a purchase order receiving 30 sizes of one item at 2 locations: the journal exists
    // precisely so that such a document is applied, exactly once.
    const { account, client } = await setup();
    const accountId = account.accountId;
    const [l1, l2] = [await createLocation(client), await createLocation(client)];
    const item = await createItem(client, { variations: Array.from({ length: 30 }, (_, i) => ({ values: { Size: `S${i}` } })) });
    const vars = await variations(client, item.id);
    expect(vars).toHaveLength(30);
    const changes: StockChange[] = vars.flatMap((v, i) => [
      { itemId: item.id, variationId: v.id, locationId: l1, deltas: { onHand: i + 1 } },
      { itemId: item.id, variationId: v.id, locationId: l2, deltas: { onHand: 0.5 } },
    ]);
    let journalId: string | undefined;
    let failure: unknown;
    try {
      journalId = await postJournal({ accountId, source: { sourceType: "purchase_order", sourceId: "po-big" }, changes });
    } catch (error) {
      failure = error;
    }
    expect(failure === undefined ? undefined : String(failure)).toBeUndefined();
    expect((await readJournal(accountId, journalId!))?.status).toBe("applied");
    expect((await getItem(client, item.id)).quantity).toBe((30 * 31) / 2 + 15);
    expect(await storedRows(accountId, item.id)).toHaveLength(60);
    expect(await historyOf(accountId, item.id, "purchase_order")).toHaveLength(60);
  });
});
