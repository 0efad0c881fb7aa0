/** What the record writes of items, parties and contacts share: a replace's outcome. */
import { errors, type ValidationDetail } from "../../core/errors.js";
import { RETRY } from "../../db/retry.js";

/** A replace's result: the resource when written, 422 for references that fail, else read again. */
export function replaceOutcome<R>(result: { ok: true } | { ok: false; references: ValidationDetail[] }, resource: R): R | typeof RETRY {
  if (result.ok) return resource;
  if (result.references.length > 0) throw errors.validationFailed(result.references);
  return RETRY;
}
