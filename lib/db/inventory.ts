import { readToOffset } from "./offset-page.js";
import { db, type ItemRecord, type ItemVariationItem, type StockHistoryItem, type StockJournalItem, type StockRowItem } from "./service.js";
import { writeTransaction, type CancellationReason, type TransactionEntities, type TransactionOp } from "./transactions.js";
import type { IdempotencyCompletion } from "../core/idempotency.js";

/** Storage of the inventory ledger. Only `lib/domain/inventory.ts` calls the writers here. */

export interface ItemTree {
  item: ItemRecord | undefined;
  variations: ItemVariationItem[];
  rows: StockRowItem[];
}

/** An item with its variations and stock rows, in ONE Query of its partition. */
export async function readItemTree(accountId: string, itemId: string): Promise<ItemTree> {
  const { data } = await db().collections.itemTree({ accountId, itemId }).go({ pages: "all", consistent: true });
  return {
    item: data.item[0],
    variations: [...data.itemVariation].sort((a, b) => a.variationNumber - b.variationNumber),
    rows: data.stockRow,
  };
}

export const rowKeyOf = (row: { itemId: string; variationId: string; locationId: string }) =>
  `${row.itemId}|${row.variationId}|${row.locationId}`;

/** Item records and specific stock rows, one BatchGetItem each (run in parallel). */
export async function readItemsAndRows(
  accountId: string,
  itemIds: readonly string[],
  rowKeys: readonly { itemId: string; variationId: string; locationId: string }[],
): Promise<{ items: ItemRecord[]; rows: StockRowItem[] }> {
  const [items, rows] = await Promise.all([
    itemIds.length === 0
      ? Promise.resolve({ data: [] as ItemRecord[] })
      : db().entities.item.get([...new Set(itemIds)].map((itemId) => ({ accountId, itemId }))).go({ consistent: true }),
    rowKeys.length === 0
      ? Promise.resolve({ data: [] as StockRowItem[] })
      : db()
          .entities.stockRow.get(rowKeys.map((key) => ({ accountId, ...key })))
          .go({ consistent: true }),
  ]);
  return { items: items.data, rows: rows.data };
}

export async function readInventorySequence(accountId: string): Promise<number> {
  const { data } = await db().entities.inventoryCounters.get({ accountId }).go({ consistent: true });
  return data?.ivlSeq ?? 0;
}

/** What one ledger transaction writes (computed by the ledger's pure planner). */
export interface LedgerWrite {
  accountId: string;
  items: { itemId: string; expectedVersion: number; stock: Record<string, unknown>; set?: Partial<ItemRecord>; add?: { adjustmentCount?: number } }[];
  /** `before`: the balances the row held when read (absent for a new row). */
  rows: { row: StockRowItem; isNew: boolean; before?: { onHand: number; reserved: number; incoming: number; inTransit: number } }[];
  history: StockHistoryItem[];
  /** The row sequence before and after, when rows are created. */
  sequence?: { from: number; to: number };
}

/**
 * The transaction items of a ledger write: each item conditioned on its `stockVersion`, each
 * existing row written with its computed balances on condition that it still holds the
 * balances it was read with (new rows: that they do not exist), history entries, and the row
 * sequence moved on condition that it is unchanged. Any concurrent change fails the write.
 */
export function ledgerOps(entities: TransactionEntities, write: LedgerWrite): TransactionOp[] {
  const ops: TransactionOp[] = [];
  for (const change of write.items) {
    let update = entities.item
      .patch({ accountId: write.accountId, itemId: change.itemId })
      .set({ ...change.set, stock: change.stock, stockVersion: change.expectedVersion + 1 });
    if (change.add) update = update.add(change.add);
    ops.push(update.where(({ stockVersion }, { eq }) => eq(stockVersion, change.expectedVersion)).commit());
  }
  for (const { row, isNew, before } of write.rows) {
    if (isNew || !before) {
      ops.push(entities.stockRow.create(row).commit());
      continue;
    }
    // The row must still hold the balances the plan started from (however it was read).
    ops.push(
      entities.stockRow
        .put(row)
        .where(({ onHand, reserved, incoming, inTransit }, { eq }) =>
          [eq(onHand, before.onHand), eq(reserved, before.reserved), eq(incoming, before.incoming), eq(inTransit, before.inTransit)].join(" AND "),
        )
        .commit(),
    );
  }
  for (const entry of write.history) ops.push(entities.stockHistory.create(entry).commit());
  if (write.sequence) {
    const { from, to } = write.sequence;
    ops.push(
      entities.inventoryCounters
        .update({ accountId: write.accountId })
        .set({ ivlSeq: to })
        .where(({ ivlSeq }, { eq, notExists }) => (from === 0 ? notExists(ivlSeq) : eq(ivlSeq, from)))
        .commit(),
    );
  }
  return ops;
}

/** Ops in one ledger write: what a caller must leave room for in its transaction. */
export const ledgerOpCount = (write: LedgerWrite) => write.items.length + write.rows.length + write.history.length + (write.sequence ? 1 : 0);

/**
 * Commits a ledger write alone or with the caller's own items (`extra`, placed first) and the
 * request's stored outcome. Returns null, or the cancellation reasons (indexes into
 * [...extra, ...ledger]).
 */
export async function commitLedgerWrite(
  write: LedgerWrite,
  extra: (entities: TransactionEntities) => TransactionOp[],
  outcome?: { completion: IdempotencyCompletion | undefined; body: unknown },
): Promise<CancellationReason[] | null> {
  return writeTransaction((entities) => [...extra(entities), ...ledgerOps(entities, write)], outcome);
}

export async function insertJournal(journal: StockJournalItem): Promise<void> {
  await db().entities.stockJournal.create(journal).go({ response: "none" });
}

export async function readJournal(accountId: string, journalId: string): Promise<StockJournalItem | undefined> {
  const { data } = await db().entities.stockJournal.get({ accountId, journalId }).go({ consistent: true });
  return data ?? undefined;
}

/** The op that marks a journal chunk applied: fails when it already was (exactly once). */
export function markChunkOp(entities: TransactionEntities, accountId: string, journalId: string, chunk: number): TransactionOp {
  return entities.stockJournal
    .patch({ accountId, journalId })
    .add({ appliedChunks: [chunk] })
    .where(({ appliedChunks }, { notContains }) => notContains(appliedChunks, chunk))
    .commit();
}

export async function markJournalApplied(accountId: string, journalId: string, at: string): Promise<void> {
  await db().entities.stockJournal.patch({ accountId, journalId }).set({ status: "applied", updatedAt: at }).go({ response: "none" });
}

/** History entries of one item and source type, newest first, up to `limit` after `offset`. */
export async function queryHistory(accountId: string, itemId: string, sourceType: string, offset: number, limit: number): Promise<StockHistoryItem[]> {
  return readToOffset<StockHistoryItem>(offset, limit, (cursor, want) =>
    db().entities.stockHistory.query.primary({ accountId, itemId, sourceType }).go({ cursor, order: "desc", limit: want }),
  );
}
