import { describe, expect, it } from "vitest";
import type { DocumentItem } from "../../../db/service.js";
import type { SalesLine } from "../sales/model.js";
import { sampleSalesLine } from "../test-fixtures.js";
import { assertCancellable, assertDeletable, assertPackedLinesKept, assertUpdatable, invoiceStock, paymentStatus } from "./model.js";

/**
 * The invoice's pure rules without a database: which invoices may be updated, cancelled and
 * deleted, the packed lines an update keeps, the stock its lines take, and the status that
 * follows the amount paid.
 */
const header = (overrides: Partial<DocumentItem> = {}): DocumentItem =>
  ({
    accountId: "a",
    documentId: "i",
    kind: "invoice",
    status: "sent",
    statusId: 9,
    number: 7,
    total: "100.0000",
    amountPaidMinor: 0,
    paymentCount: 0,
    ...overrides,
  }) as DocumentItem;

const line = (overrides: Partial<SalesLine> = {}): SalesLine => sampleSalesLine({ quantity: 2, subtotal: "20.0000", ...overrides });

describe("offline: invoice rules", () => {
  it("updates only unpaid standalone invoices", () => {
    expect(() => assertUpdatable(header())).not.toThrow();
    expect(() => assertUpdatable(header({ status: "paid", statusId: 11 }))).toThrow(
      expect.objectContaining({ statusCode: 409, code: "invoice_update_not_allowed", message: expect.stringContaining("Paid") }),
    );
    expect(() => assertUpdatable(header({ sourceSalesOrderId: "so" }))).toThrow(expect.objectContaining({ code: "invoice_update_not_allowed" }));
  });

  it("cancels only invoices that are not cancelled and have no payments", () => {
    expect(() => assertCancellable(header())).not.toThrow();
    expect(() => assertCancellable(header({ status: "cancelled" }))).toThrow(expect.objectContaining({ code: "invoice_cancel_not_allowed" }));
    expect(() => assertCancellable(header({ paymentCount: 1, amountPaidMinor: 0 }))).toThrow(expect.objectContaining({ code: "invoice_cancel_not_allowed" }));
  });

  it("deletes standalone unpaid or cancelled invoices without payments or packing lists", () => {
    const payments: never[] = [];
    expect(() => assertDeletable({ header: header(), lines: [line()], payments })).not.toThrow();
    expect(() => assertDeletable({ header: header({ status: "cancelled" }), lines: [line()], payments })).not.toThrow();
    for (const tree of [
      { header: header({ sourceSalesOrderId: "so" }), lines: [line()], payments },
      { header: header({ status: "partially_paid" }), lines: [line()], payments },
      { header: header({ paymentCount: 1 }), lines: [line()], payments },
      { header: header(), lines: [line({ quantityPacked: 1 })], payments },
    ]) {
      expect(() => assertDeletable(tree)).toThrow(expect.objectContaining({ statusCode: 409, code: "invoice_delete_not_allowed" }));
    }
    // A sales order's invoice: cancelled, and only once the order is gone.
    const linkedCancelled = { header: header({ sourceSalesOrderId: "so", status: "cancelled" }), lines: [line()], payments };
    expect(() => assertDeletable(linkedCancelled)).toThrow(expect.objectContaining({ statusCode: 409, code: "invoice_delete_not_allowed" }));
    expect(() => assertDeletable(linkedCancelled, true)).not.toThrow();
    expect(() => assertDeletable({ header: header({ sourceSalesOrderId: "so" }), lines: [line()], payments }, true)).toThrow(
      expect.objectContaining({ code: "invoice_delete_not_allowed" }),
    );
  });

  it("refuses an update that drops a line with packed quantities", () => {
    const packed = line({ quantityPacked: 1 });
    expect(() => assertPackedLinesKept([packed, line({ id: "l2" })], [packed])).not.toThrow();
    expect(() => assertPackedLinesKept([packed], [undefined])).toThrow(
      expect.objectContaining({ details: [expect.objectContaining({ param: "lines", code: "packed_line_removed" })] }),
    );
  });

  it("takes stock from on hand (a sale may take it below zero), and from the order's reservation too when linked", () => {
    const lines = [line(), line({ id: "s", lineType: "service", itemId: undefined })];
    expect(invoiceStock(header(), lines, 1)).toEqual([{ itemId: "item", variationId: "v", locationId: "loc", deltas: { onHand: -2 }, oversell: true }]);
    expect(invoiceStock(header({ sourceSalesOrderId: "so" }), lines, -1)).toEqual([
      { itemId: "item", variationId: "v", locationId: "loc", deltas: { onHand: 2, reserved: 2 } },
    ]);
  });

  it("follows the amount paid with its status", () => {
    expect(paymentStatus(header({ amountPaidMinor: 500_000 }))).toEqual({ status: "partially_paid", statusId: 10 });
    expect(paymentStatus(header({ amountPaidMinor: 1_000_000 }))).toEqual({ status: "paid", statusId: 11 });
  });
});
