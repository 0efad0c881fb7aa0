import * as z from "zod";
import { type Infer, lazy } from "./lazy.js";
import { blankAsNull, isoDate, listEnvelope, optionalText, uuid } from "./common.js";
import {
  customFieldValuesOut,
  dateOut,
  documentListQuery,
  headerNotesOut,
  issueDateFilters,
  lineItemDetailsOut,
  moneyOut,
  nullableText,
  paymentFields,
  paymentOut,
  statusIdOut,
  statusIdQuery,
  timestampsOut,
  totalsOut,
} from "./documents.js";
import {
  invoiceFulfillment,
  lineCostsOut,
  linePricingOut,
  salesCreateBody,
  salesHeaderFields,
  salesLineHeadOut,
  salesUpdateBody,
  sourceEstimateOut,
} from "./sales-documents.js";

/** Invoices (spec part 2, sections 2.5, 3.5 and 4.5; architecture section 8). */

const invoiceFields = lazy(() => ({
  ...salesHeaderFields(),
  custom_invoice_number: optionalText(24),
}));

export const invoiceCreateBody = lazy(() => salesCreateBody("InvoiceCreate", invoiceFields()));
export type InvoiceCreateBody = Infer<typeof invoiceCreateBody>;

export const invoiceUpdateBody = lazy(() =>
  salesUpdateBody("InvoiceUpdate", "Changing it requires a complete `lines` replacement in the same request", invoiceFields()),
);
export type InvoiceUpdateBody = Infer<typeof invoiceUpdateBody>;

/**
 * Fields the service controls: a create or update naming one is 422 `unsupported_invoice_field`
 * (spec 4.5: number, status, salesperson, account, source, totals, payments, fulfillment state,
 * timestamps), never the generic `unknown_field`.
 */
export const UNSUPPORTED_INVOICE_FIELDS = {
  code: "unsupported_invoice_field",
  fields: [
    "id",
    "object",
    "invoice_number",
    "number",
    "status",
    "status_id",
    "salesperson_id",
    "assigned_user_id",
    "account_id",
    "customer_name",
    "source",
    "source_estimate",
    "source_estimate_id",
    "source_sales_order",
    "source_sales_order_id",
    "sales_order_id",
    "subtotal",
    "pre_discount_total",
    "discount_total",
    "tax",
    "tax_2",
    "total",
    "amount_paid",
    "amount_due",
    "payments",
    "date_fully_paid",
    "date_sent",
    "fulfillment_authority",
    "fulfillment_sales_order_id",
    "fulfillments",
    "packed_percent",
    "shipped_percent",
    "can_edit",
    "edit_block_reason",
    "can_pack",
    "pack_block_reason",
    "revision",
    "tax_label",
    "tax_2_label",
    "created_at",
    "updated_at",
    "lines[].quantity_packed",
    "lines[].quantity_shipped",
    "lines[].subtotal",
    "lines[].discounted_unit_price",
    "lines[].unit_cost",
    "lines[].total_cost",
    "lines[].line_type",
  ],
} as const;

/** Shipping fields a pack body must not carry (422 `unsupported_invoice_pack_field`). */
export const UNSUPPORTED_INVOICE_PACK_FIELDS = {
  code: "unsupported_invoice_pack_field",
  fields: ["carrier", "tracking_number", "tracking_url", "shipped_date", "label", "rate", "provider", "shipping_provider", "service_level"],
} as const;

export const invoiceSendBody = lazy(() =>
  z
    .strictObject({ date_sent: isoDate().optional().meta({ description: "Default: today in the account's time zone; a repeat keeps the first date" }) })
    .meta({ id: "InvoiceSend" }),
);

export const invoicePaymentBody = lazy(() =>
  z
    .strictObject({
      ...paymentFields("payment"),
      card: z
        .strictObject({
          brand: optionalText(50),
          last4: blankAsNull(z.string().regex(/^\d{4}$/, "must be 4 digits")),
        })
        .nullish()
        .meta({ description: "The card the payment was taken with (brand and last four digits), if any" }),
    })
    .meta({ id: "InvoicePaymentCreate" }),
);
export type InvoicePaymentBody = Infer<typeof invoicePaymentBody>;

export const invoiceLine = lazy(() =>
  z
    .object({
      ...salesLineHeadOut("invoice_line"),
      quantity_packed: z.number().meta({ description: "Linked invoices: the full quantity only once the sales order is fully packed, else 0" }),
      quantity_shipped: z.number().meta({ description: "Linked invoices: the full quantity only once the sales order is fully shipped, else 0" }),
      ...linePricingOut(),
      line_type: z.enum(["inventory", "service", "discount"]),
      ...lineItemDetailsOut(),
      unit_name: nullableText().meta({ description: "`discount` on discount lines" }), // overrides the spread value, in its place
      ...lineCostsOut(),
    })
    .meta({ id: "InvoiceLine" }),
);

const STATUSES = ["Sent", "Partially Paid", "Paid", "Cancelled"] as const;

const headShape = lazy(() => ({
  id: uuid(),
  object: z.literal("invoice"),
  invoice_number: z.int().min(1),
  custom_invoice_number: nullableText(),
  name: nullableText(),
  customer_id: uuid(),
  customer_name: z.string(),
  salesperson_id: z.string(),
  status_id: statusIdOut("invoice", "9 Sent (unpaid), 10 Partially Paid, 11 Paid, 12 Cancelled"),
  status: z.enum(STATUSES).nullable(),
  issue_date: dateOut(),
  expiry_date: dateOut(),
  date_sent: dateOut(),
  date_fully_paid: dateOut(),
  purchase_order_number: z.string(),
  ...headerNotesOut(),
  payment_terms: nullableText(),
  ...totalsOut(),
  amount_paid: moneyOut(),
  amount_due: moneyOut(),
  shipping_cost: moneyOut().optional().meta({ description: "Omitted without the unit-cost permission" }),
}));

const partyDetail = lazy(() =>
  z
    .object({
      account_number: z.string().nullable(),
      phone: z.string().nullable(),
      email: z.string().nullable(),
      billing_address: z.array(z.string()),
      shipping_address: z.array(z.string()).meta({ description: "The invoice's stored shipping address when present, else the customer's" }),
    })
    .meta({ id: "InvoiceParty" }),
);

export const invoiceListEntry = lazy(() =>
  z
    .object({
      ...headShape(),
      custom_field_values: customFieldValuesOut(),
      source_estimate: sourceEstimateOut(),
      shipped_percent: z.int().min(0).max(100).nullable(),
      ...timestampsOut(),
    })
    .meta({ id: "InvoiceListEntry" }),
);

export const invoiceResource = lazy(() =>
  z
    .object({
      ...headShape(),
      party: partyDetail(),
      pre_discount_total: moneyOut().nullable().meta({ description: "Before the discount and shipping" }),
      discount_total: moneyOut().meta({ description: "Signed, negative" }),
      tax_label: nullableText(),
      tax_2_label: nullableText(),
      can_edit: z.boolean(),
      edit_block_reason: z.enum(["invoice_not_unpaid", "invoice_sales_order_linked", "permission_denied"]).nullable(),
      revision: z.string().meta({ description: "Prefixed inv_; also the ETag" }),
      custom_field_values: customFieldValuesOut(),
      source_estimate: sourceEstimateOut(),
      source_sales_order: z
        .object({ id: uuid(), sales_order_number: z.int().min(1), packed_percent: z.number().nullable(), shipped_percent: z.number().nullable() })
        .nullable(),
      fulfillment_authority: z.enum(["invoice", "sales_order"]),
      fulfillment_sales_order_id: z.string().nullable(),
      packed_percent: z.number().meta({ description: "Linked invoices: the sales order's percentage" }),
      shipped_percent: z.int().min(0).max(100).nullable(),
      can_pack: z.boolean(),
      pack_block_reason: z
        .enum(["packing_managed_by_sales_order", "packing_lists_disabled", "invoice_cancelled", "nothing_remaining_to_pack", "permission_denied"])
        .nullable(),
      ...timestampsOut(),
      lines: z.array(invoiceLine()),
    })
    .meta({ id: "Invoice" }),
);

export const invoiceList = lazy(() => listEnvelope(invoiceListEntry(), "InvoiceList"));
export const invoiceFulfillmentList = lazy(() => listEnvelope(invoiceFulfillment(), "InvoiceFulfillmentList"));

export const invoicePayment = lazy(() =>
  paymentOut("InvoicePayment", "invoice_id", z.object({ brand: z.string().nullable(), last4: z.string().nullable() }).nullable()),
);
export const invoicePaymentList = lazy(() => listEnvelope(invoicePayment(), "InvoicePaymentList"));
export const deletedInvoice = lazy(() => z.object({ id: uuid(), object: z.literal("invoice"), deleted: z.literal(true) }).meta({ id: "DeletedInvoice" }));

export const invoiceListQuery = lazy(() =>
  documentListQuery().extend({
    status_id: statusIdQuery("invoice"),
    customer_id: uuid().optional(),
    ...issueDateFilters(),
  }),
);
export type InvoiceListQuery = Infer<typeof invoiceListQuery>;

export const invoicePath = lazy(() => z.object({ invoice_id: uuid() }));
export const invoicePaymentPath = lazy(() => z.object({ invoice_id: uuid(), payment_id: uuid() }));
export const invoiceFulfillmentPath = lazy(() => z.object({ invoice_id: uuid(), fulfillment_id: uuid() }));
