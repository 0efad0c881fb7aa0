import { Decimal } from "../../core/decimal.js";
import { describe, expect, it } from "vitest";
import { ApiError } from "../../core/errors.js";
import { assertTotalInRange, computeTotals, MAX_DOCUMENT_TOTAL, type PricingInput } from "./totals.js";
import { lineBehindStockRule } from "./rules.js";

const line = (quantity: number, unitPrice: string, taxRate = "0", discountPercent = "0", tax2Rate = "0"): PricingInput => ({
  quantity,
  unitPrice,
  taxRate,
  tax2Rate,
  discountPercent,
});

describe("offline: document totals", () => {
  it("bounds the totals of documents that move money at MAX_DOCUMENT_TOTAL (amounts paid and revenue are exact integers of ten-thousandths): 422 on lines", () => {
    for (const total of [MAX_DOCUMENT_TOTAL, "-900000000000.0000", "0.0000"]) expect(() => assertTotalInRange({ total, shippingFee: "0.0000" })).not.toThrow();
    for (const total of ["900000000000.0001", "99998999999999990.0001", "-900000000000.0001"]) {
      let refused: unknown;
      try {
        assertTotalInRange({ total, shippingFee: "0.0000" });
      } catch (error) {
        refused = error;
      }
      expect(refused).toBeInstanceOf(ApiError);
      expect((refused as ApiError).statusCode).toBe(422);
      expect((refused as ApiError).details).toEqual([{ param: "lines", code: "too_large", message: expect.stringContaining(MAX_DOCUMENT_TOTAL) }]);
    }
  });

  it("names shipping_fee when the lines alone are within the bound and the fee takes the total past it", () => {
    const refusal = (total: string, shippingFee: string) => {
      try {
        assertTotalInRange({ total, shippingFee });
      } catch (error) {
        return (error as ApiError).details?.[0];
      }
      return undefined;
    };
    expect(refusal("900000000000.0001", "0.0002")).toMatchObject({ param: "shipping_fee", code: "too_large" });
    expect(refusal("999999999999.9999", "999999999999.9999")).toMatchObject({ param: "shipping_fee", code: "too_large" });
    // The lines alone pass it: the lines are named, whatever the fee.
    expect(refusal("900000000001.0000", "0.5000")).toMatchObject({ param: "lines", code: "too_large" });
  });

  it("multiplies, taxes and sums with four-decimal strings", () => {
    const totals = computeTotals([line(3, "19.9900", "10.000"), line(2, "5.0000")], "0", "7.5");
    expect(totals.lines.map((l) => l.subtotal)).toEqual(["59.9700", "10.0000"]);
    expect(totals.lines[0]!.tax).toBe("5.9970");
    expect(totals.lines[0]!.total).toBe("65.9670");
    expect(totals.lines[0]!.discountedUnitPrice).toBeNull();
    expect(totals).toMatchObject({
      discount: null,
      preDiscountTotal: "69.9700",
      discountTotal: "0.0000",
      subtotal: "69.9700",
      tax: "5.9970",
      tax2: "0.0000",
      shippingFee: "7.5000",
      total: "83.4670",
    });
  });

  it("stays exact at the largest accepted amounts (beyond decimal.js's default 20 digits)", () => {
    // 123456789012.3457 x 12345.6789 = 1524157875171468.14799573 -> .1480; tax 7.125% of it
    // is 108596248605967.105545 -> .1055.
    const large = computeTotals([line(12345.6789, "123456789012.3457", "7.125")], "0", "0");
    expect(large.lines[0]!.subtotal).toBe("1524157875171468.1480");
    expect(large.tax).toBe("108596248605967.1055");
    expect(large.total).toBe("1632754123777435.2535");
    // 999999999999.9999 x 99999 = 99998999999999990.0001 exactly.
    expect(computeTotals([line(99999, "999999999999.9999")], "0", "0").subtotal).toBe("99998999999999990.0001");
    // 999999999 x 999999999999.9999 at 100% and 100%, plus the largest shipping fee.
    const top = computeTotals([line(999999999, "999999999999.9999", "100", "0", "100")], "0", "999999999999.9999");
    expect([top.subtotal, top.tax, top.tax2]).toEqual(Array(3).fill("999999998999999900000.0001"));
    expect(top.total).toBe("2999999997999999700000.0002");
  });

  it("adds one discount line of -(pre-discount subtotal x d%) and scales every taxable base", () => {
    const totals = computeTotals([line(1, "100.0000", "20.000"), line(1, "50.0000", "10.000")], "10.000", "0");
    expect(totals.discount).toBe("-15.0000");
    expect(totals.preDiscountTotal).toBe("150.0000");
    expect(totals.subtotal).toBe("135.0000");
    // 100 x 0.9 x 20% = 18 and 50 x 0.9 x 10% = 4.5
    expect(totals.lines.map((l) => l.tax)).toEqual(["18.0000", "4.5000"]);
    expect(totals.tax).toBe("22.5000");
    expect(totals.total).toBe("157.5000");
    expect(totals.lines[0]!.discountedUnitPrice).toBe("90.0000");
  });

  it("applies line discounts before the order discount and rounds each line half away from zero", () => {
    const totals = computeTotals([line(3, "0.3333", "8.250", "12.500", "1.000")], "0", "0");
    // 3 x 0.3333 x 0.875 = 0.87491250 -> 0.8749; tax 0.8749 x 8.25% = 0.07217925 -> 0.0722
    expect(totals.lines[0]).toEqual({ subtotal: "0.8749", tax: "0.0722", tax2: "0.0087", total: "0.9558", discountedUnitPrice: "0.2916" });
    const half = computeTotals([line(1, "0.00005")], "0", "0");
    expect(half.lines[0]!.subtotal).toBe("0.0001");
    const negative = computeTotals([line(-1, "0.00005")], "0", "0");
    expect(negative.lines[0]!.subtotal).toBe("-0.0001");
  });

  it("never uses floats: 0.1 + 0.2 is exactly 0.3", () => {
    const totals = computeTotals([line(1, "0.1"), line(1, "0.2")], "0", "0");
    expect(totals.subtotal).toBe("0.3000");
  });

  it("handles 500 lines of large amounts exactly", () => {
    const lines = Array.from({ length: 500 }, () => line(999_999, "999999.9999", "100.000"));
    const totals = computeTotals(lines, "0", "0");
    const perLine = new Decimal(999_999).times("999999.9999");
    expect(totals.subtotal).toBe(perLine.times(500).toFixed(4));
    expect(totals.total).toBe(perLine.times(1000).toFixed(4));
  });
});

describe("the line a stock rule's refusal names", () => {
  it("is the line of the broken row with the largest quantity (the first of equals); -1 when none moves the row", () => {
    const lines = [
      { item: "a", quantity: 2 },
      { item: "b", quantity: 90 },
      { item: "a", quantity: 5 },
      { item: "a", quantity: 5 },
    ];
    expect(lineBehindStockRule(lines, (line) => line.item === "a")).toBe(2);
    expect(lineBehindStockRule(lines, (line) => line.item === "b")).toBe(1);
    expect(lineBehindStockRule(lines, (line) => line.item === "c")).toBe(-1);
  });
});
