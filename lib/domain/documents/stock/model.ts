import type { DocumentFilter } from "../../../db/document-lists.js";
import type { StoredLine } from "../../../db/document-lines.js";
import type { DocumentKind } from "../../../db/entities/document.js";
import type { DocumentItem } from "../../../db/service.js";
import { computeTotals, type DocumentTotals } from "../totals.js";

/**
 * Pure header and pricing helpers that purchase orders and stock transfers share, and that
 * estimates use too (candidates for `documents.ts` once the sales side takes them): a new
 * header's fixed fields, the list text filter, the header totals, the item ids and search
 * text. No storage here (type-only imports).
 */

/** The list `q` filter: lower-cased text, and a number when it looks like a document number. */
export function textFilter(q: string | undefined): DocumentFilter["text"] {
  const needle = q?.trim().toLowerCase();
  return needle ? { needle, number: /^\d{1,9}$/.test(needle) ? Number(needle) : undefined } : undefined;
}

/**
 * The fixed fields of a document not written yet: no number (the write takes one), nothing
 * paid, no pages, created and updated `now`, assigned to `assignedUserId`.
 */
export function freshHeader(options: {
  accountId: string;
  documentId: string;
  kind: DocumentKind;
  revision: string;
  status: string;
  statusId: number;
  assignedUserId: string;
  now: string;
}) {
  const { accountId, documentId, kind, revision, status, statusId, assignedUserId, now } = options;
  return {
    accountId,
    documentId,
    kind,
    number: 0,
    numberKey: "",
    revision,
    status,
    statusId,
    assignedUserId,
    amountPaidMinor: 0,
    paymentCount: 0,
    pageCount: 0,
    lineCount: 0,
    searchText: "",
    createdAt: now,
    updatedAt: now,
  };
}

/**
 * The fields every stored line of a priced party document has (estimates and purchase orders;
 * each kind adds its price or cost and its amounts): the item snapshot, the quantity and the rates.
 */
export interface PartyDocumentLine extends StoredLine {
  lineType: "inventory" | "service" | "discount";
  itemId?: string;
  variationId?: string;
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
}

/** A priced line's money fields as `computeTotals` takes them (`unitPrice` is the line's price or cost). */
type PricedLineInput = Pick<PartyDocumentLine, "quantity" | "discountPercent" | "taxRate" | "tax2Rate">;

/** Prices `items` (the non-discount lines) with the document's discount and shipping fee. */
export function totalsOfLines<L extends PricedLineInput>(
  items: readonly L[],
  unitPriceOf: (line: L) => string,
  discountPercent: string,
  shippingFee: string,
): DocumentTotals {
  return computeTotals(
    items.map((line) => ({
      quantity: line.quantity,
      unitPrice: unitPriceOf(line),
      discountPercent: line.discountPercent,
      taxRate: line.taxRate,
      tax2Rate: line.tax2Rate,
    })),
    discountPercent,
    shippingFee,
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

/**
 * Sets the derived list fields of a party document in place: `itemIds` (the lines' distinct
 * items, absent without any) and `searchText` (party name, custom number and name).
 */
export function setListFields(next: DocumentItem, lines: readonly (StoredLine & { itemId?: string })[]): DocumentItem {
  const itemIds = [...new Set(lines.flatMap((line) => (line.itemId ? [line.itemId] : [])))];
  if (itemIds.length > 0) next.itemIds = itemIds;
  else delete next.itemIds;
  next.searchText = [next.partyName, next.customNumber, next.name].filter(Boolean).join(" ").toLowerCase();
  return next;
}
