import { errors } from "../../core/errors.js";
import type { SyncResource } from "../../sync/classify.js";
import { seesAccountWide, type SyncViewer } from "../sync/access.js";
import { accessOfUser } from "../../auth/permissions.js";
import type { UserItem } from "../../db/service.js";

/**
 * Webhooks, the pure part (architecture section 9): what an endpoint and a delivery look like
 * to the API, which URLs an endpoint may have, what a message says, and when an endpoint is
 * disabled. Storage, queues and HTTP live elsewhere.
 */

/** At most this many endpoints per account (the next create is 409 `webhook_endpoint_limit_reached`). */
export const MAX_ENDPOINTS = 10;
/** An attempt succeeds on a 2xx within this time. */
export const DELIVERY_TIMEOUT_MS = 10_000;
/** After this many consecutive messages failed every attempt, the endpoint is disabled (`failing`). */
export const FAILED_MESSAGES_TO_DISABLE = 3;
/** Delivery records are listed (and kept) this many days. */
export const DELIVERY_RETENTION_DAYS = 30;
/** After a rotation, the previous secret signs too for this long. */
export const PREVIOUS_SECRET_SECONDS = 24 * 3600;

export type EndpointStatus = "enabled" | "disabled";
export type DisabledReason = "manual" | "failing" | "permission_revoked";

/** An endpoint as storage holds it (the fields the API shows and the rules read). */
export interface EndpointState {
  endpointId: string;
  url: string;
  description?: string;
  resources: string[];
  status: EndpointStatus;
  disabledReason?: DisabledReason;
  userId: string;
  secret: string;
  previousSecret?: string;
  previousSecretUntil?: number;
  createdAt: string;
  updatedAt: string;
}

export interface WebhookEndpointResource {
  id: string;
  object: "webhook_endpoint";
  url: string;
  description: string | null;
  resources: SyncResource[];
  status: EndpointStatus;
  disabled_reason: DisabledReason | null;
  user_id: string;
  created_at: string;
  updated_at: string;
  /** Only in the responses of create and rotate-secret. */
  secret?: string;
}

/** The endpoint as the API shows it; `withSecret` only for create and rotate-secret. */
export function presentEndpoint(endpoint: EndpointState, options: { withSecret?: boolean } = {}): WebhookEndpointResource {
  return {
    id: endpoint.endpointId,
    object: "webhook_endpoint",
    url: endpoint.url,
    description: endpoint.description ?? null,
    resources: endpoint.resources as SyncResource[],
    status: endpoint.status,
    disabled_reason: endpoint.status === "disabled" ? (endpoint.disabledReason ?? "manual") : null,
    user_id: endpoint.userId,
    created_at: endpoint.createdAt,
    updated_at: endpoint.updatedAt,
    ...(options.withSecret ? { secret: endpoint.secret } : {}),
  };
}

/** Newest first (ties by id, so the order is total). */
export function byNewest(a: EndpointState, b: EndpointState): number {
  return b.createdAt.localeCompare(a.createdAt) || a.endpointId.localeCompare(b.endpointId);
}

/** The local stack's `http://` hosts, as written (not other spellings URL parsing maps to them, such as `127.1`). */
const LOOPBACK_URL = /^http:\/\/(127\.0\.0\.1|localhost|\[::1\])(:\d{1,5})?([/?#]|$)/i;

/**
 * 422 `validation_failed` (`param: "url"`) unless the URL is one an endpoint may have: `https://`
 * (or, on the local stack only, `http://` to 127.0.0.1, localhost or [::1] with any port), at
 * most 2,048 characters, no user info. Where it resolves is checked at each delivery.
 */
export function checkEndpointUrl(url: string, localStack: boolean): void {
  const invalid = (message: string, code: "invalid_format" | "too_long" = "invalid_format") => errors.validationFailed([{ param: "url", code, message }]);
  if (url.length > 2048) throw invalid("must be at most 2048 characters.", "too_long");
  // Stored as sent: a space or control character (which URL parsing would trim or encode) is refused.
  // C0 and C1 control characters and DEL.
  const control = (code: number) => code < 0x20 || (code >= 0x7f && code <= 0x9f);
  if (/\s/.test(url) || [...url].some((char) => control(char.charCodeAt(0)))) {
    throw invalid("must not contain spaces or control characters.");
  }
  if (!URL.canParse(url)) throw invalid("must be an absolute URL.");
  // Judged as written too, since URL parsing forgives forms it then contacts differently
  // (`https:///x` reads as host x, `https://:@host/` drops an empty user info).
  const authority = /^[a-z][a-z0-9+.-]*:\/\/([^/?#]*)/i.exec(url)?.[1];
  if (!authority) throw invalid("must be an absolute URL with a host (scheme://host/...).");
  const parsed = new URL(url);
  if (authority.includes("@") || parsed.username !== "" || parsed.password !== "") throw invalid("must not carry user information.");
  if (parsed.protocol === "https:") return;
  if (localStack && parsed.protocol === "http:" && LOOPBACK_URL.test(url)) return;
  throw invalid(localStack ? "must use https:// (or, on the local stack, http:// to 127.0.0.1, localhost or [::1])." : "must use https://.");
}

/** The secrets an attempt is signed with at `nowSeconds`: the current one, and the previous one for 24 h after a rotation. */
export function signingSecrets(endpoint: Pick<EndpointState, "secret" | "previousSecret" | "previousSecretUntil">, nowSeconds: number): string[] {
  const previous = endpoint.previousSecret && (endpoint.previousSecretUntil ?? 0) > nowSeconds ? [endpoint.previousSecret] : [];
  return [endpoint.secret, ...previous];
}

/** A change marker as the fan-out reads it from the stream. */
export interface MarkerChange {
  accountId: string;
  seq: number;
  resource: SyncResource;
  recordId: string;
  operation: "upsert" | "delete";
  /** Epoch milliseconds of the change. */
  at: number;
}

/** The body of a change message: a thin event, as `/sync` reports it. */
export function changeMessageBody(change: MarkerChange): { type: string; body: string } {
  const type = `${change.resource}.${change.operation}`;
  const body = {
    type,
    timestamp: new Date(change.at).toISOString(),
    data: { object: "change", resource: change.resource, id: change.recordId, operation: change.operation },
  };
  return { type, body: JSON.stringify(body) };
}

/** The sync resource a change message's `type` (`<resource>.<operation>`) names. */
export const messageResource = (type: string): string => type.slice(0, type.lastIndexOf("."));

/** The type of a test message (`POST .../test`): it goes even to a disabled endpoint, and never counts as failing. */
export const TEST_TYPE = "webhook.test";

/**
 * Why a message made at `madeAt` (or an attempt made then) would be dropped at its next attempt,
 * read from the endpoint alone, or undefined when it would be attempted: the endpoint is disabled,
 * was disabled and enabled again since then, or no longer selects the message's resource. (A user
 * who lost access is found when the attempt reads the user, and disables the endpoint.)
 */
export function droppedByEndpoint(
  endpoint: Pick<EndpointState, "status" | "resources"> & { enabledAt?: string },
  type: string,
  madeAt: string | undefined,
): string | undefined {
  if (type === TEST_TYPE) return undefined;
  if (endpoint.status !== "enabled") return "endpoint disabled";
  if (madeAt && endpoint.enabledAt && madeAt < endpoint.enabledAt) return "endpoint disabled since the message was made";
  if (!receives(endpoint, messageResource(type))) return "endpoint no longer selects the message's resource";
  return undefined;
}

/**
 * The `next_attempt_at` a delivery attempt shows at `now`: the retry it planned, or null once the
 * endpoint says that retry will be dropped (`droppedByEndpoint`) while its time is still to come.
 * A planned time already past stays as recorded: that retry ran (a later attempt), or was dropped
 * and its time cleared when it came.
 */
export function plannedAttemptOf(
  attempt: { eventType: string; createdAt: string; messageCreatedAt?: string; nextAttemptAt?: string },
  endpoint: Pick<EndpointState, "status" | "resources"> & { enabledAt?: string },
  now: string,
): string | null {
  if (!attempt.nextAttemptAt) return null;
  if (attempt.nextAttemptAt <= now) return attempt.nextAttemptAt;
  // The message's own time when recorded (an attempt under way while the endpoint was disabled and enabled again ends after it).
  const madeAt = attempt.messageCreatedAt ?? attempt.createdAt;
  return droppedByEndpoint(endpoint, attempt.eventType, madeAt) === undefined ? attempt.nextAttemptAt : null;
}

/** The body of a `webhook.test` message. */
export function testMessageBody(endpointId: string, at: Date): { type: string; body: string } {
  const type = TEST_TYPE;
  return { type, body: JSON.stringify({ type, timestamp: at.toISOString(), data: { object: "webhook_endpoint", id: endpointId } }) };
}

/** What a stored user may sync: nothing once inactive. */
export const viewerOf = (user: UserItem | undefined): SyncViewer | undefined => (user?.status === "active" ? accessOfUser(user) : undefined);

/**
 * Whether an endpoint's user lost the right to any of its resources (architecture section 9: an
 * endpoint whose user lost that right is disabled with `permission_revoked`); no viewer means the
 * user is gone or inactive.
 */
export function accessRevoked(viewer: SyncViewer | undefined, endpoint: Pick<EndpointState, "resources">): boolean {
  return !viewer || endpoint.resources.some((resource) => !seesAccountWide(viewer, resource as SyncResource));
}

/** Whether an endpoint receives a change of `resource`: enabled and subscribed to it. */
export function receives(endpoint: Pick<EndpointState, "status" | "resources">, resource: string): boolean {
  return endpoint.status === "enabled" && endpoint.resources.includes(resource);
}

/** What happens after an attempt: done, or another attempt after `delaySeconds`. */
export type AttemptPlan = { kind: "delivered" } | { kind: "retry"; delaySeconds: number } | { kind: "exhausted" };

/** Attempt `attempt` (1-based) ended `succeeded` or not; `schedule` holds the delays before each retry. */
export function planAfterAttempt(succeeded: boolean, attempt: number, schedule: readonly number[]): AttemptPlan {
  if (succeeded) return { kind: "delivered" };
  const delay = schedule[attempt - 1];
  return delay === undefined ? { kind: "exhausted" } : { kind: "retry", delaySeconds: delay };
}

/** Success is a 2xx response. */
export const isSuccess = (status: number | null): boolean => status !== null && status >= 200 && status < 300;

/** The UTC day (`YYYY-MM-DD`) of an instant, and the first day still kept on `today`. */
export const dayOf = (at: Date): string => at.toISOString().slice(0, 10);
export function firstKeptDay(now: Date): string {
  return dayOf(new Date(now.getTime() - (DELIVERY_RETENTION_DAYS - 1) * 86_400_000));
}
/** When a record of `day` may be deleted: after its last day of being kept (TTL, epoch seconds). */
export function expiryOfDay(day: string): number {
  return Math.floor(Date.parse(`${day}T00:00:00.000Z`) / 1000) + DELIVERY_RETENTION_DAYS * 86_400;
}
