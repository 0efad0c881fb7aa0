import { Decimal } from "../../../core/decimal.js";
import type { DocumentItem } from "../../../db/service.js";
import { money } from "../../common/money.js";
import { addQuantities } from "../../inventory/math.js";
import { priceSalesLines, type SalesLine } from "../sales/model.js";
import { computeTotals, type LineMoney } from "../totals.js";

/**
 * The money of a sales order's partial invoices, without storage (architecture section 4,
 * "Money"; section 8, invoicing a sales order's remaining quantities).
 *
 * Each invoice rounds its own line amounts, so invoices of parts of a line could add up to a
 * little more or less than the order's line (3 x 9.9999 = 29.9997 as 1.5 + 1.5 is 14.9999 +
 * 14.9999). The order keeps on each line the money its live invoices hold of it (`invoiced`);
 * the invoice that takes a line's last quantity takes exactly the rest of the line's subtotal,
 * tax and tax 2, and the invoice that takes the order's last quantities the rest of its
 * discount. So once fully invoiced, the live invoices add up to the order's total and, paid,
 * leave nothing due.
 */

const ZERO_MONEY: LineMoney = { subtotal: "0.0000", tax: "0.0000", tax2: "0.0000" };

const plusMoney = (a: LineMoney, b: LineMoney, sign: 1 | -1): LineMoney => ({
  subtotal: money(new Decimal(a.subtotal).plus(new Decimal(b.subtotal).times(sign))),
  tax: money(new Decimal(a.tax).plus(new Decimal(b.tax).times(sign))),
  tax2: money(new Decimal(a.tax2).plus(new Decimal(b.tax2).times(sign))),
});

/**
 * What the live invoices hold of an order line (of the order's discount, on the discount line);
 * undefined when unknown: invoiced before it was kept (the discount: while any line is).
 */
function invoicedMoney(line: SalesLine, lines: readonly SalesLine[]): LineMoney | undefined {
  if (line.invoiced) return line.invoiced;
  const nothingInvoiced = (of: SalesLine) => of.lineType === "discount" || of.quantityInvoiced === 0;
  return (line.lineType === "discount" ? lines.every(nothingInvoiced) : nothingInvoiced(line)) ? ZERO_MONEY : undefined;
}

/** The smaller of two amounts of one sign (by size: `a` unless `b` is closer to zero). */
const nearerZero = (a: string, b: string): string => (new Decimal(b).abs().lt(new Decimal(a).abs()) ? b : a);

/** A line's own money at `quantity` under the order's discount, as any invoice prices it. */
function ownMoney(line: SalesLine, quantity: number, discountPercent: string): LineMoney {
  const [own] = computeTotals(
    [{ quantity, unitPrice: line.unitPrice, discountPercent: line.discountPercent, taxRate: line.taxRate, tax2Rate: line.tax2Rate }],
    discountPercent,
    "0",
  ).lines;
  return { subtotal: own!.subtotal, tax: own!.tax, tax2: own!.tax2 };
}

/**
 * The new invoice's lines of `quantities` (order line id -> quantity), each with a new id from
 * `newId` and its order line's id, priced as any invoice is, except: a line's last quantity is
 * fixed at the rest of the order line's money, and a part that its own rounding would take
 * beyond that rest (tiny amounts: 4 x 0.5 of 2 x 0.0001) at the rest. `fixedDiscount` (for
 * `deriveInvoice`) is the rest of the order's discount when the invoice takes every last
 * quantity, or that rest when the invoice's own discount would go beyond it. So no invoice
 * takes more of a line or of the discount than the order has left, and none goes negative.
 */
export function invoiceLinesOf(
  header: DocumentItem,
  lines: readonly SalesLine[],
  quantities: ReadonlyMap<string, number>,
  newId: () => string,
): { lines: SalesLine[]; fixedDiscount?: string } {
  const order = priceSalesLines(lines, header.discountPercent, header.shippingFee).money;
  const known = lines.every((line) => invoicedMoney(line, lines) !== undefined);
  const invoiceLines: SalesLine[] = lines
    .filter((line) => quantities.has(line.id))
    .map((line) => {
      const { invoiced: _invoiced, fixed: _fixed, ...rest } = line;
      const quantity = quantities.get(line.id)!;
      const held = invoicedMoney(line, lines);
      const invoiceLine: SalesLine = { ...rest, id: newId(), quantity, quantityInvoiced: 0, quantityPacked: 0, quantityShipped: 0, salesOrderLineId: line.id };
      if (!held) return invoiceLine;
      const left = plusMoney(order.get(line.id)!, held, -1);
      if (addQuantities(line.quantityInvoiced, quantity) >= line.quantity) return { ...invoiceLine, fixed: left };
      const own = ownMoney(line, quantity, header.discountPercent);
      const capped = { subtotal: nearerZero(own.subtotal, left.subtotal), tax: nearerZero(own.tax, left.tax), tax2: nearerZero(own.tax2, left.tax2) };
      return capped.subtotal === own.subtotal && capped.tax === own.tax && capped.tax2 === own.tax2 ? invoiceLine : { ...invoiceLine, fixed: capped };
    });
  const discountLine = lines.find((line) => line.lineType === "discount");
  if (!discountLine || !known) return { lines: invoiceLines };
  const discountLeft = plusMoney(order.get(discountLine.id)!, invoicedMoney(discountLine, lines)!, -1).subtotal;
  const closes = lines.every((line) => line.lineType === "discount" || addQuantities(line.quantityInvoiced, quantities.get(line.id) ?? 0) >= line.quantity);
  if (closes) return { lines: invoiceLines, fixedDiscount: discountLeft };
  const ownDiscount = priceSalesLines(invoiceLines, header.discountPercent, "0").totals.discountTotal;
  return nearerZero(ownDiscount, discountLeft) === ownDiscount ? { lines: invoiceLines } : { lines: invoiceLines, fixedDiscount: discountLeft };
}

/** An invoice as it moves its order's lines: its priced lines, their money (by line id) and its discount (negative). */
export interface InvoiceOfOrder {
  lines: readonly SalesLine[];
  money: ReadonlyMap<string, LineMoney>;
  discountTotal: string;
}

/**
 * The order's lines after an invoice joins (`sign` 1) or leaves them (-1, a cancel): each order
 * line's invoiced quantity and money move by the invoice's lines of it, the discount line's
 * money by the invoice's discount; money unknown before stays unknown.
 */
export function withInvoiceOf(lines: readonly SalesLine[], invoice: InvoiceOfOrder, sign: 1 | -1): SalesLine[] {
  const moved = new Map<string, { quantity: number; money: LineMoney }>();
  for (const line of invoice.lines) {
    if (!line.salesOrderLineId) continue;
    const sofar = moved.get(line.salesOrderLineId) ?? { quantity: 0, money: ZERO_MONEY };
    const lineMoney = invoice.money.get(line.id) ?? ZERO_MONEY;
    moved.set(line.salesOrderLineId, { quantity: addQuantities(sofar.quantity, line.quantity), money: plusMoney(sofar.money, lineMoney, 1) });
  }
  return lines.map((line) => {
    const held = invoicedMoney(line, lines);
    if (line.lineType === "discount") {
      return held ? { ...line, invoiced: plusMoney(held, { ...ZERO_MONEY, subtotal: invoice.discountTotal }, sign) } : line;
    }
    const move = moved.get(line.id);
    if (!move) return line;
    const next: SalesLine = { ...line, quantityInvoiced: Math.max(0, addQuantities(line.quantityInvoiced, sign * move.quantity)) };
    if (held) next.invoiced = plusMoney(held, move.money, sign);
    return next;
  });
}
