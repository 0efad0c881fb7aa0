import type { DynamoDBBatchResponse, DynamoDBStreamEvent } from "aws-lambda";
import { unmarshall } from "@aws-sdk/util-dynamodb";
import { classifyChange } from "../../lib/sync/classify.js";
import { log } from "../../lib/http/log.js";

/**
 * The DynamoDB Streams consumer (not behind the API). It classifies every change; the
 * entities that feed `GET /sync` (items and documents) arrive with later endpoint groups,
 * so today every change is a platform or reference-data change and is skipped by design.
 */
export async function handler(event: DynamoDBStreamEvent): Promise<DynamoDBBatchResponse> {
  let tracked = 0;
  for (const record of event.Records) {
    const image = record.dynamodb?.NewImage ?? record.dynamodb?.OldImage;
    const change = classifyChange(image ? unmarshall(image as never) : undefined);
    if (change.kind === "tracked") tracked += 1;
  }
  log("DEBUG", "stream batch", { records: event.Records.length, tracked });
  return { batchItemFailures: [] };
}
