import { DOCUMENT_STATUS } from "../statuses.js";
import type { StockChange } from "../../inventory/stock-changes.js";
import { orNull, presentDiscountAndTaxLabels, presentEditable, presentIdentity, presentStatus } from "../rules.js";
import { headerMoney, isFullyPaid } from "../amounts.js";
import { hasPermission, mayAct, type Principal } from "../../../auth/permissions.js";
import { errors } from "../../../core/errors.js";
import type { DocumentItem, DocumentPaymentItem } from "../../../db/service.js";
import { presentCustomFieldValues } from "../../common/custom-field-values.js";
import { customerPartyOf } from "../party-details.js";
import { deriveSalesHeader } from "../sales/header.js";
import { priceSalesLines, salesResult, type SalesContext, type SalesKind, type SalesLine, type SalesResult, type SalesTree } from "../sales/model.js";
import { presentSalesLine, sourceEstimateOf } from "../sales/presentation.js";
import { isPackable, lineChanges, progressOf, remainingToPack, withPercents } from "../sales/progress.js";
import type { LineMoney } from "../totals.js";

/**
 * Invoices without storage: spec part 2, sections 2.5, 3.5 and 4.5; architecture sections 4 and 8.
 *
 * Statuses: 9 Sent (unpaid) -> 10 Partially Paid -> 11 Paid, following the amount paid (and back
 * when payments are refunded or deleted); 12 Cancelled (cancel: unpaid invoices without payment
 * records). Only unpaid (9) standalone invoices can be updated.
 * Stock: an invoice takes its inventory lines' quantities from on hand at each line's row when
 * created (a unique item becomes sold), through the ledger in the invoice's own write; an update
 * moves the difference, cancel and delete give it back. An invoice created from a sales order
 * takes the quantities out of the order's reservation too.
 * Fulfilment: a standalone invoice is packed and shipped itself; an invoice created from a sales
 * order shows its order's progress (`fulfillment_authority: "sales_order"`).
 * Reads and writes are in `service.ts`, payments and packing in `fulfillment.ts`.
 */

export const INVOICE_STATUS = DOCUMENT_STATUS.invoice;
export type InvoiceStatus = keyof typeof INVOICE_STATUS;

export type InvoiceResult = SalesResult;

/** Whether the invoice was created from a sales order (its fulfilment and changes go through the order). */
export const isLinked = (header: DocumentItem): boolean => Boolean(header.sourceSalesOrderId);

// ---------------------------------------------------------------------------------------------
// Presentation

function editBlockReason(principal: Principal, header: DocumentItem) {
  if (!mayAct(principal, "invoices.modify", "invoices:write")) return "permission_denied" as const;
  if (isLinked(header)) return "invoice_sales_order_linked" as const;
  if (header.status !== "sent") return "invoice_not_unpaid" as const;
  return null;
}

function packBlockReason(principal: Principal, header: DocumentItem, lines: readonly SalesLine[]) {
  // Spec part 2, section 2.5: linked invoices return packing_managed_by_sales_order, whoever asks.
  if (isLinked(header)) return "packing_managed_by_sales_order" as const;
  if (!mayAct(principal, "invoices.modify", "invoices:pack")) return "permission_denied" as const;
  if (header.packingListsEnabled === false) return "packing_lists_disabled" as const;
  if (header.status === "cancelled") return "invoice_cancelled" as const;
  if (!lines.some((line) => remainingToPack(line, header.packingServiceItems ?? false) > 0)) return "nothing_remaining_to_pack" as const;
  return null;
}

/** `shipped_percent` of an invoice: a whole number (rounded down), or null when nothing is packable. */
const wholePercent = (value: number | undefined): number | null => (value === undefined ? null : Math.floor(value));

function presentLine(principal: Principal, header: DocumentItem, line: SalesLine) {
  let packed = line.quantityPacked;
  let shipped = line.quantityShipped;
  if (isLinked(header)) {
    // Linked invoices: progress comes from the sales order, never allocated partially.
    const counts = line.lineType !== "discount" && isPackable(line, header.packingServiceItems ?? false);
    packed = counts && header.packedPercent === 100 ? line.quantity : 0;
    shipped = counts && header.shippedPercent === 100 ? line.quantity : 0;
  }
  return presentSalesLine(principal, line, "invoice_line", { quantity_packed: packed, quantity_shipped: shipped });
}

/** The invoice as the API shows it: list entries without the detail-only fields, details with lines. */
export function presentInvoice(principal: Principal, header: DocumentItem, lines?: readonly SalesLine[]): Record<string, unknown> {
  const status = INVOICE_STATUS[header.status as InvoiceStatus];
  const out: Record<string, unknown> = {
    ...presentIdentity(header, "invoice"),
    custom_invoice_number: orNull(header.customNumber),
    name: orNull(header.name),
    customer_id: header.partyId,
    customer_name: header.partyName ?? "",
    salesperson_id: header.assignedUserId,
    ...presentStatus(status),
    issue_date: orNull(header.issueDate),
    expiry_date: orNull(header.expiryDate),
    date_sent: orNull(header.dateSent),
    date_fully_paid: orNull(header.dateFullyPaid),
    purchase_order_number: header.purchaseOrderNumber ?? "",
    attention: orNull(header.attention),
    shipping_address: orNull(header.shippingAddress),
    public_note: orNull(header.publicNote),
    payment_terms: orNull(header.paymentTerms),
    ...headerMoney(header),
  };
  if (hasPermission(principal, "costs.view")) out.shipping_cost = header.shippingCost;
  if (lines) {
    const edit = editBlockReason(principal, header);
    Object.assign(out, {
      party: customerPartyOf(header),
      ...presentDiscountAndTaxLabels(header),
      ...presentEditable(edit),
      revision: header.revision,
    });
  }
  out.custom_field_values = presentCustomFieldValues(header.customFieldValues);
  out.source_estimate = sourceEstimateOf(header);
  if (lines) {
    const linked = isLinked(header);
    Object.assign(out, {
      source_sales_order: linked
        ? {
            id: header.sourceSalesOrderId,
            sales_order_number: header.sourceSalesOrderNumber ?? 0,
            packed_percent: orNull(header.packedPercent),
            shipped_percent: orNull(header.shippedPercent),
          }
        : null,
      fulfillment_authority: linked ? "sales_order" : "invoice",
      fulfillment_sales_order_id: linked ? header.sourceSalesOrderId : null,
      packed_percent: header.packedPercent ?? 0,
    });
  }
  out.shipped_percent = wholePercent(header.shippedPercent);
  if (lines) {
    const pack = packBlockReason(principal, header, lines);
    Object.assign(out, { can_pack: pack === null, pack_block_reason: pack });
  }
  out.created_at = header.createdAt;
  out.updated_at = header.updatedAt;
  if (lines) out.lines = lines.map((line) => presentLine(principal, header, line));
  return out;
}

export const invoiceResult = (principal: Principal, header: DocumentItem, lines: readonly SalesLine[]): InvoiceResult =>
  salesResult(presentInvoice(principal, header, lines), header.revision);

/** Invoices for the shared sales operations (`lib/domain/documents/sales/service.ts`). */
export const INVOICE_KIND: SalesKind<"invoice"> = {
  kind: "invoice",
  what: "invoice",
  label: "Invoice",
  revisionPrefix: "inv",
  listPermission: "invoices.list",
  modifyPermission: "invoices.modify",
  listBlockReasons: false,
  relatedOnRead: true,
  present: presentInvoice,
};

/** A payment or refund of an invoice as the API shows it: only the fields spec part 2 section 2.5 lists. */
export function presentPayment(payment: DocumentPaymentItem) {
  const card =
    payment.cardBrand !== undefined || payment.cardLast4 !== undefined ? { brand: orNull(payment.cardBrand), last4: orNull(payment.cardLast4) } : null;
  return {
    id: payment.paymentId,
    invoice_id: payment.documentId,
    amount: payment.amount,
    type: payment.amountMinor < 0 ? "refund" : "payment",
    reference: orNull(payment.reference),
    payment_date: orNull(payment.paymentDate),
    card,
  };
}

// ---------------------------------------------------------------------------------------------
// Rules

/** Request field -> header attribute of creates and updates. */
export const INVOICE_HEADER_MAP: readonly [string, keyof DocumentItem][] = [
  ["name", "name"],
  ["issue_date", "issueDate"],
  ["expiry_date", "expiryDate"],
  ["custom_invoice_number", "customNumber"],
  ["purchase_order_number", "purchaseOrderNumber"],
  ["attention", "attention"],
  ["shipping_address", "shippingAddress"],
  ["public_note", "publicNote"],
  ["payment_terms", "paymentTerms"],
];

/** The status that follows the amount paid (architecture section 8): 9 -> 10 -> 11 and back. */
export function paymentStatus(header: Pick<DocumentItem, "status" | "amountPaidMinor" | "total" | "paymentCount">): {
  status: InvoiceStatus;
  statusId: number;
} {
  if (header.status === "cancelled") return { status: "cancelled", statusId: INVOICE_STATUS.cancelled.id };
  const status: InvoiceStatus = isFullyPaid(header) ? "paid" : header.amountPaidMinor > 0 ? "partially_paid" : "sent";
  return { status, statusId: INVOICE_STATUS[status].id };
}

/** Totals, percentages and snapshots of an invoice's header, and its lines' money (`fixedDiscount`: see `priceSalesLines`). */
export function deriveInvoice(
  header: DocumentItem,
  context: Pick<SalesContext, "account" | "customer">,
  lines: readonly SalesLine[],
  fixedDiscount?: string,
): { header: DocumentItem; lines: SalesLine[]; money: Map<string, LineMoney> } {
  const priced = priceSalesLines(lines, header.discountPercent, header.shippingFee, fixedDiscount);
  let next: DocumentItem = { ...header, ...priced.totals };
  if (!isLinked(next)) {
    const { packedPercent, shippedPercent } = progressOf(priced.lines, context.account.packingServiceItems);
    next = withPercents(next, { packedPercent, shippedPercent });
  }
  // Totals follow the lines; the status follows what is paid. A total of 0 is settled by a
  // payment of 0, never by an edit (which would leave date_fully_paid unset): the payments
  // an edited invoice already has (a payment of 0, a payment and its refund) do not settle it.
  next = { ...next, ...paymentStatus({ ...next, paymentCount: 0 }) };
  next = deriveSalesHeader(next, context, priced.lines, [next.customNumber, next.name]);
  return { header: next, lines: priced.lines, money: priced.money };
}

/** The stock an invoice's lines take (`sign` -1 gives it back): on hand, and for linked invoices the order's reservation too. */
export function invoiceStock(header: DocumentItem, lines: readonly SalesLine[], sign: 1 | -1): StockChange[] {
  return lineChanges(lines, isLinked(header) ? "sell_reserved" : "sell", (line) => sign * line.quantity).changes;
}

/** 409 `invoice_update_not_allowed` unless the invoice is unpaid and standalone. */
export function assertUpdatable(header: DocumentItem): void {
  if (isLinked(header)) {
    throw errors.stateConflict("invoice_update_not_allowed", "This invoice was created from a sales order; it is changed through its sales order.");
  }
  if (header.status !== "sent") {
    throw errors.stateConflict(
      "invoice_update_not_allowed",
      `Only unpaid invoices can be updated; this one is ${INVOICE_STATUS[header.status as InvoiceStatus].label}.`,
    );
  }
}

/** 422 `packed_line_removed` when an update's lines drop a stored line that has packed quantities. */
export function assertPackedLinesKept(stored: readonly SalesLine[], kept: readonly (SalesLine | undefined)[]): void {
  const keptIds = new Set(kept.flatMap((line) => (line ? [line.id] : [])));
  const dropped = stored.find((line) => line.quantityPacked > 0 && !keptIds.has(line.id));
  if (dropped) {
    throw errors.validationFailed([
      { param: "lines", code: "packed_line_removed", message: `the line ${dropped.id} has packed quantities and cannot be removed.` },
    ]);
  }
}

/** 409 `invoice_cancel_not_allowed` for cancelled invoices and invoices with payments or refunds. */
export function assertCancellable(header: DocumentItem): void {
  if (header.status === "cancelled") throw errors.stateConflict("invoice_cancel_not_allowed", "This invoice is already cancelled.");
  if (header.paymentCount > 0 || header.amountPaidMinor !== 0) {
    throw errors.stateConflict("invoice_cancel_not_allowed", "An invoice with payments or refunds cannot be cancelled; delete them first.");
  }
}

/**
 * 409 `invoice_delete_not_allowed` unless the invoice is standalone, unpaid (or cancelled),
 * without payment records or packing lists. A cancelled invoice of a sales order deleted since
 * (`orderGone`: a cancelled invoice reopens its order, which may then be deleted) is deletable
 * too: it would otherwise stay for ever.
 */
export function assertDeletable(tree: SalesTree, orderGone = false): void {
  const header = tree.header;
  if (isLinked(header) && !(header.status === "cancelled" && orderGone)) {
    throw errors.stateConflict(
      "invoice_delete_not_allowed",
      header.status === "cancelled"
        ? "A cancelled invoice of a sales order can be deleted only once its sales order is deleted."
        : "An invoice created from a sales order cannot be deleted; cancel it instead.",
    );
  }
  if (header.status !== "sent" && header.status !== "cancelled") {
    throw errors.stateConflict(
      "invoice_delete_not_allowed",
      `Only unpaid invoices can be deleted; this one is ${INVOICE_STATUS[header.status as InvoiceStatus].label}.`,
    );
  }
  if (header.paymentCount > 0)
    throw errors.stateConflict("invoice_delete_not_allowed", "An invoice with payment records cannot be deleted; delete them first.");
  if (tree.lines.some((line) => line.quantityPacked > 0))
    throw errors.stateConflict("invoice_delete_not_allowed", "An invoice with packing lists cannot be deleted; cancel it instead.");
}

/** 409 `invoice_fulfillment_managed_by_sales_order`: a linked invoice is packed and shipped through its order. */
export const managedBySalesOrder = (header: DocumentItem) =>
  errors.stateConflict(
    "invoice_fulfillment_managed_by_sales_order",
    `This invoice was created from a sales order: pack and ship it through sales order ${header.sourceSalesOrderId} (fulfillment_sales_order_id) while that order is open (a fully invoiced order is closed and packs no more).`,
  );
