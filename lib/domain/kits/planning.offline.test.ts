import { describe, expect, it } from "vitest";
import {
  DisassemblyRefusal,
  KitBuildRefusal,
  checkDefinitions,
  planAssembly,
  planDisassembly,
  rowOf,
  splitForJournal,
  statsAfter,
  statsAfterDisassembly,
  visibleStats,
  type AssemblyRequest,
  type KitDefinition,
  type PlanItem,
} from "./planning.js";

/** Build planning, nested expansion and valuation (spec part 2, section 4.7; architecture section 8). */
const LOC = "loc-1";

const item = (itemId: string, fields: Partial<PlanItem> = {}): PlanItem => ({
  itemId,
  name: itemId.toUpperCase(),
  archived: false,
  inventoryType: "quantity",
  stock: {},
  ...fields,
});

const kit = (kitId: string, number: number, itemId: string, components: [string, number][], method: KitDefinition["method"] = "manual"): KitDefinition => ({
  kitId,
  number,
  itemId,
  variationId: `${itemId}-v`,
  method,
  components: components.map(([componentItem, quantity], i) => ({
    id: `${kitId}-c${i}`,
    itemId: componentItem,
    variationId: `${componentItem}-v`,
    quantity,
    position: i + 1,
  })),
});

function request(
  root: KitDefinition,
  quantity: number,
  options: { kits?: KitDefinition[]; items: PlanItem[]; onHand: Record<string, number> },
): AssemblyRequest {
  const kits = new Map([root, ...(options.kits ?? [])].map((k) => [k.kitId, k]));
  let n = 0;
  return {
    kit: root,
    quantity,
    locationId: LOC,
    kits,
    automaticKits: new Map([...kits.values()].filter((k) => k.method === "automatic").map((k) => [k.itemId, k.kitId])),
    items: new Map(options.items.map((i) => [i.itemId, i])),
    onHand: new Map(Object.entries(options.onHand).map(([itemId, q]) => [rowOf(itemId, `${itemId}-v`), q])),
    newId: () => `build-${++n}`,
  };
}

const refusal = (fn: () => unknown): KitBuildRefusal => {
  try {
    fn();
  } catch (error) {
    if (error instanceof KitBuildRefusal) return error;
    throw error;
  }
  throw new Error("expected a KitBuildRefusal");
};

describe("offline: planAssembly", () => {
  it("consumes quantity x component quantity of each component and adds the assembled item, in position order", () => {
    const root = kit("k1", 1, "box", [
      ["b", 0.5],
      ["a", 2],
    ]);
    root.components[0]!.position = 2;
    root.components[1]!.position = 1;
    const plan = planAssembly(request(root, 3, { items: [item("box"), item("a"), item("b")], onHand: { a: 6, b: 1.5 } }));
    expect(plan.builds).toHaveLength(1);
    expect(plan.builds[0]).toMatchObject({ buildId: "build-1", kitId: "k1", kitNumber: 1, quantity: 3, method: "manual", parent: undefined });
    expect(plan.changes.map((c) => [c.itemId, c.variationId, c.locationId, c.deltas.onHand])).toEqual([
      ["a", "a-v", LOC, -6],
      ["b", "b-v", LOC, -1.5],
      ["box", "box-v", LOC, 3],
    ]);
    expect(plan.builds[0]!.changes.map((c) => c.onHand)).toEqual([-6, -1.5, 3]);
  });

  it("decimal quantities are exact (0.1 x 3 = 0.3) and a result past 4 decimals is refused", () => {
    const root = kit("k1", 1, "box", [["a", 0.1]]);
    const plan = planAssembly(request(root, 3, { items: [item("box"), item("a")], onHand: { a: 0.3 } }));
    expect(plan.changes[0]!.deltas.onHand).toBe(-0.3);
    const tooFine = refusal(() => planAssembly(request(kit("k2", 2, "box", [["a", 0.5]]), 0.0001, { items: [item("box"), item("a")], onHand: { a: 1 } })));
    expect(tooFine.reason).toBe("invalid_quantity");
  });

  it("refuses insufficient component stock, naming the component, need and availability", () => {
    const root = kit("k1", 7, "box", [
      ["a", 2],
      ["b", 1],
    ]);
    const error = refusal(() => planAssembly(request(root, 2, { items: [item("box"), item("a"), item("b", { name: "Bolt" })], onHand: { a: 4, b: 1 } })));
    expect(error.reason).toBe("insufficient_stock");
    expect(error.message).toContain('"Bolt" (b)');
    expect(error.message).toContain("2 needed, 1 available");
    // No row at the location counts as zero.
    expect(refusal(() => planAssembly(request(root, 1, { items: [item("box"), item("a"), item("b")], onHand: { a: 4 } }))).reason).toBe("insufficient_stock");
    // The need is exact past a double's digits (999999999 x 999999999).
    const large = refusal(() =>
      planAssembly(request(kit("k3", 3, "box", [["a", 999_999_999]]), 999_999_999, { items: [item("box"), item("a")], onHand: { a: 1 } })),
    );
    expect(large.message).toContain("999999998000000001 needed, 1 available");
  });

  it("refuses missing or archived components, and a missing, archived or unique assembled item", () => {
    const root = kit("k1", 1, "box", [["a", 1]]);
    expect(refusal(() => planAssembly(request(root, 1, { items: [item("box")], onHand: { a: 5 } }))).reason).toBe("invalid_definition");
    expect(refusal(() => planAssembly(request(root, 1, { items: [item("box"), item("a", { archived: true })], onHand: { a: 5 } }))).reason).toBe(
      "invalid_definition",
    );
    expect(refusal(() => planAssembly(request(root, 1, { items: [item("box", { inventoryType: "unique" }), item("a")], onHand: { a: 5 } }))).reason).toBe(
      "invalid_definition",
    );
    expect(refusal(() => planAssembly(request(root, 1, { items: [item("a")], onHand: { a: 5 } }))).reason).toBe("invalid_definition");
  });

  it("counts an oversold sub-kit (on hand below zero) in its shortfall, so the build leaves it at zero", () => {
    const sub = kit("k2", 2, "cable", [["wire", 1]], "automatic");
    const root = kit("k1", 1, "box", [["cable", 1]]);
    const plan = planAssembly(request(root, 2, { kits: [sub], items: [item("box"), item("cable"), item("wire")], onHand: { cable: -3, wire: 100 } }));
    // 2 cables needed, -3 on hand: 5 assembled first.
    expect(plan.builds.map((b) => [b.kitId, b.quantity])).toEqual([
      ["k2", 5],
      ["k1", 2],
    ]);
  });

  it("assembles the shortfall of an automatic sub-kit first, as an automatic build with its parent", () => {
    const sub = kit(
      "k2",
      2,
      "cable",
      [
        ["wire", 2],
        ["plug", 2],
      ],
      "automatic",
    );
    const root = kit("k1", 1, "box", [
      ["cable", 3],
      ["manual", 1],
    ]);
    const plan = planAssembly(
      request(root, 2, {
        kits: [sub],
        items: [item("box"), item("cable"), item("wire"), item("plug"), item("manual")],
        onHand: { cable: 1, wire: 10, plug: 10, manual: 2 },
      }),
    );
    // 6 cables needed, 1 on hand: 5 assembled first.
    expect(plan.builds.map((b) => [b.kitId, b.quantity, b.method, b.parent?.kitId ?? null])).toEqual([
      ["k2", 5, "automatic", "k1"],
      ["k1", 2, "manual", null],
    ]);
    expect(plan.builds[0]!.parent).toEqual({ kitId: "k1", kitNumber: 1, buildId: plan.builds[1]!.buildId });
    expect(plan.changes.map((c) => [c.itemId, c.deltas.onHand])).toEqual([
      ["wire", -10],
      ["plug", -10],
      ["cable", 5],
      ["cable", -6],
      ["manual", -2],
      ["box", 2],
    ]);
  });

  it("does not expand a sub-kit with enough stock, nor a manual sub-kit (short: insufficient)", () => {
    const autoSub = kit("k2", 2, "cable", [["wire", 1]], "automatic");
    const root = kit("k1", 1, "box", [["cable", 1]]);
    const enough = planAssembly(request(root, 2, { kits: [autoSub], items: [item("box"), item("cable"), item("wire")], onHand: { cable: 2, wire: 0 } }));
    expect(enough.builds).toHaveLength(1);
    const manualSub = kit("k3", 3, "cable", [["wire", 1]], "manual");
    expect(
      refusal(() => planAssembly(request(root, 2, { kits: [manualSub], items: [item("box"), item("cable"), item("wire")], onHand: { wire: 9 } }))).reason,
    ).toBe("insufficient_stock");
  });

  it("expands nested automatic kits recursively, and refuses when the deepest components are short", () => {
    const inner = kit("k3", 3, "core", [["atom", 1]], "automatic");
    const middle = kit("k2", 2, "module", [["core", 2]], "automatic");
    const root = kit("k1", 1, "device", [["module", 1]]);
    const items = [item("device"), item("module"), item("core"), item("atom")];
    const plan = planAssembly(request(root, 3, { kits: [middle, inner], items, onHand: { atom: 6 } }));
    expect(plan.builds.map((b) => [b.kitId, b.quantity, b.parent?.kitId ?? null])).toEqual([
      ["k3", 6, "k2"],
      ["k2", 3, "k1"],
      ["k1", 3, null],
    ]);
    const short = refusal(() => planAssembly(request(root, 3, { kits: [middle, inner], items, onHand: { atom: 5 } })));
    expect(short.reason).toBe("insufficient_stock");
    expect(short.message).toContain("kit 3");
  });

  it("values one assembled unit at the components' current costs x quantities and moves the moving average", () => {
    const root = kit("k1", 1, "box", [
      ["a", 2],
      ["b", 0.5],
      ["c", 1],
    ]);
    const plan = planAssembly(
      request(root, 2, {
        items: [
          item("box", { averageCost: "10.0000", stock: { [LOC]: { onHand: 2 }, other: { onHand: 2 } } }),
          item("a", { averageCost: "1.2500", cost: "9.0000" }), // the moving average wins over the cost
          item("b", { cost: "3.3333" }),
          item("c"), // no cost at all: 0
        ],
        onHand: { a: 4, b: 1, c: 2, box: 2 },
      }),
    );
    // 2 x 1.25 + 0.5 x 3.3333 + 0 = 4.16665 -> 4.1667
    expect(plan.builds[0]!.unitCost).toBe("4.1667");
    expect(plan.changes.map((c) => c.unitCost)).toEqual(["1.2500", "3.3333", "0.0000", "4.1667"]);
    // 4 on hand (all locations) at 10, plus 2 at 4.1667: (40 + 8.3334) / 6 = 8.0556
    expect(plan.averageCosts).toEqual(new Map([["box", "8.0556"]]));
  });

  it("uses the selected variation's cost override when the item has no moving average", () => {
    const root = kit("k1", 1, "box", [["a", 2]]);
    root.components[0]!.itemVariationId = "a-v";
    const plan = planAssembly({
      ...request(root, 1, { items: [item("box"), item("a", { cost: "5.0000" })], onHand: { a: 2 } }),
      variationCosts: new Map([["a-v", "7.5000"]]),
    });
    expect(plan.builds[0]!.unitCost).toBe("15.0000");
    expect(plan.averageCosts.get("box")).toBe("15.0000");
  });

  it("values a nested build's output at its new average in the parent's cost", () => {
    const sub = kit("k2", 2, "cable", [["wire", 1]], "automatic");
    const root = kit("k1", 1, "box", [["cable", 2]]);
    const plan = planAssembly(
      request(root, 1, {
        kits: [sub],
        items: [item("box"), item("cable", { averageCost: "1.0000", stock: { [LOC]: { onHand: 1 } } }), item("wire", { cost: "3.0000" })],
        onHand: { cable: 1, wire: 5 },
      }),
    );
    // One cable built at 3: cable average (1 x 1 + 1 x 3) / 2 = 2; the box costs 2 x 2 = 4.
    expect(plan.averageCosts.get("cable")).toBe("2.0000");
    expect(plan.builds[1]!.unitCost).toBe("4.0000");
    expect(plan.averageCosts.get("box")).toBe("4.0000");
  });
});

describe("offline: checkDefinitions", () => {
  it("refuses a component that is the kit's own item", () => {
    const root = kit("k1", 1, "box", [["box", 1]]);
    expect(refusal(() => checkDefinitions(root, new Map([["k1", root]]), new Map())).reason).toBe("invalid_definition");
  });

  it("refuses a cycle through automatic kits, and a sub-kit made from an ancestor's item", () => {
    const a = kit("ka", 1, "a", [["b", 1]], "automatic");
    const b = kit("kb", 2, "b", [["a", 1]], "automatic");
    const kits = new Map([
      ["ka", a],
      ["kb", b],
    ]);
    const automatic = new Map([
      ["a", "ka"],
      ["b", "kb"],
    ]);
    expect(refusal(() => checkDefinitions(a, kits, automatic)).message).toContain("cycle");
    const root = kit("kr", 3, "root", [["b", 1]]);
    const b2 = kit("kb", 2, "b", [["root", 1]], "automatic");
    expect(
      refusal(() =>
        checkDefinitions(
          root,
          new Map([
            ["kr", root],
            ["kb", b2],
          ]),
          new Map([["b", "kb"]]),
        ),
      ).message,
    ).toContain("cycle");
  });

  it("accepts a diamond (two components made from the same automatic kit)", () => {
    const shared = kit("ks", 1, "s", [["x", 1]], "automatic");
    const left = kit("kl", 2, "l", [["s", 1]], "automatic");
    const right = kit("kr", 3, "r", [["s", 1]], "automatic");
    const root = kit("k0", 4, "root", [
      ["l", 1],
      ["r", 1],
    ]);
    const kits = new Map([root, shared, left, right].map((k) => [k.kitId, k]));
    expect(() =>
      checkDefinitions(
        root,
        kits,
        new Map([
          ["s", "ks"],
          ["l", "kl"],
          ["r", "kr"],
        ]),
      ),
    ).not.toThrow();
  });
});

describe("offline: planDisassembly", () => {
  const build = {
    quantity: 2,
    changes: [
      { itemId: "a", variationId: "a-v", onHand: -4, unitCost: "1.0000" },
      { itemId: "b", variationId: "b-v", onHand: -1, unitCost: "2.0000" },
      { itemId: "box", variationId: "box-v", onHand: 2, unitCost: "3.0000" },
    ],
  };

  it("reverses the build's own changes, last first, at their unit costs; components' moving averages take them back, cost-valued components stay so", () => {
    const plan = planDisassembly({
      build,
      kitNumber: 1,
      locationId: LOC,
      items: new Map([
        ["box", item("box", { averageCost: "3.0000" })],
        ["a", item("a", { averageCost: "2.0000", stock: { [LOC]: { onHand: 4 } } })],
        ["b", item("b", { cost: "2.0000" })],
      ]),
      onHand: new Map([[rowOf("box", "box-v"), 2]]),
    });
    expect(plan.changes.map((c) => [c.itemId, c.deltas.onHand, c.unitCost])).toEqual([
      ["box", -2, "3.0000"],
      ["b", 1, "2.0000"],
      ["a", 4, "1.0000"],
    ]);
    // a: 4 at 2 plus 4 at 1 = 1.5; b is valued at its cost (no moving average): it gets none,
    // and its change records the cost without valuing it.
    expect(plan.averageCosts).toEqual(new Map([["a", "1.5000"]]));
    expect(plan.changes.map((c) => c.valued)).toEqual([undefined, false, undefined]);
  });

  it("gives components back to a location where they were oversold since (below zero)", () => {
    const items = new Map([
      ["box", item("box")],
      ["a", item("a")],
      ["b", item("b")],
    ]);
    const plan = planDisassembly({
      build,
      kitNumber: 1,
      locationId: LOC,
      items,
      onHand: new Map([
        [rowOf("box", "box-v"), 2],
        [rowOf("a", "a-v"), -6],
      ]),
    });
    expect(plan.changes.map((c) => [c.itemId, c.deltas.onHand])).toEqual([
      ["box", -2],
      ["b", 1],
      ["a", 4],
    ]);
  });

  it("refuses when the assembled units are no longer on hand, or an item is gone", () => {
    const items = new Map([
      ["box", item("box")],
      ["a", item("a")],
      ["b", item("b")],
    ]);
    expect(() => planDisassembly({ build, kitNumber: 1, locationId: LOC, items, onHand: new Map([[rowOf("box", "box-v"), 1.9999]]) })).toThrow(
      DisassemblyRefusal,
    );
    items.delete("a");
    expect(() => planDisassembly({ build, kitNumber: 1, locationId: LOC, items, onHand: new Map([[rowOf("box", "box-v"), 2]]) })).toThrow(DisassemblyRefusal);
  });
});

describe("offline: splitForJournal, build figures", () => {
  it("keeps rows that lose stock and unique items atomic; rows that only gain go to the journal", () => {
    const change = (itemId: string, onHand: number) => ({ itemId, variationId: "v", locationId: LOC, deltas: { onHand } });
    const changes = [change("a", -1), change("sub", 2), change("sub", -2), change("u", 1), change("box", 1)];
    const { atomic, journaled } = splitForJournal(changes, new Map([["u", { inventoryType: "unique" as const }]]));
    expect(atomic.map((c) => c.itemId)).toEqual(["a", "sub", "sub", "u"]);
    expect(journaled.map((c) => c.itemId)).toEqual(["box"]);
  });

  it("counts builds per location with the latest build time; visible figures follow the caller's location", () => {
    let stats = statsAfter({}, "l1", 1, "2026-01-01T00:00:00.000Z");
    stats = statsAfter(stats, "l1", 2, "2026-01-02T00:00:00.000Z");
    stats = statsAfter(stats, "l2", 1, "2026-01-03T00:00:00.000Z");
    stats = statsAfterDisassembly(stats, "l1", "2026-01-01T00:00:00.000Z");
    // The newest build left at l1 sets its time; a location with none left has no time.
    expect(statsAfterDisassembly(stats, "l2", undefined).l2).toEqual({ count: 0 });
    expect(stats).toEqual({ l1: { count: 2, lastBuiltAt: "2026-01-01T00:00:00.000Z" }, l2: { count: 1, lastBuiltAt: "2026-01-03T00:00:00.000Z" } });
    expect(visibleStats(stats, null)).toEqual({ count: 3, lastBuiltAt: "2026-01-03T00:00:00.000Z" });
    expect(visibleStats(stats, "l1")).toEqual({ count: 2, lastBuiltAt: "2026-01-01T00:00:00.000Z" });
    expect(visibleStats(stats, "l3")).toEqual({ count: 0, lastBuiltAt: null });
  });
});
