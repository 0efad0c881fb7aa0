import { describe, expect, it } from "vitest";
import type { DocumentItem } from "../../../db/service.js";
import type { SalesLine } from "../sales/model.js";
import { sampleSalesLine } from "../test-fixtures.js";
import { assertEditable, assertInvoiceable, MAX_ORDER_INVOICES, orderAfterInvoice, quantitiesToInvoice, reservations } from "./model.js";

/**
 * The sales order's pure rules without a database: which orders may be edited and invoiced,
 * the quantities an invoice takes, the order after it (closed once fully invoiced) and the
 * reservations of its lines.
 */
const header = (overrides: Partial<DocumentItem> = {}): DocumentItem =>
  ({
    accountId: "a",
    documentId: "so",
    kind: "sales_order",
    status: "open",
    statusId: 29,
    number: 3,
    revision: "so_1",
    updatedAt: "2026-01-02T03:04:05.000Z",
    invoiceCount: 0,
    ...overrides,
  }) as DocumentItem;

const line = (overrides: Partial<SalesLine> = {}): SalesLine => sampleSalesLine({ quantity: 5, subtotal: "50.0000", ...overrides });

const discount = line({ id: "d", lineType: "discount", itemId: undefined, quantity: 1, unitCost: null });

describe("offline: sales order rules", () => {
  it("edits only open orders without activity", () => {
    expect(() => assertEditable({ header: header(), lines: [line()], payments: [] }, "updated")).not.toThrow();
    expect(() => assertEditable({ header: header({ status: "closed" }), lines: [line()], payments: [] }, "updated")).toThrow(
      expect.objectContaining({ statusCode: 409, code: "sales_order_update_not_allowed", message: expect.stringContaining("Closed") }),
    );
    expect(() => assertEditable({ header: header(), lines: [line({ quantityPacked: 1 })], payments: [] }, "deleted")).toThrow(
      expect.objectContaining({ code: "sales_order_update_not_allowed" }),
    );
  });

  it("invoices only open orders below the invoice limit", () => {
    expect(() => assertInvoiceable(header())).not.toThrow();
    const ids = Array.from({ length: MAX_ORDER_INVOICES }, (_, i) => `inv-${i}`);
    expect(() => assertInvoiceable(header({ invoiceCount: MAX_ORDER_INVOICES, linkedInvoiceIds: ids }))).toThrow(
      expect.objectContaining({ code: "sales_order_invoice_not_allowed" }),
    );
    // Cancelled invoices give their place back: an order invoiced and cancelled 50 times is not stuck.
    expect(() => assertInvoiceable(header({ invoiceCount: MAX_ORDER_INVOICES, linkedInvoiceIds: ids, cancelledInvoiceIds: ids.slice(0, 1) }))).not.toThrow();
  });

  it("invoices every remaining quantity, or the requested ones within it", () => {
    const lines = [line({ quantityInvoiced: 2 }), line({ id: "l2", quantity: 1, quantityInvoiced: 1 }), discount];
    expect([...quantitiesToInvoice(lines, undefined)]).toEqual([["l1", 3]]);
    expect([...quantitiesToInvoice(lines, [{ id: "l1", quantity: 1 }])]).toEqual([["l1", 1]]);
    expect(() =>
      quantitiesToInvoice(lines, [
        { id: "l1", quantity: 4 },
        { id: "d", quantity: 1 },
        { id: "x", quantity: 1 },
      ]),
    ).toThrow(
      expect.objectContaining({
        details: [
          expect.objectContaining({ param: "lines[0].quantity", code: "too_large" }),
          expect.objectContaining({ param: "lines[1].id", code: "not_invoiceable" }),
          expect.objectContaining({ param: "lines[2].id", code: "invalid_reference" }),
        ],
      }),
    );
    expect(() => quantitiesToInvoice([line({ quantityInvoiced: 5 })], undefined)).toThrow(expect.objectContaining({ statusCode: 409 }));
  });

  it("closes the order once every line is fully invoiced", () => {
    const lines = [line(), discount];
    const partly = orderAfterInvoice(header(), lines, new Map([["l1", 2]]), "inv1");
    expect(partly.header).toMatchObject({ status: "open", statusId: 29, invoiceCount: 1, linkedInvoiceIds: ["inv1"], invoicedPercent: 40 });
    expect(partly.header.revision).not.toBe("so_1");
    const done = orderAfterInvoice(partly.header, partly.lines, new Map([["l1", 3]]), "inv2");
    expect(done.header).toMatchObject({ status: "closed", statusId: 30, invoiceCount: 2, linkedInvoiceIds: ["inv1", "inv2"], invoicedPercent: 100 });
    expect(done.lines[0]!.quantityInvoiced).toBe(5);
  });

  it("reserves each inventory line's uninvoiced quantity", () => {
    expect(reservations([line({ quantityInvoiced: 2 }), discount], 1)).toEqual([
      { itemId: "item", variationId: "v", locationId: "loc", deltas: { reserved: 3 } },
    ]);
    expect(reservations([line()], -1)[0]!.deltas).toEqual({ reserved: -5 });
  });
});
