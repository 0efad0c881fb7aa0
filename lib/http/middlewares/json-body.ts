import { isUtf8 } from "node:buffer";
import httpJsonBodyParser from "@middy/http-json-body-parser";
import { errors } from "../../core/errors.js";
import type { PipelineMiddleware, PipelineRequest } from "../types.js";

/** The largest request body accepted (the API's documented limit; API Gateway's own is 10 MB). */
export const MAX_BODY_BYTES = 1024 * 1024;

/**
 * Parses JSON bodies with Middy's parser, for routes that declare a body (a route that declares
 * none ignores whatever is sent, deployed as locally). An empty body is
 * read as `{}` (so missing fields surface as validation errors); a body that is not JSON,
 * is sent without a JSON content type, or is not a JSON object is 400 `invalid_json`; a body
 * over 1 MB is 413 `request_too_large`.
 */
export function jsonBody(): PipelineMiddleware {
  const parser = httpJsonBodyParser();
  const jsonBodyBefore = async (request: PipelineRequest): Promise<void> => {
    const route = request.internal.route;
    if (!route) return;
    if (!route.request.body) {
      // A route that takes no body (GETs, DELETEs) ignores one, as the local server drops it:
      // API Gateway forwards it, and it must not enter the idempotency fingerprint.
      (request.event as { body: unknown }).body = undefined;
      (request.event as { isBase64Encoded: boolean }).isBase64Encoded = false;
      return;
    }
    const raw = request.event.body;
    // The documented limit (API Gateway's own is 10 MB): refuse before parsing anything.
    if (typeof raw === "string" && Buffer.byteLength(raw, request.event.isBase64Encoded ? "base64" : "utf8") > MAX_BODY_BYTES) {
      throw errors.requestTooLarge(MAX_BODY_BYTES);
    }
    if (raw === undefined || raw === null || raw === "") {
      (request.event as { body: unknown }).body = {};
      return;
    }
    // JSON is UTF-8 (RFC 8259): other bytes are refused, not replaced (two different bodies would read the same).
    if (typeof raw === "string" && request.event.isBase64Encoded && !isUtf8(Buffer.from(raw, "base64"))) {
      throw errors.invalidJson("The request body is not valid UTF-8.");
    }
    // Media types are case-insensitive (RFC 9110): `Application/JSON` is JSON too.
    const headers = request.event.headers;
    const type = headers?.["content-type"];
    if (headers && typeof type === "string") headers["content-type"] = type.replace(/^[^;]*/, (media) => media.trim().toLowerCase());
    await parser.before!(request as never);
    const parsed: unknown = request.event.body;
    if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) {
      throw errors.invalidJson("The request body must be a JSON object.");
    }
  };
  return { before: jsonBodyBefore };
}
