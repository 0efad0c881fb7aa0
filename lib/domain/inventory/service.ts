import { StockRuleError } from "../../core/failures.js";
import { randomUUID } from "node:crypto";
import {
  CHUNK_MARK_LABEL,
  addChunkMark,
  addItemValuation,
  commitLedgerWrite,
  insertJournal,
  isLedgerFailure,
  moveJournalStatus,
  queryExpiredHolds,
  openHoldKeys,
  markJournalApplied,
  readInventorySequence,
  readItemTree,
  readItemsAndRows,
  readJournal,
  readJournalStates,
  rowKeyOf,
  type ChunkStep,
  type ItemTree,
  type LedgerWrite,
} from "../../db/inventory.js";
import { nowIso } from "../../db/keys.js";
import type { ItemRecord, StockJournalItem, StockRowItem } from "../../db/service.js";
import { RETRY, retrying } from "../../db/retry.js";
import { Cancellation, type TransactionBuilder } from "../../db/transactions.js";
import { ContentionError } from "../../core/errors.js";
import type { IdempotencyCompletion } from "../../core/idempotency.js";
import { log } from "../../core/log.js";
import {
  chunkIndexes,
  pendingJournalsOf,
  pendingOf,
  planHold,
  planLedgerWrite,
  planRelease,
  reservationsOf,
  type LedgerSource,
  type StockChange,
} from "./ledger-plan.js";
import { BALANCE_FIELDS, type Balances } from "./math.js";

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
 * or that is being released is released now; both answer `"settled"` (read again). Otherwise
 * it answers the live holds: not committed, so invisible to readers, and reserving stock
 * against other writers. Costs nothing when nothing is pending.
 */
export async function settlePending(
  accountId: string,
  items: Iterable<ItemRecord>,
  rows: Iterable<StockRowItem>,
  except?: string,
): Promise<"settled" | Set<string>> {
  const ids = pendingJournalIds(items, rows, except);
  const live = new Set<string>();
  if (ids.length === 0) return live;
  let settled = false;
  for (const journal of await readJournalStates(accountId, ids)) {
    if (journal.status === "bound") {
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

/**
 * Reads through `read` until nothing it returned is pending on a committed (or dead) hold,
 * so that a reader sees every write whole or not at all. Returns what was read and the live
 * holds in it (`visibleRows` hides rows only they created).
 */
export async function readSettled<T>(
  accountId: string,
  read: () => Promise<T>,
  stockOf: (value: T) => { items?: Iterable<ItemRecord>; rows?: Iterable<StockRowItem> },
): Promise<{ value: T; live: Set<string> }> {
  for (let round = 0; round < SETTLE_ROUNDS; round++) {
    const value = await read();
    const { items = [], rows = [] } = stockOf(value);
    const live = await settlePending(accountId, items, rows);
    if (live !== "settled") return { value, live };
  }
  throw new ContentionError("stock settle", SETTLE_ROUNDS);
}

/** Reads that keep meeting newly committed holds give up after this many rounds. */
const SETTLE_ROUNDS = 10;

/** Item records as readers see them: read again after folding any committed hold on them. */
export async function readSettledItems<T extends ItemRecord | undefined>(accountId: string, read: () => Promise<T[]>): Promise<T[]> {
  const { value } = await readSettled(accountId, read, (items) => ({ items: items.filter((item): item is NonNullable<T> => item !== undefined) }));
  return value;
}

/** An item with its variations and stock rows as readers see them (one Query, unless a hold is met). */
export async function readSettledItemTree(accountId: string, itemId: string): Promise<ItemTree> {
  const { value, live } = await readSettled(
    accountId,
    () => readItemTree(accountId, itemId),
    (tree) => ({ items: tree.item ? [tree.item] : [], rows: tree.rows }),
  );
  return { ...value, rows: visibleRows(value.rows, live) };
}

/** Rows as readers see them: a row that only a live (uncommitted) hold created is not there yet. */
export function visibleRows<T extends StockRowItem>(rows: readonly T[], live: ReadonlySet<string>): T[] {
  return rows.filter((row) => !(row.heldBy && live.has(row.heldBy) && BALANCE_FIELDS.every((field) => row[field] === 0)));
}

/**
 * Reads what a set of changes needs: the items and the rows they touch (one BatchGetItem
 * each, unless the caller already holds them), settled (`settlePending`: committed holds
 * folded, dead ones released) unless `except` names the hold being written, with what live
 * holds reserve; and the row sequence only when a change creates a row.
 */
async function readState(
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
  for (let round = 0; options.settle !== false; round++) {
    state ??= await read();
    const found = await settlePending(accountId, state.items.values(), state.rows.values(), options.hold);
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
 */
async function waitForReservingHolds(accountId: string, error: unknown, state: LedgerState, changes: readonly StockChange[]): Promise<boolean> {
  if (!(error instanceof StockRuleError) || !state.live?.size) return false;
  const change = changes[error.changeIndex];
  const reserves = change && state.reserved?.get(rowKeyOf(change));
  const holdsUnits = change && (state.heldUnits?.get(change.itemId) ?? 0) > 0;
  if (!(reserves && BALANCE_FIELDS.some((field) => reserves[field] < 0)) && !holdsUnits) return false;
  const deadline = Date.now() + HOLD_WAIT_MS;
  while (Date.now() < deadline) {
    const states = await readJournalStates(accountId, [...state.live]);
    // Ended, or its writer died (a lease that ran out): plan again, settling it.
    const live = states.filter((journal) => (journal.status === "pending" || journal.status === "held") && (journal.leaseUntil ?? 0) > Date.now());
    if (live.length === 0) return true;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return false;
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
        if (await waitForReservingHolds(journal.accountId, error, state, changes)) return RETRY;
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
  const { value, live } = await readSettled(
    accountId,
    () => readItemsAndRows(accountId, itemIds, unique),
    (read) => read,
  );
  const state = { items: new Map(value.items.map((item) => [item.itemId, item])), rows: new Map(value.rows.map((row) => [rowKeyOf(row), row])) };
  return { ...state, ...reservationsOf(state.rows.values(), state.items, live), live };
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
