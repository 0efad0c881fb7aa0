import { DOCUMENT_STATUS } from "../statuses.js";
import type { DocumentFilter } from "../../../db/document-lists.js";
import { orNull, presentEditable, presentStatus } from "../rules.js";
import { randomUUID } from "node:crypto";
import { Decimal } from "../../../core/decimal.js";
import { DateTime } from "luxon";
import { startOfLocalDay } from "../../common/local-time.js";
import { ApiError, errors, type ErrorCode } from "../../../core/errors.js";
import { isValidZone } from "../../../core/time-zones.js";
import { nowIso } from "../../../core/clock.js";
import { hasPermission, mayAct, type Principal } from "../../../auth/permissions.js";
import type { DocumentItem } from "../../../db/service.js";
import { presentCustomFieldValues } from "../../common/custom-field-values.js";
import { money } from "../../common/money.js";
import { discountLineHead, discountLineRates, headerTotalsOf, totalsOfLines, type HeaderTotals, type PartyDocumentLine } from "../totals.js";
import { PLACEMENT_HINTS } from "../sales/model.js";

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

export const ESTIMATE_STATUS: Record<EstimateStatus, { id: number; label: "Open" | "Closed" | "Declined" | "Expired" }> = DOCUMENT_STATUS.estimate;

/** The status an estimate has at `now` (ISO instant): Open past its expiry instant is Expired. */
export function effectiveStatus(header: Pick<DocumentItem, "status" | "expiryInstant">, now: string): EstimateStatus {
  if (header.status === "open" && header.expiryInstant !== undefined && now >= header.expiryInstant) return "expired";
  return header.status as StoredEstimateStatus;
}

const zoneOf = (zone: string | undefined) => (isValidZone(zone) ? zone : "UTC");

/** The `expiryInstant` of an estimate that never expires (later than any real date: it sorts after every instant). */
export const NEVER_EXPIRES = "9999-12-31T23:59:59.999Z";

/**
 * The instant an estimate expiring on `expiryDate` becomes Expired: the start of the next day in
 * `zone` (its first instant when midnight happens twice), or never after 9999-12-31.
 */
export function expiryInstantOf(expiryDate: string, zone: string | undefined): string {
  if (expiryDate >= LAST_DATE) return NEVER_EXPIRES;
  return startOfLocalDay(addDays(expiryDate, 1), zoneOf(zone)).toUTC().toISO()!;
}

/**
 * The `expiryInstant` stored by a write at `now`. An estimate created when its expiry date has
 * already passed (one recorded after the fact, with past dates) is Open when created, as the
 * spec's create row says, and stays Open: it never expires, also through later writes that keep
 * its expiry date. An update fixes the instant in the account's zone as it is now: when a change
 * of zone has put that instant in the past, the estimate is Expired from this write on.
 */
export function expiryInstantAt(
  expiryDate: string,
  zone: string | undefined,
  now: string,
  previous?: Pick<DocumentItem, "expiryDate" | "expiryInstant">,
): string {
  if (previous?.expiryInstant === NEVER_EXPIRES && previous.expiryDate === expiryDate) return NEVER_EXPIRES;
  const instant = expiryInstantOf(expiryDate, zone);
  return instant > now || previous !== undefined ? instant : NEVER_EXPIRES;
}

/** The last calendar date the API writes (architecture section 8: dates run to 9999-12-31). */
export const LAST_DATE = "9999-12-31";

/** `date` (YYYY-MM-DD) plus `days` calendar days. */
export function addDays(date: string, days: number): string {
  const later = DateTime.fromISO(date, { zone: "UTC" }).plus({ days });
  return later.year > 9999 ? LAST_DATE : later.toISODate()!;
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
export interface EstimateLine extends PartyDocumentLine {
  /** The stock row's location (the estimate is there, for the location rule). */
  locationId?: string;
  /** The stock row's location, as named when the line was written. */
  locationName?: string;
  unitPrice: string;
  /** The item's unit cost when written (service lines 0); null on the discount line. */
  unitCost: string | null;
  discountedUnitPrice: string | null;
  subtotal: string;
  tax: string;
  tax2: string;
  total: string;
  totalCost: string | null;
}

export type EstimateTotals = HeaderTotals;

/** The amounts of a line not priced yet (`priceEstimate` sets them). */
export const UNPRICED_AMOUNTS = {
  discountedUnitPrice: null,
  subtotal: "0.0000",
  tax: "0.0000",
  tax2: "0.0000",
  total: "0.0000",
  totalCost: null,
} as const;

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
  const totals = totalsOfLines(items, (line) => line.unitPrice, discountPercent, shippingFee);
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
      ...discountLineHead(lines, discountLineId),
      unitPrice: totals.discount,
      unitCost: null,
      ...discountLineRates(),
      discountedUnitPrice: null,
      subtotal: totals.discount,
      tax: "0.0000",
      tax2: "0.0000",
      total: totals.discount,
      totalCost: null,
    });
  }
  return { lines: priced, totals: headerTotalsOf(totals) };
}

// ---------------------------------------------------------------------------------------------
// Presentation

export type EditBlockReason = "estimate_not_open" | "permission_denied";

export function editBlockReason(principal: Principal, header: Pick<DocumentItem, "status" | "expiryInstant">, now: string): EditBlockReason | null {
  if (!mayAct(principal, "estimates.modify", "estimates:write")) return "permission_denied";
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
  const now = options.now ?? nowIso();
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
    ...presentStatus(status),
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
    ...presentEditable(reason),
    revision: preview ? null : header.revision,
    custom_field_values: presentCustomFieldValues(header.customFieldValues),
    created_at: preview?.isNew ? null : header.createdAt,
    updated_at: preview?.isNew ? null : header.updatedAt,
    converted_document: header.convertedTo ? { id: header.convertedTo.id, kind: header.convertedTo.kind, number: header.convertedTo.number } : null,
  });
  if (lines) out.lines = lines.map((line, position) => presentLine(line, position, showCosts, preview));
  return out;
}

/** How an estimate's state reads in a refusal: its status label, "(converted)" when it was converted. */
export const stateLabel = (header: Pick<DocumentItem, "convertedTo">, status: EstimateStatus): string =>
  `${ESTIMATE_STATUS[status].label}${header.convertedTo ? " (converted)" : ""}`;

// ---------------------------------------------------------------------------------------------
// Conversion (used by the invoice and sales-order writers: ONE transaction with the new document)

export type ConversionKind = "invoice" | "sales_order";

/** The document an estimate was converted into (`converted_document`). */
export interface ConvertedDocument {
  kind: ConversionKind;
  id: string;
  number: number;
}

/** A line of the estimate in the shape a new document's line takes (a fresh `id`; amounts as priced on the estimate). */
export type ConvertibleLine = EstimateLine & { lineType: "inventory" | "service"; sourceLineId: string };

/** The details a new sales document copies from the estimate as they are. */
export type EstimateDetails = Pick<DocumentItem, "name" | "purchaseOrderNumber" | "attention" | "shippingAddress" | "publicNote" | "paymentTerms">;

/** The estimate's details (name, PO number, attention, shipping address, public note, payment terms). */
export const estimateDetails = (h: EstimateDetails): EstimateDetails => ({
  name: h.name,
  purchaseOrderNumber: h.purchaseOrderNumber,
  attention: h.attention,
  shippingAddress: h.shippingAddress,
  publicNote: h.publicNote,
  paymentTerms: h.paymentTerms,
});

export interface EstimateConversionSource {
  /** The estimate as read: `addEstimateConversion` is conditioned on this revision. */
  estimate: DocumentItem;
  /**
   * Header values a new sales document copies (DocumentItem attribute names: spread them into
   * the new header): customer, salesperson, details, shipping, discount, totals, item ids.
   * Custom-field values are not copied (custom fields belong to one record kind).
   */
  header: Pick<
    DocumentItem,
    | "partyId"
    | "partyName"
    | "partyKind"
    | "assignedUserId"
    | "name"
    | "purchaseOrderNumber"
    | "attention"
    | "shippingAddress"
    | "publicNote"
    | "paymentTerms"
    | "issueDate"
    | "expiryDate"
    | "shippingFee"
    | "shippingCost"
    | "discountPercent"
    | "subtotal"
    | "preDiscountTotal"
    | "discountTotal"
    | "tax"
    | "tax2"
    | "total"
    | "itemIds"
  >;
  /** The non-discount lines in stored order; re-pricing them with `discountPercent` regenerates the discount line and the same totals. */
  lines: ConvertibleLine[];
}

const conversionCode: Record<ConversionKind, ErrorCode> = {
  invoice: "estimate_conversion_not_allowed",
  sales_order: "estimate_sales_order_conversion_not_allowed",
};

/** A placement refusal's message without the advice of a create (a conversion gives its own). */
const withoutHints = (message: string) =>
  Object.values(PLACEMENT_HINTS)
    .flatMap((hints) => Object.values(hints))
    .reduce((text, hint) => text.replace(hint, ""), message);

/**
 * What a conversion answers when the new document cannot place an inventory line (its item is
 * stocked at several locations, or at none, and the estimate names no row): the estimate cannot
 * be converted as it stands, so 409 with the conversion's code and what to change, rather than
 * the create's 422 on a field a conversion's body cannot carry. Any other error is returned as is.
 */
export function unplacedLinesConflict(error: unknown, kind: ConversionKind): unknown {
  if (!(error instanceof ApiError) || error.code !== "validation_failed" || !error.details?.length) return error;
  const unplaced = error.details.filter((detail) => detail.code === "required" && /^lines\[\d+\]\.item_variation_location_id$/.test(detail.param));
  if (unplaced.length !== error.details.length) return error;
  return errors.stateConflict(
    conversionCode[kind],
    `The estimate cannot be converted as it stands: ${unplaced.map((detail) => `${detail.param} ${withoutHints(detail.message)}`).join(" ")} Name the stock row on the estimate's line (PATCH the estimate's lines with item_variation_location_id), or give the item a default location (its location_id), then convert.`,
  );
}

/** A visible estimate's values in the shape of the new document converting it into `kind` (pure): 409 unless it is Open (unexpired) and unconverted. */
export function conversionSource(header: DocumentItem, lines: readonly EstimateLine[], kind: ConversionKind, now: string): EstimateConversionSource {
  const status = effectiveStatus(header, now);
  if (status !== "open" || header.convertedTo) {
    throw errors.stateConflict(
      conversionCode[kind],
      `Only an Open estimate that was not converted can be converted; this one is ${stateLabel(header, status)}.`,
    );
  }
  const h = header;
  return {
    estimate: header,
    header: {
      partyId: h.partyId,
      partyName: h.partyName,
      partyKind: h.partyKind,
      assignedUserId: h.assignedUserId,
      ...estimateDetails(h),
      issueDate: h.issueDate,
      expiryDate: h.expiryDate,
      shippingFee: h.shippingFee,
      shippingCost: h.shippingCost,
      discountPercent: h.discountPercent,
      subtotal: h.subtotal,
      preDiscountTotal: h.preDiscountTotal,
      discountTotal: h.discountTotal,
      tax: h.tax,
      tax2: h.tax2,
      total: h.total,
      itemIds: h.itemIds,
    },
    lines: lines
      .filter((line): line is EstimateLine & { lineType: "inventory" | "service" } => line.lineType !== "discount")
      .map((line) => ({ ...line, id: randomUUID(), sourceLineId: line.id })),
  };
}
