import { DOCUMENT_STATUS } from "../statuses.js";
import type { StockChange } from "../../inventory/stock-changes.js";
import { headerMoney } from "../amounts.js";
import { orNull, presentDiscountAndTaxLabels, presentEditable, presentIdentity, presentStatus } from "../rules.js";
import { mayAct, type Principal } from "../../../auth/permissions.js";
import type { AccountItem, DocumentItem, DocumentPaymentItem, LocationItem, PartyItem } from "../../../db/service.js";
import type { PurchaseOrderCreateBody, PurchaseOrderUpdateBody } from "../../../schemas/purchase-orders.js";
import { presentCustomFieldValues } from "../../common/custom-field-values.js";
import { money, rate } from "../../common/money.js";
import { etagOf } from "../../common/revisions.js";
import type { RowIdOf } from "../../inventory/stock-holds.js";
import { partyDetailsOf, partyOf, storedPartyName } from "../party-details.js";
import { setListFields } from "../stock/model.js";
import {
  assertTotalInRange,
  discountLineHead,
  discountLineRates,
  headerTotalsOf,
  totalsOfLines,
  type HeaderTotals,
  type PartyDocumentLine,
} from "../totals.js";

/**
 * The purchase order without storage (spec part 2, sections 2.1 and 3.1; architecture section 4
 * for status ids and money): statuses, line pricing, header fields and derivations, the stock
 * each step moves, presentation.
 *
 * Statuses: 21 Not Sent -> (send) 22 Sent -> (receive) 23 Partially Received -> 24 Received.
 */

export const PO_STATUS = DOCUMENT_STATUS.purchase_order;
export type PoStatus = keyof typeof PO_STATUS;

/** A stored purchase-order line (`lib/db/documents.ts` packs them into pages). */
export interface PoLine extends PartyDocumentLine {
  quantityReceived: number;
  unitCost: string;
  discountedUnitCost: string | null;
  subtotal: string;
}

export interface PurchaseOrderResult {
  body: Record<string, unknown>;
  etag: string;
}

/** What a write names, read and checked: the account's settings, the supplier and the receiving location. */
export interface WriteContext {
  principal: Principal;
  account: AccountItem;
  supplier: PartyItem;
  location: LocationItem;
}

// ---------------------------------------------------------------------------------------------
// Presentation

function presentLine(line: PoLine, position: number, locationName: string | undefined) {
  return {
    id: line.id,
    object: "purchase_order_line",
    item_id: orNull(line.itemId),
    item_variation_location_id: orNull(line.ivlId),
    line_type: line.lineType,
    position,
    unit_name: line.lineType === "discount" ? "discount" : orNull(line.unitName),
    sku: orNull(line.sku),
    location_name: line.lineType === "inventory" ? orNull(locationName) : null,
    name: line.name,
    description: orNull(line.description),
    variation_values: line.variationValues ?? {},
    variation_number: orNull(line.variationNumber),
    thumbnail_url: null,
    quantity: line.quantity,
    quantity_received: line.quantityReceived,
    unit_id: orNull(line.unitId),
    unit_cost: line.unitCost,
    discount_percent: line.discountPercent,
    tax_rate: line.taxRate,
    tax_2_rate: line.tax2Rate,
    discounted_unit_cost: line.discountedUnitCost,
    subtotal: line.subtotal,
  };
}

export function editBlockReason(principal: Principal, header: DocumentItem): "permission_denied" | "purchase_order_not_not_sent" | null {
  if (!mayAct(principal, "purchase_orders.modify", "purchase_orders:write")) return "permission_denied";
  if (header.status !== "not_sent") return "purchase_order_not_not_sent";
  return null;
}

/** The order as the API shows it: list entries without the detail-only fields, details with lines. */
export function presentPurchaseOrder(principal: Principal, header: DocumentItem, lines?: readonly PoLine[]): Record<string, unknown> {
  const status = PO_STATUS[header.status as PoStatus];
  const out: Record<string, unknown> = {
    ...presentIdentity(header, "purchase_order"),
    custom_purchase_order_number: orNull(header.customNumber),
    name: orNull(header.name),
    supplier_id: header.partyId,
    supplier_name: header.partyName ?? "",
    assigned_user_id: header.assignedUserId,
    location_id: orNull(header.locationId),
    ...presentStatus(status),
    issue_date: orNull(header.issueDate),
    date_sent: orNull(header.dateSent),
    date_received: orNull(header.dateReceived),
    date_requested: orNull(header.dateRequested),
    date_needed: orNull(header.dateNeeded),
    date_fully_paid: orNull(header.dateFullyPaid),
    requested_from: orNull(header.requestedFrom),
    attention: orNull(header.attention),
    shipping_address: orNull(header.shippingAddress),
    public_note: orNull(header.publicNote),
    payment_terms: orNull(header.paymentTerms),
    shipping_provider: orNull(header.shippingProvider),
    shipping_tracking_code: orNull(header.shippingTrackingCode),
  };
  if (lines) {
    const reason = editBlockReason(principal, header);
    Object.assign(out, {
      party: partyOf(header),
      discount_percent: header.discountPercent,
      ...presentDiscountAndTaxLabels(header),
      ...presentEditable(reason),
    });
  }
  Object.assign(out, {
    revision: header.revision,
    custom_field_values: presentCustomFieldValues(header.customFieldValues),
    ...headerMoney(header),
    created_at: header.createdAt,
    updated_at: header.updatedAt,
  });
  if (lines) out.lines = lines.map((line, position) => presentLine(line, position, header.locationName));
  return out;
}

/** The response of a read or a write: the order with its lines, and its ETag. */
export const purchaseOrderResult = (principal: Principal, header: DocumentItem, lines: readonly PoLine[]): PurchaseOrderResult => ({
  body: presentPurchaseOrder(principal, header, lines),
  etag: etagOf(header.revision),
});

export function presentPayment(payment: DocumentPaymentItem) {
  return {
    id: payment.paymentId,
    object: "payment",
    purchase_order_id: payment.documentId,
    amount: payment.amount,
    type: payment.amountMinor < 0 ? "refund" : "payment",
    reference: payment.reference ?? "",
    payment_date: orNull(payment.paymentDate),
    card: null,
  };
}

// ---------------------------------------------------------------------------------------------
// Pricing and header fields

/** Prices the lines and appends the generated discount line; returns the lines and the header totals. */
export function priceLines(lines: readonly PoLine[], discountPercent: string, shippingFee: string): { lines: PoLine[]; totals: HeaderTotals } {
  const items = lines.filter((line) => line.lineType !== "discount");
  const totals = totalsOfLines(items, (line) => line.unitCost, discountPercent, shippingFee);
  assertTotalInRange(totals);
  const priced: PoLine[] = items.map((line, i) => ({ ...line, subtotal: totals.lines[i]!.subtotal, discountedUnitCost: totals.lines[i]!.discountedUnitPrice }));
  if (totals.discount !== null) {
    priced.push({
      ...discountLineHead(lines),
      quantityReceived: 0,
      unitCost: totals.discount,
      ...discountLineRates(),
      discountedUnitCost: null,
      subtotal: totals.discount,
    });
  }
  return { lines: priced, totals: headerTotalsOf(totals) };
}

/** The header fields a create or an update sets from the request (null or "" clears a field). */
export function headerFields(input: PurchaseOrderCreateBody | PurchaseOrderUpdateBody): Partial<DocumentItem> & { cleared: (keyof DocumentItem)[] } {
  const set: Record<string, unknown> = {};
  const cleared: (keyof DocumentItem)[] = [];
  const map: [keyof typeof input, keyof DocumentItem][] = [
    ["name", "name"],
    ["issue_date", "issueDate"],
    ["date_requested", "dateRequested"],
    ["date_needed", "dateNeeded"],
    ["requested_from", "requestedFrom"],
    ["attention", "attention"],
    ["shipping_address", "shippingAddress"],
    ["public_note", "publicNote"],
    ["payment_terms", "paymentTerms"],
    ["shipping_provider", "shippingProvider"],
    ["shipping_tracking_code", "shippingTrackingCode"],
    ["custom_purchase_order_number", "customNumber"],
  ];
  for (const [field, attribute] of map) {
    const value = input[field] as string | null | undefined;
    if (value === undefined) continue;
    if (value === null || value === "") cleared.push(attribute);
    else set[attribute] = value;
  }
  if (input.shipping_fee !== undefined) set.shippingFee = money(input.shipping_fee);
  if (input.discount_percent !== undefined) set.discountPercent = rate(input.discount_percent);
  return { ...(set as Partial<DocumentItem>), cleared };
}

/** The derived header fields: snapshots of the supplier, location and tax labels, totals, item ids. */
export function derive(header: DocumentItem, context: WriteContext, lines: readonly PoLine[]): DocumentItem {
  const next: DocumentItem = {
    ...header,
    partyId: context.supplier.partyId,
    partyName: storedPartyName(header, context.supplier),
    partyKind: "supplier",
    partyDetails: partyDetailsOf(context.supplier),
    locationId: context.location.locationId,
    locationName: context.location.name,
    taxLabel: context.account.taxLabel,
    tax2Label: context.account.tax2Label,
  };
  return setListFields(next, lines);
}

// ---------------------------------------------------------------------------------------------
// Stock

/** The incoming (or received) quantity of each inventory line at the order's location. */
export function stockChanges(header: DocumentItem, lines: readonly { line: PoLine; quantity: number }[], kind: "incoming" | "receive"): StockChange[] {
  return lines.filter(movesStock).map(({ line, quantity }) => ({
    itemId: line.itemId!,
    variationId: line.variationId!,
    locationId: header.locationId!,
    deltas: kind === "incoming" ? { incoming: quantity } : { onHand: quantity, incoming: -quantity },
    ...(kind === "receive" ? { unitCost: line.discountedUnitCost ?? line.unitCost } : {}),
  }));
}

/** Whether a line's quantity moves stock: an inventory line's, when there is any (`stockChanges` makes one change of each such line, in order). */
export const movesStock = ({ line, quantity }: { line: PoLine; quantity: number }): boolean => line.lineType === "inventory" && !!line.itemId && quantity > 0;

/** Lines with the ids of the stock rows the write created (rows appear with the first stock). */
export const withRowIds = (header: DocumentItem, lines: readonly PoLine[], rowIdOf: RowIdOf): PoLine[] =>
  lines.map((line) =>
    line.lineType === "inventory" && line.ivlId === undefined && line.itemId
      ? { ...line, ivlId: rowIdOf(line.itemId, line.variationId!, header.locationId!) }
      : line,
  );

/** Whether every inventory line is fully received (the order is then Received). */
export const fullyReceived = (lines: readonly PoLine[]): boolean =>
  lines.every((line) => line.lineType !== "inventory" || line.quantityReceived >= line.quantity);
