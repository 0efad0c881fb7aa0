import { QueryCommand } from "@aws-sdk/lib-dynamodb";
import { getDocumentClient } from "./client.js";
import { pagesOf } from "./pages.js";
import { LISTING_FACTS, LISTING_NAMES, tableName } from "./table.js";

/**
 * The list indexes (`lx1`..`lx7` in `lib/db/table.ts`), shared by every list that filters:
 * a record writes, next to its own attributes, one sparse partition key per filter it can be
 * found by (`lx<n>pk`, e.g. `<account>#invoice#p#<customer>`), a sort key (`lxsk`, the list's
 * order) and `lxf`, a compact JSON text of every value its lists filter on (and `lxn`, the
 * part of it a text search needs, for `lx1`, every record of the kind). The indexes project
 * only the keys and `lxf`, so a list reads the entries of the most selective partition (a few
 * hundred bytes each, never the records), applies every other filter to `lxf`, counts the
 * matches (`total_records`) and then reads only the page's records.
 *
 * Records written before a list index existed lack its attributes until their next write (see
 * the README, "Lists").
 */
export type ListIndex = "lx1" | "lx2" | "lx3" | "lx4" | "lx5" | "lx6" | "lx7";

/** One entry of a list index: the record's table key and its facts. */
export interface ListEntry<F> {
  pk: string;
  sk: string;
  facts: F;
}

/** A partition of a list index, optionally a range of its sort key (inclusive). */
export interface ListPartition {
  index: ListIndex;
  pk: string;
  from?: string;
  to?: string;
}

const sortKeyOf = (index: ListIndex) => (index === "lx7" ? "lx7sk" : "lxsk");

/**
 * Entries of one partition in sort-key order (descending with `descending`), from `cursor`,
 * at most `limit` (every one without). Eventually consistent, like every index read.
 */
export async function readListEntries<F>(partition: ListPartition, options: { descending?: boolean; limit?: number } = {}): Promise<ListEntry<F>[]> {
  const { index, pk, from, to } = partition;
  const names: Record<string, string> = { "#pk": `${index}pk` };
  const values: Record<string, unknown> = { ":pk": pk };
  let condition = "#pk = :pk";
  // One bound is a one-sided condition: DynamoDB refuses an empty string as a key value, and
  // BETWEEN a bound above the other (an empty range, nothing to read).
  if (from !== undefined && to !== undefined && from > to) return [];
  if (from !== undefined || to !== undefined) names["#sk"] = sortKeyOf(index);
  if (from !== undefined) values[":from"] = from;
  if (to !== undefined) values[":to"] = to;
  if (from !== undefined && to !== undefined) condition += " AND #sk BETWEEN :from AND :to";
  else if (from !== undefined) condition += " AND #sk >= :from";
  else if (to !== undefined) condition += " AND #sk <= :to";
  const entries: ListEntry<F>[] = [];
  const pages = pagesOf((start) =>
    getDocumentClient().send(
      new QueryCommand({
        TableName: tableName(),
        IndexName: index,
        KeyConditionExpression: condition,
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: values,
        ScanIndexForward: !options.descending,
        ExclusiveStartKey: start,
        Limit: options.limit === undefined ? undefined : Math.min(1000, options.limit - entries.length),
      }),
    ),
  );
  for await (const items of pages) {
    for (const item of items) {
      entries.push({
        pk: item.pk as string,
        sk: item.sk as string,
        facts: JSON.parse((item[index === "lx1" ? LISTING_NAMES : LISTING_FACTS] as string | undefined) ?? "{}") as F,
      });
    }
    if (options.limit !== undefined && entries.length >= options.limit) break;
  }
  return entries;
}

/** Entries of several partitions, read in parallel. */
export async function readListPartitions<F>(partitions: readonly ListPartition[], options: { descending?: boolean } = {}): Promise<ListEntry<F>[]> {
  return (await Promise.all(partitions.map((partition) => readListEntries<F>(partition, options)))).flat();
}

/** The compact JSON of facts (absent values left out). */
export const factsText = (facts: Record<string, unknown>): string =>
  JSON.stringify(Object.fromEntries(Object.entries(facts).filter(([, value]) => value !== undefined && value !== null && value !== "")));
