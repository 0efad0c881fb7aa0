import { randomBytes } from "node:crypto";
import { errors } from "../../core/errors.js";

/**
 * Optimistic revisions of documents (spec part 2, common rules; architecture section 4): every
 * write of a document stores a new `revision` (prefix per kind: `po_`, `est_`, `inv_`, `so_`),
 * sent as the `ETag` header too. A write that carries `If-Match` (the ETag, quoted or bare,
 * or `W/"..."`) proceeds only while the stored revision is still that one; otherwise 409
 * `mobile_mutation_conflict`. The storage side conditions its write on the revision it read,
 * so a concurrent writer between the check and the write also fails the condition.
 */
export type RevisionPrefix = "po" | "st" | "est" | "inv" | "so";

/** A fresh revision: the prefix, a time part that sorts, and randomness. */
export function newRevision(prefix: RevisionPrefix, now: number = Date.now()): string {
  return `${prefix}_${now.toString(36).padStart(9, "0")}${randomBytes(6).toString("hex")}`;
}

/** The `ETag` header value of a revision. */
export const etagOf = (revision: string): string => `"${revision}"`;

/**
 * The revisions an `If-Match` header names: undefined when the header is absent, blank or
 * contains `*` (any revision); otherwise each comma-separated entry without `W/` and
 * surrounding quotes (HTTP's list form: the condition holds when any of them is current).
 */
export function parseIfMatch(header: string | undefined): readonly string[] | undefined {
  if (header === undefined) return undefined;
  const entries = header
    .split(",")
    .map((entry) => entry.trim())
    .filter((entry) => entry !== "");
  if (entries.length === 0 || entries.includes("*")) return undefined;
  return entries.map((entry) => {
    let value = entry.startsWith("W/") ? entry.slice(2) : entry;
    if (value.length >= 2 && value.startsWith('"') && value.endsWith('"')) value = value.slice(1, -1);
    return value;
  });
}

/** Throws 409 `mobile_mutation_conflict` when none of `expected` (from If-Match) is the current revision. */
export function assertRevision(expected: readonly string[] | undefined, current: string): void {
  if (expected !== undefined && !expected.includes(current)) throw errors.mobileMutationConflict();
}
