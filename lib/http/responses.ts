import type { ApiResponse } from "./types.js";

export const ok = (body: unknown, headers?: Record<string, string>): ApiResponse => ({ statusCode: 200, body, headers });
export const created = (body: unknown, headers?: Record<string, string>): ApiResponse => ({ statusCode: 201, body, headers });
