import * as z from "zod";
import { type Infer, lazy } from "./lazy.js";
import { nullMeansAbsent, isoDate, moneyInput, optionalText, percentInput, quantityInput, requiredText, text, uuid } from "./common.js";
import { customFieldValuesIn, dateOut, moneyOut, nullableText, rateOut, timestampOut, updateLinesOf } from "./documents.js";

/**
 * Building blocks shared by sales orders and invoices (spec part 2, sections 2.4, 2.5, 4.4, 4.5):
 * their line input, their common header fields, packing and shipping bodies, fulfillments.
 */

/** Lines per sales order, invoice and packing request (spec part 1, section 8). */
export const MAX_SALES_LINES = 100;

const lineFields = lazy(() => ({
  item_id: nullMeansAbsent(uuid()).meta({
    description: "Inventory lines: an active item of the account. Omit it (or send null, as GET shows it) for a service line.",
  }),
  item_variation_location_id: nullMeansAbsent(z.int().min(1).max(2_147_483_647)).meta({
    description:
      "The stock row the line sells from (required for items with several variations). Without it: the item's row at the order's location, else at the user's location, else at the item's default location, else its only row.",
  }),
  name: nullMeansAbsent(requiredText(255)).meta({
    description:
      "Service lines (required there). Inventory lines take the item's name: one sent there must be the line's current name or the item's (as GET shows it).",
  }),
  description: optionalText(4000).meta({ description: 'Omitted on an inventory line, the item\'s description applies; null or "" clears it.' }),
  quantity: quantityInput({ positive: true, description: "Positive, at most 4 decimals; default 1; unique items always 1" }).optional(),
  unit_price: moneyInput().optional().meta({ description: "Required for service lines; see the route for inventory lines." }),
  tax_rate: percentInput().optional().meta({ description: "0 to 100; defaults to the customer's primary tax rate" }),
  tax_2_rate: percentInput().optional().meta({ description: "0 to 100; defaults to the customer's secondary tax rate" }),
}));

export const salesLineInput = lazy(() => z.strictObject(lineFields()).meta({ id: "SalesLineCreate" }));
export const salesLineUpdate = lazy(() =>
  z
    .strictObject({ id: uuid().optional().meta({ description: "An existing line to keep (and update); omit to add a line." }), ...lineFields() })
    .meta({ id: "SalesLineUpdate" }),
);
export type SalesLineBody = Infer<typeof salesLineUpdate>;

/** Header fields sales orders and invoices share on create and update. */
export const salesHeaderFields = lazy(() => ({
  name: optionalText(255),
  issue_date: isoDate().optional().meta({ description: "Default: today in the user's time zone (else the account's)" }),
  purchase_order_number: optionalText(255).meta({ description: "The customer's own order reference" }),
  attention: optionalText(255),
  shipping_address: optionalText(1000),
  public_note: optionalText(4000),
  payment_terms: optionalText(255).meta({ description: "Default: the account's payment terms" }),
  shipping_fee: moneyInput().optional().meta({ description: "Non-negative, default 0" }),
  shipping_cost: moneyInput()
    .optional()
    .meta({ description: "Non-negative, default 0; requires the unit-cost permission (costs.view), else 403 permission_denied" }),
  discount_percent: percentInput().optional().meta({ description: "Document-wide discount, 0 to 100: adds one generated discount line" }),
  custom_field_values: customFieldValuesIn().optional(),
}));

/** The lines of a create (1 to 100) and of an update (the complete desired list). */
export const createLines = lazy(() => z.array(salesLineInput()).min(1).max(MAX_SALES_LINES));
export const updateLines = lazy(() =>
  updateLinesOf(
    salesLineUpdate(),
    MAX_SALES_LINES,
    "The complete desired list of non-discount lines: an existing `id` keeps that line, no `id` adds one, omitted lines are removed; do not submit the generated discount line (use discount_percent).",
  ),
);

// ---------------------------------------------------------------------------------------------
// Packing and shipping

/** Pack body: `{lines: [{id, quantity}]}` and nothing else (spec 4.4 and 4.5 pack). */
export const packBody = (what: string) =>
  z
    .strictObject({
      lines: z
        .array(
          z.strictObject({
            id: uuid().meta({ description: `A ${what} line (each line once)` }),
            quantity: quantityInput({ positive: true, description: "Positive increment, at most the line's current unpacked quantity" }),
          }),
        )
        .min(1)
        .max(MAX_SALES_LINES),
    })
    .meta({ id: `${what === "sales order" ? "SalesOrder" : "Invoice"}Pack` });
export type PackBody = { lines: { id: string; quantity: number }[] };

/** Mark-shipped body (architecture section 8). */
export const shipBody = lazy(() =>
  z
    .strictObject({
      shipped_date: isoDate().optional().meta({ description: "Default: today in the user's time zone (else the account's)" }),
      carrier: text(255).nullish(),
      tracking_number: text(255).nullish(),
      tracking_url: z
        .url({ protocol: /^https?$/ })
        .max(2000)
        .nullish()
        .meta({ description: "An http(s) URL" }),
    })
    .meta({ id: "FulfillmentShip" }),
);
export type ShipBody = Infer<typeof shipBody>;

const fulfillmentTail = lazy(() => ({
  packing_list_number: z.int().min(1),
  status: z.enum(["packed", "shipped"]),
  units_packed: z.number(),
  shipped_date: dateOut(),
  carrier: nullableText(),
  tracking_number: nullableText(),
  tracking_url: nullableText(),
  tracking_status: nullableText(),
  tracking_status_details: nullableText(),
  estimated_delivery_date: dateOut(),
  tracking_updated_at: timestampOut(),
}));

/** A packing list of a sales order (spec 2.4: only these fields). */
export const salesOrderFulfillment = lazy(() =>
  z
    .object({
      id: uuid(),
      sales_order_id: uuid(),
      ...fulfillmentTail(),
      lines: z.array(z.object({ sales_order_line_id: uuid(), quantity: z.number() })).meta({ description: "What was packed: a historical snapshot" }),
      created_at: timestampOut(),
      updated_at: timestampOut(),
    })
    .meta({ id: "SalesOrderFulfillment" }),
);

/** A packing list of a standalone invoice (spec 4.5). */
export const invoiceFulfillment = lazy(() =>
  z
    .object({
      id: uuid(),
      invoice_id: uuid(),
      ...fulfillmentTail(),
      lines: z.array(z.object({ invoice_line_id: uuid(), quantity: z.number() })).meta({ description: "What was packed: a historical snapshot" }),
      created_at: timestampOut(),
      updated_at: timestampOut(),
    })
    .meta({ id: "InvoiceFulfillment" }),
);

// ---------------------------------------------------------------------------------------------
// Responses shared by both kinds

/** `{id, estimate_number}` of the estimate a document was converted from, or null. */
export const sourceEstimateOut = lazy(() =>
  z
    .object({ id: uuid(), estimate_number: z.int().min(1) })
    .nullable()
    .meta({ id: "SourceEstimate", description: "The estimate this document was converted from, or null" }),
);

/** Line fields both kinds show after their own quantities (spec 2.4 and 2.5). */
export const linePricingOut = lazy(() => ({
  unit_id: z.int().min(1).nullable(),
  unit_price: moneyOut(),
  discount_percent: rateOut(),
  discounted_unit_price: moneyOut().nullable(),
  tax_rate: rateOut(),
  tax_2_rate: rateOut(),
  subtotal: moneyOut(),
}));

export const lineCostsOut = lazy(() => ({
  unit_cost: moneyOut().nullable().optional().meta({ description: "Present only with the unit-cost permission; null on discount lines" }),
  total_cost: moneyOut()
    .nullable()
    .optional()
    .meta({ description: "unit_cost x quantity; present only with the unit-cost permission; null on discount lines" }),
}));

export const percentOut = lazy(() =>
  z.number().nullable().meta({ description: "Percent (two decimals, rounded down: 100 only when complete), or null when nothing applies" }),
);
