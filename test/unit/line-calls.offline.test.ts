import { describe, expect, it } from "vitest";
import { holdChunks, rateWindowResets } from "../../scripts/bench/line-calls.js";

describe("offline: line-call figures", () => {
  it("leave out the rate-window resets of a minute's first request, which come before the route's own calls", () => {
    expect(rateWindowResets(["UpdateItem", "GetItem", "Query", "UpdateItem"])).toBe(0);
    expect(rateWindowResets(["UpdateItem", "UpdateItem", "GetItem", "TransactWriteItems"])).toBe(1);
    expect(rateWindowResets(["UpdateItem", "UpdateItem", "UpdateItem", "GetItem"])).toBe(2);
    expect(rateWindowResets([])).toBe(0);
  });

  it("count a hold's chunks as every transaction but the last, each with the reads that planned it", () => {
    expect(holdChunks(["UpdateItem", "GetItem", "TransactWriteItems"])).toEqual({ chunks: 0, chunkCalls: 0 });
    expect(
      holdChunks([
        "UpdateItem",
        "GetItem",
        "PutItem",
        "BatchGetItem",
        "BatchGetItem",
        "TransactWriteItems",
        "BatchGetItem",
        "TransactWriteItems",
        "TransactWriteItems",
      ]),
    ).toEqual({ chunks: 2, chunkCalls: 5 });
  });
});
