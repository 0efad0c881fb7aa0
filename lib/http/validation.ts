import type * as z from "zod";
import { MAX_DETAILS, type DetailCode, type ValidationDetail } from "../core/errors.js";

/** A zod issue path as the JSON path the API reports, e.g. `custom_fields[2].name`. */
export function jsonPath(path: readonly PropertyKey[]): string {
  let out = "";
  for (const part of path) {
    if (typeof part === "number") out += `[${part}]`;
    else out += out ? `.${String(part)}` : String(part);
  }
  return out;
}

function detailCode(issue: z.core.$ZodIssue, input: unknown): DetailCode {
  // A field that is absent is "required", whatever check it would have failed.
  if (input === undefined && issue.code !== "unrecognized_keys" && issue.code !== "custom") return "required";
  switch (issue.code) {
    case "invalid_type":
      return "invalid_type";
    case "too_big":
      return issue.origin === "string" ? "too_long" : issue.origin === "array" ? "too_many" : "too_large";
    case "too_small":
      if (issue.origin === "string") return Number(issue.minimum) <= 1 ? "blank" : "too_short";
      return issue.origin === "array" ? "too_few" : "too_small";
    case "invalid_format":
      return issue.format === "email" ? "invalid_email" : issue.format === "uuid" ? "invalid_uuid" : "invalid_format";
    case "invalid_value":
      return "invalid_value";
    case "unrecognized_keys":
      return "unknown_field";
    default:
      return "invalid";
  }
}

function valueAt(root: unknown, path: readonly PropertyKey[]): unknown {
  let current = root;
  for (const part of path) {
    if (current === null || typeof current !== "object") return undefined;
    current = (current as Record<PropertyKey, unknown>)[part];
  }
  return current;
}

function message(issue: z.core.$ZodIssue, code: string): string {
  switch (code) {
    case "required":
      return "is required.";
    case "blank":
      return "must not be blank.";
    case "too_long":
      return `must be at most ${String((issue as { maximum?: unknown }).maximum)} characters.`;
    case "too_many":
      // A schema's own message, in the API's words, states a limit other than the schema's room (an update's lines).
      return issue.message.startsWith("must ") ? issue.message : `must have at most ${String((issue as { maximum?: unknown }).maximum)} entries.`;
    case "invalid_email":
      return "must be a valid email address.";
    case "invalid_uuid":
      return "must be a UUID.";
    case "unknown_field":
      return "is not a recognized field.";
    case "invalid_value":
      return `must be one of: ${((issue as { values?: unknown[] }).values ?? []).map(String).join(", ")}.`;
    default:
      return issue.message.endsWith(".") ? issue.message : `${issue.message}.`;
  }
}

/**
 * The issues, with bound checks of one value collapsed into the tightest: zod reports an integer
 * above 2^53 twice (its safe-integer range, then the field's own maximum), one problem.
 */
function distinctIssues(error: z.ZodError): z.core.$ZodIssue[] {
  const bounds = new Map<string, number>();
  const out: z.core.$ZodIssue[] = [];
  for (const issue of error.issues) {
    if (issue.code !== "too_big" && issue.code !== "too_small") {
      out.push(issue);
      continue;
    }
    const key = `${issue.code}\u0000${jsonPath(issue.path)}`;
    const bound = (candidate: z.core.$ZodIssue) => Number(candidate.code === "too_big" ? candidate.maximum : (candidate as { minimum: unknown }).minimum);
    const seen = bounds.get(key);
    if (seen === undefined) {
      bounds.set(key, out.length);
      out.push(issue);
    } else if (issue.code === "too_big" ? bound(issue) < bound(out[seen]!) : bound(issue) > bound(out[seen]!)) {
      out[seen] = issue;
    }
  }
  return out;
}

/** How many problems a zod error holds (unknown keys count one each). */
export function countIssues(error: z.ZodError): number {
  return distinctIssues(error).reduce((sum, issue) => sum + (issue.code === "unrecognized_keys" ? issue.keys.length : 1), 0);
}

/**
 * Turns zod issues into the API's validation details, one per offending field, at most
 * `MAX_DETAILS` of them (a body of 20,000 unknown fields gets a small answer).
 */
export function toValidationDetails(error: z.ZodError, input: unknown, prefix: readonly PropertyKey[] = []): ValidationDetail[] {
  const details: ValidationDetail[] = [];
  for (const issue of distinctIssues(error)) {
    if (details.length >= MAX_DETAILS) break;
    const code = detailCode(issue, valueAt(input, issue.path));
    if (issue.code === "unrecognized_keys") {
      for (const key of issue.keys.slice(0, MAX_DETAILS - details.length)) {
        details.push({ param: jsonPath([...prefix, ...issue.path, key]), code, message: message(issue, code) });
      }
      continue;
    }
    details.push({ param: jsonPath([...prefix, ...issue.path]), code, message: message(issue, code) });
  }
  return details;
}
