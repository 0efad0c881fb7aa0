/**
 * Stock as readers see it: items, item trees and ledger state read again after settling any
 * committed (or dead) hold on them, so that no read shows part of a write.
 */
import { reservationsOf } from "./stock-changes.js";
import { rowKeyOf } from "../../core/records.js";
import { readItemTree, readItemsAndRows, type ItemTree } from "../../db/inventory.js";
import type { ItemRecord, StockRowItem } from "../../db/service.js";
import { ContentionError } from "../../core/errors.js";
import { BALANCE_FIELDS } from "./math.js";
import { SETTLE_ROUNDS, settlePending, type LedgerState } from "./settling.js";

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
  const reread = new Set<string>();
  for (let round = 0; round < SETTLE_ROUNDS; round++) {
    const value = await read();
    const { items = [], rows = [] } = stockOf(value);
    const live = await settlePending(accountId, items, rows, { reread });
    if (live !== "settled") return { value, live };
  }
  throw new ContentionError("stock settle", SETTLE_ROUNDS);
}

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
