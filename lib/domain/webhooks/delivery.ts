import { randomUUID } from "node:crypto";
import { currentTime, epochSeconds } from "../../core/clock.js";
import { isLocalStack, webhookRetrySchedule } from "../../core/config.js";
import { errorFields, log } from "../../core/log.js";
import {
  clearPlannedAttempt,
  countFailedMessage,
  disableWebhookEndpoint,
  readWebhookEndpoint,
  recordDeliveryAttempt,
  resetFailedMessages,
} from "../../db/webhooks.js";
import { webhookHeaders } from "../../webhooks/signing.js";
import { postWebhook } from "../../webhooks/transport.js";
import { readUser } from "../../db/auth-store.js";
import type { WebhookEndpointItem } from "../../db/service.js";
import { nowIso } from "../../core/clock.js";
import {
  accessRevoked,
  viewerOf,
  DELIVERY_TIMEOUT_MS,
  FAILED_MESSAGES_TO_DISABLE,
  dayOf,
  expiryOfDay,
  isSuccess,
  planAfterAttempt,
  droppedByEndpoint,
  signingSecrets,
  TEST_TYPE,
  type AttemptPlan,
} from "./model.js";

/**
 * One message on its way to one endpoint, as the queue carries it (SQS deployed, in-process
 * locally). `messageId` is the `webhook-id` of every attempt; `body` is signed as it is.
 */
export interface WebhookMessage {
  accountId: string;
  endpointId: string;
  messageId: string;
  type: string;
  body: string;
  /** When the message was made (absent on messages queued before it was recorded). */
  createdAt?: string;
}

/** How late a retry may run after its planned time (queue delays) and still find the attempt that planned it. */
const PLANNED_ATTEMPT_SLACK_SECONDS = 3_600;

/**
 * Why a message is not sent (undefined: it is): its endpoint was deleted; disabled (only test
 * messages go to a disabled endpoint), or disabled and enabled again since the message was made
 * (disabling drops the messages waiting); its `resources` no longer select the message's
 * resource (an endpoint receives a change while it selects its resource, retries included); or
 * its user lost the right to sync one of its resources since (the endpoint is disabled with
 * `permission_revoked`, as the fan-out does).
 */
async function dropReason(message: WebhookMessage, endpoint: WebhookEndpointItem | undefined): Promise<string | undefined> {
  if (!endpoint) return "endpoint deleted";
  if (message.type === TEST_TYPE) return undefined;
  const dropped = droppedByEndpoint(endpoint, message.type, message.createdAt);
  if (dropped) return dropped;
  if (!accessRevoked(viewerOf(await readUser(endpoint.accountId, endpoint.userId)), endpoint)) return undefined;
  await disableRevokedEndpoint({ accountId: endpoint.accountId, endpointId: endpoint.endpointId });
  return "endpoint user lost access";
}

/** Disables an endpoint whose user lost the right to one of its resources (`permission_revoked`), once. */
export async function disableRevokedEndpoint(key: { accountId: string; endpointId: string }): Promise<void> {
  if (await disableWebhookEndpoint(key, "permission_revoked", nowIso())) log("WARN", "webhook endpoint disabled", { ...key, reason: "permission_revoked" });
}

/**
 * Makes attempt `attempt` (1-based) of a message and records it (`GET .../deliveries`), then
 * says what comes next: nothing (`delivered`, or `dropped` when the endpoint was deleted or
 * disabled meanwhile: only test messages go to a disabled endpoint), another attempt after the
 * schedule's delay (`retry`), or `exhausted` when the last attempt failed. The third
 * consecutive exhausted message (test messages aside) disables the endpoint with `failing`; a
 * delivered one ends the run. Never logs the secret or the body.
 */
export async function attemptDelivery(message: WebhookMessage, attempt: number): Promise<AttemptPlan | { kind: "dropped" }> {
  const key = { accountId: message.accountId, endpointId: message.endpointId };
  const endpoint = await readWebhookEndpoint(key);
  const reason = await dropReason(message, endpoint);
  if (reason || !endpoint) {
    log("INFO", "webhook message dropped", { ...key, messageId: message.messageId, reason });
    // The attempt before this one planned it: its next_attempt_at no longer happens.
    const plannedAfter = webhookRetrySchedule()[attempt - 2];
    if (endpoint && plannedAfter !== undefined) {
      const since = new Date(Date.now() - (plannedAfter + PLANNED_ATTEMPT_SLACK_SECONDS) * 1000).toISOString();
      await clearPlannedAttempt(key, message.messageId, since).catch((error: unknown) =>
        log("WARN", "a dropped retry's next_attempt_at could not be cleared", { ...key, messageId: message.messageId, ...errorFields(error) }),
      );
    }
    return { kind: "dropped" };
  }
  // The header's time is the real time of the attempt (receivers check it against theirs).
  const timestamp = Math.floor(Date.now() / 1000);
  const headers = webhookHeaders(signingSecrets(endpoint, epochSeconds()), message.messageId, timestamp, message.body);
  const outcome = await postWebhook(endpoint.url, headers, message.body, { timeoutMs: DELIVERY_TIMEOUT_MS, allowLoopback: isLocalStack() });
  const succeeded = isSuccess(outcome.status);
  const plan = planAfterAttempt(succeeded, attempt, webhookRetrySchedule());
  const now = currentTime();
  const day = dayOf(now);
  await recordDeliveryAttempt(
    {
      ...key,
      deliveryId: randomUUID(),
      messageId: message.messageId,
      eventType: message.type,
      attempt,
      status: succeeded ? "succeeded" : "failed",
      responseStatus: outcome.status ?? undefined,
      // A response that is not a 2xx is described by its status alone.
      error: outcome.error ?? undefined,
      durationMs: outcome.durationMs,
      nextAttemptAt: plan.kind === "retry" ? new Date(now.getTime() + plan.delaySeconds * 1000).toISOString() : undefined,
      messageCreatedAt: message.createdAt,
      createdAt: now.toISOString(),
      expiresAt: expiryOfDay(day),
    },
    day,
  );
  // A receiver that fails is the integrator's to fix (its deliveries show it): INFO, not WARN.
  log("INFO", "webhook attempt", {
    ...key,
    messageId: message.messageId,
    type: message.type,
    attempt,
    responseStatus: outcome.status,
    error: outcome.error,
    durationMs: outcome.durationMs,
    next: plan.kind,
  });
  // Test messages neither count nor end a run of failed messages.
  if (plan.kind === "delivered" && message.type !== TEST_TYPE && endpoint.failedMessages > 0) await resetFailedMessages(key);
  if (plan.kind === "exhausted" && message.type !== TEST_TYPE) {
    const failedInARow = await countFailedMessage(key);
    if (failedInARow >= FAILED_MESSAGES_TO_DISABLE && (await disableWebhookEndpoint(key, "failing", now.toISOString()))) {
      log("WARN", "webhook endpoint disabled", { ...key, reason: "failing", failedMessages: failedInARow });
    }
  }
  return plan;
}
