import type { ErrorCode } from "../core/error-codes.js";
import { queryErrorStatus, type RouteDefinition } from "../routes/define.js";

/**
 * Which error codes a route can answer, by HTTP status: the ones every route of its shape can
 * answer (derived here from the route: body, path ids, query, idempotency, authentication,
 * method) merged with the route's own `errors` field (what its domain code raises). The
 * OpenAPI document lists them as an enum per status; the contract test holds the API to it.
 *
 * Derivation rules (the pipeline in lib/http and the local/API Gateway front):
 * - body: 400 `invalid_json`, 413 `request_too_large`, 422 `validation_failed`;
 * - idempotency `required`: 400 `idempotency_key_required`; any idempotency: 400
 *   `invalid_idempotency_key`, 409 `idempotency_key_reused` and `idempotency_in_progress`;
 * - authenticated: 401 `authentication_required`, 429 `rate_limited` (public requests are not
 *   counted); with scopes: 403 `insufficient_scope`; with `permissions` or idempotency: 403
 *   `permission_denied` (a replay after the user's access changed);
 * - `ifMatch`: 409 `mobile_mutation_conflict` (a stale `If-Match`);
 * - path parameters, or idempotency: 404 `resource_missing` (a replay whose record the user no
 *   longer sees);
 * - a query schema: 422 `invalid_query_parameter` (a refused value, malformed percent-encoding,
 *   a parameter given twice; `GET /sync` declares its own 400);
 * - every route: 500 `internal_error`; writes (not GET): 503 `resource_busy`.
 * `route_not_found` (404) and `malformed_request` (400) belong to no
 * route: they are what the API answers for unknown routes (paths and methods) and for requests that are
 * not well-formed HTTP (documented once, in the document's description).
 */
export type ErrorStatus = number;

/** The codes a route can answer, by status (statuses ascending; derived codes first). */
export function errorCodesOf(route: RouteDefinition): Map<ErrorStatus, ErrorCode[]> {
  const codes = new Map<ErrorStatus, ErrorCode[]>();
  const add = (status: ErrorStatus, ...names: ErrorCode[]) => {
    const list = codes.get(status) ?? [];
    for (const name of names) if (!list.includes(name)) list.push(name);
    codes.set(status, list);
  };
  const { body, path, query } = route.request;
  if (body) add(400, "invalid_json");
  if (route.idempotency === "required") add(400, "idempotency_key_required");
  if (route.idempotency !== "none") add(400, "invalid_idempotency_key");
  if (route.authenticated) add(401, "authentication_required");
  if (route.authenticated && route.scopes.length > 0) add(403, "insufficient_scope");
  // A replay after the user's access changed is refused with it too (lib/http/middlewares/idempotency.ts).
  if (route.authenticated && ((route.permissions ?? []).length > 0 || route.idempotency !== "none")) add(403, "permission_denied");
  // A replay whose record the user no longer sees is 404 as well (lib/http/middlewares/idempotency.ts).
  if ((path && Object.keys(path.shape).length > 0) || (route.authenticated && route.idempotency !== "none")) add(404, "resource_missing");
  if (route.idempotency !== "none") add(409, "idempotency_key_reused", "idempotency_in_progress");
  if (route.ifMatch) add(409, "mobile_mutation_conflict");
  if (body) add(413, "request_too_large");
  // A route's own body code (e.g. invalid_invoice_pack) answers schema failures; reference checks still answer validation_failed.
  // A route that reports its body's problems (an estimate preview) answers them with 200.
  const refusesBody = route.bodyProblems !== "report";
  if (body && refusesBody) add(422, "validation_failed", ...(route.bodyErrorCode ? [route.bodyErrorCode] : []));
  if (route.protectedFields && refusesBody) add(422, route.protectedFields.code);
  // A value the schema refuses, a query that is not valid percent-encoding, a parameter given twice.
  if (query) add(queryErrorStatus(route), "invalid_query_parameter");
  if (route.authenticated) add(429, "rate_limited");
  add(500, "internal_error");
  if (route.method !== "GET") add(503, "resource_busy");
  for (const [status, names] of Object.entries(route.errors ?? {})) add(Number(status), ...(names ?? []));
  return new Map([...codes].sort(([a], [b]) => a - b));
}

/** The error `type` of a status (architecture section 4, "Errors not named by the spec"). */
export function errorTypeOf(status: ErrorStatus): "invalid_request_error" | "authentication_error" | "rate_limit_error" | "api_error" {
  if (status === 401) return "authentication_error";
  if (status === 429) return "rate_limit_error";
  if (status >= 500) return "api_error";
  return "invalid_request_error";
}

/**
 * What each code means, by `status code` or by code alone. A code a route declares that is
 * not here is documented by its name only; add a line when adding a code.
 */
const MEANINGS: Partial<Record<ErrorCode | `${ErrorStatus} ${ErrorCode}`, string>> = {
  invalid_json: "the body is not a JSON object, or is not sent with `Content-Type: application/json`",
  idempotency_key_required: "the `Idempotency-Key` header is missing (this route requires one)",
  invalid_idempotency_key: "`Idempotency-Key` is empty, longer than 255 characters or has a character that is not visible ASCII",
  authentication_required: "the API key is missing, malformed, invalid, revoked or expired, or its user is inactive, deleted or no longer in the key's account",
  insufficient_scope: "the API key lacks a scope this route requires (`param` names it)",
  permission_denied: "the key's user lacks a permission this action requires (or, replaying an `Idempotency-Key`, access the original request used)",
  resource_missing:
    "the record in the path does not exist, is in another account or outside the caller's visibility (a malformed id too); replaying an `Idempotency-Key`, the record the original request acted on is no longer visible to the caller",
  idempotency_key_reused: "this `Idempotency-Key` was used with different request data",
  idempotency_in_progress: "a request with this `Idempotency-Key` is still being processed: retry shortly with the same key",
  request_too_large: "the body exceeds 1 MB",
  validation_failed: "fields are invalid or reference records that are missing or in another account (`details` names each, `param` the first)",
  "422 invalid_query_parameter": "a query parameter has an invalid value, is not valid percent-encoding or is given twice (`param` names it)",
  "400 invalid_query_parameter":
    "a query parameter is malformed (not valid percent-encoding), given twice, conflicting, or unknown (`GET /sync` accepts only its own); `param` names it",
  rate_limited: "this API key sent more requests than its limit in the current window: retry after `Retry-After` seconds",
  internal_error: "an unexpected failure; nothing about it is revealed: retry later",
  resource_busy: "the record is being changed by many requests at once and this write gave up: nothing was written; retry after `Retry-After` seconds",
  sync_cursor_invalid: "the cursor is malformed, tampered with or not supported",
  webhook_endpoint_limit_reached: "the account already has 10 webhook endpoints: delete one to create another",
  sync_permission_denied: "the key lacks the read scope of a selected resource, or the user account-wide visibility of it",
  sync_cursor_owner_mismatch: "the cursor belongs to another account or user",
  sync_scope_changed: "the user's permissions or the key's scopes changed since the cursor was issued: rebuild the copy with `start=now`",
  sync_cursor_expired: "the cursor's position is older than the retained history (90 days): rebuild with `start=now`",
  sync_full_refresh_required: "`since` is older than the retained history (90 days): rebuild with `start=now`",
  exceeds_amount_due: "the payment is more than the amount due (`param`: `amount`); nothing was recorded",
  exceeds_amount_paid: "the refund is more than the amount paid (`param`: `amount`); nothing was recorded",
  mobile_mutation_conflict:
    "the record changed since the revision given in `If-Match` (or in the `revision` of a body that copies the record; `param` says which): fetch it again and retry",
  route_not_found: "no route has this method and path (`Allow` lists the methods of a path other routes have)",
  malformed_request: "the request is not well-formed HTTP (its method, path or a header), refused before any route is matched",
  "431 request_too_large": "the request's headers together are over 16 KB, refused before any route is matched",
};

export function meaningOf(status: ErrorStatus, code: ErrorCode): string | undefined {
  return MEANINGS[`${status} ${code}`] ?? MEANINGS[code];
}

const TITLES: Record<number, string> = {
  400: "Bad request",
  401: "Unauthenticated",
  403: "Forbidden",
  404: "Not found",
  409: "Conflict",
  413: "Request too large",
  422: "Unprocessable",
  429: "Too many requests",
  500: "Internal error",
  503: "Busy",
};

/**
 * Codes a request header answers for: its parameter (a shared component) explains them once, so
 * an error response names them and points there instead of repeating the explanation.
 */
const HEADER_CODES: Partial<Record<ErrorCode, string>> = {
  idempotency_key_required: "Idempotency-Key",
  invalid_idempotency_key: "Idempotency-Key",
  idempotency_key_reused: "Idempotency-Key",
  idempotency_in_progress: "Idempotency-Key",
  mobile_mutation_conflict: "If-Match",
};

/** The description of one error response of one route: what makes THIS route answer it. */
export function describeErrorResponse(status: ErrorStatus, codes: readonly ErrorCode[]): string {
  const explain = (code: ErrorCode) => {
    if (HEADER_CODES[code]) return ` (see the \`${HEADER_CODES[code]}\` header)`;
    const meaning = meaningOf(status, code);
    return meaning ? `: ${meaning}` : "";
  };
  const lines = codes.map((code) => `- \`${code}\`${explain(code)}.`);
  return `${TITLES[status] ?? `HTTP ${status}`}. \`error.code\` is one of:\n${lines.join("\n")}`;
}
