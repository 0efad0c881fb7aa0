import { readToOffset } from "./offset-page.js";
import { db, type ItemRecord, type ItemVariationItem, type StockRowItem, type UnitItem } from "./service.js";
import { writeTransaction, type CancellationReason, type TransactionEntities, type TransactionOp } from "./transactions.js";
import type { IdempotencyCompletion } from "../core/idempotency.js";

type Outcome = { completion: IdempotencyCompletion | undefined; body: unknown };

/** Items storage (records, variations, counts); stock itself moves only through the ledger. */

export type StatusBucket = "items_00" | "items_01" | "items_10" | "items_11";
export const bucketOf = (item: Pick<ItemRecord, "archived" | "sold">): StatusBucket =>
  `items_${item.archived ? 1 : 0}${item.sold ? 1 : 0}` as StatusBucket;

export async function readInventoryCounters(accountId: string, consistent: boolean) {
  const { data } = await db().entities.inventoryCounters.get({ accountId }).go({ consistent });
  return data ?? undefined;
}

export async function readItem(accountId: string, itemId: string): Promise<ItemRecord | undefined> {
  const { data } = await db().entities.item.get({ accountId, itemId }).go({ consistent: true });
  return data ?? undefined;
}

/** Up to 100 items in ONE BatchGetItem (missing ones are absent). */
export async function readItems(accountId: string, itemIds: readonly string[]): Promise<ItemRecord[]> {
  if (itemIds.length === 0) return [];
  const { data } = await db()
    .entities.item.get([...new Set(itemIds)].map((itemId) => ({ accountId, itemId })))
    .go({ consistent: true });
  return data;
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

/**
 * Items at positions [offset, offset + limit) in name order among those the filter keeps: one
 * index Query that stops at the page's end (filtered-out items before it are read too).
 */
export async function queryItemPage(accountId: string, filter: ItemFilter, offset: number, limit: number): Promise<ItemRecord[]> {
  const filtered = !filter.includeArchived || !filter.includeSold;
  return readToOffset<ItemRecord>(offset, limit, (cursor, want) => {
    const query = db().entities.item.query.byName({ accountId });
    return (filtered ? query.where(statusFilter(filter) as never) : query).go({ cursor, limit: want });
  });
}

/**
 * Every item the filter keeps, of one category or of the account, whose name or SKU contains
 * `needle` or whose number is `number` (reads the whole scope).
 */
export async function searchItems(
  accountId: string,
  filter: ItemFilter,
  scope: { categoryId?: string; needle?: string; number?: number },
): Promise<ItemRecord[]> {
  const base = scope.categoryId
    ? db().entities.item.query.byCategory({ accountId, categoryKey: scope.categoryId })
    : db().entities.item.query.byName({ accountId });
  const { data } = await base
    .where((attributes, operations) => {
      const parts: string[] = [];
      const status = statusFilter(filter)(attributes as never, operations as never);
      if (status) parts.push(status);
      if (scope.needle) {
        const search = [operations.contains(attributes.nameKey, scope.needle), operations.contains(attributes.skuKey, scope.needle)];
        if (scope.number !== undefined) search.push(operations.eq(attributes.number, scope.number));
        parts.push(`(${search.join(" OR ")})`);
      }
      return parts.join(" AND ");
    })
    .go({ pages: "all" });
  return data;
}

export interface ItemReferences {
  categoryId?: string;
  unitId?: number;
  locationId?: string;
  customFieldIds: string[];
}

export type ItemReferenceFailure = { field: "category_id" | "unit_id" | "location_id" } | { field: "custom_field_values"; index: number };

function referenceChecks(entities: TransactionEntities, accountId: string, refs: ItemReferences) {
  const ops: TransactionOp[] = [];
  const meaning: ItemReferenceFailure[] = [];
  if (refs.categoryId) {
    ops.push(entities.itemCategory.check({ accountId, categoryId: refs.categoryId }).where(({ categoryId }, { exists }) => exists(categoryId)).commit());
    meaning.push({ field: "category_id" });
  }
  if (refs.unitId !== undefined) {
    ops.push(entities.unit.check({ accountId, unitId: refs.unitId }).where(({ unitId }, { exists }) => exists(unitId)).commit());
    meaning.push({ field: "unit_id" });
  }
  if (refs.locationId) {
    ops.push(entities.location.check({ accountId, locationId: refs.locationId }).where(({ active }, { eq }) => eq(active, true)).commit());
    meaning.push({ field: "location_id" });
  }
  refs.customFieldIds.forEach((customFieldId, index) => {
    ops.push(entities.customField.check({ accountId, kind: "item", customFieldId }).where(({ customFieldId: id }, { exists }) => exists(id)).commit());
    meaning.push({ field: "custom_field_values", index });
  });
  return { ops, meaning };
}

export type ItemWriteResult = { ok: true } | { ok: false; conflict: boolean; references: ItemReferenceFailure[] };

function interpret(failed: CancellationReason[] | null, fixed: number, meaning: ItemReferenceFailure[]): ItemWriteResult {
  if (!failed) return { ok: true };
  const references = failed.filter((r) => r.index >= fixed).map((r) => meaning[r.index - fixed]!).filter(Boolean);
  return { ok: false, conflict: failed.some((r) => r.index < fixed), references };
}

/** Inserts an item numbered `expectedSequence + 1` with its variations, counted in its bucket. */
export async function insertItem(
  item: ItemRecord,
  variations: ItemVariationItem[],
  expectedSequence: number,
  refs: ItemReferences,
  outcome: Outcome,
): Promise<ItemWriteResult> {
  let meaning: ItemReferenceFailure[] = [];
  let fixed = 0;
  const failed = await writeTransaction((entities) => {
    const checks = referenceChecks(entities, item.accountId, refs);
    meaning = checks.meaning;
    const ops = [
      entities.inventoryCounters
        .update({ accountId: item.accountId })
        .set({ itemSeq: item.number })
        .add({ [bucketOf(item)]: 1 })
        .where(({ itemSeq }, { eq, notExists }) => (expectedSequence === 0 ? notExists(itemSeq) : eq(itemSeq, expectedSequence)))
        .commit(),
      entities.item.create(item).commit(),
      ...variations.map((variation) => entities.itemVariation.create(variation).commit()),
    ];
    fixed = ops.length;
    return [...ops, ...checks.ops];
  }, outcome);
  return interpret(failed, fixed, meaning);
}

/** Writes an item's new fields on condition that it is unchanged, moving its status count. */
export async function replaceItem(
  previous: ItemRecord,
  changes: { set: Partial<ItemRecord>; remove: (keyof ItemRecord)[] },
  refs: ItemReferences,
  outcome: Outcome,
): Promise<ItemWriteResult> {
  let meaning: ItemReferenceFailure[] = [];
  let fixed = 0;
  const next = { ...previous, ...changes.set };
  const failed = await writeTransaction((entities) => {
    const checks = referenceChecks(entities, previous.accountId, refs);
    meaning = checks.meaning;
    let update = entities.item.patch({ accountId: previous.accountId, itemId: previous.itemId }).set(changes.set as never);
    if (changes.remove.length > 0) update = update.remove(changes.remove as never);
    const ops = [update.where(({ updatedAt }, { eq }) => eq(updatedAt, previous.updatedAt)).commit()];
    if (bucketOf(previous) !== bucketOf(next)) {
      ops.push(
        entities.inventoryCounters
          .update({ accountId: previous.accountId })
          .add({ [bucketOf(previous)]: -1, [bucketOf(next)]: 1 })
          .commit(),
      );
    }
    fixed = ops.length;
    return [...ops, ...checks.ops];
  }, outcome);
  return interpret(failed, fixed, meaning);
}

/**
 * Deletes an item with its variations and stock rows in ONE transaction, on condition that it
 * is unchanged and no document references it. (History entries stay, as the audit trail.)
 */
export async function removeItem(
  item: ItemRecord,
  variations: ItemVariationItem[],
  rows: StockRowItem[],
  outcome: Outcome,
): Promise<ItemWriteResult> {
  const failed = await writeTransaction(
    (entities) => [
      entities.item
        .delete({ accountId: item.accountId, itemId: item.itemId })
        .where(({ updatedAt, documentCount, stockVersion }, { eq }) =>
          [eq(updatedAt, item.updatedAt), eq(documentCount, 0), eq(stockVersion, item.stockVersion)].join(" AND "),
        )
        .commit(),
      entities.inventoryCounters.update({ accountId: item.accountId }).add({ [bucketOf(item)]: -1 }).commit(),
      ...variations.map((v) => entities.itemVariation.delete({ accountId: item.accountId, itemId: item.itemId, variationId: v.variationId }).commit()),
      ...rows.map((r) =>
        entities.stockRow.delete({ accountId: item.accountId, itemId: item.itemId, variationId: r.variationId, locationId: r.locationId }).commit(),
      ),
    ],
    outcome,
  );
  return failed ? { ok: false, conflict: true, references: [] } : { ok: true };
}

export async function queryUnits(accountId: string): Promise<UnitItem[]> {
  const { data } = await db().entities.unit.query.primary({ accountId }).go({ pages: "all", consistent: true });
  return data;
}

export async function readUnit(accountId: string, unitId: number): Promise<UnitItem | undefined> {
  const { data } = await db().entities.unit.get({ accountId, unitId }).go({ consistent: true });
  return data ?? undefined;
}
