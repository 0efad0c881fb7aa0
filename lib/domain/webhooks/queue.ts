import { webhookQueueUrl } from "../../core/config.js";
import { errorFields, log } from "../../core/log.js";
import { sendToQueue } from "../../webhooks/sqs.js";
import { attemptDelivery, type WebhookMessage } from "./delivery.js";

/**
 * Where webhook messages go once made: deployed, the SQS queue the delivery function consumes
 * (`WEBHOOK_QUEUE_URL`); on the local stack, this process, which makes the attempts itself and
 * waits out the retry schedule on timers (`WEBHOOK_RETRY_SCHEDULE` compresses it). Local
 * messages live in memory: stopping the local stack drops the retries still waiting.
 */
export async function enqueueWebhookMessages(messages: readonly WebhookMessage[]): Promise<void> {
  if (messages.length === 0) return;
  const queueUrl = webhookQueueUrl();
  if (queueUrl) {
    await sendToQueue(
      queueUrl,
      messages.map((message) => JSON.stringify(message)),
    );
    return;
  }
  for (const message of messages) runLocally(message, 1);
}

const waiting = new Set<NodeJS.Timeout>();
const running = new Set<Promise<void>>();
/** A local attempt that could not run (storage failing) runs again after this delay, as SQS would redeliver it. */
const LOCAL_REDELIVERY_MS = 1_000;
/** ...at most this many times in a row; then the message is dropped, as SQS moves it to the failed queue after 12 receives. */
const LOCAL_MAX_REDELIVERIES = 10;

function later(run: () => void, delayMs: number): void {
  const timer = setTimeout(() => {
    waiting.delete(timer);
    run();
  }, delayMs);
  timer.unref();
  waiting.add(timer);
}

function runLocally(message: WebhookMessage, attempt: number, redeliveries = 0): void {
  const run = (async () => {
    try {
      const plan = await attemptDelivery(message, attempt);
      if (plan.kind === "retry") later(() => runLocally(message, attempt + 1), plan.delaySeconds * 1000);
    } catch (error) {
      const dropped = redeliveries >= LOCAL_MAX_REDELIVERIES;
      log("ERROR", dropped ? "webhook message dropped: its attempt could not run" : "webhook attempt could not run", {
        messageId: message.messageId,
        attempt,
        ...errorFields(error),
      });
      if (!dropped) later(() => runLocally(message, attempt, redeliveries + 1), LOCAL_REDELIVERY_MS);
    }
  })();
  running.add(run);
  void run.finally(() => running.delete(run));
}

/** The local queue's attempts in flight and retries waiting (for the local stack's shutdown and the tests). */
export function localWebhookQueue(): { inFlight: number; waiting: number; stop: () => Promise<void> } {
  return {
    inFlight: running.size,
    waiting: waiting.size,
    stop: async () => {
      for (const timer of waiting) clearTimeout(timer);
      waiting.clear();
      await Promise.allSettled([...running]);
    },
  };
}
