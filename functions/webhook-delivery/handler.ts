import type { SQSBatchResponse, SQSEvent, SQSRecord } from "aws-lambda";
import { webhookFailedQueueUrl, webhookQueueUrl } from "../../lib/core/config.js";
import { errorFields, log } from "../../lib/core/log.js";
import { attemptDelivery, type WebhookMessage } from "../../lib/domain/webhooks/delivery.js";
import { delayReceivedMessage, sendOneToQueue } from "../../lib/webhooks/sqs.js";

/**
 * The webhook delivery function (not behind the API): consumes the webhook queue, one attempt
 * per received message (the attempt number is the message's receive count). A failed attempt
 * with retries left hides the message for the schedule's delay (ChangeMessageVisibility) and
 * reports it failed, so SQS hands it back then; an exhausted one is copied to the failed queue
 * (its alarm) and deleted. A message that is not a webhook message goes to the failed queue as is.
 */
export async function handler(event: SQSEvent): Promise<SQSBatchResponse> {
  const failures = await Promise.all(event.Records.map(deliverRecord));
  return { batchItemFailures: failures.filter((id): id is string => id !== undefined).map((itemIdentifier) => ({ itemIdentifier })) };
}

function messageOf(body: string): WebhookMessage | undefined {
  try {
    const parsed = JSON.parse(body) as Partial<WebhookMessage>;
    const fields = [parsed.accountId, parsed.endpointId, parsed.messageId, parsed.type, parsed.body];
    return fields.every((field) => typeof field === "string") ? (parsed as WebhookMessage) : undefined;
  } catch {
    return undefined;
  }
}

/** Delivers one record; returns its id when SQS must hand it back (a retry, or a failure to run). */
async function deliverRecord(record: SQSRecord): Promise<string | undefined> {
  const failedQueue = webhookFailedQueueUrl();
  try {
    const message = messageOf(record.body);
    if (!message) {
      log("ERROR", "not a webhook message", { sqsMessageId: record.messageId });
      if (failedQueue) await sendOneToQueue(failedQueue, record.body);
      return undefined;
    }
    const attempt = Math.max(1, Number(record.attributes.ApproximateReceiveCount) || 1);
    const plan = await attemptDelivery(message, attempt);
    if (plan.kind === "retry") {
      await delayReceivedMessage(webhookQueueUrl()!, record.receiptHandle, plan.delaySeconds);
      return record.messageId;
    }
    if (plan.kind === "exhausted" && failedQueue) await sendOneToQueue(failedQueue, record.body);
    return undefined;
  } catch (error) {
    // Storage or SQS failed: SQS hands the message back after the queue's visibility timeout.
    log("ERROR", "webhook attempt could not run", { sqsMessageId: record.messageId, ...errorFields(error) });
    return record.messageId;
  }
}
