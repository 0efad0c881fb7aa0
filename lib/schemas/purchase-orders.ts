import * as z from "zod";
import { type Infer, lazy } from "./lazy.js";
import { nullMeansAbsent, isoDate, listEnvelope, moneyInput, optionalText, percentInput, quantityInput, requiredText, uuid, blankAsNull } from "./common.js";
import {
  customFieldValuesIn,
  customFieldValuesOut,
  dateFilter,
  dateOut,
  documentListQuery,
  moneyOut,
  nullableText,
  partyOut,
  rateOut,
  statusIdOut,
  statusIdQuery,
  timestampOut,
  updateLinesOf,
} from "./documents.js";

/** Purchase orders (spec part 2, sections 2.1, 3.1 and 4.1). */

export const MAX_PO_LINES = 100;

const lineFields = lazy(() => ({
  item_id: nullMeansAbsent(uuid()).meta({
    description: "Inventory lines: an active item of the account. Omit it (or send null, as GET shows it) for a service line.",
  }),
  item_variation_location_id: nullMeansAbsent(z.int().min(1).max(2_147_483_647)).meta({
    description: "The item's stock row at the order's location; required for items with several variations.",
  }),
  name: nullMeansAbsent(requiredText(255)).meta({
    description:
      "Service lines (required there). Inventory lines take the item's name: one sent there must be the line's current name or the item's (as GET shows it).",
  }),
  description: optionalText(4000).meta({ description: 'Omitted on an inventory line, the item\'s description applies; null or "" clears it.' }),
  quantity: quantityInput({ positive: true, description: "Positive, at most 4 decimals; default 1; unique items always 1" }).optional(),
  unit_cost: moneyInput().optional().meta({ description: "Required for service lines; inventory lines default to the item's unit cost." }),
  tax_rate: percentInput().optional().meta({ description: "0 to 100; defaults to the supplier's primary tax rate" }),
  tax_2_rate: percentInput().optional().meta({ description: "0 to 100; defaults to the supplier's secondary tax rate" }),
}));

export const purchaseOrderLineInput = lazy(() => z.strictObject(lineFields()).meta({ id: "PurchaseOrderLineCreate" }));
export const purchaseOrderLineUpdate = lazy(() =>
  z
    .strictObject({ id: uuid().optional().meta({ description: "An existing line to keep (and update); omit to add a line." }), ...lineFields() })
    .meta({ id: "PurchaseOrderLineUpdate" }),
);

const headerFields = lazy(() => ({
  name: optionalText(255),
  issue_date: isoDate().optional().meta({ description: "Default: today in the user's time zone (else the account's)" }),
  date_requested: blankAsNull(isoDate()),
  date_needed: blankAsNull(isoDate()),
  requested_from: optionalText(255),
  attention: optionalText(255),
  shipping_address: optionalText(1000),
  public_note: optionalText(4000),
  payment_terms: optionalText(255),
  shipping_provider: optionalText(255),
  shipping_tracking_code: optionalText(255),
  custom_purchase_order_number: optionalText(24),
  shipping_fee: moneyInput().optional().meta({ description: "Non-negative, default 0" }),
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
      id: uuid(),
      object: z.literal("purchase_order_line"),
      item_id: z.string().nullable(),
      item_variation_location_id: z.int().min(1).nullable(),
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
  attention: nullableText(),
  shipping_address: nullableText(),
  public_note: nullableText(),
  payment_terms: nullableText(),
  shipping_provider: nullableText(),
  shipping_tracking_code: nullableText(),
}));

const tailShape = lazy(() => ({
  revision: z.string(),
  custom_field_values: customFieldValuesOut(),
  subtotal: moneyOut(),
  shipping_fee: moneyOut(),
  tax: moneyOut(),
  tax_2: moneyOut(),
  total: moneyOut(),
  amount_paid: moneyOut(),
  amount_due: moneyOut(),
  created_at: timestampOut(),
  updated_at: timestampOut(),
}));

export const purchaseOrderListEntry = lazy(() => z.object({ ...listShape(), ...tailShape() }).meta({ id: "PurchaseOrderListEntry" }));

export const purchaseOrderResource = lazy(() =>
  z
    .object({
      ...listShape(),
      party: partyOut(),
      discount_percent: rateOut(),
      pre_discount_total: moneyOut(),
      discount_total: moneyOut(),
      tax_label: nullableText(),
      tax_2_label: nullableText(),
      can_edit: z.boolean(),
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
    issue_date_from: dateFilter("Issue date on or after (inclusive)"),
    issue_date_to: dateFilter("Issue date on or before (inclusive)"),
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
  z
    .object({
      id: uuid(),
      object: z.literal("payment"),
      purchase_order_id: uuid(),
      amount: moneyOut().meta({ description: "Signed: payments positive, refunds negative" }),
      type: z.enum(["payment", "refund"]),
      reference: z.string().nullable(),
      payment_date: dateOut(),
      card: z.null().meta({ description: "Always null on purchase orders" }),
    })
    .meta({ id: "PurchaseOrderPayment" }),
);
export const purchaseOrderPaymentList = lazy(() => listEnvelope(purchaseOrderPayment(), "PurchaseOrderPaymentList"));
export const deletedPayment = lazy(() => z.object({ id: uuid(), object: z.literal("payment"), deleted: z.literal(true) }).meta({ id: "DeletedPayment" }));

export const purchaseOrderPath = lazy(() => z.object({ purchase_order_id: uuid() }));
export const purchaseOrderPaymentPath = lazy(() => z.object({ purchase_order_id: uuid(), payment_id: uuid() }));
