import { expect } from "vitest";
import type { TestResponse } from "./api.js";

/** An error response in the spec's shape with this status, code and (optionally) param. */
export function expectError(response: TestResponse, status: number, code: string, param?: string): void {
  expect(response.status, response.text).toBe(status);
  expect(response.body?.error?.code, response.text).toBe(code);
  expect(response.body.error.type, response.text).toBe("invalid_request_error");
  if (param !== undefined) expect(response.body.error.param, response.text).toBe(param);
}

/** A 422 `validation_failed` whose details name `param` (with `code`, when given). */
export function expectValidation(response: TestResponse, param: string, code?: string): void {
  expectError(response, 422, "validation_failed");
  const details = response.body.error.details as { param: string; code: string; message: string }[];
  expect(Array.isArray(details), response.text).toBe(true);
  const detail = details.find((d) => d.param === param);
  expect(detail, response.text).toBeDefined();
  if (code !== undefined) expect(detail!.code, response.text).toBe(code);
}
