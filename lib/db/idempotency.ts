import { db, type IdempotencyItem } from "./service.js";
import { epochSeconds, nowIso } from "./keys.js";
import { IDEMPOTENCY_WINDOW_SECONDS, type IdempotencyCompletion, type IdempotencyContext } from "../core/idempotency.js";

/**
 * The record of a stored outcome, written alone (`storeOutcome`) or inside the effect's
 * transaction (`writeTransaction`); both put it only where no live record of the scope exists
 * (an expired one that TTL has not removed yet is replaced).
 */
export function outcomeRecord(completion: IdempotencyCompletion, body: unknown): IdempotencyItem {
  const { context } = completion;
  return {
    accountId: context.accountId,
    scope: context.scope,
    fingerprint: context.fingerprint,
    statusCode: completion.statusCode,
    body: JSON.stringify(body),
    headers: completion.headers ?? {},
    createdAt: nowIso(),
    expiresAt: epochSeconds() + IDEMPOTENCY_WINDOW_SECONDS,
  };
}

/** The live stored outcome of a scope, or undefined (missing or past its window). */
export async function readStoredOutcome(context: IdempotencyContext): Promise<IdempotencyItem | undefined> {
  const { data } = await db()
    .entities.idempotencyRecord.get({ accountId: context.accountId, scope: context.scope })
    .go({ consistent: true });
  if (!data || data.expiresAt < epochSeconds()) return undefined;
  return data;
}

/**
 * Stores an outcome that no transaction carried (a handler result without writes, or a 4xx
 * raised by the domain). Returns false when a live record of the scope already exists.
 */
export async function storeOutcome(completion: IdempotencyCompletion, body: unknown): Promise<boolean> {
  try {
    await db()
      .entities.idempotencyRecord.put(outcomeRecord(completion, body))
      .where(({ expiresAt }, { notExists, lt }) => `${notExists(expiresAt)} OR ${lt(expiresAt, epochSeconds())}`)
      .go({ response: "none" });
    completion.context.stored = true;
    return true;
  } catch (error) {
    if (isConditionalFailure(error)) return false;
    throw error;
  }
}

export function isConditionalFailure(error: unknown): boolean {
  let current: unknown = error;
  for (let depth = 0; current && depth < 5; depth++) {
    const name = (current as { name?: string }).name;
    if (name === "ConditionalCheckFailedException") return true;
    current = (current as { cause?: unknown }).cause;
  }
  return false;
}
