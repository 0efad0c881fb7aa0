import * as z from "zod";
import { SYNC_RESOURCES } from "../sync/classify.js";

/** `GET /sync` (spec part 1, sections 2.7 and 4.7). Parameters are checked by the sync domain (400s). */
export const syncQuery = z
  .looseObject({
    start: z.string().optional().meta({ description: "Only `now`: returns a sync_start checkpoint before a full download." }),
    since: z
      .string()
      .optional()
      .meta({ description: "ISO 8601 with an explicit zone (encode + as %2B), or epoch seconds (1-10 digits). Boundary second included; not in the future; at most 90 days old." }),
    cursor: z.string().optional().meta({ description: "A cursor or next_cursor from a previous response." }),
    resources: z
      .string()
      .optional()
      .meta({ description: `Comma-separated from ${SYNC_RESOURCES.join(", ")}; required with start or since, refused with cursor.` }),
    limit: z.string().optional().meta({ description: "1 to 500 (default 100): markers examined per page." }),
  })
  .meta({ description: "Exactly one of start, since, cursor. Unknown parameters (including modifiedSince) are 400." });

const resourceList = z.array(z.enum(SYNC_RESOURCES));

export const syncStart = z
  .object({ object: z.literal("sync_start"), resources: resourceList, retention_days: z.literal(90), cursor: z.string() })
  .meta({ id: "SyncStart" });

export const syncPage = z
  .object({
    object: z.literal("sync_page"),
    resources: resourceList,
    changes: z.array(z.object({ resource: z.enum(SYNC_RESOURCES), id: z.string(), operation: z.enum(["upsert", "delete"]) })),
    has_more: z.boolean(),
    next_cursor: z.string(),
  })
  .meta({ id: "SyncPage" });
