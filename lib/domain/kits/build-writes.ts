import { itemStock, type LedgerSource, type StockChange } from "../inventory/stock-changes.js";
import { releaseHold, waitForReservingHolds, type LedgerState } from "../inventory/settling.js";
import type { AttemptContext } from "../../db/retry.js";
import { RETRY } from "../../db/retry.js";
import type { ItemRecord } from "../../db/service.js";
import { MAX_TRANSACTION_ITEMS, type TransactionBuilder } from "../../db/transactions.js";
import type { IdempotencyCompletion } from "../../core/idempotency.js";
import { MAX_INLINE_CHANGES, STOCK_MOVED, tryStockChanges } from "../inventory/service.js";
import { foldNowOrLater, holdStock, type StockHold } from "../inventory/stock-holds.js";
import { BALANCE_FIELDS, type Balances } from "../inventory/math.js";
import { rowOf, splitForJournal, type PlanItem } from "./planning.js";

/**
 * How a kit write (an assembly or a disassembly) moves stock: whether it fits one transaction
 * (`fitWrite`), holding the gains of one that does not (`holdGains`), and the commit of its
 * stock changes with the build records (`commitBuildStock`).
 */

/** An item as a kit plan reads it. */
export const planItemOf = (item: ItemRecord): PlanItem => ({
  itemId: item.itemId,
  name: item.name,
  archived: item.archived,
  inventoryType: item.inventoryType,
  cost: item.cost,
  averageCost: item.averageCost,
  stock: itemStock(item),
});

/** Upper bound of the items a ledger write of `changes` puts in its transaction. */
function ledgerItems(changes: readonly StockChange[]): number {
  const items = new Set(changes.map((c) => c.itemId)).size;
  const rows = new Set(changes.map((c) => rowOf(c.itemId, c.variationId) + c.locationId)).size;
  return items + rows + changes.length + 1; // + the row sequence, when a row is created
}

export interface WritePlan {
  atomic: StockChange[];
  journaled: StockChange[];
}

/**
 * Decides how a kit write fits DynamoDB's transactions: everything in ONE transaction when it
 * fits; otherwise the rows that lose stock (and unique items) stay in the transaction, whose
 * conditions make "insufficient stock" impossible, and the rows that only gain stock are held
 * first and bound by that transaction (`holdGains`). Refuses (null) a write whose atomic part
 * alone does not fit.
 */
export function fitWrite(
  changes: readonly StockChange[],
  items: LedgerState["items"],
  ownItems: (journal: boolean, atomic: readonly StockChange[]) => number,
): WritePlan | null {
  if (changes.length <= MAX_INLINE_CHANGES && ledgerItems(changes) + ownItems(false, changes) <= MAX_TRANSACTION_ITEMS) {
    return { atomic: [...changes], journaled: [] };
  }
  const { atomic, journaled } = splitForJournal(changes, new Map([...items].map(([id, item]) => [id, { inventoryType: item.inventoryType }])));
  if (atomic.length > MAX_INLINE_CHANGES || ledgerItems(atomic) + ownItems(true, atomic) > MAX_TRANSACTION_ITEMS) return null;
  return { atomic, journaled };
}

/**
 * Holds the stock a kit write's rows only gain before its transaction, which binds the hold:
 * the build (or disassembly) and every stock change it makes commit together, and no reader
 * sees the gains before that, nor part of them after (a reader folds a bound hold first; see
 * `lib/domain/inventory/stock-holds.ts`). The hold moves its items' versions, so the ledger state is read
 * again to commit against; when anything the plan read moved meanwhile (balances, what other
 * holds reserve, an item's kind, status or cost), the hold is released and the write plans
 * again (null).
 */
async function holdGains(
  accountId: string,
  source: LedgerSource,
  gains: readonly StockChange[],
  planned: LedgerState,
  reread: () => Promise<LedgerState>,
): Promise<{ hold: StockHold; state: LedgerState } | null> {
  const hold = await holdStock({ accountId, source, changes: gains });
  let state: LedgerState;
  try {
    state = await reread();
  } catch (error) {
    await releaseHold(accountId, hold.journalId);
    throw error;
  }
  if (sameStock(planned, state)) return { hold, state };
  await releaseHold(accountId, hold.journalId);
  return null;
}

/**
 * Whether two reads of the ledger state agree on all a kit plan reads: balances, what live
 * holds reserve, and each item's plan view. What the write's own hold leaves is no difference:
 * rows it created (empty), its positive deltas (no reservation) and the items' versions.
 */
function sameStock(before: LedgerState, after: LedgerState): boolean {
  const sameBalances = (a: Partial<Balances> | undefined, b: Partial<Balances> | undefined) =>
    BALANCE_FIELDS.every((field) => (a?.[field] ?? 0) === (b?.[field] ?? 0));
  const sameAt = <T extends Partial<Balances>>(a: ReadonlyMap<string, T> | Record<string, T>, b: ReadonlyMap<string, T> | Record<string, T>) => {
    const [x, y] = [a instanceof Map ? a : new Map(Object.entries(a)), b instanceof Map ? b : new Map(Object.entries(b))];
    return [...new Set([...x.keys(), ...y.keys()])].every((key) => sameBalances(x.get(key), y.get(key)));
  };
  if (!sameAt(before.rows, after.rows) || !sameAt(before.reserved ?? new Map(), after.reserved ?? new Map())) return false;
  for (const key of new Set([...before.items.keys(), ...after.items.keys()])) {
    const [a, b] = [before.items.get(key), after.items.get(key)];
    if (!a || !b) return false;
    const { stock: stockA, ...viewA } = planItemOf(a);
    const { stock: stockB, ...viewB } = planItemOf(b);
    if (JSON.stringify(viewA) !== JSON.stringify(viewB) || !sameAt(stockA, stockB)) return false;
  }
  return true;
}

/**
 * Commits a kit write's stock changes (`fit`, planned on `state`): holds the gains it journals
 * first (`holdGains`), then writes its atomic changes and `extra` (the caller's build records
 * and kit figures) in ONE transaction that binds the hold or, with no hold, serves the next
 * writer in line (`turns`). The hold is released when the write throws (the error then goes
 * through `explain`, which returns what to throw instead) or does not commit, and folded when
 * it commits. RETRY when the stock moved under the plan (plan again); otherwise the
 * ledger's result, whose `rejected` names the caller's own items that failed their condition.
 */
export async function commitBuildStock(options: {
  accountId: string;
  source: LedgerSource;
  fit: WritePlan;
  state: LedgerState;
  reread: () => Promise<LedgerState>;
  averageCosts: ReadonlyMap<string, string>;
  turns: AttemptContext;
  extra: (tx: TransactionBuilder) => void;
  respond?: () => { completion: IdempotencyCompletion | undefined; body: unknown };
  explain: (error: unknown) => Promise<unknown>;
}): Promise<Exclude<Awaited<ReturnType<typeof tryStockChanges>>, typeof STOCK_MOVED> | typeof RETRY> {
  const { accountId, source, fit, state, turns } = options;
  let held: Awaited<ReturnType<typeof holdGains>> | undefined;
  let result: Awaited<ReturnType<typeof tryStockChanges>>;
  try {
    held = fit.journaled.length > 0 ? await holdGains(accountId, source, fit.journaled, state, options.reread) : undefined;
    if (held === null) return RETRY;
    result = await tryStockChanges({
      accountId,
      source,
      changes: fit.atomic,
      state: held?.state ?? state,
      itemSets: new Map([...options.averageCosts].map(([itemId, averageCost]) => [itemId, { averageCost }])),
      extra: (tx) => {
        options.extra(tx);
        if (held) held.hold.bind(tx);
        // No hold to fold: the next builder in line (other processes) may start as this commits.
        else turns.serveAllWithin(tx);
      },
      respond: options.respond,
    });
  } catch (error) {
    if (held) await releaseHold(accountId, held.hold.journalId);
    // Refused only for stock a live hold (a long document's write) reserves: as every other
    // writer of stock, wait for it to commit or be released, then plan again.
    if (await waitForReservingHolds(accountId, error, held?.state ?? state, fit.atomic)) return RETRY;
    throw await options.explain(error);
  }
  if (held && (result === STOCK_MOVED || result.rejected)) await releaseHold(accountId, held.hold.journalId);
  if (result === STOCK_MOVED) return RETRY;
  if (result.rejected) return result;
  // Still this process's turn on these items: the hold is folded before the next build
  // here reads them (its valuation sees them).
  if (held) await foldNowOrLater(accountId, held.hold.journalId);
  else turns.servedWithin();
  return result;
}
