import { DOCUMENT_STATUS } from "../statuses.js";
import type { StockChange } from "../../inventory/stock-changes.js";
import type { StoredLine } from "../../../db/document-lines.js";
import { lineBehindStockRule, orNull, presentIdentity, presentStatus } from "../rules.js";
import type { StockRuleError } from "../../../core/failures.js";
import { errors, type ErrorCode } from "../../../core/errors.js";
import type { DocumentItem, LocationItem } from "../../../db/service.js";

/**
 * The stock transfer without storage (spec part 2, sections 2.2 and 3.2; architecture section 4
 * for status ids): statuses and the send and receive steps, the stock each state moves, header
 * derivations and presentation.
 *
 * Statuses: 26 Pending -> (send) 27 In Transit -> (receive) 28 Transferred.
 */

export const TRANSFER_STATUS = DOCUMENT_STATUS.stock_transfer;
export type TransferStatus = keyof typeof TRANSFER_STATUS;

export interface TransferLine extends StoredLine {
  itemId: string;
  variationId: string;
  /** The row at the origin. */
  ivlId: number;
  name: string;
  description?: string;
  variation?: string;
  quantity: number;
  unitId?: number;
}

// ---------------------------------------------------------------------------------------------
// Presentation

export function presentStockTransfer(header: DocumentItem, lines?: readonly TransferLine[]): Record<string, unknown> {
  const status = TRANSFER_STATUS[header.status as TransferStatus];
  const names = (header.partyDetails ?? {}) as { origin?: string; destination?: string };
  const out: Record<string, unknown> = {
    ...presentIdentity(header, "stock_transfer"),
    assigned_user_id: header.assignedUserId,
    ...presentStatus(status),
    origin_location: { id: header.originLocationId, name: orNull(names.origin) },
    destination_location: { id: header.destinationLocationId, name: orNull(names.destination) },
    issue_date: orNull(header.issueDate),
    estimated_arrival_date: orNull(header.estimatedArrivalDate),
    date_sent: orNull(header.dateSent),
    date_received: orNull(header.dateReceived),
    shipping_provider: orNull(header.shippingProvider),
    shipping_tracking_code: orNull(header.shippingTrackingCode),
    created_at: header.createdAt,
    updated_at: header.updatedAt,
  };
  if (lines) {
    out.lines = lines.map((line) => ({
      id: line.id,
      object: "stock_transfer_line",
      item_id: line.itemId,
      item_variation_location_id: line.ivlId,
      name: line.name,
      description: orNull(line.description),
      // A display string (spec 2.2), never null: empty for an item without variations.
      variation: line.variation ?? "",
      quantity: line.quantity,
      unit_id: orNull(line.unitId),
    }));
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Steps and stock effects

/** The stock effect of lines in a state: in transit, or transferred (negative = undo). */
export type Effect = "send" | "receive";

/** A status step (spec 3.2): the state it leaves, the one it enters, its date, its stock effect and its wording. */
export interface TransferStep {
  from: TransferStatus;
  to: TransferStatus;
  /** The 409 code and message start when the transfer is not in `from`. */
  code: ErrorCode;
  only: string;
  date: "dateSent" | "dateReceived";
  effect: Effect;
  /** The subject of an insufficient-stock message, and the ledger reason's verb. */
  when: string;
  done: string;
}

export const TRANSFER_STEPS: Record<"send" | "receive", TransferStep> = {
  send: {
    from: "pending",
    to: "in_transit",
    code: "stock_transfer_send_not_allowed",
    only: "Only pending stock transfers can be sent",
    date: "dateSent",
    effect: "send",
    when: "Sending the transfer",
    done: "sent",
  },
  receive: {
    from: "in_transit",
    to: "transferred",
    code: "stock_transfer_receive_not_allowed",
    only: "Only in-transit stock transfers can be received",
    date: "dateReceived",
    effect: "receive",
    when: "Receiving the transfer",
    done: "received",
  },
};

export function changesOf(header: DocumentItem, lines: readonly TransferLine[], effect: Effect, sign: 1 | -1 = 1): StockChange[] {
  const out: StockChange[] = [];
  for (const line of lines) {
    const q = sign * line.quantity;
    if (q === 0) continue;
    if (effect === "send") {
      const origin = { itemId: line.itemId, variationId: line.variationId, locationId: header.originLocationId!, deltas: { onHand: -q } };
      const destination = { itemId: line.itemId, variationId: line.variationId, locationId: header.destinationLocationId!, deltas: { inTransit: q } };
      // The decrease first, in both directions: no change in between counts a unit twice (a
      // unique item is one unit, on hand or in transit, checked after each change of a long write).
      out.push(...(sign === 1 ? [origin, destination] : [destination, origin]));
    } else {
      out.push({ itemId: line.itemId, variationId: line.variationId, locationId: header.destinationLocationId!, deltas: { inTransit: -q, onHand: q } });
    }
  }
  return out;
}

/** What deleting a transfer reverses (unmerged): nothing pending; the send in transit; the receive, then the send, once transferred. */
export function reversalOf(header: DocumentItem, lines: readonly TransferLine[]): StockChange[] {
  return header.status === "pending"
    ? []
    : header.status === "in_transit"
      ? changesOf(header, lines, "send", -1)
      : [...changesOf(header, lines, "receive", -1), ...changesOf(header, lines, "send", -1)];
}

/** A stock rule a transfer's move breaks: which of its lines, in the API's error shape. */
export function stockError(error: StockRuleError, changes: readonly StockChange[], lines: readonly TransferLine[], when: string) {
  const change = changes[error.changeIndex];
  const index = change ? lineBehindStockRule(lines, (line) => line.itemId === change.itemId && line.variationId === change.variationId) : -1;
  return errors.validationFailed([
    {
      param: index >= 0 ? `lines[${index}].quantity` : "lines",
      code: error.rule === "negative_balance" ? "insufficient_stock" : error.rule,
      message: error.rule === "negative_balance" ? `${when} would take stock below zero at a location.` : error.message,
    },
  ]);
}

// ---------------------------------------------------------------------------------------------
// Header derivations

export const variationLabel = (values: Record<string, string> | undefined) => {
  const entries = Object.entries(values ?? {});
  return entries.length === 0 ? undefined : entries.map(([label, value]) => `${label}: ${value}`).join(", ");
};

export const withNames = (header: DocumentItem, origin: LocationItem, destination: LocationItem): DocumentItem => ({
  ...header,
  partyDetails: { origin: origin.name, destination: destination.name },
});

export function derive(header: DocumentItem, lines: readonly TransferLine[]): DocumentItem {
  return { ...header, itemIds: [...new Set(lines.map((line) => line.itemId))], searchText: (header.shippingTrackingCode ?? "").toLowerCase() };
}

/** Shipping fields of a request (null or "" clears; omitted keeps). */
export function shippingChanges(
  header: DocumentItem,
  input: { estimated_arrival_date?: string | null; shipping_provider?: string | null; shipping_tracking_code?: string | null },
): DocumentItem {
  const next = { ...header };
  const apply = (value: string | null | undefined, attribute: "estimatedArrivalDate" | "shippingProvider" | "shippingTrackingCode") => {
    if (value === undefined) return;
    if (value === null || value === "") delete next[attribute];
    else next[attribute] = value;
  };
  apply(input.estimated_arrival_date, "estimatedArrivalDate");
  apply(input.shipping_provider, "shippingProvider");
  apply(input.shipping_tracking_code, "shippingTrackingCode");
  return next;
}
