import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { inBatches } from "../support/batches.js";
import { db } from "../../lib/db/service.js";
import { useStreamPoller } from "../support/stream-poller.js";
import { useApiServer, type ApiClient } from "../support/api.js";
import { expectError, expectValidation } from "../support/assertions.js";
import { idempotencyKey, newAccount, type TestAccount } from "../support/fixtures.js";
import { scaled } from "../support/timeouts.js";

/**
 * Purchase orders' stock effects (spec part 2, sections 3.1 and 4.1; architecture sections 5
 * and 8): sending makes unreceived quantities incoming, receiving moves them on hand through the
 * ledger with the moving average cost, all or nothing; parallel receives never over-receive; a
 * 100-line receipt of 100 different items works; items referenced by an order cannot be
 * deleted; every change marks `purchase_order` in the sync feed.
 */
const api = useApiServer();
const poller = useStreamPoller();

interface World {
  account: TestAccount;
  client: ApiClient;
  supplier: string;
  location: string;
}

async function world(): Promise<World> {
  const account = await newAccount();
  const client = api().withKey(account.ownerKey);
  const supplier = await client.post("/suppliers", { name: `Supplier ${randomUUID().slice(0, 6)}` });
  const location = await client.post("/locations", { name: "Main", short_name: "MAIN" }, { idempotencyKey: idempotencyKey() });
  return { account, client, supplier: supplier.body.id, location: location.body.id };
}

async function item(client: ApiClient, body: Record<string, unknown> = {}): Promise<Record<string, any>> {
  const created = await client.post("/items", { name: `Item ${randomUUID().slice(0, 8)}`, cost: "2.0000", ...body });
  expect(created.status, created.text).toBe(201);
  return created.body;
}

/** A Not Sent purchase order of the world's supplier at its location, created (201). */
async function newOrder(w: World, lines: unknown[]): Promise<Record<string, any>> {
  const created = await w.client.post("/purchase-orders", { supplier_id: w.supplier, location_id: w.location, lines });
  expect(created.status, created.text).toBe(201);
  return created.body;
}

const stock = async (client: ApiClient, itemId: string) => {
  const body = (await client.get(`/items/${itemId}`)).body;
  return { quantity: body.quantity, incoming: body.quantity_incoming };
};

async function storedAverageCost(accountId: string, itemId: string): Promise<string | undefined> {
  const { data } = await db().entities.item.get({ accountId, itemId }).go({ consistent: true });
  return data?.averageCost;
}

describe("connected: purchase-order stock", () => {
  it("send makes unreceived quantities incoming; receives move them on hand step by step until Received", async () => {
    const w = await world();
    const a = await item(w.client, { cost: "3.0000" });
    const b = await item(w.client);
    const order = (
      await w.client.post("/purchase-orders", {
        supplier_id: w.supplier,
        location_id: w.location,
        lines: [
          { item_id: a.id, quantity: 10, unit_cost: "5" },
          { item_id: b.id, quantity: 4 },
          { name: "Freight", unit_cost: "20" },
        ],
      })
    ).body;
    const [lineA, lineB, freight] = order.lines;
    expectError(
      await w.client.post(`/purchase-orders/${order.id}/receive`, { lines: [{ line_id: lineA.id, quantity: 1 }] }),
      409,
      "purchase_order_receive_not_allowed",
    );
    expect(await stock(w.client, a.id)).toEqual({ quantity: 0, incoming: 0 });

    const sent = await w.client.post(`/purchase-orders/${order.id}/send`, { date_sent: "2026-11-20" });
    expect(sent.status, sent.text).toBe(200);
    expect(sent.body).toMatchObject({ status_id: 22, status: "Sent", date_sent: "2026-11-20" });
    expect(sent.body.lines[0].item_variation_location_id).toEqual(expect.any(Number));
    expect(sent.headers.get("etag")).toBe(`"${sent.body.revision}"`);
    expect(await stock(w.client, a.id)).toEqual({ quantity: 0, incoming: 10 });
    expect(await stock(w.client, b.id)).toEqual({ quantity: 0, incoming: 4 });
    const again = await w.client.post(`/purchase-orders/${order.id}/send`, { date_sent: "2026-11-22" });
    expect(again.body).toMatchObject({ status_id: 22, date_sent: "2026-11-20", revision: sent.body.revision });
    expect(await stock(w.client, a.id)).toEqual({ quantity: 0, incoming: 10 });

    // Refusals change nothing: over the remaining balance, a service line, a duplicate line.
    expectValidation(
      await w.client.post(`/purchase-orders/${order.id}/receive`, { lines: [{ line_id: lineA.id, quantity: 11 }] }),
      "lines[0].quantity",
      "too_large",
    );
    expectValidation(
      await w.client.post(`/purchase-orders/${order.id}/receive`, {
        lines: [
          { line_id: lineB.id, quantity: 1 },
          { line_id: freight.id, quantity: 1 },
        ],
      }),
      "lines[1].line_id",
      "not_inventory",
    );
    expectValidation(
      await w.client.post(`/purchase-orders/${order.id}/receive`, {
        lines: [
          { line_id: lineA.id, quantity: 1 },
          { line_id: lineA.id, quantity: 1 },
        ],
      }),
      "lines[1].line_id",
      "duplicate",
    );
    expect(await stock(w.client, a.id)).toEqual({ quantity: 0, incoming: 10 });
    expect(await stock(w.client, b.id)).toEqual({ quantity: 0, incoming: 4 });

    const partial = await w.client.post(`/purchase-orders/${order.id}/receive`, { lines: [{ line_id: lineA.id, quantity: 6 }], received_date: "2026-11-24" });
    expect(partial.status, partial.text).toBe(200);
    expect(partial.body).toMatchObject({ status_id: 23, status: "Partially Received", date_received: null });
    expect(partial.body.lines[0].quantity_received).toBe(6);
    expect(await stock(w.client, a.id)).toEqual({ quantity: 6, incoming: 4 });
    expect(await storedAverageCost(w.account.accountId, a.id)).toBe("5.0000");
    expectError(await w.client.post(`/purchase-orders/${order.id}/send`, {}), 409, "purchase_order_send_not_allowed");

    const rest = await w.client.post(`/purchase-orders/${order.id}/receive`, {
      lines: [
        { line_id: lineA.id, quantity: 4 },
        { line_id: lineB.id, quantity: 4 },
      ],
      received_date: "2026-11-25",
    });
    expect(rest.status, rest.text).toBe(200);
    expect(rest.body).toMatchObject({ status_id: 24, status: "Received", date_received: "2026-11-25" });
    expect(await stock(w.client, a.id)).toEqual({ quantity: 10, incoming: 0 });
    expect(await stock(w.client, b.id)).toEqual({ quantity: 4, incoming: 0 });
    expect(await storedAverageCost(w.account.accountId, b.id)).toBe("2.0000");
    expectError(
      await w.client.post(`/purchase-orders/${order.id}/receive`, { lines: [{ line_id: lineA.id, quantity: 1 }] }),
      409,
      "purchase_order_receive_not_allowed",
    );
    const history = await w.client.get(`/items/${a.id}/variations`, { include: "locations" });
    expect(history.body.data[0].locations[0]).toMatchObject({ location_id: w.location, quantity: 10, quantity_incoming: 0 });
  });

  it("If-Match on send, receive and payments: a stale revision is 409 mobile_mutation_conflict and changes nothing; the current one writes", async () => {
    const w = await world();
    const a = await item(w.client);
    const order = (
      await w.client.post("/purchase-orders", { supplier_id: w.supplier, location_id: w.location, lines: [{ item_id: a.id, quantity: 4, unit_cost: "5" }] })
    ).body;
    const url = `/purchase-orders/${order.id}`;
    const stale = { headers: { "if-match": '"po_stale"' } };
    const current = async () => ({ headers: { "if-match": (await w.client.get(url)).headers.get("etag")! } });
    const lines = [{ line_id: order.lines[0].id, quantity: 1 }];

    expectError(await w.client.post(`${url}/send`, {}, stale), 409, "mobile_mutation_conflict");
    expect((await w.client.get(url)).body).toMatchObject({ status_id: order.status_id, revision: order.revision });
    expect(await stock(w.client, a.id)).toEqual({ quantity: 0, incoming: 0 });
    expect((await w.client.post(`${url}/send`, {}, await current())).status).toBe(200);

    expectError(await w.client.post(`${url}/receive`, { lines }, stale), 409, "mobile_mutation_conflict");
    expect(await stock(w.client, a.id)).toEqual({ quantity: 0, incoming: 4 });
    const received = await w.client.post(`${url}/receive`, { lines }, await current());
    expect(received.status, received.text).toBe(200);
    expect(await stock(w.client, a.id)).toEqual({ quantity: 1, incoming: 3 });

    expectError(await w.client.post(`${url}/payments`, { amount: "5" }, stale), 409, "mobile_mutation_conflict");
    const paid = await w.client.post(`${url}/payments`, { amount: "5" }, await current());
    expect(paid.status, paid.text).toBe(201);
    expectError(await w.client.request("DELETE", `${url}/payments/${paid.body.id}`, undefined, stale), 409, "mobile_mutation_conflict");
    expect((await w.client.get(url)).body.amount_paid).toBe("5.0000");
    expect((await w.client.request("DELETE", `${url}/payments/${paid.body.id}`, undefined, await current())).status).toBe(200);
    expect((await w.client.get(url)).body.amount_paid).toBe("0.0000");
  });

  it("a line for more than one unit of an item made unique since is refused at send, naming the line, and nothing moves; at 1 the order sends", async () => {
    const w = await world();
    const plain = await item(w.client);
    const made = await item(w.client);
    const order = await newOrder(w, [
      { item_id: plain.id, quantity: 3 },
      { item_id: made.id, quantity: 5 },
    ]);
    const changed = await w.client.patch(`/items/${made.id}`, { inventory_type: "unique" });
    expect(changed.status, changed.text).toBe(200);
    const refused = await w.client.post(`/purchase-orders/${order.id}/send`, {});
    expectValidation(refused, "lines[1].quantity", "unique_item");
    expect(refused.body.error.details[0].message).toContain("is 5");
    const after = await w.client.get(`/purchase-orders/${order.id}`);
    expect(after.body).toMatchObject({ status: "Not Sent", revision: order.revision });
    expect(await stock(w.client, plain.id)).toEqual({ quantity: 0, incoming: 0 });
    expect(await stock(w.client, made.id)).toEqual({ quantity: 0, incoming: 0 });

    const lines = order.lines.map((line: any) => ({ id: line.id, item_id: line.item_id, quantity: line.item_id === made.id ? 1 : line.quantity }));
    expect((await w.client.patch(`/purchase-orders/${order.id}`, { lines })).status).toBe(200);
    const sent = await w.client.post(`/purchase-orders/${order.id}/send`, {});
    expect(sent.status, sent.text).toBe(200);
    expect(await stock(w.client, made.id)).toEqual({ quantity: 0, incoming: 1 });
    expect(await stock(w.client, plain.id)).toEqual({ quantity: 0, incoming: 3 });

    // Its unit came on hand otherwise meanwhile: the receipt of the line is refused, naming the body's entry.
    expect((await w.client.post(`/items/${made.id}/adjustments`, { location_id: w.location, quantity: 1 })).status).toBe(201);
    const [plainLine, madeLine] = sent.body.lines;
    const receipt = await w.client.post(`/purchase-orders/${order.id}/receive`, {
      lines: [
        { line_id: plainLine.id, quantity: 3 },
        { line_id: madeLine.id, quantity: 1 },
      ],
    });
    expectValidation(receipt, "lines[1].quantity", "unique_item");
    expect(await stock(w.client, plain.id)).toEqual({ quantity: 0, incoming: 3 });
  });

  it("an item's stock stops at the most it counts exactly (99999999999.9999): a send or an adjustment past it is 422 too_large naming the field, and nothing moves", async () => {
    const w = await world();
    const bulk = await item(w.client);
    const other = await item(w.client);
    // 100 lines of the largest quantity: 99999999900 incoming.
    const lines = Array.from({ length: 100 }, () => ({ item_id: bulk.id, quantity: 999_999_999 }));
    const order = await newOrder(w, lines);
    expect((await w.client.post(`/purchase-orders/${order.id}/send`, {})).status).toBe(200);
    expect(await stock(w.client, bulk.id)).toEqual({ quantity: 0, incoming: 99_999_999_900 });
    // Another order's 100 more would pass the maximum: its send is refused, naming the line, and moves nothing.
    const more = await newOrder(w, [
      { item_id: other.id, quantity: 1 },
      { item_id: bulk.id, quantity: 100 },
    ]);
    expectValidation(await w.client.post(`/purchase-orders/${more.id}/send`, {}), "lines[1].quantity", "too_large");
    expect(await stock(w.client, bulk.id)).toEqual({ quantity: 0, incoming: 99_999_999_900 });
    expect(await stock(w.client, other.id)).toEqual({ quantity: 0, incoming: 0 });

    const received = await w.client.post(`/purchase-orders/${order.id}/receive`, {
      lines: order.lines.map((line: any) => ({ line_id: line.id, quantity: 999_999_999 })),
    });
    expect(received.status, received.text).toBe(200);
    expect(await stock(w.client, bulk.id)).toEqual({ quantity: 99_999_999_900, incoming: 0 });

    const adjust = (quantity: number) => w.client.post(`/items/${bulk.id}/adjustments`, { location_id: w.location, quantity });
    expectValidation(await adjust(100), "quantity", "too_large");
    expect(await stock(w.client, bulk.id)).toEqual({ quantity: 99_999_999_900, incoming: 0 });
    const reached = await adjust(99.9999);
    expect(reached.status, reached.text).toBe(201);
    expect(reached.body.quantity_after).toBe(99_999_999_999.9999);
    expect(await stock(w.client, bulk.id)).toEqual({ quantity: 99_999_999_999.9999, incoming: 0 });
  });

  it("a unique item is ordered one unit at a time: a second line or a second order of it is refused at send, naming the line; the first receives", async () => {
    const w = await world();
    const unique = await item(w.client, { inventory_type: "unique" });
    const twice = await newOrder(w, [
      { item_id: unique.id, quantity: 1 },
      { item_id: unique.id, quantity: 1 },
    ]);
    const refused = await w.client.post(`/purchase-orders/${twice.id}/send`, {});
    expectValidation(refused, "lines[1].quantity", "unique_item");
    expect(await stock(w.client, unique.id)).toEqual({ quantity: 0, incoming: 0 });
    const first = await newOrder(w, [{ item_id: unique.id, quantity: 1 }]);
    const sent = await w.client.post(`/purchase-orders/${first.id}/send`, {});
    expect(sent.status, sent.text).toBe(200);
    const second = await newOrder(w, [{ item_id: unique.id, quantity: 1 }]);
    expectValidation(await w.client.post(`/purchase-orders/${second.id}/send`, {}), "lines[0].quantity", "unique_item");
    expect(await stock(w.client, unique.id)).toEqual({ quantity: 0, incoming: 1 });
    const received = await w.client.post(`/purchase-orders/${first.id}/receive`, { lines: [{ line_id: sent.body.lines[0].id, quantity: 1 }] });
    expect(received.status, received.text).toBe(200);
    expect(await stock(w.client, unique.id)).toEqual({ quantity: 1, incoming: 0 });
  });

  it("a sales order's reservations stop at the maximum too: a create or an update past it is 422 too_large naming a line, never a 500, and nothing moves", async () => {
    const w = await world();
    const bulk = await item(w.client, { price: "0" });
    const customer = (await w.client.post("/customers", { name: "Bulk buyer" })).body;
    const order = (body: Record<string, unknown>) => w.client.post("/sales-orders", { customer_id: customer.id, location_id: w.location, ...body });
    const big = await order({ lines: Array.from({ length: 100 }, () => ({ item_id: bulk.id, quantity: 999_999_999 })) });
    expect(big.status, big.text).toBe(201);
    const small = await order({ lines: [{ item_id: bulk.id, quantity: 99 }] });
    expect(small.status, small.text).toBe(201);
    const reserved = async () => (await w.client.get(`/items/${bulk.id}`)).body.quantity_reserved;
    expect(await reserved()).toBe(99_999_999_999);
    expectValidation(await order({ lines: [{ item_id: bulk.id, quantity: 1 }] }), "lines[0].quantity", "too_large");
    const line = small.body.lines[0];
    const update = await w.client.patch(`/sales-orders/${small.body.id}`, { lines: [{ id: line.id, item_id: bulk.id, quantity: 100 }] });
    expectValidation(update, "lines[0].quantity", "too_large");
    expect(await reserved()).toBe(99_999_999_999);
    expect((await w.client.get(`/sales-orders/${small.body.id}`)).body.lines[0].quantity).toBe(99);
  });

  it("the moving average cost weighs stock on hand and the received cost", async () => {
    const w = await world();
    const a = await item(w.client);
    await w.client.post(`/items/${a.id}/adjustments`, { location_id: w.location, quantity: 10 });
    const { data } = await db().entities.item.get({ accountId: w.account.accountId, itemId: a.id }).go();
    await db().entities.item.patch({ accountId: w.account.accountId, itemId: a.id }).set({ averageCost: "2.0000", stockVersion: data!.stockVersion }).go();
    const order = (
      await w.client.post("/purchase-orders", { supplier_id: w.supplier, location_id: w.location, lines: [{ item_id: a.id, quantity: 10, unit_cost: "4" }] })
    ).body;
    await w.client.post(`/purchase-orders/${order.id}/send`, {});
    await w.client.post(`/purchase-orders/${order.id}/receive`, { lines: [{ line_id: order.lines[0].id, quantity: 10 }] });
    expect(await storedAverageCost(w.account.accountId, a.id)).toBe("3.0000");
  });

  it("parallel receives of the same remaining quantity never over-receive", async () => {
    const w = await world();
    const a = await item(w.client);
    const order = (await w.client.post("/purchase-orders", { supplier_id: w.supplier, location_id: w.location, lines: [{ item_id: a.id, quantity: 5 }] })).body;
    await w.client.post(`/purchase-orders/${order.id}/send`, {});
    const attempts = await Promise.all(
      Array.from({ length: 8 }, () => w.client.post(`/purchase-orders/${order.id}/receive`, { lines: [{ line_id: order.lines[0].id, quantity: 2 }] })),
    );
    const statuses = attempts.map((r) => r.status).sort();
    expect(statuses.filter((s) => s === 200)).toHaveLength(2);
    expect(statuses.filter((s) => s !== 200 && s !== 422)).toEqual([]);
    const detail = (await w.client.get(`/purchase-orders/${order.id}`)).body;
    expect(detail.lines[0].quantity_received).toBe(4);
    expect(await stock(w.client, a.id)).toEqual({ quantity: 4, incoming: 1 });
  });

  it("a parallel send and update never leave an updated Sent order", async () => {
    for (let round = 0; round < 3; round++) {
      const w = await world();
      const order = (
        await w.client.post("/purchase-orders", { supplier_id: w.supplier, location_id: w.location, lines: [{ name: "Service", unit_cost: "1" }] })
      ).body;
      const [update, send] = await Promise.all([
        w.client.patch(`/purchase-orders/${order.id}`, { name: "Updated" }),
        w.client.post(`/purchase-orders/${order.id}/send`, {}),
      ]);
      expect(send.status, send.text).toBe(200);
      const final = (await w.client.get(`/purchase-orders/${order.id}`)).body;
      expect(final.status).toBe("Sent");
      if (update.status === 200) {
        // The update came first: the send's answer already shows it.
        expect(send.body.name).toBe("Updated");
      } else {
        expectError(update, 409, "purchase_order_update_not_allowed");
        expect(final.name).toBeNull();
      }
    }
  });

  it(
    "receives 100 lines of 100 different items in one request: atomic, each stock effect exactly once",
    async () => {
      const w = await world();
      const items = await inBatches(100, (i) => item(w.client, { name: `Part ${i} ${randomUUID().slice(0, 4)}` }));
      const order = (
        await w.client.post("/purchase-orders", {
          supplier_id: w.supplier,
          location_id: w.location,
          lines: items.map((it, i) => ({ item_id: it.id, quantity: i + 1 })),
        })
      ).body;
      expect(order.lines).toHaveLength(100);
      let started = Date.now();
      const sent = await w.client.post(`/purchase-orders/${order.id}/send`, {});
      expect(sent.status, sent.text).toBe(200);
      const sendMs = Date.now() - started;
      started = Date.now();
      const received = await w.client.post(`/purchase-orders/${order.id}/receive`, {
        lines: order.lines.map((line: any) => ({ line_id: line.id, quantity: line.quantity })),
      });
      const receiveMs = Date.now() - started;
      expect(received.status, received.text).toBe(200);
      expect(received.body.status).toBe("Received");
      const byId = new Map<string, unknown>();
      for (const half of [items.slice(0, 50), items.slice(50)]) {
        const fetched = await w.client.get("/items", { ids: half.map((it) => it.id).join(",") });
        for (const it of fetched.body.data) byId.set(it.id, it);
      }
      for (const [i, it] of items.entries()) expect(byId.get(it.id) as any).toMatchObject({ quantity: i + 1, quantity_incoming: 0 });
      // Each receipt left exactly one history entry per item (none applied twice).
      const { data } = await db()
        .entities.stockHistory.query.primary({ accountId: w.account.accountId, itemId: items[42]!.id, sourceType: "purchase_order" })
        .go();
      expect(data.map((h) => h.onHandDelta).sort()).toEqual([0, 43]);
      console.log(`100-line purchase order: send ${sendMs} ms, receive ${receiveMs} ms`);
    },
    scaled(120_000),
  );

  it("an item referenced by an order cannot be deleted; every change marks purchase_order in the sync feed", async () => {
    const w = await world();
    const a = await item(w.client);
    const cursor = (await w.client.get("/sync", { start: "now", resources: "purchase_order" })).body.cursor;
    const order = (await w.client.post("/purchase-orders", { supplier_id: w.supplier, location_id: w.location, lines: [{ item_id: a.id, quantity: 1 }] })).body;
    await poller.drain();
    await poller.drain();
    expectValidation(await w.client.request("DELETE", `/items/${a.id}`), "document_count");
    const page = await w.client.get("/sync", { cursor });
    expect(page.body.changes).toContainEqual({ resource: "purchase_order", id: order.id, operation: "upsert" });
    // Replacing the line with a service line releases the item.
    await w.client.patch(`/purchase-orders/${order.id}`, { lines: [{ name: "Service", unit_cost: 1 }] });
    await poller.drain();
    await poller.drain();
    const deleted = await w.client.request("DELETE", `/items/${a.id}`);
    expect(deleted.status, deleted.text).toBe(200);
  });
});
