import { epochSeconds, nowIso } from "../core/clock.js";
import { IDEMPOTENCY_WINDOW_SECONDS, type IdempotencyCompletion, type IdempotencyContext } from "../core/idempotency.js";
import { packJson } from "./packing.js";
import type { IdempotencyItem, IdempotencyPartItem } from "./service.js";

/** Bodies up to this size are stored as plain JSON text on the record; larger ones compressed. */
export const MAX_PLAIN_OUTCOME_BYTES = 256 * 1024;

/**
 * The items of a stored outcome, written alone (`storeOutcome`) or inside the effect's
 * transaction (`writeTransaction`); both put the record only where no live record of the
 * scope exists (an expired one that TTL has not removed yet is replaced). A body over
 * `MAX_PLAIN_OUTCOME_BYTES` (a 500-line estimate) is compressed and split: the first chunk on
 * the record, the others in `parts` (DynamoDB holds at most 400 KB per item).
 */
export function outcomeItems(completion: IdempotencyCompletion, body: unknown): { record: IdempotencyItem; parts: IdempotencyPartItem[] } {
  const { context } = completion;
  const text = JSON.stringify(body);
  const base = {
    accountId: context.accountId,
    scope: context.scope,
    fingerprint: context.fingerprint,
    statusCode: completion.statusCode,
    headers: completion.headers ?? {},
    ...(context.access === undefined ? {} : { access: context.access }),
    createdAt: nowIso(),
    expiresAt: epochSeconds() + IDEMPOTENCY_WINDOW_SECONDS,
  };
  if (Buffer.byteLength(text, "utf8") <= MAX_PLAIN_OUTCOME_BYTES) return { record: { ...base, body: text }, parts: [] };
  const [first, ...rest] = packJson(body).chunks;
  return {
    record: { ...base, packed: first, parts: rest.length },
    parts: rest.map((packed, i) => ({ accountId: context.accountId, scope: context.scope, part: i + 1, packed, expiresAt: base.expiresAt })),
  };
}

/**
 * The condition of writing a scope's record: none is live (missing, or past its window or its
 * claim's lease), or it is this request's own claim.
 */
export function recordWritable(context: IdempotencyContext) {
  return (
    { expiresAt, claim }: { expiresAt: never; claim: never },
    { notExists, lt, eq }: { notExists: (a: never) => string; lt: (a: never, v: number) => string; eq: (a: never, v: string) => string },
  ): string => {
    const free = `${notExists(expiresAt)} OR ${lt(expiresAt, epochSeconds())}`;
    return context.claim ? `${free} OR ${eq(claim, context.claim)}` : free;
  };
}
