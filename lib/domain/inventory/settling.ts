/**
 * Pending holds resolved against their commit point (`settlePending`), and the chunk applier
 * that writes, folds and reverts journal chunks exactly once (`applyChunk`, `foldHold`,
 * `releaseHold`). One file: settling folds or releases holds, and applying a chunk reads the
 * state it plans on through the same settling.
 */
import { chunkIndexes, pendingJournalsOf, pendingOf, reservationsOf, type LedgerSource, type StockChange } from "./stock-changes.js";
import { rowKeyOf } from "../../core/records.js";
import { nowIso } from "../../core/clock.js";
import { HoldYieldError, StockRuleError } from "../../core/failures.js";
import {
  CHUNK_MARK_LABEL,
  addChunkMark,
  commitLedgerWrite,
  moveJournalStatus,
  readInventorySequence,
  readItemsAndRows,
  readJournal,
  readJournalStates,
  type ChunkStep,
  type JournalState,
  type LedgerWrite,
} from "../../db/inventory.js";
import type { ItemRecord, StockJournalItem, StockRowItem } from "../../db/service.js";
import { RETRY, retrying } from "../../db/retry.js";
import { ContentionError } from "../../core/errors.js";
import { planHold, planLedgerWrite, planRelease } from "./ledger-plan.js";
import { BALANCE_FIELDS, type Balances } from "./math.js";

export interface LedgerState {
  items: Map<string, ItemRecord>;
  rows: Map<string, StockRowItem>;
  /** What live holds reserve on the rows (see `reservationsOf`). */
  reserved?: Map<string, Balances>;
  heldUnits?: Map<string, number>;
  /** The live holds met (neither committed nor released). */
  live?: Set<string>;
}

// ---------------------------------------------------------------------------------------------
// Pending deltas: how every reader and writer resolves a hold against its commit point.

/** The holds whose pending deltas appear on these items and rows (less `except`). */
function pendingJournalIds(items: Iterable<ItemRecord>, rows: Iterable<StockRowItem>, except?: string): string[] {
  const ids = new Set<string>();
  for (const item of items) for (const id of Object.keys(pendingJournalsOf(item))) ids.add(id);
  for (const row of rows) {
    for (const id of Object.keys(pendingOf(row))) ids.add(id);
    if (row.heldBy) ids.add(row.heldBy);
  }
  if (except) ids.delete(except);
  return [...ids];
}

/**
 * Resolves the holds pending on `items` and `rows` against their commit point: a bound
 * (committed) hold is folded into the balances now, and one whose writer died (lease passed)
 * or that is being released is released now; both answer `"settled"` (read again). So does a
 * hold already `applied` or `released`: another reader or writer finished it after `items` and
 * `rows` were read, so they predate its fold or its release (once per hold, in `reread`: a read
 * loop must not spin on a mark left behind). Otherwise it answers the live holds: not
 * committed, so invisible to readers, and reserving stock against other writers. Costs nothing
 * when nothing is pending.
 */
export async function settlePending(
  accountId: string,
  items: Iterable<ItemRecord>,
  rows: Iterable<StockRowItem>,
  options: { except?: string; reread: Set<string> },
): Promise<"settled" | Set<string>> {
  const ids = pendingJournalIds(items, rows, options.except);
  const live = new Set<string>();
  if (ids.length === 0) return live;
  let settled = false;
  for (const journal of await readJournalStates(accountId, ids)) {
    if (journal.status === "applied" || journal.status === "released") {
      if (!options.reread.has(journal.journalId)) {
        options.reread.add(journal.journalId);
        settled = true;
      }
    } else if (journal.status === "bound") {
      await foldHold(accountId, journal.journalId);
      settled = true;
    } else if (journal.status === "releasing" || ((journal.status === "pending" || journal.status === "held") && (journal.leaseUntil ?? 0) <= Date.now())) {
      await releaseHold(accountId, journal.journalId);
      settled = true;
    } else if (journal.status === "pending" || journal.status === "held") {
      live.add(journal.journalId);
    }
  }
  return settled ? "settled" : live;
}

/** Reads that keep meeting newly committed holds give up after this many rounds. */
export const SETTLE_ROUNDS = 10;

/**
 * Reads what a set of changes needs: the items and the rows they touch (one BatchGetItem
 * each, unless the caller already holds them), settled (`settlePending`: committed holds
 * folded, dead ones released) unless `except` names the hold being written, with what live
 * holds reserve; and the row sequence only when a change creates a row.
 */
export async function readState(
  accountId: string,
  changes: readonly StockChange[],
  options: { known?: LedgerState; hold?: string; settle?: boolean } = {},
): Promise<LedgerState & { sequence: number }> {
  const rowKeys = [...new Map(changes.map((c) => [rowKeyOf(c), { itemId: c.itemId, variationId: c.variationId, locationId: c.locationId }])).values()];
  const read = async (): Promise<LedgerState> => {
    const { items, rows } = await readItemsAndRows(
      accountId,
      changes.map((c) => c.itemId),
      rowKeys,
    );
    return { items: new Map(items.map((item) => [item.itemId, item])), rows: new Map(rows.map((row) => [rowKeyOf(row), row])) };
  };
  let state = options.known;
  let live = new Set<string>();
  const reread = new Set<string>();
  for (let round = 0; options.settle !== false; round++) {
    state ??= await read();
    const found = await settlePending(accountId, state.items.values(), state.rows.values(), { except: options.hold, reread });
    if (found !== "settled") {
      live = found;
      break;
    }
    if (round + 1 >= SETTLE_ROUNDS) throw new ContentionError("stock settle", SETTLE_ROUNDS);
    state = undefined;
  }
  state ??= await read();
  const createsRows = changes.some((change) => !state.rows.has(rowKeyOf(change)));
  return { ...state, ...reservationsOf(state.rows.values(), state.items, live), live, sequence: createsRows ? await readInventorySequence(accountId) : 0 };
}

/** How long a writer refused only for stock a live hold reserves waits for that hold to end (a hold's lease). */
const HOLD_WAIT_MS = 20_000;

/**
 * A writer whose change breaks a rule only because live holds reserve the stock waits for
 * them to commit or be released (their writers are seconds from either) and plans again;
 * answers false when there is nothing to wait for (the refusal stands).
 *
 * Wait-die between holds: for a hold's own chunk (`self`), it waits only when those holds are
 * all younger than it (created later; the id breaks a tie); when one is older, the hold gives
 * way (`HoldYieldError`): its writer releases it and waits, holding nothing, for the older ones
 * to end, then plans again. So two holds never wait on each other: three 100-line sends of one
 * item's 250 units once all waited for the others' reservations until their leases ran out
 * (503); now the oldest goes on. The holds' states are read once for both decisions.
 */
export async function waitForReservingHolds(
  accountId: string,
  error: unknown,
  state: LedgerState,
  changes: readonly StockChange[],
  self?: { journalId: string; createdAt: string },
): Promise<boolean> {
  if (!refusedForReservations(error, state, changes)) return false;
  const journalIds = [...state.live!];
  const states = await readJournalStates(accountId, journalIds);
  if (self) {
    const olderThanSelf = (journal: JournalState) =>
      journal.createdAt < self.createdAt || (journal.createdAt === self.createdAt && journal.journalId < self.journalId);
    const older = states.filter((journal) => isLive(journal) && olderThanSelf(journal));
    if (older.length > 0) throw new HoldYieldError(older.map((journal) => journal.journalId));
  }
  return waitForHoldsToEnd(accountId, journalIds, states);
}

/** Whether a refusal (`error`) broke its rule only on stock that live holds reserve. */
function refusedForReservations(error: unknown, state: LedgerState, changes: readonly StockChange[]): boolean {
  if (!(error instanceof StockRuleError) || !state.live?.size) return false;
  const change = changes[error.changeIndex];
  const reserves = change && state.reserved?.get(rowKeyOf(change));
  const holdsUnits = change && (state.heldUnits?.get(change.itemId) ?? 0) > 0;
  return Boolean(reserves && BALANCE_FIELDS.some((field) => reserves[field] < 0)) || Boolean(holdsUnits);
}

/** A hold still open: neither committed nor released, and its writer's lease not run out. */
const isLive = (journal: JournalState) => (journal.status === "pending" || journal.status === "held") && (journal.leaseUntil ?? 0) > Date.now();

/**
 * Waits (at most a hold's lease) until none of `journalIds` is live; false when some still is.
 * `known`: their states as just read (no second read before the first wait).
 */
export async function waitForHoldsToEnd(accountId: string, journalIds: readonly string[], known?: readonly JournalState[]): Promise<boolean> {
  const deadline = Date.now() + HOLD_WAIT_MS;
  let states = known ?? (await readJournalStates(accountId, journalIds));
  // Ended, or its writer died (a lease that ran out): plan again, settling it.
  while (states.some(isLive)) {
    if (Date.now() >= deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 50));
    states = await readJournalStates(accountId, journalIds);
  }
  return true;
}

/** The name under which writers of one item's record queue in this process (see `retrying`). */
export const itemLockName = (accountId: string, itemId: string): string => `item:${accountId}:${itemId}`;

/**
 * Does one step of one chunk of a journal exactly once (the chunk's transaction carries the
 * step's mark, `addChunkMark`):
 * - `forward`: a post journal's chunk moves the balances (with history); a hold's chunk is
 *   written as pending deltas (`planHold`), judged against what other live holds reserve;
 * - `fold`: a bound hold's chunk moves the balances (with history) and drops its pending deltas;
 * - `revert`: a releasing hold's chunk drops its pending deltas (nothing had moved).
 * A rule the chunk breaks throws `StockRuleError` (index within the chunk), unless the chunk
 * was marked meanwhile.
 */
export async function applyChunk(
  journal: Pick<StockJournalItem, "accountId" | "journalId" | "mode" | "sourceType" | "sourceId" | "userId" | "reason" | "createdAt">,
  chunkNumber: number,
  journalChanges: readonly StockChange[],
  indexes: readonly number[],
  step: ChunkStep = "forward",
): Promise<void> {
  const source: LedgerSource = { sourceType: journal.sourceType, sourceId: journal.sourceId, userId: journal.userId, reason: journal.reason };
  const changes = indexes.map((i) => journalChanges[i]!);
  const isHold = journal.mode === "hold";
  const markedElsewhere = async () => {
    const stored = await readJournal(journal.accountId, journal.journalId);
    const marks = step === "forward" ? stored?.appliedChunks : step === "fold" ? stored?.foldedChunks : stored?.revertedChunks;
    return (marks ?? []).includes(chunkNumber);
  };
  // The items whose last chunk this is lose the hold's mark when it is folded.
  const laterItems = new Set(journalChanges.filter((_, i) => i > Math.max(...indexes)).map((change) => change.itemId));
  await retrying(
    "journal chunk",
    async (attempt) => {
      if (attempt > 0 && (await markedElsewhere())) return true;
      // Folding and releasing judge nothing: they only need the rows as stored (and must not
      // settle other holds, which may be folding into these very rows).
      const state = await readState(journal.accountId, changes, { hold: isHold ? journal.journalId : undefined, settle: step === "forward" });
      let write: LedgerWrite;
      try {
        const input = { accountId: journal.accountId, journalId: journal.journalId, source, at: journal.createdAt, changes, ...state };
        if (step === "revert") write = planRelease(input);
        else if (step === "fold")
          write = planLedgerWrite({ ...input, at: nowIso(), fold: { itemsDone: new Set(changes.map((c) => c.itemId).filter((id) => !laterItems.has(id))) } });
        else write = isHold ? planHold(input) : planLedgerWrite(input);
      } catch (error) {
        // Another applier may have marked this chunk since: then the state reflects it, and the
        // chunk must not be judged (or applied) again.
        if (error instanceof StockRuleError && (await markedElsewhere())) return true;
        if (await waitForReservingHolds(journal.accountId, error, state, changes, isHold && step === "forward" ? journal : undefined)) return RETRY;
        throw error;
      }
      // History ids follow each change's position in the journal, not in the chunk.
      for (const [i, entry] of write.history.entries()) entry.entryId = `${journal.journalId}:${indexes[i]!}`;
      const cancellation = await commitLedgerWrite(write, (tx) => addChunkMark(tx, journal.accountId, journal.journalId, chunkNumber, step));
      if (!cancellation || cancellation.failed(CHUNK_MARK_LABEL)) return true; // done now, before, or no longer wanted
      return RETRY;
    },
    undefined,
    changes.map((change) => itemLockName(journal.accountId, change.itemId)),
  );
}

/**
 * Folds a bound (committed) hold into the balances, chunk by chunk, each chunk once however
 * many folders run (its writer, a reader or writer that met it, the sweeper), then marks it
 * applied. Safe to run again and concurrently; does nothing unless the hold is bound.
 */
export async function foldHold(accountId: string, journalId: string): Promise<void> {
  const journal = await readJournal(accountId, journalId);
  if (journal?.status !== "bound") return;
  const changes = JSON.parse(journal.changes) as StockChange[];
  const folded = new Set(journal.foldedChunks ?? []);
  for (const [chunkNumber, indexes] of chunkIndexes(changes).entries()) {
    if (!folded.has(chunkNumber)) await applyChunk(journal, chunkNumber, changes, indexes, "fold");
  }
  await moveJournalStatus(accountId, journalId, ["bound"], "applied");
}

/**
 * Releases a hold that is not bound: switches it to `releasing` (so no chunk can be written
 * any more, nor the hold bound), removes the pending deltas of every written chunk exactly
 * once, and marks it `released`. Nothing it held was ever visible. Safe to run again, and
 * concurrently (the sweeper, a writer, a reader that met it after its lease).
 */
export async function releaseHold(accountId: string, journalId: string, failure?: string): Promise<void> {
  await moveJournalStatus(accountId, journalId, ["pending", "held"], "releasing", failure ? { failure } : {});
  const journal = await readJournal(accountId, journalId);
  if (journal?.status !== "releasing") return; // bound, released, or never existed
  const changes = JSON.parse(journal.changes) as StockChange[];
  const chunks = chunkIndexes(changes);
  const reverted = new Set(journal.revertedChunks ?? []);
  for (const chunkNumber of [...(journal.appliedChunks ?? [])].sort((a, b) => b - a)) {
    if (!reverted.has(chunkNumber)) await applyChunk(journal, chunkNumber, changes, chunks[chunkNumber]!, "revert");
  }
  await moveJournalStatus(accountId, journalId, ["releasing"], "released");
}
