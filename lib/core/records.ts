import { canonicalJson } from "./idempotency.js";

/**
 * Whether a record after a write would equal the stored one but for the `ignored` attributes
 * (those a write moves by itself, such as `updatedAt`): key order, undefined values and empty
 * lists aside.
 * A write that changes nothing then writes nothing (architecture section 8, "What you read you
 * can write back ... changes nothing").
 */
export function sameRecord(stored: object, next: object, ignored: ReadonlySet<string>): boolean {
  // An empty list and no list are the same stored value (GET shows both as []).
  const essence = (record: object) =>
    Object.fromEntries(Object.entries(record).filter(([key, value]) => !ignored.has(key) && !(Array.isArray(value) && value.length === 0)));
  return canonicalJson(essence(stored)) === canonicalJson(essence(next));
}

/** The attribute every record's write moves by itself. */
export const UPDATED_AT: ReadonlySet<string> = new Set(["updatedAt"]);

/** The key of a stock row (item, variation, location) in maps and index attributes. */
export const rowKeyOf = (row: { itemId: string; variationId: string; locationId: string }) => `${row.itemId}|${row.variationId}|${row.locationId}`;
