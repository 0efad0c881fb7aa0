import { batchGetAll, inOrderOf } from "./batch-get.js";
import { locationScopeOf } from "../core/document-scope.js";
import { db, type DocumentItem, type DocumentLinesItem, type DocumentPaymentItem } from "./service.js";
import { writeTransaction, type TransactionBuilder } from "./transactions.js";
import { decodePages, encodeDocumentLines, isEncoded, type EncodedLines, type StoredLine } from "./document-lines.js";
import { documentListing, partyDocumentIds } from "./document-lists.js";
import { isConditionalFailure } from "./dynamo-errors.js";
import { estimateExpiryKeys } from "./estimate-expiries.js";

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
 * below 4 MB), `MAX_DOCUMENT_LINE_JSON_BYTES` of JSON and `MAX_DOCUMENT_LINE_RESPONSE_BYTES` of it
 * as a Lambda response carries it (a response stays below Lambda's 6 MB).
 * A 500-line estimate with 4,000-character natural-language descriptions is ~2.2 MB of JSON and
 * ~700 KB compressed: 2 pages.
 */

// The line pages, location scope and lists live in their own files; this module stays the one
// other code imports document storage from.

export interface DocumentTree {
  header: DocumentItem;
  /** Lines in stored order. */
  lines: StoredLine[];
  payments: DocumentPaymentItem[];
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

/** Whether a document is gone, or at another revision than `revision` (one strongly consistent GetItem). */
export async function documentChangedSince(accountId: string, documentId: string, revision: string): Promise<boolean> {
  return (await readDocumentHeader(accountId, documentId))?.revision !== revision;
}

/** One payment of a document (strongly consistent), if it exists. */
export async function readDocumentPayment(accountId: string, documentId: string, paymentId: string): Promise<DocumentPaymentItem | undefined> {
  const { data } = await db().entities.documentPayment.get({ accountId, documentId, paymentId }).go({ consistent: true });
  return data ?? undefined;
}

/** Every payment of a document (strongly consistent), in ONE Query of its partition's payments. */
export async function readDocumentPayments(accountId: string, documentId: string): Promise<DocumentPaymentItem[]> {
  const { data } = await db().entities.documentPayment.query.primary({ accountId, documentId }).go({ pages: "all", consistent: true });
  return data as DocumentPaymentItem[];
}

/** Several headers, ONE BatchGetItem per 100 (missing ones are absent), in the order asked. */
export async function readDocumentHeaders(accountId: string, documentIds: readonly string[]): Promise<DocumentItem[]> {
  const ids = [...new Set(documentIds)];
  const keys = ids.map((documentId) => ({ accountId, documentId }));
  const found = await batchGetAll("read documents", keys, (chunk) => db().entities.document.get(chunk).go({ consistent: true }));
  return inOrderOf(ids, found as DocumentItem[], (header) => header.documentId);
}

/**
 * Shows a converted prospect's estimates as a customer's (`partyKind`): the party's estimates
 * from its list partition, then one conditional update each of those still naming a prospect
 * (idempotent: a repeat or a concurrent write that already named the customer changes nothing).
 * `revision` and `updatedAt` stay: the estimate did not change, its party did (the change still
 * reaches the feed). Returns how many it updated.
 */
export async function showEstimatesAsCustomers(accountId: string, partyId: string): Promise<number> {
  // The updates are independent: all at once.
  const updated = await Promise.all(
    (await partyDocumentIds(accountId, "estimate", partyId)).map(async (documentId) => {
      try {
        await db()
          .entities.document.patch({ accountId, documentId })
          .set({ partyKind: "customer" })
          .where((attributes, operations) => `${operations.eq(attributes.partyId, partyId)} AND ${operations.eq(attributes.partyKind, "prospect")}`)
          .go({ response: "none" });
        return 1;
      } catch (error) {
        if (!isConditionalFailure(error)) throw error;
        return 0;
      }
    }),
  );
  return updated.reduce<number>((sum, count) => sum + count, 0);
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
    previous?: Pick<DocumentItem, "revision" | "pageCount"> & Partial<Pick<DocumentItem, "itemIds">>;
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
  Object.assign(next, documentListing(next), estimateExpiryKeys(next));
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
  addReferenceIntent(tx, next, previous);
  if (pages === undefined) return;
  pages.forEach((packed, page) => {
    tx.add("document lines", e.documentLines.put({ accountId: header.accountId, documentId: header.documentId, page, packed }).commit());
  });
  for (let page = pages.length; page < (previous?.pageCount ?? 0); page++) {
    tx.add("document lines", e.documentLines.delete({ accountId: header.accountId, documentId: header.documentId, page }).commit());
  }
}

/** How long an uncounted reference intent is kept if the stream processor never runs. */
const INTENT_RETENTION_SECONDS = 7 * 86_400;

/**
 * Adds the reference intent of a write whose lines start referencing items (`itemIds` not in
 * the previous state; every item when `previous` does not say), so that an item deletion sees
 * the reference before the stream processor counts it. Writes that add no item add nothing.
 */
function addReferenceIntent(tx: TransactionBuilder, next: DocumentItem, previous: Partial<Pick<DocumentItem, "itemIds">> | undefined): void {
  const before = new Set(previous?.itemIds ?? []);
  const added = [...new Set(next.itemIds ?? [])].filter((itemId) => !before.has(itemId));
  if (added.length === 0) return;
  tx.touchItems(next.accountId, added);
  tx.add(
    "reference intent",
    tx.entities.referenceIntent
      .put({
        accountId: next.accountId,
        documentId: next.documentId,
        revision: next.revision,
        itemIds: added,
        expiresAt: Math.floor(Date.now() / 1000) + INTENT_RETENTION_SECONDS,
      })
      .commit(),
  );
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

/**
 * Items' references of one document state (`itemIds` of a header image), a few at a time; then
 * the state's reference intent (`revision`, when it started referencing items) is done with.
 */
export async function applyDocumentReferences(
  accountId: string,
  documentId: string,
  at: string,
  transitions: readonly { itemId: string; active: boolean }[],
  revision?: string,
): Promise<void> {
  const queue = [...transitions];
  await Promise.all(
    Array.from({ length: Math.min(8, queue.length) }, async () => {
      for (let next = queue.shift(); next !== undefined; next = queue.shift()) await setItemReference(accountId, next.itemId, documentId, next.active, at);
    }),
  );
  if (revision !== undefined && transitions.some((t) => t.active)) await db().entities.referenceIntent.delete({ accountId, documentId, revision }).go();
}

/**
 * The documents that reference an item now, for its deletion (spec: only while no document
 * references it). `documentCount` is kept by the stream processor and lags a write by the
 * stream's delay, so this also reads what it has not counted yet, in this order:
 * 1. the account's reference intents (documents that started referencing items, uncounted);
 * 2. the item's active references (counted; `counted` is the item's `documentCount` as read
 *    AFTER step 1, so an intent counted in between is seen at least once);
 * then every candidate document's current header: a reference whose document has since
 * dropped the item, or was deleted, and that the processor has not caught up with yet is not
 * one. Counts the processor cannot explain by reference rows stay counted (safe side). Past
 * `MAX_VERIFIED` counted references the count is taken as it is.
 */
export async function documentsReferencingItem(accountId: string, itemId: string, readCounted: () => Promise<number>): Promise<number> {
  const MAX_VERIFIED = 100;
  const e = db().entities;
  const intents = await e.referenceIntent.query.primary({ accountId }).go({ pages: "all", consistent: true });
  const candidates = new Set(intents.data.filter((intent) => intent.itemIds.includes(itemId)).map((intent) => intent.documentId));
  const counted = await readCounted();
  let unexplained = counted;
  if (counted > 0) {
    if (counted > MAX_VERIFIED) return counted;
    const references = await e.itemReference.query.primary({ accountId, itemId }).go({ pages: "all", consistent: true });
    for (const reference of references.data) {
      if (!reference.active) continue;
      candidates.add(reference.documentId);
      unexplained -= 1;
    }
  }
  if (candidates.size === 0) return Math.max(0, unexplained);
  const headers = await readDocumentHeaders(accountId, [...candidates]);
  const referencing = headers.filter((header) => (header.itemIds ?? []).includes(itemId)).length;
  return Math.max(0, unexplained) + referencing;
}
