import { QueryCommand } from "@aws-sdk/lib-dynamodb";
import { getDocumentClient } from "./client.js";
import { pagesOf } from "./pages.js";
import { readToOffset } from "./offset-page.js";
import { tableName } from "./table.js";
import { isCutNameKey } from "../core/name-keys.js";

/**
 * The name indexes `nx1` and `nx2` (`lib/db/table.ts`): the partitions of `gsi1` and `gsi2`
 * sorted by `nameKey`, projecting only the entity, ids, searched keys, number and status flags
 * (about 200 bytes an entry). A name-ordered list (parties, items) reads them to skip a deep
 * page's offset and to match a text search, then reads only the page's records: with
 * ElectroDB's own Query on the full index from the page's first name on, or by key.
 *
 * A partition of `gsi1` may hold several entities (items, contacts and locations share the
 * account's): an entry names its entity, and every read keeps only the one it lists.
 */
export interface NameEntry {
  partyId?: string;
  itemId?: string;
  nameKey: string;
  emailKey?: string;
  skuKey?: string;
  number?: number;
  archived?: boolean;
  sold?: boolean;
}

/** The partition an ElectroDB query of `gsi1` or `gsi2` reads (its `.params()`), and the entity it lists. */
export interface NamePartition {
  index: "gsi1" | "gsi2";
  pk: string;
  entity: string;
}

/** The name partition of an ElectroDB index query: its index and partition key value, from its parameters. */
export function namePartitionOf(params: object, entity: string): NamePartition {
  const { IndexName: index, ExpressionAttributeValues: values } = params as { IndexName?: string; ExpressionAttributeValues?: Record<string, unknown> };
  const pk = values?.[":pk"];
  if ((index !== "gsi1" && index !== "gsi2") || typeof pk !== "string") throw new Error(`no name index for ${String(index)}`);
  return { index, pk, entity };
}

/**
 * The name entries of a partition in name order that `keep` keeps; at most `limit` of them
 * (every one without). Asks for no more entries than are still wanted, so a deep page never
 * reads past its offset. Eventually consistent, like every index read.
 */
export async function readNameEntries(partition: NamePartition, options: { keep?: (entry: NameEntry) => boolean; limit?: number } = {}): Promise<NameEntry[]> {
  const entries: NameEntry[] = [];
  const pages = pagesOf((start) =>
    getDocumentClient().send(
      new QueryCommand({
        TableName: tableName(),
        IndexName: partition.index === "gsi1" ? "nx1" : "nx2",
        KeyConditionExpression: "#pk = :pk",
        ExpressionAttributeNames: { "#pk": `${partition.index}pk` },
        ExpressionAttributeValues: { ":pk": partition.pk },
        ExclusiveStartKey: start,
        // Each entry read keeps at most one: asking for what is still wanted never overshoots.
        Limit: options.limit === undefined ? undefined : Math.min(1000, options.limit - entries.length),
      }),
    ),
  );
  for await (const items of pages) {
    for (const item of items) {
      if (item.__edb_e__ !== partition.entity) continue;
      const entry = item as unknown as NameEntry;
      if (options.keep && !options.keep(entry)) continue;
      entries.push(entry);
    }
    if (options.limit !== undefined && entries.length >= options.limit) break;
  }
  return entries;
}

/**
 * The entries of a text search that match: those `matchesKeys` keeps, and those whose name key
 * is cut short (`isCutNameKey`: a long multi-byte name) and whose whole name, read from the
 * record (`wholeNames`, by id), holds `needle`. Such names are rare: the extra read is of
 * those entries only, and only when a search runs.
 */
export async function keepTextMatches(
  entries: readonly NameEntry[],
  needle: string | undefined,
  matchesKeys: (entry: NameEntry) => boolean,
  id: (entry: NameEntry) => string,
  wholeNames: (ids: string[]) => Promise<Map<string, string>>,
): Promise<NameEntry[]> {
  const unsure = needle === undefined ? [] : entries.filter((entry) => !matchesKeys(entry) && isCutNameKey(entry.nameKey));
  const names = unsure.length === 0 ? new Map<string, string>() : await wholeNames(unsure.map(id));
  return entries.filter((entry) => matchesKeys(entry) || Boolean(names.get(id(entry))?.toLowerCase().includes(needle!)));
}

/** Entries in list order: by name key, then by id (the full index's sort key). */
export function byNameThenId(id: (entry: NameEntry) => string | undefined) {
  return (a: NameEntry, b: NameEntry): number => {
    if (a.nameKey !== b.nameKey) return a.nameKey < b.nameKey ? -1 : 1;
    const [x, y] = [id(a) ?? "", id(b) ?? ""];
    return x < y ? -1 : x > y ? 1 : 0;
  };
}

/**
 * The records at positions [offset, offset + limit) of a name-ordered list among those `keep`
 * keeps. A deep page reads `offset` name entries (never a record) to find the name at the
 * page's start, then `fetchFrom` (the list's Query on the full index, with the same filter,
 * from that name on) reads the page: the entries of that name before the page (a name shared
 * by several records) are skipped there, as the name index does not order them by id. Page 1
 * reads the full index alone.
 */
export async function readNamePage<T>(
  partition: NamePartition,
  offset: number,
  limit: number,
  keep: ((entry: NameEntry) => boolean) | undefined,
  fetchFrom: (nameKey: string | undefined, cursor: string | null, want: number) => Promise<{ data: T[]; cursor: string | null }>,
): Promise<T[]> {
  if (offset === 0) return readToOffset(0, limit, (cursor, want) => fetchFrom(undefined, cursor, want));
  const skipped = await readNameEntries(partition, { keep, limit: offset });
  if (skipped.length < offset) return [];
  const boundary = skipped[offset - 1]!.nameKey;
  // Every skipped entry sorts at or before the boundary: those of another name are before it.
  const before = skipped.filter((entry) => entry.nameKey !== boundary).length;
  return readToOffset(offset - before, limit, (cursor, want) => fetchFrom(boundary, cursor, want));
}
