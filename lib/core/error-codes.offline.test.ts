import { describe, expect, it } from "vitest";
import { DETAIL_CODES, ERROR_CODES } from "./error-codes.js";

describe("offline: the error-code catalogue", () => {
  it("lists each code once, in snake case, and no detail code is also an error code", () => {
    for (const codes of [ERROR_CODES, DETAIL_CODES]) {
      expect(new Set<string>(codes).size).toBe(codes.length);
      for (const code of codes) expect(code).toMatch(/^[a-z]+(_[a-z0-9]+)*$/);
    }
    expect(DETAIL_CODES.filter((code) => (ERROR_CODES as readonly string[]).includes(code))).toEqual([]);
  });
});
