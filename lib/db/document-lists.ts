/**
 * Document lists (architecture section 8): the list attributes a header carries
 * (`documentListing`, `lib/db/listing.ts`), filtered searches over them, and numbered pages of
 * a kind read through its sequence and its deleted numbers.
 */
import { batchGetAll, inOrderOf } from "./batch-get.js";
import { locationScopeOf, numberKeyOf } from "../core/document-scope.js";
import { factsText, readListEntries, readListPartitions, type ListEntry, type ListPartition } from "./listing.js";
import { readToOffset } from "./offset-page.js";
import { db, type DocumentItem } from "./service.js";
import type { DocumentKind } from "./entities/document.js";
import type { TransactionBuilder } from "./transactions.js";

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

/**
 * The latest issue date among a party's documents of the kind, leaving out the one numbered
 * `exceptNumber` (the document being deleted, moved or redated): one Query of the party's list
 * partition (`lx3`, keys and facts only). Undefined when there is none.
 */
export async function latestIssueDate(accountId: string, kind: DocumentKind, partyId: string, exceptNumber: number): Promise<string | undefined> {
  const entries = await readListEntries<DocumentFacts>({ index: "lx3", pk: `${listBase(accountId, kind)}#p#${partyId}` });
  let latest: string | undefined;
  for (const { facts } of entries) if (facts.n !== exceptNumber && facts.i && (!latest || facts.i > latest)) latest = facts.i;
  return latest;
}

/** The document id of a list entry (its table partition key ends with it). */
const documentIdOf = (entry: ListEntry<unknown>): string => /documentid_([^#]+)$/.exec(entry.pk)![1]!;

/** The ids of a party's documents of the kind: one Query of its `lx3` list partition (keys and facts only, eventually consistent). */
export async function partyDocumentIds(accountId: string, kind: DocumentKind, partyId: string): Promise<string[]> {
  const entries = await readListEntries<DocumentFacts>({ index: "lx3", pk: `${listBase(accountId, kind)}#p#${partyId}` });
  return entries.map(documentIdOf);
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

/** Headers by id, in the order asked, eventually consistent (a list page; missing ones left out). */
async function readListedHeaders(accountId: string, documentIds: readonly string[]): Promise<DocumentItem[]> {
  const keys = documentIds.map((documentId) => ({ accountId, documentId }));
  const found = await batchGetAll("read listed documents", keys, (chunk) => db().entities.document.get(chunk).go());
  return inOrderOf(documentIds, found as DocumentItem[], (header) => header.documentId);
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
