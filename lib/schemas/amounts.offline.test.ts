import { describe, expect, it } from "vitest";
import { moneyInput, percentInput } from "./amounts.js";

describe("offline: amounts in requests", () => {
  it("takes money and rates with up to 4 decimals, as numbers or strings; more is refused, never rounded", () => {
    for (const value of [12.5, "12.5000", "0.0001", "999999999999.9999"]) expect(moneyInput().safeParse(value).success, String(value)).toBe(true);
    for (const value of [12.12345, "12.12345", "-1", "1e3"]) expect(moneyInput().safeParse(value).success, String(value)).toBe(false);
    for (const value of [8.25, "8.255", 0, "100", 99.999, 8.2555, "0.0005"]) expect(percentInput().safeParse(value).success, String(value)).toBe(true);
    for (const value of [8.25555, "8.25555", 100.001, -1]) expect(percentInput().safeParse(value).success, String(value)).toBe(false);
  });

  it("takes an amount sent as a JSON number only while a double holds it exactly (15 significant digits); as a string, all 16", () => {
    for (const value of [99999999999.9999, 999999999999.999, 123456789012.345, 999999999999])
      expect(moneyInput().safeParse(value).success, String(value)).toBe(true);
    // JSON.parse("999999999999.9997") is 999999999999.9998: such a number is refused, not stored as another amount.
    for (const value of [JSON.parse("999999999999.9997") as number, 123456789012.3456]) {
      const parsed = moneyInput().safeParse(value);
      expect(parsed.success, String(value)).toBe(false);
      expect(parsed.error?.issues).toHaveLength(1);
      expect(parsed.error?.issues[0]?.message).toContain("send it as a string");
    }
    for (const value of ["999999999999.9997", "123456789012.3456"]) expect(moneyInput().parse(value)).toBe(value);
  });

  it("refuses a malformed amount once (one issue, not one per way it fails)", () => {
    for (const value of ["12,50", "abc", "1.23456", 12.12345, -1]) {
      const parsed = moneyInput().safeParse(value);
      expect(parsed.success ? [] : parsed.error.issues, String(value)).toHaveLength(1);
    }
  });
});
