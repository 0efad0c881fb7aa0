import { expect } from "vitest";
import type { ApiClient } from "./api.js";
import { idempotencyKey, newAccount, type TestAccount } from "./fixtures.js";

/** The key order of estimates and their lines (spec part 2, section 2.3), shared by the estimate tests. */
export const ESTIMATE_KEYS = [
  "id",
  "object",
  "estimate_number",
  "custom_estimate_number",
  "name",
  "customer_id",
  "customer_name",
  "customer_kind",
  "salesperson_id",
  "status_id",
  "status",
  "issue_date",
  "expiry_date",
  "date_sent",
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
  "shipping_cost",
  "discount_percent",
  "pre_discount_subtotal",
  "discount",
  "can_edit",
  "edit_block_reason",
  "revision",
  "custom_field_values",
  "created_at",
  "updated_at",
  "converted_document",
];
export const LINE_KEYS = [
  "id",
  "object",
  "item_id",
  "item_variation_location_id",
  "line_type",
  "name",
  "description",
  "quantity",
  "unit_id",
  "unit_name",
  "sku",
  "variation_values",
  "variation_number",
  "location_name",
  "thumbnail_url",
  "position",
  "unit_price",
  "unit_cost",
  "total_cost",
  "discount_percent",
  "discounted_unit_price",
  "tax_rate",
  "tax_2_rate",
  "subtotal",
  "tax",
  "tax_2",
  "total",
];

/** The account of an estimate test: its owner's client, a customer, a location and an item. */
export interface EstimateWorld {
  account: TestAccount;
  client: ApiClient;
  customer: Record<string, any>;
  item: Record<string, any>;
  location: string;
}

/**
 * A fresh account with customer "Acme Retail" (tax rates 8.25 and 1.5), location "Main
 * Warehouse" and item "USB-C Cable" (SKU CAB-1, cost 4.2500, price 12.0000, plus `item`
 * fields), with `stock` on hand at the location when given.
 */
export async function estimateWorld(
  client: (key: string) => ApiClient,
  options: { item?: Record<string, unknown>; stock?: number } = {},
): Promise<EstimateWorld> {
  const account = await newAccount();
  const owner = client(account.ownerKey);
  const customer = await owner.post("/customers", { name: "Acme Retail", tax_rate1: 8.25, tax_rate2: "1.5" });
  expect(customer.status, customer.text).toBe(201);
  const location = await owner.post("/locations", { name: "Main Warehouse", short_name: "MAIN" }, { idempotencyKey: idempotencyKey() });
  expect(location.status, location.text).toBe(201);
  const item = await owner.post("/items", { name: "USB-C Cable", sku: "CAB-1", ...options.item, cost: "4.2500", price: "12.0000" });
  expect(item.status, item.text).toBe(201);
  if (options.stock !== undefined) {
    const stocked = await owner.post(`/items/${item.body.id}/adjustments`, { location_id: location.body.id, quantity: options.stock });
    expect(stocked.status, stocked.text).toBe(201);
  }
  return { account, client: owner, customer: customer.body, item: item.body, location: location.body.id };
}
