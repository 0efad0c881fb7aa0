/**
 * A unique item's unit and the reversals of its sales, without storage: a reversal gives the unit
 * back only while the document reversing is the one that sold it (`soldBy`) and the unit is still
 * sold. Used by the single-transaction ledger write and, before journaling, by stock holds.
 */
import type { ItemRecord } from "../../db/service.js";
import type { StockChange } from "./stock-changes.js";

/** A change left out: a sale's reversal that would give back a unit already back on hand. */
export const UNIT_ALREADY_BACK: StockChange = { itemId: "", variationId: "", locationId: "", deltas: {} };

/**
 * A sale's reversal (`sold: false`) of a unique item that is not sold any more (its unit came
 * back on hand otherwise: an adjustment, a receipt) gives back nothing on hand: the unit is
 * there already, and the cancelled or deleted invoice must not count it twice (or be refused
 * for it). Its other deltas (a linked invoice's reservation) still apply; with none, the change
 * is left out.
 */
export function withoutUnitAlreadyBack(change: StockChange, items: ReadonlyMap<string, ItemRecord>, sourceId: string | undefined): StockChange {
  const item = items.get(change.itemId);
  if (change.sold !== false || item?.inventoryType !== "unique" || (change.deltas.onHand ?? 0) <= 0) return change;
  // Still sold by this document: the unit comes back. Sold again by another since: it is not this one's to give back.
  if (item.sold && (item.soldBy === undefined || item.soldBy === sourceId)) return change;
  const { onHand: _returned, ...others } = change.deltas;
  const { sold: _sold, ...rest } = change;
  return Object.values(others).some((delta) => (delta ?? 0) !== 0) ? { ...rest, deltas: others } : UNIT_ALREADY_BACK;
}

/**
 * A hold's changes with `withoutUnitAlreadyBack` applied before they are journaled (a hold's
 * changes are judged chunk by chunk and folded as judged, so the unit is left out up front): a
 * reversal whose unit is already back, or sold again by another document, keeps its other
 * deltas, or is left out. `original[i]` is the index in `changes` of the i-th change kept (a
 * refusal names the line by it).
 */
export function holdChangesWithoutUnitsBack(
  changes: readonly StockChange[],
  items: ReadonlyMap<string, ItemRecord>,
  sourceId: string | undefined,
): { changes: StockChange[]; original: number[] } {
  const kept: StockChange[] = [];
  const original: number[] = [];
  changes.forEach((change, index) => {
    const left = withoutUnitAlreadyBack(change, items, sourceId);
    if (left === UNIT_ALREADY_BACK) return;
    kept.push(left);
    original.push(index);
  });
  return { changes: kept, original };
}

/** The unique items whose units a hold's reversals may give back (`holdChangesWithoutUnitsBack` reads them). */
export const reversedUniqueCandidates = (changes: readonly StockChange[]): string[] => [
  ...new Set(changes.filter((change) => change.sold === false && (change.deltas.onHand ?? 0) > 0).map((change) => change.itemId)),
];
