import * as z from "zod";
import { lazy } from "./lazy.js";
import { calendarDate, customFieldId, isoDate, listEnvelope, optionalText, pageQuery, requiredText, text, timestamp, uuid, blankAsNull } from "./common.js";
import { percentInput } from "./amounts.js";

/** Customers, prospects and suppliers (spec part 1, sections 2.6 and 4.4). */
export const PARTY_KINDS = ["customer", "prospect", "supplier"] as const;
export type PartyKind = (typeof PARTY_KINDS)[number];

/** The path word of each kind (`/api/v3/{kind}`), which is also its scope prefix. */
export const PARTY_COLLECTIONS: Record<PartyKind, string> = {
  customer: "customers",
  prospect: "prospects",
  supplier: "suppliers",
};

const text255 = lazy(() => optionalText(255));
const positiveId = lazy(() => z.int().min(1).max(2_147_483_647).nullish());
const taxRate = lazy(() => percentInput().nullish());

/**
 * The most UTF-8 bytes a record's custom field values take together: with the record's other
 * fields they must fit one DynamoDB item (400 KB). 25 values of 4,000 four-byte characters
 * would not; 30 values of 4,000 ASCII characters do.
 */
export const MAX_CUSTOM_FIELD_VALUE_BYTES = 128 * 1024;

/** A record's `custom_field_values` in a request: at most `max` values, together at most `MAX_CUSTOM_FIELD_VALUE_BYTES`. */
export const customFieldValuesInput = (max: number) =>
  z
    .array(customFieldValueInput())
    .max(max)
    .meta({
      description: `Replaces all; at most ${MAX_CUSTOM_FIELD_VALUE_BYTES / 1024} KB UTF-8`,
    });

export const customFieldValueInput = lazy(() =>
  z.strictObject({
    custom_field_id: customFieldId(),
    value: z.union([text(4000), z.number().min(-1e15).max(1e15), z.boolean()]).nullable(),
  }),
);

/** Writable fields shared by every kind. */
const commonWritable = lazy(() => ({
  name: requiredText(255),
  office_email: text255(),
  office_phone: text255(),
  office_fax: text255(),
  // Any valid http(s) URL (spec 2.6: "valid URL"): a single-label host, an IP address and a port too.
  url: blankAsNull(z.url({ protocol: /^https?$/ }).max(255)).meta({
    description: "A valid http(s) URL (any host: a name, localhost, an IP address; a port), max 255",
  }),
  billing_address_1: text255(),
  billing_address_2: text255(),
  billing_city: text255(),
  billing_region: text255(),
  billing_postal_code: text255(),
  billing_country: text255(),
  shipping_address_1: text255(),
  shipping_address_2: text255(),
  shipping_city: text255(),
  shipping_region: text255(),
  shipping_postal_code: text255(),
  shipping_country: text255(),
  billing_region_id: positiveId(),
  billing_country_id: positiveId(),
  shipping_region_id: positiveId(),
  shipping_country_id: positiveId(),
  tax_rate1: taxRate(),
  tax_rate2: taxRate(),
  customer_label_id: uuid().nullish().meta({ description: "A customer label of the account" }),
  custom_field_values: customFieldValuesInput(100).optional(),
}));

const customerProspectWritable = lazy(() => ({
  vat_number: optionalText(24),
  pricing_tier_id: uuid().nullish().meta({ description: "A pricing tier of the account" }),
}));

const prospectWritable = lazy(() => ({
  sale_opportunity: text255(),
  closing_percentage: z.int().min(0).max(100).nullish(),
  prospect_date: blankAsNull(isoDate()),
}));

const writableShape = lazy(
  () =>
    ({
      customer: { ...commonWritable(), ...customerProspectWritable() },
      prospect: { ...commonWritable(), ...customerProspectWritable(), ...prospectWritable() },
      supplier: { ...commonWritable() },
    }) satisfies Record<PartyKind, z.ZodRawShape>,
);

const titles: Record<PartyKind, string> = { customer: "Customer", prospect: "Prospect", supplier: "Supplier" };

export const partyCreateBody = (kind: PartyKind) => z.strictObject(writableShape()[kind]).meta({ id: `${titles[kind]}Create` });
export const partyUpdateBody = (kind: PartyKind) =>
  z
    .strictObject(writableShape()[kind])
    .partial()
    .meta({ id: `${titles[kind]}Update` });

export type PartyWriteBody = Partial<z.infer<ReturnType<typeof partyCreateBody>>> & {
  vat_number?: string | null;
  pricing_tier_id?: string | null;
  sale_opportunity?: string | null;
  closing_percentage?: number | null;
  prospect_date?: string | null;
};

const nullableText = lazy(() => z.string().nullable());
const customFieldValue = lazy(() => z.object({ custom_field_id: z.string(), value: z.string() }).meta({ id: "CustomFieldValue" }));

export function partyResource(kind: PartyKind) {
  const shape: Record<string, z.ZodType> = {
    id: uuid(),
    object: z.literal(kind),
    customer_number: z.int().min(1),
    name: z.string(),
    office_email: nullableText(),
    office_phone: nullableText(),
    office_fax: nullableText(),
    url: nullableText(),
    billing_address_1: nullableText(),
    billing_address_2: nullableText(),
    billing_city: nullableText(),
    billing_region: nullableText(),
    billing_postal_code: nullableText(),
    billing_country: nullableText(),
    shipping_address_1: nullableText(),
    shipping_address_2: nullableText(),
    shipping_city: nullableText(),
    shipping_region: nullableText(),
    shipping_postal_code: nullableText(),
    shipping_country: nullableText(),
  };
  if (kind !== "supplier") shape.vat_number = nullableText();
  shape.document_count = z.int().min(0);
  if (kind === "customer") {
    shape.last_invoice_date = calendarDate().nullable();
    shape.lifetime_revenue_total = nullableText();
  }
  shape.archived = z.boolean();
  if (kind !== "supplier") shape.pricing_tier_id = uuid().nullable();
  shape.owner_user_id = uuid().nullable();
  shape.custom_field_values = z.array(customFieldValue());
  shape.created_at = timestamp();
  shape.updated_at = timestamp();
  if (kind === "prospect") {
    shape.sale_opportunity = nullableText();
    shape.closing_percentage = z.int().min(0).max(100);
    shape.prospect_date = calendarDate().nullable();
  }
  return z.object(shape).meta({ id: titles[kind] });
}

export const partyList = (kind: PartyKind) => listEnvelope(partyResource(kind), `${titles[kind]}List`);

export const partyListQuery = lazy(() =>
  pageQuery().extend({
    q: text(255).optional().meta({ description: "Searches name and office email (case-insensitive); a number also matches the exact customer_number." }),
  }),
);

export const partyPath = lazy(() => z.object({ id: uuid() }));

export const deletedResource = (kind: PartyKind) =>
  z.object({ id: uuid(), object: z.literal(kind), deleted: z.literal(true) }).meta({ id: `Deleted${titles[kind]}` });
