import * as z from "zod";
import { type Infer, lazy } from "./lazy.js";
import { customFieldValuesInput } from "./parties.js";
import {
  IDS_QUERY_MAX_LENGTH,
  QUERY_UUID,
  blankAsNull,
  documentedAs,
  isoDate,
  nullMeansAbsent,
  optionalText,
  pageQuery,
  requiredText,
  text,
  uuid,
} from "./common.js";
import { percentInput, quantityInput, signedMoneyInput } from "./amounts.js";

/** Building blocks shared by the document schemas (spec part 2). */

/**
 * The most lines any document can hold: an estimate's create limit (spec part 1, section 8), which
 * a sales order or invoice converted from it keeps. An update's `lines` may hold up to the larger
 * of the kind's create limit and the document's current line count (architecture section 8,
 * "What you read you can write back"); the schema bounds it here, the service per document.
 */
export const MAX_DOCUMENT_LINES = 500;

/**
 * The bound of an update's `lines` in the schema: a GET of a full document shows its generated
 * discount line beyond `MAX_DOCUMENT_LINES`, and a body sent back as read holds it too. The
 * write-back drops it before validation counts (`lib/http/write-back.ts`), and the service
 * holds the real limit (`assertUpdateLineCount`, 422 `too_many` on `lines`).
 */
export const MAX_UPDATE_LINE_ENTRIES = MAX_DOCUMENT_LINES + 1;

/**
 * The schema's refusal of an update's `lines` past `MAX_UPDATE_LINE_ENTRIES`, in the words of the
 * service's own limit (`assertUpdateLineCount`): the kind's create limit, or the lines the
 * document holds when more.
 */
export const updateLinesMessage = (createLimit: number): string =>
  createLimit >= MAX_DOCUMENT_LINES
    ? `must have at most ${createLimit} entries (a sent-back discount line aside).`
    : `must have at most ${createLimit} entries (${createLimit}, or as many lines as the document holds when it holds more).`;

/** What an update's `lines` description says of the extra entry. */
export const DISCOUNT_ENTRY_NOTE = "Room for a sent-back discount line (dropped).";

/** The `lines` of an update: 1 to max(`createLimit`, the document's current line count). */
export const updateLinesOf = <T extends z.ZodType>(line: T, createLimit: number, description: string) =>
  z
    .array(line)
    .min(1)
    .max(MAX_UPDATE_LINE_ENTRIES, updateLinesMessage(createLimit))
    .optional()
    .meta({
      description: `${description} At most ${createLimit} lines, or as many as the document holds now when it holds more (a document converted from a long estimate). ${DISCOUNT_ENTRY_NOTE}`,
    });

/** A four-decimal money string in responses. */
export const moneyOut = lazy(() =>
  z
    .string()
    .regex(/^-?\d+\.\d{4}$/)
    .meta({ id: "Money", description: "Money: four decimals", example: "12.5000" }),
);
/** A three-decimal percentage in responses. */
export const rateOut = lazy(() =>
  z
    .string()
    .regex(/^-?\d+\.\d{3}$/)
    .meta({ id: "Rate", description: "Percent: three decimals", example: "8.250" }),
);
export const dateOut = lazy(() => z.string().nullable().meta({ format: "date", description: "YYYY-MM-DD" }));
export const timestampOut = lazy(() => z.string().nullable().meta({ format: "date-time" }));
export const nullableText = lazy(() => z.string().nullable());

/** `custom_field_values` in responses. */
export const customFieldValuesOut = lazy(() => z.array(z.object({ custom_field_id: z.string(), value: z.string() }).meta({ id: "CustomFieldValue" })));
/** `custom_field_values` in requests: a complete replacement. */
export const customFieldValuesIn = lazy(() => customFieldValuesInput(100));

/** The `party` object of detail responses: the counterparty's contact and addresses. */
export const partyOut = lazy(() =>
  z
    .object({
      account_number: z.string().nullable(),
      phone: z.string().nullable(),
      email: z.string().nullable(),
      billing_address: z.array(z.string()),
      shipping_address: z.array(z.string()),
    })
    .meta({ id: "DocumentParty", description: "The counterparty: its account number, phone, email and address lines (ordered, non-empty)." }),
);

// ---------------------------------------------------------------------------------------------
// Inputs: the fields several kinds' create and update bodies share, in the same order (each
// kind spreads them where they stand, so the OpenAPI properties keep their order). These and the
// response fragments below are plain builders, called only inside a kind's `lazy` schema.

/**
 * The fields of a line input (estimates, sales orders, invoices, purchase orders): the item and
 * stock row (the stock row described per kind), name, description, quantity, the kind's `price`
 * field, then `tax_rate` and `tax_2_rate`, which default to the counterparty's (`party`) rates.
 */
export const lineInputFields = <P extends z.core.$ZodLooseShape>(
  party: "customer" | "supplier",
  price: P,
  describe: { item_variation_location_id: string; item_id?: string; description?: string },
) => ({
  item_id: nullMeansAbsent(uuid()).meta({
    description: describe.item_id ?? "Inventory lines: an active item of the account. Omit it (or send null, as GET shows it) for a service line.",
  }),
  item_variation_location_id: nullMeansAbsent(z.int().min(1).max(2_147_483_647)).meta({ description: describe.item_variation_location_id }),
  item_variation_id: nullMeansAbsent(uuid()).meta({ description: "Or the variation: the line uses its row where the line is placed (made if new)" }),
  name: nullMeansAbsent(requiredText(255)).meta({
    description: "Required on service lines. An inventory line takes its item's name; if sent, its current name or the item's.",
  }),
  description: optionalText(4000).meta({
    description: describe.description ?? 'Omitted on an inventory line, the item\'s description applies; null or "" clears it.',
  }),
  quantity: quantityInput({ positive: true, description: "Positive, at most 4 decimals; default 1; unique items always 1" }).optional(),
  ...price,
  tax_rate: percentInput()
    .optional()
    .meta({ description: `0 to 100; defaults to the ${party}'s primary tax rate` }),
  tax_2_rate: percentInput()
    .optional()
    .meta({ description: `0 to 100; defaults to the ${party}'s secondary tax rate` }),
});

/** A line of an update body: an optional `id` (an existing line to keep and update; omitted, a new line), then the kind's line fields. */
export const lineUpdateOf = <T extends z.core.$ZodLooseShape>(
  id: string,
  fields: T,
  description = "An existing line to keep (and update); omit to add a line.",
) => z.strictObject({ id: uuid().optional().meta({ description }), ...fields }).meta({ id });

/**
 * The first header inputs of estimates, sales orders, invoices and purchase orders: `name` and
 * `issue_date` (whose default is today in the user's zone, else the account's; `account` for a
 * purchase order: spec 4.1 "today in the user's account timezone").
 */
export const headerStartIn = (today: "user" | "account" = "user") => ({
  name: optionalText(255),
  issue_date: isoDate()
    .optional()
    .meta({ description: today === "user" ? "Default: today in the user's time zone (else the account's)" : "Default: today in the account's time zone" }),
});

/** A header's `attention`, `shipping_address` and `public_note` inputs (as `headerNotesOut` shows them). */
export const headerNotesIn = () => ({ attention: optionalText(255), shipping_address: optionalText(1000), public_note: optionalText(4000) });

// ---------------------------------------------------------------------------------------------
// Response fragments: the runs of fields several kinds show in the same order.

/** The first fields of a stored line in responses: its id, object name, and item and stock row. */
export const lineHeadOut = <O extends string>(object: O) => ({ id: uuid(), object: z.literal(object), ...lineItemOut() });

/** A line's `item_id` and `item_variation_location_id` in responses. */
export const lineItemOut = () => ({ item_id: z.string().nullable(), item_variation_location_id: z.int().min(1).nullable() });

/** How a line's item shows in responses (estimates, sales orders, invoices): unit, SKU, variation, location, thumbnail. */
export const lineItemDetailsOut = () => ({
  unit_name: nullableText(),
  sku: nullableText(),
  variation_values: z.record(z.string(), z.string()),
  variation_number: z.int().min(1).nullable(),
  location_name: nullableText(),
  thumbnail_url: nullableText(),
});

/** A header's `attention`, `shipping_address` and `public_note` in responses. */
export const headerNotesOut = () => ({ attention: nullableText(), shipping_address: nullableText(), public_note: nullableText() });

/** A document's totals in responses. */
export const totalsOut = () => ({ subtotal: moneyOut(), shipping_fee: moneyOut(), tax: moneyOut(), tax_2: moneyOut(), total: moneyOut() });

/** The detail-only fields of purchase orders and sales orders: the party, the discount, tax labels and `can_edit`. */
export const discountDetailOut = () => ({
  party: partyOut(),
  discount_percent: rateOut(),
  pre_discount_total: moneyOut(),
  discount_total: moneyOut(),
  tax_label: nullableText(),
  tax_2_label: nullableText(),
  can_edit: z.boolean(),
});

/** `created_at` and `updated_at` in responses. */
export const timestampsOut = () => ({ created_at: timestampOut(), updated_at: timestampOut() });

/**
 * A payment or refund of an invoice or purchase order in responses; `card` differs by kind. An
 * invoice payment has exactly the fields spec part 2 section 2.5 lists ("Only these fields are
 * returned": no `object`, as for fulfillments); a purchase-order payment, which the spec does not
 * close, carries `object` as every record does (part 1 section 2.1).
 */
export const paymentOut = (id: string, parent: "invoice_id" | "purchase_order_id", card: z.ZodType) =>
  z
    .object({
      id: uuid(),
      ...(parent === "purchase_order_id" ? { object: z.literal("payment") } : {}),
      [parent]: uuid(),
      amount: moneyOut().meta({ description: "Signed: payments positive, refunds negative" }),
      type: z.enum(["payment", "refund"]),
      // Spec part 2: a purchase-order payment's reference is a string ("" when none), an invoice payment's a string or null.
      reference: parent === "purchase_order_id" ? z.string() : z.string().nullable(),
      payment_date: dateOut(),
      card,
    })
    .meta({ id });

/**
 * A payment's fields. Zero is a payment of an invoice (spec part 2, section 2.5: `payment` for
 * non-negative amounts; it settles an invoice whose total is 0) and refused on a purchase order
 * (section 2.1: payments positive, refunds negative).
 */
export const paymentFields = (zero: "payment" | "refused") => ({
  amount:
    zero === "payment"
      ? signedMoneyInput().meta({
          description: "Signed amount: zero or positive records a payment, negative a refund; at most 12 integer digits and 4 decimals",
          example: "250.0000",
        })
      : signedMoneyInput()
          .refine((value) => Number(value) !== 0, "must not be zero")
          .meta({ description: "Signed amount: positive records a payment, negative a refund; at most 12 integer digits and 4 decimals", example: "250.0000" }),
  reference: optionalText(255),
  payment_date: blankAsNull(isoDate()),
});

/** Payments and refunds of purchase orders. */
export const paymentBody = lazy(() => z.strictObject(paymentFields("refused")).meta({ id: "PaymentCreate" }));
export type PaymentBody = Infer<typeof paymentBody>;

/** The status ids of each document kind, with their names (architecture section 4). */
export const STATUS_IDS = {
  estimate: { 5: "Open", 6: "Closed", 7: "Declined", 8: "Expired" },
  invoice: { 9: "Sent", 10: "Partially Paid", 11: "Paid", 12: "Cancelled" },
  purchase_order: { 21: "Not Sent", 22: "Sent", 23: "Partially Received", 24: "Received" },
  stock_transfer: { 26: "Pending", 27: "In Transit", 28: "Transferred" },
  sales_order: { 29: "Open", 30: "Closed", 31: "Cancelled" },
} as const;
export type StatusKind = keyof typeof STATUS_IDS;
const statusIdsOf = (kind: StatusKind) => Object.keys(STATUS_IDS[kind]).map(Number);
const statusNames = (kind: StatusKind) =>
  Object.entries(STATUS_IDS[kind])
    .map(([id, name]) => `${id} ${name}`)
    .join(", ");

/** A document's `status_id` in responses: one of its kind's ids. */
export const statusIdOut = (kind: StatusKind, description = statusNames(kind)) =>
  z
    .int()
    .min(Math.min(...statusIdsOf(kind)))
    .max(Math.max(...statusIdsOf(kind)))
    .meta({ description, enum: statusIdsOf(kind) });

/** The `status_id` filter of a kind's list: one of its ids (another is 422 invalid_query_parameter). */
export const statusIdQuery = (kind: StatusKind) =>
  z
    .string()
    .regex(/^\d{1,3}$/, "must be an integer")
    .refine((value) => statusIdsOf(kind).includes(Number(value)), `must be one of ${statusIdsOf(kind).join(", ")}`)
    .optional()
    .meta({ description: `Only documents with this status: ${statusNames(kind)}.`, ...documentedAs({ schema: { type: "integer", enum: statusIdsOf(kind) } }) });

/** Date-range filters of document lists. */
export const dateFilter = (description: string) => isoDate().optional().meta({ description, format: "date" });

/** The `issue_date_from` and `issue_date_to` filters of a document list. */
export const issueDateFilters = () => ({
  issue_date_from: dateFilter("Issue date on or after (inclusive)"),
  issue_date_to: dateFilter("Issue date on or before (inclusive)"),
});

/** The `expiry_date_from` and `expiry_date_to` filters of estimate and sales-order lists. */
export const expiryDateFilters = () => ({
  expiry_date_from: dateFilter("Expiry date on or after (inclusive)"),
  expiry_date_to: dateFilter("Expiry date on or before (inclusive)"),
});

/** Query of a document list: paging, `ids`, `q` (each kind adds its `status_id` and filters). */
export const documentListQuery = lazy(() =>
  pageQuery().extend({
    ids: z
      .string()
      .max(IDS_QUERY_MAX_LENGTH)
      .optional()
      .meta({
        description: "Up to 50 comma-separated UUIDs: every visible existing one, in one response (an absent id no longer exists or is not visible).",
        ...documentedAs({ schema: { type: "array", items: QUERY_UUID, minItems: 1, maxItems: 50 }, explode: false }),
      }),
    q: text(255).optional(),
  }),
);
