import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { updateAccount } from "../../lib/domain/admin/service.js";
import { db } from "../../lib/db/service.js";
import { useApiServer, type ApiClient } from "../support/api.js";
import { expectError, expectValidation } from "../support/assertions.js";
import { idempotencyKey, newAccount, newUser } from "../support/fixtures.js";
import {
  SALES_ORDER_DETAIL_KEYS,
  SALES_ORDER_KEYS,
  SALES_ORDER_LINE_KEYS,
  SALES_ORDER_PROGRESS_KEYS,
  SALES_ORDER_TAIL_KEYS,
  figuresOf,
  newItem,
  salesWorld,
  stockOf,
  type SalesWorld,
} from "../support/sales.js";

/**
 * Sales orders through HTTP against DynamoDB Local (spec part 2, sections 2.4, 3.4, 4.4;
 * architecture sections 4 and 8): create with defaults, totals and reservations; the price and
 * cost permission rules; refusals that create nothing; update and delete rules; every list
 * filter; visibility; detail block reasons. Packing, shipping and invoicing are in
 * sales-orders-fulfillment.
 */
const api = useApiServer();
const world = () => salesWorld((key) => api().withKey(key));

async function createOrder(w: SalesWorld, extra: Record<string, unknown> = {}, client: ApiClient = w.client) {
  return client.post("/sales-orders", {
    customer_id: w.customer.id,
    lines: [
      { item_id: w.item.id, quantity: 5 },
      { name: "Installation", unit_price: "85" },
    ],
    ...extra,
  });
}

const orderCount = async (client: ApiClient) => (await client.get("/sales-orders", { limit: 1 })).body.pagination.total_records;

describe("connected: sales orders", () => {
  it("creates an open order numbered from the sequence, with item and customer defaults, totals, reservations and an ETag", async () => {
    const w = await world();
    const before = await figuresOf(w.client, w.customer.id);
    const created = await createOrder(w, {
      shipping_fee: 10,
      shipping_cost: "3",
      purchase_order_number: "PO-77",
      packing_list_note: "Fragile",
      expiry_date: "2099-01-01",
    });
    expect(created.status, created.text).toBe(201);
    const order = created.body;
    expect(Object.keys(order)).toEqual([
      ...SALES_ORDER_KEYS,
      "shipping_cost",
      ...SALES_ORDER_PROGRESS_KEYS,
      ...SALES_ORDER_DETAIL_KEYS,
      ...SALES_ORDER_TAIL_KEYS,
      "lines",
    ]);
    expect(created.headers.get("etag")).toBe(`"${order.revision}"`);
    expect(order.revision).toMatch(/^so_/);
    expect(order).toMatchObject({
      object: "sales_order",
      sales_order_number: 1,
      customer_id: w.customer.id,
      customer_name: w.customer.name,
      salesperson_id: w.account.ownerUserId,
      location_id: null,
      status_id: 29,
      status: "Open",
      purchase_order_number: "PO-77",
      packing_list_note: "Fragile",
      expiry_date: "2099-01-01",
      drop_shipped: false,
      drop_ship_customer_id: null,
      drop_ship_address: null,
      // 60 + 85 = 145; tax 10% = 6 + 8.5; tax 2 2.5% = 1.5 + 2.125; shipping 10
      subtotal: "145.0000",
      tax: "14.5000",
      tax_2: "3.6250",
      shipping_fee: "10.0000",
      shipping_cost: "3.0000",
      total: "173.1250",
      amount_paid: "0.0000",
      amount_due: "173.1250",
      invoiced_percent: 0,
      paid_percent: 0,
      packed_percent: 0,
      shipped_percent: 0,
      invoice_count: 0,
      source_estimate: null,
      discount_percent: "0.000",
      pre_discount_total: "145.0000",
      discount_total: "0.0000",
      can_edit: true,
      edit_block_reason: null,
      can_pack: true,
      pack_block_reason: null,
    });
    expect(order.issue_date).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    expect(order.party).toEqual({
      account_number: String(w.customer.customer_number),
      phone: "+1 555 0199",
      email: "buyer@acme.test",
      billing_address: [w.customer.name, "1 Main St", "Springfield"],
      shipping_address: [w.customer.name, "9 Dock Rd"],
    });
    const [inventory, service] = order.lines;
    expect(Object.keys(inventory)).toEqual([...SALES_ORDER_LINE_KEYS, "unit_cost", "total_cost"]);
    expect(inventory).toMatchObject({
      item_id: w.item.id,
      item_variation_location_id: expect.any(Number),
      name: w.item.name,
      description: "Blue widget",
      sku: "WID-1",
      quantity: 5,
      quantity_invoiced: 0,
      quantity_packed: 0,
      quantity_shipped: 0,
      quantity_remaining_to_pack: 5,
      unit_price: "12.0000",
      tax_rate: "10.000",
      tax_2_rate: "2.500",
      subtotal: "60.0000",
      position: 0,
      line_type: "inventory",
      location_name: "Main Warehouse",
      variation_values: {},
      variation_number: 1,
      thumbnail_url: null,
      unit_cost: "4.0000",
      total_cost: "20.0000",
    });
    expect(service).toMatchObject({
      item_id: null,
      item_variation_location_id: null,
      line_type: "service",
      name: "Installation",
      quantity: 1,
      unit_price: "85.0000",
      quantity_remaining_to_pack: 0,
      location_name: null,
      position: 1,
    });
    const fetched = await w.client.get(`/sales-orders/${order.id}`);
    expect(fetched.status).toBe(200);
    expect(fetched.body).toEqual(order);
    expect(fetched.headers.get("etag")).toBe(`"${order.revision}"`);
    // Stored effects: the quantity is reserved at the line's row; the customer has one more document.
    expect(await stockOf(w.client, w.item.id)).toMatchObject({ quantity: 50, reserved: 5, available: 45 });
    expect(await figuresOf(w.client, w.customer.id)).toEqual({ ...before, document_count: before.document_count + 1 });
    expect((await createOrder(w)).body.sales_order_number).toBe(2);
    expect(await stockOf(w.client, w.item.id)).toMatchObject({ reserved: 10 });
  });

  it("shows the order's own shipping address in party.shipping_address when it has one, else the customer's (as an invoice does)", async () => {
    const w = await world();
    const own = await createOrder(w, { shipping_address: "Dock 4\n  Gate 2  \n" });
    expect(own.status, own.text).toBe(201);
    expect(own.body.shipping_address).toBe("Dock 4\n  Gate 2");
    expect(own.body.party.shipping_address).toEqual(["Dock 4", "Gate 2"]);
    expect((await w.client.get(`/sales-orders/${own.body.id}`)).body.party.shipping_address).toEqual(["Dock 4", "Gate 2"]);
    const invoiced = await w.client.post(`/sales-orders/${own.body.id}/invoices`, {});
    expect(invoiced.status, invoiced.text).toBe(201);
    expect(invoiced.body.party.shipping_address).toEqual(["Dock 4", "Gate 2"]);
    const plain = await createOrder(w);
    expect(plain.body.party.shipping_address).toEqual([w.customer.name, "9 Dock Rd"]);
    const changed = await w.client.patch(`/sales-orders/${plain.body.id}`, { shipping_address: "Bay 7" });
    expect(changed.status, changed.text).toBe(200);
    expect(changed.body.party.shipping_address).toEqual(["Bay 7"]);
  });

  it("replays a create by Idempotency-Key (with its ETag); the same key with another body is 409 idempotency_key_reused", async () => {
    const w = await world();
    const key = idempotencyKey();
    const first = await createOrder(w);
    expect(first.status).toBe(201);
    const keyed = await w.client.post("/sales-orders", { customer_id: w.customer.id, lines: [{ item_id: w.item.id, quantity: 1 }] }, { idempotencyKey: key });
    const replay = await w.client.post("/sales-orders", { customer_id: w.customer.id, lines: [{ item_id: w.item.id, quantity: 1 }] }, { idempotencyKey: key });
    expect(replay.status).toBe(201);
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    expect(replay.body).toEqual(keyed.body);
    expect(replay.headers.get("etag")).toBe(`"${keyed.body.revision}"`);
    expectError(
      await w.client.post("/sales-orders", { customer_id: w.customer.id, lines: [{ item_id: w.item.id, quantity: 2 }] }, { idempotencyKey: key }),
      409,
      "idempotency_key_reused",
    );
    expect(await orderCount(w.client)).toBe(2);
    expect(await stockOf(w.client, w.item.id)).toMatchObject({ reserved: 6 });
  });

  it("applies the item's price unless the user may modify prices; shipping_cost and costs need costs.view", async () => {
    const w = await world();
    const clerk = api().withKey((await newUser(w.account, { permissions: ["sales_orders.list", "sales_orders.modify", "records.view_all"] })).key);
    const priced = await createOrder(w, {}, clerk);
    expect(priced.status, priced.text).toBe(201);
    const ignored = await clerk.post("/sales-orders", {
      customer_id: w.customer.id,
      lines: [
        { item_id: w.item.id, quantity: 1, unit_price: "1" },
        { name: "Labour", unit_price: "20" },
      ],
    });
    expect(ignored.status, ignored.text).toBe(201);
    // Without prices.modify the item's current selling price applies (spec 4.4); service lines keep theirs.
    expect(ignored.body.lines[0].unit_price).toBe("12.0000");
    expect(ignored.body.lines[1].unit_price).toBe("20.0000");
    // Without costs.view: no shipping_cost, unit_cost or total_cost.
    expect(ignored.body).not.toHaveProperty("shipping_cost");
    expect(Object.keys(ignored.body.lines[0])).toEqual(SALES_ORDER_LINE_KEYS);
    const count = await orderCount(w.client);
    const reserved = (await stockOf(w.client, w.item.id)).reserved;
    expectError(await createOrder(w, { shipping_cost: 5 }, clerk), 403, "permission_denied");
    expect(await orderCount(w.client)).toBe(count);
    expect((await stockOf(w.client, w.item.id)).reserved).toBe(reserved);

    const pricer = api().withKey(
      (await newUser(w.account, { permissions: ["sales_orders.list", "sales_orders.modify", "records.view_all", "prices.modify"] })).key,
    );
    const custom = await pricer.post("/sales-orders", { customer_id: w.customer.id, lines: [{ item_id: w.item.id, quantity: 2, unit_price: "9.5" }] });
    expect(custom.body.lines[0]).toMatchObject({ unit_price: "9.5000", subtotal: "19.0000" });
    const noModify = api().withKey((await newUser(w.account, { permissions: ["sales_orders.list", "records.view_all"] })).key);
    expectError(await createOrder(w, {}, noModify), 403, "permission_denied");
  });

  it("refuses bad input with the spec's errors and creates nothing, consuming no number and reserving nothing", async () => {
    const w = await world();
    const other = await world();
    const supplier = (await w.client.post("/suppliers", { name: "Not a customer" })).body;
    const archived = (await w.client.post("/customers", { name: "Gone Ltd" })).body;
    // Customers are archived outside the API.
    await db().entities.party.patch({ accountId: w.account.accountId, partyId: archived.id }).set({ archived: true }).go();
    const second = (await w.client.post("/locations", { name: "Second", short_name: "SEC" }, { idempotencyKey: idempotencyKey() })).body;
    const spread = await newItem(w.client, w.location, { stock: 3, body: { location_id: undefined } });
    await w.client.post(`/items/${spread.id}/adjustments`, { location_id: second.id, quantity: 3 });
    const spreadDetail = (await w.client.get(`/items/${spread.id}`)).body;
    expect(spreadDetail.location_id).toBeNull();
    const line = { item_id: w.item.id, quantity: 1 };
    expectValidation(await w.client.post("/sales-orders", { lines: [line] }), "customer_id", "required");
    expectValidation(await createOrder(w, { customer_id: other.customer.id }), "customer_id", "invalid_reference");
    expectValidation(await createOrder(w, { customer_id: supplier.id }), "customer_id", "invalid_reference");
    expectValidation(await createOrder(w, { customer_id: archived.id }), "customer_id", "archived");
    expectValidation(await createOrder(w, { location_id: other.location }), "location_id", "invalid_reference");
    expectValidation(await createOrder(w, { lines: [] }), "lines", "too_few");
    expectValidation(await createOrder(w, { lines: Array.from({ length: 101 }, () => line) }), "lines", "too_many");
    expectValidation(await createOrder(w, { lines: [{ name: "Labour" }] }), "lines[0].unit_price", "required");
    expectValidation(await createOrder(w, { lines: [{ item_id: w.item.id, name: "Renamed" }] }), "lines[0].name", "invalid");
    expectValidation(await createOrder(w, { lines: [{ item_id: other.item.id }] }), "lines[0].item_id", "invalid_reference");
    expectValidation(await createOrder(w, { lines: [{ item_id: spread.id }] }), "lines[0].item_variation_location_id", "required");
    expectValidation(await createOrder(w, { lines: [{ item_id: w.item.id, quantity: 0 }] }), "lines[0].quantity");
    expectValidation(await createOrder(w, { issue_date: "2026-05-02", expiry_date: "2026-05-01" }), "expiry_date", "before_issue_date");
    for (const field of ["status_id", "sales_order_number", "total", "salesperson_id", "invoice_count", "created_at"]) {
      expectValidation(await createOrder(w, { [field]: 1 }), field, "unknown_field");
    }
    expect(await orderCount(w.client)).toBe(0);
    expect(await stockOf(w.client, w.item.id)).toMatchObject({ reserved: 0 });
    expect((await figuresOf(w.client, w.customer.id)).document_count).toBe(0);
    // A row named explicitly resolves a multi-location item.
    const rows = (await w.client.get(`/items/${spread.id}/variations`, { include: "locations" })).body.data[0].locations;
    const atSecond = rows.find((r: any) => r.location_id === second.id);
    const ok = await createOrder(w, { lines: [{ item_id: spread.id, item_variation_location_id: atSecond.item_variation_location_id, quantity: 2 }] });
    expect(ok.status, ok.text).toBe(201);
    expect(ok.body.sales_order_number).toBe(1);
    expect(ok.body.lines[0]).toMatchObject({ location_name: "Second", item_variation_location_id: atSecond.item_variation_location_id });
    const stocked = (await w.client.get(`/items/${spread.id}/variations`, { include: "locations" })).body.data[0].locations;
    expect(stocked.find((r: any) => r.location_id === second.id)).toMatchObject({ quantity: 3, quantity_reserved: 2 });
    expect(stocked.find((r: any) => r.location_id === w.location)).toMatchObject({ quantity: 3, quantity_reserved: 0 });
  });

  it("keeps a location-restricted user's orders at their location", async () => {
    const w = await world();
    const branch = (await w.client.post("/locations", { name: "Branch", short_name: "BR" }, { idempotencyKey: idempotencyKey() })).body;
    const user = await newUser(w.account, { permissions: ["sales_orders.list", "sales_orders.modify", "records.view_all"], locationId: branch.id });
    const restricted = api().withKey(user.key);
    const created = await createOrder(w, {}, restricted);
    expect(created.status, created.text).toBe(201);
    expect(created.body.location_id).toBe(branch.id);
    expect(created.body.lines[0]).toMatchObject({ location_name: "Branch", item_variation_location_id: expect.any(Number) });
    // The reservation created the item's row at the branch.
    const rows = (await w.client.get(`/items/${w.item.id}/variations`, { include: "locations" })).body.data[0].locations;
    expect(rows.find((r: any) => r.location_id === branch.id)).toMatchObject({ quantity: 0, quantity_reserved: 5 });
    expectValidation(await createOrder(w, { location_id: w.location }, restricted), "location_id", "invalid_reference");
    // The owner's order at Main is outside the restricted user's location boundary: missing to them.
    const main = (await createOrder(w, { location_id: w.location })).body;
    expectError(await restricted.get(`/sales-orders/${main.id}`), 404, "resource_missing");
    expectError(await restricted.post(`/sales-orders/${main.id}/fulfillments`, { lines: [{ id: main.lines[0].id, quantity: 1 }] }), 404, "resource_missing");
  });

  it("updates open orders without activity: partial, complete line replacement with reservations moved, If-Match", async () => {
    const w = await world();
    const order = (await createOrder(w)).body;
    const [inventory, service] = order.lines;
    const renamed = await w.client.patch(`/sales-orders/${order.id}`, { name: "Spring order", attention: "Dock 4" });
    expect(renamed.status, renamed.text).toBe(200);
    expect(renamed.body).toMatchObject({ name: "Spring order", attention: "Dock 4", sales_order_number: 1 });
    expect(renamed.body.lines.map((l: any) => l.id)).toEqual([inventory.id, service.id]);
    expect(renamed.body.revision).not.toBe(order.revision);
    expect(renamed.headers.get("etag")).toBe(`"${renamed.body.revision}"`);
    expectError(
      await w.client.patch(`/sales-orders/${order.id}`, { name: "Late" }, { headers: { "if-match": `"${order.revision}"` } }),
      409,
      "mobile_mutation_conflict",
    );
    expect((await w.client.get(`/sales-orders/${order.id}`)).body.name).toBe("Spring order");

    const replaced = await w.client.patch(
      `/sales-orders/${order.id}`,
      { lines: [{ id: inventory.id, item_id: w.item.id, quantity: 8 }], discount_percent: 10 },
      { headers: { "if-match": renamed.body.revision } },
    );
    expect(replaced.status, replaced.text).toBe(200);
    expect(replaced.body.lines.map((l: any) => [l.id, l.line_type])).toEqual([
      [inventory.id, "inventory"],
      [expect.any(String), "discount"],
    ]);
    // 96 - 10% = 86.4; taxes on the discounted base: 8.64 and 2.16
    expect(replaced.body).toMatchObject({ subtotal: "86.4000", discount_total: "-9.6000", tax: "8.6400", tax_2: "2.1600", total: "97.2000" });
    expect(replaced.body.lines[1]).toMatchObject({
      unit_name: "discount",
      unit_price: "-9.6000",
      unit_cost: null,
      total_cost: null,
      quantity_remaining_to_pack: 0,
    });
    expect(await stockOf(w.client, w.item.id)).toMatchObject({ reserved: 8, quantity: 50 });
    const serviceOnly = await w.client.patch(`/sales-orders/${order.id}`, { lines: [{ name: "Consulting", unit_price: 100 }] });
    expect(serviceOnly.status, serviceOnly.text).toBe(200);
    expect(await stockOf(w.client, w.item.id)).toMatchObject({ reserved: 0 });

    expectValidation(
      await w.client.patch(`/sales-orders/${order.id}`, { lines: [{ id: randomUUID(), name: "X", unit_price: 1 }] }),
      "lines[0].id",
      "invalid_reference",
    );
    const otherCustomer = (await w.client.post("/customers", { name: "Globex" })).body;
    expectValidation(await w.client.patch(`/sales-orders/${order.id}`, { customer_id: otherCustomer.id }), "lines", "required");
    const moved = await w.client.patch(`/sales-orders/${order.id}`, { customer_id: otherCustomer.id, lines: [{ item_id: w.item.id, quantity: 2 }] });
    expect(moved.status, moved.text).toBe(200);
    expect(moved.body).toMatchObject({ customer_name: "Globex", customer_id: otherCustomer.id });
    expect((await figuresOf(w.client, w.customer.id)).document_count).toBe(0);
    expect((await figuresOf(w.client, otherCustomer.id)).document_count).toBe(1);
    expect(await stockOf(w.client, w.item.id)).toMatchObject({ reserved: 2 });

    // Activity started: packing blocks updates and deletion; nothing changes.
    const packed = await w.client.post(`/sales-orders/${order.id}/fulfillments`, { lines: [{ id: moved.body.lines[0].id, quantity: 1 }] });
    expect(packed.status, packed.text).toBe(201);
    expectError(await w.client.patch(`/sales-orders/${order.id}`, { name: "Too late" }), 409, "sales_order_update_not_allowed");
    expectError(await w.client.request("DELETE", `/sales-orders/${order.id}`), 409, "sales_order_update_not_allowed");
    const detail = (await w.client.get(`/sales-orders/${order.id}`)).body;
    expect(detail).toMatchObject({ name: "Spring order", can_edit: false, edit_block_reason: "sales_order_activity_started" });
    expect(await stockOf(w.client, w.item.id)).toMatchObject({ reserved: 2 });
  });

  it("deletes open orders without activity, releasing their reservations and counts", async () => {
    const w = await world();
    const order = (await createOrder(w)).body;
    expect(await stockOf(w.client, w.item.id)).toMatchObject({ reserved: 5 });
    const key = idempotencyKey();
    const deleted = await w.client.request("DELETE", `/sales-orders/${order.id}`, undefined, { idempotencyKey: key });
    expect(deleted.status, deleted.text).toBe(200);
    expect(deleted.body).toEqual({ id: order.id, object: "sales_order", deleted: true });
    const replay = await w.client.request("DELETE", `/sales-orders/${order.id}`, undefined, { idempotencyKey: key });
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    expect(await stockOf(w.client, w.item.id)).toMatchObject({ reserved: 0, quantity: 50 });
    expect((await figuresOf(w.client, w.customer.id)).document_count).toBe(0);
    expect(await orderCount(w.client)).toBe(0);
    expectError(await w.client.get(`/sales-orders/${order.id}`), 404, "resource_missing");
    expectError(await w.client.request("DELETE", `/sales-orders/${order.id}`), 404, "resource_missing");
    // The customer can be deleted now that it has no documents.
    expect((await w.client.request("DELETE", `/customers/${w.customer.id}`)).status).toBe(200);
  });

  it("lists newest number first with every filter, ids and visibility", async () => {
    const account = await newAccount();
    const client = api().withKey(account.ownerKey);
    const location = (await client.post("/locations", { name: "Main", short_name: "M" }, { idempotencyKey: idempotencyKey() })).body.id;
    const acme = (await client.post("/customers", { name: "Acme Widgets" })).body;
    const zeta = (await client.post("/customers", { name: "Zeta Corp" })).body;
    const create = async (body: Record<string, unknown>, c: ApiClient = client) => {
      const res = await c.post("/sales-orders", { customer_id: acme.id, lines: [{ name: "Labour", unit_price: "10" }], ...body });
      expect(res.status, res.text).toBe(201);
      return res.body;
    };
    const first = await create({ name: "Alpha", purchase_order_number: "CUST-AB", issue_date: "2026-01-10", expiry_date: "2026-02-01" });
    const second = await create({ issue_date: "2026-03-05", expiry_date: "2026-06-30", location_id: location });
    const third = await create({ customer_id: zeta.id, issue_date: "2026-04-01" });
    const invoiced = await client.post(`/sales-orders/${second.id}/invoices`, {});
    expect(invoiced.status, invoiced.text).toBe(201);

    const list = await client.get("/sales-orders");
    expect(list.status).toBe(200);
    expect(list.body.data.map((o: any) => o.sales_order_number)).toEqual([3, 2, 1]);
    expect(Object.keys(list.body.data[0])).toEqual([
      ...SALES_ORDER_KEYS,
      "shipping_cost",
      ...SALES_ORDER_PROGRESS_KEYS,
      "edit_block_reason",
      "pack_block_reason",
      ...SALES_ORDER_TAIL_KEYS,
    ]);
    expect(list.body.pagination).toEqual({ page: 1, per_page: 20, total_pages: 1, total_records: 3 });
    expect(list.body.url).toBe("/api/v3/sales-orders");
    const ids = (params: Record<string, string | number>, c: ApiClient = client) =>
      c.get("/sales-orders", params).then((r) => r.body.data.map((o: any) => o.id));
    expect(await ids({ q: "zeta" })).toEqual([third.id]);
    expect(await ids({ q: "cust-ab" })).toEqual([first.id]);
    expect(await ids({ q: "ALPHA" })).toEqual([first.id]);
    expect(await ids({ q: "2" })).toEqual([second.id]);
    expect(await ids({ customer_id: zeta.id })).toEqual([third.id]);
    expect(await ids({ status_id: 30 })).toEqual([second.id]);
    expect(await ids({ status_id: 29 })).toEqual([third.id, first.id]);
    // An estimate's status id is no sales order's: refused, as the document's enum says (29-31).
    expectError(await client.get("/sales-orders", { status_id: 7 }), 422, "invalid_query_parameter", "status_id");
    expect(await ids({ location_id: location })).toEqual([second.id]);
    expect(await ids({ issue_date_from: "2026-03-01", issue_date_to: "2026-03-31" })).toEqual([second.id]);
    // One bound alone, and a range whose bounds are reversed (empty).
    expect(await ids({ issue_date_to: "2026-03-31" })).toEqual([second.id, first.id]);
    expect(await ids({ issue_date_from: "2026-03-01" })).toEqual([third.id, second.id]);
    expect(await ids({ issue_date_from: "2026-04-30", issue_date_to: "2026-03-01" })).toEqual([]);
    expect(await ids({ expiry_date_to: "2026-02-01" })).toEqual([first.id]);
    expect(await ids({ expiry_date_from: "2026-03-01" })).toEqual([second.id]);
    expect(await ids({ limit: 2, page: 2 })).toEqual([first.id]);
    const batch = await client.get("/sales-orders", { ids: `${first.id},${randomUUID()},${third.id}` });
    expect(batch.body.data.map((o: any) => o.id)).toEqual([third.id, first.id]);
    expect(batch.body.pagination).toMatchObject({ per_page: 3, total_records: 2 });
    expectError(await client.get("/sales-orders", { ids: "not-a-uuid" }), 422, "invalid_query_parameter", "ids");
    expectError(await client.get("/sales-orders", { ids: Array.from({ length: 51 }, () => randomUUID()).join(",") }), 422, "invalid_query_parameter", "ids");

    // Salesperson boundary: staff without records.view_all see only their own orders, and
    // assigned_user_id never widens that.
    const staffUser = await newUser(account, { permissions: ["sales_orders.list", "sales_orders.modify"] });
    const staff = api().withKey(staffUser.key);
    // The owner's customer is not the staff user's record: invisible to them.
    expectValidation(await staff.post("/sales-orders", { customer_id: acme.id, lines: [{ name: "X", unit_price: 1 }] }), "customer_id", "invalid_reference");
    const own = (await staff.post("/customers", { name: "Staff customer" })).body;
    const mine = await staff.post("/sales-orders", { customer_id: own.id, lines: [{ name: "X", unit_price: 1 }] });
    expect(mine.status, mine.text).toBe(201);
    expect(await ids({}, staff)).toEqual([mine.body.id]);
    expect((await staff.get("/sales-orders")).body.pagination.total_records).toBe(1);
    expect(await ids({ assigned_user_id: account.ownerUserId }, staff)).toEqual([]);
    expect(await ids({ assigned_user_id: staffUser.userId })).toEqual([mine.body.id]);
    expectError(await staff.get(`/sales-orders/${first.id}`), 404, "resource_missing");
    expect(await ids({ ids: `${first.id},${mine.body.id}` }, staff)).toEqual([mine.body.id]);
    expect((await client.get("/sales-orders")).body.pagination.total_records).toBe(4);

    const noPermission = api().withKey((await newUser(account, { permissions: [] })).key);
    expectError(await noPermission.get("/sales-orders"), 403, "permission_denied");
    expectError(await noPermission.get(`/sales-orders/${first.id}`), 403, "permission_denied");
    const readOnly = api().withKey((await newUser(account, { permissions: ["sales_orders.list", "records.view_all"] })).key);
    expect((await readOnly.get(`/sales-orders/${first.id}`)).body).toMatchObject({
      can_edit: false,
      edit_block_reason: "permission_denied",
      can_pack: false,
      pack_block_reason: "permission_denied",
    });
    expectError(await readOnly.patch(`/sales-orders/${first.id}`, { name: "x" }), 403, "permission_denied");
    const stranger = await newAccount();
    expectError(await api().withKey(stranger.ownerKey).get(`/sales-orders/${first.id}`), 404, "resource_missing");
  });

  it("shows block reasons and tax labels from the account's current settings", async () => {
    const w = await world();
    await updateAccount(w.account.accountId, { packingListsEnabled: false, taxLabel: "GST", tax2Label: "PST" });
    const order = (await createOrder(w)).body;
    expect(order).toMatchObject({ can_pack: false, pack_block_reason: "packing_lists_disabled", tax_label: "GST", tax_2_label: "PST" });
    expectError(
      await w.client.post(`/sales-orders/${order.id}/fulfillments`, { lines: [{ id: order.lines[0].id, quantity: 1 }] }),
      409,
      "sales_order_pack_not_allowed",
    );
    // A retrieve reads the settings as they are now, without any write to the order.
    await updateAccount(w.account.accountId, { packingListsEnabled: true, taxLabel: "VAT" });
    expect((await w.client.get(`/sales-orders/${order.id}`)).body).toMatchObject({ can_pack: true, pack_block_reason: null, tax_label: "VAT" });
    await updateAccount(w.account.accountId, { packingListsEnabled: false });
    expect((await w.client.get(`/sales-orders/${order.id}`)).body).toMatchObject({ can_pack: false, pack_block_reason: "packing_lists_disabled" });
    await updateAccount(w.account.accountId, { packingListsEnabled: true, packingServiceItems: true });
    const services = (await w.client.post("/sales-orders", { customer_id: w.customer.id, lines: [{ name: "Manual", unit_price: "5", quantity: 2 }] })).body;
    await updateAccount(w.account.accountId, { packingServiceItems: false });
    const detail = (await w.client.get(`/sales-orders/${services.id}`)).body;
    expect(detail.lines[0].quantity_remaining_to_pack).toBe(0);
    expect(detail).toMatchObject({ can_pack: false, pack_block_reason: "nothing_remaining_to_pack" });
  });
});
