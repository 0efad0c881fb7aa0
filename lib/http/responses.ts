import type { ApiResponse } from "./types.js";

export const ok = (body: unknown, headers?: Record<string, string>): ApiResponse => ({ statusCode: 200, body, headers });
export const created = (body: unknown, headers?: Record<string, string>): ApiResponse => ({ statusCode: 201, body, headers });
/** 202: the work was accepted and happens after the response (a webhook test message). */
export const accepted = (body: unknown): ApiResponse => ({ statusCode: 202, body });

/** A versioned record's response (200, or 201 when created) with its `ETag` (documents: for `If-Match`). */
export const withEtag = (result: { body: unknown; etag: string }, status: 200 | 201 = 200): ApiResponse =>
  (status === 201 ? created : ok)(result.body, { ETag: result.etag });
/** A 200 whose body is sent as it is (not JSON), e.g. the HTML API reference. */
export const document = (body: string, contentType: string, headers?: Record<string, string>): ApiResponse => ({
  statusCode: 200,
  body,
  headers: { ...headers, "Content-Type": contentType },
  raw: true,
});
