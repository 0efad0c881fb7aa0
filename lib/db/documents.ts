import { DocumentTooLargeError } from "../core/failures.js";
import { factsText, readListEntries, readListPartitions, type ListEntry, type ListPartition } from "./listing.js";
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

/** One payment of a document (strongly consistent), if it exists. */
export async function readDocumentPayment(accountId: string, documentId: string, paymentId: string): Promise<DocumentPaymentItem | undefined> {
  const { data } = await db().entities.documentPayment.get({ accountId, documentId, paymentId }).go({ consistent: true });
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
  Object.assign(next, documentListing(next));
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

/** Filters of document lists, answered from the list indexes (`lib/db/listing.ts`). */
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
  dates?: { attribute: DateAttribute; from?: string; to?: string }[];
  /** `searchText` contains `needle`, or the number equals `number`. */
  text?: { needle: string; number?: number };
}

type DateAttribute = "issueDate" | "expiryDate" | "dateRequested" | "dateNeeded" | "dateReceived" | "expiryInstant";

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

/**
 * What a document's list entries carry (`lxf`, short names: an entry stays a few hundred
 * bytes): the number and every attribute a document list filters on.
 */
interface DocumentFacts {
  n: number;
  s: number;
  p?: string;
  l?: string;
  o?: string;
  d?: string;
  a: string;
  c?: string;
  t?: string;
  i?: string;
  e?: string;
  rq?: string;
  nd?: string;
  rc?: string;
  x?: string;
}

const DATE_FACT: Record<DateAttribute, keyof DocumentFacts> = {
  issueDate: "i",
  expiryDate: "e",
  dateRequested: "rq",
  dateNeeded: "nd",
  dateReceived: "rc",
  expiryInstant: "x",
};

/** The list attributes of a header (hidden attributes: reads never return them). */
export type DocumentListing = Record<
  "lx1pk" | "lx2pk" | "lx3pk" | "lx4pk" | "lx5pk" | "lx6pk" | "lx7pk" | "lxsk" | "lx7sk" | "lxf" | "lxn",
  string | undefined
>;

/** The partition-key prefix of a kind's list entries. */
const listBase = (accountId: string, kind: DocumentKind) => `${accountId}#${kind}`;

/** Where a stock transfer is found by location: its origin (`lx4`) and destination (`lx5`). */
const isTransfer = (kind: DocumentKind) => kind === "stock_transfer";

/**
 * A document header's list attributes (`lib/db/listing.ts`), derived from the header:
 * `lx1` every document of the kind, `lx2` by status, `lx3` by party, `lx4` by location (a
 * transfer's origin), `lx5` by location scope (a transfer's destination), `lx6` by assigned
 * user, `lx7` by issue date; all but `lx7` sorted by number.
 */
export function documentListing(header: DocumentItem): DocumentListing {
  const base = listBase(header.accountId, header.kind);
  const transfer = isTransfer(header.kind);
  const location = transfer ? header.originLocationId : header.locationId;
  const scope = header.locationScope ?? locationScopeOf(header);
  const facts: DocumentFacts = {
    n: header.number,
    s: header.statusId,
    p: header.partyId,
    l: header.locationId,
    o: header.originLocationId,
    d: header.destinationLocationId,
    a: header.assignedUserId,
    c: scope,
    t: header.searchText,
    i: header.issueDate,
    e: header.expiryDate,
    rq: header.dateRequested,
    nd: header.dateNeeded,
    rc: header.dateReceived,
    x: header.expiryInstant,
  };
  return {
    lx1pk: base,
    lx2pk: `${base}#s#${header.statusId}`,
    lx3pk: header.partyId ? `${base}#p#${header.partyId}` : undefined,
    lx4pk: location ? `${base}#l#${location}` : undefined,
    lx5pk: transfer ? (header.destinationLocationId ? `${base}#d#${header.destinationLocationId}` : undefined) : `${base}#c#${scope}`,
    lx6pk: `${base}#a#${header.assignedUserId}`,
    lx7pk: header.issueDate ? `${base}#i` : undefined,
    lxsk: header.numberKey,
    lx7sk: header.issueDate ? `${header.issueDate}#${header.numberKey}` : undefined,
    lxf: factsText(facts as unknown as Record<string, unknown>),
    // `lx1` serves text searches and the dates without an index of their own: no ids.
    lxn: factsText({ n: facts.n, t: facts.t, e: facts.e, rq: facts.rq, nd: facts.nd, rc: facts.rc, x: facts.x }),
  };
}

/** Whether a document's facts pass every filter of the list (and its scope). */
function factsMatch(facts: DocumentFacts, scope: DocumentScope, filter: DocumentFilter): boolean {
  if (scope.assignedUserId && facts.a !== scope.assignedUserId) return false;
  if (filter.statusId !== undefined && facts.s !== filter.statusId) return false;
  if (filter.partyId && facts.p !== filter.partyId) return false;
  if (filter.locationId && facts.l !== filter.locationId) return false;
  if (filter.originLocationId && facts.o !== filter.originLocationId) return false;
  if (filter.destinationLocationId && facts.d !== filter.destinationLocationId) return false;
  if (filter.assignedUserId && facts.a !== filter.assignedUserId) return false;
  if (filter.locationScopes && !filter.locationScopes.includes(facts.c ?? "")) return false;
  for (const range of filter.dates ?? []) {
    const value = facts[DATE_FACT[range.attribute]] as string | undefined;
    if ((range.from || range.to) && value === undefined) return false;
    if (range.from && value! < range.from) return false;
    if (range.to && value! > range.to) return false;
  }
  if (filter.text && !(facts.t ?? "").includes(filter.text.needle) && facts.n !== filter.text.number) return false;
  return true;
}

/**
 * The most selective list partitions that hold every match of a filtered list (the others
 * filters are applied to the entries' facts): a party, then a location, an assigned user, the
 * location scopes of a restricted caller, a status, an issue-date range, else every document of
 * the kind (a text search, or a date other than the issue date: `lx1` entries hold only the
 * number, the searchable text and the dates, `lxn`).
 */
function partitionsOf(scope: DocumentScope, filter: DocumentFilter): ListPartition[] {
  const base = listBase(scope.accountId, scope.kind);
  const transfer = isTransfer(scope.kind);
  const location = transfer ? filter.originLocationId : filter.locationId;
  const assignee = filter.assignedUserId ?? scope.assignedUserId;
  if (filter.partyId) return [{ index: "lx3", pk: `${base}#p#${filter.partyId}` }];
  if (location) return [{ index: "lx4", pk: `${base}#l#${location}` }];
  if (transfer && filter.destinationLocationId) return [{ index: "lx5", pk: `${base}#d#${filter.destinationLocationId}` }];
  if (assignee) return [{ index: "lx6", pk: `${base}#a#${assignee}` }];
  if (!transfer && filter.locationScopes) return filter.locationScopes.map((value) => ({ index: "lx5", pk: `${base}#c#${value}` }));
  if (filter.statusId !== undefined) return [{ index: "lx2", pk: `${base}#s#${filter.statusId}` }];
  const issued = (filter.dates ?? []).filter((range) => range.attribute === "issueDate" && (range.from || range.to));
  if (issued.length > 0) {
    // The intersection of the issue-date ranges; `#` sorts below digits, so `to#~` ends after every number of that day.
    const from = issued.reduce<string | undefined>((max, range) => (range.from && (!max || range.from > max) ? range.from : max), undefined);
    const to = issued.reduce<string | undefined>((min, range) => (range.to && (!min || range.to < min) ? range.to : min), undefined);
    return [{ index: "lx7", pk: `${base}#i`, from: from ? `${from}#` : undefined, to: to ? `${to}#~` : undefined }];
  }
  return [{ index: "lx1", pk: base }];
}

/** The document id of a list entry (its table partition key ends with it). */
const documentIdOf = (entry: ListEntry<unknown>): string => /documentid_([^#]+)$/.exec(entry.pk)![1]!;

/** Headers by id, in the order asked, eventually consistent (a list page; missing ones left out). */
async function readListedHeaders(accountId: string, documentIds: readonly string[]): Promise<DocumentItem[]> {
  if (documentIds.length === 0) return [];
  const { data } = await db()
    .entities.document.get(documentIds.map((documentId) => ({ accountId, documentId })))
    .go({ preserveBatchOrder: true });
  return data.filter((item): item is DocumentItem => Boolean(item));
}

/**
 * One page of a filtered list, newest number first, and the number of matches: the entries of
 * the most selective list partition (`partitionsOf`, keys and facts only), every filter applied
 * to their facts, then ONE BatchGetItem of the page's headers. Reads grow with the matches of
 * that partition (a few hundred bytes each) and the page, never with the documents of the
 * account.
 */
export async function searchDocumentPage(
  scope: DocumentScope,
  filter: DocumentFilter,
  offset: number,
  limit: number,
): Promise<{ total: number; headers: DocumentItem[] }> {
  if (filter.assignedUserId && scope.assignedUserId && filter.assignedUserId !== scope.assignedUserId) return { total: 0, headers: [] };
  const entries = await readListPartitions<DocumentFacts>(partitionsOf(scope, filter));
  const matches = entries.filter((entry) => factsMatch(entry.facts, scope, filter)).sort((a, b) => b.facts.n - a.facts.n);
  const page = matches.slice(offset, offset + limit);
  return { total: matches.length, headers: await readListedHeaders(scope.accountId, page.map(documentIdOf)) };
}

/** A kind's sequence as lists need it: the last number handed out and the documents that exist. */
export interface KindSequence {
  value: number;
  count: number;
}

/** The sequence of a kind (strongly consistent: the list total). */
export async function readKindSequence(accountId: string, kind: DocumentKind): Promise<KindSequence> {
  const { data } = await db().entities.sequence.get({ accountId, name: kind }).go({ consistent: true });
  return { value: data?.value ?? 0, count: data?.count ?? 0 };
}

/** The name of the item holding a kind's deleted numbers. */
const removedName = (kind: DocumentKind) => `${kind}.removed`;

/** Adds a deleted document's number to its kind's deleted numbers (in the delete's transaction). */
export function addRemovedNumber(tx: TransactionBuilder, accountId: string, kind: DocumentKind, number: number): void {
  tx.add(
    "removed number",
    tx.entities.sequence
      .update({ accountId, name: removedName(kind) })
      .add({ removed: [number] })
      .commit(),
  );
}

/**
 * The number at position `offset` (0 = newest) of a kind whose numbers `1..value` were handed
 * out without gaps, less the deleted ones: `value - offset`, moved down past every deleted
 * number at or above it. Undefined when the deleted numbers do not account for every gap (a
 * deletion from before they were kept).
 */
export function numberAtOffset(sequence: KindSequence, removed: readonly number[], offset: number): number | undefined {
  if (sequence.value - sequence.count !== removed.length) return undefined;
  let number = sequence.value - offset;
  for (const gone of [...removed].sort((a, b) => b - a)) {
    if (gone >= number) number -= 1;
    else break;
  }
  return number;
}

/**
 * Documents at positions [offset, offset + limit) of a scope, newest number first:
 * - page 1: one index Query that stops at the page's end;
 * - a deeper page of the account's documents of a kind: numbers are handed out without gaps,
 *   so the page starts at a number computed from the sequence (`sequence`) and the deleted
 *   numbers (one small item, read only when the kind has deletions): one Query of `limit`
 *   headers from there;
 * - a deeper page of one assignee's documents: the keys before it are skipped on their list
 *   index (`lx6`, keys and facts only), then one BatchGetItem reads the page.
 */
export async function queryDocumentPage(scope: DocumentScope, offset: number, limit: number, sequence?: KindSequence): Promise<DocumentItem[]> {
  const documents = db().entities.document.query;
  if (offset === 0) {
    const query = scope.assignedUserId
      ? documents.byAssignee({ accountId: scope.accountId, kind: scope.kind, assignedUserId: scope.assignedUserId })
      : documents.byNumber({ accountId: scope.accountId, kind: scope.kind });
    return (await query.go({ limit, order: "desc" })).data;
  }
  if (scope.assignedUserId) {
    const entries = await readListEntries<DocumentFacts>(
      { index: "lx6", pk: `${listBase(scope.accountId, scope.kind)}#a#${scope.assignedUserId}` },
      { descending: true, limit: offset + limit },
    );
    return readListedHeaders(scope.accountId, entries.slice(offset).map(documentIdOf));
  }
  const known = sequence ?? (await readKindSequence(scope.accountId, scope.kind));
  const removed =
    known.value === known.count
      ? []
      : ((
          await db()
            .entities.sequence.get({ accountId: scope.accountId, name: removedName(scope.kind) })
            .go()
        ).data?.removed ?? []);
  const start = numberAtOffset(known, removed, offset);
  if (start === undefined) {
    // Deletions from before deleted numbers were kept: read the index to the page (the old way).
    return readToOffset<DocumentItem>(offset, limit, (cursor, want) =>
      documents.byNumber({ accountId: scope.accountId, kind: scope.kind }).go({ cursor, limit: want, order: "desc" }),
    );
  }
  if (start < 1) return [];
  const { data } = await documents
    .byNumber({ accountId: scope.accountId, kind: scope.kind })
    .lte({ numberKey: numberKeyOf(start) })
    .go({ limit, order: "desc" });
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
        .where(
          ({ at: stored, active: was }, { notExists, lt, ne }) => `(${notExists(stored)} OR ${lt(stored, at)}) AND (${notExists(was)} OR ${ne(was, active)})`,
        )
        .commit(),
    );
  const counted = await writeTransaction((tx) => {
    reference(tx);
    tx.add(
      "item",
      tx.entities.item
        .patch({ accountId, itemId })
        .add({ documentCount: active ? 1 : -1 })
        .commit(),
    );
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
