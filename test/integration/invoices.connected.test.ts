import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { db } from "../../lib/db/service.js";
import { updateAccount } from "../../lib/domain/admin/service.js";
import { useApiServer, type ApiClient } from "../support/api.js";
import { expectError, expectValidation } from "../support/assertions.js";
import { idempotencyKey, newAccount, newKey, newUser } from "../support/fixtures.js";
import {
  INVOICE_DETAIL_KEYS,
  INVOICE_KEYS,
  INVOICE_LINE_KEYS,
  INVOICE_LIST_TAIL_KEYS,
  figuresOf,
  newItem,
  salesWorld,
  stockOf,
  type SalesWorld,
} from "../support/sales.js";

/**
 * Invoices through HTTP against DynamoDB Local (spec part 2, sections 2.5, 3.5, 4.5;
 * architecture sections 4 and 8): create with defaults, detail fields and the snapshot rule;
 * protected fields; permissions; stock taken from on hand (below zero when a sale takes more
 * than there is; unique items sold only while on hand, and counted); customers' figures; update, send, cancel and delete with their stock and
 * revenue effects; list filters and visibility. Payments and packing are in invoices-payments.
 */
const api = useApiServer();
const world = () => salesWorld((key) => api().withKey(key));

async function createInvoice(w: SalesWorld, extra: Record<string, unknown> = {}, client: ApiClient = w.client) {
  return client.post("/invoices", {
    customer_id: w.customer.id,
    lines: [
      { item_id: w.item.id, quantity: 3 },
      { name: "Setup", unit_price: "40" },
    ],
    ...extra,
  });
}

const invoiceCount = async (client: ApiClient) => (await client.get("/invoices", { limit: 1 })).body.pagination.total_records;

describe("connected: invoices", () => {
  it("detail shows current related values (snapshot rule): tax labels, the customer's contact and billing details, SKU, unit label, location name", async () => {
    const w = await world();
    const created = await createInvoice(w, { shipping_address: "Warehouse 7" });
    expect(created.status, created.text).toBe(201);
    const id = created.body.id;
    expect(created.body).toMatchObject({ tax_label: null, party: { phone: "+1 555 0199" } });
    await updateAccount(w.account.accountId, { taxLabel: "GST", tax2Label: "PST" });
    expect((await w.client.request("PATCH", `/customers/${w.customer.id}`, { office_phone: "+1 555 9999", billing_city: "Shelbyville" })).status).toBe(200);
    expect((await w.client.request("PATCH", `/items/${w.item.id}`, { sku: "WID-2" })).status).toBe(200);
    // Locations have no update route: rename it in the table (as an operator tool would).
    await db().entities.location.patch({ accountId: w.account.accountId, locationId: w.location }).set({ name: "North Warehouse" }).go();
    const detail = (await w.client.get(`/invoices/${id}`)).body;
    expect(detail).toMatchObject({ tax_label: "GST", tax_2_label: "PST", party: { phone: "+1 555 9999", shipping_address: ["Warehouse 7"] } });
    expect(detail.party.billing_address).toContain("Shelbyville");
    expect(detail.lines[0]).toMatchObject({ sku: "WID-2", location_name: "North Warehouse" });
    // Stored values stay: the line's name and description, prices, the customer's name.
    expect(detail.lines[0]).toMatchObject({ name: created.body.lines[0].name, unit_price: created.body.lines[0].unit_price });
    expect(detail.customer_name).toBe(created.body.customer_name);
  });

  it("payment_terms: the account's when omitted; null or blank sent means none (invoices, sales orders and estimates alike)", async () => {
    const w = await world();
    await updateAccount(w.account.accountId, { paymentTerms: "Net 30" });
    const lines = [{ name: "Setup", unit_price: "1" }];
    for (const path of ["/invoices", "/sales-orders", "/estimates"]) {
      expect((await w.client.post(path, { customer_id: w.customer.id, lines })).body.payment_terms, path).toBe("Net 30");
      for (const none of [null, "", "  "]) {
        const created = await w.client.post(path, { customer_id: w.customer.id, lines, payment_terms: none });
        expect(created.status, created.text).toBe(201);
        expect(created.body.payment_terms, `${path} ${JSON.stringify(none)}`).toBeNull();
      }
    }
    // A conversion copies the estimate's terms, none included.
    await updateAccount(w.account.accountId, { paymentTerms: "Net 45" });
    const estimate = (await w.client.post("/estimates", { customer_id: w.customer.id, lines, payment_terms: null })).body;
    expect(estimate.payment_terms).toBeNull();
    expect((await w.client.post(`/estimates/${estimate.id}/convert-to-invoice`, {})).body.payment_terms).toBeNull();
    // A blank account setting is no terms at all.
    await updateAccount(w.account.accountId, { paymentTerms: "" });
    for (const path of ["/invoices", "/sales-orders", "/estimates"]) {
      expect((await w.client.post(path, { customer_id: w.customer.id, lines })).body.payment_terms, path).toBeNull();
    }
  });

  it("creates an unpaid invoice with every detail field; stock leaves on hand; the customer's figures move in the same write", async () => {
    const w = await world();
    await updateAccount(w.account.accountId, { taxLabel: "GST", tax2Label: "PST", paymentTerms: "Net 30" });
    const created = await createInvoice(w, {
      shipping_fee: "5",
      shipping_cost: "2",
      custom_invoice_number: "INV-A",
      shipping_address: "Warehouse 7\n 12 Quay St ",
      issue_date: "2026-11-20",
    });
    expect(created.status, created.text).toBe(201);
    const invoice = created.body;
    expect(Object.keys(invoice)).toEqual([...INVOICE_KEYS, "shipping_cost", ...INVOICE_DETAIL_KEYS, "lines"]);
    expect(created.headers.get("etag")).toBe(`"${invoice.revision}"`);
    expect(invoice.revision).toMatch(/^inv_/);
    expect(invoice).toMatchObject({
      object: "invoice",
      invoice_number: 1,
      custom_invoice_number: "INV-A",
      customer_id: w.customer.id,
      customer_name: w.customer.name,
      salesperson_id: w.account.ownerUserId,
      status_id: 9,
      status: "Sent",
      issue_date: "2026-11-20",
      expiry_date: null,
      date_sent: null,
      date_fully_paid: null,
      purchase_order_number: "",
      payment_terms: "Net 30",
      // 36 + 40 = 76; tax 10% 7.6; tax 2 2.5% = 0.9 + 1; shipping 5
      subtotal: "76.0000",
      tax: "7.6000",
      tax_2: "1.9000",
      shipping_fee: "5.0000",
      shipping_cost: "2.0000",
      total: "90.5000",
      amount_paid: "0.0000",
      amount_due: "90.5000",
      pre_discount_total: "76.0000",
      discount_total: "0.0000",
      tax_label: "GST",
      tax_2_label: "PST",
      can_edit: true,
      edit_block_reason: null,
      source_estimate: null,
      source_sales_order: null,
      fulfillment_authority: "invoice",
      fulfillment_sales_order_id: null,
      packed_percent: 0,
      shipped_percent: 0,
      can_pack: true,
      pack_block_reason: null,
    });
    // The stored shipping address wins over the customer's; contact and billing are the customer's.
    expect(invoice.party).toEqual({
      account_number: String(w.customer.customer_number),
      phone: "+1 555 0199",
      email: "buyer@acme.test",
      billing_address: [w.customer.name, "1 Main St", "Springfield"],
      shipping_address: ["Warehouse 7", "12 Quay St"],
    });
    const [inventory, service] = invoice.lines;
    expect(Object.keys(inventory)).toEqual([...INVOICE_LINE_KEYS, "unit_cost", "total_cost"]);
    expect(inventory).toMatchObject({
      item_id: w.item.id,
      item_variation_location_id: expect.any(Number),
      name: w.item.name,
      description: "Blue widget",
      quantity: 3,
      quantity_packed: 0,
      quantity_shipped: 0,
      unit_price: "12.0000",
      discounted_unit_price: null,
      subtotal: "36.0000",
      line_type: "inventory",
      unit_name: null,
      sku: "WID-1",
      location_name: "Main Warehouse",
      unit_cost: "4.0000",
      total_cost: "12.0000",
    });
    expect(service).toMatchObject({
      line_type: "service",
      item_id: null,
      location_name: null,
      unit_price: "40.0000",
      unit_cost: "0.0000",
      total_cost: "0.0000",
    });
    const fetched = await w.client.get(`/invoices/${invoice.id}`);
    expect(fetched.body).toEqual(invoice);
    expect(fetched.headers.get("etag")).toBe(`"${invoice.revision}"`);
    expect(await stockOf(w.client, w.item.id)).toMatchObject({ quantity: 47, reserved: 0 });
    expect(await figuresOf(w.client, w.customer.id)).toEqual({ document_count: 1, lifetime_revenue_total: "90.5000", last_invoice_date: "2026-11-20" });
    // An earlier invoice never moves last_invoice_date back.
    const earlier = await createInvoice(w, { issue_date: "2026-10-01", lines: [{ name: "Fee", unit_price: "9.5", tax_rate: 0, tax_2_rate: 0 }] });
    expect(earlier.body.invoice_number).toBe(2);
    expect(await figuresOf(w.client, w.customer.id)).toEqual({ document_count: 2, lifetime_revenue_total: "100.0000", last_invoice_date: "2026-11-20" });
    // Tax labels are current related values: refreshed by the invoice's next write.
    await updateAccount(w.account.accountId, { taxLabel: "VAT" });
    expect((await w.client.post(`/invoices/${invoice.id}/send`, {})).body.tax_label).toBe("VAT");
  });

  it("last_invoice_date falls back to the latest remaining invoice when the latest is deleted, dated earlier or moved to another customer", async () => {
    const w = await world();
    const fee = (issueDate: string) => createInvoice(w, { issue_date: issueDate, lines: [{ name: "Fee", unit_price: "1", tax_rate: 0, tax_2_rate: 0 }] });
    const dateOf = async (customerId: string) => (await figuresOf(w.client, customerId)).last_invoice_date;
    const october = (await fee("2026-10-01")).body;
    const november = (await fee("2026-11-20")).body;
    const twin = (await fee("2026-11-20")).body;
    expect(await dateOf(w.customer.id)).toBe("2026-11-20");
    // Another invoice shares the latest date: nothing moves.
    expect((await w.client.request("DELETE", `/invoices/${twin.id}`)).status).toBe(200);
    expect(await dateOf(w.customer.id)).toBe("2026-11-20");
    // The latest dated earlier, still after the others: its new date.
    const redated = await w.client.patch(`/invoices/${november.id}`, { issue_date: "2026-11-05" });
    expect(redated.status, redated.text).toBe(200);
    expect(await dateOf(w.customer.id)).toBe("2026-11-05");
    // Dated before another one: that one's date.
    expect((await w.client.patch(`/invoices/${november.id}`, { issue_date: "2026-09-01" })).status).toBe(200);
    expect(await dateOf(w.customer.id)).toBe("2026-10-01");
    // Moved to another customer: the old one falls back, the new one takes its date.
    const globex = (await w.client.post("/customers", { name: "Globex" })).body;
    const moved = await w.client.patch(`/invoices/${october.id}`, { customer_id: globex.id, lines: [{ name: "Fee", unit_price: "1" }] });
    expect(moved.status, moved.text).toBe(200);
    expect(await dateOf(w.customer.id)).toBe("2026-09-01");
    expect(await dateOf(globex.id)).toBe("2026-10-01");
    // The last one deleted: none.
    expect((await w.client.request("DELETE", `/invoices/${november.id}`)).status).toBe(200);
    expect(await figuresOf(w.client, w.customer.id)).toEqual({ document_count: 0, lifetime_revenue_total: "0.0000", last_invoice_date: null });
    // A cancelled invoice still counts as the customer's invoice until it is deleted.
    expect((await w.client.post(`/invoices/${october.id}/cancel`, {})).status).toBe(200);
    expect(await dateOf(globex.id)).toBe("2026-10-01");
    expect((await w.client.request("DELETE", `/invoices/${october.id}`)).status).toBe(200);
    expect(await dateOf(globex.id)).toBeNull();
  });

  it("refuses protected fields with unsupported_invoice_field and other mistakes with their errors, changing nothing", async () => {
    const w = await world();
    const other = await world();
    const protectedFields = [
      "invoice_number",
      "status_id",
      "status",
      "salesperson_id",
      "account_id",
      "source_sales_order_id",
      "total",
      "amount_paid",
      "payments",
      "fulfillment_authority",
      "date_fully_paid",
      "created_at",
    ];
    for (const field of protectedFields) {
      const refused = await createInvoice(w, { [field]: 1 });
      expectError(refused, 422, "unsupported_invoice_field", field);
      expect(refused.body.error.details).toEqual([{ param: field, code: "unsupported_invoice_field", message: expect.any(String) }]);
    }
    expectError(
      await createInvoice(w, { lines: [{ item_id: w.item.id, quantity: 1, quantity_packed: 1 }] }),
      422,
      "unsupported_invoice_field",
      "lines[0].quantity_packed",
    );
    expectError(await createInvoice(w, { colour: "red" }), 422, "unsupported_invoice_field", "colour");
    expectError(await createInvoice(w, { lines: [{ item_id: w.item.id, quantity: 1, total: "1" }] }), 422, "unsupported_invoice_field", "lines[0].total");
    expectValidation(await createInvoice(w, { customer_id: other.customer.id }), "customer_id", "invalid_reference");
    expectValidation(await createInvoice(w, { lines: [] }), "lines", "too_few");
    expectValidation(await createInvoice(w, { lines: [{ name: "No price" }] }), "lines[0].unit_price", "required");
    expectValidation(await createInvoice(w, { lines: [{ item_id: other.item.id }] }), "lines[0].item_id", "invalid_reference");
    expectValidation(await createInvoice(w, { custom_invoice_number: "X".repeat(25) }), "custom_invoice_number", "too_long");
    // A unique item sells only while it is on hand: 422 naming the line, nothing written.
    const unstocked = await newItem(w.client, w.location, { body: { inventory_type: "unique", serial_number: `SN-${randomUUID().slice(0, 6)}` } });
    const short = await createInvoice(w, {
      lines: [{ name: "Fee", unit_price: "1" }, { item_id: w.item.id, quantity: 2 }, { item_id: unstocked.id }],
    });
    expectValidation(short, "lines[2].quantity", "insufficient_stock");
    expect(await invoiceCount(w.client)).toBe(0);
    expect(await stockOf(w.client, w.item.id)).toMatchObject({ quantity: 50 });
    expect(await figuresOf(w.client, w.customer.id)).toEqual({ document_count: 0, lifetime_revenue_total: "0.0000", last_invoice_date: null });
    // The protected-field check applies to updates too.
    const invoice = (await createInvoice(w)).body;
    expect(invoice.invoice_number).toBe(1);
    expectError(await w.client.patch(`/invoices/${invoice.id}`, { status_id: 11 }), 422, "unsupported_invoice_field", "status_id");
    expect((await w.client.get(`/invoices/${invoice.id}`)).body.status_id).toBe(9);
  });

  it("needs prices.modify for inventory prices, costs.view for shipping cost and costs, invoices.modify for writes", async () => {
    const w = await world();
    const clerk = api().withKey((await newUser(w.account, { permissions: ["invoices.list", "invoices.modify", "records.view_all"] })).key);
    expectError(
      await createInvoice(w, { lines: [{ item_id: w.item.id, quantity: 1, unit_price: "1" }] }, clerk),
      403,
      "permission_denied",
      "lines[0].unit_price",
    );
    expectError(await createInvoice(w, { shipping_cost: "1" }, clerk), 403, "permission_denied", "shipping_cost");
    expect(await invoiceCount(w.client)).toBe(0);
    expect(await stockOf(w.client, w.item.id)).toMatchObject({ quantity: 50 });
    const plain = await createInvoice(w, {}, clerk);
    expect(plain.status, plain.text).toBe(201);
    expect(plain.body).not.toHaveProperty("shipping_cost");
    expect(Object.keys(plain.body.lines[0])).toEqual(INVOICE_LINE_KEYS);
    expect(plain.body.lines[0].unit_price).toBe("12.0000");
    const pricer = api().withKey((await newUser(w.account, { permissions: ["invoices.list", "invoices.modify", "records.view_all", "prices.modify"] })).key);
    const priced = await createInvoice(w, { lines: [{ item_id: w.item.id, quantity: 2, unit_price: "7.25" }] }, pricer);
    expect(priced.body.lines[0]).toMatchObject({ unit_price: "7.2500", subtotal: "14.5000" });
    const reader = api().withKey((await newUser(w.account, { permissions: ["invoices.list", "records.view_all"] })).key);
    expectError(await createInvoice(w, {}, reader), 403, "permission_denied");
    expect((await reader.get(`/invoices/${plain.body.id}`)).body).toMatchObject({
      can_edit: false,
      edit_block_reason: "permission_denied",
      can_pack: false,
      pack_block_reason: "permission_denied",
    });
    // The key's scopes count too: a key of the owner without invoices:write (or invoices:pack) may not edit (or pack).
    const readKey = api().withKey((await newKey(w.account.ownerUserId, { scopes: ["invoices:read", "invoices:pack"] })).key);
    expect((await readKey.get(`/invoices/${plain.body.id}`)).body).toMatchObject({ can_edit: false, edit_block_reason: "permission_denied", can_pack: true });
    const writeKey = api().withKey((await newKey(w.account.ownerUserId, { scopes: ["invoices:read", "invoices:write"] })).key);
    expect((await writeKey.get(`/invoices/${plain.body.id}`)).body).toMatchObject({ can_edit: true, can_pack: false, pack_block_reason: "permission_denied" });
    expectError(
      await api()
        .withKey((await newUser(w.account, { permissions: [] })).key)
        .get("/invoices"),
      403,
      "permission_denied",
    );
  });

  it("sells unique items (sold, status counts) and gives them back on cancel", async () => {
    const w = await world();
    const unique = await newItem(w.client, w.location, { stock: 1, body: { inventory_type: "unique", serial_number: `SN-${randomUUID().slice(0, 6)}` } });
    const activeBefore = (await w.client.get("/items")).body.pagination.total_records;
    const invoice = await createInvoice(w, { lines: [{ item_id: unique.id, quantity: 5 }] });
    expect(invoice.status, invoice.text).toBe(201);
    expect(invoice.body.lines[0].quantity).toBe(1);
    expect(await stockOf(w.client, unique.id)).toMatchObject({ quantity: 0, sold: true, status_id: 2 });
    expect((await w.client.get("/items")).body.pagination.total_records).toBe(activeBefore - 1);
    expect((await w.client.get("/items", { include_sold: "true" })).body.pagination.total_records).toBe(activeBefore);
    expectValidation(await createInvoice(w, { lines: [{ item_id: unique.id }] }), "lines[0].quantity", "insufficient_stock");
    const cancelled = await w.client.post(`/invoices/${invoice.body.id}/cancel`, {});
    expect(cancelled.status, cancelled.text).toBe(200);
    expect(await stockOf(w.client, unique.id)).toMatchObject({ quantity: 1, sold: false, status_id: 1 });
    expect((await w.client.get("/items")).body.pagination.total_records).toBe(activeBefore);
  });

  it("an invoice sells more than is on hand (the spec sets no stock rule on sales): on hand goes below zero, and comes back on cancel; so do orders' and estimates' invoices", async () => {
    const w = await world();
    // A new item never stocked anywhere, sold from its default location.
    const fresh = await newItem(w.client, w.location);
    const first = await createInvoice(w, { lines: [{ item_id: fresh.id, quantity: 3 }] });
    expect(first.status, first.text).toBe(201);
    expect(first.body.lines[0]).toMatchObject({ item_id: fresh.id, quantity: 3, item_variation_location_id: expect.any(Number) });
    expect(await stockOf(w.client, fresh.id)).toMatchObject({ quantity: -3, available: -3 });
    // 50 on hand, 53 sold: -3; the cancel gives all 53 back.
    const over = await createInvoice(w, { lines: [{ item_id: w.item.id, quantity: 53 }] });
    expect(over.status, over.text).toBe(201);
    expect(await stockOf(w.client, w.item.id)).toMatchObject({ quantity: -3 });
    expect((await w.client.post(`/invoices/${over.body.id}/cancel`, {})).status).toBe(200);
    expect(await stockOf(w.client, w.item.id)).toMatchObject({ quantity: 50 });

    // A sales order of the unstocked item reserves it; its invoice takes it from on hand and the reservation.
    const order = await w.client.post("/sales-orders", { customer_id: w.customer.id, lines: [{ item_id: fresh.id, quantity: 2 }] });
    expect(order.status, order.text).toBe(201);
    const invoiced = await w.client.post(`/sales-orders/${order.body.id}/invoices`, {});
    expect(invoiced.status, invoiced.text).toBe(201);
    expect(await stockOf(w.client, fresh.id)).toMatchObject({ quantity: -5, reserved: 0 });
    // An estimate of it converts to an invoice.
    const estimate = await w.client.post("/estimates", { customer_id: w.customer.id, lines: [{ item_id: fresh.id, quantity: 1 }] });
    expect(estimate.status, estimate.text).toBe(201);
    const converted = await w.client.post(`/estimates/${estimate.body.id}/convert-to-invoice`, {});
    expect(converted.status, converted.text).toBe(201);
    expect(await stockOf(w.client, fresh.id)).toMatchObject({ quantity: -6 });
    // Stock that came in makes up what was sold first.
    expect((await w.client.post(`/items/${fresh.id}/adjustments`, { location_id: w.location, quantity: 10 })).status).toBe(201);
    expect(await stockOf(w.client, fresh.id)).toMatchObject({ quantity: 4 });
  });

  it("a unique item is counted in whole units, and a sold one brought back on hand otherwise is not sold any more (its invoice cancels without giving it back twice)", async () => {
    const w = await world();
    const unique = await newItem(w.client, w.location, { stock: 0, body: { inventory_type: "unique", serial_number: `SN-${randomUUID().slice(0, 6)}` } });
    const half = await w.client.post(`/items/${unique.id}/adjustments`, { location_id: w.location, quantity: 0.5 });
    expectValidation(half, "quantity", "unique_item");
    expect(await stockOf(w.client, unique.id)).toMatchObject({ quantity: 0 });
    expect((await w.client.post(`/items/${unique.id}/adjustments`, { location_id: w.location, quantity: 1 })).status).toBe(201);
    const invoice = await createInvoice(w, { lines: [{ item_id: unique.id, quantity: 1 }] });
    expect(invoice.status, invoice.text).toBe(201);
    expect(await stockOf(w.client, unique.id)).toMatchObject({ quantity: 0, sold: true, status_id: 2 });
    const activeBefore = (await w.client.get("/items")).body.pagination.total_records;
    // The unit comes back by an adjustment (a return booked by hand): on hand, active, listed.
    expect((await w.client.post(`/items/${unique.id}/adjustments`, { location_id: w.location, quantity: 1 })).status).toBe(201);
    expect(await stockOf(w.client, unique.id)).toMatchObject({ quantity: 1, sold: false, status_id: 1 });
    expect((await w.client.get("/items")).body.pagination.total_records).toBe(activeBefore + 1);
    // The invoice still cancels (and deletes), without giving the unit back a second time.
    const cancelled = await w.client.post(`/invoices/${invoice.body.id}/cancel`, {});
    expect(cancelled.status, cancelled.text).toBe(200);
    expect(cancelled.body.status_id).toBe(12);
    expect(await stockOf(w.client, unique.id)).toMatchObject({ quantity: 1, sold: false, status_id: 1 });
    const second = await createInvoice(w, { lines: [{ item_id: unique.id, quantity: 1 }] });
    expect(second.status, second.text).toBe(201);
    expect((await w.client.post(`/items/${unique.id}/adjustments`, { location_id: w.location, quantity: 1 })).status).toBe(201);
    const deleted = await w.client.request("DELETE", `/invoices/${second.body.id}`);
    expect(deleted.status, deleted.text).toBe(200);
    expect(await stockOf(w.client, unique.id)).toMatchObject({ quantity: 1, sold: false, status_id: 1 });
    expect((await w.client.get("/items")).body.pagination.total_records).toBe(activeBefore + 1);
  });

  it("a unique unit sold again by a newer invoice stays sold when the older invoice is cancelled, deleted or edited: only the newer one gives it back", async () => {
    const w = await world();
    const unique = await newItem(w.client, w.location, { stock: 1, body: { inventory_type: "unique", serial_number: `SN-${randomUUID().slice(0, 6)}` } });
    const line = { item_id: unique.id, quantity: 1 };
    const sell = async () => {
      const sold = await createInvoice(w, { lines: [line] });
      expect(sold.status, sold.text).toBe(201);
      expect(await stockOf(w.client, unique.id)).toMatchObject({ quantity: 0, sold: true, status_id: 2 });
      return sold.body;
    };
    // Brought back by hand (a return booked as an adjustment), then sold by a newer invoice.
    const resell = async () => {
      expect((await w.client.post(`/items/${unique.id}/adjustments`, { location_id: w.location, quantity: 1 })).status).toBe(201);
      return sell();
    };
    const first = await sell();
    const second = await resell();
    // The older invoice's cancel gives nothing back: the unit is the newer invoice's sale.
    expect((await w.client.post(`/invoices/${first.id}/cancel`, {})).status).toBe(200);
    expect(await stockOf(w.client, unique.id)).toMatchObject({ quantity: 0, sold: true, status_id: 2 });
    expectValidation(await createInvoice(w, { lines: [line] }), "lines[0].quantity", "insufficient_stock");
    // Nor does deleting an older one,
    const third = await resell();
    expect((await w.client.request("DELETE", `/invoices/${second.id}`)).status).toBe(200);
    expect(await stockOf(w.client, unique.id)).toMatchObject({ quantity: 0, sold: true, status_id: 2 });
    // or replacing its line.
    const fourth = await resell();
    const edited = await w.client.patch(`/invoices/${third.id}`, { lines: [{ name: "Labour", unit_price: "5" }] });
    expect(edited.status, edited.text).toBe(200);
    expect(await stockOf(w.client, unique.id)).toMatchObject({ quantity: 0, sold: true, status_id: 2 });
    // The invoice that sold it last gives it back.
    expect((await w.client.post(`/invoices/${fourth.id}/cancel`, {})).status).toBe(200);
    expect(await stockOf(w.client, unique.id)).toMatchObject({ quantity: 1, sold: false, status_id: 1 });

    // An edit replacing a unit's line by a new line of it sells it anew: not on hand (sold by another invoice), 422;
    const fifth = await sell();
    const sixth = await resell();
    const fifthLine = (await w.client.get(`/invoices/${fifth.id}`)).body.lines[0].id;
    expect(fifthLine).toBeTruthy();
    expectValidation(await w.client.patch(`/invoices/${fifth.id}`, { lines: [line] }), "lines[0].quantity", "insufficient_stock");
    // on hand again (brought back), the edited invoice sells it and the unit is sold.
    expect((await w.client.post(`/invoices/${sixth.id}/cancel`, {})).status).toBe(200);
    expect(await stockOf(w.client, unique.id)).toMatchObject({ quantity: 1, sold: false });
    const edited2 = await w.client.patch(`/invoices/${fifth.id}`, { lines: [line] });
    expect(edited2.status, edited2.text).toBe(200);
    expect(await stockOf(w.client, unique.id)).toMatchObject({ quantity: 0, sold: true, status_id: 2 });
    // Its own line kept as is moves nothing; the invoice still gives the unit back once.
    const kept = await w.client.patch(`/invoices/${fifth.id}`, { name: "Kept", lines: [{ id: edited2.body.lines[0].id, ...line }] });
    expect(kept.status, kept.text).toBe(200);
    expect(await stockOf(w.client, unique.id)).toMatchObject({ quantity: 0, sold: true });
    expect((await w.client.post(`/invoices/${fifth.id}/cancel`, {})).status).toBe(200);
    expect(await stockOf(w.client, unique.id)).toMatchObject({ quantity: 1, sold: false, status_id: 1 });
  });

  it("updates unpaid invoices: line replacement with the stock difference, customer change moving figures, If-Match", async () => {
    const w = await world();
    const invoice = (await createInvoice(w)).body;
    const [inventory, service] = invoice.lines;
    expect(await stockOf(w.client, w.item.id)).toMatchObject({ quantity: 47 });
    const renamed = await w.client.patch(`/invoices/${invoice.id}`, { name: "November", public_note: "Thanks" });
    expect(renamed.status, renamed.text).toBe(200);
    expect(renamed.body).toMatchObject({ name: "November", public_note: "Thanks", invoice_number: 1 });
    expect(renamed.body.lines.map((l: any) => l.id)).toEqual([inventory.id, service.id]);
    expectError(
      await w.client.patch(`/invoices/${invoice.id}`, { name: "Stale" }, { headers: { "if-match": invoice.revision } }),
      409,
      "mobile_mutation_conflict",
    );

    const replaced = await w.client.patch(
      `/invoices/${invoice.id}`,
      { lines: [{ id: inventory.id, item_id: w.item.id, quantity: 10 }], discount_percent: 50 },
      { headers: { "if-match": `"${renamed.body.revision}"` } },
    );
    expect(replaced.status, replaced.text).toBe(200);
    expect(replaced.body.lines.map((l: any) => [l.id, l.line_type])).toEqual([
      [inventory.id, "inventory"],
      [expect.any(String), "discount"],
    ]);
    // 120 - 50% = 60; tax 6 and 1.5
    expect(replaced.body).toMatchObject({ subtotal: "60.0000", total: "67.5000" });
    expect(replaced.body.lines[1]).toMatchObject({ unit_name: "discount", unit_cost: null, total_cost: null });
    expect(await stockOf(w.client, w.item.id)).toMatchObject({ quantity: 40 });
    expect((await figuresOf(w.client, w.customer.id)).lifetime_revenue_total).toBe("67.5000");
    // 10 on the invoice + 40 on hand: 51 sells one more than there is, and on hand goes below zero.
    const oversold = await w.client.patch(`/invoices/${invoice.id}`, { lines: [{ id: inventory.id, item_id: w.item.id, quantity: 51 }] });
    expect(oversold.status, oversold.text).toBe(200);
    expect(await stockOf(w.client, w.item.id)).toMatchObject({ quantity: -1 });
    expectValidation(
      await w.client.patch(`/invoices/${invoice.id}`, { lines: [{ id: replaced.body.lines[1].id, name: "x", unit_price: 1 }] }),
      "lines[0].id",
      "invalid_reference",
    );
    expectValidation(
      await w.client.patch(`/invoices/${invoice.id}`, {
        lines: [
          { id: inventory.id, item_id: w.item.id },
          { id: inventory.id, item_id: w.item.id },
        ],
      }),
      "lines[1].id",
      "duplicate",
    );

    const globex = (await w.client.post("/customers", { name: "Globex" })).body;
    expectValidation(await w.client.patch(`/invoices/${invoice.id}`, { customer_id: globex.id }), "lines", "required");
    const moved = await w.client.patch(`/invoices/${invoice.id}`, {
      customer_id: globex.id,
      lines: [{ name: "Consulting", unit_price: "100", tax_rate: 0, tax_2_rate: 0 }],
      discount_percent: 0,
    });
    expect(moved.status, moved.text).toBe(200);
    expect(moved.body).toMatchObject({ customer_name: "Globex", total: "100.0000" });
    expect(await stockOf(w.client, w.item.id)).toMatchObject({ quantity: 50 });
    expect(await figuresOf(w.client, w.customer.id)).toMatchObject({ document_count: 0, lifetime_revenue_total: "0.0000" });
    expect(await figuresOf(w.client, globex.id)).toMatchObject({
      document_count: 1,
      lifetime_revenue_total: "100.0000",
      last_invoice_date: invoice.issue_date,
    });

    // Paid (partially): no longer updatable.
    expect((await w.client.post(`/invoices/${invoice.id}/payments`, { amount: "10" })).status).toBe(201);
    expectError(await w.client.patch(`/invoices/${invoice.id}`, { name: "Too late" }), 409, "invoice_update_not_allowed");
    expect((await w.client.get(`/invoices/${invoice.id}`)).body).toMatchObject({ name: "November", can_edit: false, edit_block_reason: "invoice_not_unpaid" });
  });

  it("keeps packed lines when updating (they cannot be removed or shrink below their packed quantity)", async () => {
    const w = await world();
    const invoice = (await createInvoice(w)).body;
    const packed = await w.client.post(`/invoices/${invoice.id}/fulfillments`, { lines: [{ id: invoice.lines[0].id, quantity: 2 }] });
    expect(packed.status, packed.text).toBe(201);
    expectValidation(await w.client.patch(`/invoices/${invoice.id}`, { lines: [{ name: "Other", unit_price: 1 }] }), "lines", "packed_line_removed");
    expectValidation(
      await w.client.patch(`/invoices/${invoice.id}`, { lines: [{ id: invoice.lines[0].id, item_id: w.item.id, quantity: 1 }] }),
      "lines[0].quantity",
      "too_small",
    );
    const grown = await w.client.patch(`/invoices/${invoice.id}`, { lines: [{ id: invoice.lines[0].id, item_id: w.item.id, quantity: 4 }] });
    expect(grown.status, grown.text).toBe(200);
    expect(grown.body.lines[0]).toMatchObject({ quantity: 4, quantity_packed: 2 });
    expect(grown.body.packed_percent).toBe(50);
    expectError(await w.client.request("DELETE", `/invoices/${invoice.id}`), 409, "invoice_delete_not_allowed");
  });

  it("sends, cancels and deletes with their stock and revenue effects", async () => {
    const w = await world();
    await updateAccount(w.account.accountId, { timeZone: "Pacific/Kiritimati" });
    const invoice = (await createInvoice(w)).body;
    const sent = await w.client.post(`/invoices/${invoice.id}/send`, {});
    expect(sent.status, sent.text).toBe(200);
    expect(sent.body.date_sent).toBe(new Intl.DateTimeFormat("en-CA", { timeZone: "Pacific/Kiritimati" }).format(new Date()));
    expect(sent.headers.get("etag")).toBe(`"${sent.body.revision}"`);
    const again = await w.client.post(`/invoices/${invoice.id}/send`, { date_sent: "2030-01-01" });
    expect(again.body).toMatchObject({ date_sent: sent.body.date_sent, revision: sent.body.revision });

    // Cancel: stock back, revenue out, status 12; repeats and payments refused.
    const cancelled = await w.client.post(`/invoices/${invoice.id}/cancel`, {});
    expect(cancelled.status, cancelled.text).toBe(200);
    expect(cancelled.body).toMatchObject({
      status_id: 12,
      status: "Cancelled",
      can_edit: false,
      edit_block_reason: "invoice_not_unpaid",
      can_pack: false,
      pack_block_reason: "invoice_cancelled",
    });
    expect(await stockOf(w.client, w.item.id)).toMatchObject({ quantity: 50 });
    expect(await figuresOf(w.client, w.customer.id)).toMatchObject({ document_count: 1, lifetime_revenue_total: "0.0000" });
    expectError(await w.client.post(`/invoices/${invoice.id}/cancel`, {}), 409, "invoice_cancel_not_allowed");
    expectError(await w.client.post(`/invoices/${invoice.id}/send`, {}), 409, "invoice_send_not_allowed");
    expectError(await w.client.post(`/invoices/${invoice.id}/payments`, { amount: "1" }), 409, "invoice_payment_not_allowed");
    expectError(await w.client.patch(`/invoices/${invoice.id}`, { name: "x" }), 409, "invoice_update_not_allowed");
    expectError(
      await w.client.post(`/invoices/${invoice.id}/fulfillments`, { lines: [{ id: invoice.lines[0].id, quantity: 1 }] }),
      409,
      "invoice_pack_not_allowed",
    );
    // A cancelled invoice can be deleted (nothing to give back).
    const removedCancelled = await w.client.request("DELETE", `/invoices/${invoice.id}`);
    expect(removedCancelled.status, removedCancelled.text).toBe(200);
    expect(await stockOf(w.client, w.item.id)).toMatchObject({ quantity: 50 });
    expect(await figuresOf(w.client, w.customer.id)).toMatchObject({ document_count: 0, lifetime_revenue_total: "0.0000" });

    // Paid invoices cannot be cancelled or deleted; without payments they can.
    const paid = (await createInvoice(w)).body;
    const payment = (await w.client.post(`/invoices/${paid.id}/payments`, { amount: "5" })).body;
    expectError(await w.client.post(`/invoices/${paid.id}/cancel`, {}), 409, "invoice_cancel_not_allowed");
    expectError(await w.client.request("DELETE", `/invoices/${paid.id}`), 409, "invoice_delete_not_allowed");
    const fresh = (await createInvoice(w)).body;
    expect(await stockOf(w.client, w.item.id)).toMatchObject({ quantity: 44 });
    const deleted = await w.client.request("DELETE", `/invoices/${fresh.id}`, undefined, { idempotencyKey: idempotencyKey() });
    expect(deleted.status, deleted.text).toBe(200);
    expect(deleted.body).toEqual({ id: fresh.id, object: "invoice", deleted: true });
    expect(await stockOf(w.client, w.item.id)).toMatchObject({ quantity: 47 });
    expect(await figuresOf(w.client, w.customer.id)).toMatchObject({ document_count: 1, lifetime_revenue_total: paid.total });
    expectError(await w.client.get(`/invoices/${fresh.id}`), 404, "resource_missing");
    // Once its payment is deleted, the other one is unpaid without payment records again: deletable.
    expect((await w.client.request("DELETE", `/invoices/${paid.id}/payments/${payment.id}`)).status).toBe(200);
    expect((await w.client.request("DELETE", `/invoices/${paid.id}`)).status).toBe(200);
    expect(await stockOf(w.client, w.item.id)).toMatchObject({ quantity: 50 });
    expect(await figuresOf(w.client, w.customer.id)).toMatchObject({ document_count: 0, lifetime_revenue_total: "0.0000" });
    expect(await invoiceCount(w.client)).toBe(0);
  });

  it("lists newest number first with every filter, ids and visibility", async () => {
    const account = await newAccount();
    const client = api().withKey(account.ownerKey);
    const acme = (await client.post("/customers", { name: "Acme Widgets" })).body;
    const zeta = (await client.post("/customers", { name: "Zeta Corp" })).body;
    const create = async (body: Record<string, unknown>, c: ApiClient = client) => {
      const res = await c.post("/invoices", { customer_id: acme.id, lines: [{ name: "Labour", unit_price: "10" }], ...body });
      expect(res.status, res.text).toBe(201);
      return res.body;
    };
    const first = await create({ name: "Alpha", custom_invoice_number: "INV-AB", issue_date: "2026-01-10" });
    const second = await create({ issue_date: "2026-03-05" });
    const third = await create({ customer_id: zeta.id, issue_date: "2026-04-01" });
    await client.post(`/invoices/${second.id}/payments`, { amount: "1" });

    const list = await client.get("/invoices");
    expect(list.body.data.map((i: any) => i.invoice_number)).toEqual([3, 2, 1]);
    expect(Object.keys(list.body.data[0])).toEqual([...INVOICE_KEYS, "shipping_cost", ...INVOICE_LIST_TAIL_KEYS]);
    expect(list.body.pagination).toEqual({ page: 1, per_page: 20, total_pages: 1, total_records: 3 });
    const ids = (params: Record<string, string | number>, c: ApiClient = client) => c.get("/invoices", params).then((r) => r.body.data.map((o: any) => o.id));
    expect(await ids({ q: "zeta" })).toEqual([third.id]);
    expect(await ids({ q: "inv-ab" })).toEqual([first.id]);
    expect(await ids({ q: "alpha" })).toEqual([first.id]);
    expect(await ids({ q: "2" })).toEqual([second.id]);
    expect(await ids({ customer_id: zeta.id })).toEqual([third.id]);
    expect(await ids({ status_id: 10 })).toEqual([second.id]);
    expect(await ids({ status_id: 9 })).toEqual([third.id, first.id]);
    expect(await ids({ issue_date_from: "2026-03-01", issue_date_to: "2026-03-31" })).toEqual([second.id]);
    // One bound alone, and a range whose bounds are reversed (empty).
    expect(await ids({ issue_date_to: "2026-03-31" })).toEqual([second.id, first.id]);
    expect(await ids({ issue_date_from: "2026-03-01" })).toEqual([third.id, second.id]);
    expect(await ids({ issue_date_from: "2026-04-30", issue_date_to: "2026-03-01" })).toEqual([]);
    expect(await ids({ limit: 1, page: 3 })).toEqual([first.id]);
    const batch = await client.get("/invoices", { ids: `${first.id},${randomUUID()},${third.id}` });
    expect(batch.body.data.map((i: any) => i.id)).toEqual([third.id, first.id]);
    expect(batch.body.pagination).toMatchObject({ per_page: 3, total_records: 2 });
    expectError(await client.get("/invoices", { ids: "nope" }), 422, "invalid_query_parameter", "ids");

    const staffUser = await newUser(account, { permissions: ["invoices.list", "invoices.modify"] });
    const staff = api().withKey(staffUser.key);
    const own = (await staff.post("/customers", { name: "Staff customer" })).body;
    const mine = await create({ customer_id: own.id }, staff);
    expect(await ids({}, staff)).toEqual([mine.id]);
    expect((await staff.get("/invoices")).body.pagination.total_records).toBe(1);
    expectError(await staff.get(`/invoices/${first.id}`), 404, "resource_missing");
    expectError(await staff.post(`/invoices/${first.id}/payments`, { amount: "1" }), 404, "resource_missing");
    expect(await ids({ ids: `${first.id},${mine.id}` }, staff)).toEqual([mine.id]);
    const stranger = await newAccount();
    expectError(await api().withKey(stranger.ownerKey).get(`/invoices/${first.id}`), 404, "resource_missing");
  });
});
