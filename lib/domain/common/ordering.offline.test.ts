import { describe, expect, it } from "vitest";
import { compareByName, NAME_KEY_MAX_BYTES, nameSortKey } from "./ordering.js";

/** "Ordered by name" (every list of spec part 1): case-insensitive, then exact name, then id. */
const entry = (name: string, id = name) => ({ name, id });
const sortedNames = (names: string[]) =>
  names
    .map((name, i) => entry(name, `id-${i}`))
    .sort(compareByName)
    .map((e) => e.name);

describe("offline: compareByName", () => {
  it("orders case-insensitively", () => {
    expect(sortedNames(["banana", "Apple", "cherry", "apricot"])).toEqual(["Apple", "apricot", "banana", "cherry"]);
    expect(compareByName(entry("alpha"), entry("Beta"))).toBeLessThan(0);
    expect(compareByName(entry("Beta"), entry("alpha"))).toBeGreaterThan(0);
  });

  it("breaks a case-insensitive tie by the exact name, deterministically", () => {
    const first = compareByName(entry("Tools", "1"), entry("tools", "2"));
    expect(first).not.toBe(0);
    expect(compareByName(entry("tools", "2"), entry("Tools", "1"))).toBe(-first);
    expect(sortedNames(["tools", "Tools", "TOOLS"])).toEqual(sortedNames(["TOOLS", "tools", "Tools"]));
  });

  it("breaks an exact tie by id", () => {
    expect(compareByName(entry("Same", "a"), entry("Same", "b"))).toBeLessThan(0);
    expect(compareByName(entry("Same", "b"), entry("Same", "a"))).toBeGreaterThan(0);
    expect(compareByName(entry("Same", "a"), entry("Same", "a"))).toBe(0);
  });

  it("puts a prefix before its longer names", () => {
    expect(sortedNames(["Tools and more", "Tool", "Tools"])).toEqual(["Tool", "Tools", "Tools and more"]);
  });

  it("gives the same order whatever the input order", () => {
    const items = [entry("b", "3"), entry("A", "1"), entry("a", "2"), entry("a", "0"), entry("C", "4")];
    const one = [...items].sort(compareByName);
    const two = [...items].reverse().sort(compareByName);
    expect(two).toEqual(one);
    expect(one.map((e) => e.name.toLowerCase())).toEqual(["a", "a", "a", "b", "c"]);
  });
});

describe("nameSortKey", () => {
  it("orders index keys like compareByName, a name before the longer names it prefixes", async () => {
    const { nameSortKey } = await import("./ordering.js");
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

describe("offline: nameSortKey", () => {
  it("is the lower-case name and a terminator that sorts a name before its longer ones", () => {
    expect(nameSortKey("Apple")).toBe("apple\u0001");
    expect(nameSortKey("apple") < nameSortKey("apple pie")).toBe(true);
  });

  it("keeps at most NAME_KEY_MAX_BYTES of UTF-8, cut at a whole character (255 emoji fit a DynamoDB sort key)", () => {
    const emoji = nameSortKey("😀".repeat(255));
    expect(Buffer.byteLength(emoji, "utf8")).toBeLessThanOrEqual(NAME_KEY_MAX_BYTES + 1);
    expect(emoji).toBe(`${"😀".repeat(NAME_KEY_MAX_BYTES / 4)}\u0001`);
    expect(nameSortKey(`${"é".repeat(255)} ${"漢".repeat(255)}`)).not.toContain("\ufffd");
    expect(nameSortKey("€".repeat(170))).toBe(`${"€".repeat(170)}\u0001`);
  });
});
