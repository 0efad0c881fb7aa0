import { invertChange, mergeStockChanges, type StockChange } from "../../inventory/stock-changes.js";
import { rowKeyOf } from "../../../core/records.js";
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { ledgerOpCount } from "../../../db/inventory.js";
import type { ItemRecord, StockRowItem } from "../../../db/service.js";
import { planLedgerWrite } from "../../inventory/ledger-plan.js";
import { paymentStatus } from "../invoices/model.js";
import { priceSalesLines, type SalesLine } from "./model.js";
import { sampleSalesLine } from "../test-fixtures.js";
import { sampleItem } from "../../inventory/test-fixtures.js";
import { lineChanges, percentOf, progressOf, remainingToPack, stockChangeOf } from "./progress.js";

/**
 * The pure parts of sales orders and invoices without a database: the ledger's sold status of
 * unique items (and the status counts it moves), merged stock changes, the stock effects of
 * lines, fulfilment percentages (rounded down: 100 only when complete), pricing with the
 * generated discount line, and the invoice status that follows the amount paid.
 */
const ACCOUNT = randomUUID();
const AT = "2026-01-02T03:04:05.000Z";
const LOCATION = randomUUID();

function item(itemId: string, overrides: Partial<ItemRecord> = {}): ItemRecord {
  return sampleItem(ACCOUNT, itemId, AT, {
    inventoryType: "unique",
    stockVersion: 3,
    stock: { [LOCATION]: { onHand: 1, reserved: 0, incoming: 0, inTransit: 0 } },
    ...overrides,
  });
}

const row = (itemId: string, onHand: number): StockRowItem =>
  ({
    accountId: ACCOUNT,
    itemId,
    variationId: "v",
    locationId: LOCATION,
    ivlId: 7,
    onHand,
    reserved: 0,
    incoming: 0,
    inTransit: 0,
    createdAt: AT,
    updatedAt: AT,
  }) as StockRowItem;

function plan(changes: StockChange[], items: ItemRecord[], rows: StockRowItem[]) {
  return planLedgerWrite({
    accountId: ACCOUNT,
    journalId: "j",
    source: { sourceType: "invoice" },
    at: AT,
    changes,
    items: new Map(items.map((i) => [i.itemId, i])),
    rows: new Map(rows.map((r) => [rowKeyOf(r), r])),
    sequence: 0,
  });
}

function line(overrides: Partial<SalesLine> = {}): SalesLine {
  return sampleSalesLine({
    id: randomUUID(),
    itemId: "i1",
    locationId: LOCATION,
    name: "Widget",
    quantity: 4,
    taxRate: "10.000",
    subtotal: "0.0000",
    ...overrides,
  });
}

describe("offline: the ledger sells unique items", () => {
  it("sets sold and moves the status count from items_00 to items_01, conditioned on archived as read", () => {
    const id = randomUUID();
    const write = plan([{ itemId: id, variationId: "v", locationId: LOCATION, deltas: { onHand: -1 }, sold: true }], [item(id)], [row(id, 1)]);
    expect(write.items[0]).toMatchObject({ set: { sold: true, updatedAt: AT }, statusMove: { from: "items_00", to: "items_01", archived: false } });
    // One more transaction item: the status counts.
    expect(ledgerOpCount(write)).toBe(1 + 1 + 1 + 1);
  });

  it("returns an archived sold item to items_10; a quantity item or an unchanged status moves nothing", () => {
    const id = randomUUID();
    const back = plan(
      [{ itemId: id, variationId: "v", locationId: LOCATION, deltas: { onHand: 1 }, sold: false }],
      [item(id, { sold: true, archived: true, stock: {} })],
      [row(id, 0)],
    );
    expect(back.items[0]!.statusMove).toEqual({ from: "items_11", to: "items_10", archived: true });
    const quantity = randomUUID();
    const plain = plan(
      [{ itemId: quantity, variationId: "v", locationId: LOCATION, deltas: { onHand: -1 }, sold: true }],
      [item(quantity, { inventoryType: "quantity" })],
      [row(quantity, 1)],
    );
    expect(plain.items[0]!.statusMove).toBeUndefined();
    expect(plain.items[0]!.set).toBeUndefined();
    const same = plan([{ itemId: id, variationId: "v", locationId: LOCATION, deltas: { onHand: -1 }, sold: false }], [item(id)], [row(id, 1)]);
    expect(same.items[0]!.statusMove).toBeUndefined();
  });

  it("inverts a sale into a return and merges changes per row, but a unique unit's", () => {
    const sale: StockChange = { itemId: "a", variationId: "v", locationId: LOCATION, deltas: { onHand: -1 }, sold: true };
    expect(invertChange(sale)).toEqual({ itemId: "a", variationId: "v", locationId: LOCATION, deltas: { onHand: 1 }, sold: false });
    const merged = mergeStockChanges([
      { itemId: "a", variationId: "v", locationId: LOCATION, deltas: { onHand: 1 }, sold: false },
      { itemId: "b", variationId: "v", locationId: LOCATION, deltas: { onHand: 0.1 } },
      { itemId: "a", variationId: "v", locationId: LOCATION, deltas: { onHand: -1 }, sold: true },
      { itemId: "b", variationId: "v", locationId: LOCATION, deltas: { onHand: 0.2, reserved: 1 } },
    ]);
    // b sums exactly (no float drift); a's unit given back and sold again stay whole, in their places, each judged.
    expect(merged).toEqual([
      { itemId: "a", variationId: "v", locationId: LOCATION, deltas: { onHand: 1 }, sold: false },
      { itemId: "b", variationId: "v", locationId: LOCATION, deltas: { onHand: 0.3, reserved: 1 } },
      { itemId: "a", variationId: "v", locationId: LOCATION, deltas: { onHand: -1 }, sold: true },
    ]);
  });
});

describe("offline: sales lines", () => {
  it("turns lines into stock effects: reservations, sales, sales of reserved stock (unique items sold)", () => {
    const unique = line({ unique: true, quantity: 1 });
    expect(stockChangeOf(unique, 1, "sell")).toMatchObject({ deltas: { onHand: -1 }, sold: true });
    expect(stockChangeOf(unique, -1, "sell_reserved")).toMatchObject({ deltas: { onHand: 1, reserved: 1 }, sold: false });
    expect(stockChangeOf(unique, 1, "reserve")).toEqual({ itemId: "i1", variationId: "v", locationId: LOCATION, deltas: { reserved: 1 } });
    const { changes, lineIndexes } = lineChanges(
      [line({ lineType: "service", itemId: undefined }), line(), line({ quantity: 0 })],
      "reserve",
      (l) => l.quantity,
    );
    expect(changes).toHaveLength(1);
    expect(lineIndexes).toEqual([1]);
  });

  it("rounds percentages down so that 100 means complete, and null when nothing applies", () => {
    expect(percentOf(2, 9)).toBe(22.22);
    expect(percentOf("99.999", 100)).toBe(99.99);
    expect(percentOf(3, 3)).toBe(100);
    expect(percentOf(0, 0)).toBeNull();
    const lines = [
      line({ quantity: 4, quantityPacked: 4, quantityShipped: 1, quantityInvoiced: 2 }),
      line({ lineType: "service", itemId: undefined, quantity: 2, quantityInvoiced: 2 }),
    ];
    expect(progressOf(lines, false)).toEqual({ packedPercent: 100, shippedPercent: 25, invoicedPercent: 66.66 });
    expect(progressOf(lines, true)).toEqual({ packedPercent: 66.66, shippedPercent: 16.66, invoicedPercent: 66.66 });
    expect(remainingToPack(lines[1]!, false)).toBe(0);
    expect(remainingToPack(lines[1]!, true)).toBe(2);
  });

  it("prices lines with one generated discount line that keeps its id", () => {
    const first = priceSalesLines([line({ quantity: 3, unitPrice: "10.0000" })], "10", "5");
    expect(first.totals).toEqual({
      subtotal: "27.0000",
      preDiscountTotal: "30.0000",
      discountTotal: "-3.0000",
      shippingFee: "5.0000",
      tax: "2.7000",
      tax2: "0.0000",
      total: "34.7000",
    });
    const discount = first.lines[1]!;
    expect(discount).toMatchObject({ lineType: "discount", unitPrice: "-3.0000", unitCost: null, quantity: 1 });
    const again = priceSalesLines(first.lines, "20", "0");
    expect(again.lines[1]).toMatchObject({ id: discount.id, unitPrice: "-6.0000" });
    expect(priceSalesLines(again.lines, "0", "0").lines).toHaveLength(1);
  });
});

describe("offline: invoice status follows the amount paid", () => {
  it("9 unpaid, 10 partially paid, 11 paid; cancelled stays cancelled", () => {
    expect(paymentStatus({ status: "sent", amountPaidMinor: 0, total: "10.0000", paymentCount: 1 })).toEqual({ status: "sent", statusId: 9 });
    expect(paymentStatus({ status: "sent", amountPaidMinor: 1, total: "10.0000", paymentCount: 1 })).toEqual({ status: "partially_paid", statusId: 10 });
    expect(paymentStatus({ status: "partially_paid", amountPaidMinor: 100_000, total: "10.0000", paymentCount: 1 })).toEqual({ status: "paid", statusId: 11 });
    expect(paymentStatus({ status: "paid", amountPaidMinor: 0, total: "10.0000", paymentCount: 1 })).toEqual({ status: "sent", statusId: 9 });
    expect(paymentStatus({ status: "cancelled", amountPaidMinor: 0, total: "10.0000", paymentCount: 1 })).toEqual({ status: "cancelled", statusId: 12 });
    // A total of 0 is paid by a payment of 0, not by being created; deleting that payment makes it unpaid again.
    expect(paymentStatus({ status: "sent", amountPaidMinor: 0, total: "0.0000", paymentCount: 0 })).toEqual({ status: "sent", statusId: 9 });
    expect(paymentStatus({ status: "sent", amountPaidMinor: 0, total: "0.0000", paymentCount: 1 })).toEqual({ status: "paid", statusId: 11 });
    expect(paymentStatus({ status: "sent", amountPaidMinor: 0, total: "10.0000", paymentCount: 1 })).toEqual({ status: "sent", statusId: 9 });
  });
});
