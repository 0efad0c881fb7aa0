import { laterUpdatedAt } from "../../core/clock.js";
import { collectFields } from "./record-fields.js";
import { describe, expect, it } from "vitest";
import { ApiError } from "../../core/errors.js";
import { RETRY } from "../../db/retry.js";
import { replaceOutcome } from "./record-writes.js";

describe("offline: collectFields", () => {
  it("sets values, clears null (and empty text), leaves fields not sent", () => {
    const set: Record<string, unknown> = {};
    const remove: string[] = [];
    collectFields(
      { a: "x", b: "", c: null },
      [
        ["a", "A"],
        ["b", "B"],
        ["c", "C"],
        ["d", "D"],
      ],
      set,
      remove,
    );
    expect(set).toEqual({ A: "x" });
    expect(remove).toEqual(["B", "C"]);
  });

  it("converts values when asked, and clears only null then", () => {
    const set: Record<string, unknown> = {};
    const remove: string[] = [];
    collectFields(
      { p: 2, q: null },
      [
        ["p", "P"],
        ["q", "Q"],
      ],
      set,
      remove,
      (value: number) => value * 10,
    );
    expect(set).toEqual({ P: 20 });
    expect(remove).toEqual(["Q"]);
  });
});

describe("offline: laterUpdatedAt", () => {
  it("is after the stored time, even one in the future", () => {
    const future = new Date(Date.now() + 60_000).toISOString();
    expect(laterUpdatedAt(future)).toBe(new Date(Date.parse(future) + 1).toISOString());
    expect(laterUpdatedAt("2020-01-01T00:00:00.000Z") > "2020-01-01T00:00:00.000Z").toBe(true);
  });
});

describe("offline: replaceOutcome", () => {
  it("answers the resource, a validation error, or RETRY", () => {
    expect(replaceOutcome({ ok: true }, "r")).toBe("r");
    expect(replaceOutcome({ ok: false, references: [] }, "r")).toBe(RETRY);
    expect(() => replaceOutcome({ ok: false, references: [{ param: "x", code: "invalid_reference", message: "m" }] }, "r")).toThrow(ApiError);
  });
});
