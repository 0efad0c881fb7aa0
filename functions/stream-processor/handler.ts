import type { DynamoDBBatchResponse, DynamoDBStreamEvent } from "aws-lambda";
import { unmarshall } from "@aws-sdk/util-dynamodb";
import { classifyChange, ENTITY_ATTRIBUTE } from "../../lib/sync/classify.js";
import { applyJournal } from "../../lib/domain/inventory.js";
import { errorFields, log } from "../../lib/http/log.js";

/**
 * The DynamoDB Streams consumer (not behind the API).
 *
 * - A stock journal written as `pending` is applied here too: if the request that wrote it was
 *   interrupted before its chunks were applied, this finishes them (each chunk applies exactly
 *   once, so running alongside the request is harmless). A failure is reported as a batch
 *   item failure, so Lambda retries from that record.
 * - Every other change is classified for the change feed (`GET /sync` arrives with issue 5).
 */
export async function handler(event: DynamoDBStreamEvent): Promise<DynamoDBBatchResponse> {
  let tracked = 0;
  for (const record of event.Records) {
    const image = record.dynamodb?.NewImage ? (unmarshall(record.dynamodb.NewImage as never) as Record<string, unknown>) : undefined;
    if (image?.[ENTITY_ATTRIBUTE] === "stockjournal" && image.status === "pending") {
      try {
        await applyJournal(String(image.accountId), String(image.journalId));
      } catch (error) {
        log("ERROR", "stock journal could not be applied", { journalId: image.journalId, ...errorFields(error) });
        return { batchItemFailures: [{ itemIdentifier: record.dynamodb?.SequenceNumber ?? "" }] };
      }
      continue;
    }
    const oldImage = record.dynamodb?.OldImage ? unmarshall(record.dynamodb.OldImage as never) : undefined;
    if (classifyChange(image ?? oldImage).kind === "tracked") tracked += 1;
  }
  log("DEBUG", "stream batch", { records: event.Records.length, tracked });
  return { batchItemFailures: [] };
}
