import { Decimal } from "../core/decimal.js";
import * as z from "zod";
import { lazy } from "./lazy.js";

/**
 * Amounts and quantities in requests (money, rates, quantities): apart from `common.ts` because
 * they need decimal.js, which the functions without amounts (contacts, locations, tasks, sync,
 * webhooks...) then never load.
 */

/** Money and rates: at most 12 integer digits and 4 decimals (architecture section 4, money). */
export const DECIMAL_INTEGER_DIGITS = 12;
export const DECIMAL_PLACES = 4;
const DECIMAL_TEXT = /^-?\d{1,12}(\.\d{1,4})?$/;
/** The text of a decimal that may not be negative: no sign (so the document's pattern refuses `-1` too). */
const UNSIGNED_DECIMAL_TEXT = /^\d{1,12}(\.\d{1,4})?$/;
const DECIMAL_LIMIT = 10 ** DECIMAL_INTEGER_DIGITS;
/**
 * The most significant digits an amount sent as a JSON NUMBER may have: a double holds every
 * decimal of 15 digits exactly, not every one of 16 (999999999999.9997 reads as ...9998). Longer
 * amounts are sent as strings, which are read exactly.
 */
export const NUMBER_DIGITS = 15;

function decimalOf(value: number | string): Decimal | undefined {
  if (typeof value === "number") {
    if (!Number.isFinite(value) || Math.abs(value) >= DECIMAL_LIMIT) return undefined;
    const decimal = new Decimal(value);
    return decimal.decimalPlaces() <= DECIMAL_PLACES ? decimal : undefined;
  }
  return DECIMAL_TEXT.test(value) ? new Decimal(value) : undefined;
}

/**
 * A decimal amount in a request: a JSON number or a numeric string, at most 12 integer digits
 * and 4 decimals (`1e300` or a 500,000-digit string are refused, never rounded), within
 * [min, max]. Money and rates alike; responses format money with four decimals and rates with
 * three. With `min` 0 or more the text has no sign (`-0` and `-1.0000` are refused by the
 * pattern itself, as the document shows).
 */
export function decimalInput(options: { min?: number; max?: number; description: string; example?: string; id?: string }) {
  const min = options.min ?? -(DECIMAL_LIMIT - 0.0001);
  const max = options.max ?? DECIMAL_LIMIT - 0.0001;
  const textPattern = min >= 0 ? UNSIGNED_DECIMAL_TEXT : DECIMAL_TEXT;
  return z
    .union([
      z.number().min(min).max(max),
      z
        .string()
        .max(DECIMAL_INTEGER_DIGITS + DECIMAL_PLACES + 2)
        .regex(textPattern, min >= 0 ? "must be a decimal number, not negative" : "must be a decimal number"),
    ])
    .refine(
      (value) => {
        const decimal = decimalOf(value);
        return decimal?.gte(min) && decimal.lte(max);
      },
      {
        message: `must be a number from ${min} to ${max} with at most ${DECIMAL_INTEGER_DIGITS} integer digits and ${DECIMAL_PLACES} decimals`,
        // One detail per refusal: a value the union already refused is not judged again.
        when: (payload) => payload.issues.length === 0,
      },
    )
    .refine((value) => typeof value !== "number" || new Decimal(value).sd(true) <= NUMBER_DIGITS, {
      message: `has more than ${NUMBER_DIGITS} significant digits, more than a JSON number holds exactly (it may have been read as another amount): send it as a string, e.g. "999999999999.9999"`,
      when: (payload) => payload.issues.length === 0,
    })
    .meta({ ...(options.id ? { id: options.id } : {}), description: options.description, example: options.example });
}

/** Money in a request that may not be negative (prices, costs, fees). */
export const moneyInput = lazy(() =>
  decimalInput({
    id: "MoneyInput",
    min: 0,
    description:
      'Amount, not negative, e.g. 12.5 or "12.5000": at most 12 integer digits and 4 decimals (a JSON number: 15 significant digits at most, else a string)',
    example: "12.5000",
  }),
);
/** Signed money in a request (payments: negative is a refund). */
export const signedMoneyInput = lazy(() =>
  decimalInput({
    id: "SignedMoneyInput",
    description: 'Signed amount, e.g. -5 or "-5.0000": at most 12 integer digits and 4 decimals (a JSON number: 15 significant digits at most, else a string)',
    example: "25.0000",
  }),
);
/** A percentage or tax rate in a request: 0 to 100, at most 4 decimals (the spec bounds only what responses show: three). */
export const percentInput = lazy(() =>
  decimalInput({
    id: "PercentInput",
    min: 0,
    max: 100,
    description: "Percent from 0 to 100, e.g. 8.25; kept at 3 decimals",
    example: "8.25",
  }),
);

/** Quantities: at most 4 decimals and below a billion units. */
export const MAX_QUANTITY = 999_999_999;
/**
 * A quantity in a request. `positive`: above zero (`exclusiveMinimum: 0` in the document);
 * `nonZero`: signed but never zero (`not: {const: 0}`); `min`: the lowest accepted value.
 */
export function quantityInput(options: { min?: number; positive?: boolean; nonZero?: boolean; description?: string } = {}) {
  const base = options.positive ? z.number().gt(0, "must be positive") : z.number().min(options.min ?? -MAX_QUANTITY);
  let schema = base.max(MAX_QUANTITY).refine((value) => new Decimal(value).decimalPlaces() <= DECIMAL_PLACES, `must have at most ${DECIMAL_PLACES} decimals`);
  if (options.nonZero) schema = schema.refine((value) => value !== 0, "must not be zero");
  return schema.meta({ description: options.description ?? `Quantity, at most ${DECIMAL_PLACES} decimals`, ...(options.nonZero ? { not: { const: 0 } } : {}) });
}
