import { randomUUID } from "node:crypto";
import type { Principal } from "../../auth/permissions.js";
import { currentTime, epochSeconds, nowIso } from "../../core/clock.js";
import { isLocalStack } from "../../core/config.js";
import { ApiError, errors } from "../../core/errors.js";
import type { IdempotencyCompletion } from "../../core/idempotency.js";
import { listEnvelope, pageOfAll, type ListEnvelope, type PageRequest } from "../../core/pagination.js";
import { CONTENTION_POLICY, RETRY, retrying } from "../../db/retry.js";
import type { WebhookDeliveryItem, WebhookEndpointItem } from "../../db/service.js";
import {
  changeWebhookEndpoint,
  countDeliveries,
  deleteWebhookEndpoint,
  insertWebhookEndpoint,
  queryDeliveries,
  queryWebhookEndpoints,
  readWebhookEndpoint,
  type EndpointChanges,
} from "../../db/webhooks.js";
import type { WebhookEndpointCreateBody, WebhookEndpointUpdateBody } from "../../schemas/webhooks.js";
import { SYNC_RESOURCES, type SyncResource } from "../../sync/classify.js";
import { newWebhookSecret, randomMessageId } from "../../webhooks/signing.js";
import { maySync, requireSyncAccess, seesAccountWide } from "../sync/access.js";
import { readUser } from "../../db/auth-store.js";
import { plannedAttemptOf, viewerOf } from "./model.js";
import { enqueueWebhookMessages } from "./queue.js";
import {
  MAX_ENDPOINTS,
  PREVIOUS_SECRET_SECONDS,
  byNewest,
  checkEndpointUrl,
  firstKeptDay,
  presentEndpoint,
  testMessageBody,
  type WebhookEndpointResource,
} from "./model.js";

/** The webhook endpoints API (architecture section 9). */

type Outcome = IdempotencyCompletion | undefined;
const missing = (endpointId: string) => errors.resourceMissing("webhook endpoint", endpointId);

/**
 * The resources an endpoint receives: the named ones (each needs what `GET /sync` needs for it,
 * else 403 `sync_permission_denied`), or every resource the key may sync when none are named
 * (none at all is the same 403).
 */
function resourcesFor(principal: Principal, named: readonly SyncResource[] | undefined): SyncResource[] {
  if (named !== undefined) {
    const resources = [...new Set(named)].sort();
    requireSyncAccess(principal, resources);
    return resources;
  }
  const resources = SYNC_RESOURCES.filter((resource) => maySync(principal, resource));
  if (resources.length === 0) {
    throw new ApiError(
      403,
      "invalid_request_error",
      "sync_permission_denied",
      "This key may sync no resource (each needs its read scope and account-wide visibility), so an endpoint would receive nothing.",
      { param: "resources" },
    );
  }
  return resources;
}

/** A timestamp after `previous`, so every write moves `updated_at`. */
function nextUpdatedAt(previous: string): string {
  const now = nowIso();
  return now > previous ? now : new Date(Date.parse(previous) + 1).toISOString();
}

/** `POST /webhook-endpoints`: 201 with the secret (the only time it is shown, with rotate-secret's). */
export async function createWebhookEndpoint(principal: Principal, input: WebhookEndpointCreateBody, completion: Outcome): Promise<WebhookEndpointResource> {
  checkEndpointUrl(input.url, isLocalStack());
  const resources = resourcesFor(principal, input.resources);
  const now = nowIso();
  const endpoint: WebhookEndpointItem = {
    accountId: principal.accountId,
    endpointId: randomUUID(),
    url: input.url,
    description: input.description ?? undefined,
    resources,
    status: "enabled",
    userId: principal.userId,
    secret: newWebhookSecret(),
    failedMessages: 0,
    createdAt: now,
    updatedAt: now,
  };
  const resource = presentEndpoint(endpoint, { withSecret: true });
  // Creates of one account take turns on its endpoint count (lib/db/retry.ts) rather than collide.
  const inserted = await retrying(
    "create webhook endpoint",
    () => insertWebhookEndpoint(endpoint, MAX_ENDPOINTS, { completion, body: resource }),
    CONTENTION_POLICY,
    [`webhook-endpoints:${principal.accountId}`],
  );
  if (!inserted) {
    throw errors.stateConflict(
      "webhook_endpoint_limit_reached",
      `The account already has ${MAX_ENDPOINTS} webhook endpoints, the most it may have; delete one to create another.`,
    );
  }
  return resource;
}

/** `GET /webhook-endpoints`: newest first (at most 10, read with one Query). */
export async function listWebhookEndpoints(principal: Principal, url: string, page: PageRequest): Promise<ListEnvelope<WebhookEndpointResource>> {
  const endpoints = await queryWebhookEndpoints(principal.accountId);
  return pageOfAll(
    url,
    page,
    [...endpoints].sort(byNewest).map((endpoint) => presentEndpoint(endpoint)),
  );
}

async function readEndpoint(principal: Principal, endpointId: string): Promise<WebhookEndpointItem> {
  const endpoint = await readWebhookEndpoint({ accountId: principal.accountId, endpointId });
  if (!endpoint) throw missing(endpointId);
  return endpoint;
}

export async function getWebhookEndpoint(principal: Principal, endpointId: string): Promise<WebhookEndpointResource> {
  return presentEndpoint(await readEndpoint(principal, endpointId));
}

/**
 * Changes an endpoint from its current state (read again when another write got there first).
 * `change` returns the fields to write; the response is the endpoint after them.
 */
async function changeEndpoint(
  principal: Principal,
  endpointId: string,
  operation: string,
  change: (endpoint: WebhookEndpointItem) => Omit<EndpointChanges, "updatedAt"> | Promise<Omit<EndpointChanges, "updatedAt">>,
  completion: Outcome,
  options: { withSecret?: boolean; resources?: readonly SyncResource[] } = {},
): Promise<WebhookEndpointResource> {
  // Writers of one endpoint take turns (lib/db/retry.ts) rather than collide.
  return retrying(
    operation,
    async () => {
      const endpoint = await readEndpoint(principal, endpointId);
      // Changing an endpoint (its URL, its secret...) needs what creating it needed: another
      // user of the account cannot point someone else's feed somewhere it could not sync itself.
      // The endpoint's own user is held to the resources it will have (as a create is), so one
      // who lost a resource can narrow its endpoint to those it may still sync.
      const current = endpoint.resources as SyncResource[];
      const own = endpoint.userId === principal.userId && options.resources !== undefined;
      requireSyncAccess(principal, own ? options.resources! : [...new Set([...current, ...(options.resources ?? [])])]);
      const asked = await change(endpoint);
      // A write that changes nothing writes nothing (README, "What you read you can write back"):
      // no new updated_at; the request's outcome is stored by the idempotency layer as usual.
      const stored = endpoint as unknown as Record<string, unknown>;
      if (Object.entries(asked).every(([name, value]) => value === undefined || JSON.stringify(stored[name] ?? null) === JSON.stringify(value ?? null))) {
        return presentEndpoint(endpoint, options);
      }
      const changes: EndpointChanges = { ...asked, updatedAt: nextUpdatedAt(endpoint.updatedAt) };
      const next = { ...endpoint } as Record<string, unknown>;
      for (const [name, value] of Object.entries(changes)) if (value !== undefined) next[name] = value ?? undefined;
      const resource = presentEndpoint(next as unknown as WebhookEndpointItem, options);
      const key = { accountId: principal.accountId, endpointId };
      return (await changeWebhookEndpoint(key, changes, endpoint.updatedAt, { completion, body: resource })) ? resource : RETRY;
    },
    CONTENTION_POLICY,
    [`webhook-endpoint:${principal.accountId}:${endpointId}`],
  );
}

/**
 * `PATCH /webhook-endpoints/{id}`: `url`, `resources` (each needs what `GET /sync` needs),
 * `description` (null clears it), `status` (`enabled` clears `disabled_reason` and the run of
 * failed messages; `disabled` sets `manual`).
 */
export async function updateWebhookEndpoint(
  principal: Principal,
  endpointId: string,
  input: WebhookEndpointUpdateBody,
  completion: Outcome,
): Promise<WebhookEndpointResource> {
  if (input.url !== undefined) checkEndpointUrl(input.url, isLocalStack());
  const resources = input.resources === undefined ? undefined : resourcesFor(principal, input.resources);
  return changeEndpoint(
    principal,
    endpointId,
    "update webhook endpoint",
    async (endpoint) => {
      const newResources = resources !== undefined && JSON.stringify(resources) !== JSON.stringify(endpoint.resources);
      const reenabling = input.status === "enabled" && endpoint.status === "disabled";
      if (newResources || reenabling)
        await requireSyncedByEndpointUser(principal, endpoint, resources ?? (endpoint.resources as SyncResource[]), newResources ? "resources" : "status");
      return {
        url: input.url,
        description: input.description,
        resources,
        // Enabled again: the run of failed messages starts over, and messages made while it was
        // disabled stay dropped (`enabledAt`). `enabled` on an enabled endpoint changes nothing.
        ...(reenabling ? { status: "enabled", disabledReason: null, failedMessages: 0, enabledAt: nowIso() } : {}),
        ...(input.status === "disabled" ? { status: "disabled", disabledReason: "manual" } : {}),
      };
    },
    completion,
    { resources },
  );
}

/**
 * New `resources` for another user's endpoint, or its re-enabling: its deliveries follow its own
 * user's permissions (`user_id`), so each resource must be one that user may still sync (else
 * 422 on `param`: the endpoint would be disabled again at its next change, delivering nothing).
 */
async function requireSyncedByEndpointUser(
  principal: Principal,
  endpoint: WebhookEndpointItem,
  resources: SyncResource[],
  param: "resources" | "status",
): Promise<void> {
  // The caller's own endpoint: the caller's access was checked already.
  if (endpoint.userId === principal.userId) return;
  const viewer = viewerOf(await readUser(principal.accountId, endpoint.userId));
  const lacking = resources.filter((resource) => !viewer || !seesAccountWide(viewer, resource));
  if (lacking.length > 0) {
    throw errors.validationFailed([
      {
        param,
        code: "invalid",
        message: `the endpoint's user (user_id) may not sync ${lacking.join(", ")}: deliveries follow that user's permissions${param === "status" ? ", so the endpoint cannot be enabled" : ""}.`,
      },
    ]);
  }
}

/** `POST /webhook-endpoints/{id}/rotate-secret`: a new secret; the old one signs too for 24 hours. */
export async function rotateWebhookSecret(principal: Principal, endpointId: string, completion: Outcome): Promise<WebhookEndpointResource> {
  return changeEndpoint(
    principal,
    endpointId,
    "rotate webhook secret",
    (endpoint) => ({ secret: newWebhookSecret(), previousSecret: endpoint.secret, previousSecretUntil: epochSeconds() + PREVIOUS_SECRET_SECONDS }),
    completion,
    { withSecret: true },
  );
}

/**
 * Acting on another user's endpoint (deleting it, testing it) needs what changing it needs: the
 * caller may sync each of its resources (else 403 `sync_permission_denied`). Its own user may
 * always act on it, even after losing a resource.
 */
function requireActingOn(principal: Principal, endpoint: WebhookEndpointItem): void {
  if (endpoint.userId !== principal.userId) requireSyncAccess(principal, endpoint.resources as SyncResource[]);
}

/** `DELETE /webhook-endpoints/{id}`: its messages still waiting are dropped. */
export async function deleteWebhookEndpointOf(
  principal: Principal,
  endpointId: string,
  completion: Outcome,
): Promise<{ id: string; object: "webhook_endpoint"; deleted: true }> {
  const body = { id: endpointId, object: "webhook_endpoint" as const, deleted: true as const };
  const key = { accountId: principal.accountId, endpointId };
  // A caller who may sync every resource may delete any endpoint: one conditional delete.
  if (SYNC_RESOURCES.every((resource) => maySync(principal, resource))) {
    if (!(await deleteWebhookEndpoint(key, { completion, body }))) throw missing(endpointId);
    return body;
  }
  // Otherwise its resources decide, as read: the delete is conditional on the endpoint being
  // unchanged since (a PATCH adding a resource in between is read again).
  return retrying(
    "delete webhook endpoint",
    async () => {
      const endpoint = await readEndpoint(principal, endpointId);
      requireActingOn(principal, endpoint);
      return (await deleteWebhookEndpoint(key, { completion, body }, endpoint.updatedAt)) ? body : RETRY;
    },
    CONTENTION_POLICY,
    [`webhook-endpoint:${principal.accountId}:${endpointId}`],
  );
}

/** `POST /webhook-endpoints/{id}/test`: 202; one `webhook.test` message to this endpoint (even a disabled one). */
export async function sendTestMessage(principal: Principal, endpointId: string): Promise<{ object: "webhook_test"; message_id: string }> {
  const endpoint = await readEndpoint(principal, endpointId);
  requireActingOn(principal, endpoint);
  const { type, body } = testMessageBody(endpoint.endpointId, currentTime());
  const messageId = randomMessageId();
  await enqueueWebhookMessages([{ accountId: principal.accountId, endpointId, messageId, type, body }]);
  return { object: "webhook_test", message_id: messageId };
}

export interface WebhookDeliveryResource {
  id: string;
  object: "webhook_delivery";
  message_id: string;
  event_type: string;
  attempt: number;
  status: "succeeded" | "failed";
  response_status: number | null;
  error: string | null;
  duration_ms: number;
  next_attempt_at: string | null;
  created_at: string;
}

/** A delivery attempt as the API shows it (`next_attempt_at`: `plannedAttemptOf`). */
export function presentDelivery(delivery: WebhookDeliveryItem, endpoint: WebhookEndpointItem, now: string): WebhookDeliveryResource {
  return {
    id: delivery.deliveryId,
    object: "webhook_delivery",
    message_id: delivery.messageId,
    event_type: delivery.eventType,
    attempt: delivery.attempt,
    status: delivery.status,
    response_status: delivery.responseStatus ?? null,
    error: delivery.error ?? null,
    duration_ms: delivery.durationMs,
    next_attempt_at: plannedAttemptOf(delivery, endpoint, now),
    created_at: delivery.createdAt,
  };
}

/**
 * `GET /webhook-endpoints/{id}/deliveries`: attempts of the last 30 days (UTC), newest first.
 * The page reads only up to its last entry; the total is the sum of per-day counts.
 */
export async function listDeliveries(principal: Principal, endpointId: string, url: string, page: PageRequest): Promise<ListEnvelope<WebhookDeliveryResource>> {
  const key = { accountId: principal.accountId, endpointId };
  const endpoint = await readEndpoint(principal, endpointId);
  const now = currentTime();
  const fromDay = firstKeptDay(now);
  const [total, deliveries] = await Promise.all([countDeliveries(key, fromDay), queryDeliveries(key, fromDay, (page.page - 1) * page.limit, page.limit)]);
  return listEnvelope(
    url,
    page,
    total,
    deliveries.map((delivery) => presentDelivery(delivery, endpoint, now.toISOString())),
  );
}
