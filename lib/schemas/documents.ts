import * as z from "zod";
import { type Infer, lazy } from "./lazy.js";
import { customFieldValueInput } from "./parties.js";
import { QUERY_UUID, blankAsNull, documentedAs, isoDate, optionalText, pageQuery, signedMoneyInput, text } from "./common.js";

/** Building blocks shared by the document schemas (spec part 2). */

/**
 * The most lines any document can hold: an estimate's create limit (spec part 1, section 8), which
 * a sales order or invoice converted from it keeps. An update's `lines` may hold up to the larger
 * of the kind's create limit and the document's current line count (architecture section 8,
 * "What you read you can write back"); the schema bounds it here, the service per document.
 */
export const MAX_DOCUMENT_LINES = 500;

/** The `lines` of an update: 1 to max(`createLimit`, the document's current line count). */
export const updateLinesOf = <T extends z.ZodType>(line: T, createLimit: number, description: string) =>
  z
    .array(line)
    .min(1)
    .max(MAX_DOCUMENT_LINES)
    .optional()
    .meta({
      description: `${description} At most ${createLimit} lines, or as many as the document holds now when it holds more (a document converted from a long estimate).`,
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
export const customFieldValuesIn = lazy(() =>
  z.array(customFieldValueInput()).max(100).meta({ description: "Complete replacement of the record's custom-field values" }),
);

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

/** Payments and refunds of purchase orders and invoices. */
export const paymentBody = lazy(() =>
  z
    .strictObject({
      amount: signedMoneyInput()
        .refine((value) => Number(value) !== 0, "must not be zero")
        .meta({ description: "Signed amount: positive records a payment, negative a refund; at most 12 integer digits and 4 decimals", example: "250.0000" }),
      reference: optionalText(255),
      payment_date: blankAsNull(isoDate()),
    })
    .meta({ id: "PaymentCreate" }),
);
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

/** Query of a document list: paging, `ids`, `q` (each kind adds its `status_id` and filters). */
export const documentListQuery = lazy(() =>
  pageQuery().extend({
    ids: z
      .string()
      .max(50 * 37)
      .optional()
      .meta({
        description: "Up to 50 comma-separated UUIDs: every visible existing one, in one response (an absent id no longer exists or is not visible).",
        ...documentedAs({ schema: { type: "array", items: QUERY_UUID, minItems: 1, maxItems: 50 }, explode: false }),
      }),
    q: text(255).optional(),
  }),
);
