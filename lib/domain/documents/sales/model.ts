import { isKeptUnitPrice, sentOrKeptRow, sentOrKeptVariation, serviceLineDetails } from "../line-values.js";
import { hasPermission, type Permission, type Principal } from "../../../auth/permissions.js";
import { errors, type ValidationDetail } from "../../../core/errors.js";
import type { AccountItem, DocumentItem, DocumentPaymentItem, LocationItem, PartyItem } from "../../../db/service.js";
import type { SalesLineBody } from "../../../schemas/sales-documents.js";
import type { RowIdOf } from "../../inventory/stock-holds.js";
import { money, rate } from "../../common/money.js";
import { etagOf, type RevisionPrefix } from "../../common/revisions.js";
import {
  assertTotalInRange,
  discountLineHead,
  discountLineRates,
  headerTotalsOf,
  totalsOfLines,
  type HeaderTotals,
  type LineMoney,
  type PartyDocumentLine,
} from "../totals.js";

/**
 * What sales orders and invoices share, without storage (spec part 2, sections 2.4, 2.5, 4.4,
 * 4.5; architecture sections 4, 5 and 8): the stored line, the kind description the shared
 * operations take, request lines as specs and pricing with the generated discount line. Header
 * rules are in `header.ts`, fulfilment progress and stock effects in `progress.ts`.
 */

/** A stored line of a sales order or an invoice (`lib/db/documents.ts` packs them into pages). */
export interface SalesLine extends PartyDocumentLine {
  locationId?: string;
  /** The location's name when the line was last written (a current related value, refreshed on writes). */
  locationName?: string;
  /** A unique (serialised) item: quantity 1, sold by an invoice. */
  unique?: boolean;
  /** Sales orders: the quantity invoiced so far (0 on invoices). */
  quantityInvoiced: number;
  /**
   * Sales orders: the money of the line's live invoices (the invoice lines of it; on the discount
   * line, the invoices' discounts), so the invoice that takes what is left takes the exact rest.
   * Absent on lines invoiced before it was kept.
   */
  invoiced?: LineMoney;
  quantityPacked: number;
  quantityShipped: number;
  /** Invoices created from a sales order: the order's line. */
  salesOrderLineId?: string;
  unitPrice: string;
  /** The unit cost snapshot (null on discount lines). */
  unitCost: string | null;
  thumbnailUrl?: string;
  discountedUnitPrice: string | null;
  subtotal: string;
}

/** A sales document as read: header, lines and payments. */
export interface SalesTree {
  header: DocumentItem;
  lines: SalesLine[];
  payments: DocumentPaymentItem[];
}

/**
 * What a create or update of an order or invoice can do about a line it cannot place, by cause
 * (a conversion, whose body takes neither, gives its own advice: `unplacedLinesConflict`).
 */
export const PLACEMENT_HINTS = {
  unstocked: { order: " (give the item a location_id, or the sales order one)", invoice: " (give the item a location_id)" },
  several: { order: " (name a row, or give the sales order a location_id)", invoice: " (name a row)" },
} as const;

export interface SalesContext {
  principal: Principal;
  account: AccountItem;
  customer: PartyItem;
  /** The document's own location (sales orders), when it has one. */
  location?: LocationItem;
  /** The document takes a `location_id` (sales orders; an invoice's lines place themselves): refusals say so. */
  takesLocation?: boolean;
}

export type SalesDocumentKind = "invoice" | "sales_order";

/** What the shared sales operations know of a kind (its `INVOICE_KIND` or `SALES_ORDER_KIND`). */
export interface SalesKind<K extends SalesDocumentKind = SalesDocumentKind> {
  kind: K;
  /** The kind in messages ("invoice", "sales order"). */
  what: string;
  /** The kind at the start of a sentence ("Invoice", "Sales order"): stock reasons. */
  label: string;
  revisionPrefix: RevisionPrefix;
  listPermission: Permission;
  modifyPermission: Permission;
  /** Whether a detail read shows the customer's, items' and locations' current values (`withCurrentValues`). */
  relatedOnRead: boolean;
  /**
   * Whether list entries say block reasons (sales orders): the list reads the account's packing
   * settings, and the lines of open orders last written before their header kept packing facts.
   */
  listBlockReasons: boolean;
  /** The document as the API shows it: list entries without lines, details with them. */
  present(principal: Principal, header: DocumentItem, lines?: readonly SalesLine[]): Record<string, unknown>;
}

/** A written sales document's response: body and ETag. */
export interface SalesResult {
  body: Record<string, unknown>;
  etag: string;
}

export const salesResult = (body: Record<string, unknown>, revision: string): SalesResult => ({ body, etag: etagOf(revision) });

/** `lines[i].id` details of ids a request names more than once. */
export function duplicateLineIds(lines: readonly { id: string }[] | undefined): ValidationDetail[] {
  const seen = new Set<string>();
  const duplicates: ValidationDetail[] = [];
  lines?.forEach((entry, index) => {
    if (seen.has(entry.id)) duplicates.push({ param: `lines[${index}].id`, code: "duplicate", message: "appears more than once." });
    seen.add(entry.id);
  });
  return duplicates;
}

// ---------------------------------------------------------------------------------------------
// Lines

/**
 * One requested line, from an API request or a conversion draft. Absent values take the
 * defaults: the item's name, description, selling price and unit cost; the customer's tax rates.
 */
export interface LineSpec {
  /** Position in the request's `lines` (error paths). */
  index: number;
  /** The stored line this one keeps (its id and fulfilment quantities). */
  kept?: SalesLine;
  itemId?: string;
  ivlId?: number;
  /** `ivlId` is the stored line's row, not one the request named (`sentOrKeptRow`). */
  rowKept?: boolean;
  /** The line's variation, when it names one without a row (`sentOrKeptVariation`). */
  variationId?: string;
  name?: string;
  /** A request's `name` on an inventory line: accepted only as read (`inventoryLineName`). */
  sentName?: string;
  /** undefined: the item's description; null or "": none. */
  description?: string | null;
  quantity?: number;
  unitPrice?: string;
  unitCost?: string;
  discountPercent?: string;
  taxRate?: string;
  tax2Rate?: string;
}

/**
 * Request lines as specs (spec 4.4 and 4.5 lines): service lines need `name` and `unit_price`
 * and take no `item_variation_location_id`; inventory lines take their name from the item.
 * `unit_price` on an inventory line needs `prices.modify`: `inventoryPrice` says what happens
 * without it: `ignore` (sales orders: "the item's current selling price applies unless
 * unit_price is given and the user may modify selling prices") or `forbid` (invoices, which
 * follow the estimate rule "allowed only when the user may modify selling prices": 403
 * `permission_denied`).
 */
export function lineSpecsOf(
  principal: Principal,
  input: readonly SalesLineBody[],
  kept: readonly (SalesLine | undefined)[],
  inventoryPrice: "ignore" | "forbid",
): LineSpec[] {
  const details: ValidationDetail[] = [];
  const mayPrice = hasPermission(principal, "prices.modify");
  input.forEach((line, index) => {
    if (line.item_id === undefined) details.push(...serviceLineDetails(index, line, "unit_price", kept[index]));
  });
  if (details.length > 0) throw errors.validationFailed(details);
  // An inventory line's own price sent back as read needs no permission (it changes nothing).
  const keepsPrice = (line: SalesLineBody, index: number) =>
    line.item_id !== undefined && line.unit_price !== undefined && isKeptUnitPrice(money(line.unit_price), line.item_id, kept[index]);
  if (inventoryPrice === "forbid" && !mayPrice) {
    const index = input.findIndex((line, i) => line.item_id !== undefined && line.unit_price !== undefined && !keepsPrice(line, i));
    if (index >= 0)
      throw errors.permissionDenied(
        `lines[${index}].unit_price: setting the selling price of an inventory line requires the prices.modify permission.`,
        `lines[${index}].unit_price`,
      );
  }
  return input.map((line, index) => ({
    index,
    kept: kept[index],
    itemId: line.item_id,
    ivlId: sentOrKeptRow(line.item_variation_location_id, kept[index], line.item_id, line.item_variation_id),
    rowKept: line.item_variation_location_id === undefined && sentOrKeptRow(undefined, kept[index], line.item_id, line.item_variation_id) !== undefined,
    variationId: sentOrKeptVariation(line.item_variation_id, line.item_variation_location_id, kept[index], line.item_id),
    name: line.item_id === undefined ? line.name : undefined,
    sentName: line.item_id === undefined ? undefined : line.name,
    description: line.description,
    quantity: line.quantity,
    unitPrice: line.unit_price === undefined || (line.item_id !== undefined && !mayPrice && !keepsPrice(line, index)) ? undefined : money(line.unit_price),
    taxRate: line.tax_rate === undefined ? undefined : rate(line.tax_rate),
    tax2Rate: line.tax_2_rate === undefined ? undefined : rate(line.tax_2_rate),
  }));
}

/** A create's request: the customer, the request's header fields and its lines as specs. */
export interface SalesCreateRequest {
  customerId: string;
  /** Header fields in request form (a draft's too: `draftRequestFields`). */
  fields: Record<string, unknown>;
  specs: (context: SalesContext) => LineSpec[];
  /** Default: the caller. */
  salespersonId?: string;
  sourceEstimate?: { id: string; number: number };
  /** Whose today a missing issue date is: the caller's zone (else the account's) by default. */
  issueDateZone?: IssueDateZone;
}

/**
 * The zone of a default issue date: `user` (the caller's, else the account's: spec 4.4 and 4.5
 * "default from account and user timezone") or `account` (spec 4.3 convert to invoice: "today
 * in the API user's account timezone").
 */
export type IssueDateZone = "user" | "account";

/** Priced lines: the non-discount lines and the generated discount line, their money by line id, and the header's totals. */
export interface PricedSalesLines {
  lines: SalesLine[];
  money: Map<string, LineMoney>;
  totals: HeaderTotals;
}

/**
 * Prices the lines and appends the generated discount line (keeping its id; `fixedDiscount` is
 * its amount when given, see `computeTotals`); returns lines, each line's money and the totals.
 */
export function priceSalesLines(lines: readonly SalesLine[], discountPercent: string, shippingFee: string, fixedDiscount?: string): PricedSalesLines {
  const items = lines.filter((line) => line.lineType !== "discount");
  const totals = totalsOfLines(items, (line) => line.unitPrice, discountPercent, shippingFee, fixedDiscount);
  assertTotalInRange(totals);
  const lineMoney = new Map<string, LineMoney>();
  const priced: SalesLine[] = items.map((line, i) => {
    const amounts = totals.lines[i]!;
    lineMoney.set(line.id, { subtotal: amounts.subtotal, tax: amounts.tax, tax2: amounts.tax2 });
    return { ...line, subtotal: amounts.subtotal, discountedUnitPrice: amounts.discountedUnitPrice };
  });
  if (totals.discount !== null) {
    const head = discountLineHead(lines);
    lineMoney.set(head.id, { subtotal: totals.discount, tax: "0.0000", tax2: "0.0000" });
    priced.push({
      ...head,
      quantityInvoiced: 0,
      quantityPacked: 0,
      quantityShipped: 0,
      unitPrice: totals.discount,
      unitCost: null,
      ...discountLineRates(),
      discountedUnitPrice: null,
      subtotal: totals.discount,
    });
  }
  return { lines: priced, money: lineMoney, totals: headerTotalsOf(totals) };
}

/** Lines with the ids of the stock rows the write created (rows appear with the first stock). */
export const withRowIds = (lines: readonly SalesLine[], rowIdOf: RowIdOf): SalesLine[] =>
  lines.map((line) =>
    line.lineType === "inventory" && line.ivlId === undefined && line.itemId
      ? { ...line, ivlId: rowIdOf(line.itemId, line.variationId!, line.locationId!) }
      : line,
  );
