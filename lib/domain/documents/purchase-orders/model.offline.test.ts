import { describe, expect, it } from "vitest";
import type { DocumentItem } from "../../../db/service.js";
import { fullyReceived, priceLines, stockChanges, withRowIds, type PoLine } from "./model.js";

const line = (overrides: Partial<PoLine> = {}): PoLine => ({
  id: "l1",
  lineType: "inventory",
  itemId: "i1",
  variationId: "v1",
  name: "Bolt",
  quantity: 10,
  quantityReceived: 0,
  unitCost: "2.0000",
  discountPercent: "0.000",
  taxRate: "0.000",
  tax2Rate: "0.000",
  variationValues: {},
  discountedUnitCost: null,
  subtotal: "0.0000",
  ...overrides,
});

const header = { locationId: "loc1" } as DocumentItem;

describe("offline: purchase order model", () => {
  it("prices lines at their unit cost and appends the discount line, keeping its id", () => {
    const stored = [line(), line({ id: "d", lineType: "discount", itemId: undefined, variationId: undefined, unitCost: "-1.0000" })];
    const priced = priceLines(stored, "10.000", "0.0000");
    expect(priced.lines.map((l) => [l.id, l.lineType, l.subtotal])).toEqual([
      ["l1", "inventory", "20.0000"],
      ["d", "discount", "-2.0000"],
    ]);
    expect(priced.totals.total).toBe("18.0000");
  });

  it("sends unreceived quantities as incoming and receives them at the discounted cost", () => {
    const priced = priceLines([line()], "10.000", "0.0000").lines[0]!;
    expect(stockChanges(header, [{ line: priced, quantity: 4 }], "incoming")).toEqual([
      { itemId: "i1", variationId: "v1", locationId: "loc1", deltas: { incoming: 4 } },
    ]);
    expect(stockChanges(header, [{ line: priced, quantity: 4 }], "receive")).toEqual([
      { itemId: "i1", variationId: "v1", locationId: "loc1", deltas: { onHand: 4, incoming: -4 }, unitCost: priced.discountedUnitCost },
    ]);
    expect(stockChanges(header, [{ line: line({ lineType: "service", itemId: undefined }), quantity: 4 }], "incoming")).toEqual([]);
  });

  it("is fully received once every inventory line is, and fills in new stock row ids", () => {
    expect(fullyReceived([line({ quantityReceived: 10 }), line({ lineType: "service", quantityReceived: 0 })])).toBe(true);
    expect(fullyReceived([line({ quantityReceived: 9 })])).toBe(false);
    expect(withRowIds(header, [line()], () => 42)[0]!.ivlId).toBe(42);
    expect(withRowIds(header, [line({ ivlId: 7 })], () => 42)[0]!.ivlId).toBe(7);
  });
});
