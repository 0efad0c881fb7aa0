import { ApiError, ContentionError, errors } from "../../core/errors.js";
import { DocumentTooLargeError, RecordLimitError, ReferencedItemGoneError } from "../../core/failures.js";
import { errorFields, log } from "../../core/log.js";
import type { PipelineMiddleware, PipelineRequest } from "../types.js";

/**
 * Turns every thrown error into the spec's error body. An `ApiError` renders as itself; an
 * error that Middy raised for the body (415) becomes 400 `invalid_json`; a write whose retries
 * ran out (`ContentionError`) becomes 503 `resource_busy` with `Retry-After`; a record limit
 * reached (`RecordLimitError`) 409 `record_limit_reached`; lines over a document's storage
 * limits (`DocumentTooLargeError`) 422 `too_large` on `lines`; anything else is
 * logged with the request id and becomes 500 `api_error` with no internals in the body.
 */
export function errorHandler(): PipelineMiddleware {
  const errorHandlerOnError = (request: PipelineRequest): void => {
    if (request.response !== undefined) return;
    const error = toApiError(request);
    request.response = {
      statusCode: error.statusCode,
      headers: { "Content-Type": "application/json", ...error.headers },
      body: JSON.stringify(error.toBody()),
    };
  };
  return { onError: errorHandlerOnError };
}

/**
 * The API error an internal failure means the same on every route, or undefined for one that
 * is not the client's to know (a 500). The one translation: the error handler renders it and
 * the idempotency middleware stores it as the key's outcome.
 */
export function apiErrorOf(error: unknown): ApiError | undefined {
  if (error instanceof ApiError) return error;
  // Nothing was written; the client may retry.
  if (error instanceof ContentionError) return errors.busy(error);
  if (error instanceof ReferencedItemGoneError) {
    return errors.validationFailed([
      {
        param: "lines",
        code: "invalid_reference",
        message: "names an item that was deleted while the write was in flight (it is not an item of this account any more).",
      },
    ]);
  }
  if (error instanceof RecordLimitError) return errors.recordLimitReached(`${error.sequence.replaceAll("_", " ")}s`, error.limit);
  // Lines over a document's storage limits (long item descriptions copied onto many lines), on any kind.
  if (error instanceof DocumentTooLargeError) return errors.validationFailed([{ param: "lines", code: "too_large", message: error.detailMessage() }]);
  return undefined;
}

function toApiError(request: PipelineRequest): ApiError {
  const error = request.error;
  const translated = apiErrorOf(error);
  if (translated) {
    // The request's log line carries why a write gave up.
    if (error instanceof ContentionError) request.internal.failureReason = error.message;
    return translated;
  }
  const status = (error as { statusCode?: number } | null)?.statusCode;
  if (status === 415) {
    const contentType = request.event.headers?.["content-type"];
    // A JSON media type as Middy's parser reads one (application/json, application/*+json): the
    // body itself was not JSON. Anything else (application/jsonx, text/plain) was not sent as JSON.
    return contentType && /^application\/(.+\+)?json($|;.+)/.test(contentType)
      ? errors.invalidJson()
      : errors.invalidJson("Send the request body as JSON with Content-Type: application/json.");
  }
  request.internal.failureReason = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  log("ERROR", "unhandled error", { requestId: request.internal.requestId, ...errorFields(error) });
  return errors.internal(error);
}
