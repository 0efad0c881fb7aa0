import { describe, expect, it } from "vitest";
import type { DocumentItem } from "../../../db/service.js";
import { setListFields, textFilter } from "./model.js";

describe("offline: shared document header helpers", () => {
  it("reads a list's q as lower-cased text, and as a number when it looks like one", () => {
    expect(textFilter(undefined)).toBeUndefined();
    expect(textFilter("  ")).toBeUndefined();
    expect(textFilter(" Acme ")).toEqual({ needle: "acme", number: undefined });
    expect(textFilter("0042")).toEqual({ needle: "0042", number: 42 });
  });

  it("derives the item ids and the search text", () => {
    const next = setListFields({ partyName: "Acme", name: "Spring", itemIds: ["old"] } as DocumentItem, [
      { id: "a", itemId: "i1" },
      { id: "b", itemId: "i1" },
      { id: "c" },
    ]);
    expect(next.itemIds).toEqual(["i1"]);
    expect(next.searchText).toBe("acme spring");
    expect(setListFields({ itemIds: ["old"] } as DocumentItem, [{ id: "c" }]).itemIds).toBeUndefined();
  });
});
