import { nowIso } from "../core/clock.js";
import { batchGetAll } from "./batch-get.js";
import { byNameThenId, keepTextMatches, namePartitionOf, readNameEntries, readNamePage, type NameEntry } from "./name-index.js";
import { db, type ItemRecord, type ItemVariationItem, type StockRowItem, type UnitItem } from "./service.js";
import { checkReferences, referenceDetails, type Reference } from "./references.js";
import { allocateNumber } from "./sequences.js";
import { writeTransaction, type Cancellation } from "./transactions.js";
import type { ValidationDetail } from "../core/errors.js";
import { isCutNameKey } from "../core/name-keys.js";
import type { IdempotencyCompletion } from "../core/idempotency.js";
import { isConditionalFailure } from "./dynamo-errors.js";

type Outcome = { completion: IdempotencyCompletion | undefined; body: unknown };

/** Items storage (records, variations, counts); stock itself moves only through the ledger. */

export type StatusBucket = "items_00" | "items_01" | "items_10" | "items_11";
export const bucketOf = (item: Pick<ItemRecord, "archived" | "sold">): StatusBucket => `items_${item.archived ? 1 : 0}${item.sold ? 1 : 0}` as StatusBucket;

export async function readInventoryCounters(accountId: string, consistent: boolean) {
  const { data } = await db().entities.inventoryCounters.get({ accountId }).go({ consistent });
  return data ?? undefined;
}

export async function readItem(accountId: string, itemId: string): Promise<ItemRecord | undefined> {
  const { data } = await db().entities.item.get({ accountId, itemId }).go({ consistent: true });
  return data ?? undefined;
}

/** Items by id, in BatchGetItems of 100 (all at once; missing ones are absent); `consistent: false` for display values (half the read units). */
export async function readItems(accountId: string, itemIds: readonly string[], options: { consistent?: boolean } = {}): Promise<ItemRecord[]> {
  const keys = [...new Set(itemIds)].map((itemId) => ({ accountId, itemId }));
  return batchGetAll("read items", keys, (chunk) =>
    db()
      .entities.item.get(chunk)
      .go({ consistent: options.consistent ?? true }),
  );
}

export interface ItemFilter {
  includeArchived: boolean;
  includeSold: boolean;
}

function statusFilter(filter: ItemFilter) {
  return ({ archived, sold }: { archived: never; sold: never }, { eq }: { eq: (a: never, v: boolean) => string }) => {
    const parts: string[] = [];
    if (!filter.includeArchived) parts.push(eq(archived, false));
    if (!filter.includeSold) parts.push(eq(sold, false));
    return parts.join(" AND ");
  };
}

/** The status filter over a name-index entry (its projected `archived` and `sold`). */
const keepsStatus = (filter: ItemFilter) => (entry: NameEntry) =>
  (filter.includeArchived || entry.archived !== true) && (filter.includeSold || entry.sold !== true);

/**
 * Items at positions [offset, offset + limit) in name order among those the filter keeps: a
 * deep page skips its offset over the name index (`lib/db/name-index.ts`, status flags
 * projected), then one index Query with the filter reads the page from there.
 */
export async function queryItemPage(accountId: string, filter: ItemFilter, offset: number, limit: number): Promise<ItemRecord[]> {
  const filtered = !filter.includeArchived || !filter.includeSold;
  const partition = namePartitionOf(db().entities.item.query.byName({ accountId }).params(), "item");
  return readNamePage<ItemRecord>(partition, offset, limit, filtered ? keepsStatus(filter) : undefined, (nameKey, cursor, want) => {
    const byName = db().entities.item.query.byName({ accountId });
    const query = nameKey === undefined ? byName : byName.gte({ nameKey });
    return (filtered ? query.where(statusFilter(filter) as never) : query).go({ cursor, limit: want });
  });
}

/**
 * The items the filter keeps, of one category or of the account, whose name or SKU contains
 * `needle` or whose number is `number`, in name order: matched over the scope's name-index
 * entries (ids, names, SKUs, number, status), never its records. `total`: every match;
 * `itemIds`: those of the page [offset, offset + limit), for the caller to read by key.
 */
export async function searchItemPage(
  accountId: string,
  filter: ItemFilter,
  scope: { categoryId?: string; needle?: string; number?: number },
  offset: number,
  limit: number,
): Promise<{ total: number; itemIds: string[] }> {
  const base = scope.categoryId
    ? db().entities.item.query.byCategory({ accountId, categoryKey: scope.categoryId })
    : db().entities.item.query.byName({ accountId });
  const status = keepsStatus(filter);
  const { needle, number } = scope;
  const matchesKeys = (entry: NameEntry) =>
    !needle || entry.nameKey.includes(needle) || Boolean(entry.skuKey?.includes(needle)) || (number !== undefined && entry.number === number);
  const entries = await readNameEntries(namePartitionOf(base.params(), "item"), {
    keep: (entry) => status(entry) && (matchesKeys(entry) || isCutNameKey(entry.nameKey)),
  });
  const matches = await keepTextMatches(
    entries,
    needle,
    matchesKeys,
    (entry) => entry.itemId!,
    async (ids) => new Map((await readItems(accountId, ids, { consistent: false })).map((item) => [item.itemId, item.name])),
  );
  const page = matches.sort(byNameThenId((entry) => entry.itemId)).slice(offset, offset + limit);
  return { total: matches.length, itemIds: page.map((entry) => entry.itemId!) };
}

export type ItemWriteResult = { ok: true } | { ok: false; conflict: boolean; references: ValidationDetail[] };

function interpret(cancellation: Cancellation | null): ItemWriteResult {
  if (!cancellation) return { ok: true };
  const references = referenceDetails(cancellation);
  return { ok: false, conflict: references.length === 0, references };
}

/**
 * Inserts an item numbered from the item sequence with its variations, counted in its status
 * bucket, with a ConditionCheck per reference, in ONE transaction; returns the number taken.
 */
export async function insertItem(
  item: Omit<ItemRecord, "number">,
  variations: ItemVariationItem[],
  references: readonly Reference[],
  outcome: (number: number) => Outcome,
): Promise<{ number: number; result: ItemWriteResult }> {
  const { number, cancellation } = await allocateNumber(item.accountId, "item", (next, claim) =>
    writeTransaction((tx) => {
      claim(tx, { [bucketOf(item)]: 1 });
      tx.add("item", tx.entities.item.create({ ...item, number: next } as ItemRecord).commit());
      for (const variation of variations) tx.add("variation", tx.entities.itemVariation.create(variation).commit());
      checkReferences(tx, item.accountId, references);
    }, outcome(next)),
  );
  return { number, result: interpret(cancellation) };
}

/** Writes an item's new fields on condition that it is unchanged, moving its status count. */
export async function replaceItem(
  previous: ItemRecord,
  changes: { set: Partial<ItemRecord>; remove: (keyof ItemRecord)[] },
  references: readonly Reference[],
  outcome: Outcome,
  options: { stockRules?: boolean } = {},
): Promise<ItemWriteResult> {
  const next = { ...previous, ...changes.set };
  // A change of the rules stock follows (`inventoryType`) is serialised with the stock changes:
  // on the stock as read, and moving `stockVersion`, so a ledger write planned under the old
  // rules fails its condition and plans again.
  const set = options.stockRules ? { ...changes.set, stockVersion: previous.stockVersion + 1 } : changes.set;
  const cancellation = await writeTransaction((tx) => {
    let update = tx.entities.item.patch({ accountId: previous.accountId, itemId: previous.itemId }).set(set as never);
    if (changes.remove.length > 0) update = update.remove(changes.remove as never);
    tx.add(
      "item",
      update
        .where(({ updatedAt, stockVersion }, { eq }) =>
          options.stockRules ? `${eq(updatedAt, previous.updatedAt)} AND ${eq(stockVersion, previous.stockVersion)}` : eq(updatedAt, previous.updatedAt),
        )
        .commit(),
    );
    if (bucketOf(previous) !== bucketOf(next)) {
      tx.add(
        "status counts",
        tx.entities.inventoryCounters
          .update({ accountId: previous.accountId })
          .add({ [bucketOf(previous)]: -1, [bucketOf(next)]: 1 })
          .commit(),
      );
    }
    checkReferences(tx, previous.accountId, references);
  }, outcome);
  return interpret(cancellation);
}

/**
 * Deletes an item with its variations and stock rows in ONE transaction, on condition that it
 * is unchanged (its `documentCount` too: the caller found no document referencing it). History
 * entries stay, as the audit trail.
 */
export async function removeItem(item: ItemRecord, variations: ItemVariationItem[], rows: StockRowItem[], outcome: Outcome): Promise<ItemWriteResult> {
  const cancellation = await writeTransaction((tx) => {
    const e = tx.entities;
    tx.add(
      "item",
      e.item
        .delete({ accountId: item.accountId, itemId: item.itemId })
        .where(({ updatedAt, documentCount, stockVersion, referenceTick }, { eq, notExists }) =>
          [
            eq(updatedAt, item.updatedAt),
            eq(documentCount, item.documentCount),
            eq(stockVersion, item.stockVersion),
            // No document write started referencing it since it was read (`touchItems`).
            item.referenceTick === undefined ? notExists(referenceTick) : eq(referenceTick, item.referenceTick),
          ].join(" AND "),
        )
        .commit(),
    );
    tx.add(
      "status counts",
      e.inventoryCounters
        .update({ accountId: item.accountId })
        .add({ [bucketOf(item)]: -1 })
        .commit(),
    );
    for (const v of variations)
      tx.add("variation", e.itemVariation.delete({ accountId: item.accountId, itemId: item.itemId, variationId: v.variationId }).commit());
    for (const r of rows) {
      tx.add("stock row", e.stockRow.delete({ accountId: item.accountId, itemId: item.itemId, variationId: r.variationId, locationId: r.locationId }).commit());
    }
  }, outcome);
  return cancellation ? { ok: false, conflict: true, references: [] } : { ok: true };
}

export async function queryUnits(accountId: string): Promise<UnitItem[]> {
  const { data } = await db().entities.unit.query.primary({ accountId }).go({ pages: "all", consistent: true });
  return data;
}

export async function readUnit(accountId: string, unitId: number): Promise<UnitItem | undefined> {
  const { data } = await db().entities.unit.get({ accountId, unitId }).go({ consistent: true });
  return data ?? undefined;
}

/** Inserts a unit of measure numbered from the unit sequence; returns its `unit_id`. */
export async function insertUnit(accountId: string, name: string): Promise<number> {
  const { number } = await allocateNumber(accountId, "unit", (unitId, claim) =>
    writeTransaction((tx) => {
      claim(tx);
      tx.add("unit", tx.entities.unit.create({ accountId, unitId, name, createdAt: nowIso() }).commit());
    }),
  );
  return number;
}

/** Selected variations (BatchGetItems of 100, all at once), for lines, component barcodes, SKUs and cost overrides. */
export async function readVariations(
  accountId: string,
  keys: readonly { itemId: string; variationId: string }[],
  options: { consistent?: boolean } = {},
): Promise<ItemVariationItem[]> {
  const unique = [...new Map(keys.map((k) => [`${k.itemId}|${k.variationId}`, { accountId, itemId: k.itemId, variationId: k.variationId }])).values()];
  return batchGetAll("read variations", unique, (chunk) =>
    db()
      .entities.itemVariation.get(chunk)
      .go({ consistent: options.consistent ?? true }),
  );
}

/** Ids of the items in a category (the partition of its name index): what a change of the category reaches. */
export async function itemIdsInCategory(accountId: string, categoryId: string): Promise<string[]> {
  const partition = namePartitionOf(db().entities.item.query.byCategory({ accountId, categoryKey: categoryId }).params(), "item");
  return (await readNameEntries(partition)).map((entry) => entry.itemId!);
}

/**
 * Stores `values` as the item's custom field values if it is unchanged since it was read (its
 * `updatedAt`, which the write keeps: no one edited the item); false when it changed meanwhile.
 */
export async function replaceItemFieldValues(item: ItemRecord, values: NonNullable<ItemRecord["customFieldValues"]>): Promise<boolean> {
  try {
    await db()
      .entities.item.patch({ accountId: item.accountId, itemId: item.itemId })
      .set({ customFieldValues: values })
      .where(({ updatedAt }, { eq }) => eq(updatedAt, item.updatedAt))
      .go({ response: "none" });
    return true;
  } catch (error) {
    if (!isConditionalFailure(error)) throw error;
    return false;
  }
}
