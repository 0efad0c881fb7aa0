import { rowKeyOf } from "../core/records.js";
import { QueryCommand } from "@aws-sdk/lib-dynamodb";
import { batchGetAll } from "./batch-get.js";
import { getDocumentClient } from "./client.js";
import { readItems, readVariations } from "./items.js";
import { isConditionalFailure } from "./dynamo-errors.js";
import { readToOffset } from "./offset-page.js";
import { tableName } from "./table.js";
import { db, type ItemRecord, type ItemVariationItem, type StockHistoryItem, type StockJournalItem, type StockRowItem } from "./service.js";
import { claimNumbers, readSequence, sequenceLabel } from "./sequences.js";
import { writeTransaction, type Cancellation, type TransactionBuilder } from "./transactions.js";
import type { IdempotencyCompletion } from "../core/idempotency.js";

/** Storage of the inventory ledger. Only `lib/domain/inventory/service.ts` calls the writers here. */

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

type RowKey = { itemId: string; variationId: string; locationId: string };

/** An item's line index (`ItemRecord.rowIndex`) with new rows added: `ivlId` -> `variationId|locationId`. */
export function withRows(index: unknown, rows: readonly Pick<StockRowItem, "ivlId" | "variationId" | "locationId">[]): Record<string, string> {
  const next = { ...(index as Record<string, string>) };
  for (const row of rows) next[String(row.ivlId)] = `${row.variationId}|${row.locationId}`;
  return next;
}

/** The rows an item's line index lists (absent for an item stored without one). */
function indexedRows(item: ItemRecord): (RowKey & { ivlId: number })[] | undefined {
  if (item.variationIds === undefined || item.rowIndex === undefined) return undefined;
  return Object.entries(item.rowIndex as Record<string, string>).map(([ivlId, key]) => {
    const [variationId, locationId] = key.split("|") as [string, string];
    return { itemId: item.itemId, variationId, locationId, ivlId: Number(ivlId) };
  });
}

/** Stock rows by key, in BatchGetItems of 100 (all at once); missing ones are absent. */
export async function batchReadRows(accountId: string, keys: readonly RowKey[], consistent: boolean): Promise<StockRowItem[]> {
  const unique = [...new Map(keys.map((k) => [rowKeyOf(k), { accountId, itemId: k.itemId, variationId: k.variationId, locationId: k.locationId }])).values()];
  return batchGetAll("read stock rows", unique, (chunk) => db().entities.stockRow.get(chunk).go({ consistent }));
}

/** What a document line asks of its item: the variation of a given row (`ivlId`), a given variation, or the item's only one. */
export interface LineTreeRequest {
  itemId: string;
  ivlId?: number;
  variationId?: string;
}

/** Item trees read by `readLineTrees`: the variations and rows that the lines asked for. */
export interface LineTree extends ItemTree {
  /** How many variations the item has (`variations` holds only those the lines need). */
  variationCount: number;
}

/** Items stored without a line index, read whole a few at a time. */
const TREE_QUERY_CONCURRENCY = 16;

/**
 * The items that document lines name, with the variations and stock rows those lines need, in
 * a FIXED number of round trips whatever the number of lines (strongly consistent, as one
 * Query of each item's partition would be): one BatchGetItem per 100 items, then, from each
 * item's line index, the variations the lines resolve to (a line's row's variation, its given
 * variation, or the item's only one) and every stock row of those variations, in BatchGetItems of 100 at once.
 * A missing item is absent from the map. An item stored before line indexes existed is read
 * whole by its own Query (a few at a time).
 */
export async function readLineTrees(accountId: string, requests: readonly LineTreeRequest[]): Promise<Map<string, LineTree>> {
  const items = await readItems(
    accountId,
    requests.map((r) => r.itemId),
  );
  const trees = new Map<string, LineTree>();
  const unindexed: string[] = [];
  const wanted: { itemId: string; variationId: string }[] = [];
  const indexes = new Map<string, (RowKey & { ivlId: number })[]>();
  for (const item of items) {
    const rows = indexedRows(item);
    if (!rows) {
      unindexed.push(item.itemId);
      continue;
    }
    indexes.set(item.itemId, rows);
    const variationIds = item.variationIds!;
    trees.set(item.itemId, { item, variations: [], rows: [], variationCount: variationIds.length });
  }
  for (const request of requests) {
    const rows = indexes.get(request.itemId);
    if (!rows) continue;
    const variationIds = trees.get(request.itemId)!.item!.variationIds!;
    const variationId =
      request.ivlId !== undefined
        ? rows.find((r) => r.ivlId === request.ivlId)?.variationId
        : request.variationId !== undefined
          ? variationIds.find((id) => id === request.variationId)
          : variationIds.length === 1
            ? variationIds[0]
            : undefined;
    if (variationId !== undefined) wanted.push({ itemId: request.itemId, variationId });
  }
  const wantedKeys = new Set(wanted.map((w) => `${w.itemId}|${w.variationId}`));
  const rowKeys = [...indexes.values()].flat().filter((row) => wantedKeys.has(`${row.itemId}|${row.variationId}`));
  const [variations, rows, whole] = await Promise.all([
    readVariations(accountId, wanted),
    batchReadRows(accountId, rowKeys, true),
    readWholeTrees(accountId, unindexed),
  ]);
  for (const variation of variations) trees.get(variation.itemId)?.variations.push(variation);
  for (const row of rows) trees.get(row.itemId)?.rows.push(row);
  // A variation the index names but the table no longer holds: the item was deleted meanwhile.
  const foundVariations = new Set(variations.map((v) => `${v.itemId}|${v.variationId}`));
  for (const key of wantedKeys) if (!foundVariations.has(key)) trees.delete(key.split("|")[0]!);
  for (const tree of trees.values()) {
    tree.variations.sort((a, b) => a.variationNumber - b.variationNumber);
    tree.rows.sort((a, b) => a.ivlId - b.ivlId);
  }
  for (const [itemId, tree] of whole) trees.set(itemId, tree);
  return trees;
}

/** Whole item trees, one Query each, a few at a time (items without a line index). */
async function readWholeTrees(accountId: string, itemIds: readonly string[]): Promise<Map<string, LineTree>> {
  const trees = new Map<string, LineTree>();
  const queue = [...itemIds];
  await Promise.all(
    Array.from({ length: Math.min(TREE_QUERY_CONCURRENCY, queue.length) }, async () => {
      for (let id = queue.shift(); id !== undefined; id = queue.shift()) {
        const tree = await readItemTree(accountId, id);
        if (tree.item) trees.set(id, { ...tree, variationCount: tree.variations.length });
      }
    }),
  );
  return trees;
}

/** Item records and specific stock rows, in BatchGetItems of 100, all at once. */
export async function readItemsAndRows(
  accountId: string,
  itemIds: readonly string[],
  rowKeys: readonly RowKey[],
): Promise<{ items: ItemRecord[]; rows: StockRowItem[] }> {
  const [items, rows] = await Promise.all([readItems(accountId, itemIds), batchReadRows(accountId, rowKeys, true)]);
  return { items, rows };
}

export async function readInventorySequence(accountId: string): Promise<number> {
  return readSequence(accountId, "stockRow", true);
}

/** What one ledger transaction writes (computed by the ledger's pure planner). */
export interface LedgerWrite {
  accountId: string;
  items: {
    itemId: string;
    expectedVersion: number;
    stock: Record<string, unknown>;
    set?: Partial<ItemRecord>;
    add?: { adjustmentCount?: number };
    /** A unique item's status bucket moves (sold or returned): counted on `InventoryCounters`, conditioned on `archived` as read. */
    statusMove?: { from: string; to: string; archived: boolean };
  }[];
  /**
   * `before`: the balances the row held when read (absent for a new row). `remove`: delete the
   * row (a row a released hold created, never moved).
   */
  rows: { row: StockRowItem; isNew: boolean; before?: { onHand: number; reserved: number; incoming: number; inTransit: number }; remove?: boolean }[];
  history: StockHistoryItem[];
  /** The row sequence before and after, when rows are created. */
  sequence?: { from: number; to: number };
}

/** Labels of the ledger's own items in a transaction (a caller's items carry other labels). */
export const LEDGER_LABEL_PREFIX = "ledger:";

/**
 * Adds the items of a ledger write: each item conditioned on its `stockVersion`, each existing
 * row written with its computed balances on condition that it still holds the balances it was
 * read with (new rows: that they do not exist), history entries, and the row sequence moved on
 * condition that it is unchanged. Any concurrent change fails the write.
 */
export function addLedgerWrite(tx: TransactionBuilder, write: LedgerWrite): void {
  const e = tx.entities;
  const statusCounts: Record<string, number> = {};
  for (const change of write.items) {
    const { pendingJournals, ...set } = change.set ?? {};
    // An item's pending journals are a map; the last one leaving removes the attribute.
    const clearsPending = pendingJournals !== undefined && Object.keys(pendingJournals as object).length === 0;
    let update = e.item.patch({ accountId: write.accountId, itemId: change.itemId }).set({
      ...set,
      ...(pendingJournals === undefined || clearsPending ? {} : { pendingJournals }),
      stock: change.stock,
      stockVersion: change.expectedVersion + 1,
    });
    if (clearsPending) update = update.remove(["pendingJournals"]) as never;
    if (change.add) update = update.add(change.add);
    const move = change.statusMove;
    if (move) {
      statusCounts[move.from] = (statusCounts[move.from] ?? 0) - 1;
      statusCounts[move.to] = (statusCounts[move.to] ?? 0) + 1;
    }
    tx.add(
      `${LEDGER_LABEL_PREFIX}item`,
      update
        .where(({ stockVersion, archived }, { eq }) =>
          move ? `${eq(stockVersion, change.expectedVersion)} AND ${eq(archived, move.archived)}` : eq(stockVersion, change.expectedVersion),
        )
        .commit(),
    );
  }
  const moved = Object.keys(statusCounts).length > 0;
  const balancesAsRead =
    (before: NonNullable<LedgerWrite["rows"][number]["before"]>) =>
    (
      { onHand, reserved, incoming, inTransit }: Record<"onHand" | "reserved" | "incoming" | "inTransit", never>,
      { eq }: { eq: (a: never, b: number) => string },
    ) =>
      [eq(onHand, before.onHand), eq(reserved, before.reserved), eq(incoming, before.incoming), eq(inTransit, before.inTransit)].join(" AND ");
  for (const { row, isNew, before, remove } of write.rows) {
    if (isNew || !before) {
      tx.add(`${LEDGER_LABEL_PREFIX}row`, e.stockRow.create(row).commit());
      continue;
    }
    // The row must still hold the balances the plan started from (however it was read).
    const asRead = balancesAsRead(before) as never;
    const key = { accountId: row.accountId, itemId: row.itemId, variationId: row.variationId, locationId: row.locationId };
    tx.add(`${LEDGER_LABEL_PREFIX}row`, remove ? e.stockRow.delete(key).where(asRead).commit() : e.stockRow.put(row).where(asRead).commit());
  }
  for (const entry of write.history) tx.add(`${LEDGER_LABEL_PREFIX}history`, e.stockHistory.create(entry).commit());
  // The row sequence and the status counts share the InventoryCounters item: one operation.
  if (write.sequence) claimNumbers(tx, write.accountId, "stockRow", write.sequence.from, write.sequence.to, statusCounts);
  else if (moved) tx.add(`${LEDGER_LABEL_PREFIX}status counts`, e.inventoryCounters.update({ accountId: write.accountId }).add(statusCounts).commit());
}

/** Items in one ledger write: what a caller must leave room for in its transaction. */
export const ledgerOpCount = (write: LedgerWrite) =>
  write.items.length + write.rows.length + write.history.length + (write.sequence || write.items.some((item) => item.statusMove) ? 1 : 0);

/** Whether a cancellation failed only on the ledger's items (the stock moved: plan again). */
export const isLedgerFailure = (label: string) => label.startsWith(LEDGER_LABEL_PREFIX) || label === sequenceLabel("stockRow");

/**
 * Commits a ledger write alone or with the caller's own items (`extra`, added first) and the
 * request's stored outcome. Returns null, or the cancellation (labels of the caller's items,
 * or of the ledger's own: `isLedgerFailure`).
 */
export async function commitLedgerWrite(
  write: LedgerWrite,
  extra: (tx: TransactionBuilder) => void,
  outcome?: { completion: IdempotencyCompletion | undefined; body: unknown },
): Promise<Cancellation | null> {
  return writeTransaction((tx) => {
    extra(tx);
    addLedgerWrite(tx, write);
  }, outcome);
}

export async function insertJournal(journal: StockJournalItem): Promise<void> {
  await db().entities.stockJournal.create(journal).go({ response: "none" });
}

export async function readJournal(accountId: string, journalId: string): Promise<StockJournalItem | undefined> {
  const { data } = await db().entities.stockJournal.get({ accountId, journalId }).go({ consistent: true });
  return data ?? undefined;
}

/** The label of a journal chunk's mark: it fails when the chunk was applied already. */
export const CHUNK_MARK_LABEL = "journal chunk";

/**
 * What a chunk mark records: `forward` a chunk applied (or, for a hold, its deltas written as
 * pending) while the journal is pending; `fold` a bound hold's chunk folded into the balances;
 * `revert` an applied chunk undone (or its pending deltas removed) while the journal is releasing.
 */
export type ChunkStep = "forward" | "fold" | "revert";

/**
 * Adds the item that marks a journal chunk's step done, in the step's own transaction: it fails
 * when the step was marked already (or the journal is no longer in the step's status), so each
 * step of each chunk happens once.
 */
export function addChunkMark(tx: TransactionBuilder, accountId: string, journalId: string, chunk: number, step: ChunkStep = "forward"): void {
  const journal = tx.entities.stockJournal.patch({ accountId, journalId });
  tx.add(
    CHUNK_MARK_LABEL,
    step === "forward"
      ? journal
          .add({ appliedChunks: [chunk] })
          .where(({ appliedChunks, status }, { notContains, eq }) => `${notContains(appliedChunks, chunk)} AND ${eq(status, "pending")}`)
          .commit()
      : step === "fold"
        ? journal
            .add({ foldedChunks: [chunk] })
            .where(({ foldedChunks, status }, { notContains, eq }) => `${notContains(foldedChunks, chunk)} AND ${eq(status, "bound")}`)
            .commit()
        : journal
            .add({ revertedChunks: [chunk] })
            .where(
              ({ appliedChunks, revertedChunks, status }, { contains, notContains, eq }) =>
                `${contains(appliedChunks, chunk)} AND ${notContains(revertedChunks, chunk)} AND ${eq(status, "releasing")}`,
            )
            .commit(),
  );
}

/** What a reader needs of a journal to resolve its pending deltas. */
export type JournalState = Pick<StockJournalItem, "journalId" | "status" | "mode" | "leaseUntil" | "createdAt">;

/** The status of several journals (one BatchGetItem per 100), without their changes. */
export async function readJournalStates(accountId: string, journalIds: readonly string[]): Promise<JournalState[]> {
  const keys = [...new Set(journalIds)].map((journalId) => ({ accountId, journalId }));
  const found = await batchGetAll("read journal states", keys, (chunk) =>
    db()
      .entities.stockJournal.get(chunk)
      .go({ consistent: true, attributes: ["journalId", "status", "mode", "leaseUntil", "createdAt"] }),
  );
  return found as JournalState[];
}

/** The open-holds index keys of a hold journal leasing until `leaseUntil` (epoch ms). */
export const openHoldKeys = (leaseUntil: number, accountId: string, journalId: string) => ({
  openHoldsPk: "openholds",
  openHoldsSk: `${String(leaseUntil).padStart(15, "0")}#${accountId}#${journalId}`,
});

/**
 * Moves a journal from one status to another on condition that it is still `from`; leaving
 * the open states removes it from the open-holds index. Returns false when it was not `from`.
 */
export async function moveJournalStatus(
  accountId: string,
  journalId: string,
  from: readonly StockJournalItem["status"][],
  to: StockJournalItem["status"],
  extra: { failure?: string } = {},
): Promise<boolean> {
  let update = db()
    .entities.stockJournal.patch({ accountId, journalId })
    .set({ status: to, updatedAt: new Date().toISOString(), ...extra });
  if (to === "released" || to === "applied") update = update.remove(["openHoldsPk", "openHoldsSk"]) as never;
  try {
    await update.where(({ status }, { eq }) => from.map((f) => eq(status, f)).join(" OR ")).go({ response: "none" });
    return true;
  } catch (error) {
    if (isConditionalFailure(error)) return false;
    throw error;
  }
}

/** The label of a hold's binding item in its document's transaction. */
export const HOLD_BIND_LABEL = "stock hold";

/**
 * Adds the item that binds a held journal to the document committing with it (held -> bound):
 * the hold's commit point. It stays in the open-holds index until it is folded (applied).
 */
export function addHoldBinding(tx: TransactionBuilder, accountId: string, journalId: string): void {
  tx.add(
    HOLD_BIND_LABEL,
    tx.entities.stockJournal
      .patch({ accountId, journalId })
      .set({ status: "bound", updatedAt: new Date().toISOString() })
      .where(({ status }, { eq }) => eq(status, "held"))
      .commit(),
  );
}

/** Open holds (any account) whose lease ran out before `now`, oldest first. */
export async function queryExpiredHolds(now: number, limit = 100): Promise<{ accountId: string; journalId: string }[]> {
  const { Items } = await getDocumentClient().send(
    new QueryCommand({
      TableName: tableName(),
      IndexName: "gsi2",
      KeyConditionExpression: "gsi2pk = :pk AND gsi2sk < :until",
      ExpressionAttributeValues: { ":pk": "openholds", ":until": String(now).padStart(15, "0") },
      Limit: limit,
    }),
  );
  return (Items ?? []).map((item) => ({ accountId: String(item.accountId), journalId: String(item.journalId) }));
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

/**
 * Sets attributes of an item that a ledger write values without moving its stock in the same
 * transaction (e.g. the moving average cost of stock a journal adds), on condition that its
 * stock is still at the version they were computed from (labelled as the ledger's item).
 */
export function addItemValuation(tx: TransactionBuilder, accountId: string, itemId: string, expectedVersion: number, set: Partial<ItemRecord>): void {
  tx.add(
    `${LEDGER_LABEL_PREFIX}item`,
    tx.entities.item
      .patch({ accountId, itemId })
      .set(set)
      .where(({ stockVersion }, { eq }) => eq(stockVersion, expectedVersion))
      .commit(),
  );
}
