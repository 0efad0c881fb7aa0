import { describe, expect, it } from "vitest";
import { ApiError } from "../../core/errors.js";
import { assertRevision, etagOf, newRevision, parseIfMatch } from "./revisions.js";

describe("offline: revisions", () => {
  it("makes distinct prefixed revisions that sort by time", () => {
    const a = newRevision("po", 1_000);
    const b = newRevision("po", 2_000);
    expect(a).toMatch(/^po_[0-9a-z]{9}[0-9a-f]{12}$/);
    expect(a < b).toBe(true);
    expect(newRevision("so", 5)).not.toBe(newRevision("so", 5));
  });

  it("quotes the ETag and reads If-Match quoted, bare, weak, as a list, blank or *", () => {
    expect(etagOf("inv_1")).toBe('"inv_1"');
    expect(parseIfMatch('"inv_1"')).toEqual(["inv_1"]);
    expect(parseIfMatch("inv_1")).toEqual(["inv_1"]);
    expect(parseIfMatch(' W/"inv_1" ')).toEqual(["inv_1"]);
    expect(parseIfMatch('"inv_1", W/"inv_2",inv_3')).toEqual(["inv_1", "inv_2", "inv_3"]);
    expect(parseIfMatch("")).toBeUndefined();
    expect(parseIfMatch(" , ")).toBeUndefined();
    expect(parseIfMatch("*")).toBeUndefined();
    expect(parseIfMatch('"inv_1", *')).toBeUndefined();
    expect(parseIfMatch(undefined)).toBeUndefined();
  });

  it("accepts the current revision (among others) or none, and refuses stale ones with 409 mobile_mutation_conflict", () => {
    expect(() => assertRevision(undefined, "est_2")).not.toThrow();
    expect(() => assertRevision(["est_2"], "est_2")).not.toThrow();
    expect(() => assertRevision(["est_1", "est_2"], "est_2")).not.toThrow();
    try {
      assertRevision(["est_1", "est_3"], "est_2");
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(ApiError);
      expect((error as ApiError).statusCode).toBe(409);
      expect((error as ApiError).code).toBe("mobile_mutation_conflict");
    }
  });
});
