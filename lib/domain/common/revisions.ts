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
 * The revision an `If-Match` header names: undefined when the header is absent, blank or `*`
 * (any revision); otherwise the value without `W/` and surrounding quotes.
 */
export function parseIfMatch(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  let value = header.trim();
  if (value === "" || value === "*") return undefined;
  if (value.startsWith("W/")) value = value.slice(2);
  if (value.length >= 2 && value.startsWith('"') && value.endsWith('"')) value = value.slice(1, -1);
  return value;
}

/** Throws 409 `mobile_mutation_conflict` when `expected` (from If-Match) is not the current revision. */
export function assertRevision(expected: string | undefined, current: string): void {
  if (expected !== undefined && expected !== current) throw errors.mobileMutationConflict();
}
