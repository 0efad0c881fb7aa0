import { describe, expect, it } from "vitest";
import { compareByName } from "./ordering.js";

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
