import { claimScope, readStoredOutcome, releaseClaim, storeOutcome } from "../../db/idempotency.js";
import { type ApiError, errors } from "../../core/errors.js";
import { apiErrorOf } from "./error-handler.js";
import { IdempotencyConflictError, idempotencyScope, isValidIdempotencyKey, requestFingerprint, type IdempotencyContext } from "../../core/idempotency.js";
import type { HttpResult, PipelineMiddleware, PipelineRequest } from "../types.js";
import { accessLost, usedAccessText } from "../../auth/permissions.js";
import type { ErrorCode } from "../../core/error-codes.js";

/**
 * `Idempotency-Key` handling (spec part 1, section 8; architecture section 4).
 *
 * before: checks the header against the route's mode (`required` / `optional`), derives the
 * scope and the request fingerprint, and claims the scope (an in-progress record with a short
 * lease). A scope with a live record is answered at once: its stored outcome replayed with
 * `Idempotent-Replayed: true`, or 409 `idempotency_key_reused` (different data) or
 * `idempotency_in_progress` (the identical request still running), or 404 `resource_missing` /
 * 403 `permission_denied` when the user no longer sees the record / holds the access the
 * outcome was stored with. The route's domain code then
 * writes the outcome over its claim in the same transaction as its effect. after / onError: an
 * outcome that no transaction carried (a 4xx raised once the handler ran) is stored now; a 5xx
 * or a crash gives the claim up (a crash by its lease), so the retry runs again, as does a
 * permission refusal or a failed precondition (`STORES_NOTHING`). Requests rejected before this
 * middleware (validation, scopes, rate limit) store nothing.
 */
export function idempotency(): PipelineMiddleware {
  const idempotencyBefore = async (request: PipelineRequest): Promise<void> => {
    const { route, principal } = request.internal;
    if (!route || !principal || route.idempotency === "none") return;
    const key = request.event.headers?.["idempotency-key"];
    if (key === undefined) {
      if (route.idempotency === "required") throw errors.idempotencyKeyRequired();
      return;
    }
    if (!isValidIdempotencyKey(key)) throw errors.invalidIdempotencyKey();
    const method = request.event.requestContext.http.method;
    const path = canonicalPath(route.path, request.internal.input?.path ?? {});
    const context: IdempotencyContext = {
      accountId: principal.accountId,
      scope: idempotencyScope({ accountId: principal.accountId, keyId: principal.keyId, method, path, key }),
      fingerprint: requestFingerprint(method, path, request.event.body),
      stored: false,
      // Read when the outcome is stored (in the effect's transaction, or after the handler):
      // by then the request has consulted every permission its outcome depends on.
      get access() {
        return usedAccessText(principal);
      },
    };
    request.internal.idempotency = context;
    if (await claimScope(context)) return;
    await replayOrReject(request, context);
    request.internal.answer = request.response ?? undefined;
    request.response = null;
  };

  const idempotencyAfter = async (request: PipelineRequest): Promise<void> => {
    const context = request.internal.idempotency;
    const response = request.response;
    if (!context || context.stored || !response || !request.internal.handlerStarted) return;
    if (response.statusCode >= 500) return releaseClaim(context);
    await storeOrReplay(request, context, response);
  };

  const idempotencyOnError = async (request: PipelineRequest): Promise<void> => {
    const context = request.internal.idempotency;
    if (!context || request.response !== undefined) return;
    const error = request.error;
    if (error instanceof IdempotencyConflictError) {
      await replayOrReject(request, context);
      return;
    }
    if (context.stored) return;
    const answer = apiErrorOf(error);
    if (!request.internal.handlerStarted || !answer || answer.statusCode >= 500 || STORES_NOTHING.has(answer.code)) {
      await releaseClaim(context);
      return;
    }
    const result: HttpResult = {
      statusCode: answer.statusCode,
      headers: answer.headers,
      body: JSON.stringify(answer.toBody()),
    };
    await storeOrReplay(request, context, result);
  };

  return { before: idempotencyBefore, after: idempotencyAfter, onError: idempotencyOnError };
}

/**
 * Refusals that store nothing, like those made before the handler ran: a missing permission
 * (403) and a failed precondition (a stale `If-Match`, 409; a missing one is 428 at validation,
 * before any claim). The route wrote nothing, and the retry that corrects them (once the
 * permission is granted, or with the current revision) runs rather than replaying the refusal.
 */
const STORES_NOTHING: ReadonlySet<ErrorCode> = new Set<ErrorCode>(["permission_denied", "mobile_mutation_conflict"]);

/**
 * The endpoint path a key is isolated by (spec part 1, section 8): the route's path with its
 * parsed parameters, so every spelling of one path (an upper-case UUID, a percent-encoded
 * character) is the same endpoint, as it reaches the same record.
 */
function canonicalPath(template: string, params: Record<string, unknown>): string {
  return template.replace(/\{(\w+)\}/g, (whole, name: string) => (params[name] === undefined ? whole : String(params[name]).toLowerCase()));
}

async function storeOrReplay(request: PipelineRequest, context: IdempotencyContext, result: HttpResult): Promise<void> {
  const stored = await storeOutcome(
    { context, statusCode: result.statusCode, headers: storedHeaders(result.headers) },
    JSON.parse(String(result.body ?? "null")),
  );
  if (!stored) await replayOrReject(request, context);
}

/** Replaces the response with the stored outcome, or with the right 409. */
async function replayOrReject(request: PipelineRequest, context: IdempotencyContext): Promise<void> {
  context.stored = true; // whatever happens now, this request stores nothing more
  const record = await readStoredOutcome(context);
  let error: ApiError | undefined;
  if (record && record.fingerprint !== context.fingerprint) error = errors.idempotencyKeyReused();
  else if (!record || record.inProgress) error = errors.idempotencyInProgress();
  else if (record.access !== undefined) {
    // Replaying would answer with what the user may no longer do or see (a cost, another location).
    const lost = accessLost(request.internal.principal!, record.access);
    if (lost === "visibility") {
      // The record it wrote is out of the user's sight now: 404, as every other route answers it.
      error = errors.resourceMissingAs(
        "The record this Idempotency-Key's request acted on is no longer visible to you (your location or visibility changed), so its stored result is not replayed; the original request's effect stands.",
      );
    } else if (lost === "access") {
      error = errors.permissionDenied(
        "Your permissions or location changed since this Idempotency-Key was first used, so its stored result is not replayed; the original request's effect stands.",
      );
    }
  }
  if (error) {
    request.response = {
      statusCode: error.statusCode,
      headers: { "Content-Type": "application/json", ...error.headers },
      body: JSON.stringify(error.toBody()),
    };
    return;
  }
  if (!record || record.inProgress) return; // answered above
  request.internal.replayed = true;
  request.response = {
    statusCode: record.statusCode,
    headers: { ...((record.headers as Record<string, string>) ?? {}), "Idempotent-Replayed": "true" },
    body: record.body,
  };
}

/** Headers that are part of an outcome (not per-request ones such as rate limits). */
function storedHeaders(headers: Record<string, string> | undefined): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers ?? {})) {
    if (/^(etag|location|www-authenticate)$/i.test(name)) kept[name] = value;
  }
  return kept;
}
