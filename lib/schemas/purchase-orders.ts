import * as z from "zod";
import { type Infer, lazy } from "./lazy.js";
import { isoDate, listEnvelope, optionalText, uuid, blankAsNull } from "./common.js";
import { moneyInput, percentInput, quantityInput } from "./amounts.js";
import {
  customFieldValuesIn,
  customFieldValuesOut,
  dateFilter,
  dateOut,
  headerNotesIn,
  headerStartIn,
  discountDetailOut,
  documentListQuery,
  headerNotesOut,
  issueDateFilters,
  lineHeadOut,
  lineInputFields,
  lineUpdateOf,
  moneyOut,
  nullableText,
  paymentOut,
  rateOut,
  statusIdOut,
  statusIdQuery,
  timestampsOut,
  totalsOut,
  updateLinesOf,
} from "./documents.js";

/** Purchase orders (spec part 2, sections 2.1, 3.1 and 4.1). */

export const MAX_PO_LINES = 100;

const lineFields = lazy(() =>
  lineInputFields(
    "supplier",
    { unit_cost: moneyInput().optional().meta({ description: "Required for service lines; inventory lines default to the item's unit cost." }) },
    { item_variation_location_id: "The item's stock row at the order's location; for items with several variations, it or item_variation_id is required." },
  ),
);

export const purchaseOrderLineInput = lazy(() => z.strictObject(lineFields()).meta({ id: "PurchaseOrderLineCreate" }));
export const purchaseOrderLineUpdate = lazy(() => lineUpdateOf("PurchaseOrderLineUpdate", lineFields()));

const headerFields = lazy(() => ({
  ...headerStartIn("account"),
  date_requested: blankAsNull(isoDate()),
  date_needed: blankAsNull(isoDate()),
  requested_from: optionalText(255),
  ...headerNotesIn(),
  payment_terms: optionalText(255),
  shipping_provider: optionalText(255),
  shipping_tracking_code: optionalText(255),
  custom_purchase_order_number: optionalText(24),
  shipping_fee: moneyInput().optional().meta({ description: "Non-negative, default 0 (total at most 900000000000.0000)" }),
  discount_percent: percentInput().optional().meta({ description: "Order-wide discount, 0 to 100: adds one generated discount line" }),
  custom_field_values: customFieldValuesIn().optional(),
}));

export const purchaseOrderCreateBody = lazy(() =>
  z
    .strictObject({
      supplier_id: uuid().meta({ description: "An active supplier of the account" }),
      location_id: uuid().meta({ description: "The active location receiving the order" }),
      lines: z.array(purchaseOrderLineInput()).min(1).max(MAX_PO_LINES),
      ...headerFields(),
    })
    .meta({ id: "PurchaseOrderCreate" }),
);
export type PurchaseOrderCreateBody = Infer<typeof purchaseOrderCreateBody>;

export const purchaseOrderUpdateBody = lazy(() =>
  z
    .strictObject({
      supplier_id: uuid().optional().meta({ description: "Changing it requires `lines` in the same request" }),
      location_id: uuid().optional().meta({ description: "Changing it requires `lines` in the same request" }),
      lines: updateLinesOf(
        purchaseOrderLineUpdate(),
        MAX_PO_LINES,
        "The complete desired list of non-discount lines: an existing `id` keeps that line, no `id` adds one, omitted lines are removed.",
      ),
      ...headerFields(),
    })
    .meta({ id: "PurchaseOrderUpdate" }),
);
export type PurchaseOrderUpdateBody = Infer<typeof purchaseOrderUpdateBody>;
export type PurchaseOrderLineBody = Infer<typeof purchaseOrderLineUpdate>;

export const purchaseOrderSendBody = lazy(() =>
  z
    .strictObject({ date_sent: isoDate().optional().meta({ description: "Default: today in the account's time zone; a repeat keeps the original date" }) })
    .meta({ id: "PurchaseOrderSend" }),
);

export const purchaseOrderReceiveBody = lazy(() =>
  z
    .strictObject({
      lines: z
        .array(
          z.strictObject({
            line_id: uuid().meta({ description: "An inventory line of the order (each once)" }),
            quantity: quantityInput({ positive: true, description: "Positive increment, at most the line's remaining unreceived quantity" }),
          }),
        )
        .min(1)
        .max(MAX_PO_LINES),
      received_date: isoDate().optional().meta({ description: "Stored only when this receipt completes the order; default today in the user's time zone" }),
    })
    .meta({ id: "PurchaseOrderReceive" }),
);
export type PurchaseOrderReceiveBody = Infer<typeof purchaseOrderReceiveBody>;

export const purchaseOrderLine = lazy(() =>
  z
    .object({
      ...lineHeadOut("purchase_order_line"),
      line_type: z.enum(["inventory", "service", "discount"]),
      position: z.int().min(0).meta({ description: "Zero-based, in stored order" }),
      unit_name: nullableText(),
      sku: nullableText(),
      location_name: nullableText(),
      name: nullableText(),
      description: nullableText(),
      variation_values: z.record(z.string(), z.string()),
      variation_number: z.int().min(1).nullable(),
      thumbnail_url: nullableText(),
      quantity: z.number(),
      quantity_received: z.number(),
      unit_id: z.int().min(1).nullable(),
      unit_cost: moneyOut(),
      discount_percent: rateOut(),
      tax_rate: rateOut(),
      tax_2_rate: rateOut(),
      discounted_unit_cost: moneyOut().nullable(),
      subtotal: moneyOut(),
    })
    .meta({ id: "PurchaseOrderLine" }),
);

const STATUSES = ["Not Sent", "Sent", "Partially Received", "Received"] as const;

const listShape = lazy(() => ({
  id: uuid(),
  object: z.literal("purchase_order"),
  purchase_order_number: z.int().min(1),
  custom_purchase_order_number: nullableText(),
  name: nullableText(),
  supplier_id: uuid(),
  supplier_name: z.string(),
  assigned_user_id: z.string(),
  location_id: z.string().nullable(),
  status_id: statusIdOut("purchase_order"),
  status: z.enum(STATUSES).nullable(),
  issue_date: dateOut(),
  date_sent: dateOut(),
  date_received: dateOut(),
  date_requested: dateOut(),
  date_needed: dateOut(),
  date_fully_paid: dateOut(),
  requested_from: nullableText(),
  ...headerNotesOut(),
  payment_terms: nullableText(),
  shipping_provider: nullableText(),
  shipping_tracking_code: nullableText(),
}));

const tailShape = lazy(() => ({
  revision: z.string(),
  custom_field_values: customFieldValuesOut(),
  ...totalsOut(),
  amount_paid: moneyOut(),
  amount_due: moneyOut(),
  ...timestampsOut(),
}));

export const purchaseOrderListEntry = lazy(() => z.object({ ...listShape(), ...tailShape() }).meta({ id: "PurchaseOrderListEntry" }));

export const purchaseOrderResource = lazy(() =>
  z
    .object({
      ...listShape(),
      ...discountDetailOut(),
      edit_block_reason: z.enum(["purchase_order_not_not_sent", "permission_denied"]).nullable(),
      ...tailShape(),
      lines: z.array(purchaseOrderLine()),
    })
    .meta({ id: "PurchaseOrder" }),
);

export const purchaseOrderList = lazy(() => listEnvelope(purchaseOrderListEntry(), "PurchaseOrderList"));

export const purchaseOrderListQuery = lazy(() =>
  documentListQuery().extend({
    status_id: statusIdQuery("purchase_order"),
    supplier_id: uuid().optional(),
    location_id: uuid().optional(),
    ...issueDateFilters(),
    requested_date_from: dateFilter("Requested date on or after"),
    requested_date_to: dateFilter("Requested date on or before"),
    needed_date_from: dateFilter("Needed date on or after"),
    needed_date_to: dateFilter("Needed date on or before"),
    received_date_from: dateFilter("Received date on or after"),
    received_date_to: dateFilter("Received date on or before"),
  }),
);
export type PurchaseOrderListQuery = Infer<typeof purchaseOrderListQuery>;

export const purchaseOrderPayment = lazy(() =>
  paymentOut("PurchaseOrderPayment", "purchase_order_id", z.null().meta({ description: "Always null on purchase orders" })),
);
export const purchaseOrderPaymentList = lazy(() => listEnvelope(purchaseOrderPayment(), "PurchaseOrderPaymentList"));
export const deletedPayment = lazy(() => z.object({ id: uuid(), object: z.literal("payment"), deleted: z.literal(true) }).meta({ id: "DeletedPayment" }));

export const purchaseOrderPath = lazy(() => z.object({ purchase_order_id: uuid() }));
export const purchaseOrderPaymentPath = lazy(() => z.object({ purchase_order_id: uuid(), payment_id: uuid() }));
