import { randomUUID } from "node:crypto";
import {
  CHUNK_MARK_LABEL,
  addChunkMark,
  addItemValuation,
  commitLedgerWrite,
  insertJournal,
  isLedgerFailure,
  openHoldKeys,
  markJournalApplied,
  readInventorySequence,
  readItemsAndRows,
  readJournal,
  rowKeyOf,
  withRows,
  type LedgerWrite,
} from "../db/inventory.js";
import { bucketOf } from "../db/items.js";
import { nowIso } from "../db/keys.js";
import type { ItemRecord, StockHistoryItem, StockJournalItem, StockRowItem } from "../db/service.js";
import { RETRY, retrying } from "../db/retry.js";
import { Cancellation, type TransactionBuilder } from "../db/transactions.js";
import type { IdempotencyCompletion } from "../core/idempotency.js";
import {
  BALANCE_FIELDS,
  QUANTITY_PLACES,
  ZERO_BALANCES,
  addQuantities,
  applyDeltas,
  hasQuantityPrecision,
  movingAverageCost,
  sumBalances,
  type BalanceDeltas,
  type Balances,
} from "./inventory-math.js";

/**
 * THE inventory ledger: the only code that moves stock (architecture section 5). Every change
 * of a balance (on hand, reserved, incoming, in transit of one item-variation-location row)
 * writes a history entry in the same transaction, and moves its item's `stockVersion` on
 * condition that it is unchanged, so concurrent changes are serialised and never lost, and
 * rules such as "no negative on hand" hold on the balances actually written.
 *
 * - `planLedgerWrite` is pure: current state + changes -> what to write (or a rule violation).
 * - `postStockChanges` applies a small set of changes in ONE transaction, together with the
 *   caller's own items (its document, counters, stored outcome).
 * - `postJournal` takes any number of changes: it records them as a journal (with the caller's
 *   document, when it wants), then applies them in chunks, each exactly once even when the
 *   applier is interrupted and run again (`applyJournal`).
 */

export interface StockChange {
  itemId: string;
  variationId: string;
  locationId: string;
  deltas: BalanceDeltas;
  /** Zone for a row created by this change. */
  zoneId?: string;
  /**
   * Unit cost of the units moved (four-decimal string), recorded on the history entry; for an
   * on-hand increase (a receipt), the item's moving average cost takes it in as well (unless the
   * writer sets the average itself, as a kit build does).
   */
  unitCost?: string;
  /**
   * Unique items only: the item's `sold` status after this change (an invoice that takes the
   * unit sells it: true; a reversal that gives it back: false). The item's status count
   * (`items_<archived><sold>`) moves in the same write. Ignored for quantity items.
   */
  sold?: boolean;
}

export interface LedgerSource {
  /** What caused the change: `adjustment`, `purchase_order`, `stock_transfer`, `kit_build`, ... */
  sourceType: string;
  sourceId?: string;
  userId?: string;
  reason?: string;
}

/** A rule of the ledger that a change would break (mapped to 422 by the caller). */
export class StockRuleError extends Error {
  constructor(
    readonly changeIndex: number,
    readonly rule: "negative_balance" | "unique_quantity" | "unknown_item" | "no_effect",
    message: string,
  ) {
    super(message);
    this.name = "StockRuleError";
  }
}

export function rowBalances(row: StockRowItem | undefined): Balances {
  return row ? { onHand: row.onHand, reserved: row.reserved, incoming: row.incoming, inTransit: row.inTransit } : { ...ZERO_BALANCES };
}

/** The per-location sums stored on an item, as balances. */
export function itemStock(item: Pick<ItemRecord, "stock">): Record<string, Balances> {
  return (item.stock ?? {}) as Record<string, Balances>;
}

export interface PlanInput {
  accountId: string;
  journalId: string;
  /** History entries get ids `${journalId}:${firstEntryIndex + i}`. */
  firstEntryIndex?: number;
  source: LedgerSource;
  at: string;
  changes: readonly StockChange[];
  items: ReadonlyMap<string, ItemRecord>;
  rows: ReadonlyMap<string, StockRowItem>;
  /** The row sequence now (new rows take the following numbers). */
  sequence: number;
  /** Item-level counters the same write moves (e.g. `adjustmentCount`). */
  itemAdds?: ReadonlyMap<string, { adjustmentCount?: number }>;
  /** Refuse a unique item with more than one unit (default true). */
  enforceUnique?: boolean;
}

/**
 * Plans a ledger write: applies the changes in order to the current balances, refuses any
 * balance below zero and any unique item with more than one unit on hand, creates missing
 * rows with the next sequence numbers, and produces one history entry per change.
 */
export function planLedgerWrite(input: PlanInput): LedgerWrite {
  const rows = new Map<string, LedgerWrite["rows"][number]>();
  const history: StockHistoryItem[] = [];
  let sequence = input.sequence;
  const touchedItems = new Set<string>();

  input.changes.forEach((change, index) => {
    // A change below the stored precision would record history without moving any balance.
    const deltas = BALANCE_FIELDS.map((field) => change.deltas[field] ?? 0);
    if (deltas.every((delta) => delta === 0) || deltas.some((delta) => !hasQuantityPrecision(delta))) {
      throw new StockRuleError(index, "no_effect", `A stock change must move a balance by at least ${10 ** -QUANTITY_PLACES}, in steps of ${10 ** -QUANTITY_PLACES}.`);
    }
    const item = input.items.get(change.itemId);
    if (!item) throw new StockRuleError(index, "unknown_item", `No such item: ${change.itemId}.`);
    touchedItems.add(change.itemId);
    const key = rowKeyOf(change);
    let entry = rows.get(key);
    if (!entry) {
      const existing = input.rows.get(key);
      entry = existing
        ? { row: { ...existing }, isNew: false, before: rowBalances(existing) }
        : {
            row: {
              accountId: input.accountId,
              itemId: change.itemId,
              variationId: change.variationId,
              locationId: change.locationId,
              ivlId: ++sequence,
              zoneId: change.zoneId,
              ...ZERO_BALANCES,
              createdAt: input.at,
              updatedAt: input.at,
            },
            isNew: true,
          };
      rows.set(key, entry);
    }
    const after = applyDeltas(rowBalances(entry.row), change.deltas);
    for (const field of BALANCE_FIELDS) {
      if (after[field] < 0) {
        throw new StockRuleError(index, "negative_balance", `The change would take ${field} at this location below zero (to ${after[field]}).`);
      }
    }
    Object.assign(entry.row, after, { updatedAt: input.at });
    history.push({
      accountId: input.accountId,
      itemId: change.itemId,
      sourceType: input.source.sourceType,
      entryId: `${input.journalId}:${(input.firstEntryIndex ?? 0) + index}`,
      at: input.at,
      sourceId: input.source.sourceId,
      journalId: input.journalId,
      variationId: change.variationId,
      locationId: change.locationId,
      ivlId: entry.row.ivlId,
      userId: input.source.userId,
      reason: input.source.reason,
      onHandDelta: change.deltas.onHand ?? 0,
      reservedDelta: change.deltas.reserved ?? 0,
      incomingDelta: change.deltas.incoming ?? 0,
      inTransitDelta: change.deltas.inTransit ?? 0,
      onHandAfter: after.onHand,
      reservedAfter: after.reserved,
      incomingAfter: after.incoming,
      inTransitAfter: after.inTransit,
      ...(change.unitCost === undefined ? {} : { unitCost: change.unitCost }),
    });
  });

  const items = [...touchedItems].map((itemId) => {
    const item = input.items.get(itemId)!;
    const stock = { ...itemStock(item) };
    // A location's sum moves by exactly what its written rows moved.
    for (const { row } of rows.values()) {
      if (row.itemId !== itemId) continue;
      const before = rowBalances(input.rows.get(rowKeyOf(row)));
      const after = rowBalances(row);
      stock[row.locationId] = applyDeltas(stock[row.locationId] ?? ZERO_BALANCES, {
        onHand: addQuantities(after.onHand, -before.onHand),
        reserved: addQuantities(after.reserved, -before.reserved),
        incoming: addQuantities(after.incoming, -before.incoming),
        inTransit: addQuantities(after.inTransit, -before.inTransit),
      });
    }
    if (item.inventoryType === "unique" && input.enforceUnique !== false) {
      const total = sumBalances(Object.values(stock)).onHand;
      if (total > 1) {
        const index = input.changes.findIndex((c) => c.itemId === itemId);
        throw new StockRuleError(index, "unique_quantity", "A unique item can have at most one unit on hand.");
      }
    }
    // Valuation: each costed receipt moves the item's average cost, in change order, over
    // the item's on-hand stock at all locations just before it.
    let averageCost = item.averageCost;
    let onHandBefore = sumBalances(Object.values(itemStock(item))).onHand;
    let valued = false;
    for (const change of input.changes) {
      if (change.itemId !== itemId) continue;
      const received = change.deltas.onHand ?? 0;
      if (change.unitCost !== undefined && received > 0) {
        averageCost = movingAverageCost(onHandBefore, averageCost, received, change.unitCost);
        valued = true;
      }
      onHandBefore = addQuantities(onHandBefore, received);
    }
    // The item's line index takes the rows this write creates (an item stored without one stays without).
    const created = [...rows.values()].filter((entry) => entry.isNew && entry.row.itemId === itemId).map((entry) => entry.row);
    const rowIndex = item.rowIndex !== undefined && created.length > 0 ? withRows(item.rowIndex, created) : undefined;
    const set: Partial<ItemRecord> | undefined = valued || rowIndex ? { ...(valued ? { averageCost } : {}), ...(rowIndex ? { rowIndex } : {}) } : undefined;
    // A sale (or its reversal) of a unique item moves its sold status and status count.
    const soldAfter = [...input.changes].reverse().find((change) => change.itemId === itemId && change.sold !== undefined)?.sold;
    let statusMove: LedgerWrite["items"][number]["statusMove"];
    if (item.inventoryType === "unique" && soldAfter !== undefined && soldAfter !== item.sold) {
      statusMove = { from: bucketOf(item), to: bucketOf({ archived: item.archived, sold: soldAfter }), archived: item.archived };
      return { itemId, expectedVersion: item.stockVersion, stock, add: input.itemAdds?.get(itemId), set: { ...set, sold: soldAfter, updatedAt: input.at }, statusMove };
    }
    return { itemId, expectedVersion: item.stockVersion, stock, add: input.itemAdds?.get(itemId), set };
  });

  return {
    accountId: input.accountId,
    items,
    rows: [...rows.values()],
    history,
    sequence: sequence > input.sequence ? { from: input.sequence, to: sequence } : undefined,
  };
}

export interface LedgerState {
  items: Map<string, ItemRecord>;
  rows: Map<string, StockRowItem>;
}

/**
 * Reads what a set of changes needs: the items and the rows they touch (one BatchGetItem
 * each, unless the caller already holds them), and the row sequence only when a change
 * creates a row.
 */
async function readState(accountId: string, changes: readonly StockChange[], known?: LedgerState): Promise<LedgerState & { sequence: number }> {
  const state: LedgerState =
    known ??
    (await readItemsAndRows(
      accountId,
      changes.map((c) => c.itemId),
      [...new Map(changes.map((c) => [rowKeyOf(c), { itemId: c.itemId, variationId: c.variationId, locationId: c.locationId }])).values()],
    ).then(({ items, rows }) => ({
      items: new Map(items.map((item) => [item.itemId, item])),
      rows: new Map(rows.map((row) => [rowKeyOf(row), row])),
    })));
  const createsRows = changes.some((change) => !state.rows.has(rowKeyOf(change)));
  return { ...state, sequence: createsRows ? await readInventorySequence(accountId) : 0 };
}

/** Changes that fit in one transaction with room for a caller's own items. */
export const MAX_INLINE_CHANGES = 25;

export interface PostResult {
  write: LedgerWrite;
  /** The caller's own items whose condition failed (by label). */
  rejected?: Cancellation;
}

/**
 * Posts up to `MAX_INLINE_CHANGES` changes in ONE transaction together with the caller's own
 * items (`extra`, e.g. a document and its counters; a failure of theirs is returned, not
 * retried) and the request's stored outcome (built by `respond` from the written state).
 * Retries while other writers move the same items' stock.
 */
export async function postStockChanges(options: {
  accountId: string;
  source: LedgerSource;
  changes: readonly StockChange[];
  itemAdds?: ReadonlyMap<string, { adjustmentCount?: number }>;
  /** The caller's own items; `write` is the ledger write they commit with (its rows, new ones numbered). */
  extra?: (tx: TransactionBuilder, write: LedgerWrite) => void;
  respond?: (write: LedgerWrite) => { completion: IdempotencyCompletion | undefined; body: unknown };
  /** The items and rows as the caller just read them (used for the first attempt only). */
  known?: LedgerState;
}): Promise<PostResult> {
  if (options.changes.length > MAX_INLINE_CHANGES) throw new Error("Too many changes for one transaction: use postJournal.");
  const journalId = randomUUID();
  return retrying("stock change", async (attempt) => {
    const state = await readState(options.accountId, options.changes, attempt === 0 ? options.known : undefined);
    const write = planLedgerWrite({
      accountId: options.accountId,
      journalId,
      source: options.source,
      at: nowIso(),
      changes: options.changes,
      itemAdds: options.itemAdds,
      ...state,
    });
    const cancellation = await commitLedgerWrite(write, (tx) => options.extra?.(tx, write), options.respond?.(write));
    if (!cancellation) return { write };
    const own = cancellation.reasons.filter((reason) => !isLedgerFailure(reason.label));
    if (own.length > 0) return { write, rejected: new Cancellation(own) };
    // An item's stock or the row sequence moved since the read: read again.
    return RETRY;
  }, undefined, options.changes.map((change) => itemLockName(options.accountId, change.itemId)));
}

/** The name under which writers of one item's record queue in this process (see `retrying`). */
export const itemLockName = (accountId: string, itemId: string): string => `item:${accountId}:${itemId}`;

/**
 * Records a journal of any size (pending) and applies it. The caller may write the journal
 * record inside its own document transaction instead (`journalRecord`) and then call
 * `applyJournal`; if the applier is interrupted, running `applyJournal` again finishes it.
 */
export async function postJournal(options: { accountId: string; source: LedgerSource; changes: readonly StockChange[] }): Promise<string> {
  const journalId = randomUUID();
  await insertJournal(journalRecord(options.accountId, journalId, options.source, options.changes));
  await applyJournal(options.accountId, journalId);
  return journalId;
}

export function journalRecord(
  accountId: string,
  journalId: string,
  source: LedgerSource,
  changes: readonly StockChange[],
  hold?: { leaseUntil: number },
): StockJournalItem {
  const at = nowIso();
  return {
    accountId,
    journalId,
    status: "pending" as const,
    mode: hold ? ("hold" as const) : ("post" as const),
    ...(hold ? { leaseUntil: hold.leaseUntil, ...openHoldKeys(hold.leaseUntil, accountId, journalId) } : {}),
    sourceType: source.sourceType,
    sourceId: source.sourceId,
    userId: source.userId,
    reason: source.reason,
    changes: JSON.stringify(changes),
    createdAt: at,
    updatedAt: at,
  };
}

/**
 * Applies a pending journal chunk by chunk. Each chunk's transaction also marks the chunk
 * applied on condition that it was not (`appliedChunks`), so a chunk applies exactly once
 * however often the applier runs, concurrently or after a crash. `stopAfterChunks` lets a
 * test interrupt the applier as a crash would.
 */
export async function applyJournal(accountId: string, journalId: string, options: { stopAfterChunks?: number } = {}): Promise<"applied" | "interrupted"> {
  const journal = await readJournal(accountId, journalId);
  if (!journal) throw new Error(`No such journal: ${journalId}.`);
  if (journal.status === "applied") return "applied";
  if (journal.mode === "hold") throw new Error(`Journal ${journalId} is a hold: its writer (or the sweeper) applies it.`);
  const changes = JSON.parse(journal.changes) as StockChange[];
  const chunks = chunkIndexes(changes);
  const done = new Set(journal.appliedChunks ?? []);
  let appliedNow = 0;
  for (const [chunkNumber, indexes] of chunks.entries()) {
    if (done.has(chunkNumber)) continue;
    if (options.stopAfterChunks !== undefined && appliedNow >= options.stopAfterChunks) return "interrupted";
    await applyChunk(journal, chunkNumber, changes, indexes);
    appliedNow += 1;
  }
  await markJournalApplied(accountId, journalId, nowIso());
  return "applied";
}

/**
 * Splits a journal's changes into chunks that each fit one transaction (`maxOps` items: one
 * per item, per row and per history entry, plus the row sequence and the chunk mark).
 * All changes of an item stay in one chunk, so an item's version moves once per journal,
 * unless that item alone exceeds a transaction: then its changes fill chunks of their own
 * (each chunk reads the item afresh). Deterministic: chunk `i` always holds the same changes,
 * which is what makes "applied" per chunk exact.
 */
export function chunkIndexes(changes: readonly StockChange[], maxOps = 80): number[][] {
  const FIXED = 2; // row sequence + chunk mark
  const byItem = new Map<string, number[]>();
  changes.forEach((change, index) => byItem.set(change.itemId, [...(byItem.get(change.itemId) ?? []), index]));
  const cost = (indexes: readonly number[]) => {
    const items = new Set(indexes.map((i) => changes[i]!.itemId)).size;
    const rows = new Set(indexes.map((i) => rowKeyOf(changes[i]!))).size;
    return items + rows + indexes.length;
  };
  const chunks: number[][] = [];
  let current: number[] = [];
  for (const indexes of byItem.values()) {
    if (FIXED + cost(indexes) > maxOps) {
      // One item too large for a transaction: fill chunks with its changes alone, in order.
      if (current.length > 0) chunks.push(current);
      current = [];
      for (const index of indexes) {
        if (current.length > 0 && FIXED + cost([...current, index]) > maxOps) {
          chunks.push(current);
          current = [];
        }
        current.push(index);
      }
      chunks.push(current);
      current = [];
      continue;
    }
    if (current.length > 0 && FIXED + cost([...current, ...indexes]) > maxOps) {
      chunks.push(current);
      current = [];
    }
    current.push(...indexes);
  }
  if (current.length > 0) chunks.push(current);
  return chunks;
}

/**
 * Applies one chunk of a journal (`forward`), or undoes one applied chunk (`revert`: the same
 * changes with opposite signs; history entries numbered after the journal's own), exactly
 * once: the chunk's transaction carries the chunk's mark. A rule the chunk breaks throws
 * `StockRuleError` (index within the chunk), unless the chunk was marked meanwhile.
 */
export async function applyChunk(
  journal: Pick<StockJournalItem, "accountId" | "journalId" | "sourceType" | "sourceId" | "userId" | "reason" | "createdAt">,
  chunkNumber: number,
  journalChanges: readonly StockChange[],
  indexes: readonly number[],
  direction: "forward" | "revert" = "forward",
): Promise<void> {
  const source: LedgerSource = { sourceType: journal.sourceType, sourceId: journal.sourceId, userId: journal.userId, reason: journal.reason };
  const changes = indexes.map((i) => (direction === "forward" ? journalChanges[i]! : invertChange(journalChanges[i]!)));
  const markedElsewhere = async () => {
    const stored = await readJournal(journal.accountId, journal.journalId);
    return ((direction === "forward" ? stored?.appliedChunks : stored?.revertedChunks) ?? []).includes(chunkNumber);
  };
  await retrying("journal chunk", async (attempt) => {
    if (attempt > 0 && (await markedElsewhere())) return true;
    const state = await readState(journal.accountId, changes);
    let write: LedgerWrite;
    try {
      write = planLedgerWrite({
        accountId: journal.accountId,
        journalId: journal.journalId,
        source,
        at: direction === "forward" ? journal.createdAt : nowIso(),
        changes,
        // Undoing restores a state the ledger accepted before; only negative balances are refused.
        enforceUnique: direction === "forward",
        ...state,
      });
    } catch (error) {
      // Another applier may have marked this chunk since: then the state reflects it, and the
      // chunk must not be judged (or applied) again.
      if (error instanceof StockRuleError && (await markedElsewhere())) return true;
      throw error;
    }
    // History ids follow each change's position in the journal, not in the chunk; reversals
    // are numbered after the journal's own changes.
    const offset = direction === "forward" ? 0 : journalChanges.length;
    write.history.forEach((entry, i) => (entry.entryId = `${journal.journalId}:${offset + indexes[i]!}`));
    const cancellation = await commitLedgerWrite(write, (tx) => addChunkMark(tx, journal.accountId, journal.journalId, chunkNumber, direction));
    if (!cancellation || cancellation.failed(CHUNK_MARK_LABEL)) return true; // done now, before, or no longer wanted
    return RETRY;
  }, undefined, changes.map((change) => itemLockName(journal.accountId, change.itemId)));
}

/** The change that undoes `change`. */
export function invertChange(change: StockChange): StockChange {
  const deltas: BalanceDeltas = {};
  for (const field of BALANCE_FIELDS) if (change.deltas[field]) deltas[field] = -change.deltas[field]!;
  // An average cost cannot be un-averaged: undoing a receipt leaves the average as it is.
  const { unitCost: _cost, sold, ...rest } = change;
  // Undoing a sale returns the unique item (and undoing a return sells it again).
  return { ...rest, deltas, ...(sold === undefined ? {} : { sold: !sold }) };
}

/**
 * Changes merged per item-variation-location row, in first-seen order (deltas summed exactly,
 * the last `sold` kept); rows whose deltas cancel out are left out.
 */
export function mergeStockChanges(changes: readonly StockChange[]): StockChange[] {
  const merged = new Map<string, StockChange>();
  for (const change of changes) {
    const key = rowKeyOf(change);
    const existing = merged.get(key);
    if (!existing) {
      merged.set(key, { ...change, deltas: { ...change.deltas } });
      continue;
    }
    for (const field of BALANCE_FIELDS) {
      const value = change.deltas[field];
      if (value !== undefined) existing.deltas[field] = addQuantities(existing.deltas[field] ?? 0, value);
    }
    if (change.sold !== undefined) existing.sold = change.sold;
  }
  return [...merged.values()].filter((change) => BALANCE_FIELDS.some((field) => (change.deltas[field] ?? 0) !== 0));
}


/**
 * For writers whose changes depend on the stock they read (a kit build decides nested builds
 * and costs from it): read the state with `readLedgerState`, decide the changes, then make ONE
 * attempt with `tryStockChanges` inside the caller's own `retrying` loop, and plan again when
 * it answers `STOCK_MOVED`. The rules and the writes are the ledger's, as in `postStockChanges`.
 */
export async function readLedgerState(
  accountId: string,
  itemIds: readonly string[],
  rowKeys: readonly { itemId: string; variationId: string; locationId: string }[],
): Promise<LedgerState> {
  const unique = [...new Map(rowKeys.map((key) => [rowKeyOf(key), { itemId: key.itemId, variationId: key.variationId, locationId: key.locationId }])).values()];
  const { items, rows } = await readItemsAndRows(accountId, itemIds, unique);
  return { items: new Map(items.map((item) => [item.itemId, item])), rows: new Map(rows.map((row) => [rowKeyOf(row), row])) };
}

/** `tryStockChanges`: the stock (or the row sequence) moved since the state was read. */
export const STOCK_MOVED: unique symbol = Symbol("stock moved");

/**
 * One attempt of a ledger write planned against `state` (as read by `readLedgerState`), in ONE
 * transaction with the caller's own items (`extra`) and stored outcome (`respond`). `itemSets`
 * sets valuation attributes of items (e.g. `averageCost`) on condition that their stock is at
 * the version read: within the write's own item update, or, for an item whose stock this
 * transaction does not move (a journal will), in an update of its own. Throws
 * `StockRuleError` when a change breaks a rule on that state.
 */
export async function tryStockChanges(options: {
  accountId: string;
  source: LedgerSource;
  changes: readonly StockChange[];
  state: LedgerState;
  itemSets?: ReadonlyMap<string, Partial<ItemRecord>>;
  extra?: (tx: TransactionBuilder) => void;
  respond?: (write: LedgerWrite) => { completion: IdempotencyCompletion | undefined; body: unknown };
}): Promise<PostResult | typeof STOCK_MOVED> {
  if (options.changes.length > MAX_INLINE_CHANGES) throw new Error("Too many changes for one transaction: use a journal.");
  const createsRows = options.changes.some((change) => !options.state.rows.has(rowKeyOf(change)));
  const write = planLedgerWrite({
    accountId: options.accountId,
    journalId: randomUUID(),
    source: options.source,
    at: nowIso(),
    changes: options.changes,
    items: options.state.items,
    rows: options.state.rows,
    sequence: createsRows ? await readInventorySequence(options.accountId) : 0,
  });
  const valuedApart: [string, Partial<ItemRecord>][] = [];
  for (const [itemId, set] of options.itemSets ?? []) {
    const entry = write.items.find((candidate) => candidate.itemId === itemId);
    if (entry) entry.set = { ...entry.set, ...set };
    else valuedApart.push([itemId, set]);
  }
  const cancellation = await commitLedgerWrite(
    write,
    (tx) => {
      options.extra?.(tx);
      for (const [itemId, set] of valuedApart) {
        const item = options.state.items.get(itemId);
        if (!item) throw new StockRuleError(-1, "unknown_item", `No such item: ${itemId}.`);
        addItemValuation(tx, options.accountId, itemId, item.stockVersion, set);
      }
    },
    options.respond?.(write),
  );
  if (!cancellation) return { write };
  const own = cancellation.reasons.filter((reason) => !isLedgerFailure(reason.label));
  if (own.length > 0) return { write, rejected: new Cancellation(own) };
  return STOCK_MOVED;
}
