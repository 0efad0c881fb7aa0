import { Decimal } from "../../core/decimal.js";

/**
 * Money and rates as the API writes them (spec part 1, section 2.1; architecture section 4):
 * decimal arithmetic only, money as four-decimal strings and percentages or tax rates as
 * three-decimal strings, rounded half away from zero.
 */
export function money(value: Decimal.Value): string {
  return new Decimal(value).toDecimalPlaces(4, Decimal.ROUND_HALF_UP).toFixed(4);
}

export function rate(value: Decimal.Value): string {
  return new Decimal(value).toDecimalPlaces(3, Decimal.ROUND_HALF_UP).toFixed(3);
}

/** Money held as an exact integer of ten-thousandths (so DynamoDB can ADD it atomically). */
export const MINOR_UNITS_PER_UNIT = 10_000;

/** An amount as an exact integer of ten-thousandths (how amounts paid are stored and moved). */
export const minorOf = (amount: string): number => new Decimal(amount).times(MINOR_UNITS_PER_UNIT).toNumber();

/** An amount of ten-thousandths as money; a string is an exact integer read beyond 2^53 (`readNumber`). */
export function moneyFromMinor(minor: number | string): string {
  return money(new Decimal(minor).div(MINOR_UNITS_PER_UNIT));
}
