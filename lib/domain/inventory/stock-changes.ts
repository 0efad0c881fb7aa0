/**
 * Stock changes and the balances they read (architecture section 5): the change and source
 * types, a row's and an item's balances, pending hold entries and what live holds reserve,
 * and the pure shaping of change lists (chunking, inverting, merging).
 */
import { rowKeyOf } from "../../core/records.js";
import type { ItemRecord, StockRowItem } from "../../db/service.js";
import { BALANCE_FIELDS, ZERO_BALANCES, addQuantities, type BalanceDeltas, type Balances } from "./math.js";

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
   * `false`: the unit cost is recorded on the history entry only, and the item's moving average
   * does not take it in (units given back at the cost they left at, to an item valued at its
   * cost rather than a moving average).
   */
  valued?: false;
  /**
   * Unique items only: the item's `sold` status after this change (an invoice that takes the
   * unit sells it: true; a reversal that gives it back: false). The item's status count
   * (`items_<archived><sold>`) moves in the same write. Ignored for quantity items.
   */
  sold?: boolean;
  /**
   * A sale (an invoice taking its quantities): on hand may go below zero at the row, for a
   * quantity item (spec part 2 sets no stock rule on invoices, and architecture section 5 keeps
   * stock from going negative only where the spec forbids it). A unique item is still one unit:
   * it sells only while it is on hand.
   */
  oversell?: true;
}

export interface LedgerSource {
  /** What caused the change: `adjustment`, `purchase_order`, `stock_transfer`, `kit_build`, ... */
  sourceType: string;
  sourceId?: string;
  userId?: string;
  reason?: string;
}

export function rowBalances(row: StockRowItem | undefined): Balances {
  return row ? { onHand: row.onHand, reserved: row.reserved, incoming: row.incoming, inTransit: row.inTransit } : { ...ZERO_BALANCES };
}

/** The per-location sums stored on an item, as balances. */
export function itemStock(item: Pick<ItemRecord, "stock">): Record<string, Balances> {
  return (item.stock ?? {}) as Record<string, Balances>;
}

/** A row's pending deltas (journalId -> deltas). */
export function pendingOf(row: Pick<StockRowItem, "pending">): Record<string, BalanceDeltas> {
  return (row.pending ?? {}) as Record<string, BalanceDeltas>;
}

/** An item's pending holds (journalId -> true). */
export function pendingJournalsOf(item: Pick<ItemRecord, "pendingJournals">): Record<string, true> {
  return (item.pendingJournals ?? {}) as Record<string, true>;
}

/** `pending` without `journalId`'s entry (undefined when none is left). */
export function withoutEntry<T>(pending: Record<string, T>, journalId: string): Record<string, T> | undefined {
  const { [journalId]: _dropped, ...rest } = pending;
  return Object.keys(rest).length > 0 ? rest : undefined;
}

/**
 * What the live holds (`live`: journals neither committed nor released) reserve on each row
 * (their net negative deltas, summed) and the units of unique items they would add.
 */
export function reservationsOf(
  rows: Iterable<StockRowItem>,
  items: ReadonlyMap<string, Pick<ItemRecord, "inventoryType">>,
  live: ReadonlySet<string>,
): { reserved: Map<string, Balances>; heldUnits: Map<string, number> } {
  const reserved = new Map<string, Balances>();
  const heldUnits = new Map<string, number>();
  // A hold's units of a unique item: its net on-hand and in-transit deltas over the item's rows
  // (a transfer's send or receive only moves a unit, and adds none).
  const unitsByHold = new Map<string, { itemId: string; units: number }>();
  for (const row of rows) {
    for (const [journalId, deltas] of Object.entries(pendingOf(row))) {
      if (!live.has(journalId)) continue;
      const sum = { ...(reserved.get(rowKeyOf(row)) ?? ZERO_BALANCES) };
      for (const field of BALANCE_FIELDS) if ((deltas[field] ?? 0) < 0) sum[field] = addQuantities(sum[field], deltas[field]);
      reserved.set(rowKeyOf(row), sum);
      if (items.get(row.itemId)?.inventoryType === "unique") {
        const key = `${journalId}#${row.itemId}`;
        const units = addQuantities(unitsByHold.get(key)?.units ?? 0, deltas.onHand ?? 0, deltas.inTransit ?? 0);
        unitsByHold.set(key, { itemId: row.itemId, units });
      }
    }
  }
  for (const { itemId, units } of unitsByHold.values()) if (units > 0) heldUnits.set(itemId, addQuantities(heldUnits.get(itemId) ?? 0, units));
  return { reserved, heldUnits };
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
  for (const [index, change] of changes.entries()) byItem.set(change.itemId, [...(byItem.get(change.itemId) ?? []), index]);
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
 * Changes merged per item-variation-location row, in first-seen order (deltas summed exactly);
 * rows whose deltas cancel out are left out. A change that sells or gives back a unique unit
 * (`sold` set) stays whole, in its place: a giving back is judged on whose sale the unit is
 * now (`withoutUnitAlreadyBack`), and a sale on whether the unit is on hand, so an edit's
 * reversal and a new line of the same unit cannot cancel out unjudged.
 */
export function mergeStockChanges(changes: readonly StockChange[]): StockChange[] {
  const merged = new Map<string | number, StockChange>();
  for (const [index, change] of changes.entries()) {
    const key = change.sold === undefined ? rowKeyOf(change) : index;
    const existing = merged.get(key);
    if (!existing) {
      merged.set(key, { ...change, deltas: { ...change.deltas } });
      continue;
    }
    for (const field of BALANCE_FIELDS) {
      const value = change.deltas[field];
      if (value !== undefined) existing.deltas[field] = addQuantities(existing.deltas[field] ?? 0, value);
    }
    if (change.oversell) existing.oversell = true;
  }
  return [...merged.values()].filter((change) => BALANCE_FIELDS.some((field) => (change.deltas[field] ?? 0) !== 0));
}
