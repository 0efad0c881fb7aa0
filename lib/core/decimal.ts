import { Decimal } from "decimal.js";

/**
 * decimal.js as every amount uses it (architecture section 4, money). Its default precision
 * is 20 significant digits, which the largest accepted amounts exceed: a 16-digit price times
 * a 13-digit quantity times a rate needs about 35 before rounding to four decimals. Results are
 * computed exactly at 64 and rounded only where the money rules say (half away from zero).
 */
Decimal.set({ precision: 64, rounding: Decimal.ROUND_HALF_UP });

export { Decimal };
