import { randomUUID } from "node:crypto";
import { expect } from "vitest";
import type { ApiClient } from "./api.js";
import { idempotencyKey, newAccount, type TestAccount } from "./fixtures.js";

/**
 * Fixtures of the sales-order and invoice tests: an account with a customer, a location and a
 * stocked item, and readers of the stored effects the tests assert (stock, customer figures).
 */
export interface SalesWorld {
  account: TestAccount;
  client: ApiClient;
  customer: Record<string, any>;
  location: string;
  /** A quantity item priced 12.0000, cost 4.0000, 50 on hand at `location` (its default location). */
  item: Record<string, any>;
}

export async function newItem(
  client: ApiClient,
  location: string,
  options: { stock?: number; body?: Record<string, unknown> } = {},
): Promise<Record<string, any>> {
  const created = await client.post("/items", {
    name: `Item ${randomUUID().slice(0, 8)}`,
    price: "12.0000",
    cost: "4.0000",
    location_id: location,
    ...options.body,
  });
  expect(created.status, created.text).toBe(201);
  if (options.stock) {
    const adjusted = await client.post(`/items/${created.body.id}/adjustments`, { location_id: location, quantity: options.stock });
    expect(adjusted.status, adjusted.text).toBe(201);
  }
  return created.body;
}

export async function salesWorld(client: (key: string) => ApiClient): Promise<SalesWorld> {
  const account = await newAccount();
  const owner = client(account.ownerKey);
  const customer = await owner.post("/customers", {
    name: `Acme ${randomUUID().slice(0, 6)}`,
    tax_rate1: 10,
    tax_rate2: "2.5",
    office_phone: "+1 555 0199",
    office_email: "buyer@acme.test",
    billing_address_1: "1 Main St",
    billing_city: "Springfield",
    shipping_address_1: "9 Dock Rd",
  });
  expect(customer.status, customer.text).toBe(201);
  const location = await owner.post("/locations", { name: "Main Warehouse", short_name: "MAIN" }, { idempotencyKey: idempotencyKey() });
  expect(location.status, location.text).toBe(201);
  const item = await newItem(owner, location.body.id, { stock: 50, body: { sku: "WID-1", description: "Blue widget" } });
  return { account, client: owner, customer: customer.body, location: location.body.id, item };
}

/** An item's figures as the items API shows them. */
export async function stockOf(
  client: ApiClient,
  itemId: string,
): Promise<{ quantity: number; reserved: number; available: number; sold: boolean; status_id: number }> {
  const body = (await client.get(`/items/${itemId}`)).body;
  return { quantity: body.quantity, reserved: body.quantity_reserved, available: body.quantity_available, sold: body.sold, status_id: body.status_id };
}

/** A customer's document figures. */
export async function figuresOf(
  client: ApiClient,
  customerId: string,
): Promise<{ document_count: number; lifetime_revenue_total: string | null; last_invoice_date: string | null }> {
  const body = (await client.get(`/customers/${customerId}`)).body;
  return { document_count: body.document_count, lifetime_revenue_total: body.lifetime_revenue_total, last_invoice_date: body.last_invoice_date };
}

export const SALES_ORDER_KEYS = [
  "id",
  "object",
  "sales_order_number",
  "name",
  "customer_id",
  "customer_name",
  "salesperson_id",
  "location_id",
  "status_id",
  "status",
  "issue_date",
  "expiry_date",
  "purchase_order_number",
  "attention",
  "shipping_address",
  "public_note",
  "packing_list_note",
  "payment_terms",
  "drop_shipped",
  "drop_ship_customer_id",
  "drop_ship_address",
  "subtotal",
  "shipping_fee",
  "tax",
  "tax_2",
  "total",
  "amount_paid",
  "amount_due",
];
export const SALES_ORDER_PROGRESS_KEYS = ["invoiced_percent", "paid_percent", "packed_percent", "shipped_percent", "invoice_count", "source_estimate"];
export const SALES_ORDER_DETAIL_KEYS = [
  "party",
  "discount_percent",
  "pre_discount_total",
  "discount_total",
  "tax_label",
  "tax_2_label",
  "can_edit",
  "edit_block_reason",
  "can_pack",
  "pack_block_reason",
];
export const SALES_ORDER_TAIL_KEYS = ["revision", "custom_field_values", "created_at", "updated_at"];
export const SALES_ORDER_LINE_KEYS = [
  "id",
  "object",
  "item_id",
  "item_variation_location_id",
  "name",
  "description",
  "quantity",
  "quantity_invoiced",
  "quantity_packed",
  "quantity_shipped",
  "quantity_remaining_to_pack",
  "unit_id",
  "unit_price",
  "discount_percent",
  "discounted_unit_price",
  "tax_rate",
  "tax_2_rate",
  "subtotal",
  "position",
  "line_type",
  "unit_name",
  "sku",
  "variation_values",
  "variation_number",
  "location_name",
  "thumbnail_url",
];

export const INVOICE_KEYS = [
  "id",
  "object",
  "invoice_number",
  "custom_invoice_number",
  "name",
  "customer_id",
  "customer_name",
  "salesperson_id",
  "status_id",
  "status",
  "issue_date",
  "expiry_date",
  "date_sent",
  "date_fully_paid",
  "purchase_order_number",
  "attention",
  "shipping_address",
  "public_note",
  "payment_terms",
  "subtotal",
  "shipping_fee",
  "tax",
  "tax_2",
  "total",
  "amount_paid",
  "amount_due",
];
export const INVOICE_DETAIL_KEYS = [
  "party",
  "pre_discount_total",
  "discount_total",
  "tax_label",
  "tax_2_label",
  "can_edit",
  "edit_block_reason",
  "revision",
  "custom_field_values",
  "source_estimate",
  "source_sales_order",
  "fulfillment_authority",
  "fulfillment_sales_order_id",
  "packed_percent",
  "shipped_percent",
  "can_pack",
  "pack_block_reason",
  "created_at",
  "updated_at",
];
export const INVOICE_LIST_TAIL_KEYS = ["custom_field_values", "source_estimate", "shipped_percent", "created_at", "updated_at"];
export const INVOICE_LINE_KEYS = [
  "id",
  "object",
  "item_id",
  "item_variation_location_id",
  "name",
  "description",
  "quantity",
  "quantity_packed",
  "quantity_shipped",
  "unit_id",
  "unit_price",
  "discount_percent",
  "discounted_unit_price",
  "tax_rate",
  "tax_2_rate",
  "subtotal",
  "line_type",
  "unit_name",
  "sku",
  "variation_values",
  "variation_number",
  "location_name",
  "thumbnail_url",
];
export const FULFILLMENT_TAIL_KEYS = [
  "packing_list_number",
  "status",
  "units_packed",
  "shipped_date",
  "carrier",
  "tracking_number",
  "tracking_url",
  "tracking_status",
  "tracking_status_details",
  "estimated_delivery_date",
  "tracking_updated_at",
  "lines",
  "created_at",
  "updated_at",
];
