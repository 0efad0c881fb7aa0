import { describe, expect, it } from "vitest";
import { useApiServer, type ApiClient } from "../support/api.js";
import { expectValidation } from "../support/assertions.js";
import { newAccount, newLocation } from "../support/fixtures.js";

/**
 * Document lines that name a variation by `item_variation_id` (architecture section 8: the row
 * of an item at a location exists once something moved there; spec part 2: a variation item's
 * line needs its row). A new item with variations has no row anywhere, so its first purchase
 * order, order or estimate names the variation, and the line uses (or the write makes) the
 * variation's row at the line's location; refusals name the field and write nothing.
 */
const api = useApiServer();

interface World {
  client: ApiClient;
  north: string;
  south: string;
  supplier: string;
  customer: string;
  boots: string;
  /** The variations of `boots`: size 40, size 42. */
  sizes: [string, string];
}

async function world(): Promise<World> {
  const account = await newAccount();
  const client = api().withKey(account.ownerKey);
  const north = await newLocation(client, "North");
  const south = await newLocation(client, "South");
  const supplier = (await client.post("/suppliers", { name: "Cobbler" })).body.id as string;
  const customer = (await client.post("/customers", { name: "Walker" })).body.id as string;
  const boots = await client.post("/items", {
    name: "Boots",
    price: "80",
    cost: "30",
    location_id: north,
    variations: [{ values: { Size: "40" } }, { values: { Size: "42" } }],
  });
  expect(boots.status, boots.text).toBe(201);
  const variations = (await client.get(`/items/${boots.body.id}/variations`, { include: "locations" })).body.data as any[];
  expect(variations.map((v) => v.locations)).toEqual([[], []]);
  return { client, north, south, supplier, customer, boots: boots.body.id, sizes: [variations[0].id, variations[1].id] };
}

const rowsOf = async (w: World) =>
  ((await w.client.get(`/items/${w.boots}/variations`, { include: "locations" })).body.data as any[]).map((v) =>
    (v.locations as any[]).map((r) => ({ location_id: r.location_id, quantity: r.quantity, reserved: r.quantity_reserved, incoming: r.quantity_incoming })),
  );

describe("connected: lines that name a variation (item_variation_id)", () => {
  it("a new variation item's first purchase order, sales order and estimate name the variation; the line uses its row at the line's location", async () => {
    const w = await world();
    const order = await w.client.post("/purchase-orders", {
      supplier_id: w.supplier,
      location_id: w.south,
      lines: [{ item_id: w.boots, item_variation_id: w.sizes[1], quantity: 3 }],
    });
    expect(order.status, order.text).toBe(201);
    expect(order.body.lines[0]).toMatchObject({ item_id: w.boots, variation_values: { Size: "42" }, quantity: 3 });
    expect((await w.client.post(`/purchase-orders/${order.body.id}/send`, {})).status).toBe(200);
    const received = await w.client.post(`/purchase-orders/${order.body.id}/receive`, { lines: [{ line_id: order.body.lines[0].id, quantity: 3 }] });
    expect(received.status, received.text).toBe(200);
    expect(await rowsOf(w)).toEqual([[], [{ location_id: w.south, quantity: 3, reserved: 0, incoming: 0 }]]);
    const southRow = received.body.lines[0].item_variation_location_id as number;
    expect(southRow).toEqual(expect.any(Number));

    // A sales order at North names size 40 (no row anywhere yet): a new row there, reserved.
    const sale = await w.client.post("/sales-orders", {
      customer_id: w.customer,
      location_id: w.north,
      lines: [{ item_id: w.boots, item_variation_id: w.sizes[0], quantity: 2 }],
    });
    expect(sale.status, sale.text).toBe(201);
    expect(sale.body.lines[0]).toMatchObject({ variation_values: { Size: "40" }, location_name: "North", item_variation_location_id: expect.any(Number) });
    expect((await rowsOf(w))[0]).toEqual([{ location_id: w.north, quantity: 0, reserved: 2, incoming: 0 }]);
    // An estimate (no location) names size 42; its conversion sells from the variation's only row.
    const estimate = await w.client.post("/estimates", { customer_id: w.customer, lines: [{ item_id: w.boots, item_variation_id: w.sizes[1] }] });
    expect(estimate.status, estimate.text).toBe(201);
    expect(estimate.body.lines[0]).toMatchObject({ variation_values: { Size: "42" }, item_variation_location_id: null });
    // Sent back as read (without the variation), its line keeps it.
    const { lines } = estimate.body;
    const back = await w.client.patch(`/estimates/${estimate.body.id}`, { lines: [{ id: lines[0].id, item_id: w.boots, quantity: lines[0].quantity }] });
    expect(back.status, back.text).toBe(200);
    expect(back.body.revision).toBe(estimate.body.revision);
    const converted = await w.client.post(`/estimates/${estimate.body.id}/convert-to-invoice`, {});
    expect(converted.status, converted.text).toBe(201);
    expect(converted.body.lines[0]).toMatchObject({ variation_values: { Size: "42" }, item_variation_location_id: southRow, location_name: "South" });
    expect((await rowsOf(w))[1]).toEqual([{ location_id: w.south, quantity: 2, reserved: 0, incoming: 0 }]);
    // The kept line switched to size 42 by its variation alone: it leaves its row for size 42's at North.
    const switched = await w.client.patch(`/sales-orders/${sale.body.id}`, {
      lines: [{ id: sale.body.lines[0].id, item_id: w.boots, item_variation_id: w.sizes[1], quantity: 2 }],
    });
    expect(switched.status, switched.text).toBe(200);
    expect(switched.body.lines[0]).toMatchObject({ id: sale.body.lines[0].id, variation_values: { Size: "42" }, location_name: "North" });
    expect(await rowsOf(w)).toEqual([
      [{ location_id: w.north, quantity: 0, reserved: 0, incoming: 0 }],
      [
        { location_id: w.south, quantity: 2, reserved: 0, incoming: 0 },
        { location_id: w.north, quantity: 0, reserved: 2, incoming: 0 },
      ],
    ]);
  });

  it("a sales order moved to another location takes its kept lines' rows there (their variations kept); a row the request names still must be there", async () => {
    const w = await world();
    const order = await w.client.post("/sales-orders", {
      customer_id: w.customer,
      location_id: w.north,
      lines: [{ item_id: w.boots, item_variation_id: w.sizes[1], quantity: 2 }],
    });
    expect(order.status, order.text).toBe(201);
    const line = order.body.lines[0];
    const northRow = line.item_variation_location_id as number;
    // Sent back by id without its row, with the order's new location: it moves.
    const moved = await w.client.patch(`/sales-orders/${order.body.id}`, { location_id: w.south, lines: [{ id: line.id, item_id: w.boots, quantity: 2 }] });
    expect(moved.status, moved.text).toBe(200);
    expect(moved.body.lines[0]).toMatchObject({ id: line.id, variation_values: { Size: "42" }, location_name: "South" });
    expect(moved.body.lines[0].item_variation_location_id).not.toBe(northRow);
    expect((await rowsOf(w))[1]).toEqual([
      { location_id: w.north, quantity: 0, reserved: 0, incoming: 0 },
      { location_id: w.south, quantity: 0, reserved: 2, incoming: 0 },
    ]);
    // Naming the North row while the order is at South: refused, nothing moves.
    const named = await w.client.patch(`/sales-orders/${order.body.id}`, {
      location_id: w.south,
      lines: [{ id: line.id, item_id: w.boots, item_variation_location_id: northRow, quantity: 2 }],
    });
    expectValidation(named, "lines[0].item_variation_location_id", "invalid_reference");
    expect((await rowsOf(w))[1]).toEqual([
      { location_id: w.north, quantity: 0, reserved: 0, incoming: 0 },
      { location_id: w.south, quantity: 0, reserved: 2, incoming: 0 },
    ]);
  });

  it("a stock transfer's line sent back by id without its row keeps it (a variation item's)", async () => {
    const w = await world();
    const stocked = await w.client.post(`/items/${w.boots}/adjustments`, { location_id: w.north, item_variation_id: w.sizes[0], quantity: 5 });
    expect(stocked.status, stocked.text).toBe(201);
    const row = stocked.body.item_variation_location_id as number;
    const transfer = await w.client.post("/stock-transfers", {
      origin_location_id: w.north,
      destination_location_id: w.south,
      lines: [{ item_id: w.boots, item_variation_location_id: row, quantity: 1 }],
    });
    expect(transfer.status, transfer.text).toBe(201);
    const updated = await w.client.patch(`/stock-transfers/${transfer.body.id}`, { lines: [{ id: transfer.body.lines[0].id, item_id: w.boots, quantity: 2 }] });
    expect(updated.status, updated.text).toBe(200);
    expect(updated.body.lines[0]).toMatchObject({ id: transfer.body.lines[0].id, item_variation_location_id: row, quantity: 2 });
  });

  it("a line sent back by id without its item_id is told it lacks it (an inventory line), not that a service line needs a name", async () => {
    const w = await world();
    const order = await w.client.post("/sales-orders", {
      customer_id: w.customer,
      location_id: w.north,
      lines: [{ item_id: w.boots, item_variation_id: w.sizes[0] }],
    });
    const estimate = await w.client.post("/estimates", { customer_id: w.customer, lines: [{ item_id: w.boots, item_variation_id: w.sizes[0] }] });
    for (const [path, line] of [
      [`/sales-orders/${order.body.id}`, order.body.lines[0]],
      [`/estimates/${estimate.body.id}`, estimate.body.lines[0]],
    ] as const) {
      const refused = await w.client.patch(path, { lines: [{ id: line.id, quantity: 3 }] });
      expectValidation(refused, "lines[0].item_id", "required");
      expect(refused.body.error.details).toHaveLength(1);
    }
  });

  it("a line that cannot be placed is told what its kind can do; a kept line naming another variation stays at its location", async () => {
    const w = await world();
    // Cap: no default location; size S stocked at South only, size M nowhere.
    const cap = await w.client.post("/items", { name: "Cap", price: "9", variations: [{ values: { Size: "S" } }, { values: { Size: "M" } }] });
    const [small, medium] = ((await w.client.get(`/items/${cap.body.id}/variations`)).body.data as any[]).map((v) => v.id as string);
    expect((await w.client.post(`/items/${cap.body.id}/adjustments`, { location_id: w.south, item_variation_id: small, quantity: 4 })).status).toBe(201);
    const line = (variation: string) => ({ item_id: cap.body.id, item_variation_id: variation, quantity: 1 });

    const invoice = await w.client.post("/invoices", { customer_id: w.customer, lines: [line(medium!)] });
    expectValidation(invoice, "lines[0].item_variation_location_id", "required");
    expect(invoice.body.error.details[0].message).toBe(
      "is required: the variation has no stock location and the item no default location (give the item a location_id).",
    );
    const order = await w.client.post("/sales-orders", { customer_id: w.customer, lines: [line(medium!)] });
    expect(order.body.error.details[0].message).toBe(
      "is required: the variation has no stock location and the item no default location (give the item a location_id, or the sales order one).",
    );
    // A plain item stocked at both locations, no default: an invoice can only name a row.
    const plain = (await w.client.post("/items", { name: "Socks", price: "3" })).body.id as string;
    for (const location of [w.north, w.south]) await w.client.post(`/items/${plain}/adjustments`, { location_id: location, quantity: 2 });
    const several = await w.client.post("/invoices", { customer_id: w.customer, lines: [{ item_id: plain, quantity: 1 }] });
    expect(several.body.error.details[0].message).toBe("is required: the item is stocked at several locations (name a row).");

    // An order without a location: size S sells from its only row (South); switched to size M by
    // its variation, the kept line stays at South, on size M's new row there.
    const placed = await w.client.post("/sales-orders", { customer_id: w.customer, lines: [line(small!)] });
    expect(placed.status, placed.text).toBe(201);
    expect(placed.body.lines[0]).toMatchObject({ location_name: "South" });
    const switched = await w.client.patch(`/sales-orders/${placed.body.id}`, { lines: [{ id: placed.body.lines[0].id, ...line(medium!) }] });
    expect(switched.status, switched.text).toBe(200);
    expect(switched.body.lines[0]).toMatchObject({ location_name: "South", variation_values: { Size: "M" } });
  });

  it("refuses a variation of another item, one that does not match the row, and one on a service line, naming the field; nothing is written", async () => {
    const w = await world();
    const other = (await w.client.post("/items", { name: "Laces", variations: [{ values: { Colour: "Red" } }] })).body.id as string;
    const otherVariation = (await w.client.get(`/items/${other}/variations`)).body.data[0].id as string;
    const sale = (lines: unknown[]) => w.client.post("/sales-orders", { customer_id: w.customer, location_id: w.north, lines });
    expectValidation(await sale([{ item_id: w.boots, item_variation_id: otherVariation }]), "lines[0].item_variation_id", "invalid_reference");
    expectValidation(await sale([{ name: "Fitting", unit_price: "5", item_variation_id: w.sizes[0] }]), "lines[0].item_variation_id", "invalid");
    const unnamed = await sale([{ item_id: w.boots }]);
    expectValidation(unnamed, "lines[0].item_variation_location_id", "required");
    expect(unnamed.body.error.details[0].message).toContain("item_variation_id");
    expectValidation(
      await w.client.post("/purchase-orders", {
        supplier_id: w.supplier,
        location_id: w.north,
        lines: [{ item_id: w.boots, item_variation_id: otherVariation }],
      }),
      "lines[0].item_variation_id",
      "invalid_reference",
    );
    // A row of size 40 named with size 42: refused.
    expect((await w.client.post(`/items/${w.boots}/adjustments`, { location_id: w.north, item_variation_id: w.sizes[0], quantity: 1 })).status).toBe(201);
    const row = (await w.client.get(`/items/${w.boots}/variations`, { include: "locations" })).body.data[0].locations[0].item_variation_location_id;
    expectValidation(
      await sale([{ item_id: w.boots, item_variation_location_id: row, item_variation_id: w.sizes[1] }]),
      "lines[0].item_variation_id",
      "invalid_reference",
    );
    // A row at another location than the order's: refused, pointing at the variation instead.
    const elsewhere = await w.client.post("/purchase-orders", {
      supplier_id: w.supplier,
      location_id: w.south,
      lines: [{ item_id: w.boots, item_variation_location_id: row }],
    });
    expectValidation(elsewhere, "lines[0].item_variation_location_id", "invalid_reference");
    expect(elsewhere.body.error.details[0].message).toBe("is not at the order's location (item_variation_id names the variation, for its row there).");
    expect((await w.client.get("/sales-orders")).body.pagination.total_records).toBe(0);
    expect((await w.client.get("/purchase-orders")).body.pagination.total_records).toBe(0);
    expect(await rowsOf(w)).toEqual([[{ location_id: w.north, quantity: 1, reserved: 0, incoming: 0 }], []]);
  });
});
