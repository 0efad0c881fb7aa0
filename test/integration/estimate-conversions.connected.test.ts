import { randomUUID } from "node:crypto";
import { createCustomField } from "../../lib/domain/admin/reference-data.js";
import { describe, expect, it } from "vitest";
import { db } from "../../lib/db/service.js";
import { useStreamPoller } from "../support/stream-poller.js";
import { updateAccount } from "../../lib/domain/admin/service.js";
import { useApiServer, type ApiClient } from "../support/api.js";
import { expectError } from "../support/assertions.js";
import { estimateWorld, type EstimateWorld } from "../support/estimates.js";
import { idempotencyKey, newAccount, newLocation, newUser } from "../support/fixtures.js";
import { scaled } from "../support/timeouts.js";

/**
 * Estimate conversions through HTTP against DynamoDB Local (spec part 2, sections 3.3 and 4.3
 * "Convert to invoice" / "Convert to sales order"): the new document copies the estimate, the
 * estimate closes with `converted_document`, both link, a prospect becomes a customer, stock
 * and customer figures move in the same write, repeats and parallel attempts convert once, and
 * refusals change nothing.
 */
const api = useApiServer();
const poller = useStreamPoller();

type World = EstimateWorld;

const world = (): Promise<World> => estimateWorld((key) => api().withKey(key), { stock: 100 });

async function estimateFor(w: World, partyId: string = w.customer.id, extra: Record<string, unknown> = {}): Promise<Record<string, any>> {
  const created = await w.client.post("/estimates", {
    customer_id: partyId,
    name: "Spring refit",
    purchase_order_number: "PO-7781",
    attention: "Purchasing",
    public_note: "Thank you",
    payment_terms: "Net 15",
    shipping_fee: "12.0000",
    discount_percent: 5,
    lines: [
      { item_id: w.item.id, quantity: 10, unit_price: "11.5000", description: "2 m braided", tax_rate: "8.25" },
      { name: "Installation", unit_price: "35", tax_rate: 0 },
    ],
    ...extra,
  });
  expect(created.status, created.text).toBe(201);
  return created.body;
}

const onHand = async (w: World) => {
  const rows = (await w.client.get(`/items/${w.item.id}/variations`, { include: "locations" })).body.data[0].locations as {
    location_id: string;
    quantity: number;
    quantity_reserved: number;
  }[];
  const row = rows.find((r) => r.location_id === w.location)!;
  return { onHand: row.quantity, reserved: row.quantity_reserved };
};
const totalOf = async (client: ApiClient, path: string) => (await client.get(path, { limit: 1 })).body.pagination.total_records as number;

describe("connected: estimate conversions", () => {
  it("converts into an unpaid invoice that copies the estimate; the estimate closes and both link; stock and the customer move once", async () => {
    const w = await world();
    const estimate = await estimateFor(w);
    const before = await onHand(w);

    const converted = await w.client.post(`/estimates/${estimate.id}/convert-to-invoice`, { issue_date: "2026-11-20" });
    expect(converted.status, converted.text).toBe(201);
    const invoice = converted.body;
    expect(converted.headers.get("etag")).toBe(`"${invoice.revision}"`);
    expect(invoice).toMatchObject({
      object: "invoice",
      invoice_number: 1,
      status_id: 9,
      customer_id: w.customer.id,
      salesperson_id: w.account.ownerUserId,
      issue_date: "2026-11-20",
      name: "Spring refit",
      purchase_order_number: "PO-7781",
      attention: "Purchasing",
      public_note: "Thank you",
      payment_terms: "Net 15",
      shipping_fee: estimate.shipping_fee,
      subtotal: estimate.subtotal,
      discount_total: estimate.discount,
      tax: estimate.tax,
      tax_2: estimate.tax_2,
      total: estimate.total,
      source_estimate: { id: estimate.id, estimate_number: estimate.estimate_number },
    });
    const pick = (line: Record<string, any>) => ({
      line_type: line.line_type,
      item_id: line.item_id,
      name: line.name,
      description: line.description,
      quantity: line.quantity,
      unit_price: line.unit_price,
      discount_percent: line.discount_percent,
      tax_rate: line.tax_rate,
      tax_2_rate: line.tax_2_rate,
      subtotal: line.subtotal,
    });
    expect(invoice.lines.map(pick)).toEqual(estimate.lines.map(pick));

    const closed = await w.client.get(`/estimates/${estimate.id}`);
    expect(closed.body).toMatchObject({ status_id: 6, converted_document: { id: invoice.id, kind: "invoice", number: invoice.invoice_number } });
    expect((await w.client.get(`/invoices/${invoice.id}`)).body.source_estimate).toEqual({ id: estimate.id, estimate_number: estimate.estimate_number });

    const after = await onHand(w);
    expect(after.onHand).toBe(before.onHand - 10);
    const customer = (await w.client.get(`/customers/${w.customer.id}`)).body;
    expect(customer).toMatchObject({ document_count: 2, lifetime_revenue_total: invoice.total, last_invoice_date: "2026-11-20" });

    // A repeat (another key or none) is refused and changes nothing.
    const again = await w.client.post(`/estimates/${estimate.id}/convert-to-invoice`, {});
    expectError(again, 409, "estimate_conversion_not_allowed");
    const toOrder = await w.client.post(`/estimates/${estimate.id}/convert-to-sales-order`, {});
    expectError(toOrder, 409, "estimate_sales_order_conversion_not_allowed");
    expect(await totalOf(w.client, "/invoices")).toBe(1);
    expect(await totalOf(w.client, "/sales-orders")).toBe(0);
    expect((await onHand(w)).onHand).toBe(after.onHand);
  });

  it("dates an invoice converted without issue_date today in the account's time zone (spec 4.3: the API user's account timezone), whatever the user's own", async () => {
    const w = await world();
    // UTC+14 and UTC-11: their dates always differ.
    await updateAccount(w.account.accountId, { timeZone: "Pacific/Kiritimati" });
    const user = await newUser(w.account, { role: "owner", timeZone: "Pacific/Pago_Pago" });
    const client = api().withKey(user.key);
    const estimate = await client.post("/estimates", { customer_id: w.customer.id, lines: [{ name: "Survey", unit_price: "10" }] });
    expect(estimate.status, estimate.text).toBe(201);
    const today = (zone: string) => new Intl.DateTimeFormat("en-CA", { timeZone: zone }).format(new Date());
    // The estimate's own default follows the user (spec 4.3 create: "from account and user timezone").
    expect(estimate.body.issue_date).toBe(today("Pacific/Pago_Pago"));
    const converted = await client.post(`/estimates/${estimate.body.id}/convert-to-invoice`, {});
    expect(converted.status, converted.text).toBe(201);
    expect(converted.body.issue_date).toBe(today("Pacific/Kiritimati"));
  });

  it("converts into an open sales order with reservations, today's issue date and the service's number; the body must be empty", async () => {
    const w = await world();
    const estimate = await estimateFor(w);
    expectError(await w.client.post(`/estimates/${estimate.id}/convert-to-sales-order`, { issue_date: "2026-11-20" }), 422, "validation_failed");
    const converted = await w.client.post(`/estimates/${estimate.id}/convert-to-sales-order`, {});
    expect(converted.status, converted.text).toBe(201);
    const order = converted.body;
    expect(converted.headers.get("etag")).toBe(`"${order.revision}"`);
    expect(order).toMatchObject({
      object: "sales_order",
      sales_order_number: 1,
      status_id: 29,
      customer_id: w.customer.id,
      salesperson_id: w.account.ownerUserId,
      issue_date: new Intl.DateTimeFormat("en-CA", { timeZone: "UTC" }).format(new Date()),
      name: "Spring refit",
      total: estimate.total,
      source_estimate: { id: estimate.id, estimate_number: estimate.estimate_number },
    });
    expect(order.lines.filter((l: any) => l.line_type !== "discount")).toHaveLength(2);
    expect((await onHand(w)).reserved).toBe(10);
    expect((await w.client.get(`/estimates/${estimate.id}`)).body).toMatchObject({
      status_id: 6,
      converted_document: { id: order.id, kind: "sales_order", number: 1 },
    });
    expectError(await w.client.post(`/estimates/${estimate.id}/convert-to-sales-order`, {}), 409, "estimate_sales_order_conversion_not_allowed");
    expectError(await w.client.post(`/estimates/${estimate.id}/convert-to-invoice`, {}), 409, "estimate_conversion_not_allowed");
    // A closed estimate is neither updatable nor deletable.
    expectError(await w.client.patch(`/estimates/${estimate.id}`, { name: "x" }), 409, "estimate_update_not_allowed");
    expectError(await w.client.request("DELETE", `/estimates/${estimate.id}`), 409, "estimate_delete_not_allowed");
  });

  it("a prospect becomes a customer (same id and number) in the conversion's write; its counts move with it", async () => {
    const w = await world();
    const { custom_field_id: sourceField } = await createCustomField({ accountId: w.account.accountId, kind: "prospect", name: "Lead source" });
    const prospect = await w.client.post("/prospects", {
      name: "Globex Prospect",
      sale_opportunity: "Refit",
      closing_percentage: 40,
      custom_field_values: [{ custom_field_id: sourceField, value: "Trade show" }],
    });
    expect(prospect.status, prospect.text).toBe(201);
    const estimate = await estimateFor(w, prospect.body.id);
    const customersBefore = await totalOf(w.client, "/customers");
    const prospectsBefore = await totalOf(w.client, "/prospects");

    const converted = await w.client.post(`/estimates/${estimate.id}/convert-to-invoice`, {});
    expect(converted.status, converted.text).toBe(201);
    expect(converted.body.customer_id).toBe(prospect.body.id);

    expectError(await w.client.get(`/prospects/${prospect.body.id}`), 404, "resource_missing");
    const customer = await w.client.get(`/customers/${prospect.body.id}`);
    expect(customer.status, customer.text).toBe(200);
    expect(customer.body).toMatchObject({
      object: "customer",
      customer_number: prospect.body.customer_number,
      name: "Globex Prospect",
      document_count: 2,
      lifetime_revenue_total: converted.body.total,
    });
    expect(customer.body).not.toHaveProperty("sale_opportunity");
    // A prospect's custom field values name prospect fields: the customer drops them, so its
    // GET body goes back with a change (what you read you can write back).
    expect(customer.body.custom_field_values).toEqual([]);
    const { id: _id, object: _object, customer_number: _number, created_at: _created, updated_at: _updated, ...writable } = customer.body;
    const changed = await w.client.patch(`/customers/${prospect.body.id}`, { ...writable, office_phone: "+1 555 0199" });
    expect(changed.status, changed.text).toBe(200);
    expect(await totalOf(w.client, "/customers")).toBe(customersBefore + 1);
    expect(await totalOf(w.client, "/prospects")).toBe(prospectsBefore - 1);
    expect((await w.client.get("/customers", { q: "globex" })).body.data.map((c: any) => c.id)).toEqual([prospect.body.id]);
    expect((await w.client.get("/prospects", { q: "globex" })).body.data).toEqual([]);
    // The converted estimate names a customer from then on.
    expect((await w.client.get(`/estimates/${estimate.id}`)).body).toMatchObject({ customer_kind: "customer", status_id: 6 });

    // Another estimate of the (now) customer converts into a sales order normally.
    const second = await estimateFor(w, prospect.body.id);
    const order = await w.client.post(`/estimates/${second.id}/convert-to-sales-order`, {});
    expect(order.status, order.text).toBe(201);
    expect((await w.client.get(`/customers/${prospect.body.id}`)).body.document_count).toBe(4);
  });

  it("the prospect's other estimates name a customer once the stream processor has seen the conversion (revision and updated_at kept, marked in the feed)", async () => {
    const w = await world();
    const prospect = (await w.client.post("/prospects", { name: "Umbrella Prospect" })).body;
    const converting = await estimateFor(w, prospect.id);
    const other = await estimateFor(w, prospect.id);
    expect(other.customer_kind).toBe("prospect");
    const start = (await w.client.get("/sync", { start: "now", resources: "estimate" })).body.cursor;
    expect((await w.client.post(`/estimates/${converting.id}/convert-to-invoice`, {})).status).toBe(201);
    let after: any;
    for (let attempt = 0; attempt < 10 && after?.customer_kind !== "customer"; attempt++) {
      await poller.drain();
      after = (await w.client.get(`/estimates/${other.id}`)).body;
    }
    expect(after).toMatchObject({ customer_kind: "customer", customer_id: prospect.id, status_id: 5 });
    expect(after.revision).toBe(other.revision);
    expect(after.updated_at).toBe(other.updated_at);
    await poller.drain();
    const changes = (await w.client.get("/sync", { cursor: start })).body.changes;
    expect(changes).toEqual(expect.arrayContaining([{ resource: "estimate", id: other.id, operation: "upsert" }]));
    // It converts as a customer's estimate.
    const order = await w.client.post(`/estimates/${other.id}/convert-to-sales-order`, {});
    expect(order.status, order.text).toBe(201);
  });

  it("estimates created while their prospect converts all end as a customer's (a create that read the prospect plans again)", async () => {
    const w = await world();
    for (let round = 0; round < 2; round++) {
      const prospect = (await w.client.post("/prospects", { name: `Racing Prospect ${round}` })).body;
      const converting = await estimateFor(w, prospect.id);
      const [converted, ...created] = await Promise.all([
        w.client.post(`/estimates/${converting.id}/convert-to-invoice`, {}),
        ...Array.from({ length: 10 }, () => w.client.post("/estimates", { customer_id: prospect.id, lines: [{ name: "Study", unit_price: "1" }] })),
      ]);
      expect(converted!.status, converted!.text).toBe(201);
      for (const response of created) expect(response.status, response.text).toBe(201);
      let kinds: string[] = [];
      for (let attempt = 0; attempt < 10; attempt++) {
        await poller.drain();
        kinds = await Promise.all(created.map(async (response) => (await w.client.get(`/estimates/${response.body.id}`)).body.customer_kind));
        if (kinds.every((kind) => kind === "customer")) break;
      }
      expect(kinds).toEqual(created.map(() => "customer"));
    }
  });

  it("a prospect's estimate converts into a sales order and the prospect becomes a customer; a staff salesperson's owner counts merge", async () => {
    const w = await world();
    const staff = await newUser(w.account, {
      permissions: ["estimates.list", "estimates.modify", "sales_orders.list", "sales_orders.modify", "invoices.list", "invoices.modify"],
    });
    const client = api().withKey(staff.key);
    const prospect = await client.post("/prospects", { name: "Initech Prospect" });
    expect(prospect.status, prospect.text).toBe(201);
    const created = await client.post("/estimates", { customer_id: prospect.body.id, lines: [{ name: "Consulting", unit_price: "100" }] });
    expect(created.status, created.text).toBe(201);
    const converted = await client.post(`/estimates/${created.body.id}/convert-to-sales-order`, {});
    expect(converted.status, converted.text).toBe(201);
    expect(converted.body.salesperson_id).toBe(staff.userId);
    // The staff user sees only their own records: the converted customer is in their list.
    expect((await client.get("/customers")).body.data.map((c: any) => c.id)).toEqual([prospect.body.id]);
    expect((await client.get("/customers")).body.pagination.total_records).toBe(1);
    expect((await client.get("/prospects")).body.pagination.total_records).toBe(0);
    expect((await client.get("/sales-orders")).body.pagination.total_records).toBe(1);

    // The owner converts an estimate of the staff user's prospect: the prospect's owner counts
    // move on the staff user's item, the invoice's on the owner's.
    const staffProspect = await client.post("/prospects", { name: "Hooli Prospect" });
    const ownersEstimate = await estimateFor(w, staffProspect.body.id);
    const invoice = await w.client.post(`/estimates/${ownersEstimate.id}/convert-to-invoice`, {});
    expect(invoice.status, invoice.text).toBe(201);
    expect(invoice.body.salesperson_id).toBe(w.account.ownerUserId);
    expect((await client.get("/customers")).body.pagination.total_records).toBe(2);
    expect((await client.get("/prospects")).body.pagination.total_records).toBe(0);
    expect((await client.get("/invoices")).body.pagination.total_records).toBe(0);
    expect((await w.client.get("/invoices")).body.pagination.total_records).toBe(1);
  });

  it("permissions: converting needs estimates.modify and the target's permissions (403, nothing changes)", async () => {
    const w = await world();
    const estimate = await estimateFor(w);
    const noInvoices = api().withKey(
      (await newUser(w.account, { permissions: ["records.view_all", "estimates.list", "estimates.modify", "sales_orders.modify"] })).key,
    );
    expectError(await noInvoices.post(`/estimates/${estimate.id}/convert-to-invoice`, {}), 403, "permission_denied");
    // Sales orders need sales_orders.list as well as sales_orders.modify.
    expectError(await noInvoices.post(`/estimates/${estimate.id}/convert-to-sales-order`, {}), 403, "permission_denied");
    const noEstimates = api().withKey(
      (await newUser(w.account, { permissions: ["records.view_all", "estimates.list", "invoices.modify", "invoices.list"] })).key,
    );
    expectError(await noEstimates.post(`/estimates/${estimate.id}/convert-to-invoice`, {}), 403, "permission_denied");
    const wrongScope = api().withKey((await newUser(w.account, { role: "owner", scopes: ["estimates:convert"] })).key);
    expectError(await wrongScope.post(`/estimates/${estimate.id}/convert-to-sales-order`, {}), 403, "insufficient_scope");
    expect((await w.client.get(`/estimates/${estimate.id}`)).body.status_id).toBe(5);
    expect(await totalOf(w.client, "/invoices")).toBe(0);
  });

  it("declined, expired and missing estimates are refused; a unique item not on hand is 422 and leaves the estimate Open, more than is on hand sells", async () => {
    const w = await world();
    const declined = await estimateFor(w);
    expect((await w.client.post(`/estimates/${declined.id}/decline`, {})).status).toBe(200);
    expectError(await w.client.post(`/estimates/${declined.id}/convert-to-invoice`, {}), 409, "estimate_conversion_not_allowed");
    expectError(await w.client.post(`/estimates/${declined.id}/convert-to-sales-order`, {}), 409, "estimate_sales_order_conversion_not_allowed");

    const expired = await estimateFor(w);
    await db().entities.document.patch({ accountId: w.account.accountId, documentId: expired.id }).set({ expiryInstant: "2020-01-01T00:00:00.000Z" }).go();
    expectError(await w.client.post(`/estimates/${expired.id}/convert-to-invoice`, {}), 409, "estimate_conversion_not_allowed");

    expectError(await w.client.post("/estimates/00000000-0000-4000-8000-000000000000/convert-to-invoice", {}), 404, "resource_missing");
    const other = await newAccount();
    expectError(await api().withKey(other.ownerKey).post(`/estimates/${declined.id}/convert-to-invoice`, {}), 404, "resource_missing");

    const unique = await w.client.post("/items", { name: "Serial 1", inventory_type: "unique", serial_number: `SN-${randomUUID()}`, location_id: w.location });
    expect(unique.status, unique.text).toBe(201);
    const unstocked = await estimateFor(w, w.customer.id, {
      lines: [
        { item_id: w.item.id, quantity: 1 },
        { item_id: unique.body.id, quantity: 1 },
      ],
    });
    expectError(await w.client.post(`/estimates/${unstocked.id}/convert-to-invoice`, {}), 422, "validation_failed", "lines[1].quantity");
    expect((await w.client.get(`/estimates/${unstocked.id}`)).body).toMatchObject({ status_id: 5, converted_document: null });
    expect(await totalOf(w.client, "/invoices")).toBe(0);
    expect((await onHand(w)).onHand).toBe(100);
    expectError(await w.client.post(`/estimates/${unstocked.id}/convert-to-invoice`, { issue_date: "2026-02-30" }), 422, "validation_failed");
    // More than is on hand of a quantity item sells: on hand goes below zero.
    const large = await estimateFor(w, w.customer.id, { lines: [{ item_id: w.item.id, quantity: 1000 }] });
    const converted = await w.client.post(`/estimates/${large.id}/convert-to-invoice`, {});
    expect(converted.status, converted.text).toBe(201);
    expect((await onHand(w)).onHand).toBe(-900);
  });

  it("an estimate whose line names no stock row of an item stocked at several locations is 409 on both conversions, naming the line; once named, it converts", async () => {
    const w = await world();
    const annex = await w.client.post("/locations", { name: "Annex", short_name: "ANX" }, { idempotencyKey: idempotencyKey() });
    expect(annex.status, annex.text).toBe(201);
    expect((await w.client.post(`/items/${w.item.id}/adjustments`, { location_id: annex.body.id, quantity: 5 })).status).toBe(201);
    const estimate = await estimateFor(w, w.customer.id, {
      lines: [
        { name: "Survey", unit_price: "20" },
        { item_id: w.item.id, quantity: 2 },
      ],
    });
    // A preview of it warns that converting needs the line's row (the estimate itself is valid).
    const preview = await w.client.post("/estimates/preview", {
      customer_id: w.customer.id,
      lines: [
        { name: "Survey", unit_price: "20" },
        { item_id: w.item.id, quantity: 2 },
      ],
    });
    expect(preview.status, preview.text).toBe(200);
    expect(preview.body.errors).toEqual([]);
    expect(preview.body.warnings).toEqual([expect.objectContaining({ param: "lines[1].item_variation_location_id", code: "estimate_conversion_not_allowed" })]);
    // So does a preview of the stored estimate that sends no lines.
    const stored = await w.client.post(`/estimates/${estimate.id}/preview`, {}, { headers: { "If-Match": estimate.revision } });
    expect(stored.status, stored.text).toBe(200);
    expect(stored.body.warnings).toEqual([expect.objectContaining({ param: "lines[1].item_variation_location_id", code: "estimate_conversion_not_allowed" })]);
    const toInvoice = await w.client.post(`/estimates/${estimate.id}/convert-to-invoice`, {});
    expectError(toInvoice, 409, "estimate_conversion_not_allowed");
    expect(toInvoice.body.error.message).toContain("lines[1].item_variation_location_id is required: the item is stocked at several locations.");
    const toOrder = await w.client.post(`/estimates/${estimate.id}/convert-to-sales-order`);
    expectError(toOrder, 409, "estimate_sales_order_conversion_not_allowed");
    expect(toOrder.body.error.message).toContain("lines[1].item_variation_location_id");
    expect((await w.client.get(`/estimates/${estimate.id}`)).body).toMatchObject({ status_id: 5, converted_document: null });
    expect(await totalOf(w.client, "/invoices")).toBe(0);
    expect(await totalOf(w.client, "/sales-orders")).toBe(0);
    expect(await onHand(w)).toEqual({ onHand: 100, reserved: 0 });

    // The row named on the estimate's line: the conversion sells from it.
    const rows = (await w.client.get(`/items/${w.item.id}/variations`, { include: "locations" })).body.data[0].locations as any[];
    const annexRow = rows.find((row) => row.location_id === annex.body.id).item_variation_location_id as number;
    const [survey, cable] = (await w.client.get(`/estimates/${estimate.id}`)).body.lines as any[];
    const named = await w.client.patch(`/estimates/${estimate.id}`, {
      lines: [
        { id: survey.id, name: "Survey", unit_price: "20" },
        { id: cable.id, item_id: w.item.id, item_variation_location_id: annexRow, quantity: 2 },
      ],
    });
    expect(named.status, named.text).toBe(200);
    const converted = await w.client.post(`/estimates/${estimate.id}/convert-to-invoice`, {});
    expect(converted.status, converted.text).toBe(201);
    expect(converted.body.lines[1]).toMatchObject({ item_variation_location_id: annexRow, location_name: "Annex", quantity: 2 });
    // Converted (closed), it warns of no conversion any more.
    const closed = (await w.client.get(`/estimates/${estimate.id}`)).body;
    const after = await w.client.post(`/estimates/${estimate.id}/preview`, {}, { headers: { "If-Match": closed.revision } });
    expect(after.body.errors.map((e: any) => e.code)).toEqual(["estimate_update_not_allowed"]);
    expect(after.body.warnings).toEqual([]);
    expect(await onHand(w)).toEqual({ onHand: 100, reserved: 0 });
  });

  it("an item never stocked and without a default location sells from the account's only active location (sales orders, the conversion to one); with two, its row must be named", async () => {
    const account = await newAccount();
    const client = api().withKey(account.ownerKey);
    const location = (name: string) => newLocation(client, name);
    const main = await location("Main");
    const customer = (await client.post("/customers", { name: "Walk-in" })).body.id as string;
    const item = (await client.post("/items", { name: "Widget", price: "5" })).body.id as string;
    const lines = [{ item_id: item, quantity: 2 }];
    const rowsOf = async () => (await client.get(`/items/${item}/variations`, { include: "locations" })).body.data[0].locations as any[];

    const order = await client.post("/sales-orders", { customer_id: customer, lines });
    expect(order.status, order.text).toBe(201);
    expect(order.body.lines[0]).toMatchObject({ location_name: "Main", quantity: 2 });
    const [row] = await rowsOf();
    expect(row).toMatchObject({ location_id: main, quantity: 0, quantity_reserved: 2 });
    expect(order.body.lines[0].item_variation_location_id).toBe(row.item_variation_location_id);

    const toOrder = await client.post(`/estimates/${(await client.post("/estimates", { customer_id: customer, lines })).body.id}/convert-to-sales-order`);
    expect(toOrder.status, toOrder.text).toBe(201);
    expect(toOrder.body.lines[0]).toMatchObject({ location_name: "Main", item_variation_location_id: row.item_variation_location_id });

    // A second location makes it ambiguous again, for an item never stocked (nothing is written).
    await location("Annex");
    const other = (await client.post("/items", { name: "Gadget", price: "5" })).body.id as string;
    const refused = await client.post("/sales-orders", { customer_id: customer, lines: [{ item_id: other, quantity: 1 }] });
    expectError(refused, 422, "validation_failed", "lines[0].item_variation_location_id");
    expect(refused.body.error.details[0].message).toBe(
      "is required: the item has no stock location and no default location (give the item a location_id, or the sales order one).",
    );
    // A preview warns of it; the conversion refuses it with advice its body can follow.
    const preview = await client.post("/estimates/preview", { customer_id: customer, lines: [{ item_id: other, quantity: 1 }] });
    expect(preview.body.warnings).toEqual(
      expect.arrayContaining([expect.objectContaining({ param: "lines[0].item_variation_location_id", code: "estimate_conversion_not_allowed" })]),
    );
    const estimate = await client.post("/estimates", { customer_id: customer, lines: [{ item_id: other, quantity: 1 }] });
    const toInvoice = await client.post(`/estimates/${estimate.body.id}/convert-to-invoice`, {});
    expectError(toInvoice, 409, "estimate_conversion_not_allowed");
    expect(toInvoice.body.error.message).toContain("no default location. Name the stock row on the estimate's line");
    expect(toInvoice.body.error.message).toContain("or give the item a default location (its location_id), then convert.");
    expect(await totalOf(client, "/sales-orders")).toBe(2);
    expect(await totalOf(client, "/invoices")).toBe(0);
  });

  it("If-Match on both conversions: a stale revision is 409 mobile_mutation_conflict (before the state check) and changes nothing; the current one converts", async () => {
    const w = await world();
    const estimate = await estimateFor(w);
    const before = await onHand(w);
    const renamed = await w.client.patch(`/estimates/${estimate.id}`, { name: "Renamed" });
    expect(renamed.status, renamed.text).toBe(200);
    const stale = { headers: { "if-match": `"${estimate.revision}"` } };
    expectError(await w.client.post(`/estimates/${estimate.id}/convert-to-invoice`, {}, stale), 409, "mobile_mutation_conflict");
    expectError(await w.client.post(`/estimates/${estimate.id}/convert-to-sales-order`, {}, stale), 409, "mobile_mutation_conflict");
    expect((await w.client.get(`/estimates/${estimate.id}`)).body).toMatchObject({ status_id: estimate.status_id, revision: renamed.body.revision });
    expect(await totalOf(w.client, "/invoices")).toBe(0);
    expect(await totalOf(w.client, "/sales-orders")).toBe(0);
    expect(await onHand(w)).toEqual(before);

    const converted = await w.client.post(`/estimates/${estimate.id}/convert-to-sales-order`, {}, { headers: { "if-match": renamed.headers.get("etag")! } });
    expect(converted.status, converted.text).toBe(201);
    // Closed now, and its revision moved: a stale If-Match still answers 409 mobile_mutation_conflict first.
    expectError(await w.client.post(`/estimates/${estimate.id}/convert-to-invoice`, {}, stale), 409, "mobile_mutation_conflict");
    const closed = await w.client.get(`/estimates/${estimate.id}`);
    expectError(
      await w.client.post(`/estimates/${estimate.id}/convert-to-invoice`, {}, { headers: { "if-match": closed.headers.get("etag")! } }),
      409,
      "estimate_conversion_not_allowed",
    );
  });

  // Twenty writers racing for one estimate: on a loaded machine their retries take turns for a while.
  it("parallel conversions of one estimate create exactly one document; the others are 409, none 5xx", { timeout: scaled(90_000) }, async () => {
    const w = await world();
    const estimate = await estimateFor(w);
    const attempts = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        i % 2 === 0 ? w.client.post(`/estimates/${estimate.id}/convert-to-invoice`, {}) : w.client.post(`/estimates/${estimate.id}/convert-to-sales-order`, {}),
      ),
    );
    const statuses = attempts.map((a) => a.status);
    expect(
      statuses.filter((s) => s === 201),
      statuses.join(","),
    ).toHaveLength(1);
    expect(
      statuses.every((s) => s === 201 || s === 409),
      statuses.join(","),
    ).toBe(true);
    const invoices = await totalOf(w.client, "/invoices");
    const orders = await totalOf(w.client, "/sales-orders");
    expect(invoices + orders).toBe(1);
    const stock = await onHand(w);
    expect(stock.onHand + stock.reserved).toBe(invoices === 1 ? 90 : 110);
    expect((await w.client.get(`/customers/${w.customer.id}`)).body.document_count).toBe(2);
  });

  it("follows the account's record limit: at the limit of invoices, creates and conversions are 409 record_limit_reached and change nothing", async () => {
    const w = await world();
    await updateAccount(w.account.accountId, { recordLimit: 1 });
    const estimate = await estimateFor(w);
    const first = await w.client.post("/invoices", { customer_id: w.customer.id, lines: [{ name: "Setup", unit_price: "40" }] });
    expect(first.status, first.text).toBe(201);
    expectError(await w.client.post("/invoices", { customer_id: w.customer.id, lines: [{ name: "Setup", unit_price: "40" }] }), 409, "record_limit_reached");
    expectError(await w.client.post(`/estimates/${estimate.id}/convert-to-invoice`, {}), 409, "record_limit_reached");
    expect((await w.client.get(`/estimates/${estimate.id}`)).body).toMatchObject({ status_id: 5, converted_document: null });
    expect(await totalOf(w.client, "/invoices")).toBe(1);
    expect((await onHand(w)).onHand).toBe(100);
    expect((await w.client.get(`/customers/${w.customer.id}`)).body.document_count).toBe(2);
    // Sales orders are not limited, but invoicing one is; a deleted invoice frees its place.
    const order = await w.client.post(`/estimates/${(await estimateFor(w)).id}/convert-to-sales-order`, {});
    expect(order.status, order.text).toBe(201);
    expectError(await w.client.post(`/sales-orders/${order.body.id}/invoices`, {}), 409, "record_limit_reached");
    expect((await w.client.get(`/sales-orders/${order.body.id}`)).body).toMatchObject({ status_id: 29, revision: order.body.revision });
    expect(await totalOf(w.client, "/invoices")).toBe(1);
    expect((await w.client.request("DELETE", `/invoices/${first.body.id}`)).status).toBe(200);
    const converted = await w.client.post(`/estimates/${estimate.id}/convert-to-invoice`, {});
    expect(converted.status, converted.text).toBe(201);
    expect(converted.body.invoice_number).toBe(2);
    await updateAccount(w.account.accountId, { recordLimit: 0 });
    // The refusal is the key's outcome (one translation, lib/http/middlewares/error-handler.ts):
    // its replay answers the same 409 even once the limit is lifted.
    const key = idempotencyKey();
    const limited = await w.client.post("/invoices", { customer_id: w.customer.id, lines: [{ name: "Setup", unit_price: "40" }] }, { idempotencyKey: key });
    expectError(limited, 409, "record_limit_reached");
    await updateAccount(w.account.accountId, { recordLimit: null });
    const replayed = await w.client.post("/invoices", { customer_id: w.customer.id, lines: [{ name: "Setup", unit_price: "40" }] }, { idempotencyKey: key });
    expectError(replayed, 409, "record_limit_reached");
    expect(replayed.headers.get("idempotent-replayed")).toBe("true");
    expect(replayed.body).toEqual(limited.body);
    expect((await w.client.post("/invoices", { customer_id: w.customer.id, lines: [{ name: "Setup", unit_price: "40" }] })).status).toBe(201);
  });

  it("a conversion marks the estimate and the new document in the sync feed", async () => {
    const w = await world();
    const estimate = await estimateFor(w);
    const second = await estimateFor(w);
    const start = (await w.client.get("/sync", { start: "now", resources: "estimate,invoice,sales_order" })).body.cursor;
    const invoice = (await w.client.post(`/estimates/${estimate.id}/convert-to-invoice`, {})).body;
    const order = (await w.client.post(`/estimates/${second.id}/convert-to-sales-order`, {})).body;
    await poller.drain();
    await poller.drain();
    const page = (await w.client.get("/sync", { cursor: start })).body;
    expect(page.changes).toEqual(
      expect.arrayContaining([
        { resource: "estimate", id: estimate.id, operation: "upsert" },
        { resource: "invoice", id: invoice.id, operation: "upsert" },
        { resource: "estimate", id: second.id, operation: "upsert" },
        { resource: "sales_order", id: order.id, operation: "upsert" },
      ]),
    );
  });

  it("an Idempotency-Key replays the conversion's 201 with the same invoice", async () => {
    const w = await world();
    const estimate = await estimateFor(w);
    const key = idempotencyKey();
    const first = await w.client.post(`/estimates/${estimate.id}/convert-to-invoice`, {}, { idempotencyKey: key });
    expect(first.status, first.text).toBe(201);
    const replay = await w.client.post(`/estimates/${estimate.id}/convert-to-invoice`, {}, { idempotencyKey: key });
    expect(replay.status).toBe(201);
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    expect(replay.body).toEqual(first.body);
    expect(replay.headers.get("etag")).toBe(first.headers.get("etag"));
    expect(await totalOf(w.client, "/invoices")).toBe(1);
  });
});
