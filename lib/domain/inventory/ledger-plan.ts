import { rowKeyOf } from "../../core/records.js";
import { StalePlanError, StockRuleError } from "../../core/failures.js";
import { withRows, type LedgerWrite } from "../../db/inventory.js";
import { bucketOf } from "../../db/items.js";
import type { ItemRecord, StockHistoryItem, StockRowItem } from "../../db/service.js";
import {
  BALANCE_FIELDS,
  MAX_STOCK_BALANCE,
  QUANTITY_PLACES,
  ZERO_BALANCES,
  addQuantities,
  applyDeltas,
  hasQuantityPrecision,
  movingAverageCost,
  sumBalances,
  type BalanceDeltas,
  type Balances,
} from "./math.js";
import { UNIT_ALREADY_BACK, withoutUnitAlreadyBack } from "./unique-units.js";
import { itemStock, pendingJournalsOf, pendingOf, rowBalances, withoutEntry, type LedgerSource, type StockChange } from "./stock-changes.js";

/** The rule of a unique item's stock (`unique_quantity`). */
const UNIQUE_UNITS = "A unique item is counted in whole units: at most one unit, on hand or in transit.";

/** A unique item's units in some balances: on hand and in transit (a unit on its way between locations still exists). */
const unitsIn = (balances: Balances): number => addQuantities(balances.onHand, balances.inTransit);

/**
 * The ledger's pure planning (architecture section 5): current state + changes -> what one
 * transaction writes, or the rule a change breaks. `lib/domain/inventory/service.ts` reads the state
 * and commits the plans; nothing here touches DynamoDB.
 *
 * Stock holds (`lib/domain/inventory/stock-holds.ts`) plan in three steps, each exactly once per chunk:
 * `planHold` writes a chunk's deltas as PENDING on its rows (balances untouched; checked
 * against what other live holds reserve), `planLedgerWrite` with `fold` moves the balances of
 * a bound (committed) hold and drops its pending deltas, and `planRelease` drops the pending
 * deltas of a hold that will never commit.
 *
 * The change types and the balance helpers the plans use are in `stock-changes.ts` (re-exported
 * here).
 */

export interface PlanInput {
  accountId: string;
  journalId: string;
  /** History entries get ids `${journalId}:${firstEntryIndex + i}`. */
  firstEntryIndex?: number;
  source: LedgerSource;
  at: string;
  changes: readonly StockChange[];
  items: ReadonlyMap<string, ItemRecord>;
  rows: ReadonlyMap<string, StockRowItem>;
  /** The row sequence now (new rows take the following numbers). */
  sequence: number;
  /** Item-level counters the same write moves (e.g. `adjustmentCount`). */
  itemAdds?: ReadonlyMap<string, { adjustmentCount?: number }>;
  /** Refuse a unique item with more than one unit (default true). */
  enforceUnique?: boolean;
  /** What live holds (not committed yet) reserve on each row: their net negative deltas (<= 0). */
  reserved?: ReadonlyMap<string, Balances>;
  /** Units of unique items that live holds would put on hand. */
  heldUnits?: ReadonlyMap<string, number>;
  /**
   * Folding a chunk of a bound hold (`journalId`): its deltas move the balances, its pending
   * entries go, and `itemsDone` (items with no later chunk) lose its mark. The hold was checked
   * when it was written, so no rule is judged again.
   */
  fold?: { itemsDone: ReadonlySet<string> };
}

/** The refusal of a change that would leave `field` of a row below zero. */
function belowZero(index: number, field: string, to: number, reserved: number): StockRuleError {
  const held = reserved < 0 ? ` (${-reserved} of it is held by a write not committed yet)` : "";
  return new StockRuleError(index, "negative_balance", `The change would take ${field} at this location below zero (to ${to})${held}.`);
}

/**
 * Refuses a change that takes a row's balance below zero (`to`, after it, counting what other
 * live holds reserve); a balance already below zero may rise and stay below. On hand after a
 * sale of a quantity item (`oversell`) may go below zero, as far as -MAX_STOCK_BALANCE, the
 * most it counts exactly.
 */
function checkFloor(change: StockChange, item: ItemRecord, index: number, field: (typeof BALANCE_FIELDS)[number], to: number, reserved: number): void {
  if (to >= 0 || (change.deltas[field] ?? 0) >= 0) return;
  if (field !== "onHand" || !change.oversell || item.inventoryType === "unique") throw belowZero(index, field, to, reserved);
  if (to < -MAX_STOCK_BALANCE)
    throw new StockRuleError(
      index,
      "too_large",
      `The change would take on hand at this location to ${to}, below -${MAX_STOCK_BALANCE}, the most it can count exactly.`,
    );
}

/** The names of the balances, as the API shows them. */
const BALANCE_NAMES: Record<(typeof BALANCE_FIELDS)[number], string> = {
  onHand: "on-hand",
  reserved: "reserved",
  incoming: "incoming",
  inTransit: "in-transit",
};

/**
 * Refuses a change that raises a balance of an item, over all its locations, past
 * `MAX_STOCK_BALANCE` (`too_large`). A change that lowers it, or leaves it, is never refused for
 * it: an item past the maximum from before the bound existed can still be sold, received or
 * adjusted down.
 */
function checkWithinMaximum(total: Balances, deltas: BalanceDeltas, index: number): void {
  const field = BALANCE_FIELDS.find((name) => (deltas[name] ?? 0) > 0 && total[name] > MAX_STOCK_BALANCE);
  if (field) {
    throw new StockRuleError(
      index,
      "too_large",
      `The change would take the item's ${BALANCE_NAMES[field]} stock to ${total[field]}, over ${MAX_STOCK_BALANCE}, the most it can count exactly.`,
    );
  }
}

/** The rule of a unique item's order (`unique_quantity`): a purchase-order line is for one unit, of an item that has none. */
const UNIQUE_ORDERED = "A unique item is one unit: it is ordered one at a time, and only while it has none on hand, in transit or incoming.";

/**
 * Refuses a change that makes a unique item incoming beyond its one unit: more than one unit (or
 * a part of one) at once, or a unit while the item has one on hand, in transit or incoming
 * already (`total`: the item's balances over all its locations after the change). Only a
 * purchase order's send makes stock incoming (an item made unique after its line was written
 * still carries the old quantity; two lines or orders of it would leave receipts that fail).
 */
function checkUniqueIncoming(change: StockChange, index: number, item: ItemRecord, total: Balances): void {
  const incoming = change.deltas.incoming ?? 0;
  if (item.inventoryType !== "unique" || incoming <= 0) return;
  if (incoming > 1 || !Number.isInteger(incoming) || addQuantities(total.onHand, total.inTransit, total.incoming) > 1)
    throw new StockRuleError(index, "unique_quantity", UNIQUE_ORDERED);
}

/** Refuses a change that moves nothing (or finer than the stored precision) or names no known item. */
function checkedItem(change: StockChange, index: number, items: ReadonlyMap<string, ItemRecord>): ItemRecord {
  // A change below the stored precision would record history without moving any balance.
  const deltas = BALANCE_FIELDS.map((field) => change.deltas[field] ?? 0);
  if (deltas.every((delta) => delta === 0) || deltas.some((delta) => !hasQuantityPrecision(delta))) {
    throw new StockRuleError(
      index,
      "no_effect",
      `A stock change must move a balance by at least ${10 ** -QUANTITY_PLACES}, in steps of ${10 ** -QUANTITY_PLACES}.`,
    );
  }
  const item = items.get(change.itemId);
  if (!item) throw new StockRuleError(index, "unknown_item", `No such item: ${change.itemId}.`);
  return item;
}

/** A row that does not exist yet, numbered `ivlId`. */
function newRow(input: Pick<PlanInput, "accountId" | "at">, change: StockChange, ivlId: number): StockRowItem {
  return {
    accountId: input.accountId,
    itemId: change.itemId,
    variationId: change.variationId,
    locationId: change.locationId,
    ivlId,
    zoneId: change.zoneId,
    ...ZERO_BALANCES,
    createdAt: input.at,
    updatedAt: input.at,
  };
}

/**
 * Plans a ledger write: applies the changes in order to the current balances, refuses any
 * balance below zero and any unique item with more than one unit on hand, creates missing
 * rows with the next sequence numbers, and produces one history entry per change.
 */
export function planLedgerWrite(given: PlanInput): LedgerWrite {
  // A fold applies a hold's changes as they were judged: they are not looked at again.
  const input = given.fold ? given : { ...given, changes: given.changes.map((change) => withoutUnitAlreadyBack(change, given.items, given.source.sourceId)) };
  const rows = new Map<string, LedgerWrite["rows"][number]>();
  const history: StockHistoryItem[] = [];
  let sequence = input.sequence;
  const touchedItems = new Set<string>();

  // Each item's balances over all its locations, change by change (`checkWithinMaximum`).
  const itemTotals = new Map<string, Balances>();
  input.changes.forEach((change, index) => {
    if (change === UNIT_ALREADY_BACK) return;
    const item = checkedItem(change, index, input.items);
    if (!input.fold) {
      const total = applyDeltas(itemTotals.get(change.itemId) ?? sumBalances(Object.values(itemStock(item))), change.deltas);
      checkUniqueIncoming(change, index, item, total);
      checkWithinMaximum(total, change.deltas, index);
      itemTotals.set(change.itemId, total);
    }
    touchedItems.add(change.itemId);
    const key = rowKeyOf(change);
    let entry = rows.get(key);
    if (!entry) {
      const existing = input.rows.get(key);
      entry = existing ? { row: { ...existing }, isNew: false, before: rowBalances(existing) } : { row: newRow(input, change, ++sequence), isNew: true };
      rows.set(key, entry);
    }
    const after = applyDeltas(rowBalances(entry.row), change.deltas);
    const reserved = input.reserved?.get(key) ?? ZERO_BALANCES;
    for (const field of BALANCE_FIELDS) {
      if (!input.fold) checkFloor(change, item, index, field, addQuantities(after[field], reserved[field]), reserved[field]);
    }
    Object.assign(entry.row, after, { updatedAt: input.at });
    history.push({
      accountId: input.accountId,
      itemId: change.itemId,
      sourceType: input.source.sourceType,
      entryId: `${input.journalId}:${(input.firstEntryIndex ?? 0) + index}`,
      at: input.at,
      sourceId: input.source.sourceId,
      journalId: input.journalId,
      variationId: change.variationId,
      locationId: change.locationId,
      ivlId: entry.row.ivlId,
      userId: input.source.userId,
      reason: input.source.reason,
      onHandDelta: change.deltas.onHand ?? 0,
      reservedDelta: change.deltas.reserved ?? 0,
      incomingDelta: change.deltas.incoming ?? 0,
      inTransitDelta: change.deltas.inTransit ?? 0,
      onHandAfter: after.onHand,
      reservedAfter: after.reserved,
      incomingAfter: after.incoming,
      inTransitAfter: after.inTransit,
      ...(change.unitCost === undefined ? {} : { unitCost: change.unitCost }),
    });
  });

  const items = [...touchedItems].map((itemId) => {
    const item = input.items.get(itemId)!;
    const stock = { ...itemStock(item) };
    // A location's sum moves by exactly what its written rows moved.
    for (const { row } of rows.values()) {
      if (row.itemId !== itemId) continue;
      const before = rowBalances(input.rows.get(rowKeyOf(row)));
      const after = rowBalances(row);
      stock[row.locationId] = applyDeltas(stock[row.locationId] ?? ZERO_BALANCES, {
        onHand: addQuantities(after.onHand, -before.onHand),
        reserved: addQuantities(after.reserved, -before.reserved),
        incoming: addQuantities(after.incoming, -before.incoming),
        inTransit: addQuantities(after.inTransit, -before.inTransit),
      });
    }
    if (item.inventoryType === "unique" && input.enforceUnique !== false && !input.fold) {
      const total = addQuantities(unitsIn(sumBalances(Object.values(stock))), input.heldUnits?.get(itemId) ?? 0);
      // One unit, counted whole: 0 or 1, on hand or in transit (a half serial number is no stock at all).
      if (total > 1 || !Number.isInteger(total)) {
        const index = input.changes.findIndex((c) => c.itemId === itemId);
        throw new StockRuleError(index, "unique_quantity", UNIQUE_UNITS);
      }
    }
    // Valuation: each costed receipt moves the item's average cost, in change order, over
    // the item's on-hand stock at all locations just before it (valued at the item's cost
    // until a receipt gives it a moving average, as a kit build values its assembled item).
    let averageCost = item.averageCost ?? item.cost;
    let onHandBefore = sumBalances(Object.values(itemStock(item))).onHand;
    let valued = false;
    for (const change of input.changes) {
      if (change.itemId !== itemId) continue;
      const received = change.deltas.onHand ?? 0;
      if (change.unitCost !== undefined && received > 0 && change.valued !== false) {
        averageCost = movingAverageCost(onHandBefore, averageCost, received, change.unitCost);
        valued = true;
      }
      onHandBefore = addQuantities(onHandBefore, received);
    }
    // The item's line index takes the rows this write creates (an item stored without one stays without).
    const created = [...rows.values()].filter((entry) => entry.isNew && entry.row.itemId === itemId).map((entry) => entry.row);
    const rowIndex = item.rowIndex !== undefined && created.length > 0 ? withRows(item.rowIndex, created) : undefined;
    let set: Partial<ItemRecord> | undefined = valued || rowIndex ? { ...(valued ? { averageCost } : {}), ...(rowIndex ? { rowIndex } : {}) } : undefined;
    // A folded hold's mark leaves the item with the item's last chunk (an empty map removes it).
    if (input.fold?.itemsDone.has(itemId)) set = { ...set, pendingJournals: withoutEntry(pendingJournalsOf(item), input.journalId) ?? {} };
    // A sale (or its reversal) of a unique item moves its sold status and status count.
    // A sold unit that comes back on hand otherwise (an adjustment, a receipt) is not sold any more.
    const soldAfter =
      [...input.changes].reverse().find((change) => change.itemId === itemId && change.sold !== undefined)?.sold ??
      (item.inventoryType === "unique" && item.sold && sumBalances(Object.values(stock)).onHand > 0 ? false : undefined);
    let statusMove: LedgerWrite["items"][number]["statusMove"];
    if (item.inventoryType === "unique" && soldAfter !== undefined && soldAfter !== item.sold) {
      statusMove = { from: bucketOf(item), to: bucketOf({ archived: item.archived, sold: soldAfter }), archived: item.archived };
      return {
        itemId,
        expectedVersion: item.stockVersion,
        stock,
        add: input.itemAdds?.get(itemId),
        set: { ...set, sold: soldAfter, ...(soldAfter && input.source.sourceId ? { soldBy: input.source.sourceId } : {}), updatedAt: input.at },
        statusMove,
      };
    }
    return { itemId, expectedVersion: item.stockVersion, stock, add: input.itemAdds?.get(itemId), set };
  });

  if (input.fold) for (const { row } of rows.values()) dropPendingEntry(row, input.journalId);
  return {
    accountId: input.accountId,
    items,
    rows: [...rows.values()],
    history,
    sequence: sequence > input.sequence ? { from: input.sequence, to: sequence } : undefined,
  };
}

/** Removes a hold's pending deltas (and its creation mark) from a row about to be written. */
function dropPendingEntry(row: StockRowItem, journalId: string): void {
  const rest = withoutEntry(pendingOf(row), journalId);
  if (rest) row.pending = rest;
  else delete row.pending;
  if (row.heldBy === journalId) delete row.heldBy;
}

/**
 * Plans writing a chunk of a hold (`journalId`) as PENDING deltas: every touched row keeps its
 * balances and gains the chunk's net deltas under the journal's id (a missing row is created
 * empty, marked `heldBy` the hold), and every touched item gains the journal's mark and moves
 * its `stockVersion`. The rules are judged as if the hold committed now, on top of what other
 * live holds reserve: no balance below zero after any change (in order), a unique item at
 * most one unit. Nothing is visible to readers until the hold is bound.
 */
export function planHold(input: PlanInput): LedgerWrite {
  const rows = new Map<string, { entry: LedgerWrite["rows"][number]; net: Balances }>();
  let sequence = input.sequence;
  // What this hold's earlier chunks already wrote counts as if committed too: one item's
  // changes may span several chunks, and each chunk is judged on top of the ones before it.
  const ownPending = (row: StockRowItem | undefined): Balances => applyDeltas({ ...ZERO_BALANCES }, (row && pendingOf(row)[input.journalId]) ?? {});
  const added = new Map<string, number>(); // unique items: units this hold adds
  const unitsHeldBefore = (itemId: string) =>
    addQuantities(0, ...[...input.rows.values()].filter((r) => r.itemId === itemId).map((r) => unitsIn(ownPending(r))));
  input.changes.forEach((change, index) => {
    const item = checkedItem(change, index, input.items);
    // The hold left out the unique units not its own to give back when it was journaled; one that
    // moved since (brought back, or sold by another document) makes the plan stale: plan again.
    if (withoutUnitAlreadyBack(change, input.items, input.source.sourceId) !== change) throw new StalePlanError(`Unique item ${change.itemId}`);
    const key = rowKeyOf(change);
    let held = rows.get(key);
    if (!held) {
      const existing = input.rows.get(key);
      const entry = existing
        ? { row: { ...existing }, isNew: false, before: rowBalances(existing) }
        : { row: { ...newRow(input, change, ++sequence), heldBy: input.journalId }, isNew: true };
      held = { entry, net: ownPending(existing) };
      rows.set(key, held);
    }
    held.net = applyDeltas(held.net, change.deltas);
    const reserved = input.reserved?.get(key) ?? ZERO_BALANCES;
    const balances = rowBalances(held.entry.row);
    for (const field of BALANCE_FIELDS) {
      checkFloor(change, item, index, field, addQuantities(balances[field], reserved[field], held.net[field]), reserved[field]);
    }
    // The item's balances as if this hold committed: its net on the rows this chunk touches, and
    // what its earlier chunks left pending on the item's other rows. (Other live holds' increases
    // are not counted: a hold keeps only its decreases in `reserved`.)
    const heldNet = sumBalances([
      ...[...rows.values()].filter(({ entry }) => entry.row.itemId === change.itemId).map(({ net }) => net),
      ...[...input.rows.values()].filter((r) => r.itemId === change.itemId && !rows.has(rowKeyOf(r))).map(ownPending),
    ]);
    const total = sumBalances([sumBalances(Object.values(itemStock(item))), heldNet]);
    checkUniqueIncoming(change, index, item, total);
    checkWithinMaximum(total, change.deltas, index);
    if (item.inventoryType === "unique" && input.enforceUnique !== false) {
      added.set(
        change.itemId,
        addQuantities(added.get(change.itemId) ?? unitsHeldBefore(change.itemId), change.deltas.onHand ?? 0, change.deltas.inTransit ?? 0),
      );
      const total = addQuantities(unitsIn(sumBalances(Object.values(itemStock(item)))), input.heldUnits?.get(change.itemId) ?? 0, added.get(change.itemId));
      if (total > 1 || !Number.isInteger(total)) throw new StockRuleError(index, "unique_quantity", UNIQUE_UNITS);
    }
  });
  for (const { entry, net } of rows.values()) {
    const deltas: BalanceDeltas = {};
    for (const field of BALANCE_FIELDS) if (net[field] !== 0) deltas[field] = net[field];
    entry.row.pending = { ...pendingOf(entry.row), [input.journalId]: deltas };
  }
  const itemIds = [...new Set(input.changes.map((change) => change.itemId))];
  return {
    accountId: input.accountId,
    items: itemIds.map((itemId) => {
      const item = input.items.get(itemId)!;
      // Rows the hold creates join the item's line index now (a line may name them once they hold stock).
      const created = [...rows.values()].filter(({ entry }) => entry.isNew && entry.row.itemId === itemId).map(({ entry }) => entry.row);
      const rowIndex = item.rowIndex !== undefined && created.length > 0 ? { rowIndex: withRows(item.rowIndex, created) } : {};
      return {
        itemId,
        expectedVersion: item.stockVersion,
        stock: itemStock(item),
        set: { ...rowIndex, pendingJournals: { ...pendingJournalsOf(item), [input.journalId]: true } },
      };
    }),
    rows: [...rows.values()].map(({ entry }) => entry),
    history: [],
    sequence: sequence > input.sequence ? { from: input.sequence, to: sequence } : undefined,
  };
}

/**
 * Plans releasing a chunk of a hold that will never commit: its pending deltas (and item
 * marks) go; a row the hold created is deleted when nothing else has touched it since. No
 * balance ever moved, so no history is written.
 */
export function planRelease(input: Pick<PlanInput, "accountId" | "journalId" | "changes" | "items" | "rows">): LedgerWrite {
  const rows: LedgerWrite["rows"] = [];
  for (const key of new Set(input.changes.map(rowKeyOf))) {
    const existing = input.rows.get(key);
    if (!existing || !(input.journalId in pendingOf(existing))) continue;
    const row = { ...existing };
    const untouched = row.heldBy === input.journalId && Object.keys(pendingOf(row)).length === 1 && BALANCE_FIELDS.every((field) => row[field] === 0);
    dropPendingEntry(row, input.journalId);
    rows.push({ row, isNew: false, before: rowBalances(existing), ...(untouched ? { remove: true } : {}) });
  }
  const items = [...new Set(input.changes.map((change) => change.itemId))]
    .map((itemId) => input.items.get(itemId))
    .filter((item): item is ItemRecord => item !== undefined && input.journalId in pendingJournalsOf(item))
    .map((item) => ({
      itemId: item.itemId,
      expectedVersion: item.stockVersion,
      stock: itemStock(item),
      set: { pendingJournals: withoutEntry(pendingJournalsOf(item), input.journalId) ?? {} },
    }));
  return { accountId: input.accountId, items, rows, history: [] };
}
