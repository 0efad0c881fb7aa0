import type { SQSEvent } from "aws-lambda";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { handler } from "../../functions/webhook-delivery/handler.js";
import { useApiServer, type ApiClient } from "../support/api.js";
import { newAccount } from "../support/fixtures.js";
import { WebhookReceiver } from "../support/webhook-receiver.js";

/**
 * The deployed delivery function (functions/webhook-delivery/handler.ts) as SQS invokes it:
 * one attempt per record, the attempt number from the record's receive count. The paths that
 * need no SQS call run here against DynamoDB Local and a real receiver: a delivery, an
 * exhausted message (no failed queue configured), a dropped one and a record that is not a
 * webhook message. Scheduling a retry calls SQS (ChangeMessageVisibility): the stack test
 * checks its grant, the local queue tests its schedule.
 */
const api = useApiServer();
let receiver: WebhookReceiver;
const saved = process.env.WEBHOOK_RETRY_SCHEDULE;

beforeAll(async () => {
  receiver = await new WebhookReceiver().start();
});
afterAll(async () => {
  await receiver?.stop();
  if (saved === undefined) delete process.env.WEBHOOK_RETRY_SCHEDULE;
  else process.env.WEBHOOK_RETRY_SCHEDULE = saved;
});

function sqsEvent(body: string, receiveCount: number): SQSEvent {
  return {
    Records: [
      {
        messageId: "sqs-1",
        receiptHandle: "receipt-1",
        body,
        attributes: { ApproximateReceiveCount: String(receiveCount), SentTimestamp: "0", SenderId: "s", ApproximateFirstReceiveTimestamp: "0" },
        messageAttributes: {},
        md5OfBody: "",
        eventSource: "aws:sqs",
        eventSourceARN: "arn:aws:sqs:local:000000000000:webhooks",
        awsRegion: "local",
      },
    ],
  };
}

async function endpointOf(client: ApiClient, path: string): Promise<{ id: string; secret: string }> {
  const created = await client.post("/webhook-endpoints", { url: `${receiver.url}/${path}`, resources: ["item"] });
  expect(created.status, created.text).toBe(201);
  return created.body;
}

describe("the webhook delivery function", () => {
  it("delivers a record's message, signed, and records it as the attempt its receive count says", async () => {
    const account = await newAccount();
    const client = api().withKey(account.ownerKey);
    const endpoint = await endpointOf(client, "ok");
    receiver.secrets = [endpoint.secret];
    receiver.respond = () => 204;
    const body = JSON.stringify({
      type: "item.upsert",
      timestamp: "2026-11-27T08:00:00.000Z",
      data: { object: "change", resource: "item", id: "r1", operation: "upsert" },
    });
    const message = { accountId: account.accountId, endpointId: endpoint.id, messageId: "msg_function_ok", type: "item.upsert", body };
    expect(await handler(sqsEvent(JSON.stringify(message), 3))).toEqual({ batchItemFailures: [] });
    const received = receiver.messages.filter((m) => m.id === "msg_function_ok");
    expect(received).toHaveLength(1);
    expect(received[0]!.body).toBe(body);
    expect(received[0]!.verifiedWith).toEqual([endpoint.secret]);
    const deliveries = await client.get(`/webhook-endpoints/${endpoint.id}/deliveries`);
    expect(deliveries.body.data).toMatchObject([
      { message_id: "msg_function_ok", event_type: "item.upsert", attempt: 3, status: "succeeded", response_status: 204, error: null, next_attempt_at: null },
    ]);
  });

  it("records the last attempt of an exhausted message and lets SQS delete it", async () => {
    process.env.WEBHOOK_RETRY_SCHEDULE = "1,1";
    const account = await newAccount();
    const client = api().withKey(account.ownerKey);
    const endpoint = await endpointOf(client, "failing");
    receiver.respond = (m) => (m.id === "msg_function_failing" ? 500 : 204);
    const message = { accountId: account.accountId, endpointId: endpoint.id, messageId: "msg_function_failing", type: "item.upsert", body: "{}" };
    expect(await handler(sqsEvent(JSON.stringify(message), 3))).toEqual({ batchItemFailures: [] });
    const deliveries = await client.get(`/webhook-endpoints/${endpoint.id}/deliveries`);
    expect(deliveries.body.data).toMatchObject([{ attempt: 3, status: "failed", response_status: 500, error: null, next_attempt_at: null }]);
    // One exhausted message counts towards disabling; the endpoint stays enabled until the third.
    expect((await client.get(`/webhook-endpoints/${endpoint.id}`)).body.status).toBe("enabled");
  });

  it("drops a message whose endpoint was deleted, and a record that is not a webhook message", async () => {
    const account = await newAccount();
    const client = api().withKey(account.ownerKey);
    const endpoint = await endpointOf(client, "gone");
    expect((await client.request("DELETE", `/webhook-endpoints/${endpoint.id}`)).status).toBe(200);
    const before = receiver.messages.length;
    const message = { accountId: account.accountId, endpointId: endpoint.id, messageId: "msg_function_gone", type: "item.upsert", body: "{}" };
    expect(await handler(sqsEvent(JSON.stringify(message), 1))).toEqual({ batchItemFailures: [] });
    expect(await handler(sqsEvent("not json", 1))).toEqual({ batchItemFailures: [] });
    expect(await handler(sqsEvent(JSON.stringify({ accountId: 1 }), 1))).toEqual({ batchItemFailures: [] });
    expect(receiver.messages.length).toBe(before);
  });
});
