import {
  addRemovedNumber,
  isEmptyFilter,
  queryDocumentPage,
  readKindSequence,
  searchDocumentPage,
  type DocumentFilter,
  type DocumentScope,
} from "../../db/document-lists.js";
import { ASSIGNEE_BOUNDED } from "./rules.js";
import { OWNER_COUNT_FIELD, canSeeDocument, parseIds } from "./rules.js";
import { hasPermission, type Principal } from "../../auth/permissions.js";
import { errors } from "../../core/errors.js";
import { listEnvelope, type ListEnvelope, type PageRequest } from "../../core/pagination.js";
import { readAccount } from "../../db/admin-store.js";
import { readDocumentHeaders, readDocumentHeader, readDocumentTree, type DocumentTree } from "../../db/documents.js";
import type { DocumentKind } from "../../db/entities/document.js";
import { readOwnerCounters } from "../../db/parties.js";
import type { AccountItem, DocumentItem } from "../../db/service.js";
import { retrying, type Attempt, type AttemptContext } from "../../db/retry.js";
import type { TransactionBuilder } from "../../db/transactions.js";
import { assertRevision, parseIfMatch } from "../common/revisions.js";
import { reachableScopes } from "../common/location-access.js";

/**
 * What every document kind shares (spec part 2, common rules; architecture sections 4 and 8):
 * visibility, numbering counters, dates in the caller's time zone, complete line replacement,
 * lists (newest number first, filters, totals from counters) and `ids` batch fetches.
 */

/** The in-process queue name of one document's writers (`retrying`'s contended names). */
export const documentLock = (accountId: string, documentId: string): string => `document:${accountId}:${documentId}`;

/**
 * The optimistic loop of every write to an existing revisioned document (architecture section
 * 4, "Revisions"; the routes that declare `ifMatch`): the `If-Match` header parsed once; each
 * attempt reads the document (`read`), answers a revision other than the ones named with 409
 * `mobile_mutation_conflict` before any state rule, and hands what it read to `write`, which
 * returns `RETRY` to read again. Writers of one document take turns on its `documentLock`.
 */
export function writeAtRevision<D extends { header: Pick<DocumentItem, "revision"> }, T>(
  target: { operation: string; accountId: string; documentId: string; ifMatch: string | undefined },
  read: () => Promise<D>,
  write: (current: D, context: AttemptContext, attempt: number) => Promise<Attempt<T>>,
): Promise<T> {
  const expected = parseIfMatch(target.ifMatch);
  return retrying(
    target.operation,
    async (attempt, context) => {
      const current = await read();
      assertRevision(expected, current.header.revision);
      return write(current, context, attempt);
    },
    undefined,
    [documentLock(target.accountId, target.documentId)],
  );
}

/**
 * A document of `kind` with its lines and payments (ONE Query) if the caller may see it
 * (account, kind, assignee boundary, location rule); otherwise 404 `resource_missing` naming
 * `what`. Every route that reads or changes one document comes through here, so none can skip
 * a boundary.
 */
export async function visibleDocument<T = DocumentTree>(principal: Principal, kind: DocumentKind, id: string, what: string): Promise<T> {
  const tree = await readDocumentTree(principal.accountId, id);
  if (!tree || tree.header.kind !== kind || !canSeeDocument(principal, tree.header, tree.lines)) throw errors.resourceMissing(what, id);
  return tree as unknown as T;
}

/**
 * `visibleDocument` for writes that need only the header (payments): ONE GetItem, however many
 * lines and payments the document holds. The location rule reads the scope the header stores;
 * a header written before scopes were stored is judged with its lines (the whole tree).
 */
export async function visibleDocumentHeader(principal: Principal, kind: DocumentKind, id: string, what: string): Promise<DocumentItem> {
  const header = await readDocumentHeader(principal.accountId, id);
  if (header && !header.locationScope) return (await visibleDocument<DocumentTree>(principal, kind, id, what)).header;
  if (!header || header.kind !== kind || !canSeeDocument(principal, header)) throw errors.resourceMissing(what, id);
  return header;
}

/** The list scope of a caller: the account's documents of a kind, or only those assigned to them. */
export function documentScope(principal: Principal, kind: DocumentKind): DocumentScope {
  return ASSIGNEE_BOUNDED.has(kind) && !hasPermission(principal, "records.view_all")
    ? { accountId: principal.accountId, kind, assignedUserId: principal.userId }
    : { accountId: principal.accountId, kind };
}

/** Adds the counts a new document (+1) or a deleted one (-1) moves: its assignee's count. */
export function addAssigneeCount(
  tx: TransactionBuilder,
  header: Pick<DocumentItem, "accountId" | "kind" | "assignedUserId">,
  by: 1 | -1,
  also: Record<string, number> = {},
): void {
  // `also`: other counts of the same user's item moved by the same write (one item, one operation).
  const add: Record<string, number> = { ...also };
  const field = OWNER_COUNT_FIELD[header.kind];
  add[field] = (add[field] ?? 0) + by;
  tx.add("assignee counts", tx.entities.ownerCounters.update({ accountId: header.accountId, userId: header.assignedUserId }).add(add).commit());
}

/**
 * Adds the decrement of a kind's record count on its sequence item (a document deleted), and
 * its number to the kind's deleted numbers (deep list pages find their start from both).
 */
export function addKindCountDecrement(tx: TransactionBuilder, header: Pick<DocumentItem, "accountId" | "kind" | "number">): void {
  tx.add("document count", tx.entities.sequence.update({ accountId: header.accountId, name: header.kind }).add({ count: -1 }).commit());
  addRemovedNumber(tx, header.accountId, header.kind, header.number);
}

export async function accountSettings(accountId: string): Promise<AccountItem> {
  const account = await readAccount(accountId);
  if (!account) throw errors.internal(new Error(`account ${accountId} has no record`));
  return account;
}

/** A valid IANA zone or undefined. */
/**
 * A list of one kind, newest number first, within the caller's visibility (spec part 2, section
 * 4 lists). Without filters a page costs one counter read and one index Query of the page
 * (`queryDocumentPage`: a deep page starts at a number computed from the counters); filters (and
 * `q`, and a location-restricted caller's scope) read the matching entries of the most selective
 * list index, keys and facts only, then the page's headers (`searchDocumentPage`).
 * `ids` (at most 50) returns every visible existing requested document in one response.
 */
export async function listDocuments<T>(options: {
  principal: Principal;
  kind: DocumentKind;
  url: string;
  page: PageRequest;
  filter: DocumentFilter;
  ids?: string;
  present: (headers: DocumentItem[]) => Promise<T[]> | T[];
}): Promise<ListEnvelope<T>> {
  const { principal, kind, url, page } = options;
  let filter = options.filter;
  if (options.ids !== undefined) {
    const ids = parseIds(options.ids);
    const headers = (await readDocumentHeaders(principal.accountId, ids))
      .filter((header) => header.kind === kind && canSeeDocument(principal, header))
      .sort((a, b) => b.number - a.number);
    return listEnvelope(url, { page: 1, limit: ids.length }, headers.length, await options.present(headers));
  }
  const scope = documentScope(principal, kind);
  // A location-restricted caller's lists keep the documents at their location (or at none).
  const locationScopes = reachableScopes(principal, kind);
  if (locationScopes) filter = { ...filter, locationScopes };
  const offset = (page.page - 1) * page.limit;
  if (!isEmptyFilter(filter)) {
    const { total, headers } = await searchDocumentPage(scope, filter, offset, page.limit);
    return listEnvelope(url, page, total, await options.present(headers));
  }
  let counted: number;
  let headers: DocumentItem[];
  if (scope.assignedUserId) {
    [counted, headers] = await Promise.all([
      readOwnerCounters(principal.accountId, scope.assignedUserId).then((c) => (c?.[OWNER_COUNT_FIELD[kind] as keyof typeof c] as number | undefined) ?? 0),
      queryDocumentPage(scope, offset, page.limit),
    ]);
  } else if (offset === 0) {
    const [sequence, firstPage] = await Promise.all([readKindSequence(principal.accountId, kind), queryDocumentPage(scope, 0, page.limit)]);
    counted = sequence.count;
    headers = firstPage;
  } else {
    // A deeper page starts at a number computed from the sequence: read it first.
    const sequence = await readKindSequence(principal.accountId, kind);
    counted = sequence.count;
    headers = await queryDocumentPage(scope, offset, page.limit, sequence);
  }
  // Counts are written with the documents; a page that shows more than the count proves a lag.
  const total = headers.length > 0 ? Math.max(counted, offset + headers.length) : counted;
  return listEnvelope(url, page, total, await options.present(headers));
}
