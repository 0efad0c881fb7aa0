import { documentListing } from "../../../db/document-lists.js";
import { requireDocumentPermission, withEtag, changesNothing } from "../rules.js";
import { errors, referenceDetail, type BodyProblem } from "../../../core/errors.js";
import { nowIso, laterUpdatedAt } from "../../../core/clock.js";
import type { Principal } from "../../../auth/permissions.js";
import type { IdempotencyCompletion } from "../../../core/idempotency.js";
import type { ListEnvelope, PageRequest } from "../../../core/pagination.js";
import { DOCUMENT_LABEL, addDocumentDelete, addDocumentWrite, type DocumentTree } from "../../../db/documents.js";
import { addDocumentActivity, readParty } from "../../../db/parties.js";
import { checkReferences, referenceDetails } from "../../../db/references.js";
import { RETRY, retrying } from "../../../db/retry.js";
import type { DocumentItem } from "../../../db/service.js";
import { writeTransaction, type Cancellation, type TransactionBuilder } from "../../../db/transactions.js";
import type { EstimateCreateBody, EstimateListQuery, EstimateUpdateBody } from "../../../schemas/estimates.js";
import { addAssigneeCount, addKindCountDecrement, listDocuments, visibleDocument, writeAtRevision } from "../documents.js";
import { ESTIMATE_STATUS, effectiveStatus, presentEstimate, stateLabel, statusFilter, type ConvertedDocument, type EstimateLine } from "./model.js";
import { planEstimate, type EstimateTree, type Planned } from "./plan.js";
import { throwProblems, type Problem } from "./problems.js";
import { assertRevision, etagOf, newRevision, parseIfMatch } from "../../common/revisions.js";
import { textFilter } from "../stock/model.js";
import { createNumbered } from "../stock/writes.js";

/**
 * Estimates: spec part 2, sections 2.3, 3.3 and 4.3; architecture sections 4 (status ids, money,
 * revisions) and 8 (delete response). Storage, numbering, counts and lists are the document
 * machinery's (`lib/db/documents.ts`, `lib/domain/documents/documents.ts`); the estimate's own model
 * (statuses, expiry, pricing, presentation, conversion source) is `model.ts`; planning a write is
 * `plan.ts` with the problem rules of `problems.ts`.
 *
 * Every write is planned by `planEstimate`, which reads what the estimate names and collects
 * every problem: a create or update throws them (409 state, then 403 permission, then 422 with
 * every detail), a preview returns them in `errors` (and writes nothing). Estimates never move
 * stock.
 *
 * Conversion (into an invoice or a sales order) is ONE transaction of the new document's writer:
 * `conversionSource` (model.ts) gives the visible estimate's values in the new document's shape
 * and `addEstimateConversion` adds "close this estimate as converted" to that transaction.
 */

const WHAT = "estimate";

export interface EstimateResult {
  body: Record<string, unknown>;
  etag: string;
}

// ---------------------------------------------------------------------------------------------
// Reads

/** A visible estimate with its lines (404 `resource_missing` otherwise). */
export const visibleEstimate = (principal: Principal, id: string) => visibleDocument<EstimateTree>(principal, "estimate", id, WHAT);

const result = (principal: Principal, header: DocumentItem, lines: readonly EstimateLine[], now?: string): EstimateResult => ({
  body: presentEstimate(principal, header, lines, { now }),
  etag: etagOf(header.revision),
});

/** One estimate with its lines in stored order (authentication plus ONE Query). */
export async function getEstimate(principal: Principal, id: string): Promise<EstimateResult> {
  requireDocumentPermission(principal, "estimates.list", "reading estimates");
  const tree = await visibleEstimate(principal, id);
  return result(principal, tree.header, tree.lines);
}

/** Estimates newest number first, with the filters of spec 4.3 (and `ids`). */
export async function listEstimates(
  principal: Principal,
  url: string,
  page: PageRequest,
  query: EstimateListQuery,
): Promise<ListEnvelope<Record<string, unknown>>> {
  requireDocumentPermission(principal, "estimates.list", "reading estimates");
  const now = nowIso();
  const status = query.status_id === undefined ? {} : statusFilter(Number(query.status_id), now);
  return listDocuments({
    principal,
    kind: "estimate",
    url,
    page,
    ids: query.ids,
    filter: {
      statusId: status.statusId,
      partyId: query.customer_id,
      dates: [
        { attribute: "issueDate", from: query.issue_date_from, to: query.issue_date_to },
        { attribute: "expiryDate", from: query.expiry_date_from, to: query.expiry_date_to },
        ...(status.dates ?? []),
      ],
      text: textFilter(query.q),
    },
    present: (headers) => headers.map((header) => presentEstimate(principal, header, undefined, { now })),
  });
}

/** Maps a cancelled estimate write: the customer archived or deleted meanwhile, or a reference. */
function mapWriteFailures(cancellation: Cancellation, customerId: string): never {
  const details = referenceDetails(cancellation);
  if (cancellation.failed(`party:${customerId}`)) details.push(referenceDetail("customer_id", "is no longer an active customer or prospect of this account."));
  if (details.length > 0) throw errors.validationFailed(details);
  throw errors.internal(new Error(`estimate write failed: ${cancellation.labels.join(", ")}`));
}

/** The write's condition: still Open and not yet expired at `now`. */
const stillOpen = (now: string) => (a: Record<string, unknown>, op: Record<string, (...args: unknown[]) => string>) =>
  `${op.eq!(a.status, "open")} AND ${op.gt!(a.expiryInstant, now)}`;

// ---------------------------------------------------------------------------------------------
// Writes

/**
 * Creates an Open estimate assigned to the caller (spec 4.3 create): the number comes from the
 * account's estimate sequence in the same transaction as the estimate, its lines, the counts
 * and the customer's `document_count`, so a refused or failed request consumes no number.
 */
export async function createEstimate(principal: Principal, input: EstimateCreateBody, completion: IdempotencyCompletion | undefined): Promise<EstimateResult> {
  requireDocumentPermission(principal, "estimates.modify", "creating estimates");
  return retrying("create estimate", async () => {
    const now = nowIso();
    const { plan, problems } = await planEstimate(principal, { mode: "create", input }, now, false);
    throwProblems(problems);
    const { header: base, lines, encoded, customer, references } = plan!;
    const { header, cancellation } = await createNumbered({
      sequence: "estimate",
      base,
      lines: encoded!,
      completion: withEtag(completion, base.revision),
      present: (numbered) => presentEstimate(principal, numbered, lines, { now }),
      add: (tx) => {
        // The kind read is the kind shown (`customer_kind`): a prospect converted meanwhile plans again.
        const party = { accountId: principal.accountId, partyId: customer.partyId };
        addDocumentActivity(tx, party, { documents: 1 }, { requireActive: true, requireKind: customer.kind });
        checkReferences(tx, principal.accountId, references);
      },
    });
    if (cancellation) {
      const current = cancellation.failed(`party:${customer.partyId}`) ? await readParty(principal.accountId, customer.partyId) : undefined;
      if (current && !current.archived && current.kind !== customer.kind) return RETRY;
      mapWriteFailures(cancellation, customer.partyId);
    }
    return result(principal, header!, lines, now);
  });
}

/**
 * Updates an Open estimate (spec 4.3 update): partial; `lines` is the complete set of non-discount
 * lines; changing the customer needs `lines`; optional `If-Match` (stale: 409
 * `mobile_mutation_conflict`, nothing changes). Declined, expired and closed (converted)
 * estimates are 409 `estimate_update_not_allowed`.
 */
export async function updateEstimate(
  principal: Principal,
  id: string,
  input: EstimateUpdateBody,
  ifMatchHeader: string | undefined,
  completion: IdempotencyCompletion | undefined,
): Promise<EstimateResult> {
  requireDocumentPermission(principal, "estimates.modify", "changing estimates");
  return writeAtRevision(
    { operation: "update estimate", accountId: principal.accountId, documentId: id, ifMatch: ifMatchHeader },
    () => visibleEstimate(principal, id),
    async (tree) => {
      const previous = tree.header;
      const now = nowIso();
      const { plan, problems } = await planEstimate(principal, { mode: "update", input, tree }, now, false);
      throwProblems(problems);
      const { header: next, lines, encoded, customer, customerChanged, references } = plan!;
      // Sent back as read: nothing to write (revision and updated_at stay).
      if (changesNothing(previous, next, tree.lines, lines)) return result(principal, previous, tree.lines, now);
      const response = result(principal, next, lines, now);
      const cancellation = await writeTransaction(
        (tx) => {
          addDocumentWrite(tx, { header: next, lines: encoded, previous, condition: stillOpen(now) });
          if (customerChanged) {
            addDocumentActivity(tx, { accountId: principal.accountId, partyId: customer.partyId }, { documents: 1 }, { requireActive: true });
            tx.add("old customer", tx.entities.party.patch({ accountId: principal.accountId, partyId: previous.partyId! }).add({ documentCount: -1 }).commit());
          }
          checkReferences(tx, principal.accountId, references);
        },
        { completion: withEtag(completion, next.revision), body: response.body },
      );
      if (!cancellation) return response;
      if (cancellation.failed(DOCUMENT_LABEL)) return RETRY; // changed meanwhile: read again (state and If-Match decide)
      return mapWriteFailures(cancellation, customer.partyId);
    },
  );
}

/** The preview of a body its schema refused: its problems as errors, no estimate. */
const refusedPreview = (problems: readonly BodyProblem[] = []) => ({ object: "estimate_preview", estimate: null, errors: problems, warnings: [] });

/**
 * Previews a create (`existing` absent) or an update: the same plan as the write, nothing
 * written, no number taken, no change marker. Answers 200 with the canonical estimate (null
 * when the customer or an item cannot be resolved), `errors` (every refusal the write would
 * answer, with its code and param) and `warnings`. An existing estimate's preview needs
 * `If-Match` with its current revision: missing 428 `estimate_revision_required`, stale 409
 * `mobile_mutation_conflict`. A body its schema refused (`bodyProblems`, no `input`) is previewed
 * as those errors and no estimate, after the same permission, visibility and If-Match checks.
 */
export async function previewEstimate(
  principal: Principal,
  input: EstimateCreateBody | EstimateUpdateBody | undefined,
  existing?: { id: string; ifMatch: string | undefined },
  bodyProblems?: readonly BodyProblem[],
): Promise<Record<string, unknown>> {
  requireDocumentPermission(principal, "estimates.modify", "previewing estimates");
  const now = nowIso();
  let planned: Planned;
  let storedLineIds = new Set<string>();
  let stored: Pick<DocumentItem, "updatedAt" | "status" | "statusId" | "expiryInstant"> | undefined;
  if (existing) {
    const tree = await visibleEstimate(principal, existing.id);
    const expected = parseIfMatch(existing.ifMatch);
    if (expected === undefined) {
      throw errors.revisionRequired("estimate_revision_required", "Previewing changes to an estimate requires If-Match with its current revision (ETag).");
    }
    assertRevision(expected, tree.header.revision);
    if (bodyProblems || !input) return refusedPreview(bodyProblems);
    storedLineIds = new Set(tree.lines.map((line) => line.id));
    stored = tree.header;
    planned = await planEstimate(principal, { mode: "update", input: input as EstimateUpdateBody, tree }, now, true);
  } else {
    if (bodyProblems || !input) return refusedPreview(bodyProblems);
    planned = await planEstimate(principal, { mode: "create", input: input as EstimateCreateBody }, now, true);
  }
  const { plan, problems, warnings } = planned;
  const problem = ({ code, message, param }: Problem) => ({ code, message, param: param ?? null });
  return {
    object: "estimate_preview",
    // Nothing is stored: an existing estimate keeps its updated_at, and a write it refuses (an
    // expired, declined or closed one) leaves its status as it is.
    estimate: plan
      ? presentEstimate(principal, stored ? previewedHeader(plan.header, stored, now) : plan.header, plan.lines, {
          now,
          preview: { storedLineIds, isNew: !existing },
        })
      : null,
    errors: problems.map(problem),
    warnings: warnings.map(problem),
  };
}

/** An existing estimate's previewed header: its updated_at as stored; its status too unless it is Open (the update would be refused). */
function previewedHeader(planned: DocumentItem, stored: Pick<DocumentItem, "updatedAt" | "status" | "statusId" | "expiryInstant">, now: string): DocumentItem {
  const kept = effectiveStatus(stored, now) === "open" ? {} : { status: stored.status, statusId: stored.statusId, expiryInstant: stored.expiryInstant };
  return { ...planned, ...kept, updatedAt: stored.updatedAt };
}

/**
 * Declines an Open, unconverted estimate (spec 3.3 and 4.3 decline): status 7, lines kept; a
 * Declined estimate is returned unchanged (a safe repeat); any other state is 409
 * `estimate_decline_not_allowed`. Needs estimates.list and estimates.modify.
 */
export async function declineEstimate(
  principal: Principal,
  id: string,
  ifMatchHeader: string | undefined,
  completion: IdempotencyCompletion | undefined,
): Promise<EstimateResult> {
  requireDocumentPermission(principal, "estimates.list", "declining estimates");
  requireDocumentPermission(principal, "estimates.modify", "declining estimates");
  return writeAtRevision(
    { operation: "decline estimate", accountId: principal.accountId, documentId: id, ifMatch: ifMatchHeader },
    () => visibleEstimate(principal, id),
    async (tree) => {
      const previous = tree.header;
      const now = nowIso();
      const status = effectiveStatus(previous, now);
      if (status === "declined") return result(principal, previous, tree.lines, now);
      if (status !== "open") {
        throw errors.stateConflict("estimate_decline_not_allowed", `Only Open estimates can be declined; this one is ${stateLabel(previous, status)}.`);
      }
      const next: DocumentItem = {
        ...previous,
        status: "declined",
        statusId: ESTIMATE_STATUS.declined.id,
        revision: newRevision("est"),
        updatedAt: laterUpdatedAt(previous.updatedAt),
      };
      const response = result(principal, next, tree.lines, now);
      const cancellation = await writeTransaction((tx) => addDocumentWrite(tx, { header: next, previous, condition: stillOpen(now) }), {
        completion: withEtag(completion, next.revision),
        body: response.body,
      });
      return cancellation ? RETRY : response;
    },
  );
}

/**
 * Deletes an Open, unconverted estimate with its lines (spec 4.3 delete; architecture section 8
 * response `{id, object: "estimate", deleted: true}`), with the counts and the customer's
 * `document_count`. Any other state is 409 `estimate_delete_not_allowed`.
 */
export async function deleteEstimate(
  principal: Principal,
  id: string,
  ifMatchHeader: string | undefined,
  completion: IdempotencyCompletion | undefined,
): Promise<{ id: string; object: "estimate"; deleted: true }> {
  requireDocumentPermission(principal, "estimates.modify", "deleting estimates");
  const body = { id, object: "estimate" as const, deleted: true as const };
  return writeAtRevision(
    { operation: "delete estimate", accountId: principal.accountId, documentId: id, ifMatch: ifMatchHeader },
    () => visibleEstimate(principal, id),
    async (tree) => {
      const header = tree.header;
      const now = nowIso();
      const status = effectiveStatus(header, now);
      if (status !== "open") {
        throw errors.stateConflict(
          "estimate_delete_not_allowed",
          `Only Open estimates that were not converted can be deleted; this one is ${stateLabel(header, status)}.`,
        );
      }
      const cancellation = await writeTransaction(
        (tx) => {
          addDocumentDelete(tx, tree as unknown as DocumentTree, stillOpen(now));
          addKindCountDecrement(tx, tree.header);
          addAssigneeCount(tx, header, -1);
          addDocumentActivity(tx, { accountId: principal.accountId, partyId: header.partyId! }, { documents: -1 });
        },
        { completion, body },
      );
      if (!cancellation) return body;
      if (cancellation.failed(DOCUMENT_LABEL)) return RETRY;
      throw errors.internal(new Error(`estimate delete failed: ${cancellation.labels.join(", ")}`));
    },
  );
}

// ---------------------------------------------------------------------------------------------
// Conversion (used by the invoice and sales-order writers: ONE transaction with the new document)

/** The label of the estimate's close in the conversion's transaction (failed: the estimate changed; read again). */
export const ESTIMATE_CONVERSION_LABEL = "estimate conversion";

/**
 * Adds "close this estimate as converted to `target`" to the caller's transaction (the one that
 * creates the invoice or sales order): status Closed (6), `converted_document`, a new revision,
 * on condition that the estimate is still at the revision read, Open, unexpired and unconverted.
 * Lines stay as they are. Returns the closed header.
 */
export function addEstimateConversion(tx: TransactionBuilder, estimate: DocumentItem, target: ConvertedDocument, now: string = nowIso()): DocumentItem {
  const closed: DocumentItem = {
    ...estimate,
    status: "closed",
    statusId: ESTIMATE_STATUS.closed.id,
    convertedTo: { kind: target.kind, id: target.id, number: target.number },
    // A prospect's estimate converted: its customer is a customer from this write on.
    partyKind: estimate.partyKind === "prospect" ? "customer" : estimate.partyKind,
    revision: newRevision("est"),
    updatedAt: laterUpdatedAt(estimate.updatedAt),
  };
  const listing = documentListing(closed);
  tx.add(
    ESTIMATE_CONVERSION_LABEL,
    tx.entities.document
      .patch({ accountId: estimate.accountId, documentId: estimate.documentId })
      .set({
        status: closed.status,
        statusId: closed.statusId,
        convertedTo: closed.convertedTo,
        ...(closed.partyKind ? { partyKind: closed.partyKind } : {}),
        revision: closed.revision,
        updatedAt: closed.updatedAt,
        // Its list entries move with the status (lib/db/listing.ts).
        lx2pk: listing.lx2pk,
        lxf: listing.lxf,
      })
      // Closed: no longer due to expire (lib/db/estimate-expiries.ts).
      .remove(["ex1pk", "ex1sk"])
      .where(
        (a, op) =>
          `${op.eq(a.revision, estimate.revision)} AND ${op.eq(a.status, "open")} AND ${op.gt(a.expiryInstant, now)} AND ${op.notExists(a.convertedTo)}`,
      )
      .commit(),
  );
  return closed;
}
