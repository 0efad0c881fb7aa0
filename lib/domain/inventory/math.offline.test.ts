import { Decimal } from "../../core/decimal.js";
import { describe, expect, it } from "vitest";
import { ZERO_BALANCES, addQuantities, applyDeltas, money, movingAverageCost, sumBalances } from "./math.js";

/**
 * The ledger's arithmetic without a database (architecture section 4, "Money" and "Items,
 * variations and stock"): decimal strings in and out, four decimals rounded half away from
 * zero, and quantities summed exactly (never with float error).
 */
const FOUR_DECIMALS = /^-?\d+\.\d{4}$/;

describe("movingAverageCost", () => {
  it("takes the received cost on the first receipt (no average before)", () => {
    expect(movingAverageCost(0, null, 5, "12.5")).toBe("12.5000");
    expect(movingAverageCost(0, undefined, 1, 7)).toBe("7.0000");
    // Stock on hand without a known average: the receipt's cost is all there is.
    expect(movingAverageCost(3, null, 2, "4.25")).toBe("4.2500");
  });

  it("is the value-weighted mean of stock on hand and stock received", () => {
    expect(movingAverageCost(10, "2.0000", 30, "4.0000")).toBe("3.5000");
    expect(movingAverageCost("10", "2", "30", "4")).toBe("3.5000");
    // Equal weights: the plain mean.
    expect(movingAverageCost(5, "1.0000", 5, "3.0000")).toBe("2.0000");
    // A small receipt barely moves a large stock: (1000 x 10 + 1 x 20) / 1001 = 10.00999...
    expect(movingAverageCost(1000, "10.0000", 1, "20.0000")).toBe("10.0100");
    // Receiving at the same cost leaves the average where it was.
    expect(movingAverageCost(7, "3.3333", 11, "3.3333")).toBe("3.3333");
  });

  it("rounds half away from zero at four decimals", () => {
    // (1 x 1.0000 + 1 x 1.0001) / 2 = 1.00005 exactly -> up.
    expect(movingAverageCost(1, "1.0000", 1, "1.0001")).toBe("1.0001");
    // (1 x 0.0000 + 1 x 0.0001) / 2 = 0.00005 exactly -> up, not to even (0.0000).
    expect(movingAverageCost(1, "0.0000", 1, "0.0001")).toBe("0.0001");
    // (1 x 2.0002 + 1 x 2.0003) / 2 = 2.00025 -> 2.0003 (half-even would give 2.0002).
    expect(movingAverageCost(1, "2.0002", 1, "2.0003")).toBe("2.0003");
    // Just below the half: (2 x 1.0000 + 1 x 1.0001) / 3 = 1.0000333... -> down.
    expect(movingAverageCost(2, "1.0000", 1, "1.0001")).toBe("1.0000");
    // Just above the half: (1 x 1.0000 + 3 x 1.0001) / 4 = 1.000075 -> up.
    expect(movingAverageCost(1, "1.0000", 3, "1.0001")).toBe("1.0001");
    // A thirds case: (1 x 0 + 2 x 1) / 3 = 0.6666... -> 0.6667.
    expect(movingAverageCost(1, "0", 2, "1")).toBe("0.6667");
  });

  it("money() rounds a negative half away from zero too", () => {
    expect(money("-1.00005")).toBe("-1.0001");
    expect(money("1.00005")).toBe("1.0001");
    expect(money("-0.00004")).toMatch(/^-?0\.0000$/);
  });

  it("takes the received cost when on hand is zero or negative (that stock carries no value)", () => {
    expect(movingAverageCost(0, "5.0000", 10, "2.5")).toBe("2.5000");
    expect(movingAverageCost(-3, "5.0000", 10, "2.5")).toBe("2.5000");
    expect(movingAverageCost("-0.0001", "100", 1, "0.1234")).toBe("0.1234");
  });

  it("leaves the average unchanged for a receipt of zero or fewer units", () => {
    expect(movingAverageCost(10, "3.5000", 0, "9.0000")).toBe("3.5000");
    expect(movingAverageCost(10, "3.5000", -5, "9.0000")).toBe("3.5000");
    expect(movingAverageCost(10, "3.5", "-0.0001", "1000")).toBe("3.5000");
    expect(movingAverageCost(0, "1.2345", 0, "9")).toBe("1.2345");
  });

  it("works in decimals: inputs that floats get wrong give the exact result", () => {
    // In floats (0.1 x 1 + 0.2 x 1.000075) / (0.1 + 0.2) = 1.0000499999999999 -> 1.0000;
    // exactly it is 0.300015 / 0.3 = 1.00005 -> 1.0001.
    expect(movingAverageCost(0.1, "1", 0.2, "1.000075")).toBe("1.0001");
    expect(movingAverageCost("0.1", "1", "0.2", "1.000075")).toBe("1.0001");
    // 0.1 @ 0.3 + 0.2 @ 0.3 -> exactly 0.3.
    expect(movingAverageCost(0.1, "0.3", 0.2, "0.3")).toBe("0.3000");
    // Large values keep every digit: (1,000,000 x 123456.7891 + 1 x 0.0001) / 1,000,001.
    const expected = new Decimal("1000000").times("123456.7891").plus("0.0001").div("1000001").toDecimalPlaces(4, Decimal.ROUND_HALF_UP).toFixed(4);
    expect(movingAverageCost(1_000_000, "123456.7891", 1, "0.0001")).toBe(expected);
  });

  it("always answers a four-decimal string", () => {
    const cases: [number, string | null, number, string][] = [
      [0, null, 1, "1"],
      [3, "2.5", 4, "0.75"],
      [2, "0.3333", 1, "0.3334"],
      [-1, "9", 2, "9.99999"],
      [5, "1", 0, "7"],
    ];
    for (const [onHand, average, received, cost] of cases) expect(movingAverageCost(onHand, average, received, cost)).toMatch(FOUR_DECIMALS);
  });
});

describe("addQuantities", () => {
  it("sums decimals exactly", () => {
    expect(addQuantities(0.1, 0.2)).toBe(0.3);
    expect(addQuantities(0.1, 0.2) === 0.3).toBe(true);
    expect(addQuantities(1.1, 2.2)).toBe(3.3);
    expect(addQuantities(0.3, -0.1)).toBe(0.2);
    expect(addQuantities(0.7, 0.1, 0.1, 0.1)).toBe(1);
    expect(addQuantities(1.0001, 2.0002, -0.0003)).toBe(3);
  });

  it("treats missing values as zero and an empty sum as zero", () => {
    expect(addQuantities()).toBe(0);
    expect(addQuantities(undefined, 0.5, undefined)).toBe(0.5);
  });

  it("a thousand additions of 0.1 land on exactly 100", () => {
    let total = 0;
    for (let i = 0; i < 1000; i++) total = addQuantities(total, 0.1);
    expect(total).toBe(100);
  });
});

describe("applyDeltas and sumBalances", () => {
  it("applies deltas exactly and leaves untouched balances as they were", () => {
    const before = { onHand: 0.1, reserved: 0.7, incoming: 2, inTransit: 0.3 };
    expect(applyDeltas(before, { onHand: 0.2 })).toEqual({ onHand: 0.3, reserved: 0.7, incoming: 2, inTransit: 0.3 });
    expect(applyDeltas(before, { reserved: -0.6, inTransit: -0.1 })).toEqual({ onHand: 0.1, reserved: 0.1, incoming: 2, inTransit: 0.2 });
    expect(applyDeltas(before, {})).toEqual(before);
    // The input is not modified.
    expect(before).toEqual({ onHand: 0.1, reserved: 0.7, incoming: 2, inTransit: 0.3 });
  });

  it("starts from zero balances and can go below zero (the ledger refuses it, not the math)", () => {
    expect(applyDeltas(ZERO_BALANCES, { onHand: -0.3 })).toEqual({ onHand: -0.3, reserved: 0, incoming: 0, inTransit: 0 });
  });

  it("sums rows exactly", () => {
    const rows = [
      { onHand: 0.1, reserved: 0.1, incoming: 0, inTransit: 1.1 },
      { onHand: 0.2, reserved: 0.2, incoming: 0.0001, inTransit: 2.2 },
    ];
    expect(sumBalances(rows)).toEqual({ onHand: 0.3, reserved: 0.3, incoming: 0.0001, inTransit: 3.3 });
    expect(sumBalances([])).toEqual(ZERO_BALANCES);
  });
});
