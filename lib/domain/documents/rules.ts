/** The rules every document kind shares (visibility, dates, text fields, line replacement, no-op writes, ETags): pure, no storage. */
import { seesOwnedBy } from "../common/ownership.js";
import type { StoredLine } from "../../db/document-lines.js";
import type { LocationScoped } from "../../core/document-scope.js";
import { hasPermission, type Permission, type Principal } from "../../auth/permissions.js";
import { errors, type ValidationDetail } from "../../core/errors.js";
import { canonicalJson, type IdempotencyCompletion } from "../../core/idempotency.js";
import { sameRecord } from "../../core/records.js";
import { dateInZone, isValidZone } from "../../core/time-zones.js";
import type { DocumentKind } from "../../db/entities/document.js";
import type { AccountItem, DocumentItem } from "../../db/service.js";
import { mayReachDocument } from "../common/location-access.js";

const zoneOrUndefined = (zone: string | null | undefined) => (isValidZone(zone) ? zone : undefined);

/**
 * Header attributes that alone are no reason to write: those a write moves by itself (and
 * `itemIds` and a sales order's packing facts, derived from the lines), and the related values a write refreshes
 * from their records (the party's contact details and kind, the location's name, the account's
 * tax labels and packing settings), which the document shows current anyway or takes along with
 * a real change. So a body read back after a customer or location edit still changes nothing.
 */
const BOOKKEEPING: ReadonlySet<string> = new Set([
  "revision",
  "updatedAt",
  "itemIds",
  "packingStarted",
  "unpackedLocationIds",
  "unpackedServiceLines",
  "partyDetails",
  "partyKind",
  "locationName",
  "taxLabel",
  "tax2Label",
  "packingListsEnabled",
  "packingServiceItems",
]);

/** Kinds whose visibility follows the assigned user (stock transfers are account-wide). */
export const ASSIGNEE_BOUNDED: ReadonlySet<DocumentKind> = new Set(["purchase_order", "estimate", "sales_order", "invoice"]);

/** The owner-counter attribute of each kind (documents assigned to a user). */
export const OWNER_COUNT_FIELD: Record<DocumentKind, string> = {
  purchase_order: "purchaseOrderCount",
  stock_transfer: "stockTransferCount",
  estimate: "estimateCount",
  sales_order: "salesOrderCount",
  invoice: "invoiceCount",
};

/**
 * Whether the caller may see (and so act on) a document: the assignee boundary (every one with
 * `records.view_all`, else those assigned to them) and the location rule (`mayReachDocument`).
 * `lines`, when the caller read them, decide the document's locations.
 */
export function canSeeDocument(
  principal: Principal,
  header: Pick<DocumentItem, "kind" | "assignedUserId"> & LocationScoped,
  lines?: readonly Record<string, unknown>[],
): boolean {
  const assigneeVisible = !ASSIGNEE_BOUNDED.has(header.kind) || seesOwnedBy(principal, header.assignedUserId);
  return assigneeVisible && mayReachDocument(principal, header, lines);
}

/** A list's `status_id` filter: a known id of the kind's statuses, else -1 (matches nothing). */
export function statusIdFilter(statusId: string | number | undefined, statuses: Record<string, { id: number }>): number | undefined {
  if (statusId === undefined) return undefined;
  const id = Number(statusId);
  return Object.values(statuses).some((status) => status.id === id) ? id : -1;
}

/** Today's date (YYYY-MM-DD) in the caller's time zone, else the account's, else UTC. */
export function localToday(principal: Principal, account: Pick<AccountItem, "timeZone"> | undefined, now: Date = new Date()): string {
  return dateInZone(zoneOrUndefined(principal.timeZone) ?? zoneOrUndefined(account?.timeZone) ?? "UTC", now);
}

/** Today's date in the account's time zone (the spec's "current account-timezone date"). */
export function accountToday(account: Pick<AccountItem, "timeZone"> | undefined, now: Date = new Date()): string {
  return dateInZone(zoneOrUndefined(account?.timeZone) ?? "UTC", now);
}

export const orNull = <T>(value: T | undefined): T | null => (value === undefined ? null : value);

/**
 * The optional text fields of a document create or update, as header attributes: a value sets
 * the attribute, `null` or `""` clears it (listed in `cleared`), an absent field changes nothing.
 * `fields` maps request fields to header attributes.
 */
export function documentTextFields<I extends Record<string, unknown>>(
  input: I,
  fields: readonly (readonly [keyof I & string, keyof DocumentItem])[],
): { set: Partial<DocumentItem>; cleared: (keyof DocumentItem)[] } {
  const set: Record<string, unknown> = {};
  const cleared: (keyof DocumentItem)[] = [];
  for (const [field, attribute] of fields) {
    const value = input[field] as string | null | undefined;
    if (value === undefined) continue;
    if (value === null || value === "") cleared.push(attribute);
    else set[attribute] = value;
  }
  return { set: set as Partial<DocumentItem>, cleared };
}

/**
 * Complete line replacement (spec part 2: purchase orders, estimates, invoices, transfers): the
 * request's lines are the complete desired list; an `id` keeps that stored line's identity, no
 * `id` adds a line, a stored line left out is removed. Ids must belong to the document's active
 * non-discount lines and appear once (422 naming `lines[i].id`); the list holds at most
 * max(`createLimit`, the document's current line count) (`assertUpdateLineCount`). Returns, per requested line,
 * the stored line it updates (or undefined for a new line).
 */
export function matchReplacementLines<L extends StoredLine>(
  stored: readonly L[],
  requested: readonly { id?: string | null }[],
  createLimit: number,
  isReplaceable: (line: L) => boolean = () => true,
): (L | undefined)[] {
  assertUpdateLineCount(requested.length, createLimit, stored);
  const byId = new Map(stored.filter(isReplaceable).map((line) => [line.id, line]));
  const seen = new Set<string>();
  const details: ValidationDetail[] = [];
  const matched = requested.map((line, index) => {
    if (line.id === undefined || line.id === null) return undefined;
    const id = line.id.toLowerCase();
    if (seen.has(id)) details.push({ param: `lines[${index}].id`, code: "duplicate", message: "appears more than once." });
    seen.add(id);
    const existing = byId.get(id);
    if (!existing) details.push({ param: `lines[${index}].id`, code: "invalid_reference", message: "is not a line of this document." });
    return existing;
  });
  if (details.length > 0) throw errors.validationFailed(details);
  return matched;
}

/**
 * An update's `lines` may hold up to max(the kind's create limit, the document's current number
 * of non-discount lines) (architecture section 8): a document converted from a 500-line estimate
 * keeps every line editable. 422 `too_many` on `lines` beyond it.
 */
export function assertUpdateLineCount(requested: number, createLimit: number, stored: readonly StoredLine[]): void {
  const current = stored.filter((line) => line.lineType !== "discount").length;
  const limit = Math.max(createLimit, current);
  if (requested > limit) {
    throw errors.validationFailed([
      {
        param: "lines",
        code: "too_many",
        message: `must have at most ${limit} entries (${createLimit}, or as many lines as the document holds when it holds more).`,
      },
    ]);
  }
}

/**
 * Rebuilt lines followed by the stored generated discount line: pricing then keeps its id (a
 * replacement never carries it), so writing a document back as read changes no line id.
 */
export const withStoredDiscountLine = <L extends StoredLine>(rebuilt: readonly L[], stored: readonly L[]): L[] => [
  ...rebuilt,
  ...stored.filter((line) => line.lineType === "discount"),
];

/**
 * Whether an update would store exactly what is stored (architecture section 8, "What you read
 * you can write back ... changes nothing"): the header but for its revision and timestamp, and
 * every line. The caller then answers the document as it is, writing nothing (revision,
 * `updated_at`, stock and the change feed untouched).
 */
export function changesNothing(previous: DocumentItem, next: DocumentItem, storedLines: readonly StoredLine[], nextLines: readonly StoredLine[]): boolean {
  return sameRecord(previous, next, BOOKKEEPING) && canonicalJson(storedLines) === canonicalJson(nextLines);
}

/** Parses `ids` (at most 50 comma-separated UUIDs) or throws 422 `invalid_query_parameter` on `ids`. */
export function parseIds(raw: string): string[] {
  const ids = raw.split(",").map((id) => id.trim().toLowerCase());
  if (ids.length > 50) throw errors.invalidQueryParameter("ids", "ids accepts at most 50 UUIDs.");
  if (ids.some((id) => !/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(id))) {
    throw errors.invalidQueryParameter("ids", "ids must be comma-separated UUIDs.");
  }
  return ids;
}

/** The stored outcome of a write that answers with an ETag (so a replay carries it too). */
export function withEtag(completion: IdempotencyCompletion | undefined, revision: string): IdempotencyCompletion | undefined {
  return completion ? { ...completion, headers: { ...completion.headers, ETag: `"${revision}"` } } : undefined;
}

/** Requires `permission` of the caller (403 `permission_denied`). */
export function requireDocumentPermission(principal: Principal, permission: Permission, what: string): void {
  if (!hasPermission(principal, permission)) throw errors.permissionDenied(`This action requires the ${permission} permission (${what}).`);
}

/** The zero money fields of a document not priced yet (a stock transfer's for good: it moves stock, never money). */
export const NO_MONEY = {
  discountPercent: "0.000",
  subtotal: "0.0000",
  preDiscountTotal: "0.0000",
  discountTotal: "0.0000",
  shippingFee: "0.0000",
  shippingCost: "0.0000",
  tax: "0.0000",
  tax2: "0.0000",
  total: "0.0000",
} as const;

/** The counters of a document not written yet: nothing paid, no pages or lines, no search text, created and updated `now`. */
export const noCounters = (now: string) => ({
  amountPaidMinor: 0,
  paymentCount: 0,
  pageCount: 0,
  lineCount: 0,
  searchText: "",
  createdAt: now,
  updatedAt: now,
});

/** A document's status as the API shows it: its id and label. */
export const presentStatus = (status: { id: number; label: string }) => ({ status_id: status.id, status: status.label });

/**
 * The line a stock rule's refusal names (`lines[i].quantity`): of the lines that move the row the
 * rule broke (`moves`), the one with the largest quantity, the likeliest cause when several lines
 * share a row (the first of equals); -1 when no line moves it.
 */
export function lineBehindStockRule<L extends { quantity: number }>(lines: readonly L[], moves: (line: L) => boolean): number {
  let found = -1;
  lines.forEach((line, index) => {
    if (moves(line) && (found < 0 || line.quantity > lines[found]!.quantity)) found = index;
  });
  return found;
}

/** The first fields every document shows: `id`, `object` (its kind) and `<kind>_number`. */
export const presentIdentity = (header: Pick<DocumentItem, "documentId" | "number">, kind: DocumentKind) => ({
  id: header.documentId,
  object: kind,
  [`${kind}_number`]: header.number,
});

/** Whether the caller may edit a document, as the API shows it: `reason` is why not (null: it may). */
export const presentEditable = (reason: string | null) => ({ can_edit: reason === null, edit_block_reason: reason });

/** A priced document's discount totals and tax labels as its details show them. */
export const presentDiscountAndTaxLabels = (header: DocumentItem) => ({
  pre_discount_total: header.preDiscountTotal,
  discount_total: header.discountTotal,
  tax_label: orNull(header.taxLabel),
  tax_2_label: orNull(header.tax2Label),
});
