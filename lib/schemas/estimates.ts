import * as z from "zod";
import { type Infer, lazy } from "./lazy.js";
import { isoDate, listEnvelope, optionalText, uuid } from "./common.js";
import { moneyInput, percentInput } from "./amounts.js";
import {
  DISCOUNT_ENTRY_NOTE,
  MAX_UPDATE_LINE_ENTRIES,
  updateLinesMessage,
  customFieldValuesOut,
  dateOut,
  headerNotesIn,
  headerStartIn,
  documentListQuery,
  expiryDateFilters,
  headerNotesOut,
  issueDateFilters,
  lineInputFields,
  lineItemDetailsOut,
  lineItemOut,
  lineUpdateOf,
  moneyOut,
  nullableText,
  rateOut,
  statusIdOut,
  statusIdQuery,
  timestampsOut,
  totalsOut,
} from "./documents.js";
import { customFieldValuesInput } from "./parties.js";

/** Estimates (spec part 2, sections 2.3, 3.3 and 4.3). */

export const MAX_ESTIMATE_LINES = 500;
/**
 * Custom-field values per estimate: each value holds up to 4,000 characters and they live on
 * the header item (400 KB), which shares the one Query response of a retrieve with the lines.
 */
export const MAX_ESTIMATE_CUSTOM_FIELDS = 25;

const lineFields = lazy(() =>
  lineInputFields(
    "customer",
    {
      unit_price: moneyInput().optional().meta({
        description:
          "Required for service lines. Inventory lines default to the item's selling price; giving one needs the prices.modify permission (else 403 permission_denied).",
      }),
    },
    {
      item_id:
        "Inventory lines: an active item of the account (name, description, unit cost and selling price come from it). Omit it (or send null, as GET shows it) for a service line.",
      item_variation_location_id: "A stock row of the item; for items with several variations, it or item_variation_id is required.",
      description: 'Service lines; omitted on an inventory line, the item\'s description applies; null or "" clears it.',
    },
  ),
);

export const estimateLineInput = lazy(() => z.strictObject(lineFields()).meta({ id: "EstimateLineCreate" }));
export const estimateLineUpdate = lazy(() =>
  lineUpdateOf("EstimateLineUpdate", lineFields(), "An existing non-discount line to keep (and update); omit to add a line."),
);
export type EstimateLineBody = Infer<typeof estimateLineUpdate>;

const headerFields = lazy(() => ({
  ...headerStartIn(),
  custom_estimate_number: optionalText(24),
  purchase_order_number: optionalText(255).meta({ description: "The customer's own reference" }),
  ...headerNotesIn(),
  payment_terms: optionalText(255).meta({ description: "Default (create): the account's payment terms" }),
  shipping_fee: moneyInput().optional().meta({ description: "Non-negative, default 0" }),
  shipping_cost: moneyInput().optional().meta({ description: "Non-negative, default 0; needs the costs.view permission (else 403 permission_denied)" }),
  discount_percent: percentInput().optional().meta({ description: "Estimate-wide discount, 0 to 100: adds one generated discount line" }),
  custom_field_values: customFieldValuesInput(MAX_ESTIMATE_CUSTOM_FIELDS).optional(),
}));

export const estimateCreateBody = lazy(() =>
  z
    .strictObject({
      customer_id: uuid().meta({ description: "An active (unarchived) customer or prospect of the account that the user may see" }),
      lines: z.array(estimateLineInput()).min(1).max(MAX_ESTIMATE_LINES),
      ...headerFields(),
      expiry_date: isoDate()
        .optional()
        .meta({ description: "Not before issue_date. Default: issue_date plus the account's estimate-expiry setting (30 days unless set)" }),
    })
    .meta({ id: "EstimateCreate" }),
);
export type EstimateCreateBody = Infer<typeof estimateCreateBody>;

export const estimateUpdateBody = lazy(() =>
  z
    .strictObject({
      customer_id: uuid().optional().meta({ description: "Changing it requires `lines` in the same request" }),
      lines: z
        .array(estimateLineUpdate())
        .min(1)
        .max(MAX_UPDATE_LINE_ENTRIES, updateLinesMessage(MAX_ESTIMATE_LINES))
        .optional()
        .meta({
          description: `The complete set of active non-discount lines: an existing \`id\` keeps that line, no \`id\` adds one, omitted lines are removed. Never the generated discount line. At most ${MAX_ESTIMATE_LINES} lines. ${DISCOUNT_ENTRY_NOTE}`,
        }),
      ...headerFields(),
      expiry_date: isoDate().optional().meta({ description: "After today in the account's time zone, and not before issue_date" }),
    })
    .meta({ id: "EstimateUpdate" }),
);
export type EstimateUpdateBody = Infer<typeof estimateUpdateBody>;

export const estimateConvertToInvoiceBody = lazy(() =>
  z
    .strictObject({
      issue_date: isoDate().optional().meta({ description: "The invoice's issue date (default: today in the account's time zone)" }),
    })
    .meta({ id: "EstimateConvertToInvoice" }),
);

/**
 * Fields the service controls (spec 4.3: "number, status, salesperson, account, source, totals,
 * conversion state, timestamps"; common rules: cost snapshots): 422 `unsupported_estimate_field`.
 */
export const ESTIMATE_PROTECTED_FIELDS = [
  "id",
  "object",
  "estimate_number",
  "number",
  "status",
  "status_id",
  "salesperson_id",
  "salesperson",
  "assigned_user_id",
  "account_id",
  "source",
  "source_id",
  "customer_name",
  "customer_kind",
  "date_sent",
  "subtotal",
  "tax",
  "tax_2",
  "total",
  "pre_discount_subtotal",
  "discount",
  "can_edit",
  "edit_block_reason",
  "revision",
  "converted_document",
  "converted",
  "invoice_id",
  "sales_order_id",
  "created_at",
  "updated_at",
  "lines[].line_type",
  "lines[].position",
  "lines[].unit_cost",
  "lines[].total_cost",
  "lines[].discounted_unit_price",
  "lines[].subtotal",
  "lines[].tax",
  "lines[].tax_2",
  "lines[].total",
] as const;

export const estimateLine = lazy(() =>
  z
    .object({
      id: uuid().nullable().meta({ description: "Null only in previews, for lines not stored yet" }),
      object: z.literal("estimate_line"),
      ...lineItemOut(),
      line_type: z.enum(["inventory", "service", "discount"]),
      name: z.string(),
      description: nullableText(),
      quantity: z.number(),
      unit_id: z.int().min(1).nullable(),
      ...lineItemDetailsOut(),
      position: z.int().min(0).meta({ description: "Zero-based, in stored order" }),
      unit_price: moneyOut(),
      unit_cost: moneyOut().nullable().optional().meta({ description: "Omitted without the costs.view permission; null on the discount line" }),
      total_cost: moneyOut().nullable().optional().meta({ description: "quantity x unit_cost; omitted without costs.view; null on the discount line" }),
      discount_percent: rateOut(),
      discounted_unit_price: moneyOut().nullable(),
      tax_rate: rateOut(),
      tax_2_rate: rateOut(),
      subtotal: moneyOut(),
      tax: moneyOut(),
      tax_2: moneyOut(),
      total: moneyOut(),
    })
    .meta({ id: "EstimateLine" }),
);

const STATUSES = ["Open", "Closed", "Declined", "Expired"] as const;

const estimateShape = lazy(() => ({
  id: uuid().nullable().meta({ description: "Null only in previews of a new estimate" }),
  object: z.literal("estimate"),
  estimate_number: z.int().min(1).nullable().meta({ description: "Null only in previews of a new estimate" }),
  custom_estimate_number: nullableText(),
  name: nullableText(),
  customer_id: uuid(),
  customer_name: z.string(),
  customer_kind: z.enum(["customer", "prospect"]).nullable(),
  salesperson_id: z.string(),
  status_id: statusIdOut(
    "estimate",
    "5 Open, 6 Closed (converted), 7 Declined, 8 Expired (an Open estimate whose expiry_date has passed in the account's time zone)",
  ),
  status: z.enum(STATUSES).nullable(),
  issue_date: dateOut(),
  expiry_date: dateOut(),
  date_sent: dateOut(),
  purchase_order_number: z.string().meta({ description: 'The customer\'s reference; "" when none' }),
  ...headerNotesOut(),
  payment_terms: nullableText(),
  ...totalsOut(),
  shipping_cost: moneyOut().optional().meta({ description: "Omitted without the costs.view permission" }),
  discount_percent: rateOut(),
  pre_discount_subtotal: moneyOut(),
  discount: moneyOut().meta({ description: "Negative (or zero)" }),
  can_edit: z.boolean(),
  edit_block_reason: z.enum(["estimate_not_open", "permission_denied"]).nullable(),
  revision: z.string().nullable().meta({ description: "Also the ETag header; null in previews" }),
  custom_field_values: customFieldValuesOut(),
  ...timestampsOut(),
  converted_document: z
    .object({ id: uuid(), kind: z.enum(["invoice", "sales_order"]), number: z.int().min(1) })
    .nullable()
    .meta({ description: "The invoice or sales order this estimate was converted into, or null" }),
}));

export const estimateListEntry = lazy(() => z.object(estimateShape()).meta({ id: "EstimateListEntry" }));
export const estimateResource = lazy(() => z.object({ ...estimateShape(), lines: z.array(estimateLine()) }).meta({ id: "Estimate" }));
export const estimateList = lazy(() => listEnvelope(estimateListEntry(), "EstimateList"));

const previewProblem = lazy(() =>
  z
    .object({ code: z.string(), message: z.string(), param: z.string().nullable() })
    .meta({ id: "EstimatePreviewProblem", description: "code and param as the real write would answer them (a validation detail's code, or the error code)" }),
);

export const estimatePreview = lazy(() =>
  z
    .object({
      object: z.literal("estimate_preview"),
      estimate: estimateResource()
        .nullable()
        .meta({ description: "The canonical estimate; null when the body breaks the schema or the customer or an item line cannot be resolved (see errors)" }),
      errors: z.array(previewProblem()).meta({ description: "What the real create or update would refuse; empty when it would succeed" }),
      warnings: z.array(previewProblem()).meta({
        description: "What it would accept but deserves attention (insufficient stock, an expiry date in the past, a line a conversion could not place)",
      }),
    })
    .meta({ id: "EstimatePreview" }),
);

export const deletedEstimate = lazy(() => z.object({ id: uuid(), object: z.literal("estimate"), deleted: z.literal(true) }).meta({ id: "DeletedEstimate" }));

export const estimateListQuery = lazy(() =>
  documentListQuery().extend({
    status_id: statusIdQuery("estimate"),
    customer_id: uuid().optional(),
    ...issueDateFilters(),
    ...expiryDateFilters(),
  }),
);
export type EstimateListQuery = Infer<typeof estimateListQuery>;

export const estimatePath = lazy(() => z.object({ estimate_id: uuid() }));
