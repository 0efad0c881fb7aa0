import * as z from "zod";
import { lazy } from "./lazy.js";
import { SYNC_RESOURCES } from "../sync/classify.js";
import { documentedAs } from "./documented.js";

/**
 * `GET /sync` (spec part 1, sections 2.7 and 4.7). The parameters are checked by the sync
 * domain (400 `invalid_query_parameter`, never 422), so this schema accepts any text; the
 * document shows what each parameter takes.
 */
export const syncQuery = lazy(() =>
  z
    .looseObject({
      start: z
        .string()
        .optional()
        .meta({
          description: "Only `now`: returns a sync_start checkpoint before a full download.",
          ...documentedAs({ schema: { type: "string", enum: ["now"] } }),
        }),
      since: z
        .string()
        .optional()
        .meta({
          description:
            "ISO 8601 date and time with an explicit zone (Z, +hh, +hhmm or +hh:mm; encode + as %2B), extended or basic format, seconds optional and never fractional; or epoch seconds (1-10 digits). Boundary second included; not in the future (400); at most 90 days old (409 sync_full_refresh_required).",
          ...documentedAs({
            schema: {
              type: "string",
              pattern: "^(\\d{1,10}|\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}(:\\d{2})?(Z|[+-]\\d{2}(:?\\d{2})?)|\\d{8}T\\d{4}(\\d{2})?(Z|[+-]\\d{2}(\\d{2})?))$",
              examples: ["2026-11-01T00:00:00Z", "1793577600"],
            },
          }),
        }),
      cursor: z
        .string()
        .optional()
        .meta({ description: "A cursor or next_cursor from a previous response.", ...documentedAs({ schema: { type: "string", minLength: 1 } }) }),
      resources: z
        .string()
        .optional()
        .meta({
          description: `Comma-separated from ${SYNC_RESOURCES.join(", ")} (a repeated name counts once); required with start or since, refused with cursor (the cursor keeps the selection).`,
          ...documentedAs({ schema: { type: "array", items: { type: "string", enum: [...SYNC_RESOURCES] }, minItems: 1 }, explode: false }),
        }),
      limit: z
        .string()
        .optional()
        .meta({
          description: "Markers examined per page (a page may hold fewer matching changes, or none); outside 1-500 is 400.",
          ...documentedAs({ schema: { type: "integer", minimum: 1, maximum: 500, default: 100 } }),
        }),
    })
    .meta({ description: "Exactly one of start, since, cursor. Unknown parameters (including modifiedSince) are 400." }),
);

const resourceList = lazy(() => z.array(z.enum(SYNC_RESOURCES)).meta({ description: "The selected resources, sorted alphabetically" }));

export const syncStart = lazy(() =>
  z.object({ object: z.literal("sync_start"), resources: resourceList(), retention_days: z.literal(90), cursor: z.string() }).meta({ id: "SyncStart" }),
);

export const syncPage = lazy(() =>
  z
    .object({
      object: z.literal("sync_page"),
      resources: resourceList(),
      changes: z.array(z.object({ resource: z.enum(SYNC_RESOURCES), id: z.uuid(), operation: z.enum(["upsert", "delete"]) })),
      has_more: z.boolean(),
      next_cursor: z.string(),
    })
    .meta({ id: "SyncPage" }),
);
