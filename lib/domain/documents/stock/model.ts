import type { DocumentFilter } from "../../../db/document-lists.js";
import type { StoredLine } from "../../../db/document-lines.js";
import type { DocumentKind } from "../../../db/entities/document.js";
import type { DocumentItem } from "../../../db/service.js";
import { noCounters } from "../rules.js";

/**
 * Pure header and pricing helpers that purchase orders and stock transfers share, and that
 * estimates use too (candidates for `documents.ts` once the sales side takes them): a new
 * header's fixed fields, the list text filter, the item ids and search text (the line fields and
 * the header totals are in `../totals.ts`). No storage here (type-only imports).
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
    ...noCounters(now),
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
