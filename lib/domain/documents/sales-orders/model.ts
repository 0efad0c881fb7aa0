import { DOCUMENT_STATUS } from "../statuses.js";
import { laterUpdatedAt } from "../../../core/clock.js";
import { amountPaid, headerMoney } from "../amounts.js";
import { orNull, presentDiscountAndTaxLabels, presentEditable, presentIdentity, presentStatus } from "../rules.js";
import { Decimal } from "../../../core/decimal.js";
import { hasPermission, mayAct, type Principal } from "../../../auth/permissions.js";
import { errors, type ValidationDetail } from "../../../core/errors.js";
import type { DocumentItem } from "../../../db/service.js";
import { presentCustomFieldValues } from "../../common/custom-field-values.js";
import { mayReachLocation } from "../../common/location-access.js";
import { newRevision } from "../../common/revisions.js";
import { addQuantities } from "../../inventory/math.js";
import { customerPartyOf } from "../party-details.js";
import { deriveSalesHeader } from "../sales/header.js";
import { priceSalesLines, salesResult, type SalesContext, type SalesKind, type SalesLine, type SalesResult, type SalesTree } from "../sales/model.js";
import { presentSalesLine, sourceEstimateOf } from "../sales/presentation.js";
import { withInvoiceOf, type InvoiceOfOrder } from "./invoiced-money.js";
import { lineChanges, listBlockFacts, percentOf, progressOf, remainingToPack, withPackingFacts, withPercents } from "../sales/progress.js";

/**
 * Sales orders without storage: spec part 2, sections 2.4, 3.4 and 4.4; architecture sections 4
 * (status ids, money, revisions) and 8 (update, delete, invoicing, packing, shipping, stock effects).
 *
 * Statuses: 29 Open -> 30 Closed once every line is fully invoiced (31 Cancelled exists; no
 * operation leads to it yet). An open order reserves each inventory line's uninvoiced quantity
 * at the line's stock row (`quantity_reserved` of the item), through the ledger in the order's
 * own write; invoicing moves the invoiced quantity from reserved to sold.
 * Update and delete: only open orders with no activity (nothing invoiced, packed or shipped),
 * else 409 `sales_order_update_not_allowed`. Visibility: `records.view_all`, else the orders
 * whose salesperson (assigned user) is the caller; location restrictions govern the order's
 * location on writes and packing (`location_restricted`).
 * Reads and writes are in `service.ts`, invoicing in `invoicing.ts`, the money of partial invoices in `invoiced-money.ts`.
 */

export const SO_STATUS = DOCUMENT_STATUS.sales_order;
export type SoStatus = keyof typeof SO_STATUS;

/** Invoices one order can have (each pack and ship refreshes them all in its own transaction). */
export const MAX_ORDER_INVOICES = 50;

export type SalesOrderResult = SalesResult;

// ---------------------------------------------------------------------------------------------
// Presentation

/** The order's invoices that are not cancelled. */
export const liveInvoiceIds = (order: DocumentItem): string[] => {
  const cancelled = new Set(order.cancelledInvoiceIds ?? []);
  return (order.linkedInvoiceIds ?? []).filter((id) => !cancelled.has(id));
};

/**
 * Whether anything happened to the order beyond its creation (invoices not cancelled, packing,
 * shipping): an order whose only invoices were cancelled is open and untouched again.
 */
export const activityStarted = (header: DocumentItem, lines: readonly SalesLine[]): boolean =>
  liveInvoiceIds(header).length > 0 || lines.some((line) => line.quantityInvoiced > 0 || line.quantityPacked > 0 || line.quantityShipped > 0);

/** What the block reasons of an order depend on beyond the caller and its status. */
interface BlockFacts {
  /** Anything happened beyond its creation (`activityStarted`). */
  started: boolean;
  /** The caller may reach every location it is left to pack at (`hasLocationAccess`). */
  reachable: boolean;
  /** No line is left to pack. */
  nothingToPack: boolean;
}

function editBlockReason(principal: Principal, header: DocumentItem, facts: BlockFacts) {
  if (!mayAct(principal, "sales_orders.modify", "sales_orders:write")) return "permission_denied" as const;
  if (header.status !== "open") return "sales_order_not_open" as const;
  if (facts.started) return "sales_order_activity_started" as const;
  return null;
}

/**
 * Whether a location-restricted caller may pack the order: its location, or (without one) every
 * line left to pack, is theirs. (The location rule already hides orders elsewhere; this keeps
 * the reason exact should a visible order ever hold such a line.)
 */
export function hasLocationAccess(principal: Principal, header: DocumentItem, lines: readonly SalesLine[], serviceItems: boolean): boolean {
  if (header.locationId) return mayReachLocation(principal, header.locationId);
  return lines.every((line) => remainingToPack(line, serviceItems) === 0 || !line.locationId || mayReachLocation(principal, line.locationId));
}

function packBlockReason(principal: Principal, header: DocumentItem, facts: BlockFacts) {
  if (!mayAct(principal, "sales_orders.modify", "sales_orders:pack")) return "permission_denied" as const;
  if (header.packingListsEnabled === false) return "packing_lists_disabled" as const;
  if (header.status !== "open") return "sales_order_not_open" as const;
  if (!facts.reachable) return "location_restricted" as const;
  if (facts.nothingToPack) return "nothing_remaining_to_pack" as const;
  return null;
}

/** A detail's block facts, from its lines. */
function detailBlockFacts(principal: Principal, header: DocumentItem, lines: readonly SalesLine[]): BlockFacts {
  const serviceItems = header.packingServiceItems ?? false;
  return {
    started: activityStarted(header, lines),
    reachable: hasLocationAccess(principal, header, lines, serviceItems),
    nothingToPack: !lines.some((line) => remainingToPack(line, serviceItems) > 0),
  };
}

/**
 * A list entry's block facts, from the header alone (its packing facts, kept with the lines; the
 * list reads the lines of an open order written before them). A header without them is not open
 * (its reasons need none of them), or was read without its lines: it answers from its
 * percentages.
 */
function listBlockFactsOf(principal: Principal, header: DocumentItem): BlockFacts {
  const invoiced = liveInvoiceIds(header).length > 0;
  const kept = listBlockFacts(header, header.packingServiceItems ?? false);
  if (!kept) {
    return {
      started: invoiced || (header.packedPercent ?? 0) > 0 || (header.shippedPercent ?? 0) > 0,
      reachable: !header.locationId || mayReachLocation(principal, header.locationId),
      nothingToPack: header.packedPercent === undefined || header.packedPercent >= 100,
    };
  }
  return {
    started: invoiced || kept.started,
    reachable: header.locationId ? mayReachLocation(principal, header.locationId) : kept.unpackedLocationIds.every((id) => mayReachLocation(principal, id)),
    nothingToPack: kept.nothingToPack,
  };
}

function presentLine(principal: Principal, line: SalesLine, position: number, serviceItems: boolean) {
  const quantities = {
    quantity_invoiced: line.quantityInvoiced,
    quantity_packed: line.quantityPacked,
    quantity_shipped: line.quantityShipped,
    quantity_remaining_to_pack: remainingToPack(line, serviceItems),
  };
  return presentSalesLine(principal, line, "sales_order_line", quantities, { position });
}

/** The order as the API shows it: list entries without the detail-only fields, details with lines. */
export function presentSalesOrder(principal: Principal, header: DocumentItem, lines?: readonly SalesLine[]): Record<string, unknown> {
  const status = SO_STATUS[header.status as SoStatus];
  const out: Record<string, unknown> = {
    ...presentIdentity(header, "sales_order"),
    name: orNull(header.name),
    customer_id: header.partyId,
    customer_name: orNull(header.partyName),
    salesperson_id: header.assignedUserId,
    location_id: orNull(header.locationId),
    ...presentStatus(status),
    issue_date: orNull(header.issueDate),
    expiry_date: orNull(header.expiryDate),
    purchase_order_number: orNull(header.purchaseOrderNumber),
    attention: orNull(header.attention),
    shipping_address: orNull(header.shippingAddress),
    public_note: orNull(header.publicNote),
    packing_list_note: orNull(header.packingListNote),
    payment_terms: orNull(header.paymentTerms),
    drop_shipped: header.dropShipped ?? false,
    drop_ship_customer_id: orNull(header.dropShipCustomerId),
    drop_ship_address: orNull(header.dropShipAddress),
    ...headerMoney(header),
  };
  if (hasPermission(principal, "costs.view")) out.shipping_cost = header.shippingCost;
  Object.assign(out, {
    invoiced_percent: orNull(header.invoicedPercent),
    paid_percent: percentOf(amountPaid(header), header.total),
    packed_percent: orNull(header.packedPercent),
    shipped_percent: orNull(header.shippedPercent),
    invoice_count: header.invoiceCount ?? 0,
    source_estimate: sourceEstimateOf(header),
  });
  const facts = lines ? detailBlockFacts(principal, header, lines) : listBlockFactsOf(principal, header);
  const edit = editBlockReason(principal, header, facts);
  const pack = packBlockReason(principal, header, facts);
  if (lines) {
    Object.assign(out, {
      party: customerPartyOf(header),
      discount_percent: header.discountPercent,
      ...presentDiscountAndTaxLabels(header),
      ...presentEditable(edit),
      can_pack: pack === null,
      pack_block_reason: pack,
    });
  } else {
    // The spec marks can_edit and can_pack detail only, not their reasons: a list entry says them.
    Object.assign(out, { edit_block_reason: edit, pack_block_reason: pack });
  }
  Object.assign(out, {
    revision: header.revision,
    custom_field_values: presentCustomFieldValues(header.customFieldValues),
    created_at: header.createdAt,
    updated_at: header.updatedAt,
  });
  if (lines) out.lines = lines.map((line, position) => presentLine(principal, line, position, header.packingServiceItems ?? false));
  return out;
}

export const salesOrderResult = (principal: Principal, header: DocumentItem, lines: readonly SalesLine[]): SalesOrderResult =>
  salesResult(presentSalesOrder(principal, header, lines), header.revision);

/** Sales orders for the shared sales operations (`lib/domain/documents/sales/service.ts`). */
export const SALES_ORDER_KIND: SalesKind<"sales_order"> = {
  kind: "sales_order",
  what: "sales order",
  label: "Sales order",
  revisionPrefix: "so",
  listPermission: "sales_orders.list",
  modifyPermission: "sales_orders.modify",
  listBlockReasons: true,
  relatedOnRead: false,
  present: presentSalesOrder,
};

// ---------------------------------------------------------------------------------------------
// Rules

/** Request field -> header attribute of creates and updates. */
export const SO_HEADER_MAP: readonly [string, keyof DocumentItem][] = [
  ["name", "name"],
  ["issue_date", "issueDate"],
  ["expiry_date", "expiryDate"],
  ["purchase_order_number", "purchaseOrderNumber"],
  ["attention", "attention"],
  ["shipping_address", "shippingAddress"],
  ["public_note", "publicNote"],
  ["packing_list_note", "packingListNote"],
  ["payment_terms", "paymentTerms"],
];

/** 422 `before_issue_date` when the expiry date is before the issue date. */
export function assertDates(header: DocumentItem): void {
  if (header.expiryDate && header.issueDate && header.expiryDate < header.issueDate) {
    throw errors.validationFailed([{ param: "expiry_date", code: "before_issue_date", message: "must not be before issue_date." }]);
  }
}

/** The header of lines and context: totals, percentages, snapshots. */
export function deriveOrder(header: DocumentItem, context: SalesContext, lines: readonly SalesLine[]): { header: DocumentItem; lines: SalesLine[] } {
  const priced = priceSalesLines(lines, header.discountPercent, header.shippingFee);
  let next: DocumentItem = { ...header, ...priced.totals };
  if (context.location) {
    next.locationId = context.location.locationId;
    next.locationName = context.location.name;
  } else {
    delete next.locationId;
    delete next.locationName;
  }
  next = withPercents(next, progressOf(priced.lines, context.account.packingServiceItems));
  next = withPackingFacts(next, priced.lines);
  next = deriveSalesHeader(next, context, priced.lines, [next.customNumber, next.name, next.purchaseOrderNumber]);
  return { header: next, lines: priced.lines };
}

/** Reservation changes of lines (each line's uninvoiced quantity; `sign` -1 releases them). */
export const reservations = (lines: readonly SalesLine[], sign: 1 | -1) =>
  lineChanges(lines, "reserve", (line) => sign * Math.max(0, addQuantities(line.quantity, -line.quantityInvoiced))).changes;

/** 409 `sales_order_update_not_allowed` unless the order is open with no activity (architecture section 8). */
export function assertEditable(tree: SalesTree, action: string): void {
  const { header, lines } = tree;
  if (header.status !== "open") {
    throw errors.stateConflict(
      "sales_order_update_not_allowed",
      `Only open sales orders can be ${action}; this one is ${SO_STATUS[header.status as SoStatus].label}.`,
    );
  }
  if (activityStarted(header, lines)) {
    throw errors.stateConflict("sales_order_update_not_allowed", `This sales order has invoices, packed or shipped quantities and can no longer be ${action}.`);
  }
}

/** 409 `sales_order_pack_not_allowed` unless packing lists are enabled and the order is open. */
export function assertOrderPackable(header: DocumentItem, packingListsEnabled: boolean): void {
  if (!packingListsEnabled) throw errors.stateConflict("sales_order_pack_not_allowed", "Packing lists are disabled for this account.");
  if (header.status !== "open") {
    throw errors.stateConflict(
      "sales_order_pack_not_allowed",
      `Only open sales orders can be packed; this one is ${SO_STATUS[header.status as SoStatus].label}.`,
    );
  }
}

// ---------------------------------------------------------------------------------------------
// Invoicing (`invoicing.ts`)

/**
 * 409 `sales_order_invoice_not_allowed` unless the order is open and below `MAX_ORDER_INVOICES`
 * invoices that are not cancelled (cancelled ones give their place back, so an order is never stuck).
 */
export function assertInvoiceable(header: DocumentItem): void {
  if (header.status !== "open") {
    throw errors.stateConflict(
      "sales_order_invoice_not_allowed",
      `Only open sales orders can be invoiced; this one is ${SO_STATUS[header.status as SoStatus].label}.`,
    );
  }
  if (liveInvoiceIds(header).length >= MAX_ORDER_INVOICES) {
    throw errors.stateConflict("sales_order_invoice_not_allowed", `A sales order can have at most ${MAX_ORDER_INVOICES} invoices.`);
  }
}

/** A line's uninvoiced quantity. */
export const remainingToInvoice = (line: SalesLine) => Math.max(0, addQuantities(line.quantity, -line.quantityInvoiced));

/**
 * The quantity to invoice of each line (line id -> quantity): the requested ones, each at most
 * the line's uninvoiced quantity and never the discount line (422 naming every offending entry),
 * or, without `requested`, every remaining quantity. 409 when nothing is left to invoice.
 */
export function quantitiesToInvoice(lines: readonly SalesLine[], requested: readonly { id: string; quantity: number }[] | undefined): Map<string, number> {
  const quantities = new Map<string, number>();
  if (requested) {
    const byId = new Map(lines.map((line) => [line.id, line]));
    const details: ValidationDetail[] = [];
    requested.forEach((entry, index) => {
      const line = byId.get(entry.id);
      // `referenceDetail` (lib/db/references.ts) written out: the model reads no storage.
      if (!line) details.push({ param: `lines[${index}].id`, code: "invalid_reference", message: "is not a line of this sales order." });
      else if (line.lineType === "discount")
        details.push({ param: `lines[${index}].id`, code: "not_invoiceable", message: "is the generated discount line: invoices get their own." });
      else if (new Decimal(entry.quantity).gt(remainingToInvoice(line))) {
        details.push({
          param: `lines[${index}].quantity`,
          code: "too_large",
          message: `is more than the line's remaining uninvoiced quantity (${remainingToInvoice(line)}).`,
        });
      } else quantities.set(line.id, entry.quantity);
    });
    if (details.length > 0) throw errors.validationFailed(details);
  } else {
    for (const line of lines) if (line.lineType !== "discount" && remainingToInvoice(line) > 0) quantities.set(line.id, remainingToInvoice(line));
  }
  if (quantities.size === 0) throw errors.stateConflict("sales_order_invoice_not_allowed", "Nothing is left to invoice on this sales order.");
  return quantities;
}

/** Whether the order's next invoice takes its shipping fee and cost: no live invoice carries them yet. */
export const shippingToInvoice = (order: DocumentItem): boolean => !(order.shippingInvoiced ?? (order.invoiceCount ?? 0) > 0);

/**
 * The order after its invoice `invoice` (its id, and as `InvoiceOfOrder`): the lines' invoiced
 * quantities and money grow, the order closes (30) once every line is fully invoiced, its invoice
 * count, linked invoices and invoiced percentage follow, with a new revision.
 */
export function orderAfterInvoice(previous: DocumentItem, lines: readonly SalesLine[], invoice: InvoiceOfOrder & { id: string }) {
  const orderLines = withInvoiceOf(lines, invoice, 1);
  const complete = orderLines.every((line) => line.lineType === "discount" || line.quantityInvoiced >= line.quantity);
  const header = withPercents(
    {
      ...previous,
      status: complete ? "closed" : "open",
      statusId: complete ? SO_STATUS.closed.id : SO_STATUS.open.id,
      invoiceCount: (previous.invoiceCount ?? 0) + 1,
      shippingInvoiced: true,
      linkedInvoiceIds: [...(previous.linkedInvoiceIds ?? []), invoice.id],
      revision: newRevision("so"),
      updatedAt: laterUpdatedAt(previous.updatedAt),
    },
    { invoicedPercent: progressOf(orderLines, previous.packingServiceItems ?? false).invoicedPercent },
  );
  return { header, lines: orderLines };
}
