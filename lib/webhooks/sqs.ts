import { ChangeMessageVisibilityCommand, SendMessageBatchCommand, SendMessageCommand, SQSClient } from "@aws-sdk/client-sqs";

/** The deployed webhook queue (SQS): what the fan-out, the test route and the delivery function call. */

let client: SQSClient | undefined;
const sqs = () => {
  client ??= new SQSClient({});
  return client;
};

const BATCH = 10; // SendMessageBatch takes at most 10 entries

/** Sends message bodies to a queue, 10 per call; entries SQS refused are sent again once, then it throws. */
export async function sendToQueue(queueUrl: string, bodies: readonly string[]): Promise<void> {
  const chunks: string[][] = [];
  for (let start = 0; start < bodies.length; start += BATCH) chunks.push(bodies.slice(start, start + BATCH));
  await Promise.all(
    chunks.map(async (chunk) => {
      let pending = chunk.map((body, index) => ({ Id: String(index), MessageBody: body }));
      for (let round = 0; round < 2 && pending.length > 0; round++) {
        const result = await sqs().send(new SendMessageBatchCommand({ QueueUrl: queueUrl, Entries: pending }));
        const failed = new Set((result.Failed ?? []).map((entry) => entry.Id));
        pending = pending.filter((entry) => failed.has(entry.Id));
      }
      if (pending.length > 0) throw new Error(`SQS refused ${pending.length} webhook message(s) twice.`);
    }),
  );
}

/** Sends one body to a queue (the failed-message queue). */
export async function sendOneToQueue(queueUrl: string, body: string): Promise<void> {
  await sqs().send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: body }));
}

/** Hides a received message for `seconds`: its next receive is the retry. */
export async function delayReceivedMessage(queueUrl: string, receiptHandle: string, seconds: number): Promise<void> {
  await sqs().send(
    new ChangeMessageVisibilityCommand({ QueueUrl: queueUrl, ReceiptHandle: receiptHandle, VisibilityTimeout: Math.min(43_200, Math.ceil(seconds)) }),
  );
}
