import { randomUUID } from "node:crypto";
import { Decimal } from "../../core/decimal.js";
import type { StoredLine } from "../../db/document-lines.js";
import { errors } from "../../core/errors.js";
import { money } from "../common/money.js";

/**
 * Line amounts and document totals (architecture section 4, "Money"): decimal arithmetic only,
 * every line amount rounded half away from zero to four decimals.
 * - line subtotal = quantity x unit price x (1 - line discount %);
 * - an order-wide `discount_percent` d adds ONE generated discount line of
 *   -(pre-discount subtotal x d %) and scales every line's taxable base by (1 - d %);
 * - line tax = taxable base x rate (each of the two taxes);
 * - total = subtotal (after the discount) + shipping fee + tax + tax 2.
 * Unit prices are the documents' selling prices, or unit costs on purchase orders.
 */
export interface PricingInput {
  quantity: number;
  /** Four-decimal string. */
  unitPrice: string;
  /** Percentages as decimal strings (three decimals once stored). */
  discountPercent: string;
  taxRate: string;
  tax2Rate: string;
  /** Amounts decided elsewhere, taken as they are (the last part of a sales order's line: `lib/domain/documents/sales-orders/model.ts`). */
  fixed?: LineMoney;
}

/** A line's money: its subtotal and its two taxes (four-decimal strings). */
export interface LineMoney {
  subtotal: string;
  tax: string;
  tax2: string;
}

export interface LineAmounts {
  subtotal: string;
  tax: string;
  tax2: string;
  /** subtotal + tax + tax 2 of the line. */
  total: string;
  /** The unit price after the line's and the order's discounts, or null when neither applies. */
  discountedUnitPrice: string | null;
}

export interface DocumentTotals {
  lines: LineAmounts[];
  /** The generated discount line's amount (negative), or null without an order discount. */
  discount: string | null;
  preDiscountTotal: string;
  discountTotal: string;
  subtotal: string;
  tax: string;
  tax2: string;
  shippingFee: string;
  total: string;
}

const HUNDRED = new Decimal(100);
const round = (value: Decimal) => value.toDecimalPlaces(4, Decimal.ROUND_HALF_UP);

/**
 * The largest total of a document that moves money (purchase orders, sales orders, invoices):
 * their amounts paid and a customer's revenue are kept as exact integers of ten-thousandths,
 * which JavaScript holds exactly only up to 2^53. Estimates move none and are not bounded (one
 * above it cannot be converted).
 */
export const MAX_DOCUMENT_TOTAL = "900000000000.0000";

/**
 * 422 `too_large` when a document's total passes `MAX_DOCUMENT_TOTAL` (nothing is written): on
 * `shipping_fee` when the lines alone are within it and the fee takes the total past it, else on
 * `lines`.
 */
export function assertTotalInRange(totals: Pick<DocumentTotals, "total" | "shippingFee">): void {
  const total = new Decimal(totals.total);
  if (total.abs().lte(MAX_DOCUMENT_TOTAL)) return;
  const byFee = new Decimal(totals.shippingFee).gt(0) && total.minus(totals.shippingFee).abs().lte(MAX_DOCUMENT_TOTAL);
  throw errors.validationFailed([
    byFee
      ? {
          param: "shipping_fee",
          code: "too_large",
          message: `takes the total to ${totals.total}; this document's total (lines, taxes and shipping) is at most ${MAX_DOCUMENT_TOTAL}.`,
        }
      : { param: "lines", code: "too_large", message: `make a total of ${totals.total}; this document's total is at most ${MAX_DOCUMENT_TOTAL}.` },
  ]);
}

/**
 * Prices `lines`: each line's amounts (its `fixed` ones as they are), the discount line
 * (`fixedDiscount` as it is, when the document has an order discount) and the totals.
 */
export function computeTotals(lines: readonly PricingInput[], discountPercent: string, shippingFee: string, fixedDiscount?: string): DocumentTotals {
  const orderFactor = new Decimal(1).minus(new Decimal(discountPercent).div(HUNDRED));
  const hasOrderDiscount = !new Decimal(discountPercent).isZero();
  let preDiscount = new Decimal(0);
  let tax = new Decimal(0);
  let tax2 = new Decimal(0);
  const amounts = lines.map((line) => {
    const lineFactor = new Decimal(1).minus(new Decimal(line.discountPercent).div(HUNDRED));
    const subtotal = line.fixed ? new Decimal(line.fixed.subtotal) : round(new Decimal(line.quantity).times(line.unitPrice).times(lineFactor));
    const taxable = subtotal.times(orderFactor);
    const lineTax = line.fixed ? new Decimal(line.fixed.tax) : round(taxable.times(line.taxRate).div(HUNDRED));
    const lineTax2 = line.fixed ? new Decimal(line.fixed.tax2) : round(taxable.times(line.tax2Rate).div(HUNDRED));
    preDiscount = preDiscount.plus(subtotal);
    tax = tax.plus(lineTax);
    tax2 = tax2.plus(lineTax2);
    const discounted = lineFactor.eq(1) && !hasOrderDiscount ? null : money(new Decimal(line.unitPrice).times(lineFactor).times(orderFactor));
    return {
      subtotal: money(subtotal),
      tax: money(lineTax),
      tax2: money(lineTax2),
      total: money(subtotal.plus(lineTax).plus(lineTax2)),
      discountedUnitPrice: discounted,
    };
  });
  const discount = !hasOrderDiscount
    ? new Decimal(0)
    : fixedDiscount !== undefined
      ? new Decimal(fixedDiscount)
      : round(preDiscount.times(discountPercent).div(HUNDRED)).negated();
  const subtotal = preDiscount.plus(discount);
  return {
    lines: amounts,
    discount: hasOrderDiscount ? money(discount) : null,
    preDiscountTotal: money(preDiscount),
    discountTotal: money(discount),
    subtotal: money(subtotal),
    tax: money(tax),
    tax2: money(tax2),
    shippingFee: money(shippingFee),
    total: money(subtotal.plus(shippingFee).plus(tax).plus(tax2)),
  };
}

/**
 * The fields every stored line of a priced party document has (estimates, purchase orders, sales
 * orders and invoices; each kind adds its price or cost and its amounts): the item snapshot, the quantity and the rates.
 */
export interface PartyDocumentLine extends StoredLine {
  lineType: "inventory" | "service" | "discount";
  itemId?: string;
  variationId?: string;
  /** The stock row the line takes from or gives to (set once the row exists). */
  ivlId?: number;
  name: string;
  description?: string;
  quantity: number;
  discountPercent: string;
  taxRate: string;
  tax2Rate: string;
  unitId?: number;
  unitName?: string;
  sku?: string;
  variationValues: Record<string, string>;
  variationNumber?: number;
  /** Amounts priced elsewhere and kept as they are (see `PricingInput.fixed`). */
  fixed?: LineMoney;
}

/** A priced line's money fields as `computeTotals` takes them (`unitPrice` is the line's price or cost). */
type PricedLineInput = Pick<PartyDocumentLine, "quantity" | "discountPercent" | "taxRate" | "tax2Rate" | "fixed">;

/** Prices `items` (the non-discount lines) with the document's discount and shipping fee (`computeTotals`). */
export function totalsOfLines<L extends PricedLineInput>(
  items: readonly L[],
  unitPriceOf: (line: L) => string,
  discountPercent: string,
  shippingFee: string,
  fixedDiscount?: string,
): DocumentTotals {
  return computeTotals(
    items.map((line) => ({
      quantity: line.quantity,
      unitPrice: unitPriceOf(line),
      discountPercent: line.discountPercent,
      taxRate: line.taxRate,
      tax2Rate: line.tax2Rate,
      ...(line.fixed ? { fixed: line.fixed } : {}),
    })),
    discountPercent,
    shippingFee,
    fixedDiscount,
  );
}

/** The header's total fields of priced lines. */
export interface HeaderTotals {
  subtotal: string;
  preDiscountTotal: string;
  discountTotal: string;
  shippingFee: string;
  tax: string;
  tax2: string;
  total: string;
}

/** The totals a header stores (without the per-line amounts and the discount line's amount). */
export function headerTotalsOf(totals: DocumentTotals): HeaderTotals {
  return {
    subtotal: totals.subtotal,
    preDiscountTotal: totals.preDiscountTotal,
    discountTotal: totals.discountTotal,
    shippingFee: totals.shippingFee,
    tax: totals.tax,
    tax2: totals.tax2,
    total: totals.total,
  };
}

/** The generated discount line's first fields: its id (`keepId`, else the discount line among `lines`, else new), type, name and quantity. */
export const discountLineHead = (lines: readonly { id: string; lineType: string }[], keepId?: string) => ({
  id: keepId ?? lines.find((line) => line.lineType === "discount")?.id ?? randomUUID(),
  lineType: "discount" as const,
  name: "Discount",
  quantity: 1,
});

/** The generated discount line's rates and item fields (none: no line discount, no taxes, no variation). */
export const discountLineRates = () => ({ discountPercent: "0.000", taxRate: "0.000", tax2Rate: "0.000", variationValues: {} as Record<string, string> });
