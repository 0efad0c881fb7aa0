import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { inBatches } from "../support/batches.js";
import { HOLD_LEASE_MS, holdStock, readHold } from "../../lib/domain/inventory/stock-holds.js";
import { sweepExpiredHolds } from "../../lib/domain/inventory/service.js";
import { releaseHold } from "../../lib/domain/inventory/settling.js";
import { readItemTree } from "../../lib/db/inventory.js";
import { useApiServer, type ApiClient } from "../support/api.js";
import { expectError, expectValidation } from "../support/assertions.js";
import { idempotencyKey, newAccount, newUser, type TestAccount } from "../support/fixtures.js";
import { scaled } from "../support/timeouts.js";

/**
 * Stock transfers through HTTP against DynamoDB Local (spec part 2, sections 2.2, 3.2, 4.2;
 * architecture section 5): every transition moves stock through the ledger in the transfer's
 * own write, and nothing changes when a rule refuses it; transfers larger than one transaction
 * take a stock hold (released on refusal, or by the sweeper when its writer died).
 */
const api = useApiServer();

const KEYS = [
  "id",
  "object",
  "stock_transfer_number",
  "assigned_user_id",
  "status_id",
  "status",
  "origin_location",
  "destination_location",
  "issue_date",
  "estimated_arrival_date",
  "date_sent",
  "date_received",
  "shipping_provider",
  "shipping_tracking_code",
  "created_at",
  "updated_at",
];
const LINE_KEYS = ["id", "object", "item_id", "item_variation_location_id", "name", "description", "variation", "quantity", "unit_id"];

interface World {
  account: TestAccount;
  client: ApiClient;
  origin: string;
  destination: string;
}

async function world(): Promise<World> {
  const account = await newAccount();
  const client = api().withKey(account.ownerKey);
  const location = async (name: string) =>
    (await client.post("/locations", { name, short_name: name.slice(0, 5) }, { idempotencyKey: idempotencyKey() })).body.id as string;
  return { account, client, origin: await location("North"), destination: await location("South") };
}

async function stockedItem(w: World, quantity: number, body: Record<string, unknown> = {}): Promise<Record<string, any>> {
  const item = (await w.client.post("/items", { name: `Item ${randomUUID().slice(0, 8)}`, ...body })).body;
  if (quantity > 0) {
    const adjusted = await w.client.post(`/items/${item.id}/adjustments`, { location_id: w.origin, quantity });
    expect(adjusted.status, adjusted.text).toBe(201);
  }
  return item;
}

/** On hand and in transit of an item at a location. */
async function at(w: World, itemId: string, locationId: string): Promise<{ onHand: number; inTransit: number }> {
  const tree = await readItemTree(w.account.accountId, itemId);
  const rows = tree.rows.filter((row) => row.locationId === locationId);
  return { onHand: rows.reduce((s, r) => s + r.onHand, 0), inTransit: rows.reduce((s, r) => s + r.inTransit, 0) };
}

async function transfer(w: World, lines: Record<string, unknown>[], extra: Record<string, unknown> = {}) {
  return w.client.post("/stock-transfers", { origin_location_id: w.origin, destination_location_id: w.destination, lines, ...extra });
}

describe("connected: stock transfers", () => {
  it("creates a pending transfer of lines at the origin; send and receive move the stock", async () => {
    const w = await world();
    const bolt = await stockedItem(w, 10, { description: "M6 bolt" });
    const created = await transfer(w, [{ item_id: bolt.id, quantity: 4 }], { shipping_provider: "UPS", estimated_arrival_date: "2026-12-01" });
    expect(created.status, created.text).toBe(201);
    const t = created.body;
    expect(Object.keys(t)).toEqual([...KEYS, "lines"]);
    expect(t).toMatchObject({
      object: "stock_transfer",
      stock_transfer_number: 1,
      assigned_user_id: w.account.ownerUserId,
      status_id: 26,
      status: "Pending",
      origin_location: { id: w.origin, name: "North" },
      destination_location: { id: w.destination, name: "South" },
      estimated_arrival_date: "2026-12-01",
      shipping_provider: "UPS",
      date_sent: null,
    });
    expect(t.issue_date).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    expect(Object.keys(t.lines[0])).toEqual(LINE_KEYS);
    expect(t.lines[0]).toMatchObject({ item_id: bolt.id, name: bolt.name, description: "M6 bolt", quantity: 4, variation: "" });
    expect(await at(w, bolt.id, w.origin)).toEqual({ onHand: 10, inTransit: 0 });

    const sent = await w.client.post(`/stock-transfers/${t.id}/send`, { date_sent: "2026-11-23", shipping_tracking_code: "TRACK-1" });
    expect(sent.status, sent.text).toBe(200);
    expect(sent.body).toMatchObject({ status_id: 27, status: "In Transit", date_sent: "2026-11-23", shipping_tracking_code: "TRACK-1" });
    expect(await at(w, bolt.id, w.origin)).toEqual({ onHand: 6, inTransit: 0 });
    expect(await at(w, bolt.id, w.destination)).toEqual({ onHand: 0, inTransit: 4 });
    expect((await w.client.get(`/items/${bolt.id}`)).body).toMatchObject({ quantity: 6, in_transit: 4 });
    expectError(await w.client.post(`/stock-transfers/${t.id}/send`, {}), 409, "stock_transfer_send_not_allowed");

    const received = await w.client.post(`/stock-transfers/${t.id}/receive`, { date_received: "2026-11-25" });
    expect(received.status, received.text).toBe(200);
    expect(received.body).toMatchObject({ status_id: 28, status: "Transferred", date_received: "2026-11-25" });
    expect(await at(w, bolt.id, w.destination)).toEqual({ onHand: 4, inTransit: 0 });
    expectError(await w.client.post(`/stock-transfers/${t.id}/receive`, {}), 409, "stock_transfer_receive_not_allowed");
    expectError(await w.client.patch(`/stock-transfers/${t.id}`, { shipping_provider: "DHL" }), 409, "stock_transfer_update_not_allowed");
    expect((await w.client.get(`/stock-transfers/${t.id}`)).body).toEqual(received.body);
  });

  it("refuses bad input with nothing created", async () => {
    const w = await world();
    const other = await world();
    const bolt = await stockedItem(w, 5);
    const nowhere = await stockedItem(w, 0);
    const shirt = (await w.client.post("/items", { name: "Shirt", variations: [{ values: { Size: "S" } }, { values: { Size: "M" } }] })).body;
    expectValidation(await transfer(w, [{ item_id: bolt.id, quantity: 1 }], { destination_location_id: w.origin }), "destination_location_id");
    expectValidation(await transfer(w, [{ item_id: bolt.id, quantity: 1 }], { origin_location_id: other.origin }), "origin_location_id", "invalid_reference");
    expectValidation(await transfer(w, [{ item_id: nowhere.id, quantity: 1 }]), "lines[0].item_id", "not_at_origin");
    expectValidation(await transfer(w, [{ item_id: shirt.id, quantity: 1 }]), "lines[0].item_variation_location_id", "required");
    expectValidation(await transfer(w, [{ item_id: bolt.id, quantity: 0 }]), "lines[0].quantity");
    expectValidation(
      await transfer(
        w,
        Array.from({ length: 101 }, () => ({ item_id: bolt.id, quantity: 1 })),
      ),
      "lines",
      "too_many",
    );
    expectValidation(await transfer(w, [{ item_id: bolt.id, quantity: 1 }], { status_id: 27 }), "status_id", "unknown_field");
    expect((await w.client.get("/stock-transfers")).body.pagination.total_records).toBe(0);
  });

  it("stores unique items as 1 and takes variation rows at the origin", async () => {
    const w = await world();
    const meter = await stockedItem(w, 1, { inventory_type: "unique", serial_number: "SN-1" });
    const shirt = (await w.client.post("/items", { name: "Shirt", variations: [{ values: { Size: "S" } }, { values: { Size: "M" } }] })).body;
    const variations = (await w.client.get(`/items/${shirt.id}/variations`)).body.data;
    await w.client.post(`/items/${shirt.id}/adjustments`, { location_id: w.origin, quantity: 3, item_variation_id: variations[1].id });
    const row = (await w.client.get(`/items/${shirt.id}/variations`, { include: "locations" })).body.data[1].locations[0];
    const created = await transfer(w, [
      { item_id: meter.id, quantity: 5 },
      { item_id: shirt.id, item_variation_location_id: row.item_variation_location_id, quantity: 2 },
    ]);
    expect(created.status, created.text).toBe(201);
    expect(created.body.lines[0].quantity).toBe(1);
    expect(created.body.lines[1]).toMatchObject({ item_variation_location_id: row.item_variation_location_id, variation: "Size: M", quantity: 2 });
  });

  it("a unique item in transit is its one unit: adding another is 422; the transfer still receives, or deletes in every state, past one transaction too", async () => {
    const w = await world();
    const third = (await w.client.post("/locations", { name: "East", short_name: "East" }, { idempotencyKey: idempotencyKey() })).body.id as string;
    const meter = await stockedItem(w, 1, { inventory_type: "unique", serial_number: `SN-${randomUUID().slice(0, 8)}` });
    const moving = (await transfer(w, [{ item_id: meter.id, quantity: 1 }])).body;
    expect((await w.client.post(`/stock-transfers/${moving.id}/send`, {})).status).toBe(200);
    const second = await w.client.post(`/items/${meter.id}/adjustments`, { location_id: third, quantity: 1 });
    expectValidation(second, "quantity", "unique_item");
    expect(await at(w, meter.id, third)).toEqual({ onHand: 0, inTransit: 0 });
    expect(await at(w, meter.id, w.destination)).toEqual({ onHand: 0, inTransit: 1 });
    const received = await w.client.post(`/stock-transfers/${moving.id}/receive`, {});
    expect(received.status, received.text).toBe(200);
    expect(await at(w, meter.id, w.destination)).toEqual({ onHand: 1, inTransit: 0 });

    // More lines than one transaction takes (a stock hold, checked change by change): a send,
    // and a delete in transit and once transferred, never count the unit twice.
    const fillers = await Promise.all(
      Array.from({ length: 10 }, async () => {
        const item = (await w.client.post("/items", { name: `Filler ${randomUUID().slice(0, 8)}` })).body;
        expect((await w.client.post(`/items/${item.id}/adjustments`, { location_id: w.destination, quantity: 5 })).status).toBe(201);
        return item;
      }),
    );
    const lines = [{ item_id: meter.id, quantity: 1 }, ...fillers.map((f) => ({ item_id: f.id, quantity: 2 }))];
    for (const receivedFirst of [false, true]) {
      const t = await w.client.post("/stock-transfers", { origin_location_id: w.destination, destination_location_id: third, lines });
      expect(t.status, t.text).toBe(201);
      const sent = await w.client.post(`/stock-transfers/${t.body.id}/send`, {});
      expect(sent.status, sent.text).toBe(200);
      expect(await at(w, meter.id, third)).toEqual({ onHand: 0, inTransit: 1 });
      if (receivedFirst) expect((await w.client.post(`/stock-transfers/${t.body.id}/receive`, {})).status).toBe(200);
      const removed = await w.client.request("DELETE", `/stock-transfers/${t.body.id}`);
      expect(removed.status, removed.text).toBe(200);
      expect(await at(w, meter.id, w.destination)).toEqual({ onHand: 1, inTransit: 0 });
      expect(await at(w, meter.id, third)).toEqual({ onHand: 0, inTransit: 0 });
      expect(await at(w, fillers[0]!.id, w.destination)).toEqual({ onHand: 5, inTransit: 0 });
    }
  });

  it("a send that would take origin stock below zero is 422 naming the line, and changes nothing", async () => {
    const w = await world();
    const a = await stockedItem(w, 5);
    const b = await stockedItem(w, 2);
    const t = (
      await transfer(w, [
        { item_id: a.id, quantity: 3 },
        { item_id: b.id, quantity: 2 },
      ])
    ).body;
    await w.client.post(`/items/${b.id}/adjustments`, { location_id: w.origin, quantity: -1 });
    const refused = await w.client.post(`/stock-transfers/${t.id}/send`, {});
    expectValidation(refused, "lines[1].quantity", "insufficient_stock");
    expect(await at(w, a.id, w.origin)).toEqual({ onHand: 5, inTransit: 0 });
    expect(await at(w, a.id, w.destination)).toEqual({ onHand: 0, inTransit: 0 });
    expect((await w.client.get(`/stock-transfers/${t.id}`)).body.status).toBe("Pending");
  });

  it(
    "parallel 100-line sends of one item that stock covers only twice: two send, one is 422, none waits for the others' holds until they give up (no 503)",
    async () => {
      const w = await world();
      const item = await stockedItem(w, 250);
      const lines = Array.from({ length: 100 }, () => ({ item_id: item.id, quantity: 1 }));
      const transfers = await Promise.all([1, 2, 3].map(async () => (await transfer(w, lines)).body.id as string));
      // Each send's changes of the one item span two chunks: the holds' first chunks together
      // reserve more than the rest of the stock, so each one's second chunk meets the others'.
      const sends = await Promise.all(transfers.map((id) => w.client.post(`/stock-transfers/${id}/send`, {})));
      expect(sends.map((r) => r.status).sort(), sends.map((r) => r.text.slice(0, 200)).join("\n")).toEqual([200, 200, 422]);
      for (const refused of sends.filter((r) => r.status === 422)) expectValidation(refused, "lines[0].quantity", "insufficient_stock");
      expect(await at(w, item.id, w.origin)).toEqual({ onHand: 50, inTransit: 0 });
      expect(await at(w, item.id, w.destination)).toEqual({ onHand: 0, inTransit: 200 });
    },
    scaled(120_000),
  );

  it("updates pending and in-transit transfers; in transit the stock difference moves", async () => {
    const w = await world();
    const a = await stockedItem(w, 10);
    const b = await stockedItem(w, 10);
    const t = (await transfer(w, [{ item_id: a.id, quantity: 4 }])).body;
    const pending = await w.client.patch(`/stock-transfers/${t.id}`, {
      issue_date: "2026-11-01",
      shipping_provider: "FedEx",
      lines: [{ id: t.lines[0].id, item_id: a.id, quantity: 5 }],
    });
    expect(pending.status, pending.text).toBe(200);
    expect(pending.body).toMatchObject({ issue_date: "2026-11-01", shipping_provider: "FedEx" });
    expect(pending.body.lines[0]).toMatchObject({ id: t.lines[0].id, quantity: 5 });
    expect(await at(w, a.id, w.origin)).toEqual({ onHand: 10, inTransit: 0 });
    await w.client.post(`/stock-transfers/${t.id}/send`, {});
    expect(await at(w, a.id, w.origin)).toEqual({ onHand: 5, inTransit: 0 });
    const inTransit = await w.client.patch(`/stock-transfers/${t.id}`, {
      lines: [
        { id: t.lines[0].id, item_id: a.id, quantity: 2 },
        { item_id: b.id, quantity: 3 },
      ],
      estimated_arrival_date: "",
    });
    expect(inTransit.status, inTransit.text).toBe(200);
    expect(inTransit.body.estimated_arrival_date).toBeNull();
    expect(await at(w, a.id, w.origin)).toEqual({ onHand: 8, inTransit: 0 });
    expect(await at(w, a.id, w.destination)).toEqual({ onHand: 0, inTransit: 2 });
    expect(await at(w, b.id, w.origin)).toEqual({ onHand: 7, inTransit: 0 });
    expect(await at(w, b.id, w.destination)).toEqual({ onHand: 0, inTransit: 3 });
    expectValidation(
      await w.client.patch(`/stock-transfers/${t.id}`, { lines: [{ item_id: b.id, quantity: 100 }] }),
      "lines[0].quantity",
      "insufficient_stock",
    );
    // Several lines of one row: the one that moves the most is named.
    expectValidation(
      await w.client.patch(`/stock-transfers/${t.id}`, {
        lines: [
          { item_id: b.id, quantity: 1 },
          { item_id: b.id, quantity: 1 },
          { item_id: b.id, quantity: 100 },
        ],
      }),
      "lines[2].quantity",
      "insufficient_stock",
    );
    expect(await at(w, b.id, w.origin)).toEqual({ onHand: 7, inTransit: 0 });
  });

  it("deletes with reversal in every state, and refuses an unsafe reversal with 409", async () => {
    const w = await world();
    const a = await stockedItem(w, 10);
    const pending = (await transfer(w, [{ item_id: a.id, quantity: 1 }])).body;
    const removed = await w.client.request("DELETE", `/stock-transfers/${pending.id}`);
    expect(removed.body).toEqual({ id: pending.id, object: "stock_transfer", deleted: true });
    expectError(await w.client.request("DELETE", `/stock-transfers/${pending.id}`), 404, "resource_missing");

    const moving = (await transfer(w, [{ item_id: a.id, quantity: 3 }])).body;
    await w.client.post(`/stock-transfers/${moving.id}/send`, {});
    expect((await w.client.request("DELETE", `/stock-transfers/${moving.id}`)).status).toBe(200);
    expect(await at(w, a.id, w.origin)).toEqual({ onHand: 10, inTransit: 0 });
    expect(await at(w, a.id, w.destination)).toEqual({ onHand: 0, inTransit: 0 });

    const done = (await transfer(w, [{ item_id: a.id, quantity: 4 }])).body;
    await w.client.post(`/stock-transfers/${done.id}/send`, {});
    await w.client.post(`/stock-transfers/${done.id}/receive`, {});
    expect(await at(w, a.id, w.destination)).toEqual({ onHand: 4, inTransit: 0 });
    await w.client.post(`/items/${a.id}/adjustments`, { location_id: w.destination, quantity: -3 });
    expectError(await w.client.request("DELETE", `/stock-transfers/${done.id}`), 409, "stock_transfer_delete_not_allowed");
    expect(await at(w, a.id, w.destination)).toEqual({ onHand: 1, inTransit: 0 });
    expect(await at(w, a.id, w.origin)).toEqual({ onHand: 6, inTransit: 0 });
    await w.client.post(`/items/${a.id}/adjustments`, { location_id: w.destination, quantity: 3 });
    expect((await w.client.request("DELETE", `/stock-transfers/${done.id}`)).status).toBe(200);
    expect(await at(w, a.id, w.destination)).toEqual({ onHand: 0, inTransit: 0 });
    expect(await at(w, a.id, w.origin)).toEqual({ onHand: 10, inTransit: 0 });
    expect((await w.client.get("/stock-transfers")).body.pagination.total_records).toBe(0);
  });

  it("lists newest first with filters; visibility is account-wide; reads need inventory.manage", async () => {
    const w = await world();
    const a = await stockedItem(w, 20);
    const first = (await transfer(w, [{ item_id: a.id, quantity: 1 }], { shipping_tracking_code: "ABC-XYZ" })).body;
    const second = (await transfer(w, [{ item_id: a.id, quantity: 1 }])).body;
    await w.client.post(`/stock-transfers/${second.id}/send`, {});
    const ids = (params: Record<string, string | number>) => w.client.get("/stock-transfers", params).then((r) => r.body.data.map((t: any) => t.id));
    expect(await ids({})).toEqual([second.id, first.id]);
    expect(await ids({ status_id: 27 })).toEqual([second.id]);
    expect(await ids({ q: "c-xy" })).toEqual([first.id]);
    expect(await ids({ q: "2" })).toEqual([second.id]);
    expect(await ids({ origin_location_id: w.origin, destination_location_id: w.destination, assigned_user_id: w.account.ownerUserId })).toEqual([
      second.id,
      first.id,
    ]);
    expect(await ids({ destination_location_id: w.origin })).toEqual([]);
    // Issue-date bounds: one alone, both, and reversed (empty).
    const issued = first.issue_date as string;
    expect(await ids({ issue_date_to: issued })).toEqual([second.id, first.id]);
    expect(await ids({ issue_date_from: issued })).toEqual([second.id, first.id]);
    expect(await ids({ issue_date_to: "2000-01-01" })).toEqual([]);
    expect(await ids({ issue_date_from: "2999-01-01" })).toEqual([]);
    expect(await ids({ issue_date_from: "2999-01-01", issue_date_to: "2000-01-01" })).toEqual([]);
    const staff = await newUser(w.account, { permissions: ["inventory.manage"] });
    const staffList = await api().withKey(staff.key).get("/stock-transfers");
    expect(staffList.body.data.map((t: any) => t.id)).toEqual([second.id, first.id]);
    expectError(await api().withKey(staff.key).post(`/stock-transfers/${first.id}/send`, {}), 403, "permission_denied");
    const nobody = await newUser(w.account, { permissions: ["inventory.modify"] });
    expectError(await api().withKey(nobody.key).get("/stock-transfers"), 403, "permission_denied");
    expectError(await (await world()).client.get(`/stock-transfers/${first.id}`), 404, "resource_missing");
  });

  it(
    "sends and receives 100 lines of 100 different items (a stock hold), and a refusal releases everything",
    async () => {
      const w = await world();
      const items = await inBatches(100, () => stockedItem(w, 5));
      const t = (
        await transfer(
          w,
          items.map((item) => ({ item_id: item.id, quantity: 2 })),
        )
      ).body;
      // One item short: the whole send is refused and every applied chunk is released.
      await w.client.post(`/items/${items[77]!.id}/adjustments`, { location_id: w.origin, quantity: -4 });
      expectValidation(await w.client.post(`/stock-transfers/${t.id}/send`, {}), "lines[77].quantity", "insufficient_stock");
      for (const item of [items[0]!, items[50]!, items[99]!]) {
        expect(await at(w, item.id, w.origin)).toEqual({ onHand: 5, inTransit: 0 });
        expect(await at(w, item.id, w.destination)).toEqual({ onHand: 0, inTransit: 0 });
      }
      await w.client.post(`/items/${items[77]!.id}/adjustments`, { location_id: w.origin, quantity: 4 });
      let started = Date.now();
      const sent = await w.client.post(`/stock-transfers/${t.id}/send`, {});
      const sendMs = Date.now() - started;
      expect(sent.status, sent.text).toBe(200);
      started = Date.now();
      const received = await w.client.post(`/stock-transfers/${t.id}/receive`, {});
      const receiveMs = Date.now() - started;
      expect(received.status, received.text).toBe(200);
      for (const item of items) {
        expect(await at(w, item.id, w.origin)).toEqual({ onHand: 3, inTransit: 0 });
        expect(await at(w, item.id, w.destination)).toEqual({ onHand: 2, inTransit: 0 });
      }
      console.log(`100-line stock transfer: send ${sendMs} ms, receive ${receiveMs} ms`);
    },
    scaled(180_000),
  );

  it("an item under a live hold is not deleted until the hold ends: the deletion waits, then goes through once it was released", async () => {
    const w = await world();
    const a = await stockedItem(w, 5);
    const tree = await readItemTree(w.account.accountId, a.id);
    const hold = await holdStock({
      accountId: w.account.accountId,
      source: { sourceType: "stock_transfer", reason: "test: a long write in flight" },
      changes: [{ itemId: a.id, variationId: tree.variations[0]!.variationId, locationId: w.origin, deltas: { onHand: -3 } }],
    });
    let deletedAt = 0;
    const deletion = w.client.request("DELETE", `/items/${a.id}`).then((response) => {
      deletedAt = Date.now();
      return response;
    });
    await new Promise((resolve) => setTimeout(resolve, 500));
    const releasedAt = Date.now();
    await releaseHold(w.account.accountId, hold.journalId, "test: the writer gave up");
    const deleted = await deletion;
    expect(deleted.status, deleted.text).toBe(200);
    expect(deletedAt).toBeGreaterThanOrEqual(releasedAt);
    expectError(await w.client.get(`/items/${a.id}`), 404, "resource_missing");
  });

  it("a hold whose writer died is invisible, reserves its stock until its lease ran out, then the sweeper releases it", async () => {
    const w = await world();
    const a = await stockedItem(w, 5);
    const tree = await readItemTree(w.account.accountId, a.id);
    const hold = await holdStock({
      accountId: w.account.accountId,
      source: { sourceType: "stock_transfer", reason: "test: writer dies" },
      changes: Array.from({ length: 1 }, () => ({ itemId: a.id, variationId: tree.variations[0]!.variationId, locationId: w.origin, deltas: { onHand: -3 } })),
    });
    // Not committed: readers see nothing of it, but no other write can take the 3 it holds.
    expect(await at(w, a.id, w.origin)).toEqual({ onHand: 5, inTransit: 0 });
    expect((await readHold(w.account.accountId, hold.journalId))?.status).toBe("held");
    expect((await w.client.post(`/items/${a.id}/adjustments`, { location_id: w.origin, quantity: -2 })).status).toBe(201);
    expect(await at(w, a.id, w.origin)).toEqual({ onHand: 3, inTransit: 0 });
    await sweepExpiredHolds(Date.now());
    expect((await readHold(w.account.accountId, hold.journalId))?.status).toBe("held");
    await sweepExpiredHolds(Date.now() + HOLD_LEASE_MS + 1000);
    expect((await readHold(w.account.accountId, hold.journalId))?.status).toBe("released");
    expect(await at(w, a.id, w.origin)).toEqual({ onHand: 3, inTransit: 0 });
    const row = (await readItemTree(w.account.accountId, a.id)).rows.find((r) => r.locationId === w.origin)!;
    expect(row.pending).toBeUndefined();
    // A second sweep finds nothing more to do; the stock it held is free again.
    await sweepExpiredHolds(Date.now() + HOLD_LEASE_MS + 1000);
    expect((await w.client.post(`/items/${a.id}/adjustments`, { location_id: w.origin, quantity: -3 })).status).toBe(201);
    expect(await at(w, a.id, w.origin)).toEqual({ onHand: 0, inTransit: 0 });
  });
});
