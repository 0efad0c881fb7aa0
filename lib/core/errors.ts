import type { DetailCode, ErrorCode, UnsupportedFieldCode } from "./error-codes.js";

export type { DetailCode, ErrorCode, UnsupportedFieldCode } from "./error-codes.js";

/**
 * The error catalogue. Every error body the API sends is built here, from an `ApiError`:
 * `{error: {type, code, message, param?, details?}}` (spec part 1, section 7).
 */
export type ErrorType = "invalid_request_error" | "authentication_error" | "rate_limit_error" | "api_error";

export interface ValidationDetail {
  /** JSON path of the offending field, e.g. `custom_fields[2].name`. */
  param: string;
  code: DetailCode;
  message: string;
}

export interface ApiErrorOptions {
  param?: string;
  details?: ValidationDetail[];
  headers?: Record<string, string>;
  cause?: unknown;
}

/** An error with an HTTP status and a code from the catalogue; the error handler renders it. */
/** One reason a body is refused, as its 422 would name it: the detail's (or the error's) code, message and field. */
export interface BodyProblem {
  code: string;
  message: string;
  param: string | null;
}

export class ApiError extends Error {
  readonly statusCode: number;
  readonly type: ErrorType;
  readonly code: ErrorCode;
  readonly param?: string;
  readonly details?: ValidationDetail[];
  readonly headers: Record<string, string>;

  constructor(statusCode: number, type: ErrorType, code: ErrorCode, message: string, options: ApiErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "ApiError";
    this.statusCode = statusCode;
    this.type = type;
    this.code = code;
    this.param = options.param;
    this.details = options.details;
    this.headers = options.headers ?? {};
  }

  /** The response body of this error. */
  toBody(): { error: Record<string, unknown> } {
    const error: Record<string, unknown> = { type: this.type, code: this.code, message: this.message };
    if (this.param !== undefined) error.param = this.param;
    if (this.details !== undefined) error.details = this.details;
    return { error };
  }
}

const invalid = (status: number, code: ErrorCode, message: string, options?: ApiErrorOptions) =>
  new ApiError(status, "invalid_request_error", code, message, options);

/** Constructors for every error the API returns; nothing else builds an error body. */
export const errors = {
  authenticationRequired: (message = "A valid API key is required.") =>
    new ApiError(401, "authentication_error", "authentication_required", message, {
      headers: { "WWW-Authenticate": "Bearer" },
    }),
  insufficientScope: (scope: string) => invalid(403, "insufficient_scope", `This API key lacks the scope ${scope}.`, { param: scope }),
  permissionDenied: (message: string, param?: string) => invalid(403, "permission_denied", message, { param }),
  resourceMissing: (what: string, id?: string) => invalid(404, "resource_missing", id ? `No such ${what}: ${id}.` : `No such ${what}.`),
  /** 404 `resource_missing` with its own message (a replay whose record the caller no longer sees). */
  resourceMissingAs: (message: string) => invalid(404, "resource_missing", message),
  /**
   * No route has this method and path (architecture section 4: an unknown route is 404). A path
   * that other routes have gets `Allow` with their methods, and the message names them.
   */
  routeNotFound: (method: string, path: string, allowed: readonly string[] = []) =>
    allowed.length === 0
      ? invalid(404, "route_not_found", `Unrecognized request: ${method} ${path}.`)
      : invalid(404, "route_not_found", `Unrecognized request: ${method} ${path}; this path takes ${allowed.join(", ")}.`, {
          headers: { Allow: allowed.join(", ") },
        }),
  invalidJson: (message = "The request body is not valid JSON.") => invalid(400, "invalid_json", message),
  /** 422 with at most `MAX_DETAILS` details; `total` counts every problem found (for the message). */
  validationFailed: (details: ValidationDetail[], message?: string, total: number = details.length) =>
    invalid(422, "validation_failed", message ?? summarize(details, Math.max(total, details.length)), {
      param: details[0]?.param,
      details: details.slice(0, MAX_DETAILS),
    }),
  /**
   * 422 in the shape of `validation_failed` under a route's own code (e.g. `unsupported_invoice_field`
   * for fields the service controls, `invalid_invoice_pack` for a pack body that fails its rules).
   */
  invalidBody: (code: ErrorCode, details: ValidationDetail[], message?: string, total: number = details.length) =>
    invalid(422, code, message ?? summarize(details, Math.max(total, details.length)), {
      param: details[0]?.param,
      details: details.slice(0, MAX_DETAILS),
    }),
  invalidQueryParameter: (param: string, message: string, status = 422) => invalid(status, "invalid_query_parameter", message, { param }),
  idempotencyKeyRequired: () =>
    invalid(400, "idempotency_key_required", "This request requires an Idempotency-Key header.", {
      param: "Idempotency-Key",
    }),
  invalidIdempotencyKey: () =>
    invalid(400, "invalid_idempotency_key", "Idempotency-Key must be 1 to 255 visible ASCII characters.", {
      param: "Idempotency-Key",
    }),
  idempotencyKeyReused: () =>
    invalid(409, "idempotency_key_reused", "This Idempotency-Key was already used with different request data.", { param: "Idempotency-Key" }),
  idempotencyInProgress: () =>
    invalid(409, "idempotency_in_progress", "A request with this Idempotency-Key is still being processed; retry shortly with the same key.", {
      param: "Idempotency-Key",
    }),
  rateLimited: (retryAfterSeconds: number) =>
    new ApiError(429, "rate_limit_error", "rate_limited", "Too many requests; retry after the Retry-After delay.", {
      headers: { "Retry-After": String(Math.max(1, retryAfterSeconds)) },
    }),
  /** 409 for a stale revision: named in If-Match (default), or in the `revision` of a body that copies the record. */
  mobileMutationConflict: (namedBy: "If-Match" | "revision" = "If-Match") =>
    invalid(
      409,
      "mobile_mutation_conflict",
      `The record has changed since the revision given in ${namedBy === "revision" ? "the body's revision" : "If-Match"}; fetch it again and retry.`,
      { param: namedBy },
    ),
  /** 409 for a request the record's current state does not allow (the code names the rule). */
  stateConflict: (code: ErrorCode, message: string, param?: string) => invalid(409, code, message, param === undefined ? undefined : { param }),
  recordLimitReached: (what: string, limit: number) =>
    invalid(409, "record_limit_reached", `The account holds its limit of ${limit} ${what}; delete one or raise the account's record_limit to create more.`),
  /** Kits (spec part 2, section 4.7): insufficient component stock or an unusable definition; nothing was changed. */
  invalidKitBuild: (message: string, param?: string) => invalid(422, "invalid_kit_build", message, { param }),
  /** A build whose reversal the current stock refuses (its assembled units were used since). */
  kitDisassemblyNotAllowed: (message: string) => invalid(409, "kit_disassembly_not_allowed", message),
  /** 428: the route needs `If-Match` with the record's current revision (ETag). */
  revisionRequired: (code: ErrorCode, message: string) => invalid(428, code, message, { param: "If-Match" }),
  /**
   * 422 for fields the service controls (numbers, status, totals, timestamps...), refused with
   * the route's own code rather than `unknown_field`; `params` are their JSON paths.
   */
  unsupportedField: (code: UnsupportedFieldCode, params: readonly string[]) =>
    invalid(422, code, `${params[0]} is set by the service and cannot be supplied${params.length > 1 ? ` (nor ${params.slice(1).join(", ")})` : ""}.`, {
      param: params[0],
      details: params.slice(0, MAX_DETAILS).map((param) => ({ param, code, message: "is set by the service and cannot be supplied." })),
    }),
  busy: (cause: ContentionError) =>
    new ApiError(503, "api_error", "resource_busy", "The record is being changed by other requests; retry after the Retry-After delay.", {
      headers: { "Retry-After": "1" },
      cause,
    }),
  requestTooLarge: (maxBytes: number) => invalid(413, "request_too_large", `The request body exceeds ${Math.round(maxBytes / 1024 / 1024)} MB.`),
  /** 431: the request's headers together are over the front's limit (before any route is matched). */
  headersTooLarge: (maxBytes: number) => invalid(431, "request_too_large", `The request's headers exceed ${Math.round(maxBytes / 1024)} KB together.`),
  /** 400: not a well-formed HTTP request (its request line or a header), refused before any route is matched. */
  malformedRequest: (message: string) => invalid(400, "malformed_request", message),
  // Tasks and reminders (spec part 2, section 4.6).
  taskConflict: (current: number) =>
    invalid(409, "task_conflict", `The task has changed: its current version is ${current}. Fetch it again and retry with that version.`, {
      param: "version",
    }),
  taskTransitionNotAllowed: (message: string, param = "status") => invalid(409, "task_transition_not_allowed", message, { param }),
  reminderNotActionable: (message: string) => invalid(409, "reminder_not_actionable", message),
  invalidCursor: () =>
    invalid(400, "invalid_cursor", "The cursor is not valid for this request (tampered, another user's, or other filters); restart without cursor.", {
      param: "cursor",
    }),
  internal: (cause?: unknown) => new ApiError(500, "api_error", "internal_error", "An internal error occurred. Retry later.", { cause }),
};

/** Validation details per error: a body with thousands of bad fields still gets a small answer. */
export const MAX_DETAILS = 50;

function summarize(details: ValidationDetail[], total: number): string {
  const first = details[0];
  if (!first) return "The request is invalid.";
  const more = total > 1 ? ` (and ${total - 1} more${total > MAX_DETAILS ? `; the first ${MAX_DETAILS} are listed` : ""})` : "";
  return `${first.param}: ${first.message}${more}`;
}

/**
 * Thrown when an optimistic write lost its race more often than the retry policy allows. It
 * changed nothing; the API answers 503 `resource_busy` with `Retry-After`.
 */
export class ContentionError extends Error {
  constructor(
    readonly operation: string,
    readonly attempts: number,
  ) {
    super(`Retries exhausted: ${operation} lost its race ${attempts} times.`);
    this.name = "ContentionError";
  }
}

/** What an `invalid_reference` detail says of a record that is not there (or not the caller's). */
export const UNKNOWN_RECORD_MESSAGE = "does not exist in this account.";

/** The detail of a reference that a read found missing, outside the caller's account or unusable. */
export function referenceDetail(param: string, message: string = UNKNOWN_RECORD_MESSAGE): ValidationDetail {
  return { param, code: "invalid_reference", message };
}
