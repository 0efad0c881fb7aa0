import * as z from "zod";
import { type Infer, lazy } from "./lazy.js";
import { isoDate, optionalText, text, uuid } from "./common.js";
import { moneyInput, percentInput, quantityInput } from "./amounts.js";
import {
  customFieldValuesIn,
  dateOut,
  headerNotesIn,
  headerStartIn,
  lineHeadOut,
  lineInputFields,
  lineUpdateOf,
  moneyOut,
  nullableText,
  rateOut,
  timestampOut,
  timestampsOut,
  updateLinesOf,
} from "./documents.js";

/**
 * Building blocks shared by sales orders and invoices (spec part 2, sections 2.4, 2.5, 4.4, 4.5):
 * their line input, their common header fields, packing and shipping bodies, fulfillments.
 */

/** Lines per sales order, invoice and packing request (spec part 1, section 8). */
export const MAX_SALES_LINES = 100;

const lineFields = lazy(() =>
  lineInputFields(
    "customer",
    { unit_price: moneyInput().optional().meta({ description: "Required for service lines; see the route for inventory lines." }) },
    {
      item_variation_location_id:
        "The stock row the line sells from (for items with several variations, it or item_variation_id is required). Without it: on a line kept by id, the row it has; else the item's row at the order's location, else at the user's location, else at the item's default location, else its only row, else a new row at its default location or the account's only location.",
    },
  ),
);

export const salesLineInput = lazy(() => z.strictObject(lineFields()).meta({ id: "SalesLineCreate" }));
export const salesLineUpdate = lazy(() => lineUpdateOf("SalesLineUpdate", lineFields()));
export type SalesLineBody = Infer<typeof salesLineUpdate>;

/** Header fields sales orders and invoices share on create and update. */
export const salesHeaderFields = lazy(() => ({
  ...headerStartIn(),
  purchase_order_number: optionalText(255).meta({ description: "The customer's own order reference" }),
  ...headerNotesIn(),
  payment_terms: optionalText(255).meta({ description: "Default: the account's payment terms" }),
  shipping_fee: moneyInput().optional().meta({ description: "Non-negative, default 0 (total at most 900000000000.0000)" }),
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

/** A create body (sales orders and invoices): the customer, 1 to 100 lines, then the kind's header fields. */
export const salesCreateBody = <T extends z.core.$ZodLooseShape>(id: string, fields: T) =>
  z
    .strictObject({ customer_id: uuid().meta({ description: "An active customer of the account, visible to the user" }), lines: createLines(), ...fields })
    .meta({ id });

/** An update body: the customer (what changing it requires, per kind), the complete desired lines, then the kind's header fields. */
export const salesUpdateBody = <T extends z.core.$ZodLooseShape>(id: string, customerDescription: string, fields: T) =>
  z.strictObject({ customer_id: uuid().optional().meta({ description: customerDescription }), lines: updateLines(), ...fields }).meta({ id });

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

/** A packing list of a `parent` document, whose `lines` name their document line by `lineKey`. */
const fulfillmentOut = (id: string, parent: "sales_order_id" | "invoice_id", lineKey: "sales_order_line_id" | "invoice_line_id") =>
  z
    .object({
      id: uuid(),
      [parent]: uuid(),
      ...fulfillmentTail(),
      lines: z.array(z.object({ [lineKey]: uuid(), quantity: z.number() })).meta({ description: "What was packed: a historical snapshot" }),
      ...timestampsOut(),
    })
    .meta({ id });

/** A packing list of a sales order (spec 2.4: only these fields). */
export const salesOrderFulfillment = lazy(() => fulfillmentOut("SalesOrderFulfillment", "sales_order_id", "sales_order_line_id"));

/** A packing list of a standalone invoice (spec 4.5). */
export const invoiceFulfillment = lazy(() => fulfillmentOut("InvoiceFulfillment", "invoice_id", "invoice_line_id"));

// ---------------------------------------------------------------------------------------------
// Responses shared by both kinds

/** `{id, estimate_number}` of the estimate a document was converted from, or null. */
export const sourceEstimateOut = lazy(() =>
  z
    .object({ id: uuid(), estimate_number: z.int().min(1) })
    .nullable()
    .meta({ id: "SourceEstimate", description: "The estimate this document was converted from, or null" }),
);

/** The first fields of a sales-order or invoice line in responses, up to its `quantity`. */
export const salesLineHeadOut = <O extends string>(object: O) => ({
  ...lineHeadOut(object),
  name: nullableText(),
  description: nullableText(),
  quantity: z.number(),
});

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
  z.number().nullable().meta({ description: "Percent, two decimals rounded down (100 only when complete); null when nothing applies" }),
);
