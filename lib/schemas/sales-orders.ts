import * as z from "zod";
import { type Infer, lazy } from "./lazy.js";
import { blankAsNull, isoDate, listEnvelope, optionalText, uuid } from "./common.js";
import { quantityInput } from "./amounts.js";
import {
  customFieldValuesOut,
  dateOut,
  discountDetailOut,
  documentListQuery,
  expiryDateFilters,
  headerNotesOut,
  issueDateFilters,
  lineItemDetailsOut,
  moneyOut,
  nullableText,
  statusIdOut,
  statusIdQuery,
  timestampsOut,
  totalsOut,
} from "./documents.js";
import {
  MAX_SALES_LINES,
  lineCostsOut,
  linePricingOut,
  percentOut,
  salesCreateBody,
  salesHeaderFields,
  salesLineHeadOut,
  salesOrderFulfillment,
  salesUpdateBody,
  sourceEstimateOut,
} from "./sales-documents.js";

/** Sales orders (spec part 2, sections 2.4, 3.4 and 4.4; architecture section 8). */

const orderFields = lazy(() => ({
  ...salesHeaderFields(),
  location_id: uuid()
    .optional()
    .meta({ description: "An active location; must be the user's own location when the user is restricted to one (the default then)" }),
  expiry_date: blankAsNull(isoDate()).meta({ description: "Not before issue_date" }),
  packing_list_note: optionalText(4000),
}));

export const salesOrderCreateBody = lazy(() => salesCreateBody("SalesOrderCreate", orderFields()));
export type SalesOrderCreateBody = Infer<typeof salesOrderCreateBody>;

export const salesOrderUpdateBody = lazy(() =>
  salesUpdateBody("SalesOrderUpdate", "Changing it requires `lines` in the same request", {
    ...orderFields(),
    location_id: uuid().nullish().meta({ description: "Changing it (null: no location) requires `lines` in the same request" }),
  }),
);
export type SalesOrderUpdateBody = Infer<typeof salesOrderUpdateBody>;

export const salesOrderInvoiceBody = lazy(() =>
  z
    .strictObject({
      lines: z
        .array(
          z.strictObject({
            id: uuid().meta({ description: "An inventory or service line of the order (each once)" }),
            quantity: quantityInput({ positive: true, description: "Positive, at most the line's remaining uninvoiced quantity" }),
          }),
        )
        .min(1)
        .max(MAX_SALES_LINES)
        .optional()
        .meta({ description: "The quantities to invoice; omitted: every remaining uninvoiced quantity" }),
    })
    .meta({ id: "SalesOrderInvoice" }),
);
export type SalesOrderInvoiceBody = Infer<typeof salesOrderInvoiceBody>;

export const salesOrderLine = lazy(() =>
  z
    .object({
      ...salesLineHeadOut("sales_order_line"),
      quantity_invoiced: z.number(),
      quantity_packed: z.number(),
      quantity_shipped: z.number(),
      quantity_remaining_to_pack: z
        .number()
        .meta({ description: "0 for service lines when the packing-list service-item setting is off, always 0 for discount lines" }),
      ...linePricingOut(),
      position: z.int().min(0).meta({ description: "Zero-based, in stored order" }),
      line_type: z.enum(["inventory", "service", "discount"]),
      ...lineItemDetailsOut(),
      ...lineCostsOut(),
    })
    .meta({ id: "SalesOrderLine" }),
);

const listShape = lazy(() => ({
  id: uuid(),
  object: z.literal("sales_order"),
  sales_order_number: z.int().min(1),
  name: nullableText(),
  customer_id: uuid(),
  customer_name: nullableText(),
  salesperson_id: z.string(),
  location_id: z.string().nullable(),
  status_id: statusIdOut("sales_order", "29 Open, 30 Closed (fully invoiced), 31 Cancelled"),
  status: z.enum(["Open", "Closed", "Cancelled"]).nullable(),
  issue_date: dateOut(),
  expiry_date: dateOut(),
  purchase_order_number: nullableText(),
  ...headerNotesOut(),
  packing_list_note: nullableText(),
  payment_terms: nullableText(),
  drop_shipped: z.boolean(),
  drop_ship_customer_id: nullableText(),
  drop_ship_address: nullableText(),
  ...totalsOut(),
  amount_paid: moneyOut().meta({ description: "Payments and refunds recorded on the order's invoices" }),
  amount_due: moneyOut(),
  shipping_cost: moneyOut().optional().meta({ description: "Omitted without the unit-cost permission" }),
  invoiced_percent: percentOut(),
  paid_percent: percentOut(),
  packed_percent: percentOut(),
  shipped_percent: percentOut(),
  invoice_count: z.int().min(0),
  source_estimate: sourceEstimateOut(),
}));

const PACK_BLOCK_REASONS = ["packing_lists_disabled", "sales_order_not_open", "location_restricted", "nothing_remaining_to_pack", "permission_denied"] as const;

const tailShape = lazy(() => ({
  revision: z.string().meta({ description: "Prefixed so_; also the ETag" }),
  custom_field_values: customFieldValuesOut(),
  ...timestampsOut(),
}));

const EDIT_BLOCK_REASONS = ["sales_order_not_open", "sales_order_activity_started", "permission_denied"] as const;

export const salesOrderListEntry = lazy(() =>
  z
    .object({
      ...listShape(),
      edit_block_reason: z.enum(EDIT_BLOCK_REASONS).nullable(),
      pack_block_reason: z.enum(PACK_BLOCK_REASONS).nullable(),
      ...tailShape(),
    })
    .meta({ id: "SalesOrderListEntry" }),
);

export const salesOrderResource = lazy(() =>
  z
    .object({
      ...listShape(),
      ...discountDetailOut(),
      edit_block_reason: z.enum(EDIT_BLOCK_REASONS).nullable(),
      can_pack: z.boolean(),
      pack_block_reason: z.enum(PACK_BLOCK_REASONS).nullable(),
      ...tailShape(),
      lines: z.array(salesOrderLine()),
    })
    .meta({ id: "SalesOrder" }),
);

export const salesOrderList = lazy(() => listEnvelope(salesOrderListEntry(), "SalesOrderList"));
export const salesOrderFulfillmentList = lazy(() => listEnvelope(salesOrderFulfillment(), "SalesOrderFulfillmentList"));
export const deletedSalesOrder = lazy(() =>
  z.object({ id: uuid(), object: z.literal("sales_order"), deleted: z.literal(true) }).meta({ id: "DeletedSalesOrder" }),
);

export const salesOrderListQuery = lazy(() =>
  documentListQuery().extend({
    status_id: statusIdQuery("sales_order"),
    customer_id: uuid().optional(),
    location_id: uuid().optional(),
    assigned_user_id: uuid().optional().meta({ description: "Only orders of this salesperson (never widens the caller's visibility)" }),
    ...issueDateFilters(),
    ...expiryDateFilters(),
  }),
);
export type SalesOrderListQuery = Infer<typeof salesOrderListQuery>;

export const salesOrderPath = lazy(() => z.object({ sales_order_id: uuid() }));
export const salesOrderFulfillmentPath = lazy(() => z.object({ sales_order_id: uuid(), fulfillment_id: uuid() }));
