import type { DynamoDBBatchResponse, DynamoDBStreamEvent } from "aws-lambda";
import { unmarshall } from "@aws-sdk/util-dynamodb";
import { ENTITY_ATTRIBUTE } from "../../lib/sync/classify.js";
import { changeOf, compactChanges, type RecordChange } from "../../lib/sync/changes.js";
import { writeMarkers } from "../../lib/db/sync.js";
import { applyJournal } from "../../lib/domain/inventory.js";
import { applyTaskLinkChanges, taskLinkChangeOf, type TaskLinkChange } from "../../lib/domain/task-links.js";
import { errorFields, log } from "../../lib/core/log.js";

/**
 * The DynamoDB Streams consumer (not behind the API).
 *
 * - Change feed: every change of an item (or, later, a document) or of one of its children
 *   becomes a record change; the batch is compacted (one per record, delete final) and each
 *   account's markers are written with at most one transaction per 25 records (docs/sync.md).
 *   Reprocessing a batch (a Lambda retry) only writes fresher markers for the same records.
 * - Stock journals written as `pending` are applied here too: if the request that wrote one
 *   was interrupted, this finishes it (each chunk applies exactly once).
 * - Task snapshots: a change of a user or of a record tasks link rewrites the snapshots the
 *   tasks keep of them (lib/domain/task-links.ts; idempotent).
 * A failure returns the first record of the batch as failed, so Lambda retries the batch.
 */
export async function handler(event: DynamoDBStreamEvent): Promise<DynamoDBBatchResponse> {
  const changes: RecordChange[] = [];
  const journals: { accountId: string; journalId: string }[] = [];
  const taskLinks: TaskLinkChange[] = [];
  for (const record of event.Records) {
    const image = record.dynamodb?.NewImage ? (unmarshall(record.dynamodb.NewImage as never) as Record<string, unknown>) : undefined;
    const oldImage = record.dynamodb?.OldImage ? (unmarshall(record.dynamodb.OldImage as never) as Record<string, unknown>) : undefined;
    if (image?.[ENTITY_ATTRIBUTE] === "stockjournal" && image.status === "pending") {
      journals.push({ accountId: String(image.accountId), journalId: String(image.journalId) });
      continue;
    }
    const taskLink = taskLinkChangeOf(record.eventName, image, oldImage);
    if (taskLink) taskLinks.push(taskLink);
    const change = changeOf(record.eventName, image ?? oldImage);
    if (change) changes.push(change);
  }
  const first = event.Records[0]?.dynamodb?.SequenceNumber ?? "";
  try {
    for (const journal of journals) await applyJournal(journal.accountId, journal.journalId);
    const byAccount = new Map<string, RecordChange[]>();
    for (const change of compactChanges(changes)) byAccount.set(change.accountId, [...(byAccount.get(change.accountId) ?? []), change]);
    let transactions = 0;
    let conflicts = 0;
    for (const [accountId, accountChanges] of byAccount) {
      const stats = await writeMarkers(accountId, accountChanges);
      transactions += stats.transactions;
      conflicts += stats.conflicts;
    }
    const refreshedTasks = await applyTaskLinkChanges(taskLinks);
    log("INFO", "stream batch", {
      records: event.Records.length,
      changes: changes.length,
      markerTransactions: transactions,
      headConflicts: conflicts,
      ...(refreshedTasks > 0 ? { refreshedTasks } : {}),
    });
    return { batchItemFailures: [] };
  } catch (error) {
    log("ERROR", "stream batch failed", errorFields(error));
    return { batchItemFailures: [{ itemIdentifier: first }] };
  }
}
