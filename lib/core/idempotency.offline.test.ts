import { describe, expect, it } from "vitest";
import { canonicalJson, idempotencyScope, isValidIdempotencyKey, requestFingerprint } from "./idempotency.js";

/** Idempotency: spec part 1, section 8; architecture section 4 (fingerprint, key format). */
describe("offline: canonicalJson", () => {
  it("sorts object keys", () => {
    expect(canonicalJson({ b: 1, a: 2, c: 3 })).toBe('{"a":2,"b":1,"c":3}');
  });

  it("sorts keys at every depth, including inside arrays", () => {
    const value = { z: { y: 1, x: [{ d: 1, c: { f: 1, e: 2 } }] }, a: null };
    expect(canonicalJson(value)).toBe('{"a":null,"z":{"x":[{"c":{"e":2,"f":1},"d":1}],"y":1}}');
  });

  it("keeps array order (order is meaningful)", () => {
    expect(canonicalJson([3, 1, 2])).toBe("[3,1,2]");
    expect(canonicalJson([3, 1, 2])).not.toBe(canonicalJson([1, 2, 3]));
  });

  it("drops undefined properties but keeps null", () => {
    expect(canonicalJson({ a: undefined, b: null, c: { d: undefined } })).toBe('{"b":null,"c":{}}');
  });

  it("renders primitives as JSON", () => {
    expect(canonicalJson("x")).toBe('"x"');
    expect(canonicalJson(1.5)).toBe("1.5");
    expect(canonicalJson(true)).toBe("true");
    expect(canonicalJson(null)).toBe("null");
    expect(canonicalJson(undefined)).toBe("null");
  });

  it("fingerprints a body nested far deeper than the call stack goes (it does not recurse)", () => {
    const depth = 200_000;
    const nested = JSON.parse(`{"bogus":${"[".repeat(depth)}1${"]".repeat(depth)},"name":{"b":${'{"a":'.repeat(depth)}2${"}".repeat(depth)}}}`);
    const text = canonicalJson(nested);
    expect(text.length).toBe(`{"bogus":,"name":{"b":}}`.length + 2 * depth + 1 + depth * 5 + depth + 1);
    expect(text.startsWith(`{"bogus":[[[`)).toBe(true);
    expect(text.endsWith("}}}")).toBe(true);
  });

  it("equals JSON.parse-able output of the same value", () => {
    const value = { name: "Tools", custom_fields: [{ name: "A", publish_on_documents: true }], parent_id: null };
    expect(JSON.parse(canonicalJson(value))).toEqual(value);
  });
});

describe("offline: requestFingerprint", () => {
  const path = "/api/v3/item-categories";

  it("is a SHA-256 hex digest", () => {
    expect(requestFingerprint("POST", path, { a: 1 })).toMatch(/^[0-9a-f]{64}$/);
  });

  it("is equal for the same body with keys in another order", () => {
    const one = requestFingerprint("POST", path, { name: "Tools", inventory_type: "quantity", nested: { b: 1, a: 2 } });
    const two = requestFingerprint("POST", path, { nested: { a: 2, b: 1 }, inventory_type: "quantity", name: "Tools" });
    expect(one).toBe(two);
  });

  it("is equal for a body parsed from differently formatted JSON text", () => {
    const one = requestFingerprint("POST", path, JSON.parse('{"name":"Tools","inventory_type":"quantity"}'));
    const two = requestFingerprint("POST", path, JSON.parse('{\n  "inventory_type": "quantity",\n  "name": "Tools"\n}'));
    expect(one).toBe(two);
  });

  it("differs for another method, path or body", () => {
    const base = requestFingerprint("POST", path, { name: "Tools" });
    expect(requestFingerprint("PATCH", path, { name: "Tools" })).not.toBe(base);
    expect(requestFingerprint("POST", `${path}/x`, { name: "Tools" })).not.toBe(base);
    expect(requestFingerprint("POST", path, { name: "Tool" })).not.toBe(base);
    expect(requestFingerprint("POST", path, { name: "Tools", extra: 1 })).not.toBe(base);
    expect(requestFingerprint("POST", path, [{ name: "Tools" }])).not.toBe(base);
  });

  it("treats a missing body like null", () => {
    expect(requestFingerprint("POST", path, undefined)).toBe(requestFingerprint("POST", path, null));
    expect(requestFingerprint("POST", path, undefined)).not.toBe(requestFingerprint("POST", path, {}));
  });
});

describe("offline: idempotencyScope", () => {
  const parts = { accountId: "acc", keyId: "key", method: "POST", path: "/api/v3/item-categories", key: "k-1" };

  it("is stable for the same parts and differs when any part changes", () => {
    const base = idempotencyScope(parts);
    expect(idempotencyScope({ ...parts })).toBe(base);
    for (const name of Object.keys(parts) as Array<keyof typeof parts>) {
      expect(idempotencyScope({ ...parts, [name]: `${parts[name]}x` })).not.toBe(base);
    }
  });
});

describe("offline: isValidIdempotencyKey", () => {
  it.each([
    ["a single character", "a"],
    ["a UUID", "3f0c8f9e-6a53-4f0a-9a57-0b5e1b1c2d3e"],
    ["255 characters", "k".repeat(255)],
    ["every visible ASCII character", Array.from({ length: 0x7e - 0x21 + 1 }, (_, i) => String.fromCharCode(0x21 + i)).join("")],
  ])("accepts %s", (_label, key) => {
    expect(isValidIdempotencyKey(key)).toBe(true);
  });

  it.each([
    ["empty", ""],
    ["256 characters", "k".repeat(256)],
    ["a space", "a b"],
    ["a leading space", " ab"],
    ["a tab", "a\tb"],
    ["a newline", "ab\n"],
    ["DEL", "ab\x7f"],
    ["a NUL", "a\0b"],
    ["non-ASCII", "clé"],
    ["an emoji", "key-🔑"],
  ])("rejects %s", (_label, key) => {
    expect(isValidIdempotencyKey(key)).toBe(false);
  });
});
