import { chunkIndexes, type LedgerSource, type StockChange } from "./stock-changes.js";
import { rowKeyOf } from "../../core/records.js";
import { nowIso } from "../../core/clock.js";
import { StockRuleError } from "../../core/failures.js";
import { randomUUID } from "node:crypto";
import {
  addItemValuation,
  commitLedgerWrite,
  insertJournal,
  isLedgerFailure,
  queryExpiredHolds,
  openHoldKeys,
  markJournalApplied,
  readInventorySequence,
  readJournal,
  readJournalStates,
  type LedgerWrite,
} from "../../db/inventory.js";
import type { ItemRecord, StockJournalItem } from "../../db/service.js";
import { RETRY, retrying } from "../../db/retry.js";
import { Cancellation, type TransactionBuilder } from "../../db/transactions.js";
import type { IdempotencyCompletion } from "../../core/idempotency.js";
import { log } from "../../core/log.js";
import { planLedgerWrite } from "./ledger-plan.js";
import { applyChunk, foldHold, itemLockName, readState, releaseHold, waitForReservingHolds, type LedgerState } from "./settling.js";

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
 *
 * Settling holds and applying journal chunks are in `settling.ts`, settled reads in `reads.ts`;
 * this module re-exports them, as the ledger's one entry point.
 */

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
  return retrying(
    "stock change",
    async (attempt) => {
      const state = await readState(options.accountId, options.changes, { known: attempt === 0 ? options.known : undefined });
      let write: LedgerWrite;
      try {
        write = planLedgerWrite({
          accountId: options.accountId,
          journalId,
          source: options.source,
          at: nowIso(),
          changes: options.changes,
          itemAdds: options.itemAdds,
          ...state,
        });
      } catch (error) {
        if (await waitForReservingHolds(options.accountId, error, state, options.changes)) return RETRY;
        throw error;
      }
      const cancellation = await commitLedgerWrite(write, (tx) => options.extra?.(tx, write), options.respond?.(write));
      if (!cancellation) return { write };
      const own = cancellation.reasons.filter((reason) => !isLedgerFailure(reason.label));
      if (own.length > 0) return { write, rejected: new Cancellation(own) };
      // An item's stock or the row sequence moved since the read: read again.
      return RETRY;
    },
    undefined,
    options.changes.map((change) => itemLockName(options.accountId, change.itemId)),
  );
}

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
 * Settles every hold whose lease ran out (any account): a bound one is folded (its writer died
 * after the commit point), any other released (it died before). Returns how many it settled.
 */
export async function sweepExpiredHolds(now: number = Date.now()): Promise<number> {
  const expired = await queryExpiredHolds(now);
  let settled = 0;
  for (const { accountId, journalId } of expired) {
    try {
      const [journal] = await readJournalStates(accountId, [journalId]);
      if (journal?.status === "bound") await foldHold(accountId, journalId);
      else await releaseHold(accountId, journalId);
      settled += 1;
    } catch (error) {
      log("ERROR", "expired hold not settled", { accountId, journalId, error: String(error) });
    }
  }
  if (expired.length > 0) log("INFO", "expired holds swept", { found: expired.length, settled });
  return settled;
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
    reserved: options.state.reserved,
    heldUnits: options.state.heldUnits,
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
