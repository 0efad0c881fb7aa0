import { chunkIndexes, type LedgerSource, type StockChange } from "./stock-changes.js";
import { applyChunk, foldHold, readState, releaseHold, waitForHoldsToEnd } from "./settling.js";
import { holdChangesWithoutUnitsBack, reversedUniqueCandidates } from "./unique-units.js";
import { rowKeyOf } from "../../core/records.js";
import { HoldYieldError, StalePlanError, StockRuleError } from "../../core/failures.js";
import { randomUUID } from "node:crypto";
import { ContentionError } from "../../core/errors.js";
import { errorFields, log } from "../../core/log.js";
import { HOLD_BIND_LABEL, addHoldBinding, insertJournal, moveJournalStatus, readItemsAndRows, readJournal } from "../../db/inventory.js";
import type { StockJournalItem } from "../../db/service.js";
import { writeTransaction, type Cancellation, type TransactionBuilder } from "../../db/transactions.js";
import type { IdempotencyCompletion } from "../../core/idempotency.js";
import { journalRecord, postStockChanges } from "./service.js";

/**
 * Stock changes of documents too large for one transaction, with the document's own write
 * still atomic, to writers and readers alike, and every ledger rule still able to refuse it
 * (architecture section 5, the inventory-ledger paragraph).
 *
 * A HOLD first writes the changes as PENDING deltas on their stock rows, chunk by chunk, each
 * chunk exactly once (a journal with chunk marks). Pending deltas move no balance: readers do
 * not see them, and other writers count what they would take as reserved. A chunk that breaks
 * a rule (stock below zero, counting what other live holds reserve) makes the hold release
 * what it wrote, and the document is refused with nothing changed. Once every chunk is written
 * the hold is `held`, and the document's ONE transaction binds it (`held -> bound`,
 * conditioned): that is the commit point of the document and all its stock effects together.
 * Then the deltas are folded into the balances (`foldHold`); until they are, every reader and
 * writer that meets one folds it first (`settlePending`), so no read shows part of the write.
 * A document write that cannot commit releases the hold. A hold whose writer died keeps a
 * lease; once it runs out the next reader or writer that meets it, or the sweeper
 * (`sweepExpiredHolds`, run by the stream processor's schedule and the local stack's timer),
 * folds it when it was bound and releases it otherwise.
 *
 * `commitWithStock` picks the cheapest correct path: up to `INLINE_LIMIT` changes go in the
 * document's own transaction through the ledger; more take a hold.
 */
/** The lease of a hold's writer: longer than any request (Lambda's limit is 29 s) takes to write and bind it. */
export const HOLD_LEASE_MS = 20_000;

/** Changes that ride in the document's own transaction (leaving room for its items). */
export const INLINE_LIMIT = 20; // within the ledger's MAX_INLINE_CHANGES

export interface StockHold {
  journalId: string;
  /** Adds the item that binds the hold to the document's transaction (held -> bound). */
  bind(tx: TransactionBuilder): void;
}

/**
 * Applies `changes` as a hold. Throws `StockRuleError` (with the change's index in `changes`)
 * when one breaks a rule, after releasing everything applied; throws `ContentionError` when
 * the hold was released under it (its lease ran out). `leaseMs` (default `HOLD_LEASE_MS`) is
 * for tests of a writer that dies: others wait that long for its stock.
 */
export async function holdStock(options: {
  accountId: string;
  source: LedgerSource;
  changes: readonly StockChange[];
  journalId?: string;
  leaseMs?: number;
}): Promise<StockHold> {
  const journalId = options.journalId ?? randomUUID();
  const leaseUntil = Date.now() + (options.leaseMs ?? HOLD_LEASE_MS);
  // A reversal of a unique unit that is already back (or sold again by another document) gives
  // nothing back: decided before the changes are journaled, on the items as settled (a committed
  // hold not folded yet, the sale's own, counts), one read only when there are such reversals.
  // `planHold` checks it again on each chunk's state: a unit moved since is a stale plan.
  const candidates = new Set(reversedUniqueCandidates(options.changes));
  const { changes, original } =
    candidates.size === 0
      ? { changes: options.changes, original: undefined }
      : holdChangesWithoutUnitsBack(
          options.changes,
          (
            await readState(
              options.accountId,
              options.changes.filter((change) => candidates.has(change.itemId)),
            )
          ).items,
          options.source.sourceId,
        );
  const journal = journalRecord(options.accountId, journalId, options.source, changes, { leaseUntil });
  await insertJournal(journal);
  const chunks = chunkIndexes(changes);
  for (const [chunkNumber, indexes] of chunks.entries()) {
    try {
      await applyChunk(journal, chunkNumber, changes, indexes);
    } catch (error) {
      if (error instanceof HoldYieldError) {
        // Wait-die (settling.ts): give way to the older holds, holding nothing, then plan again.
        await releaseHold(options.accountId, journalId);
        await waitForHoldsToEnd(options.accountId, error.olderJournalIds);
        throw new StalePlanError(`Stock held by ${error.olderJournalIds.length} older write(s)`);
      }
      if (!(error instanceof StockRuleError)) {
        await releaseHold(options.accountId, journalId).catch((releaseError) =>
          log("ERROR", "hold release failed", { journalId, error: String(releaseError) }),
        );
        throw error;
      }
      const held = indexes[error.changeIndex] ?? error.changeIndex;
      const changeIndex = original?.[held] ?? held;
      await releaseHold(options.accountId, journalId, JSON.stringify({ changeIndex, rule: error.rule, message: error.message }));
      throw new StockRuleError(changeIndex, error.rule, error.message);
    }
  }
  if (!(await moveJournalStatus(options.accountId, journalId, ["pending"], "held"))) {
    await releaseHold(options.accountId, journalId);
    throw new ContentionError("stock hold", chunks.length);
  }
  return { journalId, bind: (tx) => addHoldBinding(tx, options.accountId, journalId) };
}

/**
 * Folds a committed (bound) hold into the balances now. If this fails the write still stands
 * whole: the next reader or writer that meets a delta, or the sweeper, folds it.
 */
export async function foldNowOrLater(accountId: string, journalId: string): Promise<void> {
  await foldHold(accountId, journalId).catch((error) => log("WARN", "hold left to fold later", { accountId, journalId, ...errorFields(error) }));
}

/** A hold's journal as stored (tests and diagnostics). */
export async function readHold(accountId: string, journalId: string): Promise<StockJournalItem | undefined> {
  return readJournal(accountId, journalId);
}

/** The `item_variation_location_id` of an item-variation-location row, once it exists. */
export type RowIdOf = (itemId: string, variationId: string, locationId: string) => number | undefined;

function rowIdsOf(rows: readonly { itemId: string; variationId: string; locationId: string; ivlId: number }[]): RowIdOf {
  const ids = new Map(rows.map((row) => [rowKeyOf(row), row.ivlId]));
  return (itemId, variationId, locationId) => ids.get(rowKeyOf({ itemId, variationId, locationId }));
}

export interface StockCommitResult {
  /** The document's own items that failed their condition (by label), or null when committed. */
  cancellation: Cancellation | null;
}

/**
 * Stock changes made ready for a document write (see `prepareStock`): `commit` writes the
 * document's own items together with them in ONE transaction, and may be called again after a
 * cancellation of the document's own items (for example a lost race for the document's number:
 * `allocateNumber` around `commit`); `release` gives back what a plan that will not commit holds
 * (a no-op for inline changes, and after a successful commit).
 */
export interface StockPlan {
  commit(
    document: (tx: TransactionBuilder, rowIdOf: RowIdOf) => void,
    outcome: (rowIdOf: RowIdOf) => { completion: IdempotencyCompletion | undefined; body: unknown },
  ): Promise<Cancellation | null>;
  release(): Promise<void>;
}

/**
 * Prepares `changes` for a document write: up to `INLINE_LIMIT` changes ride in the document's
 * own transaction through the ledger (every `commit` plans them afresh); more are held first
 * (applied now, bound by the committing transaction). A rule a change breaks throws
 * `StockRuleError` (index into `changes`) with nothing held.
 */
export async function prepareStock(options: { accountId: string; source: LedgerSource; changes: readonly StockChange[] }): Promise<StockPlan> {
  const none: RowIdOf = () => undefined;
  if (options.changes.length === 0) {
    return {
      commit: (document, outcome) => writeTransaction((tx) => document(tx, none), outcome(none)),
      release: async () => {},
    };
  }
  if (options.changes.length <= INLINE_LIMIT) {
    return {
      commit: async (document, outcome) => {
        const result = await postStockChanges({
          accountId: options.accountId,
          source: options.source,
          changes: options.changes,
          extra: (tx, write) => document(tx, rowIdsOf(write.rows.map((r) => r.row))),
          respond: (write) => outcome(rowIdsOf(write.rows.map((r) => r.row))),
        });
        return result.rejected ?? null;
      },
      release: async () => {},
    };
  }
  const hold = await holdStock(options);
  let rowIdOf: RowIdOf | undefined;
  return {
    commit: async (document, outcome) => {
      if (!rowIdOf) {
        const keys = [
          ...new Map(options.changes.map((c) => [rowKeyOf(c), { itemId: c.itemId, variationId: c.variationId, locationId: c.locationId }])).values(),
        ];
        rowIdOf = rowIdsOf((await readItemsAndRows(options.accountId, [], keys)).rows);
      }
      const ids = rowIdOf;
      const cancellation = await writeTransaction((tx) => {
        document(tx, ids);
        hold.bind(tx);
      }, outcome(ids));
      // The hold's own binding failing means its lease ran out under a slow writer.
      if (cancellation?.failed(HOLD_BIND_LABEL) && !cancellation.failedOtherThan(HOLD_BIND_LABEL)) throw new ContentionError("stock hold", 1);
      // Committed: fold the deltas in now. If this fails, the write still stands whole: the
      // next reader or writer that meets a delta, or the sweeper, folds it.
      if (!cancellation) {
        await foldNowOrLater(options.accountId, hold.journalId);
      }
      return cancellation;
    },
    release: () => releaseHold(options.accountId, hold.journalId),
  };
}

/**
 * Commits a document write together with its stock changes, atomically: `document(tx)` adds the
 * document's own items (header, lines, counters, ...). Up to `INLINE_LIMIT` changes go into the
 * same transaction through the ledger; more are held first and bound by that transaction. A
 * rule a change breaks throws `StockRuleError` (index into `changes`) with nothing written;
 * a failed condition of the document's own items is returned (and any hold released).
 */
export async function commitWithStock(options: {
  accountId: string;
  source: LedgerSource;
  changes: readonly StockChange[];
  /** The document's own items; `rowIdOf` gives the `item_variation_location_id` of every row the changes touch. */
  document: (tx: TransactionBuilder, rowIdOf: RowIdOf) => void;
  /** The response (and stored outcome), built once the rows are known. */
  outcome: (rowIdOf: RowIdOf) => { completion: IdempotencyCompletion | undefined; body: unknown };
}): Promise<StockCommitResult> {
  const plan = await prepareStock(options);
  let cancellation: Cancellation | null;
  try {
    cancellation = await plan.commit(options.document, options.outcome);
  } catch (error) {
    await plan.release();
    throw error;
  }
  if (cancellation) await plan.release();
  return { cancellation };
}
