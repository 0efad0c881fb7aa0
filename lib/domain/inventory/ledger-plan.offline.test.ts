import { chunkIndexes, rowBalances, type StockChange } from "./stock-changes.js";
import { rowKeyOf } from "../../core/records.js";
import { StalePlanError, StockRuleError } from "../../core/failures.js";
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { ledgerOpCount } from "../../db/inventory.js";
import type { ItemRecord, StockRowItem } from "../../db/service.js";
import { addQuantities, MAX_STOCK_BALANCE, sumBalances, type Balances } from "./math.js";
import { planHold, planLedgerWrite, type PlanInput } from "./ledger-plan.js";
import { sampleItem } from "./test-fixtures.js";

/**
 * The ledger planner and the journal chunker without a database (architecture section 5,
 * the inventory-ledger paragraph): new rows take the next sequence numbers, every change writes
 * one history entry, the item's per-location sums follow its rows, the item's stock version is
 * the write's condition, no balance goes below zero, a unique item holds at most one unit, and
 * a journal splits into deterministic chunks that each fit one transaction.
 */
const ACCOUNT = randomUUID();
const AT = "2026-01-02T03:04:05.000Z";
const L1 = randomUUID();
const L2 = randomUUID();
const L3 = randomUUID();

const balances = (b: Partial<Balances> = {}): Balances => ({ onHand: 0, reserved: 0, incoming: 0, inTransit: 0, ...b });

const item = (itemId: string, overrides: Partial<ItemRecord> = {}): ItemRecord => sampleItem(ACCOUNT, itemId, AT, overrides);

function row(itemId: string, variationId: string, locationId: string, ivlId: number, b: Partial<Balances> = {}): StockRowItem {
  return { accountId: ACCOUNT, itemId, variationId, locationId, ivlId, ...balances(b), createdAt: AT, updatedAt: AT } as StockRowItem;
}

/** An item whose `stock` is the sums of the given rows (as the ledger keeps it). */
function itemWithRows(itemId: string, rows: StockRowItem[], overrides: Partial<ItemRecord> = {}): ItemRecord {
  const stock: Record<string, Balances> = {};
  for (const r of rows) stock[r.locationId] = sumBalances([stock[r.locationId] ?? balances(), rowBalances(r)]);
  return item(itemId, { stock, ...overrides });
}

function plan(options: {
  changes: StockChange[];
  items: ItemRecord[];
  rows?: StockRowItem[];
  sequence?: number;
  journalId?: string;
  firstEntryIndex?: number;
  itemAdds?: PlanInput["itemAdds"];
}) {
  return planLedgerWrite({
    accountId: ACCOUNT,
    journalId: options.journalId ?? "journal-1",
    firstEntryIndex: options.firstEntryIndex,
    source: { sourceType: "adjustment", userId: "user-1", reason: "count" },
    at: AT,
    changes: options.changes,
    items: new Map(options.items.map((i) => [i.itemId, i])),
    rows: new Map((options.rows ?? []).map((r) => [rowKeyOf(r), r])),
    sequence: options.sequence ?? 0,
    itemAdds: options.itemAdds,
  });
}

function ruleError(fn: () => unknown): StockRuleError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(StockRuleError);
    return error as StockRuleError;
  }
  throw new Error("expected a StockRuleError");
}

const change = (itemId: string, variationId: string, locationId: string, deltas: Partial<Balances>): StockChange => ({
  itemId,
  variationId,
  locationId,
  deltas,
});

describe("planLedgerWrite: rows and sequence", () => {
  it("gives new rows the next sequence numbers in change order and reports the sequence move", () => {
    const [a, b] = [randomUUID(), randomUUID()];
    const existing = row(b, "vb", L1, 3, { onHand: 4 });
    const write = plan({
      items: [item(a), itemWithRows(b, [existing])],
      rows: [existing],
      sequence: 7,
      changes: [change(a, "va", L2, { onHand: 1 }), change(a, "va", L1, { onHand: 2 }), change(b, "vb", L1, { onHand: 1 }), change(b, "vb", L3, { onHand: 5 })],
    });
    expect(write.sequence).toEqual({ from: 7, to: 10 });
    expect(write.rows.map(({ row: r, isNew }) => [r.itemId, r.locationId, r.ivlId, isNew])).toEqual([
      [a, L2, 8, true],
      [a, L1, 9, true],
      [b, L1, 3, false],
      [b, L3, 10, true],
    ]);
    expect(write.history.map((h) => h.ivlId)).toEqual([8, 9, 3, 10]);
    // New rows start from zero and carry the account, their keys and the write's time.
    const created = write.rows[0]!.row;
    expect(created).toMatchObject({
      accountId: ACCOUNT,
      itemId: a,
      variationId: "va",
      locationId: L2,
      onHand: 1,
      reserved: 0,
      incoming: 0,
      inTransit: 0,
      createdAt: AT,
      updatedAt: AT,
    });
  });

  it("sets no sequence when every row exists", () => {
    const id = randomUUID();
    const rows = [row(id, "v", L1, 1, { onHand: 2 }), row(id, "v", L2, 2, { onHand: 3 })];
    const write = plan({
      items: [itemWithRows(id, rows)],
      rows,
      sequence: 41,
      changes: [change(id, "v", L1, { onHand: 1 }), change(id, "v", L2, { onHand: -1 })],
    });
    expect(write.sequence).toBeUndefined();
    expect(write.rows.every((r) => !r.isNew)).toBe(true);
    expect(write.rows.map((r) => r.row.ivlId)).toEqual([1, 2]);
  });

  it("starts a fresh account's sequence at 1", () => {
    const id = randomUUID();
    const write = plan({ items: [item(id)], sequence: 0, changes: [change(id, "v", L1, { onHand: 1 })] });
    expect(write.rows[0]!.row.ivlId).toBe(1);
    expect(write.sequence).toEqual({ from: 0, to: 1 });
  });

  it("writes a row once for two changes to it, with two history entries whose balances follow each other", () => {
    const id = randomUUID();
    const existing = row(id, "v", L1, 5, { onHand: 10, reserved: 1 });
    const write = plan({
      items: [itemWithRows(id, [existing], { stockVersion: 3 })],
      rows: [existing],
      journalId: "j",
      changes: [change(id, "v", L1, { onHand: -2.5, reserved: 2 }), change(id, "v", L1, { onHand: 0.1, incoming: 4 })],
    });
    expect(write.rows).toHaveLength(1);
    expect(write.rows[0]!.row).toMatchObject({ ivlId: 5, onHand: 7.6, reserved: 3, incoming: 4, inTransit: 0, updatedAt: AT });
    expect(write.history).toHaveLength(2);
    const [first, second] = write.history;
    expect(first).toMatchObject({
      entryId: "j:0",
      onHandDelta: -2.5,
      reservedDelta: 2,
      incomingDelta: 0,
      inTransitDelta: 0,
      onHandAfter: 7.5,
      reservedAfter: 3,
      incomingAfter: 0,
      inTransitAfter: 0,
    });
    expect(second).toMatchObject({
      entryId: "j:1",
      onHandDelta: 0.1,
      reservedDelta: 0,
      incomingDelta: 4,
      onHandAfter: 7.6,
      reservedAfter: 3,
      incomingAfter: 4,
      inTransitAfter: 0,
    });
    // Each entry's balance after is the previous one plus its delta.
    expect(second!.onHandAfter).toBe(addQuantities(first!.onHandAfter, second!.onHandDelta));
    expect(second!.reservedAfter).toBe(addQuantities(first!.reservedAfter, second!.reservedDelta));
    // One item write, on the item's version.
    expect(write.items).toHaveLength(1);
    expect(write.items[0]!.expectedVersion).toBe(3);
  });

  it("history entries carry the source, the row's keys and ids numbered from firstEntryIndex", () => {
    const id = randomUUID();
    const write = plan({
      items: [item(id)],
      journalId: "jj",
      firstEntryIndex: 40,
      changes: [change(id, "v", L1, { onHand: 2 }), change(id, "v", L2, { onHand: 1 })],
    });
    expect(write.history.map((h) => h.entryId)).toEqual(["jj:40", "jj:41"]);
    expect(write.history[0]).toMatchObject({
      accountId: ACCOUNT,
      itemId: id,
      sourceType: "adjustment",
      journalId: "jj",
      variationId: "v",
      locationId: L1,
      userId: "user-1",
      reason: "count",
      at: AT,
    });
  });

  it("does not modify the state it was given", () => {
    const id = randomUUID();
    const existing = row(id, "v", L1, 1, { onHand: 5 });
    const it0 = itemWithRows(id, [existing], { stockVersion: 9 });
    const snapshotRow = structuredClone(existing);
    const snapshotItem = structuredClone(it0);
    plan({ items: [it0], rows: [existing], changes: [change(id, "v", L1, { onHand: -1 }), change(id, "v", L2, { onHand: 3 })] });
    expect(existing).toEqual(snapshotRow);
    expect(it0).toEqual(snapshotItem);
  });
});

describe("planLedgerWrite: the item's figures", () => {
  it("keeps each location's stock equal to the sum of the item's rows there", () => {
    const id = randomUUID();
    const rows = [row(id, "v1", L1, 1, { onHand: 3, reserved: 1 }), row(id, "v2", L1, 2, { onHand: 2, incoming: 5 }), row(id, "v1", L2, 3, { onHand: 0.3 })];
    const write = plan({
      items: [itemWithRows(id, rows, { stockVersion: 12 })],
      rows,
      sequence: 3,
      changes: [
        change(id, "v1", L1, { onHand: 1.5 }),
        change(id, "v2", L3, { onHand: 0.25, inTransit: 1 }),
        change(id, "v2", L1, { incoming: -5, onHand: 5 }),
        change(id, "v1", L2, { onHand: -0.1 }),
        change(id, "v1", L1, { reserved: -1 }),
      ],
    });
    const after = new Map(rows.map((r) => [rowKeyOf(r), rowBalances(r)]));
    for (const { row: r } of write.rows) after.set(rowKeyOf(r), rowBalances(r));
    const expected: Record<string, Balances> = {};
    for (const [key, b] of after) {
      const location = key.split("|")[2]!;
      expected[location] = sumBalances([expected[location] ?? balances(), b]);
    }
    expect(write.items).toHaveLength(1);
    expect(write.items[0]!.stock).toEqual(expected);
    expect(write.items[0]!.stock).toEqual({
      [L1]: { onHand: 11.5, reserved: 0, incoming: 0, inTransit: 0 },
      [L2]: { onHand: 0.2, reserved: 0, incoming: 0, inTransit: 0 },
      [L3]: { onHand: 0.25, reserved: 0, incoming: 0, inTransit: 1 },
    });
    expect(write.items[0]!.expectedVersion).toBe(12);
  });

  it("writes one entry per touched item, each on its own stock version, with the item counters given", () => {
    const [a, b, c] = [randomUUID(), randomUUID(), randomUUID()];
    const write = plan({
      items: [item(a, { stockVersion: 4 }), item(b, { stockVersion: 0 }), item(c, { stockVersion: 99 })],
      changes: [change(a, "v", L1, { onHand: 1 }), change(b, "v", L1, { onHand: 1 }), change(a, "v", L2, { onHand: 1 })],
      itemAdds: new Map([[a, { adjustmentCount: 2 }]]),
    });
    expect(write.items.map((i) => [i.itemId, i.expectedVersion, i.add])).toEqual([
      [a, 4, { adjustmentCount: 2 }],
      [b, 0, undefined],
    ]);
    expect(write.accountId).toBe(ACCOUNT);
  });

  it("keeps the stock of locations the write does not touch", () => {
    const id = randomUUID();
    const rows = [row(id, "v", L1, 1, { onHand: 2 }), row(id, "v", L2, 2, { onHand: 7, reserved: 3 })];
    const write = plan({ items: [itemWithRows(id, rows)], rows, changes: [change(id, "v", L1, { onHand: 1 })] });
    expect(write.items[0]!.stock[L2]).toEqual({ onHand: 7, reserved: 3, incoming: 0, inTransit: 0 });
    expect(write.items[0]!.stock[L1]).toEqual({ onHand: 3, reserved: 0, incoming: 0, inTransit: 0 });
  });
});

describe("planLedgerWrite: rules", () => {
  it("refuses a change that takes on hand below zero, naming the change", () => {
    const id = randomUUID();
    const existing = row(id, "v", L1, 1, { onHand: 2 });
    const error = ruleError(() =>
      plan({ items: [itemWithRows(id, [existing])], rows: [existing], changes: [change(id, "v", L1, { onHand: -1 }), change(id, "v", L1, { onHand: -1.5 })] }),
    );
    expect(error.rule).toBe("negative_balance");
    expect(error.changeIndex).toBe(1);
    expect(error.name).toBe("StockRuleError");
  });

  it("applies changes in order: a decrease before the increase that would cover it is refused", () => {
    const id = randomUUID();
    const existing = row(id, "v", L1, 1, { onHand: 2 });
    const error = ruleError(() =>
      plan({ items: [itemWithRows(id, [existing])], rows: [existing], changes: [change(id, "v", L1, { onHand: -3 }), change(id, "v", L1, { onHand: 5 })] }),
    );
    expect(error).toMatchObject({ rule: "negative_balance", changeIndex: 0 });
    // The other order is fine and ends at 4.
    const write = plan({
      items: [itemWithRows(id, [existing])],
      rows: [existing],
      changes: [change(id, "v", L1, { onHand: 5 }), change(id, "v", L1, { onHand: -3 })],
    });
    expect(write.rows[0]!.row.onHand).toBe(4);
  });

  it("refuses a decrease at a location without stock (a new row) and any other balance below zero", () => {
    const [a, b] = [randomUUID(), randomUUID()];
    expect(ruleError(() => plan({ items: [item(a)], changes: [change(a, "v", L1, { onHand: 1 }), change(a, "v", L2, { onHand: -0.0001 })] }))).toMatchObject({
      rule: "negative_balance",
      changeIndex: 1,
    });
    const existing = row(b, "v", L1, 1, { onHand: 5, reserved: 1 });
    expect(ruleError(() => plan({ items: [itemWithRows(b, [existing])], rows: [existing], changes: [change(b, "v", L1, { reserved: -2 })] }))).toMatchObject({
      rule: "negative_balance",
      changeIndex: 0,
    });
  });

  it("lets a sale (oversell) of a quantity item take on hand below zero, never a unique item, never another balance; a balance below zero may rise", () => {
    const [a, u] = [randomUUID(), randomUUID()];
    const existing = row(a, "v", L1, 1, { onHand: 2, reserved: 1 });
    const sold = plan({ items: [itemWithRows(a, [existing])], rows: [existing], changes: [{ ...change(a, "v", L1, { onHand: -5 }), oversell: true }] });
    expect(sold.rows[0]!.row.onHand).toBe(-3);
    // At a location it was never stocked at (a new row) too.
    expect(plan({ items: [item(a)], changes: [{ ...change(a, "v", L2, { onHand: -1 }), oversell: true }] }).rows[0]!).toMatchObject({
      isNew: true,
      row: { onHand: -1 },
    });
    expect(
      ruleError(() =>
        plan({ items: [itemWithRows(a, [existing])], rows: [existing], changes: [{ ...change(a, "v", L1, { onHand: -1, reserved: -2 }), oversell: true }] }),
      ),
    ).toMatchObject({ rule: "negative_balance", changeIndex: 0 });
    expect(
      ruleError(() => plan({ items: [item(u, { inventoryType: "unique" })], changes: [{ ...change(u, "v", L1, { onHand: -1 }), oversell: true }] })),
    ).toMatchObject({
      rule: "negative_balance",
    });
    // Below zero already: an increase that leaves it below is fine, another decrease is not (without oversell).
    const negative = row(a, "v", L1, 1, { onHand: -3 });
    expect(plan({ items: [itemWithRows(a, [negative])], rows: [negative], changes: [change(a, "v", L1, { onHand: 2 })] }).rows[0]!.row.onHand).toBe(-1);
    expect(ruleError(() => plan({ items: [itemWithRows(a, [negative])], rows: [negative], changes: [change(a, "v", L1, { onHand: -1 })] }))).toMatchObject({
      rule: "negative_balance",
    });
    // As far as it counts exactly.
    expect(
      ruleError(() =>
        plan({ items: [itemWithRows(a, [negative])], rows: [negative], changes: [{ ...change(a, "v", L1, { onHand: -MAX_STOCK_BALANCE }), oversell: true }] }),
      ),
    ).toMatchObject({ rule: "too_large" });
  });

  it("allows a balance to reach exactly zero (decimals included)", () => {
    const id = randomUUID();
    const existing = row(id, "v", L1, 1, { onHand: 0.3 });
    const write = plan({
      items: [itemWithRows(id, [existing])],
      rows: [existing],
      changes: [change(id, "v", L1, { onHand: -0.1 }), change(id, "v", L1, { onHand: -0.2 })],
    });
    expect(write.rows[0]!.row.onHand).toBe(0);
    expect(write.history.map((h) => h.onHandAfter)).toEqual([0.2, 0]);
  });

  it("refuses a unique item with more than one unit on hand over all its locations", () => {
    const id = randomUUID();
    const existing = row(id, "v", L1, 1, { onHand: 1 });
    const other = randomUUID();
    const error = ruleError(() =>
      plan({
        items: [item(other), itemWithRows(id, [existing], { inventoryType: "unique" })],
        rows: [existing],
        changes: [change(other, "v", L1, { onHand: 5 }), change(id, "v", L2, { onHand: 1 })],
      }),
    );
    expect(error).toMatchObject({ rule: "unique_quantity", changeIndex: 1 });
    // Two units in one change at a new location.
    expect(ruleError(() => plan({ items: [item(id, { inventoryType: "unique" })], changes: [change(id, "v", L1, { onHand: 2 })] }))).toMatchObject({
      rule: "unique_quantity",
      changeIndex: 0,
    });
  });

  it("counts a unique item's unit in transit: another unit on hand is refused; the transfer's receipt and its reversal are not", () => {
    const id = randomUUID();
    const travelling = row(id, "v", L2, 1, { inTransit: 1 });
    const unique = itemWithRows(id, [travelling], { inventoryType: "unique" });
    expect(ruleError(() => plan({ items: [unique], rows: [travelling], changes: [change(id, "v", L3, { onHand: 1 })] }))).toMatchObject({
      rule: "unique_quantity",
      changeIndex: 0,
    });
    const received = plan({ items: [unique], rows: [travelling], changes: [change(id, "v", L2, { inTransit: -1, onHand: 1 })] });
    expect(received.items[0]!.stock[L2]).toEqual(balances({ onHand: 1 }));
    const reversed = plan({ items: [unique], rows: [travelling], changes: [change(id, "v", L2, { inTransit: -1 }), change(id, "v", L1, { onHand: 1 })] });
    expect(reversed.items[0]!.stock).toEqual({ [L1]: balances({ onHand: 1 }), [L2]: balances() });
  });

  it("refuses the change that takes an item's balance over all its locations past the most it counts exactly (15 significant digits)", () => {
    const id = randomUUID();
    const here = row(id, "v", L1, 1, { onHand: 60_000_000_000 });
    const there = row(id, "v", L2, 2, { onHand: 39_999_999_999.9999 });
    const full = itemWithRows(id, [here, there]);
    const other = randomUUID();
    const error = ruleError(() =>
      plan({ items: [full, item(other)], rows: [here, there], changes: [change(other, "v", L1, { onHand: 5 }), change(id, "v", L2, { onHand: 0.0001 })] }),
    );
    expect(error).toMatchObject({ rule: "too_large", changeIndex: 1 });
    expect(error.message).toContain("on-hand stock to 100000000000");
    expect(
      ruleError(() =>
        plan({ items: [item(id)], changes: [change(id, "v", L1, { incoming: 60_000_000_000 }), change(id, "v", L2, { incoming: 40_000_000_000 })] }),
      ),
    ).toMatchObject({
      rule: "too_large",
      changeIndex: 1,
    });
    // An item past the maximum from before the bound: a change that lowers a balance, or leaves the one past it, is ordinary.
    const ordered = row(id, "v", L1, 1, { onHand: 5, incoming: 200_000_000_000 });
    const past = itemWithRows(id, [ordered]);
    expect(plan({ items: [past], rows: [ordered], changes: [change(id, "v", L1, { onHand: -1 })] }).items[0]!.stock[L1]).toEqual(
      balances({ onHand: 4, incoming: 200_000_000_000 }),
    );
    expect(ruleError(() => plan({ items: [past], rows: [ordered], changes: [change(id, "v", L1, { incoming: 1 })] }))).toMatchObject({ rule: "too_large" });
    // Up to the maximum exactly, and down from it, are ordinary.
    const reached = plan({ items: [full], rows: [here, there], changes: [change(id, "v", L1, { onHand: -1 }), change(id, "v", L2, { onHand: 1 })] });
    expect(sumBalances(Object.values(reached.items[0]!.stock as Record<string, Balances>)).onHand).toBe(MAX_STOCK_BALANCE);
  });

  it("makes one unit of a unique item incoming per change, never more or a part of one (a plan and a hold alike)", () => {
    const id = randomUUID();
    const unique = item(id, { inventoryType: "unique" });
    for (const incoming of [2, 0.5]) {
      expect(ruleError(() => plan({ items: [unique], changes: [change(id, "v", L1, { incoming })] }))).toMatchObject({
        rule: "unique_quantity",
        changeIndex: 0,
      });
    }
    // A second unit incoming (two lines, or two orders), or one while a unit is on hand, is refused too.
    expect(ruleError(() => plan({ items: [unique], changes: [change(id, "v", L1, { incoming: 1 }), change(id, "v", L2, { incoming: 1 })] }))).toMatchObject({
      rule: "unique_quantity",
      changeIndex: 1,
    });
    const onHand = row(id, "v", L1, 1, { onHand: 1 });
    expect(
      ruleError(() =>
        plan({ items: [itemWithRows(id, [onHand], { inventoryType: "unique" })], rows: [onHand], changes: [change(id, "v", L2, { incoming: 1 })] }),
      ),
    ).toMatchObject({ rule: "unique_quantity" });
    // One unit incoming, and its receipt, are ordinary; a quantity item may have any number incoming.
    expect(plan({ items: [unique], changes: [change(id, "v", L1, { incoming: 1 })] }).items[0]!.stock[L1]).toEqual(balances({ incoming: 1 }));
    const other = randomUUID();
    expect(plan({ items: [item(other)], changes: [change(other, "v", L1, { incoming: 5 })] }).items[0]!.stock[L1]).toEqual(balances({ incoming: 5 }));
    const ordered = row(id, "v", L1, 1, { incoming: 2 });
    const received = plan({
      items: [itemWithRows(id, [ordered], { inventoryType: "unique" })],
      rows: [ordered],
      changes: [change(id, "v", L1, { onHand: 1, incoming: -1 })],
    });
    expect(received.items[0]!.stock[L1]).toEqual(balances({ onHand: 1, incoming: 1 }));
  });

  it("counts a unique item in whole units, and un-sells a sold one whose unit comes back on hand", () => {
    const id = randomUUID();
    expect(ruleError(() => plan({ items: [item(id, { inventoryType: "unique" })], changes: [change(id, "v", L1, { onHand: 0.5 })] }))).toMatchObject({
      rule: "unique_quantity",
    });
    const back = plan({ items: [item(id, { inventoryType: "unique", sold: true })], changes: [change(id, "v", L1, { onHand: 1 })] });
    expect(back.items[0]!.set).toMatchObject({ sold: false });
    expect(back.items[0]!.statusMove).toMatchObject({ to: "items_00" });
  });

  it("a sale's reversal of a unique item whose unit is back on hand already gives nothing back on hand (a linked invoice's reservation still returns)", () => {
    const id = randomUUID();
    const existing = row(id, "v", L1, 1, { onHand: 1 });
    const back = itemWithRows(id, [existing], { inventoryType: "unique", sold: false });
    // A standalone invoice's cancel: nothing at all to write for the unit.
    const cancelled = plan({ items: [back], rows: [existing], changes: [{ ...change(id, "v", L1, { onHand: 1 }), sold: false }] });
    expect(cancelled.rows).toEqual([]);
    expect(cancelled.history).toEqual([]);
    // A linked invoice's cancel: the order's reservation comes back, the unit stays one.
    const linked = plan({ items: [back], rows: [existing], changes: [{ ...change(id, "v", L1, { onHand: 1, reserved: 1 }), sold: false }] });
    expect(linked.rows[0]!.row).toMatchObject({ onHand: 1, reserved: 1 });
    // A sold unit still comes back as before.
    const sold = plan({
      items: [itemWithRows(id, [], { inventoryType: "unique", sold: true })],
      changes: [{ ...change(id, "v", L1, { onHand: 1 }), sold: false }],
    });
    expect(sold.rows[0]!.row.onHand).toBe(1);
    expect(sold.items[0]!.set).toMatchObject({ sold: false });
  });

  it("values a receipt over the stock on hand at the item's cost until it has a moving average", () => {
    const id = randomUUID();
    const existing = row(id, "v", L1, 1, { onHand: 10 });
    const receipt = { ...change(id, "v", L1, { onHand: 10 }), unitCost: "10.0000" };
    // 10 at 7.50 (the item's cost) and 10 at 10.00.
    const first = plan({ items: [itemWithRows(id, [existing], { cost: "7.5000" })], rows: [existing], changes: [receipt] });
    expect(first.items[0]!.set).toMatchObject({ averageCost: "8.7500" });
    // An average, once there, is what the stock is worth.
    const next = plan({ items: [itemWithRows(id, [existing], { cost: "7.5000", averageCost: "9.0000" })], rows: [existing], changes: [receipt] });
    expect(next.items[0]!.set).toMatchObject({ averageCost: "9.5000" });
    // Units given back at the cost they left at, recorded only (valued: false), value nothing.
    const recorded = plan({ items: [itemWithRows(id, [existing], { cost: "7.5000" })], rows: [existing], changes: [{ ...receipt, valued: false }] });
    expect(recorded.items[0]!.set?.averageCost).toBeUndefined();
  });

  it("lets a unique item hold one unit and move it between locations", () => {
    const id = randomUUID();
    expect(plan({ items: [item(id, { inventoryType: "unique" })], changes: [change(id, "v", L1, { onHand: 1 })] }).rows[0]!.row.onHand).toBe(1);
    const existing = row(id, "v", L1, 1, { onHand: 1 });
    const moved = plan({
      items: [itemWithRows(id, [existing], { inventoryType: "unique" })],
      rows: [existing],
      changes: [change(id, "v", L2, { onHand: 1 }), change(id, "v", L1, { onHand: -1 })],
    });
    expect(moved.items[0]!.stock).toEqual({ [L1]: balances(), [L2]: balances({ onHand: 1 }) });
  });

  it("refuses a change too small to move a balance (zero, or below 0.0001), recording nothing", () => {
    const id = randomUUID();
    for (const deltas of [{ onHand: 0 }, {}, { onHand: 0.00001 }, { reserved: 1e-9 }, { onHand: 1, incoming: 0.00005 }]) {
      expect(ruleError(() => plan({ items: [item(id)], changes: [change(id, "v", L1, { onHand: 2 }), change(id, "v", L1, deltas)] }))).toMatchObject({
        rule: "no_effect",
        changeIndex: 1,
      });
    }
    expect(plan({ items: [item(id)], changes: [change(id, "v", L1, { onHand: 0.0001 })] }).history).toHaveLength(1);
  });

  it("refuses a change of an item it was not given", () => {
    const id = randomUUID();
    expect(
      ruleError(() => plan({ items: [item(id)], changes: [change(id, "v", L1, { onHand: 1 }), change(randomUUID(), "v", L1, { onHand: 1 })] })),
    ).toMatchObject({
      rule: "unknown_item",
      changeIndex: 1,
    });
  });
});

describe("planHold: a hold's chunks judged together", () => {
  const holdChunk = (options: { changes: StockChange[]; items: ItemRecord[]; rows: StockRowItem[] }) =>
    planHold({
      accountId: ACCOUNT,
      journalId: "hold-1",
      source: { sourceType: "invoice", userId: "user-1" },
      at: AT,
      changes: options.changes,
      items: new Map(options.items.map((i) => [i.itemId, i])),
      rows: new Map(options.rows.map((r) => [rowKeyOf(r), r])),
      sequence: 0,
    });

  it("finds a unique unit's reversal stale when the unit moved since the hold was journaled (brought back, or sold by another document)", () => {
    const id = randomUUID();
    const at = row(id, "v", L1, 1, { onHand: 0 });
    const reversal = { ...change(id, "v", L1, { onHand: 1 }), sold: false };
    const planWith = (overrides: Partial<ItemRecord>) => () =>
      planHold({
        accountId: ACCOUNT,
        journalId: "hold-1",
        source: { sourceType: "invoice", sourceId: "inv-A", userId: "user-1" },
        at: AT,
        changes: [reversal],
        items: new Map([[id, itemWithRows(id, [at], { inventoryType: "unique", ...overrides })]]),
        rows: new Map([[rowKeyOf(at), at]]),
        sequence: 0,
      });
    expect(planWith({ sold: true, soldBy: "inv-A" })).not.toThrow();
    expect(planWith({ sold: true, soldBy: "inv-B" })).toThrow(StalePlanError);
    expect(planWith({ sold: false })).toThrow(StalePlanError);
  });

  it("refuses a chunk that takes an item's balance past the most it counts exactly", () => {
    const id = randomUUID();
    const full = row(id, "v", L1, 1, { onHand: MAX_STOCK_BALANCE });
    expect(
      ruleError(() =>
        holdChunk({ items: [itemWithRows(id, [full])], rows: [full], changes: [change(id, "v", L1, { onHand: -1 }), change(id, "v", L2, { onHand: 2 })] }),
      ),
    ).toMatchObject({ rule: "too_large", changeIndex: 1 });
  });

  it("counts what the hold's earlier chunks left pending on the item's other rows against the maximum", () => {
    const id = randomUUID();
    const first = { ...row(id, "v1", L1, 1), pending: { "hold-1": { onHand: 60_000_000_000 } } } as StockRowItem;
    const item1 = itemWithRows(id, [row(id, "v1", L1, 1)]);
    expect(ruleError(() => holdChunk({ items: [item1], rows: [first], changes: [change(id, "v2", L2, { onHand: 60_000_000_000 })] }))).toMatchObject({
      rule: "too_large",
      changeIndex: 0,
    });
  });

  it("refuses a change that makes more than one unit of a unique item incoming", () => {
    const id = randomUUID();
    expect(
      ruleError(() =>
        holdChunk({ items: [item(randomUUID()), item(id, { inventoryType: "unique" })], rows: [], changes: [change(id, "v", L1, { incoming: 3 })] }),
      ),
    ).toMatchObject({ rule: "unique_quantity", changeIndex: 0 });
  });

  it("counts what the hold's earlier chunks wrote on a row: a later chunk that would take the stock below zero is refused", () => {
    const id = randomUUID();
    const stocked = row(id, "v", L1, 1, { onHand: 80 });
    const first = holdChunk({
      items: [itemWithRows(id, [stocked])],
      rows: [stocked],
      changes: Array.from({ length: 78 }, () => change(id, "v", L1, { onHand: -1 })),
    });
    const afterFirst = first.rows[0]!.row;
    expect(afterFirst.onHand).toBe(80); // pending: no balance moves
    expect(afterFirst.pending).toEqual({ "hold-1": { onHand: -78 } });

    const error = ruleError(() =>
      holdChunk({ items: [itemWithRows(id, [afterFirst])], rows: [afterFirst], changes: Array.from({ length: 3 }, () => change(id, "v", L1, { onHand: -1 })) }),
    );
    expect(error).toMatchObject({ rule: "negative_balance", changeIndex: 2 });

    const second = holdChunk({ items: [itemWithRows(id, [afterFirst])], rows: [afterFirst], changes: [change(id, "v", L1, { onHand: -2 })] });
    expect(second.rows[0]!.row.pending).toEqual({ "hold-1": { onHand: -80 } }); // the whole hold's net, for other writers' reservations
  });

  it("counts the units of a unique item its earlier chunks added", () => {
    const id = randomUUID();
    const held = { ...row(id, "v", L1, 1), pending: { "hold-1": { onHand: 1 } } } as StockRowItem;
    const unique = item(id, { inventoryType: "unique" });
    expect(ruleError(() => holdChunk({ items: [unique], rows: [held], changes: [change(id, "v", L1, { onHand: 1 })] })).rule).toBe("unique_quantity");
  });
});

/** Transaction items of a chunk as the applier writes it: ledger ops (all rows new) + the chunk mark. */
function chunkOps(changes: StockChange[], indexes: number[]): number {
  // Increases only, so that the planner accepts every chunk on empty rows.
  const subset = indexes.map((i) => ({ ...changes[i]!, deltas: { onHand: Math.abs(changes[i]!.deltas.onHand ?? 1) } }));
  const itemIds = [...new Set(subset.map((c) => c.itemId))];
  const write = plan({ items: itemIds.map((id) => item(id)), changes: subset, sequence: 0 });
  return ledgerOpCount(write) + 1;
}

/** A transfer-like journal: every item moves stock from one location to another. */
function transferChanges(itemCount: number): StockChange[] {
  const items = Array.from({ length: itemCount }, () => randomUUID());
  return [...items.map((id) => change(id, "v", L1, { onHand: -1 })), ...items.map((id) => change(id, "v", L2, { onHand: 1 }))];
}

/** Items with 1 to 9 changes each over 1 to 3 variations and locations, interleaved. */
function mixedChanges(itemCount: number, seed = 1): StockChange[] {
  let state = seed;
  const next = () => (state = (state * 1103515245 + 12345) % 2 ** 31);
  const pending: StockChange[][] = Array.from({ length: itemCount }, () => {
    const id = randomUUID();
    return Array.from({ length: 1 + (next() % 9) }, () => change(id, `v${next() % 3}`, [L1, L2, L3][next() % 3]!, { onHand: 1 }));
  });
  const out: StockChange[] = [];
  while (pending.some((p) => p.length > 0)) {
    const open = pending.filter((p) => p.length > 0);
    out.push(open[next() % open.length]!.shift()!);
  }
  return out;
}

describe("chunkIndexes", () => {
  const cases: { name: string; changes: StockChange[]; maxOps?: number }[] = [
    { name: "a 100-item transfer (200 changes)", changes: transferChanges(100) },
    { name: "75 items x 2 locations", changes: transferChanges(75) },
    { name: "interleaved items with several rows", changes: mixedChanges(60) },
    { name: "interleaved items, small budget", changes: mixedChanges(40, 7), maxOps: 25 },
    { name: "one change", changes: transferChanges(1).slice(0, 1) },
  ];

  it.each(cases)("$name: covers every change exactly once, keeps an item's changes together, fits the budget", ({ changes, maxOps }) => {
    const budget = maxOps ?? 80;
    const chunks = maxOps === undefined ? chunkIndexes(changes) : chunkIndexes(changes, maxOps);
    const all = chunks.flat();
    expect(all).toHaveLength(changes.length);
    expect([...all].sort((x, y) => x - y)).toEqual(changes.map((_, i) => i));
    const chunkOfItem = new Map<string, number>();
    chunks.forEach((indexes, n) => {
      expect(indexes.length).toBeGreaterThan(0);
      for (const i of indexes) {
        const itemId = changes[i]!.itemId;
        expect(chunkOfItem.get(itemId) ?? n, `item ${itemId} split over chunks`).toBe(n);
        chunkOfItem.set(itemId, n);
      }
      const ops = chunkOps(changes, indexes);
      expect(ops, `chunk ${n}`).toBeLessThanOrEqual(budget);
      expect(ops).toBeLessThanOrEqual(100);
    });
  });

  it("splits a 100-item transfer over several transactions", () => {
    expect(chunkIndexes(transferChanges(100)).length).toBeGreaterThan(1);
    expect(chunkIndexes(transferChanges(75)).length).toBeGreaterThan(1);
  });

  it("is deterministic: the same changes (also after a JSON round trip, as a journal stores them) give the same chunks", () => {
    const changes = mixedChanges(50, 3);
    const first = chunkIndexes(changes);
    expect(chunkIndexes(changes)).toEqual(first);
    expect(chunkIndexes(JSON.parse(JSON.stringify(changes)) as StockChange[])).toEqual(first);
    expect(chunkIndexes(structuredClone(changes))).toEqual(first);
  });

  it("keeps the changes of a chunk in journal order per item", () => {
    const changes = mixedChanges(30, 11);
    for (const indexes of chunkIndexes(changes)) {
      const byItem = new Map<string, number[]>();
      for (const i of indexes) byItem.set(changes[i]!.itemId, [...(byItem.get(changes[i]!.itemId) ?? []), i]);
      for (const list of byItem.values()) expect(list).toEqual([...list].sort((x, y) => x - y));
    }
  });

  it("fits the budget even for one item whose changes alone exceed it (a 30-variation item received at 2 locations)", () => {
    // 60 changes of one item on 60 rows: 1 item + 60 rows + 60 history + mark = 122 transaction
    // items if kept in one chunk, beyond DynamoDB's 100 per transaction. Every chunk must fit,
    // and every change must still be covered exactly once.
    const id = randomUUID();
    const changes = Array.from({ length: 30 }, (_, v) => [change(id, `v${v}`, L1, { onHand: 1 }), change(id, `v${v}`, L2, { onHand: 1 })]).flat();
    const chunks = chunkIndexes(changes);
    expect(chunks.flat().sort((x, y) => x - y)).toEqual(changes.map((_, i) => i));
    for (const indexes of chunks) expect(chunkOps(changes, indexes)).toBeLessThanOrEqual(80);
  });

  it("returns no chunks for no changes", () => {
    expect(chunkIndexes([])).toEqual([]);
  });
});
