import { describe, expect, it } from "vitest";
import type { DocumentItem } from "../../../db/service.js";
import { Decimal } from "../../../core/decimal.js";
import { money } from "../../common/money.js";
import { priceSalesLines, type SalesLine } from "../sales/model.js";
import { sampleSalesLine } from "../test-fixtures.js";
import type { HeaderTotals } from "../totals.js";
import { assertEditable, assertInvoiceable, MAX_ORDER_INVOICES, orderAfterInvoice, quantitiesToInvoice, reservations } from "./model.js";
import { invoiceLinesOf, withInvoiceOf } from "./invoiced-money.js";

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
    const invoiceOf = (id: string, quantity: number) => ({
      id,
      lines: [line({ id: `${id}-l`, quantity, salesOrderLineId: "l1" })],
      money: new Map(),
      discountTotal: "0.0000",
    });
    const partly = orderAfterInvoice(header(), lines, invoiceOf("inv1", 2));
    expect(partly.header).toMatchObject({ status: "open", statusId: 29, invoiceCount: 1, linkedInvoiceIds: ["inv1"], invoicedPercent: 40 });
    expect(partly.header.revision).not.toBe("so_1");
    const done = orderAfterInvoice(partly.header, partly.lines, invoiceOf("inv2", 3));
    expect(done.header).toMatchObject({ status: "closed", statusId: 30, invoiceCount: 2, linkedInvoiceIds: ["inv1", "inv2"], invoicedPercent: 100 });
    expect(done.lines[0]!.quantityInvoiced).toBe(5);
  });

  it("reserves each inventory line's uninvoiced quantity", () => {
    expect(reservations([line({ quantityInvoiced: 2 }), discount], 1)).toEqual([
      { itemId: "item", variationId: "v", locationId: "loc", deltas: { reserved: 3 } },
    ]);
    expect(reservations([line()], -1)[0]!.deltas).toEqual({ reserved: -5 });
  });

  describe("the money of partial invoices", () => {
    type Order = { header: DocumentItem; lines: SalesLine[] };
    const orderOf = (discountPercent: string, lines: SalesLine[]): Order => {
      const priced = priceSalesLines(lines, discountPercent, "0.0000");
      return { header: header({ discountPercent, ...priced.totals }), lines: priced.lines };
    };
    let ids = 0;
    /** Invoices `quantities` of the order as invoicing does (without storage): the invoice's priced lines and totals, and the order after it. */
    const invoice = (order: Order, quantities: Record<string, number>) => {
      const taken = new Map(Object.entries(quantities));
      const parts = invoiceLinesOf(order.header, order.lines, taken, () => `il${++ids}`);
      const priced = priceSalesLines(parts.lines, order.header.discountPercent, "0.0000", parts.fixedDiscount);
      const after = orderAfterInvoice(order.header, order.lines, { id: `inv${ids}`, ...priced, discountTotal: priced.totals.discountTotal });
      return { invoice: priced, order: after };
    };
    /** The order after a cancel of `invoice` (as `cancelInvoice` moves it back). */
    const cancel = (order: Order, cancelled: ReturnType<typeof invoice>["invoice"]): Order => ({
      header: order.header,
      lines: withInvoiceOf(order.lines, { ...cancelled, discountTotal: cancelled.totals.discountTotal }, -1),
    });
    const sum = (invoices: { totals: HeaderTotals }[], field: "subtotal" | "tax" | "tax2" | "total" | "discountTotal") =>
      money(invoices.reduce((acc, i) => acc.plus(i.totals[field]!), new Decimal(0)));

    it("rounds each invoice alone but gives the last part of a line the exact rest: 3 x 9.9999 as 1.5 + 1.5", () => {
      const order = orderOf("0.000", [line({ quantity: 3, unitPrice: "9.9999" })]);
      expect(order.header.total).toBe("29.9997");
      const first = invoice(order, { l1: 1.5 });
      expect(first.invoice.totals.total).toBe("14.9999"); // 14.99985 rounded half away from zero
      const second = invoice(first.order, { l1: 1.5 });
      expect(second.invoice.totals.total).toBe("14.9998");
      expect(second.invoice.lines[0]!.subtotal).toBe("14.9998");
      expect(second.order.header.status).toBe("closed");
      expect(second.order.lines[0]!.invoiced).toEqual({ subtotal: "29.9997", tax: "0.0000", tax2: "0.0000" });
    });

    it("adds up to the order's subtotal, taxes, discount and total with line and order discounts and two taxes", () => {
      const order = orderOf("7.500", [
        line({ id: "l1", quantity: 3, unitPrice: "9.9999", taxRate: "8.250", tax2Rate: "1.125" }),
        line({ id: "l2", quantity: 7, unitPrice: "3.3333", discountPercent: "12.500", taxRate: "8.250" }),
      ]);
      const a = invoice(order, { l1: 1.5, l2: 3 });
      const b = invoice(a.order, { l1: 0.5, l2: 1.5 });
      const c = invoice(b.order, { l1: 1, l2: 2.5 });
      expect(c.order.header.status).toBe("closed");
      const invoices = [a.invoice, b.invoice, c.invoice];
      for (const field of ["subtotal", "tax", "tax2", "total", "discountTotal"] as const) expect(sum(invoices, field)).toBe(order.header[field]);
      // Only the closing invoice is fixed; the others are priced as any invoice is.
      expect(a.invoice.lines.some((l) => l.fixed)).toBe(false);
      expect(c.invoice.lines.filter((l) => l.lineType !== "discount").every((l) => l.fixed)).toBe(true);
    });

    it("keeps adding up after a cancelled invoice gives its quantities and money back", () => {
      const order = orderOf("5.000", [line({ id: "l1", quantity: 3, unitPrice: "9.9999", taxRate: "8.250" })]);
      const a = invoice(order, { l1: 1.5 });
      const b = invoice(a.order, { l1: 1 });
      const reopened = cancel(b.order, a.invoice);
      expect(reopened.lines[0]!.invoiced!.subtotal).toBe(b.invoice.totals.preDiscountTotal);
      const c = invoice(reopened, { l1: 2 });
      expect(c.order.header.status).toBe("closed");
      for (const field of ["subtotal", "tax", "total", "discountTotal"] as const) expect(sum([b.invoice, c.invoice], field)).toBe(order.header[field]);
    });

    it("never takes more of a line or of the discount than the order has left: no negative line, no positive discount", () => {
      // 2 x 0.0001 at 50% tax in four halves: each half alone rounds up to 0.0001 (of a 0.0002 line).
      let tiny: Order = orderOf("0.000", [line({ quantity: 2, unitPrice: "0.0001", taxRate: "50.000" })]);
      const halves = [];
      for (let i = 0; i < 4; i++) {
        const next = invoice(tiny, { l1: 0.5 });
        halves.push(next.invoice);
        tiny = next.order;
      }
      expect(tiny.header.status).toBe("closed");
      for (const half of halves) for (const field of ["subtotal", "tax", "total"] as const) expect(new Decimal(half.totals[field]).gte(0), field).toBe(true);
      for (const field of ["subtotal", "tax", "total"] as const)
        expect(sum(halves, field)).toBe(orderOf("0.000", [line({ quantity: 2, unitPrice: "0.0001", taxRate: "50.000" })]).header[field]);

      // 7 x 0.0001 with a 50% order discount in sevenths: the discount never turns positive.
      const start = orderOf("50.000", [line({ quantity: 7, unitPrice: "0.0001", taxRate: "50.000" })]);
      let sevenths: Order = start;
      const parts = [];
      for (let i = 0; i < 7; i++) {
        const next = invoice(sevenths, { l1: 1 });
        parts.push(next.invoice);
        sevenths = next.order;
      }
      for (const part of parts) expect(new Decimal(part.totals.discountTotal).lte(0)).toBe(true);
      for (const field of ["subtotal", "tax", "total", "discountTotal"] as const) expect(sum(parts, field)).toBe(start.header[field]);
    });

    it("leaves lines invoiced before their money was kept priced as they are, and the discount too until none is", () => {
      const order = orderOf("10.000", [line({ quantity: 3, unitPrice: "9.9999", quantityInvoiced: 1.5 }), line({ id: "l2", quantity: 1 })]);
      const parts = invoiceLinesOf(
        order.header,
        order.lines,
        new Map([
          ["l1", 1.5],
          ["l2", 1],
        ]),
        () => "il",
      );
      expect(parts.lines[0]!.fixed).toBeUndefined();
      expect(parts.lines[1]!.fixed).toBeDefined();
      expect(parts.fixedDiscount).toBeUndefined();
      expect(parts.lines[0]).not.toHaveProperty("invoiced");
      // Cancelling such an invoice leaves the money unknown (never a made-up rest), the discount's too.
      const priced = priceSalesLines([{ ...order.lines[0]!, id: "old", quantity: 1.5, salesOrderLineId: "l1" }], "10.000", "0.0000");
      const back = withInvoiceOf(order.lines, { ...priced, discountTotal: priced.totals.discountTotal }, -1);
      expect(back[0]).toMatchObject({ quantityInvoiced: 0 });
      expect(back[0]).not.toHaveProperty("invoiced");
      expect(back.find((l) => l.lineType === "discount")).not.toHaveProperty("invoiced");
      // Nothing invoiced any more: the next invoices are kept from the start.
      const fresh = invoiceLinesOf(
        order.header,
        back,
        new Map([
          ["l1", 3],
          ["l2", 1],
        ]),
        () => "il",
      );
      expect(fresh.lines.every((l) => l.fixed)).toBe(true);
      expect(fresh.fixedDiscount).toBe(order.header.discountTotal);
    });
  });
});
