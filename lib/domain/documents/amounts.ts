/** What a document has been paid and still owes, from its header: pure. */
import { Decimal } from "../../core/decimal.js";
import { errors } from "../../core/errors.js";
import type { DocumentItem, DocumentPaymentItem } from "../../db/service.js";
import { MINOR_UNITS_PER_UNIT, minorOf, money, moneyFromMinor } from "../common/money.js";

/** `amount_due` of a header: total - amount paid. */
export const amountDue = (header: Pick<DocumentItem, "total" | "amountPaidMinor">): string =>
  money(new Decimal(header.total).minus(new Decimal(header.amountPaidMinor).div(MINOR_UNITS_PER_UNIT)));

export const amountPaid = (header: Pick<DocumentItem, "amountPaidMinor">): string => moneyFromMinor(header.amountPaidMinor);

/**
 * Whether a document is fully paid: nothing is due, and something was paid; a total of 0 is
 * settled by a payment of 0 (an invoice takes one), not by being created.
 */
export const isFullyPaid = (header: Pick<DocumentItem, "total" | "amountPaidMinor" | "paymentCount">): boolean =>
  header.amountPaidMinor >= minorOf(header.total) && (header.amountPaidMinor > 0 || header.paymentCount > 0);

/** The header after its amount paid moved to `paidMinor`: `date_fully_paid` set when fully paid (`isFullyPaid`), cleared otherwise. */
export function withAmountPaid(header: DocumentItem, paidMinor: number, paymentDate: string): DocumentItem {
  const next = { ...header, amountPaidMinor: paidMinor };
  if (isFullyPaid(next)) next.dateFullyPaid = header.dateFullyPaid ?? paymentDate;
  else delete next.dateFullyPaid;
  return next;
}

/**
 * Whether deleting a payment of `amountMinor` leaves nothing due on a document that still owes
 * something (only a refund's deletion can): its `date_fully_paid` then comes from the payments
 * that remain (`latestPaymentDate`), not from the deleted refund.
 */
export const deletionCompletesPayment = (header: Pick<DocumentItem, "total" | "amountPaidMinor">, amountMinor: number): boolean =>
  header.amountPaidMinor < minorOf(header.total) && header.amountPaidMinor - amountMinor === minorOf(header.total);

/** The latest payment date among payments (YYYY-MM-DD compares as text); undefined when none has one. */
export function latestPaymentDate(payments: readonly Pick<DocumentPaymentItem, "paymentDate">[]): string | undefined {
  let latest: string | undefined;
  for (const { paymentDate } of payments) if (paymentDate && (latest === undefined || paymentDate > latest)) latest = paymentDate;
  return latest;
}

/**
 * A document update's new total against what is already paid (purchase orders take payments
 * while still editable): a total below the amount paid is 422 `exceeds_amount_due` on `param`
 * (refund first); otherwise the header with `date_fully_paid` following its new amount due.
 */
export function withTotalCoveringPaid(header: DocumentItem, param: string, today: string): DocumentItem {
  if (new Decimal(amountDue(header)).lt(0)) {
    throw errors.validationFailed([
      {
        param,
        code: "exceeds_amount_due",
        message: `would make the total ${header.total}, below the amount paid (${amountPaid(header)}): refund the difference first.`,
      },
    ]);
  }
  return header.amountPaidMinor === 0 ? header : withAmountPaid(header, header.amountPaidMinor, today);
}

/** A header's money as the API shows it (`shipping_cost` is added after it, with `costs.view`). */
export const headerMoney = (header: DocumentItem) => ({
  subtotal: header.subtotal,
  shipping_fee: header.shippingFee,
  tax: header.tax,
  tax_2: header.tax2,
  total: header.total,
  amount_paid: amountPaid(header),
  amount_due: amountDue(header),
});
