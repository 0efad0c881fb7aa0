import type { ApiResponse } from "./types.js";

export const ok = (body: unknown, headers?: Record<string, string>): ApiResponse => ({ statusCode: 200, body, headers });
export const created = (body: unknown, headers?: Record<string, string>): ApiResponse => ({ statusCode: 201, body, headers });
/** A 200 whose body is sent as it is (not JSON), e.g. the HTML API reference. */
export const document = (body: string, contentType: string, headers?: Record<string, string>): ApiResponse => ({
  statusCode: 200,
  body,
  headers: { ...headers, "Content-Type": contentType },
  raw: true,
});
