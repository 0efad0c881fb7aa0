import { describe, expect, it } from "vitest";
import { isCutNameKey, NAME_KEY_MAX_BYTES, nameSortKey } from "./name-keys.js";

describe("offline: nameSortKey", () => {
  it("is the lower-case name and a terminator that sorts a name before its longer ones", () => {
    expect(nameSortKey("Apple")).toBe("apple\u0001");
    expect(nameSortKey("apple") < nameSortKey("apple pie")).toBe(true);
  });

  it("keeps at most NAME_KEY_MAX_BYTES of UTF-8, cut at a whole character (255 emoji fit a DynamoDB sort key)", () => {
    const emoji = nameSortKey("😀".repeat(255));
    expect(Buffer.byteLength(emoji, "utf8")).toBeLessThanOrEqual(NAME_KEY_MAX_BYTES + 1);
    expect(emoji).toBe(`${"😀".repeat(NAME_KEY_MAX_BYTES / 4)}\u0002`);
    expect(isCutNameKey(emoji)).toBe(true);
    expect(isCutNameKey(nameSortKey("€".repeat(170)))).toBe(false);
    expect(nameSortKey(`${"é".repeat(255)} ${"漢".repeat(255)}`)).not.toContain("\ufffd");
    expect(nameSortKey("€".repeat(170))).toBe(`${"€".repeat(170)}\u0001`);
  });
});

describe("offline: nameSortKey ordering", () => {
  it("orders index keys like compareByName, a name before the longer names it prefixes", async () => {
    const names = ["apple pie", "Apple", "apple-pie", "apple!", "Banana", 'apple"s'];
    // What the index compares: the key followed by ElectroDB's "#" separator.
    const byIndex = [...names].sort((a, b) => {
      const left = `${nameSortKey(a)}#id`;
      const right = `${nameSortKey(b)}#id`;
      return left < right ? -1 : left > right ? 1 : 0;
    });
    expect(byIndex.map((n) => n.toLowerCase())).toEqual([...names].map((n) => n.toLowerCase()).sort());
    expect(byIndex[0]).toBe("Apple");
  });
});
