import { createHash } from "node:crypto";

/**
 * Idempotency (spec part 1, section 8; architecture section 4). A request's outcome is
 * stored under a scope of account + API key + method + path + Idempotency-Key, and is
 * written in the SAME transaction as the request's own effect, so an effect and its record
 * can never exist apart. Before the handler runs, the request claims its scope with an
 * in-progress record (a short lease): the same key meanwhile is 409 `idempotency_in_progress`,
 * and once the outcome replaced the claim, a retry replays it without running again.
 */
export const IDEMPOTENCY_WINDOW_SECONDS = 300;
const VISIBLE_ASCII = /^[\x21-\x7e]{1,255}$/;

export interface IdempotencyContext {
  accountId: string;
  scope: string;
  fingerprint: string;
  /** Set once the outcome has been stored (inside the effect's transaction or after). */
  stored: boolean;
  /** This request's claim token while it runs (its in-progress record; the outcome replaces it). */
  claim?: string;
  /** The caller's access (`accessText`), stored with the outcome: a replay needs at least as much. */
  access?: string;
}

/**
 * How long an in-progress claim holds its key: a request that died is retried after this. Just
 * longer than any request lives (the API functions' 29 s timeout, which the local server keeps
 * too): a claim is never taken over from a request still running, and a crashed one frees its
 * key soon. (A takeover could not double an effect anyway: the outcome commits with the effect,
 * conditioned on the claim.)
 */
export const IDEMPOTENCY_CLAIM_SECONDS = 35;

/** A stored outcome ready to be written: what `writeTransaction` puts beside the effect. */
export interface IdempotencyCompletion {
  context: IdempotencyContext;
  statusCode: number;
  /** Response headers that belong to the outcome (e.g. `ETag`), replayed with it. */
  headers?: Record<string, string>;
}

export function isValidIdempotencyKey(key: string): boolean {
  return VISIBLE_ASCII.test(key);
}

/**
 * JSON with object keys sorted at every depth, so equal bodies hash equally. Written with a
 * stack of its own, not by recursion: a body nested thousands of levels deep (which `JSON.parse`
 * reads) is fingerprinted, then refused by validation, instead of overflowing the call stack.
 */
export function canonicalJson(value: unknown): string {
  const out: string[] = [];
  // Work left to do, the next piece on top: a value to write, or text to emit as it is.
  const work: ({ text: string } | { value: unknown })[] = [{ value }];
  while (work.length > 0) {
    const next = work.pop()!;
    if ("text" in next) {
      out.push(next.text);
      continue;
    }
    const current = next.value;
    if (current === null || typeof current !== "object") {
      out.push(JSON.stringify(current) ?? "null");
    } else if (Array.isArray(current)) {
      out.push("[");
      work.push({ text: "]" });
      for (let i = current.length - 1; i >= 0; i--) {
        work.push({ value: current[i] });
        if (i > 0) work.push({ text: "," });
      }
    } else {
      const entries = Object.entries(current as Record<string, unknown>)
        .filter(([, v]) => v !== undefined)
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
      out.push("{");
      work.push({ text: "}" });
      for (let i = entries.length - 1; i >= 0; i--) {
        const [key, entry] = entries[i]!;
        work.push({ value: entry }, { text: `${JSON.stringify(key)}:` });
        if (i > 0) work.push({ text: "," });
      }
    }
  }
  return out.join("");
}

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");

export function idempotencyScope(parts: { accountId: string; keyId: string; method: string; path: string; key: string }): string {
  return sha256([parts.accountId, parts.keyId, parts.method, parts.path, parts.key].join("\n"));
}

export function requestFingerprint(method: string, path: string, body: unknown): string {
  return sha256(`${method}\n${path}\n${canonicalJson(body ?? null)}`);
}

/** Thrown when the stored-outcome condition fails: the middleware then replays or rejects. */
export class IdempotencyConflictError extends Error {
  constructor(cause?: unknown) {
    super("The idempotency record of this request already exists.", { cause });
    this.name = "IdempotencyConflictError";
  }
}
