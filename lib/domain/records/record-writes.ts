/**
 * Steps the record writes share (items, customers, prospects, suppliers, contacts): the
 * attributes a body's fields set or clear, a replacement's `updatedAt`, and what a replace's
 * result means for its retry loop.
 */
import { errors, type ValidationDetail } from "../../core/errors.js";
import { nowIso } from "../../db/keys.js";
import { RETRY } from "../../db/retry.js";

/**
 * Copies each field sent to its attribute: `null` clears it (and so does "" for a field
 * without `convert`, i.e. text), another value is set (through `convert` when given); a field
 * not sent is left alone.
 */
export function collectFields<A extends PropertyKey>(
  input: object,
  fields: Iterable<readonly [string, A]>,
  set: Record<PropertyKey, unknown>,
  remove: A[],
  convert?: (value: never) => unknown,
): void {
  for (const [field, attribute] of fields) {
    const value = (input as Record<string, unknown>)[field];
    if (value === undefined) continue;
    if (value === null || (convert === undefined && value === "")) remove.push(attribute);
    else set[attribute] = convert ? convert(value as never) : value;
  }
}

/** The `updatedAt` of a replacement: now, or just after the stored one (within one millisecond). */
export function laterUpdatedAt(previous: string): string {
  const now = nowIso();
  return now <= previous ? new Date(Date.parse(previous) + 1).toISOString() : now;
}

/** A replace's result: the resource when written, 422 for references that fail, else read again. */
export function replaceOutcome<R>(result: { ok: true } | { ok: false; references: ValidationDetail[] }, resource: R): R | typeof RETRY {
  if (result.ok) return resource;
  if (result.references.length > 0) throw errors.validationFailed(result.references);
  return RETRY;
}
