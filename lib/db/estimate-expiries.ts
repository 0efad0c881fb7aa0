import { QueryCommand } from "@aws-sdk/lib-dynamodb";
import { getDocumentClient } from "./client.js";
import { pagesOf } from "./pages.js";
import { isConditionalFailure } from "./dynamo-errors.js";
import { db, type DocumentItem } from "./service.js";
import { nowIso } from "../core/clock.js";
import { EXPIRY_INDEX, tableName } from "./table.js";

/**
 * The estimate expiry index (`ex1`, lib/db/table.ts). An estimate turns Expired by time alone
 * (its `expiryInstant` passes; nothing writes it), so without help the change feed would never
 * tell a sync client or a webhook receiver. An open estimate whose expiry moment is ahead of its
 * last write has an entry here (`ex1pk` = `estimate-expiry#` + the UTC day of the moment, `ex1sk`
 * = moment, account and id); the scheduled sweep (the stream processor's schedule) finds the
 * entries whose moment passed and removes each with a conditional update of the estimate, a
 * change of its item that the stream turns into the estimate's `upsert` marker.
 */

const PARTITION_PREFIX = "estimate-expiry#";
/** How many days back a sweep looks: it finds moments it missed while it did not run for up to a week. */
export const EXPIRY_SWEEP_DAYS = 7;

/** A header's expiry index keys: set on open estimates whose expiry moment is after their last write, else absent. */
export function estimateExpiryKeys(header: DocumentItem): { ex1pk?: string; ex1sk?: string } {
  const instant = header.expiryInstant;
  if (header.kind !== "estimate" || header.status !== "open" || header.convertedTo || !instant || instant <= header.updatedAt) return {};
  // An estimate that never expires (year 9999) stays out: no sweep will reach it.
  if (instant.startsWith("9999")) return {};
  return { ex1pk: `${PARTITION_PREFIX}${instant.slice(0, 10)}`, ex1sk: `${instant}#${header.accountId}#${header.documentId}` };
}

/** An entry whose moment passed: the estimate and its sort key. */
export interface PassedExpiry {
  accountId: string;
  documentId: string;
  sortKey: string;
}

/** The UTC days `days` back from `now`'s, oldest first (`YYYY-MM-DD`). */
function daysUpTo(now: string, days: number): string[] {
  const today = Date.parse(`${now.slice(0, 10)}T00:00:00.000Z`);
  return Array.from({ length: days }, (_, i) => new Date(today - (days - 1 - i) * 86_400_000).toISOString().slice(0, 10));
}

/** The entries whose moment is at or before `now` (at most `limit`, earliest first), from the last `EXPIRY_SWEEP_DAYS` days' partitions. */
export async function passedEstimateExpiries(now: string, limit = 500): Promise<PassedExpiry[]> {
  const found: PassedExpiry[] = [];
  for (const day of daysUpTo(now, EXPIRY_SWEEP_DAYS)) {
    const pages = pagesOf((start) =>
      getDocumentClient().send(
        new QueryCommand({
          TableName: tableName(),
          IndexName: EXPIRY_INDEX.indexName,
          KeyConditionExpression: "ex1pk = :pk AND ex1sk <= :now",
          ExpressionAttributeValues: { ":pk": `${PARTITION_PREFIX}${day}`, ":now": `${now}#~` },
          ExclusiveStartKey: start,
          Limit: limit - found.length,
        }),
      ),
    );
    for await (const items of pages) {
      for (const item of items) {
        const sortKey = String(item.ex1sk);
        const [instant, ...rest] = sortKey.split("#");
        const documentId = rest.pop();
        // The moment itself is compared, not its text with the suffix (`<= now#~` takes a moment equal to now).
        if (!documentId || instant! > now) continue;
        found.push({ accountId: rest.join("#"), documentId, sortKey });
      }
      if (found.length >= limit) break;
    }
    if (found.length >= limit) break;
  }
  return found;
}

/**
 * Takes an estimate out of the expiry index, on condition that its entry is still the one found
 * (a write since has moved or removed it: nothing to do). Its revision and `updated_at` stay:
 * nothing wrote the estimate, time made it Expired; the change still reaches the feed. Returns
 * whether it was taken out.
 */
export async function notePassedExpiry(entry: PassedExpiry): Promise<boolean> {
  try {
    await db()
      .entities.document.patch({ accountId: entry.accountId, documentId: entry.documentId })
      .remove(["ex1pk", "ex1sk"])
      .where((attributes, operations) => operations.eq(attributes.ex1sk, entry.sortKey))
      .go({ response: "none" });
    return true;
  } catch (error) {
    if (isConditionalFailure(error)) return false;
    throw error;
  }
}

/**
 * Puts the open estimates whose expiry moment is still ahead into the expiry index when they
 * are not in it: those written before the index existed (a table from an older version; run
 * once after the deploy that adds the index, `estimates index-expiries`, and by the local
 * stack when it adds the index to a DATA_DIR). A Scan of the table; each entry is a conditional
 * update (the estimate unchanged since the scan, not yet indexed), so a repeat or a parallel
 * write changes nothing twice. Each estimate it indexes gets one `upsert` marker (its item
 * changed). Returns how many it indexed.
 */
export async function indexOpenEstimateExpiries(now: string = nowIso()): Promise<number> {
  const { data } = await db()
    .entities.document.scan.where((attributes, operations) => `${operations.eq(attributes.kind, "estimate")} AND ${operations.eq(attributes.status, "open")}`)
    .go({ pages: "all", consistent: true });
  let indexed = 0;
  for (const header of data) {
    const keys = estimateExpiryKeys(header);
    if (!keys.ex1pk || !keys.ex1sk || header.expiryInstant! <= now) continue;
    try {
      await db()
        .entities.document.patch({ accountId: header.accountId, documentId: header.documentId })
        .set({ ex1pk: keys.ex1pk, ex1sk: keys.ex1sk })
        .where((attributes, operations) => `${operations.notExists(attributes.ex1sk)} AND ${operations.eq(attributes.revision, header.revision)}`)
        .go({ response: "none" });
      indexed++;
    } catch (error) {
      if (!isConditionalFailure(error)) throw error;
    }
  }
  return indexed;
}
