import * as z from "zod";
import { lazy } from "./lazy.js";
import { documentedAs } from "./documented.js";
import { MAX_PAGE } from "../core/pagination.js";

export { IDS_QUERY_MAX_LENGTH, QUERY_UUID, documentedAs, type DocumentedParameter } from "./documented.js";

/**
 * Shared zod building blocks; the same schemas validate requests and document the API, so
 * every bound a field has is visible in the OpenAPI document. Every input field has one:
 * texts a length (and no NUL or unpaired surrogate), numbers a range and a precision, arrays
 * a count. Every schema here is `lazy` (./lazy.ts): call it to get it, built on first use;
 * the helpers that take arguments (`text(max)`...) build a new schema per call, from inside a
 * lazy schema.
 */

/** A UUID, normalised to lower case (ids are stored lower case; any casing names the same record). */
export const uuid = lazy(() => z.uuid().toLowerCase().meta({ id: "Uuid", description: "UUID", example: "3f0c8f9e-6a53-4f0a-9a57-0b5e1b1c2d3e" }));

/** Text without NUL characters or unpaired UTF-16 surrogates (neither can be stored or shown). */
// biome-ignore lint/suspicious/noControlCharactersInRegex: NUL is the character refused
export const SAFE_TEXT = /^[^\u0000\uD800-\uDFFF]*$/u;
const SAFE_TEXT_MESSAGE = "must not contain NUL characters or unpaired surrogates";

/** A trimmed string of at most `max` characters, safe to store. */
export const text = (max: number) => z.string().trim().max(max).regex(SAFE_TEXT, SAFE_TEXT_MESSAGE);
/**
 * A custom field's id in a request: trimmed and lowercased, as `uuid` is (ids are stored lower
 * case, and their keys match in any casing, so two casings of one id are one field). Any other
 * text is not refused here: it names no field, which the write reports as `invalid_reference`.
 */
export const customFieldId = () => text(64).min(1).toLowerCase();
/** A required, trimmed, non-empty string of at most `max` characters. */
export const requiredText = (max: number) => z.string().trim().min(1).max(max).regex(SAFE_TEXT, SAFE_TEXT_MESSAGE);
/**
 * Blank text, one rule for every resource (README, "Every route"): in an optional field, `""` or
 * a string of only whitespace is `null`: it clears the field, which reads back as `null`. A
 * required text field refuses it (422 `too_short`).
 */
const BLANK = lazy(() =>
  z
    .string()
    .regex(/^\s*$/)
    .transform(() => null)
    .meta({ id: "Blank", description: "Blank text (empty or only whitespace): the same as null, it clears the field." }),
);

/** An optional string of at most `max` characters, trimmed: `null` or blank clears it (reads back as null). */
export const optionalText = (max: number) =>
  text(max)
    .nullish()
    .transform((value) => (value === "" ? null : value))
    .optional();

/**
 * An optional field of another format (an email, a URL, a date...): `null` or blank text clears
 * it. Blank is tried first, so a format that takes any text (a timestamp parsed later) never
 * sees one.
 */
export const blankAsNull = <T extends z.ZodType>(schema: T) => z.union([BLANK(), schema.nullish()]).optional();

/** Whether `YYYY-MM-DD` is a real calendar date from 0001-01-01 (architecture section 8, "Dates"). */
export function isCalendarDate(value: string): boolean {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(value) || value.startsWith("0000")) return false;
  const date = new Date(`${value}T00:00:00Z`);
  return !Number.isNaN(date.getTime()) && date.toISOString().startsWith(value);
}

/** A calendar date `YYYY-MM-DD` that exists, from 0001-01-01 (a year 0000 date is refused). */
export const isoDate = lazy(() =>
  z
    .string()
    // A malformed date gets one detail, not also "not a real calendar date".
    .regex(/^\d{4}-\d{2}-\d{2}$/, { message: "must be a date YYYY-MM-DD", abort: true })
    .refine(isCalendarDate, "must be a real calendar date from 0001-01-01")
    .meta({ format: "date", example: "2026-11-23" }),
);

/**
 * An optional field whose GET shows `null` when unset (a service line's `item_id`): `null` is
 * accepted and means "not given", so a record read back is accepted as it was read.
 */
export const nullMeansAbsent = <T extends z.ZodType>(schema: T) =>
  schema
    .nullish()
    .transform((value): z.output<T> | undefined => value ?? undefined)
    .optional();

// Any integer, of at most 100 digits (a bound on the text): `normalizePage` brings it into range.
const integerText = lazy(() => z.string().regex(/^[-+]?\d{1,100}$/, "must be an integer (at most 100 digits)"));

/** A query integer as documented: any integer, with its default (the description says how it is normalised). */
const queryInteger = (defaultValue: number) => ({ type: "integer", default: defaultValue });

/**
 * `page` and `limit` of page-based lists (spec part 1, section 8): normalised, never rejected
 * for range (`page` below 1 is 1; `limit` above 100 is 100, below 1 is 1; however many digits).
 * Documented as integers with their defaults, not with the effective range as minimum/maximum:
 * a generated client would then refuse values the API accepts. Anything that is not an integer
 * (of at most 100 digits) is 422 invalid_query_parameter.
 */
export const pageQuery = lazy(() =>
  z.object({
    page: integerText()
      .optional()
      .meta({
        description: `Page number, default 1; values below 1 are treated as 1, values above ${MAX_PAGE.toLocaleString("en-US")} as that page (empty).`,
        ...documentedAs({ schema: queryInteger(1) }),
      }),
    limit: integerText()
      .optional()
      .meta({ description: "Page size, default 20; values above 100 are treated as 100, below 1 as 1.", ...documentedAs({ schema: queryInteger(20) }) }),
  }),
);

/** An ISO 8601 timestamp in a response (UTC, milliseconds). */
export const timestamp = lazy(() =>
  z.string().meta({ id: "Timestamp", format: "date-time", description: "ISO 8601 timestamp (UTC)", example: "2026-11-23T09:30:00.000Z" }),
);
/** A calendar date `YYYY-MM-DD` in a response. */
export const calendarDate = lazy(() => z.string().meta({ format: "date", example: "2026-11-23" }));

/** The body of an action that takes no input (cancel, decline, ...): an empty object, or none. */
export const emptyBody = lazy(() => z.strictObject({}).meta({ id: "EmptyBody" }));

export const errorBody = lazy(() =>
  z
    .object({
      error: z.object({
        type: z.enum(["invalid_request_error", "authentication_error", "rate_limit_error", "api_error"]),
        code: z.string(),
        message: z.string(),
        param: z.string().optional(),
        details: z
          .array(z.object({ param: z.string(), code: z.string(), message: z.string() }))
          .max(50)
          .optional(),
      }),
    })
    .meta({ id: "Error" }),
);

/** The `pagination` block of every page list: one shared schema in the OpenAPI document. */
const pagination = lazy(() =>
  z
    .object({
      page: z.int().min(1),
      per_page: z.int().min(0),
      total_pages: z.int().min(0),
      total_records: z.int().min(0),
    })
    .meta({ id: "Pagination" }),
);

/** The page-list envelope of spec part 1, section 2.1. */
export function listEnvelope<T extends z.ZodType>(item: T, id: string) {
  return z
    .object({
      object: z.literal("list"),
      url: z.string(),
      has_more: z.boolean(),
      data: z.array(item),
      pagination: pagination(),
    })
    .meta({ id });
}
