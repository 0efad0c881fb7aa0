import * as z from "zod";

/** Shared zod building blocks; the same schemas validate requests and document the API. */
/** A UUID, normalised to lower case (ids are stored lower case; any casing names the same record). */
export const uuid = z.uuid().toLowerCase().meta({ description: "UUID", example: "3f0c8f9e-6a53-4f0a-9a57-0b5e1b1c2d3e" });

/** A required, trimmed, non-empty string of at most `max` characters. */
export const requiredText = (max: number) => z.string().trim().min(1).max(max);
/** An optional string of at most `max` characters; null is accepted as "not given". */
export const optionalText = (max: number) => z.string().trim().max(max).nullish();

const integerText = z.string().regex(/^[-+]?\d{1,9}$/, "must be an integer");

/** `page` and `limit` of page-based lists (spec part 1, section 8): normalised, never rejected for range. */
export const pageQuery = z.object({
  page: integerText.optional().meta({ description: "Page number, default 1; values below 1 become 1." }),
  limit: integerText
    .optional()
    .meta({ description: "Page size, default 20; capped at 100, raised to 1." }),
});

export const errorBody = z
  .object({
    error: z.object({
      type: z.enum(["invalid_request_error", "authentication_error", "rate_limit_error", "api_error"]),
      code: z.string(),
      message: z.string(),
      param: z.string().optional(),
      details: z
        .array(z.object({ param: z.string(), code: z.string(), message: z.string() }))
        .optional(),
    }),
  })
  .meta({ id: "Error" });

/** The page-list envelope of spec part 1, section 2.1. */
export function listEnvelope<T extends z.ZodType>(item: T, id: string) {
  return z
    .object({
      object: z.literal("list"),
      url: z.string(),
      has_more: z.boolean(),
      data: z.array(item),
      pagination: z.object({
        page: z.int(),
        per_page: z.int(),
        total_pages: z.int(),
        total_records: z.int(),
      }),
    })
    .meta({ id });
}
