import { Decimal } from "../../core/decimal.js";
import { money } from "../common/money.js";

/**
 * Pure arithmetic of the inventory ledger (decimal, never floats): balances, quantities and
 * the moving average unit cost. Quantities are JSON numbers with up to four decimals.
 */
export const QUANTITY_PLACES = 4;

export interface Balances {
  onHand: number;
  reserved: number;
  incoming: number;
  inTransit: number;
}

export type BalanceDeltas = Partial<Balances>;

/**
 * The most an item may count of any balance, over all its locations: 11 integer digits and 4
 * decimals, 15 significant digits, which a JSON number (a double) holds exactly. Quantities are
 * stored and summed as such numbers; past this they would lose their last decimals.
 */
export const MAX_STOCK_BALANCE = 99_999_999_999.9999;

export const ZERO_BALANCES: Readonly<Balances> = { onHand: 0, reserved: 0, incoming: 0, inTransit: 0 };
export const BALANCE_FIELDS = ["onHand", "reserved", "incoming", "inTransit"] as const;

/** Exact decimal sum of quantities, returned as a JSON number. */
export function addQuantities(...values: readonly (number | undefined)[]): number {
  return values.reduce<Decimal>((sum, value) => sum.plus(value ?? 0), new Decimal(0)).toNumber();
}

/** Balances after applying deltas. */
export function applyDeltas(before: Balances, deltas: BalanceDeltas): Balances {
  return {
    onHand: addQuantities(before.onHand, deltas.onHand),
    reserved: addQuantities(before.reserved, deltas.reserved),
    incoming: addQuantities(before.incoming, deltas.incoming),
    inTransit: addQuantities(before.inTransit, deltas.inTransit),
  };
}

export function sumBalances(rows: readonly Balances[]): Balances {
  return {
    onHand: addQuantities(...rows.map((r) => r.onHand)),
    reserved: addQuantities(...rows.map((r) => r.reserved)),
    incoming: addQuantities(...rows.map((r) => r.incoming)),
    inTransit: addQuantities(...rows.map((r) => r.inTransit)),
  };
}

/** True when a quantity has at most four decimals (the precision stored and summed). */
export function hasQuantityPrecision(value: number): boolean {
  return Number.isFinite(value) && new Decimal(value).decimalPlaces() <= QUANTITY_PLACES;
}

export { money };

/**
 * The moving average unit cost after receiving (or building) `receivedQuantity` units at
 * `receivedUnitCost`: the value-weighted mean of the stock on hand and the stock received.
 * Stock on hand at or below zero carries no value, so the received cost becomes the average.
 * A receipt of zero or fewer units leaves the average unchanged. Four decimals, half away
 * from zero.
 */
export function movingAverageCost(
  onHandBefore: Decimal.Value,
  averageCostBefore: Decimal.Value | null | undefined,
  receivedQuantity: Decimal.Value,
  receivedUnitCost: Decimal.Value,
): string {
  const received = new Decimal(receivedQuantity);
  const unitCost = new Decimal(receivedUnitCost);
  if (received.lte(0)) return money(averageCostBefore ?? unitCost);
  const onHand = new Decimal(onHandBefore);
  if (onHand.lte(0) || averageCostBefore === null || averageCostBefore === undefined) return money(unitCost);
  const value = onHand.times(averageCostBefore).plus(received.times(unitCost));
  return money(value.div(onHand.plus(received)));
}
