import { TransactionCanceledError } from "../core/failures.js";
import type { IdempotencyCompletion } from "../core/idempotency.js";
import { isConditionalFailure } from "./dynamo-errors.js";
import { readToOffset } from "./offset-page.js";
import { db, type WebhookDeliveryItem, type WebhookEndpointItem } from "./service.js";
import { writeTransaction } from "./transactions.js";

/** Storage of webhook endpoints and their delivery records (architecture section 9). */

type Outcome = { completion: IdempotencyCompletion | undefined; body: unknown };
type EndpointKey = { accountId: string; endpointId: string };

/** Every endpoint of the account (at most 10): ONE Query. */
export async function queryWebhookEndpoints(accountId: string): Promise<WebhookEndpointItem[]> {
  const { data } = await db().entities.webhookEndpoint.query.primary({ accountId }).go({ pages: "all", consistent: true });
  return data;
}

export async function readWebhookEndpoint(key: EndpointKey): Promise<WebhookEndpointItem | undefined> {
  const { data } = await db().entities.webhookEndpoint.get(key).go({ consistent: true });
  return data ?? undefined;
}

/** The label of the account's endpoint count in an endpoint insert. */
export const ENDPOINT_COUNT_LABEL = "webhook endpoint count";

/**
 * Inserts an endpoint and counts it, on condition that the account holds fewer than `limit`
 * (`ENDPOINT_COUNT_LABEL` fails at the limit). Returns whether it was written.
 */
export async function insertWebhookEndpoint(endpoint: WebhookEndpointItem, limit: number, outcome: Outcome): Promise<boolean> {
  const failed = await writeTransaction((tx) => {
    tx.add(
      ENDPOINT_COUNT_LABEL,
      tx.entities.accountCounters
        .update({ accountId: endpoint.accountId })
        .add({ webhookEndpointCount: 1 })
        .where(({ webhookEndpointCount }, { notExists, lt }) => `${notExists(webhookEndpointCount)} OR ${lt(webhookEndpointCount, limit)}`)
        .commit(),
    );
    tx.add("webhook endpoint", tx.entities.webhookEndpoint.create(endpoint).commit());
  }, outcome);
  if (failed?.failed(ENDPOINT_COUNT_LABEL) && !failed.failedOtherThan(ENDPOINT_COUNT_LABEL)) return false;
  if (failed) throw new TransactionCanceledError(failed.reasons);
  return true;
}

/** The writable fields of an endpoint; `null` removes an optional one. */
export interface EndpointChanges {
  url?: string;
  description?: string | null;
  resources?: string[];
  status?: "enabled" | "disabled";
  disabledReason?: "manual" | "failing" | "permission_revoked" | null;
  secret?: string;
  previousSecret?: string | null;
  previousSecretUntil?: number | null;
  failedMessages?: number;
  enabledAt?: string;
  updatedAt: string;
}

/**
 * Changes an endpoint on condition that it exists and is still at `expectedUpdatedAt` (the
 * state the caller read and built the change from). Returns false when either failed.
 */
export async function changeWebhookEndpoint(key: EndpointKey, changes: EndpointChanges, expectedUpdatedAt: string, outcome?: Outcome): Promise<boolean> {
  const set: Record<string, unknown> = {};
  const remove: string[] = [];
  for (const [name, value] of Object.entries(changes)) {
    if (value === undefined) continue;
    if (value === null) remove.push(name);
    else set[name] = value;
  }
  const failed = await writeTransaction((tx) => {
    let update = tx.entities.webhookEndpoint.patch(key).set(set as never);
    if (remove.length > 0) update = update.remove(remove as never);
    tx.add("webhook endpoint", update.where(({ updatedAt }, { eq }) => eq(updatedAt, expectedUpdatedAt)).commit());
  }, outcome);
  return failed === null;
}

/**
 * Deletes an endpoint and uncounts it, on condition that it exists and (when `expectedUpdatedAt`
 * is given) was not changed since it was read. Returns false when that condition failed.
 */
export async function deleteWebhookEndpoint(key: EndpointKey, outcome: Outcome, expectedUpdatedAt?: string): Promise<boolean> {
  const failed = await writeTransaction((tx) => {
    tx.add(
      "webhook endpoint",
      tx.entities.webhookEndpoint
        .delete(key)
        .where(({ endpointId, updatedAt }, { exists, eq }) => (expectedUpdatedAt === undefined ? exists(endpointId) : eq(updatedAt, expectedUpdatedAt)))
        .commit(),
    );
    tx.add("webhook endpoint count", tx.entities.accountCounters.update({ accountId: key.accountId }).add({ webhookEndpointCount: -1 }).commit());
  }, outcome);
  if (failed?.failed("webhook endpoint")) return false;
  if (failed) throw new TransactionCanceledError(failed.reasons);
  return true;
}

/**
 * Disables an endpoint for `reason` on condition that it is enabled (so a manual re-enable
 * that happened meanwhile is not undone by a stale decision). Returns whether it changed.
 */
export async function disableWebhookEndpoint(key: EndpointKey, reason: "failing" | "permission_revoked", updatedAt: string): Promise<boolean> {
  try {
    await db()
      .entities.webhookEndpoint.patch(key)
      .set({ status: "disabled", disabledReason: reason, updatedAt })
      .where(({ status }, { eq }) => eq(status, "enabled"))
      .go({ response: "none" });
    return true;
  } catch (error) {
    if (isConditionalFailure(error)) return false;
    throw error;
  }
}

/**
 * Counts one more message of the endpoint that failed every attempt; returns the new count of
 * consecutive failed messages (0 when the endpoint is gone).
 */
export async function countFailedMessage(key: EndpointKey): Promise<number> {
  try {
    const { data } = await db().entities.webhookEndpoint.patch(key).add({ failedMessages: 1 }).go({ response: "all_new" });
    return Number(data.failedMessages ?? 0);
  } catch (error) {
    if (isConditionalFailure(error)) return 0; // deleted meanwhile
    throw error;
  }
}

/** A delivered message ends the endpoint's run of failed messages. */
export async function resetFailedMessages(key: EndpointKey): Promise<void> {
  try {
    await db()
      .entities.webhookEndpoint.patch(key)
      .set({ failedMessages: 0 })
      .where(({ failedMessages }, { gt }) => gt(failedMessages, 0))
      .go({ response: "none" });
  } catch (error) {
    if (!isConditionalFailure(error)) throw error;
  }
}

/**
 * Records one delivery attempt and counts it on its UTC day, in ONE transaction (the list's
 * total never disagrees with its records).
 */
export async function recordDeliveryAttempt(delivery: WebhookDeliveryItem, day: string): Promise<void> {
  const failed = await writeTransaction((tx) => {
    tx.add("delivery", tx.entities.webhookDelivery.create(delivery).commit());
    tx.add(
      "delivery day",
      tx.entities.webhookDeliveryDay
        .update({ accountId: delivery.accountId, endpointId: delivery.endpointId, day })
        .add({ count: 1 })
        .set({ expiresAt: delivery.expiresAt })
        .commit(),
    );
  });
  if (failed) throw new TransactionCanceledError(failed.reasons);
}

/**
 * Clears the planned next attempt of the message's latest attempt recorded since `since` (the
 * retry it planned was dropped: its endpoint was disabled). One Query of the endpoint's attempts
 * since then (a disabled endpoint records test attempts only) and one update.
 */
export async function clearPlannedAttempt(key: EndpointKey, messageId: string, since: string): Promise<number> {
  const { data } = await db()
    .entities.webhookDelivery.query.primary(key)
    .gte({ createdAt: since })
    .where(({ messageId: id, nextAttemptAt }, { eq, exists }) => `${eq(id, messageId)} AND ${exists(nextAttemptAt)}`)
    .go({ pages: "all" });
  // Only the latest attempt planned the retry that no longer happens; earlier ones' retries ran.
  const planner = data.reduce<(typeof data)[number] | undefined>(
    (latest, delivery) => (!latest || delivery.createdAt > latest.createdAt ? delivery : latest),
    undefined,
  );
  if (!planner) return 0;
  await db()
    .entities.webhookDelivery.patch({ ...key, createdAt: planner.createdAt, deliveryId: planner.deliveryId })
    .remove(["nextAttemptAt"])
    .go();
  return 1;
}

/** How many attempts the endpoint recorded on the days from `fromDay` on: ONE Query of at most ~30 day items. */
export async function countDeliveries(key: EndpointKey, fromDay: string): Promise<number> {
  const { data } = await db().entities.webhookDeliveryDay.query.primary(key).gte({ day: fromDay }).go({ pages: "all" });
  return data.reduce((sum, day) => sum + day.count, 0);
}

/** Attempts recorded from `fromDay` on, newest first, entries offset..offset+limit (reads only up to them). */
export async function queryDeliveries(key: EndpointKey, fromDay: string, offset: number, limit: number): Promise<WebhookDeliveryItem[]> {
  return readToOffset(offset, limit, async (cursor, want) => {
    const page = await db().entities.webhookDelivery.query.primary(key).gte({ createdAt: fromDay }).go({ order: "desc", limit: want, pages: 1, cursor });
    return { data: page.data, cursor: page.cursor };
  });
}
