import type { DynamoDBBatchResponse, DynamoDBStreamEvent, ScheduledEvent } from "aws-lambda";
import { unmarshall } from "@aws-sdk/util-dynamodb";
import { ENTITY_ATTRIBUTE } from "../../lib/sync/classify.js";
import { changeOf, compactChanges, onlyItemBookkeeping, type RecordChange } from "../../lib/sync/changes.js";
import { readNumber } from "../../lib/db/client.js";
import { writeMarkers } from "../../lib/db/sync.js";
import { applyDocumentReferences } from "../../lib/db/documents.js";
import { applyJournal, sweepExpiredHolds } from "../../lib/domain/inventory/service.js";
import { markPassedEstimateExpiries } from "../../lib/domain/documents/estimates/expiries.js";
import { applyTaskLinkChanges, taskLinkChangeOf, type TaskLinkChange } from "../../lib/domain/tasks/links.js";
import { followProspectConversions, prospectConversionOf } from "../../lib/domain/records/parties.js";
import { type DeletedCategoryFields, deletedCategoryFieldsOf, dropDeletedFieldValues } from "../../lib/domain/records/item-categories.js";
import { errorFields, log } from "../../lib/core/log.js";
import { fanOutChanges } from "../../lib/domain/webhooks/fan-out.js";
import type { MarkerChange } from "../../lib/domain/webhooks/model.js";

/**
 * The DynamoDB Streams consumer (not behind the API).
 *
 * - Change feed: every change of an item (or, later, a document) or of one of its children
 *   becomes a record change; the batch is compacted (one per record, delete final) and each
 *   account's markers are written with at most one transaction per 25 records (docs/sync.md).
 *   Reprocessing a batch (a Lambda retry) only writes fresher markers for the same records.
 * - Stock journals written as `pending` are applied here too: if the request that wrote one
 *   was interrupted, this finishes it (each chunk applies exactly once).
 * - On its schedule (an EventBridge event instead of stream records) it settles stock holds
 *   whose writer died (`sweepExpiredHolds`): folds those bound, releases the others; and it
 *   marks the estimates whose expiry moment passed (`markPassedEstimateExpiries`).
 * - Task snapshots: a change of a user or of a record tasks link rewrites the snapshots the
 *   tasks keep of them (lib/domain/tasks/links.ts; idempotent).
 * - A prospect that became a customer: its other estimates show `customer_kind: "customer"`
 *   (lib/domain/records/parties.ts; idempotent).
 * - Webhooks: the markers a batch wrote are fanned out to their accounts' webhook endpoints
 *   (lib/domain/webhooks/fan-out.ts) as soon as they are committed. A retried batch writes
 *   fresher markers for the same records, and so new messages (delivery is at least once).
 * A failure returns the first record of the batch as failed, so Lambda retries the batch.
 */
export async function handler(event: DynamoDBStreamEvent | ScheduledEvent): Promise<DynamoDBBatchResponse> {
  if (!("Records" in event)) {
    // The schedule (every minute): settle stock holds whose writer died (lease run out), and
    // mark the estimates that time made Expired (their markers come through the stream).
    const [, expiredEstimates] = await Promise.all([sweepExpiredHolds(), markPassedEstimateExpiries()]);
    if (expiredEstimates > 0) log("INFO", "estimate expiries marked", { expiredEstimates });
    return { batchItemFailures: [] };
  }
  const changes: RecordChange[] = [];
  const references: DocumentReferences[] = [];
  const journals: { accountId: string; journalId: string }[] = [];
  const taskLinks: TaskLinkChange[] = [];
  const conversions: { accountId: string; partyId: string }[] = [];
  const fieldDeletions: DeletedCategoryFields[] = [];
  for (const record of event.Records) {
    const image = record.dynamodb?.NewImage
      ? (unmarshall(record.dynamodb.NewImage as never, { wrapNumbers: readNumber }) as Record<string, unknown>)
      : undefined;
    const oldImage = record.dynamodb?.OldImage
      ? (unmarshall(record.dynamodb.OldImage as never, { wrapNumbers: readNumber }) as Record<string, unknown>)
      : undefined;
    // Post journals are finished here when their writer was interrupted; holds belong to their
    // writer until their lease runs out (then the scheduled sweep releases them).
    if (image?.[ENTITY_ATTRIBUTE] === "stockjournal" && image.status === "pending" && image.mode !== "hold") {
      journals.push({ accountId: String(image.accountId), journalId: String(image.journalId) });
      continue;
    }
    const taskLink = taskLinkChangeOf(record.eventName, image, oldImage);
    if (taskLink) taskLinks.push(taskLink);
    const conversion = prospectConversionOf(image, oldImage);
    if (conversion) conversions.push(conversion);
    const deletedFields = deletedCategoryFieldsOf(image, oldImage);
    if (deletedFields) fieldDeletions.push(deletedFields);
    const change = onlyItemBookkeeping(oldImage, image) ? undefined : changeOf(record.eventName, image ?? oldImage);
    if (change) changes.push(change);
    if ((image ?? oldImage)?.[ENTITY_ATTRIBUTE] === "document") {
      const transitions = referenceTransitions(oldImage, image);
      if (transitions.transitions.length > 0) references.push(transitions);
    }
  }
  const first = event.Records[0]?.dynamodb?.SequenceNumber ?? "";
  try {
    for (const journal of journals) await applyJournal(journal.accountId, journal.journalId);
    for (const r of references) await applyDocumentReferences(r.accountId, r.documentId, r.at, r.transitions, r.revision);
    const byAccount = new Map<string, RecordChange[]>();
    for (const change of compactChanges(changes)) byAccount.set(change.accountId, [...(byAccount.get(change.accountId) ?? []), change]);
    // The feed (then its webhooks) and the tasks' snapshots are independent: both at once, and
    // each account's feed (a head each) at once too.
    const writeFeed = async () => {
      const written = await Promise.all([...byAccount].map(([accountId, accountChanges]) => writeMarkers(accountId, accountChanges)));
      const markers: MarkerChange[] = written.flatMap((stats) => stats.written);
      return { written, webhookMessages: markers.length > 0 ? await fanOutChanges(markers) : 0 };
    };
    const [feed, refreshedTasks, convertedEstimates, clearedItems] = await Promise.all([
      writeFeed(),
      applyTaskLinkChanges(taskLinks),
      followProspectConversions(conversions),
      dropDeletedFieldValues(fieldDeletions),
    ]);
    const transactions = feed.written.reduce((sum, stats) => sum + stats.transactions, 0);
    const conflicts = feed.written.reduce((sum, stats) => sum + stats.conflicts, 0);
    const webhookMessages = feed.webhookMessages;
    // Idle batches (nothing the feed or the documents care about) log at DEBUG only.
    const busy =
      changes.length > 0 ||
      journals.length > 0 ||
      references.length > 0 ||
      refreshedTasks > 0 ||
      convertedEstimates > 0 ||
      clearedItems > 0 ||
      webhookMessages > 0;
    log(busy ? "INFO" : "DEBUG", "stream batch", {
      records: event.Records.length,
      changes: changes.length,
      markerTransactions: transactions,
      headConflicts: conflicts,
      ...(refreshedTasks > 0 ? { refreshedTasks } : {}),
      ...(convertedEstimates > 0 ? { convertedEstimates } : {}),
      ...(clearedItems > 0 ? { clearedItems } : {}),
      ...(webhookMessages > 0 ? { webhookMessages } : {}),
    });
    return { batchItemFailures: [] };
  } catch (error) {
    log("ERROR", "stream batch failed", errorFields(error));
    return { batchItemFailures: [{ itemIdentifier: first }] };
  }
}

/** The items a document header references (`itemIds`, a string set). */
function itemIdsOf(image: Record<string, unknown> | undefined): Set<string> {
  const ids = image?.itemIds;
  if (ids instanceof Set) return new Set([...ids].map(String));
  return new Set(Array.isArray(ids) ? ids.map(String) : []);
}

interface DocumentReferences {
  accountId: string;
  documentId: string;
  at: string;
  transitions: { itemId: string; active: boolean }[];
  /** The new state's revision (its reference intent, when it started referencing items). */
  revision?: string;
}

/**
 * The item references a document header change implies: items it started referencing become
 * active, items it stopped referencing (or all, when it was deleted) inactive, as of the new
 * state's `updatedAt` (a deletion sorts after the last state).
 */
function referenceTransitions(before: Record<string, unknown> | undefined, after: Record<string, unknown> | undefined): DocumentReferences {
  const source = (after ?? before)!;
  const old = itemIdsOf(before);
  const now = itemIdsOf(after);
  const transitions = [
    ...[...now].filter((id) => !old.has(id)).map((itemId) => ({ itemId, active: true })),
    ...[...old].filter((id) => !now.has(id)).map((itemId) => ({ itemId, active: false })),
  ];
  return {
    accountId: String(source.accountId),
    documentId: String(source.documentId),
    at: after ? String(after.updatedAt) : `${String(before?.updatedAt)}#deleted`,
    transitions,
    ...(after ? { revision: String(after.revision) } : {}),
  };
}
