import type { StockChange } from "../inventory/stock-changes.js";
import { Decimal } from "../../core/decimal.js";
import { QUANTITY_PLACES, movingAverageCost } from "../inventory/math.js";
import { money } from "../common/money.js";

/**
 * Pure planning of kit builds (spec part 2, sections 2.7, 3.7 and 4.7; architecture section 8,
 * "Kit builds"): what an assembly or a disassembly changes, decided from definitions and the
 * stock read, without any I/O. The domain (`lib/domain/kits/builds.ts`) reads, plans with these,
 * and writes through the ledger; the ledger's own conditions then prove the plan still holds.
 *
 * Assembly of `quantity` kits at a location:
 * - every component line needs `quantity x component quantity` at the location (decimal);
 * - a component that is the assembled item of an AUTOMATIC kit, short at the location, has its
 *   shortfall assembled first (recursively), as builds of their own (`automatic`, with the
 *   parent kit), in the same write;
 * - then the components are consumed and the assembled item added; stock below zero anywhere
 *   refuses the whole build (`insufficient_stock`);
 * - valuation: one assembled unit costs the sum of its components' current unit costs x their
 *   quantities; the assembled item's moving average cost takes the built units at that cost.
 *   A component's current unit cost is its moving average cost (`averageCost`), else the
 *   selected variation's cost override, else the item's cost, else 0.
 */

export interface KitComponentDefinition {
  id: string;
  itemId: string;
  /** The variation the definition selected (absent: the item as a whole). */
  itemVariationId?: string;
  /** The variation whose stock builds consume. */
  variationId: string;
  quantity: number;
  position: number;
}

export interface KitDefinition {
  kitId: string;
  number: number;
  itemId: string;
  /** The assembled item's variation builds add to. */
  variationId: string;
  method: "manual" | "automatic";
  components: readonly KitComponentDefinition[];
}

/** What planning needs of an item (a subset of the item record). */
export interface PlanItem {
  itemId: string;
  name: string;
  archived: boolean;
  inventoryType: "quantity" | "unique";
  cost?: string;
  averageCost?: string;
  /** locationId -> balances (the item's per-location sums). */
  stock: Record<string, { onHand: number }>;
}

export type RefusalReason = "insufficient_stock" | "invalid_definition" | "invalid_quantity";

/** A build the rules refuse: 422 `invalid_kit_build` (nothing is written). */
export class KitBuildRefusal extends Error {
  constructor(
    readonly reason: RefusalReason,
    message: string,
  ) {
    super(message);
    this.name = "KitBuildRefusal";
  }
}

/** A disassembly the current stock refuses: 409 `kit_disassembly_not_allowed` (nothing is written). */
export class DisassemblyRefusal extends Error {
  constructor(message: string) {
    super(message);
    this.name = "DisassemblyRefusal";
  }
}

/** One of a build's own stock changes at its location (stored on the build, reversed by disassembly). */
export interface BuildChange {
  itemId: string;
  variationId: string;
  onHand: number;
  unitCost: string;
}

export interface PlannedBuild {
  buildId: string;
  kitId: string;
  kitNumber: number;
  quantity: number;
  method: "manual" | "automatic";
  parent?: { kitId: string; kitNumber: number; buildId: string };
  unitCost: string;
  changes: BuildChange[];
}

export interface AssemblyPlan {
  /** In the order applied: nested builds before the build that needed them; the requested one last. */
  builds: PlannedBuild[];
  /** Every build's changes, in that order, at the location. */
  changes: StockChange[];
  /** The new moving average cost of each assembled item. */
  averageCosts: Map<string, string>;
}

export const rowOf = (itemId: string, variationId: string) => `${itemId}|${variationId}`;

const describeItem = (item: PlanItem | undefined, itemId: string) => (item ? `"${item.name}" (${itemId})` : itemId);

/**
 * The definitions a build of `root` may reach: the automatic kits whose assembled items are
 * components, transitively. Refuses a definition with a component that is its own kit's item,
 * or whose automatic expansion comes back to a kit (or a kit's item) on its own path (a cycle).
 */
export function checkDefinitions(root: KitDefinition, kits: ReadonlyMap<string, KitDefinition>, automaticKits: ReadonlyMap<string, string>): void {
  const visit = (kit: KitDefinition, path: readonly KitDefinition[]) => {
    if (kit.components.length === 0) throw new KitBuildRefusal("invalid_definition", `Kit ${kit.number} has no components.`);
    for (const component of kit.components) {
      if (component.itemId === kit.itemId) {
        throw new KitBuildRefusal("invalid_definition", `Kit ${kit.number} lists its own assembled item ${component.itemId} as a component.`);
      }
      const ancestor = path.find((k) => k.itemId === component.itemId);
      if (ancestor) {
        throw new KitBuildRefusal(
          "invalid_definition",
          `Kit ${kit.number} uses the assembled item of kit ${ancestor.number}, which is made from it: the definitions form a cycle.`,
        );
      }
      const subId = automaticKits.get(component.itemId);
      const sub = subId === undefined ? undefined : kits.get(subId);
      if (sub) visit(sub, [...path, sub]);
    }
  };
  visit(root, [root]);
}

function quantityOf(value: Decimal, what: string): number {
  if (value.decimalPlaces() > QUANTITY_PLACES) {
    throw new KitBuildRefusal(
      "invalid_quantity",
      `${what} comes to ${value.toString()}, more than ${QUANTITY_PLACES} decimals: choose a quantity that gives whole ten-thousandths.`,
    );
  }
  return value.toNumber();
}

export interface AssemblyRequest {
  kit: KitDefinition;
  quantity: number;
  locationId: string;
  /** Definitions the build may reach (`checkDefinitions`), by kit id. */
  kits: ReadonlyMap<string, KitDefinition>;
  /** Assembled item id -> kit id, for automatic kits. */
  automaticKits: ReadonlyMap<string, string>;
  items: ReadonlyMap<string, PlanItem>;
  /** On hand at the location by `rowOf(itemId, variationId)` (absent: no row, 0). */
  onHand: ReadonlyMap<string, number>;
  /** Variation id -> unit cost override (selected component variations only). */
  variationCosts?: ReadonlyMap<string, string>;
  newId: () => string;
}

/** Plans an assembly (see the module comment); throws `KitBuildRefusal`. */
export function planAssembly(request: AssemblyRequest): AssemblyPlan {
  checkDefinitions(request.kit, request.kits, request.automaticKits);
  const stock = new Map(request.onHand);
  const totals = new Map<string, Decimal>();
  const averages = new Map<string, string | undefined>();
  const builds: PlannedBuild[] = [];
  const changes: StockChange[] = [];
  const averageCosts = new Map<string, string>();

  const itemOf = (itemId: string) => request.items.get(itemId);
  const totalOf = (itemId: string) => {
    if (!totals.has(itemId)) {
      const item = itemOf(itemId);
      totals.set(
        itemId,
        Object.values(item?.stock ?? {}).reduce((sum, b) => sum.plus(b.onHand), new Decimal(0)),
      );
    }
    return totals.get(itemId)!;
  };
  const averageOf = (itemId: string) => (averages.has(itemId) ? averages.get(itemId) : itemOf(itemId)?.averageCost);
  const unitCostOf = (component: KitComponentDefinition) => {
    const item = itemOf(component.itemId)!;
    const override = component.itemVariationId ? request.variationCosts?.get(component.itemVariationId) : undefined;
    return new Decimal(averageOf(component.itemId) ?? override ?? item.cost ?? 0);
  };
  const move = (itemId: string, variationId: string, delta: Decimal) => {
    const key = rowOf(itemId, variationId);
    const after = new Decimal(stock.get(key) ?? 0).plus(delta);
    stock.set(key, after.toNumber());
    totals.set(itemId, totalOf(itemId).plus(delta));
    return after;
  };

  const assemble = (kit: KitDefinition, quantity: Decimal, parent: PlannedBuild | undefined) => {
    const assembled = itemOf(kit.itemId);
    if (!assembled || assembled.archived) {
      throw new KitBuildRefusal("invalid_definition", `The assembled item of kit ${kit.number} (${kit.itemId}) is missing or archived.`);
    }
    if (assembled.inventoryType !== "quantity") {
      throw new KitBuildRefusal("invalid_definition", `The assembled item of kit ${kit.number} is a unique item; kits assemble quantity items only.`);
    }
    const build: PlannedBuild = {
      buildId: request.newId(),
      kitId: kit.kitId,
      kitNumber: kit.number,
      quantity: quantityOf(quantity, `The quantity of kit ${kit.number} to assemble`),
      method: parent ? "automatic" : "manual",
      parent: parent ? { kitId: parent.kitId, kitNumber: parent.kitNumber, buildId: parent.buildId } : undefined,
      unitCost: "0.0000",
      changes: [],
    };
    const components = [...kit.components].sort((a, b) => a.position - b.position);
    const needs = components.map((component) => {
      const item = itemOf(component.itemId);
      if (!item || item.archived) {
        throw new KitBuildRefusal("invalid_definition", `Component ${describeItem(item, component.itemId)} of kit ${kit.number} is missing or archived.`);
      }
      return new Decimal(component.quantity).times(quantity);
    });
    // Automatic sub-kits short at the location are assembled first, for the shortfall.
    components.forEach((component, i) => {
      const subId = request.automaticKits.get(component.itemId);
      const sub = subId === undefined ? undefined : request.kits.get(subId);
      if (!sub || sub.variationId !== component.variationId) return;
      const have = new Decimal(stock.get(rowOf(component.itemId, component.variationId)) ?? 0);
      // On hand below zero (oversold by an invoice) adds to the shortfall: the build may not leave it negative.
      if (have.lt(needs[i]!)) assemble(sub, needs[i]!.minus(have), build);
    });
    // Valuation: the components' current unit costs (a nested build's output at its new average).
    const costs = components.map(unitCostOf);
    const unitCost = money(components.reduce((sum, component, i) => sum.plus(costs[i]!.times(component.quantity)), new Decimal(0)));
    build.unitCost = unitCost;
    components.forEach((component, i) => {
      const need = quantityOf(needs[i]!, `Component ${describeItem(itemOf(component.itemId), component.itemId)} of kit ${kit.number}`);
      const after = move(component.itemId, component.variationId, needs[i]!.neg());
      if (after.lt(0)) {
        const had = after.plus(needs[i]!);
        throw new KitBuildRefusal(
          "insufficient_stock",
          `Insufficient stock of component ${describeItem(itemOf(component.itemId), component.itemId)} for kit ${kit.number} at this location: ${needs[i]!.toFixed()} needed, ${had.toFixed()} available.`,
        );
      }
      build.changes.push({ itemId: component.itemId, variationId: component.variationId, onHand: -need, unitCost: money(costs[i]!) });
    });
    const totalBefore = totalOf(kit.itemId);
    const averageBefore = averageOf(kit.itemId) ?? assembled.cost ?? null;
    move(kit.itemId, kit.variationId, quantity);
    const average = movingAverageCost(totalBefore, averageBefore, quantity, unitCost);
    averages.set(kit.itemId, average);
    averageCosts.set(kit.itemId, average);
    build.changes.push({ itemId: kit.itemId, variationId: kit.variationId, onHand: build.quantity, unitCost });
    builds.push(build);
    for (const change of build.changes) {
      changes.push({
        itemId: change.itemId,
        variationId: change.variationId,
        locationId: request.locationId,
        deltas: { onHand: change.onHand },
        unitCost: change.unitCost,
      });
    }
  };

  assemble(request.kit, new Decimal(request.quantity), undefined);
  return { builds, changes, averageCosts };
}

export interface DisassemblyRequest {
  build: { quantity: number; changes: readonly BuildChange[] };
  kitNumber: number;
  locationId: string;
  items: ReadonlyMap<string, PlanItem>;
  onHand: ReadonlyMap<string, number>;
}

export interface DisassemblyPlan {
  changes: StockChange[];
  averageCosts: Map<string, string>;
}

/**
 * Plans the exact reversal of a build's own changes, last first (the assembled units leave the
 * location, then each component comes back at the unit cost it was consumed at: its moving
 * average takes them as a receipt at that cost; the assembled item's average is unchanged, as
 * for any stock that leaves). Throws `DisassemblyRefusal` when the assembled units are no
 * longer on hand there, or an item of the build no longer exists.
 */
export function planDisassembly(request: DisassemblyRequest): DisassemblyPlan {
  const stock = new Map(request.onHand);
  const changes: StockChange[] = [];
  const averageCosts = new Map<string, string>();
  for (const original of [...request.build.changes].reverse()) {
    const item = request.items.get(original.itemId);
    if (!item) throw new DisassemblyRefusal(`Item ${original.itemId} of this build no longer exists: the build cannot be reversed.`);
    const delta = new Decimal(original.onHand).neg();
    const key = rowOf(original.itemId, original.variationId);
    const before = new Decimal(stock.get(key) ?? 0);
    const after = before.plus(delta);
    // Only the assembled units leaving can be short; a component oversold since (below zero) rises.
    if (after.lt(0) && delta.lt(0)) {
      throw new DisassemblyRefusal(
        `Only ${before.toNumber()} of "${item.name}" (${item.itemId}) is on hand at the build's location; reversing build of kit ${request.kitNumber} needs ${delta.neg().toNumber()}: the assembled stock was used since.`,
      );
    }
    stock.set(key, after.toNumber());
    // Components come back at the cost they left at. An item valued by a moving average takes
    // them into it; one valued at its current cost (no costed receipt yet: the item's cost or a
    // variation's override) stays so, or its next build would cost at a figure no one set.
    const revalued = delta.gt(0) && item.averageCost !== undefined;
    if (revalued) {
      const total = Object.values(item.stock).reduce((sum, b) => sum.plus(b.onHand), new Decimal(0));
      averageCosts.set(item.itemId, movingAverageCost(total, item.averageCost ?? null, delta, original.unitCost));
    }
    changes.push({
      itemId: original.itemId,
      variationId: original.variationId,
      locationId: request.locationId,
      deltas: { onHand: delta.toNumber() },
      unitCost: original.unitCost,
      ...(delta.gt(0) && !revalued ? { valued: false as const } : {}),
    });
  }
  return { changes, averageCosts };
}

/**
 * Splits changes for a write too large for one transaction: every row that loses stock, and
 * every change of a unique item, stays in the atomic part (its conditions are what make
 * "insufficient stock" impossible); rows that only gain stock of quantity items can never
 * break a rule, so a journal applied right after (exactly once) may carry them.
 */
export function splitForJournal(
  changes: readonly StockChange[],
  items: ReadonlyMap<string, Pick<PlanItem, "inventoryType">>,
): { atomic: StockChange[]; journaled: StockChange[] } {
  const key = (c: StockChange) => `${c.itemId}|${c.variationId}|${c.locationId}`;
  const atomicRows = new Set(
    changes.filter((c) => Object.values(c.deltas).some((d) => (d ?? 0) < 0) || items.get(c.itemId)?.inventoryType === "unique").map(key),
  );
  return { atomic: changes.filter((c) => atomicRows.has(key(c))), journaled: changes.filter((c) => !atomicRows.has(key(c))) };
}

export interface LocationStats {
  count: number;
  lastBuiltAt?: string;
}

/** A kit's per-location build figures after `delta` builds at one location, the last at `builtAt`. */
export function statsAfter(stats: Readonly<Record<string, LocationStats>>, locationId: string, delta: number, builtAt?: string): Record<string, LocationStats> {
  const current = stats[locationId] ?? { count: 0 };
  const next: LocationStats = { count: Math.max(0, current.count + delta) };
  const last = builtAt !== undefined && (current.lastBuiltAt === undefined || builtAt > current.lastBuiltAt) ? builtAt : current.lastBuiltAt;
  if (last !== undefined) next.lastBuiltAt = last;
  return { ...stats, [locationId]: next };
}

/**
 * A kit's per-location build figures after one build at `locationId` is disassembled: one
 * fewer, and the last build time that of the newest build left there (`newestLeft`; none: no
 * time), since a disassembled build leaves the history (spec part 2, 4.7).
 */
export function statsAfterDisassembly(
  stats: Readonly<Record<string, LocationStats>>,
  locationId: string,
  newestLeft: string | undefined,
): Record<string, LocationStats> {
  const next: LocationStats = { count: Math.max(0, (stats[locationId]?.count ?? 0) - 1) };
  if (newestLeft !== undefined) next.lastBuiltAt = newestLeft;
  return { ...stats, [locationId]: next };
}

/** Build count and last build time over the locations a caller sees (`null`: all). */
export function visibleStats(stats: Readonly<Record<string, LocationStats>>, location: string | null): { count: number; lastBuiltAt: string | null } {
  const entries = location === null ? Object.values(stats) : stats[location] ? [stats[location]!] : [];
  let count = 0;
  let lastBuiltAt: string | null = null;
  for (const entry of entries) {
    count += entry.count;
    if (entry.lastBuiltAt !== undefined && (lastBuiltAt === null || entry.lastBuiltAt > lastBuiltAt)) lastBuiltAt = entry.lastBuiltAt;
  }
  return { count, lastBuiltAt };
}
