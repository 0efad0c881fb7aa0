import type { StockChange } from "../../inventory/stock-changes.js";
import type { DocumentFilter } from "../../../db/document-lists.js";
import { requireDocumentPermission } from "../rules.js";
import { randomUUID } from "node:crypto";
import type { Principal } from "../../../auth/permissions.js";
import { errors } from "../../../core/errors.js";
import { CustomerChangedError, StockRuleError } from "../../../core/failures.js";
import type { IdempotencyCompletion } from "../../../core/idempotency.js";
import type { ListEnvelope, PageRequest } from "../../../core/pagination.js";
import { DOCUMENT_LABEL, addDocumentDelete, readDocumentTree, type DocumentTree } from "../../../db/documents.js";
import { addDocumentActivity, type DocumentActivity } from "../../../db/parties.js";
import { referenceDetails, type Reference } from "../../../db/references.js";
import { RETRY, retrying, type Attempt } from "../../../db/retry.js";
import type { AccountItem, DocumentItem } from "../../../db/service.js";
import type { Cancellation } from "../../../db/transactions.js";
import { commitWithStock } from "../../inventory/stock-holds.js";
import { stockRefusal, type PlanBasis } from "../stock/writes.js";
import { accountSettings, addAssigneeCount, addKindCountDecrement, listDocuments, visibleDocument, writeAtRevision } from "../documents.js";
import { draftCreateRequest, type DraftOptions, type SalesDraft } from "./drafts.js";
import { newSalesHeader, requireShippingCostPermission, withAccountSnapshot, type NewHeaderRules } from "./header.js";
import { insertSalesDocument, type NewSalesDocument, type NewSalesResult } from "./insert.js";
import { salesResult, type SalesContext, type SalesCreateRequest, type SalesKind, type SalesLine, type SalesResult, type SalesTree } from "./model.js";
import { stockRuleError, withPackingFacts } from "./progress.js";
import { buildSalesLines, withCurrentValues } from "./reads.js";

/**
 * The operations sales orders and invoices run alike, each given its kind (`SalesKind`): the
 * permission checks, the visible document, the detail read and the list, the numbered create,
 * the delete, and what a write's cancellation means.
 */

export const requireSalesRead = (principal: Principal, kind: SalesKind) => requireDocumentPermission(principal, kind.listPermission, `reading ${kind.what}s`);
export const requireSalesModify = (principal: Principal, kind: SalesKind) =>
  requireDocumentPermission(principal, kind.modifyPermission, `changing ${kind.what}s`);

/** The document if the caller may see it (account, kind, salesperson boundary), else 404. */
export const visibleSales = (principal: Principal, kind: SalesKind, id: string) => visibleDocument<SalesTree>(principal, kind.kind, id, kind.what);

/**
 * One document with every detail field and its lines in stored order: the document (ONE Query)
 * and the account in parallel (tax labels and packing settings are current values), then the
 * kind's current related values (`withCurrentValues`) in one parallel round.
 */
export async function getSalesDocument(principal: Principal, kind: SalesKind, id: string): Promise<SalesResult> {
  requireSalesRead(principal, kind);
  const [tree, account] = await Promise.all([visibleSales(principal, kind, id), accountSettings(principal.accountId)]);
  const current = await withCurrentValues(tree.header, tree.lines, account, kind.relatedOnRead);
  return salesResult(kind.present(principal, current.header, current.lines), current.header.revision);
}

/** Documents of the kind newest number first, with the kind's filters, `q` (text or number) and `ids`. */
export async function listSalesDocuments(
  principal: Principal,
  kind: SalesKind,
  url: string,
  page: PageRequest,
  query: { ids?: string; q?: string },
  filter: Omit<DocumentFilter, "text">,
): Promise<ListEnvelope<Record<string, unknown>>> {
  requireSalesRead(principal, kind);
  const needle = query.q?.trim().toLowerCase();
  // Read beside the list's own reads; awaited when the page is presented.
  const settings = kind.listBlockReasons ? accountSettings(principal.accountId) : undefined;
  settings?.catch(() => undefined);
  return listDocuments({
    principal,
    kind: kind.kind,
    url,
    page,
    ids: query.ids,
    filter: { ...filter, text: needle ? { needle, number: /^\d{1,9}$/.test(needle) ? Number(needle) : undefined } : undefined },
    present: async (headers) => {
      const [account, completed] = await Promise.all([settings, kind.listBlockReasons ? withListPackingFacts(principal.accountId, headers) : headers]);
      return completed.map((header) => kind.present(principal, account ? withAccountSnapshot(header, account) : header));
    },
  });
}

/**
 * Headers whose list entries can say a sales order's block reasons as its detail does: an open
 * order last written before its header kept packing facts (`withPackingFacts`) has its lines
 * read (one Query each, in parallel) and the facts taken from them; any other header already
 * holds them, or (not open) needs none.
 */
async function withListPackingFacts(accountId: string, headers: readonly DocumentItem[]): Promise<DocumentItem[]> {
  return Promise.all(
    headers.map(async (header) => {
      if (header.unpackedLocationIds !== undefined || header.status !== "open") return header;
      const tree = await readDocumentTree(accountId, header.documentId);
      return tree ? withPackingFacts(header, tree.lines as SalesLine[]) : header;
    }),
  );
}

/**
 * A kind's reads: `visible` (the document if the caller may see it: account, kind, salesperson
 * boundary; else 404), `get` (`getSalesDocument`) and `list` (`listSalesDocuments` with the
 * kind's `filter` of the query).
 */
export function salesReadOperations<Q extends { ids?: string; q?: string }>(kind: SalesKind, filter: (query: Q) => Omit<DocumentFilter, "text">) {
  return {
    visible: (principal: Principal, id: string) => visibleSales(principal, kind, id),
    get: (principal: Principal, id: string): Promise<SalesResult> => getSalesDocument(principal, kind, id),
    list: async (principal: Principal, url: string, page: PageRequest, query: Q): Promise<ListEnvelope<Record<string, unknown>>> =>
      listSalesDocuments(principal, kind, url, page, query, filter(query)),
  };
}

/** A write that failed on a reference is 422 naming it; any other failure is internal. */
export function throwWriteCancellation(cancellation: Cancellation, kind: SalesKind): never {
  const details = referenceDetails(cancellation);
  if (details.length > 0) throw errors.validationFailed(details);
  throw errors.internal(new Error(`${kind.what} write failed: ${cancellation.labels.join(", ")}`));
}

/** An update's cancellation: the document or a customer changed meanwhile (read again), else `throwWriteCancellation`. */
export function updateCancellation(cancellation: Cancellation, kind: SalesKind): typeof RETRY {
  if (cancellation.failed(DOCUMENT_LABEL) || cancellation.failedUnder("party:").length > 0 || cancellation.failed("old customer")) return RETRY;
  return throwWriteCancellation(cancellation, kind);
}

/**
 * `commitWithStock`; a stock rule the changes break is read again when `basis` (the document the
 * write was planned from) changed meanwhile (a sales order's delete planned before a parallel
 * invoice took its reservations: the loser gets the order's new state, not a stock refusal);
 * otherwise, with `lines`, it is 422 naming the line (`stockRuleError`); without them a rule
 * broken on a current plan is internal (every write that can raise a balance passes its lines).
 */
export async function commitSalesStock(options: Parameters<typeof commitWithStock>[0], lines?: readonly SalesLine[], basis?: PlanBasis) {
  try {
    return await commitWithStock(options);
  } catch (error) {
    if (error instanceof StockRuleError && (lines || basis)) {
      throw await stockRefusal(error, basis, (rule) => (lines ? stockRuleError(rule, options.changes, lines) : rule));
    }
    throw error;
  }
}

// ---------------------------------------------------------------------------------------------
// The create

/** What a kind's create does beyond the shared path (`createSalesDocument`). */
export interface SalesCreatePolicy extends NewHeaderRules {
  kind: SalesKind;
  /** Reads what the create names: the account, the customer (and a sales order's location). */
  context(principal: Principal, request: SalesCreateRequest, options: DraftOptions): Promise<SalesContext>;
  /** Checks the new header before its totals (a sales order's dates). */
  check?(header: DocumentItem): void;
  /** Totals, percentages and snapshots. */
  derive(header: DocumentItem, context: SalesContext, lines: readonly SalesLine[]): { header: DocumentItem; lines: SalesLine[] };
  /** The stock the new document takes or reserves. */
  changes(header: DocumentItem, lines: readonly SalesLine[]): StockChange[];
  /** What the customer's figures move by. */
  activity(header: DocumentItem): NewSalesDocument["activity"];
  /** References checked in the write besides the custom fields' (a sales order's location). */
  references(context: SalesContext): Reference[];
  /** The account's record limit when it counts this kind. */
  recordLimit?(account: AccountItem): number | undefined;
}

/**
 * Creates a document of the kind numbered from the account's sequence (`insertSalesDocument`),
 * from an API request or a draft: reads its context, builds its lines and header (defaults,
 * totals, snapshots), and writes it with its stock, counters and customer figures in ONE
 * transaction together with the caller's `options.extra` items. A customer changed meanwhile
 * reads again.
 */
export async function createSalesDocument(
  principal: Principal,
  policy: SalesCreatePolicy,
  request: SalesCreateRequest,
  options: DraftOptions,
): Promise<NewSalesResult> {
  const { kind } = policy;
  return retrying(`create ${kind.what}`, async () => {
    const context = await policy.context(principal, request, options);
    const built = await buildSalesLines(context, request.specs(context));
    const documentId = randomUUID();
    const base = newSalesHeader(context, kind, policy, request, documentId);
    policy.check?.(base.header);
    const { header, lines } = policy.derive(base.header, context, built);
    // A prospect accepted here is converted into a customer by the caller in the same write
    // (an estimate's conversion): the document is a customer's from the start.
    if (options.allowProspect && header.partyKind === "prospect") header.partyKind = "customer";
    const references: Reference[] = [...(base.references ?? []), ...policy.references(context)];
    try {
      return await insertSalesDocument({
        principal,
        kind: kind.kind,
        header,
        lines,
        changes: policy.changes(header, lines),
        source: { sourceType: kind.kind, sourceId: documentId, userId: principal.userId, reason: `${kind.label} created` },
        customer: context.customer,
        activity: policy.activity(header),
        references,
        completion: options.completion,
        present: (h, l) => kind.present(principal, h, l),
        extra: options.extra,
        customerActivity: options.customerActivity,
        ownerCounts: options.ownerCounts,
        recordLimit: policy.recordLimit?.(context.account),
      });
    } catch (error) {
      if (error instanceof CustomerChangedError) return RETRY;
      throw error;
    }
  });
}

/** The response of an API create: the new document, or its failure (`throwWriteCancellation`). */
export function createdResult(written: NewSalesResult, kind: SalesKind): SalesResult {
  if (!written.ok) throwWriteCancellation(written.cancellation, kind);
  return salesResult(written.body, written.header.revision);
}

/** What a create from a draft answers: the new document (body, ETag and header), or the cancellation of the caller's own items. */
export type DraftCreated = { ok: true; result: SalesResult; header: DocumentItem } | { ok: false; cancellation: Cancellation };

/** A create of the policy's kind from a draft (a conversion): the kind's modify permission, then the create in one transaction with `options.extra`. */
export async function createFromDraft(principal: Principal, policy: SalesCreatePolicy, draft: SalesDraft, options: DraftOptions): Promise<DraftCreated> {
  requireSalesModify(principal, policy.kind);
  const written = await createSalesDocument(principal, policy, draftCreateRequest(draft), options);
  if (!written.ok) return written;
  return { ok: true, result: salesResult(written.body, written.header.revision), header: written.header };
}

// ---------------------------------------------------------------------------------------------
// The delete

/** What a delete moves: the stock given back, the customer's figures and (invoices) the lines a stock rule names. */
export interface SalesDeletePlan {
  changes: StockChange[];
  customer: DocumentActivity;
  stockLines?: readonly SalesLine[];
}

/**
 * Runs an update of a document of the kind: the kind's modify and the shipping-cost permissions
 * first, then, retried under the document's lock, `attempt` with the visible document once the
 * revision `If-Match` names (when sent) is still its own.
 */
export function updateSalesDocument<T>(
  principal: Principal,
  kind: SalesKind,
  id: string,
  input: { shipping_cost?: unknown },
  ifMatchHeader: string | undefined,
  attempt: (tree: SalesTree) => Promise<Attempt<T>>,
): Promise<T> {
  requireSalesModify(principal, kind);
  requireShippingCostPermission(principal, input);
  return writeAtRevision(
    { operation: `update ${kind.what}`, accountId: principal.accountId, documentId: id, ifMatch: ifMatchHeader },
    () => visibleSales(principal, kind, id),
    attempt,
  );
}

/**
 * Deletes a document of the kind: `plan` checks the document may go (409 otherwise) and says
 * what moves; the document, its stock, the counts and the customer's figures move in ONE write.
 */
export async function deleteSalesDocument<K extends SalesKind["kind"]>(
  principal: Principal,
  kind: SalesKind<K>,
  id: string,
  ifMatchHeader: string | undefined,
  completion: IdempotencyCompletion | undefined,
  plan: (tree: SalesTree) => SalesDeletePlan | Promise<SalesDeletePlan>,
): Promise<{ id: string; object: K; deleted: true }> {
  requireSalesModify(principal, kind);
  const resource = { id, object: kind.kind, deleted: true as const };
  return writeAtRevision(
    { operation: `delete ${kind.what}`, accountId: principal.accountId, documentId: id, ifMatch: ifMatchHeader },
    () => visibleSales(principal, kind, id),
    async (tree) => {
      const { changes, customer, stockLines } = await plan(tree);
      const header = tree.header;
      const { cancellation } = await commitSalesStock(
        {
          accountId: principal.accountId,
          source: { sourceType: kind.kind, sourceId: id, userId: principal.userId, reason: `${kind.label} ${header.number} deleted` },
          changes,
          document: (tx) => {
            addDocumentDelete(tx, tree as unknown as DocumentTree);
            addKindCountDecrement(tx, tree.header);
            addAssigneeCount(tx, header, -1);
            addDocumentActivity(tx, { accountId: principal.accountId, partyId: header.partyId! }, customer);
          },
          outcome: () => ({ completion, body: resource }),
        },
        stockLines,
        { accountId: principal.accountId, documentId: id, revision: header.revision },
      );
      if (!cancellation) return resource;
      // The party's label: its last invoice date moved since it was read.
      if (cancellation.failed(DOCUMENT_LABEL) || cancellation.failedUnder("party:").length > 0) return RETRY;
      throw errors.internal(new Error(`${kind.what} delete failed: ${cancellation.labels.join(", ")}`));
    },
  );
}
