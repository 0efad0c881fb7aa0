import { describe, expect, it } from "vitest";
import type { StockRowItem } from "../../db/service.js";
import { invertChange, itemStock, mergeStockChanges, reservationsOf, rowBalances, type StockChange } from "./stock-changes.js";

const change = (variationId: string, deltas: StockChange["deltas"], extra: Partial<StockChange> = {}): StockChange => ({
  itemId: "item",
  variationId,
  locationId: "loc",
  deltas,
  ...extra,
});

describe("offline: stock-changes", () => {
  it("reads balances of a row or an item, zero when absent", () => {
    expect(rowBalances(undefined)).toEqual({ onHand: 0, reserved: 0, incoming: 0, inTransit: 0 });
    expect(itemStock({ stock: undefined } as never)).toEqual({});
  });

  it("inverts a change, dropping its cost and flipping `sold`", () => {
    expect(invertChange(change("v", { onHand: 2, reserved: -1 }, { unitCost: "1.0000", sold: true }))).toEqual(
      change("v", { onHand: -2, reserved: 1 }, { sold: false }),
    );
  });

  it("merges changes per row and leaves out those that cancel", () => {
    const merged = mergeStockChanges([change("a", { onHand: 1 }), change("b", { onHand: 2 }), change("a", { onHand: 0.5 }), change("b", { onHand: -2 })]);
    expect(merged).toEqual([change("a", { onHand: 1.5 })]);
  });

  it("counts the units a live hold adds to a unique item by its net on hand and in transit: a transfer's send or a move adds none", () => {
    const rowAt = (locationId: string, pending: Record<string, Record<string, number>>) =>
      ({ itemId: "unique", variationId: "v", locationId, onHand: 0, reserved: 0, incoming: 0, inTransit: 0, pending }) as unknown as StockRowItem;
    const items = new Map([["unique", { inventoryType: "unique" as const }]]);
    const send = [rowAt("origin", { send: { onHand: -1 } }), rowAt("destination", { send: { inTransit: 1 } })];
    expect(reservationsOf(send, items, new Set(["send"])).heldUnits.size).toBe(0);
    const move = [rowAt("origin", { move: { onHand: -1 } }), rowAt("destination", { move: { onHand: 1 } })];
    expect(reservationsOf(move, items, new Set(["move"])).heldUnits.size).toBe(0);
    const receipt = [rowAt("origin", { receipt: { onHand: 1 } })];
    expect([...reservationsOf(receipt, items, new Set(["receipt"])).heldUnits]).toEqual([["unique", 1]]);
  });

  it("sums what live holds reserve on each row", () => {
    const row = {
      itemId: "item",
      variationId: "v",
      locationId: "loc",
      onHand: 5,
      reserved: 0,
      incoming: 0,
      inTransit: 0,
      pending: { live: { onHand: -2, incoming: 3 }, dead: { onHand: -4 } },
    } as unknown as StockRowItem;
    const { reserved, heldUnits } = reservationsOf([row], new Map([["item", { inventoryType: "quantity" as const }]]), new Set(["live"]));
    expect([...reserved.values()]).toEqual([{ onHand: -2, reserved: 0, incoming: 0, inTransit: 0 }]);
    expect(heldUnits.size).toBe(0);
  });
});
