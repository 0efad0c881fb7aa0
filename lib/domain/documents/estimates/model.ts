import { randomUUID } from "node:crypto";
import { Decimal } from "decimal.js";
import { DateTime } from "luxon";
import { isValidZone } from "../../../core/time-zones.js";
import { hasPermission, type Principal } from "../../../auth/permissions.js";
import type { DocumentFilter, StoredLine } from "../../../db/documents.js";
import type { DocumentItem } from "../../../db/service.js";
import { presentCustomFieldValues } from "../../common/custom-field-values.js";
import { computeTotals } from "../totals.js";
import { orNull } from "../documents.js";
import { money } from "../../common/money.js";

/**
 * The estimate without storage (spec part 2, sections 2.3, 3.3 and 4.3; architecture section 4
 * for status ids and money): statuses and expiry, line pricing, presentation.
 *
 * Statuses (stored `status` -> `status_id`): open 5 Open, closed 6 Closed (converted into an
 * invoice or a sales order), declined 7 Declined. Expired (8) is never stored: an Open estimate
 * counts as Expired from the start of the day after its `expiry_date` in the account's time
 * zone (`expiryInstant`, fixed when the estimate is written), on every read and every write.
 */
export type StoredEstimateStatus = "open" | "closed" | "declined";
export type EstimateStatus = StoredEstimateStatus | "expired";

export const ESTIMATE_STATUS: Record<EstimateStatus, { id: number; label: "Open" | "Closed" | "Declined" | "Expired" }> = {
  open: { id: 5, label: "Open" },
  closed: { id: 6, label: "Closed" },
  declined: { id: 7, label: "Declined" },
  expired: { id: 8, label: "Expired" },
};

/** The status an estimate has at `now` (ISO instant): Open past its expiry instant is Expired. */
export function effectiveStatus(header: Pick<DocumentItem, "status" | "expiryInstant">, now: string): EstimateStatus {
  if (header.status === "open" && header.expiryInstant !== undefined && now >= header.expiryInstant) return "expired";
  return header.status as StoredEstimateStatus;
}

const zoneOf = (zone: string | undefined) => (isValidZone(zone) ? zone : "UTC");

/** The instant an estimate expiring on `expiryDate` becomes Expired: the next day's start in `zone`. */
export function expiryInstantOf(expiryDate: string, zone: string | undefined): string {
  return DateTime.fromISO(expiryDate, { zone: zoneOf(zone) })
    .plus({ days: 1 })
    .startOf("day")
    .toUTC()
    .toISO()!;
}

/** `date` (YYYY-MM-DD) plus `days` calendar days. */
export function addDays(date: string, days: number): string {
  return DateTime.fromISO(date, { zone: "UTC" }).plus({ days }).toISODate()!;
}

/**
 * The list filter of a `status_id`: stored statuses match directly; 5 (Open) and 8 (Expired)
 * split the stored Open estimates at `now`; an id no estimate has matches nothing.
 */
export function statusFilter(statusId: number, now: string): Pick<DocumentFilter, "statusId" | "dates"> {
  if (statusId === ESTIMATE_STATUS.open.id) {
    return { statusId, dates: [{ attribute: "expiryInstant", from: new Date(Date.parse(now) + 1).toISOString() }] };
  }
  if (statusId === ESTIMATE_STATUS.expired.id) return { statusId: ESTIMATE_STATUS.open.id, dates: [{ attribute: "expiryInstant", to: now }] };
  if (statusId === ESTIMATE_STATUS.closed.id || statusId === ESTIMATE_STATUS.declined.id) return { statusId };
  return { statusId: -1 };
}

/** A stored estimate line (`lib/db/documents.ts` stores them compressed in pages). */
export interface EstimateLine extends StoredLine {
  lineType: "inventory" | "service" | "discount";
  itemId?: string;
  variationId?: string;
  ivlId?: number;
  /** The stock row's location (the estimate is there, for the location rule). */
  locationId?: string;
  /** The stock row's location, as named when the line was written. */
  locationName?: string;
  name: string;
  description?: string;
  quantity: number;
  unitPrice: string;
  /** The item's unit cost when written (service lines 0); null on the discount line. */
  unitCost: string | null;
  discountPercent: string;
  taxRate: string;
  tax2Rate: string;
  unitId?: number;
  unitName?: string;
  sku?: string;
  variationValues: Record<string, string>;
  variationNumber?: number;
  discountedUnitPrice: string | null;
  subtotal: string;
  tax: string;
  tax2: string;
  total: string;
  totalCost: string | null;
}

export interface EstimateTotals {
  subtotal: string;
  preDiscountTotal: string;
  discountTotal: string;
  shippingFee: string;
  tax: string;
  tax2: string;
  total: string;
}

/**
 * Prices the non-discount lines (architecture section 4, money) and appends the generated
 * discount line when `discountPercent` is not zero, keeping the id of the discount line it
 * replaces (`discountLineId`, else one among `lines`).
 */
export function priceEstimate(
  lines: readonly EstimateLine[],
  discountPercent: string,
  shippingFee: string,
  discountLineId?: string,
): { lines: EstimateLine[]; totals: EstimateTotals } {
  const items = lines.filter((line) => line.lineType !== "discount");
  const totals = computeTotals(
    items.map((line) => ({
      quantity: line.quantity,
      unitPrice: line.unitPrice,
      discountPercent: line.discountPercent,
      taxRate: line.taxRate,
      tax2Rate: line.tax2Rate,
    })),
    discountPercent,
    shippingFee,
  );
  const priced: EstimateLine[] = items.map((line, i) => {
    const amounts = totals.lines[i]!;
    return {
      ...line,
      subtotal: amounts.subtotal,
      tax: amounts.tax,
      tax2: amounts.tax2,
      total: amounts.total,
      discountedUnitPrice: amounts.discountedUnitPrice,
      totalCost: line.unitCost === null ? null : money(new Decimal(line.quantity).times(line.unitCost)),
    };
  });
  if (totals.discount !== null) {
    priced.push({
      id: discountLineId ?? lines.find((line) => line.lineType === "discount")?.id ?? randomUUID(),
      lineType: "discount",
      name: "Discount",
      quantity: 1,
      unitPrice: totals.discount,
      unitCost: null,
      discountPercent: "0.000",
      taxRate: "0.000",
      tax2Rate: "0.000",
      variationValues: {},
      discountedUnitPrice: null,
      subtotal: totals.discount,
      tax: "0.0000",
      tax2: "0.0000",
      total: totals.discount,
      totalCost: null,
    });
  }
  return {
    lines: priced,
    totals: {
      subtotal: totals.subtotal,
      preDiscountTotal: totals.preDiscountTotal,
      discountTotal: totals.discountTotal,
      shippingFee: totals.shippingFee,
      tax: totals.tax,
      tax2: totals.tax2,
      total: totals.total,
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Presentation

export type EditBlockReason = "estimate_not_open" | "permission_denied";

export function editBlockReason(principal: Principal, header: Pick<DocumentItem, "status" | "expiryInstant">, now: string): EditBlockReason | null {
  if (!hasPermission(principal, "estimates.modify")) return "permission_denied";
  return effectiveStatus(header, now) === "open" ? null : "estimate_not_open";
}

export interface PresentOptions {
  /** The instant statuses are computed at (default: now). */
  now?: string;
  /**
   * A preview: nothing is stored, so `revision` is null; `id` and `estimate_number` are null
   * for a new estimate, and line ids are null for lines not stored yet (`storedLineIds`).
   */
  preview?: { storedLineIds: ReadonlySet<string>; isNew: boolean };
}

function presentLine(line: EstimateLine, position: number, showCosts: boolean, preview: PresentOptions["preview"]) {
  const out: Record<string, unknown> = {
    id: preview && !preview.storedLineIds.has(line.id) ? null : line.id,
    object: "estimate_line",
    item_id: orNull(line.itemId),
    item_variation_location_id: orNull(line.ivlId),
    line_type: line.lineType,
    name: line.name,
    description: orNull(line.description),
    quantity: line.quantity,
    unit_id: orNull(line.unitId),
    unit_name: line.lineType === "discount" ? "discount" : orNull(line.unitName),
    sku: orNull(line.sku),
    variation_values: line.variationValues ?? {},
    variation_number: orNull(line.variationNumber),
    location_name: orNull(line.locationName),
    thumbnail_url: null,
    position,
    unit_price: line.unitPrice,
  };
  if (showCosts) {
    out.unit_cost = line.unitCost;
    out.total_cost = line.totalCost;
  }
  Object.assign(out, {
    discount_percent: line.discountPercent,
    discounted_unit_price: line.discountedUnitPrice,
    tax_rate: line.taxRate,
    tax_2_rate: line.tax2Rate,
    subtotal: line.subtotal,
    tax: line.tax,
    tax_2: line.tax2,
    total: line.total,
  });
  return out;
}

/**
 * The estimate as the API shows it, fields in the spec's order (section 2.3), then the
 * compatibility field `converted_document`; `lines` only on a single estimate. Cost fields
 * (`shipping_cost`, line `unit_cost` and `total_cost`) only with the costs.view permission.
 */
export function presentEstimate(
  principal: Principal,
  header: DocumentItem,
  lines?: readonly EstimateLine[],
  options: PresentOptions = {},
): Record<string, unknown> {
  const now = options.now ?? new Date().toISOString();
  const status = ESTIMATE_STATUS[effectiveStatus(header, now)];
  const showCosts = hasPermission(principal, "costs.view");
  const preview = options.preview;
  const reason = editBlockReason(principal, header, now);
  const out: Record<string, unknown> = {
    id: preview?.isNew ? null : header.documentId,
    object: "estimate",
    estimate_number: preview?.isNew ? null : header.number,
    custom_estimate_number: orNull(header.customNumber),
    name: orNull(header.name),
    customer_id: header.partyId,
    customer_name: header.partyName ?? "",
    customer_kind: header.partyKind === "customer" || header.partyKind === "prospect" ? header.partyKind : null,
    salesperson_id: header.assignedUserId,
    status_id: status.id,
    status: status.label,
    issue_date: orNull(header.issueDate),
    expiry_date: orNull(header.expiryDate),
    date_sent: orNull(header.dateSent),
    purchase_order_number: header.purchaseOrderNumber ?? "",
    attention: orNull(header.attention),
    shipping_address: orNull(header.shippingAddress),
    public_note: orNull(header.publicNote),
    payment_terms: orNull(header.paymentTerms),
    subtotal: header.subtotal,
    shipping_fee: header.shippingFee,
    tax: header.tax,
    tax_2: header.tax2,
    total: header.total,
  };
  if (showCosts) out.shipping_cost = header.shippingCost;
  Object.assign(out, {
    discount_percent: header.discountPercent,
    pre_discount_subtotal: header.preDiscountTotal,
    discount: header.discountTotal,
    can_edit: reason === null,
    edit_block_reason: reason,
    revision: preview ? null : header.revision,
    custom_field_values: presentCustomFieldValues(header.customFieldValues),
    created_at: preview?.isNew ? null : header.createdAt,
    updated_at: preview?.isNew ? null : header.updatedAt,
    converted_document: header.convertedTo ? { id: header.convertedTo.id, kind: header.convertedTo.kind, number: header.convertedTo.number } : null,
  });
  if (lines) out.lines = lines.map((line, position) => presentLine(line, position, showCosts, preview));
  return out;
}
