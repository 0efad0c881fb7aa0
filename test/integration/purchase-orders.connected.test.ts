import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { updateAccount } from "../../lib/domain/admin/service.js";
import { useApiServer, type ApiClient, type TestResponse } from "../support/api.js";
import { expectError, expectValidation } from "../support/assertions.js";
import { idempotencyKey, newAccount, newUser, type TestAccount } from "../support/fixtures.js";
import { scaled } from "../support/timeouts.js";

/**
 * Purchase orders through HTTP against DynamoDB Local (spec part 2, sections 2.1, 3.1, 4.1;
 * architecture sections 4 and 8): create with defaults and totals, update rules, list filters,
 * visibility, payments. Stock effects (send, receive) are in purchase-orders-stock.
 */
const api = useApiServer();

const ORDER_KEYS = [
  "id",
  "object",
  "purchase_order_number",
  "custom_purchase_order_number",
  "name",
  "supplier_id",
  "supplier_name",
  "assigned_user_id",
  "location_id",
  "status_id",
  "status",
  "issue_date",
  "date_sent",
  "date_received",
  "date_requested",
  "date_needed",
  "date_fully_paid",
  "requested_from",
  "attention",
  "shipping_address",
  "public_note",
  "payment_terms",
  "shipping_provider",
  "shipping_tracking_code",
];
const DETAIL_KEYS = ["party", "discount_percent", "pre_discount_total", "discount_total", "tax_label", "tax_2_label", "can_edit", "edit_block_reason"];
const TAIL_KEYS = [
  "revision",
  "custom_field_values",
  "subtotal",
  "shipping_fee",
  "tax",
  "tax_2",
  "total",
  "amount_paid",
  "amount_due",
  "created_at",
  "updated_at",
];
const LINE_KEYS = [
  "id",
  "object",
  "item_id",
  "item_variation_location_id",
  "line_type",
  "position",
  "unit_name",
  "sku",
  "location_name",
  "name",
  "description",
  "variation_values",
  "variation_number",
  "thumbnail_url",
  "quantity",
  "quantity_received",
  "unit_id",
  "unit_cost",
  "discount_percent",
  "tax_rate",
  "tax_2_rate",
  "discounted_unit_cost",
  "subtotal",
];

interface World {
  account: TestAccount;
  client: ApiClient;
  supplier: Record<string, any>;
  location: string;
  item: Record<string, any>;
}

async function world(): Promise<World> {
  const account = await newAccount();
  const client = api().withKey(account.ownerKey);
  // Letters only: `q` also matches digits in supplier names.
  const supplier = await client.post("/suppliers", {
    name: `Initech ${randomUUID()
      .replace(/[^a-f]/g, "")
      .slice(0, 6)}`,
    tax_rate1: 8.25,
    tax_rate2: "1.5",
    office_phone: "+1 555 0101",
    billing_city: "Springfield",
  });
  expect(supplier.status, supplier.text).toBe(201);
  const location = await client.post("/locations", { name: "Main Warehouse", short_name: "MAIN" }, { idempotencyKey: idempotencyKey() });
  expect(location.status, location.text).toBe(201);
  const item = await client.post("/items", { name: "USB-C Cable", sku: "CAB-1", description: "2 m braided", cost: "4.2500", price: "12.0000" });
  expect(item.status, item.text).toBe(201);
  return { account, client, supplier: supplier.body, location: location.body.id, item: item.body };
}

async function createOrder(w: World, extra: Record<string, unknown> = {}): Promise<TestResponse> {
  return w.client.post("/purchase-orders", {
    supplier_id: w.supplier.id,
    location_id: w.location,
    lines: [
      { item_id: w.item.id, quantity: 10 },
      { name: "Freight", unit_cost: "35" },
    ],
    ...extra,
  });
}

async function orderCount(client: ApiClient): Promise<number> {
  return (await client.get("/purchase-orders", { limit: 1 })).body.pagination.total_records;
}

describe("connected: purchase orders", () => {
  it("creates a Not Sent order numbered from the sequence, with item and supplier defaults, totals and an ETag", async () => {
    const w = await world();
    const created = await createOrder(w, { shipping_fee: 12, custom_purchase_order_number: "PO-A1", attention: "Dock 3" });
    expect(created.status, created.text).toBe(201);
    const order = created.body;
    expect(Object.keys(order)).toEqual([...ORDER_KEYS, ...DETAIL_KEYS, ...TAIL_KEYS, "lines"]);
    expect(created.headers.get("etag")).toBe(`"${order.revision}"`);
    expect(order.revision).toMatch(/^po_/);
    expect(order).toMatchObject({
      object: "purchase_order",
      purchase_order_number: 1,
      custom_purchase_order_number: "PO-A1",
      supplier_id: w.supplier.id,
      supplier_name: w.supplier.name,
      assigned_user_id: w.account.ownerUserId,
      location_id: w.location,
      status_id: 21,
      status: "Not Sent",
      date_sent: null,
      date_received: null,
      attention: "Dock 3",
      discount_percent: "0.000",
      can_edit: true,
      edit_block_reason: null,
      amount_paid: "0.0000",
    });
    expect(order.issue_date).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    expect(order.party).toMatchObject({ account_number: String(w.supplier.customer_number), phone: "+1 555 0101" });
    const [inventory, service] = order.lines;
    expect(Object.keys(inventory)).toEqual(LINE_KEYS);
    expect(inventory).toMatchObject({
      item_id: w.item.id,
      line_type: "inventory",
      position: 0,
      name: "USB-C Cable",
      description: "2 m braided",
      sku: "CAB-1",
      location_name: "Main Warehouse",
      quantity: 10,
      quantity_received: 0,
      unit_cost: "4.2500",
      tax_rate: "8.250",
      tax_2_rate: "1.500",
      subtotal: "42.5000",
      discounted_unit_cost: null,
      variation_values: {},
      variation_number: 1,
    });
    expect(service).toMatchObject({
      item_id: null,
      line_type: "service",
      position: 1,
      name: "Freight",
      unit_cost: "35.0000",
      quantity: 1,
      location_name: null,
    });
    // 42.5 + 35 = 77.5; tax 8.25% = 3.50625 + 2.8875 -> 3.5063 + 2.8875; tax 2 1.5% = 0.6375 + 0.525
    expect(order).toMatchObject({ subtotal: "77.5000", shipping_fee: "12.0000", tax: "6.3938", tax_2: "1.1625", total: "97.0563", amount_due: "97.0563" });
    const fetched = await w.client.get(`/purchase-orders/${order.id}`);
    expect(fetched.status).toBe(200);
    expect(fetched.body).toEqual(order);
    expect(fetched.headers.get("etag")).toBe(`"${order.revision}"`);
    const second = await createOrder(w);
    expect(second.body.purchase_order_number).toBe(2);
    expect((await w.client.get(`/suppliers/${w.supplier.id}`)).body.document_count).toBe(2);
  });

  it("shows party's keys in the documented order on create, retrieve, update and send (a stored map keeps none)", async () => {
    const w = await world();
    const created = await createOrder(w);
    expect(created.status, created.text).toBe(201);
    const id = created.body.id;
    const responses = [
      created,
      await w.client.get(`/purchase-orders/${id}`),
      await w.client.patch(`/purchase-orders/${id}`, { name: "Keys" }),
      await w.client.post(`/purchase-orders/${id}/send`, {}),
    ];
    for (const response of responses) {
      expect(response.status, response.text).toBeLessThan(300);
      expect(Object.keys(response.body.party)).toEqual(["account_number", "phone", "email", "billing_address", "shipping_address"]);
    }
  });

  it("adds one generated discount line for discount_percent and discounts every taxable base", async () => {
    const w = await world();
    const created = await w.client.post("/purchase-orders", {
      supplier_id: w.supplier.id,
      location_id: w.location,
      discount_percent: 10,
      lines: [{ name: "Service A", unit_cost: "100", tax_rate: 20, tax_2_rate: 0 }],
    });
    expect(created.status, created.text).toBe(201);
    const order = created.body;
    expect(order.lines).toHaveLength(2);
    expect(order.lines[1]).toMatchObject({
      line_type: "discount",
      position: 1,
      unit_name: "discount",
      quantity: 1,
      unit_cost: "-10.0000",
      subtotal: "-10.0000",
      item_id: null,
    });
    expect(order.lines[0].discounted_unit_cost).toBe("90.0000");
    expect(order).toMatchObject({
      discount_percent: "10.000",
      pre_discount_total: "100.0000",
      discount_total: "-10.0000",
      subtotal: "90.0000",
      tax: "18.0000",
      total: "108.0000",
    });
  });

  it("refuses bad input with the spec's errors and creates nothing, consuming no number", async () => {
    const w = await world();
    const other = await world();
    const customer = (await w.client.post("/customers", { name: "Not a supplier" })).body;
    const line = { item_id: w.item.id, quantity: 1 };
    expectValidation(await w.client.post("/purchase-orders", { location_id: w.location, lines: [line] }), "supplier_id", "required");
    expectValidation(await createOrder(w, { supplier_id: other.supplier.id }), "supplier_id", "invalid_reference");
    expectValidation(await createOrder(w, { supplier_id: customer.id }), "supplier_id", "invalid_reference");
    expectValidation(await createOrder(w, { location_id: other.location }), "location_id", "invalid_reference");
    expectValidation(await createOrder(w, { lines: Array.from({ length: 101 }, () => line) }), "lines", "too_many");
    expectValidation(await createOrder(w, { lines: [] }), "lines", "too_few");
    expectValidation(await createOrder(w, { lines: [{ item_id: w.item.id, quantity: -2 }] }), "lines[0].quantity");
    expectValidation(await createOrder(w, { lines: [{ item_id: other.item.id }] }), "lines[0].item_id", "invalid_reference");
    expectValidation(await createOrder(w, { lines: [{ name: "Labour" }] }), "lines[0].unit_cost", "required");
    expectValidation(await createOrder(w, { lines: [{ item_id: w.item.id, name: "Renamed" }] }), "lines[0].name");
    for (const field of ["status_id", "purchase_order_number", "total", "amount_paid", "assigned_user_id", "created_at"]) {
      expectValidation(await createOrder(w, { [field]: 1 }), field, "unknown_field");
    }
    expectValidation(await createOrder(w, { shipping_fee: 1e300 }), "shipping_fee");
    expect(await orderCount(w.client)).toBe(0);
    expect((await w.client.get(`/suppliers/${w.supplier.id}`)).body.document_count).toBe(0);
    expect((await createOrder(w)).body.purchase_order_number).toBe(1);
  });

  it("updates Not Sent orders partially with complete line replacement and If-Match", async () => {
    const w = await world();
    const order = (await createOrder(w)).body;
    const [inventory, service] = order.lines;
    const renamed = await w.client.patch(`/purchase-orders/${order.id}`, { name: "Restock" });
    expect(renamed.status, renamed.text).toBe(200);
    expect(renamed.body.name).toBe("Restock");
    expect(renamed.body.lines.map((l: any) => l.id)).toEqual([inventory.id, service.id]);
    expect(renamed.body.revision).not.toBe(order.revision);

    const stale = await w.client.patch(`/purchase-orders/${order.id}`, { name: "Late" }, { headers: { "if-match": `"${order.revision}"` } });
    expectError(stale, 409, "mobile_mutation_conflict");
    expect((await w.client.get(`/purchase-orders/${order.id}`)).body.name).toBe("Restock");

    const replaced = await w.client.patch(
      `/purchase-orders/${order.id}`,
      {
        lines: [
          { id: inventory.id, item_id: w.item.id, quantity: 3, description: "" },
          { name: "Handling", unit_cost: "5" },
        ],
      },
      { headers: { "if-match": renamed.body.revision } },
    );
    expect(replaced.status, replaced.text).toBe(200);
    expect(replaced.body.lines).toHaveLength(2);
    expect(replaced.body.lines[0]).toMatchObject({ id: inventory.id, quantity: 3, description: null, subtotal: "12.7500" });
    expect(replaced.body.lines[1]).toMatchObject({ name: "Handling", line_type: "service" });
    expect(replaced.body.lines[1].id).not.toBe(service.id);

    const restored = await w.client.patch(`/purchase-orders/${order.id}`, { lines: [{ id: inventory.id, item_id: w.item.id, quantity: 3 }] });
    expect(restored.body.lines[0].description).toBe("2 m braided");

    expectValidation(
      await w.client.patch(`/purchase-orders/${order.id}`, { lines: [{ id: randomUUID(), item_id: w.item.id }] }),
      "lines[0].id",
      "invalid_reference",
    );
    expectValidation(
      await w.client.patch(`/purchase-orders/${order.id}`, {
        lines: [
          { id: inventory.id, item_id: w.item.id },
          { id: inventory.id, item_id: w.item.id },
        ],
      }),
      "lines[1].id",
      "duplicate",
    );
    const otherSupplier = (await w.client.post("/suppliers", { name: "Globex Supply" })).body;
    expectValidation(await w.client.patch(`/purchase-orders/${order.id}`, { supplier_id: otherSupplier.id }), "lines", "required");
    const moved = await w.client.patch(`/purchase-orders/${order.id}`, { supplier_id: otherSupplier.id, lines: [{ item_id: w.item.id, quantity: 1 }] });
    expect(moved.status, moved.text).toBe(200);
    expect(moved.body.supplier_name).toBe("Globex Supply");
    expect((await w.client.get(`/suppliers/${w.supplier.id}`)).body.document_count).toBe(0);
    expect((await w.client.get(`/suppliers/${otherSupplier.id}`)).body.document_count).toBe(1);

    const sent = await w.client.post(`/purchase-orders/${order.id}/send`, {});
    expect(sent.status, sent.text).toBe(200);
    const refused = await w.client.patch(`/purchase-orders/${order.id}`, { name: "Too late" });
    expectError(refused, 409, "purchase_order_update_not_allowed");
    const detail = (await w.client.get(`/purchase-orders/${order.id}`)).body;
    expect(detail).toMatchObject({ name: "Restock", can_edit: false, edit_block_reason: "purchase_order_not_not_sent" });
  });

  it("lists newest number first with every filter, ids and visibility", async () => {
    const w = await world();
    const first = (await createOrder(w, { name: "Alpha", custom_purchase_order_number: "CUST-77", issue_date: "2026-01-10", date_needed: "2026-02-01" })).body;
    const second = (await createOrder(w, { name: "Beta", issue_date: "2026-03-05", date_requested: "2026-03-01" })).body;
    const otherSupplier = (await w.client.post("/suppliers", { name: "Zeta Parts" })).body;
    const third = (await createOrder(w, { supplier_id: otherSupplier.id, issue_date: "2026-04-01" })).body;
    await w.client.post(`/purchase-orders/${second.id}/send`, {});

    const list = await w.client.get("/purchase-orders");
    expect(list.status).toBe(200);
    expect(list.body.data.map((o: any) => o.purchase_order_number)).toEqual([3, 2, 1]);
    expect(Object.keys(list.body.data[0])).toEqual([...ORDER_KEYS, ...TAIL_KEYS]);
    expect(list.body.pagination).toEqual({ page: 1, per_page: 20, total_pages: 1, total_records: 3 });
    const ids = (params: Record<string, string | number>) => w.client.get("/purchase-orders", params).then((r) => r.body.data.map((o: any) => o.id));
    expect(await ids({ status_id: 22 })).toEqual([second.id]);
    expect(await ids({ supplier_id: otherSupplier.id })).toEqual([third.id]);
    expect(await ids({ q: "zeta" })).toEqual([third.id]);
    expect(await ids({ q: "cust-77" })).toEqual([first.id]);
    expect(await ids({ q: "1" })).toEqual([first.id]);
    expect(await ids({ issue_date_from: "2026-03-01", issue_date_to: "2026-03-31" })).toEqual([second.id]);
    // One bound alone, and a range whose bounds are reversed (empty).
    expect(await ids({ issue_date_to: "2026-03-31" })).toEqual([second.id, first.id]);
    expect(await ids({ issue_date_from: "2026-03-01" })).toEqual([third.id, second.id]);
    expect(await ids({ issue_date_from: "2026-04-30", issue_date_to: "2026-03-01" })).toEqual([]);
    expect(await ids({ needed_date_from: "2026-02-01" })).toEqual([first.id]);
    expect(await ids({ requested_date_to: "2026-03-01" })).toEqual([second.id]);
    expect(await ids({ location_id: w.location, limit: 2, page: 2 })).toEqual([first.id]);
    const batch = await w.client.get("/purchase-orders", { ids: `${first.id},${randomUUID()},${third.id}` });
    expect(batch.body.data.map((o: any) => o.id)).toEqual([third.id, first.id]);
    expect(batch.body.pagination).toMatchObject({ per_page: 3, total_records: 2 });
    expectError(await w.client.get("/purchase-orders", { ids: "not-a-uuid" }), 422, "invalid_query_parameter", "ids");

    const staff = await newUser(w.account, { permissions: ["purchase_orders.list", "purchase_orders.modify"] });
    const staffClient = api().withKey(staff.key);
    const own = await staffClient.post("/purchase-orders", { supplier_id: otherSupplier.id, location_id: w.location, lines: [{ name: "X", unit_cost: 1 }] });
    // The supplier is not the staff user's own record: invisible to them.
    expectValidation(own, "supplier_id", "invalid_reference");
    const staffSupplier = (await staffClient.post("/suppliers", { name: "Staff supplier" })).body;
    const mine = await staffClient.post("/purchase-orders", { supplier_id: staffSupplier.id, location_id: w.location, lines: [{ name: "X", unit_cost: 1 }] });
    expect(mine.status, mine.text).toBe(201);
    const staffList = await staffClient.get("/purchase-orders");
    expect(staffList.body.data.map((o: any) => o.id)).toEqual([mine.body.id]);
    expect(staffList.body.pagination.total_records).toBe(1);
    expectError(await staffClient.get(`/purchase-orders/${first.id}`), 404, "resource_missing");
    expect((await w.client.get("/purchase-orders")).body.pagination.total_records).toBe(4);

    const noPermission = await newUser(w.account, { permissions: [] });
    expectError(await api().withKey(noPermission.key).get("/purchase-orders"), 403, "permission_denied");
    const readOnly = await newUser(w.account, { permissions: ["purchase_orders.list", "records.view_all"] });
    const readOnlyView = await api().withKey(readOnly.key).get(`/purchase-orders/${first.id}`);
    expect(readOnlyView.body).toMatchObject({ can_edit: false, edit_block_reason: "permission_denied" });
    expectError(await api().withKey(readOnly.key).patch(`/purchase-orders/${first.id}`, { name: "x" }), 403, "permission_denied");
    const otherTenant = await world();
    expectError(await otherTenant.client.get(`/purchase-orders/${first.id}`), 404, "resource_missing");
  });

  it("records payments and refunds, moving amount_paid, amount_due and date_fully_paid; deletes them; replays by Idempotency-Key", async () => {
    const w = await world();
    const order = (
      await w.client.post("/purchase-orders", {
        supplier_id: w.supplier.id,
        location_id: w.location,
        lines: [{ name: "Service", unit_cost: "100", tax_rate: 0, tax_2_rate: 0 }],
      })
    ).body;
    const key = idempotencyKey();
    const paid = await w.client.post(
      `/purchase-orders/${order.id}/payments`,
      { amount: "60", reference: "Wire 1", payment_date: "2026-11-20" },
      { idempotencyKey: key },
    );
    expect(paid.status, paid.text).toBe(201);
    expect(paid.body).toEqual({
      id: expect.any(String),
      object: "payment",
      purchase_order_id: order.id,
      amount: "60.0000",
      type: "payment",
      reference: "Wire 1",
      payment_date: "2026-11-20",
      card: null,
    });
    const replay = await w.client.post(
      `/purchase-orders/${order.id}/payments`,
      { amount: "60", reference: "Wire 1", payment_date: "2026-11-20" },
      { idempotencyKey: key },
    );
    expect(replay.status).toBe(201);
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    expect(replay.body).toEqual(paid.body);
    expectError(await w.client.post(`/purchase-orders/${order.id}/payments`, { amount: "61" }, { idempotencyKey: key }), 409, "idempotency_key_reused");

    const rest = await w.client.post(`/purchase-orders/${order.id}/payments`, { amount: 40, payment_date: "2026-11-21" });
    expect(rest.status).toBe(201);
    let detail = (await w.client.get(`/purchase-orders/${order.id}`)).body;
    expect(detail).toMatchObject({ amount_paid: "100.0000", amount_due: "0.0000", date_fully_paid: "2026-11-21" });
    const refund = await w.client.post(`/purchase-orders/${order.id}/payments`, { amount: "-10", payment_date: "2026-11-22" });
    expect(refund.body).toMatchObject({ type: "refund", amount: "-10.0000", reference: "" });
    detail = (await w.client.get(`/purchase-orders/${order.id}`)).body;
    expect(detail).toMatchObject({ amount_paid: "90.0000", amount_due: "10.0000", date_fully_paid: null });

    const list = await w.client.get(`/purchase-orders/${order.id}/payments`);
    expect(list.body.data.map((p: any) => p.payment_date)).toEqual(["2026-11-22", "2026-11-21", "2026-11-20"]);
    const deleted = await w.client.request("DELETE", `/purchase-orders/${order.id}/payments/${refund.body.id}`);
    expect(deleted.status, deleted.text).toBe(200);
    expect(deleted.body).toEqual({ id: refund.body.id, object: "payment", deleted: true });
    expectError(await w.client.request("DELETE", `/purchase-orders/${order.id}/payments/${refund.body.id}`), 404, "resource_missing");
    detail = (await w.client.get(`/purchase-orders/${order.id}`)).body;
    // Paid again as of the payments that remain, not as of the deleted refund (2026-11-22).
    expect(detail).toMatchObject({ amount_paid: "100.0000", amount_due: "0.0000", date_fully_paid: "2026-11-21" });
    expectValidation(await w.client.post(`/purchase-orders/${order.id}/payments`, { amount: 0 }), "amount");
    expectValidation(await w.client.post(`/purchase-orders/${order.id}/payments`, { amount: "1.23456" }), "amount");

    // An update keeps the total at or above the amount paid; date_fully_paid follows the new amount due.
    const line = detail.lines[0].id;
    const lower = await w.client.patch(`/purchase-orders/${order.id}`, { lines: [{ id: line, name: "Service", unit_cost: "50", tax_rate: 0, tax_2_rate: 0 }] });
    expectValidation(lower, "lines", "exceeds_amount_due");
    expectValidation(await w.client.patch(`/purchase-orders/${order.id}`, { discount_percent: 10 }), "discount_percent", "exceeds_amount_due");
    expect((await w.client.get(`/purchase-orders/${order.id}`)).body).toMatchObject({
      total: "100.0000",
      amount_paid: "100.0000",
      date_fully_paid: "2026-11-21",
    });
    const higher = await w.client.patch(`/purchase-orders/${order.id}`, { shipping_fee: "20" });
    expect(higher.status, higher.text).toBe(200);
    expect(higher.body).toMatchObject({ total: "120.0000", amount_paid: "100.0000", amount_due: "20.0000", date_fully_paid: null });
    const back = await w.client.patch(`/purchase-orders/${order.id}`, { shipping_fee: "0" });
    expect(back.body).toMatchObject({ total: "100.0000", amount_due: "0.0000", date_fully_paid: expect.stringMatching(/^\d{4}-\d{2}-\d{2}$/) });
  });

  it(
    "bounds payments like invoices: never above the total, never refunded below zero, under 60 parallel payments too",
    async () => {
      const w = await world();
      const serviceOrder = (total: string) =>
        w.client.post("/purchase-orders", {
          supplier_id: w.supplier.id,
          location_id: w.location,
          lines: [{ name: "Service", unit_cost: total, tax_rate: 0, tax_2_rate: 0 }],
        });
      const ten = (await serviceOrder("10")).body;
      expectError(await w.client.post(`/purchase-orders/${ten.id}/payments`, { amount: "25.00" }), 422, "exceeds_amount_due", "amount");
      expectError(await w.client.post(`/purchase-orders/${ten.id}/payments`, { amount: "-1000.00" }), 422, "exceeds_amount_paid", "amount");
      expect((await w.client.get(`/purchase-orders/${ten.id}`)).body).toMatchObject({ amount_paid: "0.0000", amount_due: "10.0000" });
      expect((await w.client.get(`/purchase-orders/${ten.id}/payments`)).body.data).toEqual([]);
      // Paid in full, then refunded 4: deleting the refund would pay 4 beyond the total.
      await w.client.post(`/purchase-orders/${ten.id}/payments`, { amount: "6" });
      const refund = (await w.client.post(`/purchase-orders/${ten.id}/payments`, { amount: "-4" })).body;
      await w.client.post(`/purchase-orders/${ten.id}/payments`, { amount: "8" });
      expect((await w.client.get(`/purchase-orders/${ten.id}`)).body).toMatchObject({ amount_paid: "10.0000", amount_due: "0.0000" });
      expectError(await w.client.request("DELETE", `/purchase-orders/${ten.id}/payments/${refund.id}`), 409, "purchase_order_payment_delete_not_allowed");
      expectError(await w.client.post(`/purchase-orders/${ten.id}/payments`, { amount: "0.0001" }), 422, "exceeds_amount_due", "amount");

      const hundred = (await serviceOrder("100")).body;
      const attempts = await Promise.all(Array.from({ length: 60 }, () => w.client.post(`/purchase-orders/${hundred.id}/payments`, { amount: "12.50" })));
      expect(attempts.filter((r) => r.status >= 500).map((r) => r.text)).toEqual([]);
      expect(attempts.filter((r) => r.status === 201)).toHaveLength(8);
      for (const refused of attempts.filter((r) => r.status !== 201)) expectError(refused, 422, "exceeds_amount_due", "amount");
      expect((await w.client.get(`/purchase-orders/${hundred.id}`)).body).toMatchObject({ amount_paid: "100.0000", amount_due: "0.0000" });
      expect((await w.client.get(`/purchase-orders/${hundred.id}/payments`, { limit: 100 })).body.pagination.total_records).toBe(8);
    },
    scaled(60_000),
  );

  it("defaults issue_date and date_sent to today in the account's time zone (spec 4.1: the user's account timezone), whatever the user's own", async () => {
    const w = await world();
    // UTC+14 and UTC-11: their dates always differ.
    await updateAccount(w.account.accountId, { timeZone: "Pacific/Kiritimati" });
    const user = await newUser(w.account, { role: "owner", timeZone: "Pacific/Pago_Pago" });
    const client = api().withKey(user.key);
    const today = (zone: string) => new Intl.DateTimeFormat("en-CA", { timeZone: zone }).format(new Date());
    const order = await client.post("/purchase-orders", { supplier_id: w.supplier.id, location_id: w.location, lines: [{ name: "Freight", unit_cost: "35" }] });
    expect(order.status, order.text).toBe(201);
    expect(order.body.issue_date).toBe(today("Pacific/Kiritimati"));
    const sent = await client.post(`/purchase-orders/${order.body.id}/send`, {});
    expect(sent.body.date_sent).toBe(today("Pacific/Kiritimati"));
    expect(today("Pacific/Pago_Pago")).not.toBe(today("Pacific/Kiritimati"));
  });

  it("keeps a supplier with purchase orders from being deleted (422 on document_count)", async () => {
    const w = await world();
    await createOrder(w);
    expectValidation(await w.client.request("DELETE", `/suppliers/${w.supplier.id}`), "document_count");
  });
});
