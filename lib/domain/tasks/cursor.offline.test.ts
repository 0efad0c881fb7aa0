import { describe, expect, it } from "vitest";
import { cursorPosition, decodeTaskCursor, encodeTaskCursor, filterFingerprint, taskCursorKey } from "./cursor.js";
import { encodeCursor } from "../../sync/cursor.js";

describe("offline: task cursors", () => {
  const payload = { k: "tasks" as const, a: "acc", u: "user", f: filterFingerprint({ status: "open", scope: "mine" }), p: "2025-01-01T00:00:00.000Z#id" };

  it("round-trips a signed payload and refuses any change to it", async () => {
    const key = await taskCursorKey();
    const cursor = encodeTaskCursor(payload, key);
    expect(cursor).toMatch(/^tc1\.[\w-]+\.[\w-]+$/);
    expect(decodeTaskCursor(cursor, key)).toEqual(payload);
    const [prefix, body, signature] = cursor.split(".");
    const forged = Buffer.from(JSON.stringify({ ...payload, u: "someone-else" })).toString("base64url");
    expect(decodeTaskCursor(`${prefix}.${forged}.${signature}`, key)).toBeUndefined();
    expect(decodeTaskCursor(`${prefix}.${body}.${signature!.slice(0, -2)}xx`, key)).toBeUndefined();
    expect(decodeTaskCursor(`tc2.${body}.${signature}`, key)).toBeUndefined();
    expect(decodeTaskCursor("not-a-cursor", key)).toBeUndefined();
    expect(decodeTaskCursor("", key)).toBeUndefined();
  });

  it("is bound to the list, account, user and filters", async () => {
    const key = await taskCursorKey();
    const cursor = encodeTaskCursor(payload, key);
    const { p: _p, ...expected } = payload;
    expect(cursorPosition(cursor, key, expected)).toBe(payload.p);
    expect(cursorPosition(cursor, key, { ...expected, u: "other" })).toBeUndefined();
    expect(cursorPosition(cursor, key, { ...expected, a: "other" })).toBeUndefined();
    expect(cursorPosition(cursor, key, { ...expected, k: "inbox" })).toBeUndefined();
    expect(cursorPosition(cursor, key, { ...expected, f: filterFingerprint({ status: "completed", scope: "mine" }) })).toBeUndefined();
  });

  it("filter fingerprints ignore key order and differ by value", () => {
    expect(filterFingerprint({ a: 1, b: "x" })).toBe(filterFingerprint({ b: "x", a: 1 }));
    expect(filterFingerprint({ a: 1, b: "x" })).not.toBe(filterFingerprint({ a: 1, b: "y" }));
    expect(filterFingerprint({ q: null })).not.toBe(filterFingerprint({ q: "" }));
  });

  it("uses its own key: a sync cursor (same secret) never passes as a task cursor, nor a task cursor signed otherwise", async () => {
    const key = await taskCursorKey();
    const sync = encodeCursor({ a: "acc", u: "user", r: ["item"], f: "x", p: 1, t: 1 });
    expect(decodeTaskCursor(sync.replace(/^v1\./, "tc1."), key)).toBeUndefined();
    const otherKey = Buffer.from("another key");
    expect(decodeTaskCursor(encodeTaskCursor(payload, otherKey), key)).toBeUndefined();
  });
});
