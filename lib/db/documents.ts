import { readToOffset } from "./offset-page.js";
import { packJson, unpackJson } from "./packing.js";
import { db, type DocumentItem, type DocumentLinesItem, type DocumentPaymentItem } from "./service.js";
import type { DocumentKind } from "./entities/document.js";
import { writeTransaction, type TransactionBuilder } from "./transactions.js";

/**
 * Document storage, written once for every kind (architecture section 8, "Document storage").
 *
 * A document is a header item plus its lines in line pages, all in one partition:
 * - read: ONE Query of the partition (`readDocumentTree`) returns the header, every page and
 *   the payments;
 * - write: the header and every page go into the caller's ONE transaction (`addDocumentWrite`),
 *   with its counters and stock; an update puts the new pages and deletes the surplus ones.
 * The lines are stored as one compressed JSON text (`encodeDocumentLines`) split into pages of
 * at most `MAX_PAGE_BYTES`. Limits, so that every document stays atomic and readable in one
 * request: at most `MAX_DOCUMENT_LINE_BYTES` compressed (header and pages then fit one Query
 * response of 1 MB; a transaction with the stored response of an idempotent request stays far
 * below 4 MB) and `MAX_DOCUMENT_LINE_JSON_BYTES` of JSON (a response stays below Lambda's 6 MB).
 * A 500-line estimate with 4,000-character natural-language descriptions is ~2.2 MB of JSON and
 * ~700 KB compressed: 2 pages.
 */

/** A stored line: the document kind's own shape, with a stable `id`. */
export type StoredLine = { id: string } & Record<string, unknown>;

export interface DocumentTree {
  header: DocumentItem;
  /** Lines in stored order. */
  lines: StoredLine[];
  payments: DocumentPaymentItem[];
}

/** Compressed line data per page: far below DynamoDB's 400 KB per item. */
export const MAX_PAGE_BYTES = 350 * 1024;
/** Compressed line data per document: with the header, within one Query response (1 MB). */
export const MAX_DOCUMENT_LINE_BYTES = 900 * 1024;
/** Line JSON per document: the response that carries it stays below Lambda's 6 MB payload. */
export const MAX_DOCUMENT_LINE_JSON_BYTES = 4 * 1024 * 1024;

/** `locationScope` of a document that names no location (e.g. a service-only invoice). */
export const NO_LOCATION = "none";
/** `locationScope` of a document at more than one location. */
export const SEVERAL_LOCATIONS = "several";

export type LocationScoped = Pick<DocumentItem, "locationId" | "originLocationId" | "destinationLocationId" | "locationScope">;

/**
 * Where a document is: the one location its header (`locationId`, a transfer's origin and
 * destination) and its lines (`locationId` of each line's stock row) name, `none` or `several`.
 * Without `lines`, the scope its last write stored (or its header's, for a document written
 * before scopes were stored).
 */
export function locationScopeOf(header: LocationScoped, lines?: readonly Record<string, unknown>[]): string {
  if (lines === undefined && header.locationScope) return header.locationScope;
  const ids = new Set<string>();
  for (const id of [header.locationId, header.originLocationId, header.destinationLocationId]) if (id) ids.add(id);
  for (const line of lines ?? []) if (typeof line.locationId === "string" && line.locationId) ids.add(line.locationId);
  return ids.size === 0 ? NO_LOCATION : ids.size === 1 ? [...ids][0]! : SEVERAL_LOCATIONS;
}

/** The zero-padded sort key of a document number (lists sort by it). */
export const numberKeyOf = (number: number): string => String(number).padStart(10, "0");

/** Lines over the storage limits: the writer answers 422 naming `lines`. */
export class DocumentTooLargeError extends Error {
  constructor(
    readonly bytes: number,
    readonly limit: number,
    /** `stored`: compressed bytes; `json`: JSON bytes. */
    readonly measure: "stored" | "json",
  ) {
    super(`The lines take ${bytes} bytes (${measure}); a document holds at most ${limit}.`);
    this.name = "DocumentTooLargeError";
  }
}

/** A document's lines ready to store: the compressed pages (encode once, write in any attempt). */
export interface EncodedLines {
  lines: readonly StoredLine[];
  pages: Uint8Array[];
  /** Compressed bytes (stored). */
  bytes: number;
  /** JSON bytes (as a response carries them). */
  jsonBytes: number;
}

/** Compresses lines into pages; throws `DocumentTooLargeError` beyond the document limits. */
export function encodeDocumentLines(lines: readonly StoredLine[]): EncodedLines {
  const { chunks, bytes, jsonBytes } = packJson(lines, MAX_PAGE_BYTES);
  if (jsonBytes > MAX_DOCUMENT_LINE_JSON_BYTES) throw new DocumentTooLargeError(jsonBytes, MAX_DOCUMENT_LINE_JSON_BYTES, "json");
  if (bytes > MAX_DOCUMENT_LINE_BYTES) throw new DocumentTooLargeError(bytes, MAX_DOCUMENT_LINE_BYTES, "stored");
  return { lines, pages: chunks, bytes, jsonBytes };
}

const isEncoded = (lines: readonly StoredLine[] | EncodedLines): lines is EncodedLines => !Array.isArray(lines);

/** The lines of a partition's pages (compressed pages, or older pages holding plain lists). */
function decodePages(pages: readonly DocumentLinesItem[]): StoredLine[] {
  const ordered = [...pages].sort((a, b) => a.page - b.page);
  if (ordered.length === 0) return [];
  if (ordered[0]!.packed !== undefined) return unpackJson<StoredLine[]>(ordered.map((page) => page.packed as Uint8Array));
  return ordered.flatMap((page) => (page.lines ?? []) as StoredLine[]);
}

/** A document with its lines and payments, in ONE strongly consistent Query of its partition. */
export async function readDocumentTree(accountId: string, documentId: string): Promise<DocumentTree | undefined> {
  const { data } = await db().collections.documentTree({ accountId, documentId }).go({ pages: "all", consistent: true });
  const header = data.document[0];
  if (!header) return undefined;
  return {
    header,
    lines: decodePages(data.documentLines as DocumentLinesItem[]),
    payments: data.documentPayment as DocumentPaymentItem[],
  };
}

export async function readDocumentHeader(accountId: string, documentId: string): Promise<DocumentItem | undefined> {
  const { data } = await db().entities.document.get({ accountId, documentId }).go({ consistent: true });
  return data ?? undefined;
}

/** Several headers in one BatchGetItem (missing ones are absent), in the order asked. */
export async function readDocumentHeaders(accountId: string, documentIds: readonly string[]): Promise<DocumentItem[]> {
  if (documentIds.length === 0) return [];
  const { data } = await db()
    .entities.document.get([...new Set(documentIds)].map((documentId) => ({ accountId, documentId })))
    .go({ consistent: true, preserveBatchOrder: true });
  return data.filter((item): item is DocumentItem => Boolean(item));
}

/** The label of a document's header in a transaction (its condition: unchanged since read). */
export const DOCUMENT_LABEL = "document";

/**
 * Adds a document's header and line pages to the caller's transaction.
 * - create (`previous` absent): the header must not exist yet;
 * - update: the header is replaced on condition that its revision is still
 *   `previous.revision` (and `condition`, e.g. a status, holds); `lines` absent keeps the pages.
 * `lines` may come encoded already (`encodeDocumentLines`: a retried transaction then does not
 * compress again); plain lines are encoded here and may throw `DocumentTooLargeError`.
 */
export function addDocumentWrite(
  tx: TransactionBuilder,
  options: {
    header: DocumentItem;
    lines?: readonly StoredLine[] | EncodedLines;
    previous?: Pick<DocumentItem, "revision" | "pageCount">;
    condition?: (attributes: Record<string, unknown>, operations: Record<string, (...args: unknown[]) => string>) => string;
  },
): void {
  const { header, previous } = options;
  const encoded = options.lines === undefined ? undefined : isEncoded(options.lines) ? options.lines : encodeDocumentLines(options.lines);
  const pages = encoded?.pages;
  const next: DocumentItem = {
    ...header,
    pageCount: pages === undefined ? (previous?.pageCount ?? header.pageCount) : pages.length,
    lineCount: encoded === undefined ? header.lineCount : encoded.lines.length,
    locationScope: locationScopeOf(header, encoded?.lines),
  };
  const e = tx.entities;
  if (!previous) {
    tx.add(DOCUMENT_LABEL, e.document.create(next).commit());
  } else {
    tx.add(
      DOCUMENT_LABEL,
      e.document
        .put(next)
        .where((attributes, operations) => {
          const parts = [operations.eq(attributes.revision, previous.revision)];
          if (options.condition) parts.push(`(${options.condition(attributes as never, operations as never)})`);
          return parts.join(" AND ");
        })
        .commit(),
    );
  }
  if (pages === undefined) return;
  pages.forEach((packed, page) => {
    tx.add("document lines", e.documentLines.put({ accountId: header.accountId, documentId: header.documentId, page, packed }).commit());
  });
  for (let page = pages.length; page < (previous?.pageCount ?? 0); page++) {
    tx.add("document lines", e.documentLines.delete({ accountId: header.accountId, documentId: header.documentId, page }).commit());
  }
}

/**
 * Adds the deletion of a document (header on condition of its revision, and `condition` when
 * given, every page and every payment) to the caller's transaction.
 */
export function addDocumentDelete(
  tx: TransactionBuilder,
  tree: DocumentTree,
  condition?: (attributes: Record<string, unknown>, operations: Record<string, (...args: unknown[]) => string>) => string,
): void {
  const { accountId, documentId, revision, pageCount } = tree.header;
  const e = tx.entities;
  tx.add(
    DOCUMENT_LABEL,
    e.document
      .delete({ accountId, documentId })
      .where((attributes, operations) => {
        const parts = [operations.eq(attributes.revision, revision)];
        if (condition) parts.push(`(${condition(attributes as never, operations as never)})`);
        return parts.join(" AND ");
      })
      .commit(),
  );
  for (let page = 0; page < pageCount; page++) tx.add("document lines", e.documentLines.delete({ accountId, documentId, page }).commit());
  for (const payment of tree.payments) tx.add("payment", e.documentPayment.delete({ accountId, documentId, paymentId: payment.paymentId }).commit());
}

/** Which documents a list reads: a kind of the account, or only those assigned to one user. */
export interface DocumentScope {
  accountId: string;
  kind: DocumentKind;
  assignedUserId?: string;
}

/** Filters of document lists, applied in the index Query (FilterExpression). */
export interface DocumentFilter {
  statusId?: number;
  partyId?: string;
  locationId?: string;
  originLocationId?: string;
  destinationLocationId?: string;
  assignedUserId?: string;
  /** Only documents whose `locationScope` is one of these (a location-restricted caller's). */
  locationScopes?: readonly string[];
  /** Inclusive ranges on stored `YYYY-MM-DD` dates (or ISO instants: `expiryInstant`); an attribute may appear twice. */
  dates?: { attribute: "issueDate" | "expiryDate" | "dateRequested" | "dateNeeded" | "dateReceived" | "expiryInstant"; from?: string; to?: string }[];
  /** `searchText` contains `needle`, or the number equals `number`. */
  text?: { needle: string; number?: number };
}

export const isEmptyFilter = (filter: DocumentFilter): boolean =>
  filter.statusId === undefined &&
  !filter.partyId &&
  !filter.locationId &&
  !filter.originLocationId &&
  !filter.destinationLocationId &&
  !filter.assignedUserId &&
  !filter.locationScopes &&
  !(filter.dates ?? []).some((range) => range.from || range.to) &&
  !filter.text;

function scopeQuery(scope: DocumentScope) {
  const documents = db().entities.document.query;
  return scope.assignedUserId
    ? documents.byAssignee({ accountId: scope.accountId, kind: scope.kind, assignedUserId: scope.assignedUserId })
    : documents.byNumber({ accountId: scope.accountId, kind: scope.kind });
}

/**
 * Documents at positions [offset, offset + limit) of a scope, newest number first: one index
 * Query that stops at the page's end.
 */
export async function queryDocumentPage(scope: DocumentScope, offset: number, limit: number): Promise<DocumentItem[]> {
  return readToOffset<DocumentItem>(offset, limit, (cursor, want) => scopeQuery(scope).go({ cursor, limit: want, order: "desc" }));
}

/** Every document of a scope that passes `filter`, newest number first (reads the scope). */
export async function searchDocuments(scope: DocumentScope, filter: DocumentFilter): Promise<DocumentItem[]> {
  const { data } = await scopeQuery(scope)
    .where((a, op) => {
      const parts: string[] = [];
      if (filter.statusId !== undefined) parts.push(op.eq(a.statusId, filter.statusId));
      if (filter.partyId) parts.push(op.eq(a.partyId, filter.partyId));
      if (filter.locationId) parts.push(op.eq(a.locationId, filter.locationId));
      if (filter.originLocationId) parts.push(op.eq(a.originLocationId, filter.originLocationId));
      if (filter.destinationLocationId) parts.push(op.eq(a.destinationLocationId, filter.destinationLocationId));
      if (filter.assignedUserId) parts.push(op.eq(a.assignedUserId, filter.assignedUserId));
      if (filter.locationScopes) parts.push(`(${filter.locationScopes.map((scope) => op.eq(a.locationScope, scope)).join(" OR ")})`);
      for (const range of filter.dates ?? []) {
        if (range.from) parts.push(op.gte(a[range.attribute], range.from));
        if (range.to) parts.push(op.lte(a[range.attribute], range.to));
      }
      if (filter.text) {
        const text = [op.contains(a.searchText, filter.text.needle)];
        if (filter.text.number !== undefined) text.push(op.eq(a.number, filter.text.number));
        parts.push(`(${text.join(" OR ")})`);
      }
      return parts.join(" AND ");
    })
    .go({ pages: "all", order: "desc" });
  return data;
}

/**
 * Brings an item's reference by one document to `active` as of the document state `at` (its
 * `updatedAt`): a real transition moves the item's `documentCount` by one in the same
 * transaction; an older or repeated state changes nothing (stream redelivery is harmless).
 * Run by the stream processor from document headers' `itemIds`, so an item is refused deletion
 * while a document references it (eventually consistent, within the sync lag).
 */
export async function setItemReference(accountId: string, itemId: string, documentId: string, active: boolean, at: string): Promise<void> {
  const reference = (tx: TransactionBuilder) =>
    tx.add(
      "reference",
      tx.entities.itemReference
        .upsert({ accountId, itemId, documentId, active, at, expiresAt: active ? undefined : Math.floor(Date.now() / 1000) + 30 * 86_400 })
        .where(({ at: stored, active: was }, { notExists, lt, ne }) => `(${notExists(stored)} OR ${lt(stored, at)}) AND (${notExists(was)} OR ${ne(was, active)})`)
        .commit(),
    );
  const counted = await writeTransaction((tx) => {
    reference(tx);
    tx.add("item", tx.entities.item.patch({ accountId, itemId }).add({ documentCount: active ? 1 : -1 }).commit());
  });
  if (!counted || counted.failed("reference")) return; // done, or stale / no transition
  // The item is gone: record the reference alone (nothing left to count).
  await writeTransaction(reference);
}

/** Items' references of one document state (`itemIds` of a header image), a few at a time. */
export async function applyDocumentReferences(
  accountId: string,
  documentId: string,
  at: string,
  transitions: readonly { itemId: string; active: boolean }[],
): Promise<void> {
  const queue = [...transitions];
  await Promise.all(
    Array.from({ length: Math.min(8, queue.length) }, async () => {
      for (let next = queue.shift(); next !== undefined; next = queue.shift()) await setItemReference(accountId, next.itemId, documentId, next.active, at);
    }),
  );
}
