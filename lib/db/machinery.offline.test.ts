import { TransactionTooLargeError } from "../core/failures.js";
import { describe, expect, it } from "vitest";
import { ContentionError } from "../core/errors.js";
import { RETRY, backoffDelay, oneAtATime, retrying, type RetryPolicy } from "./retry.js";
import { Cancellation, MAX_TRANSACTION_ITEMS, TransactionBuilder } from "./transactions.js";
import { checkReferences, referenceDetails, referenceLabel } from "./references.js";
import { db } from "./service.js";
import { batchGetAll, inOrderOf } from "./batch-get.js";
import { readNumber } from "./client.js";
import { pagesOf } from "./pages.js";
import { moneyFromMinor } from "../domain/common/money.js";

const op = {} as never;

describe("offline: retry policy", () => {
  const policy: RetryPolicy = { attempts: 5, baseMs: 10, capMs: 50 };

  it("waits nothing before the first attempt and at most min(cap, base * 2^n) after", () => {
    expect(backoffDelay(0, policy, () => 1)).toBe(0);
    expect(backoffDelay(1, policy, () => 1)).toBe(20);
    expect(backoffDelay(2, policy, () => 1)).toBe(40);
    expect(backoffDelay(3, policy, () => 1)).toBe(50);
    expect(backoffDelay(10, policy, () => 0.5)).toBe(25);
    for (let n = 1; n < 20; n++) expect(backoffDelay(n, policy)).toBeLessThanOrEqual(50);
  });

  it("returns the first result that is not RETRY", async () => {
    const seen: number[] = [];
    const result = await retrying(
      "test",
      async (n) => {
        seen.push(n);
        return n < 2 ? RETRY : "done";
      },
      { attempts: 5, baseMs: 1, capMs: 1 },
    );
    expect(result).toBe("done");
    expect(seen).toEqual([0, 1, 2]);
  });

  it("gives up with ContentionError naming the operation after the bounded attempts", async () => {
    let calls = 0;
    const attempt = retrying(
      "next customer number",
      async () => {
        calls++;
        return RETRY;
      },
      { attempts: 4, baseMs: 1, capMs: 1 },
    );
    await expect(attempt).rejects.toBeInstanceOf(ContentionError);
    await expect(attempt).rejects.toThrow(/next customer number/);
    expect(calls).toBe(4);
  });

  it("lets other errors through at once", async () => {
    let calls = 0;
    await expect(
      retrying("x", async () => {
        calls++;
        throw new Error("boom");
      }),
    ).rejects.toThrow("boom");
    expect(calls).toBe(1);
  });
});

describe("offline: one writer at a time per contended name (in one process)", () => {
  it("runs holders of one name in arrival order, never two at once", async () => {
    const order: string[] = [];
    let inside = 0;
    let maxInside = 0;
    const job = (id: string, ms: number) =>
      oneAtATime(["seq:a"], async () => {
        inside += 1;
        maxInside = Math.max(maxInside, inside);
        await new Promise((resolve) => setTimeout(resolve, ms));
        order.push(id);
        inside -= 1;
      });
    await Promise.all([job("1", 15), job("2", 1), job("3", 5)]);
    expect(order).toEqual(["1", "2", "3"]);
    expect(maxInside).toBe(1);
  });

  it("lets holders of different names run together, and a nested call never waits (no deadlock)", async () => {
    const events: string[] = [];
    await Promise.all([
      oneAtATime(["item:a", "item:b"], async () => {
        events.push("ab start");
        await oneAtATime(["item:b", "seq:x"], async () => events.push("nested"));
        await new Promise((resolve) => setTimeout(resolve, 5));
        events.push("ab end");
      }),
      oneAtATime(["item:c"], async () => events.push("c")),
    ]);
    expect(events).toContain("nested");
    expect(events.indexOf("c")).toBeLessThan(events.indexOf("ab end"));
  });

  it("releases the name when the holder throws", async () => {
    await expect(oneAtATime(["x"], async () => Promise.reject(new Error("no")))).rejects.toThrow("no");
    await expect(oneAtATime(["x"], async () => "free")).resolves.toBe("free");
  });
});

describe("offline: transaction builder", () => {
  it("counts its labelled items and refuses the 101st", () => {
    const tx = new TransactionBuilder({} as never);
    for (let i = 0; i < MAX_TRANSACTION_ITEMS; i++) tx.add(`item ${i}`, op);
    expect(tx.size).toBe(100);
    expect(tx.remaining).toBe(0);
    expect(() => tx.add("one too many", op)).toThrow(TransactionTooLargeError);
  });

  it("keeps room for the items the writer adds itself (the stored outcome)", () => {
    const tx = new TransactionBuilder({} as never, MAX_TRANSACTION_ITEMS - 1);
    tx.addAll(
      "rows",
      Array.from({ length: 99 }, () => op),
    );
    expect(() => tx.add("extra", op)).toThrow(/101 items/);
    expect(tx.items().map((i) => i.label)).toEqual(Array.from({ length: 99 }, () => "rows"));
  });

  it("checks each referenced record once, under its first field, whatever the casing of its id", () => {
    // A transaction may not name one item twice (DynamoDB refuses it whole), and keys match in any casing.
    const tx = new TransactionBuilder(db().entities as never); // the entities a transaction gets build the same ops
    checkReferences(tx, "account", [
      { param: "custom_field_values[0].custom_field_id", kind: "custom_field", id: "9f0c8f9e-6a53-4f0a-9a57-0b5e1b1c2d3e", recordKind: "customer" },
      { param: "custom_field_values[1].custom_field_id", kind: "custom_field", id: "9F0C8F9E-6A53-4F0A-9A57-0B5E1B1C2D3E", recordKind: "customer" },
      { param: "custom_field_values[2].custom_field_id", kind: "custom_field", id: "9f0c8f9e-6a53-4f0a-9a57-0b5e1b1c2d3e", recordKind: "supplier" },
      { param: "pricing_tier_id", kind: "pricing_tier", id: "9f0c8f9e-6a53-4f0a-9a57-0b5e1b1c2d3e" },
    ]);
    expect(tx.items().map((item) => item.label)).toEqual([
      referenceLabel("custom_field_values[0].custom_field_id"),
      referenceLabel("custom_field_values[2].custom_field_id"),
      referenceLabel("pricing_tier_id"),
    ]);
  });

  it("maps failures by label, never by position", () => {
    const cancellation = new Cancellation([
      { label: "sequence:customer", code: "ConditionalCheckFailed" },
      {
        label: referenceLabel("custom_field_values[3].custom_field_id"),
        code: "ConditionalCheckFailed",
        note: "is not a custom field of this record kind in this account.",
      },
    ]);
    expect(cancellation.failed("sequence:customer")).toBe(true);
    expect(cancellation.failed("party")).toBe(false);
    expect(cancellation.failedOtherThan("sequence:customer")).toBe(true);
    expect(referenceDetails(cancellation)).toEqual([
      { param: "custom_field_values[3].custom_field_id", code: "invalid_reference", message: "is not a custom field of this record kind in this account." },
    ]);
    expect(referenceDetails(null)).toEqual([]);
  });
});

describe("offline: batch reads", () => {
  it("reads in chunks of 100 at once and asks again for the keys left unprocessed", async () => {
    const asked: number[][] = [];
    let refusals = 2;
    const records = await batchGetAll(
      "test read",
      Array.from({ length: 250 }, (_, i) => i),
      async (keys) => {
        asked.push(keys);
        // The first chunk is answered in part twice (as DynamoDB does under throttling).
        if (keys[0]! < 100 && refusals-- > 0) return { data: keys.slice(0, 10).map((k) => ({ k })), unprocessed: keys.slice(10) };
        return { data: keys.map((k) => ({ k })), unprocessed: [] };
      },
    );
    expect(records.map((r) => r.k).sort((a, b) => a - b)).toEqual(Array.from({ length: 250 }, (_, i) => i));
    expect(asked.map((keys) => keys.length)).toEqual([100, 100, 50, 90, 80]);
  });

  it("orders what it read as asked, leaving out what is missing", () => {
    expect(inOrderOf(["c", "a", "x", "b"], [{ id: "a" }, { id: "b" }, { id: "c" }], (r) => r.id)).toEqual([{ id: "c" }, { id: "a" }, { id: "b" }]);
  });
});

describe("offline: stored numbers", () => {
  it("read as JS numbers, except integers beyond 2^53, which keep their exact digits (and still read as money)", () => {
    expect(readNumber("42")).toBe(42);
    expect(readNumber("-3.25")).toBe(-3.25);
    expect(readNumber(String(Number.MAX_SAFE_INTEGER))).toBe(Number.MAX_SAFE_INTEGER);
    expect(readNumber("9007199254740993")).toBe("9007199254740993");
    expect(moneyFromMinor(readNumber("123456789012345678901"))).toBe("12345678901234567.8901");
  });
});

describe("offline: pagesOf (every Query or Scan loop over LastEvaluatedKey)", () => {
  const table = Array.from({ length: 7 }, (_, i) => ({ n: i }));
  /** A paged read of `table`, `size` items a page (or the Limit asked for), recording each request. */
  const pagedRead = (size: number, asked: { start: unknown; limit?: number }[]) => async (start: Record<string, unknown> | undefined, limit?: number) => {
    asked.push({ start, limit });
    const from = start === undefined ? 0 : Number(start.n) + 1;
    const items = table.slice(from, from + Math.min(size, limit ?? size));
    const last = items.at(-1);
    return { Items: items, LastEvaluatedKey: last && Number(last.n) < table.length - 1 ? { n: last.n } : undefined };
  };

  it("reads every page in order, each from the previous page's LastEvaluatedKey, and stops after the last", async () => {
    const asked: { start: unknown }[] = [];
    const seen: unknown[] = [];
    for await (const items of pagesOf(pagedRead(3, asked))) seen.push(...items);
    expect(seen).toEqual(table);
    expect(asked.map((a) => a.start)).toEqual([undefined, { n: 2 }, { n: 5 }]);
  });

  it("reads no further page once the caller leaves its loop, and asks each page for what is still wanted", async () => {
    const asked: { start: unknown; limit?: number }[] = [];
    const held: unknown[] = [];
    const read = pagedRead(2, asked);
    for await (const items of pagesOf((start) => read(start, 5 - held.length))) {
      held.push(...items);
      if (held.length >= 5) break;
    }
    expect(held).toHaveLength(5);
    expect(asked.map((a) => a.limit)).toEqual([5, 3, 1]);
  });
});
