import { db, type IdempotencyItem, type IdempotencyPartItem } from "./service.js";
import { epochSeconds, nowIso } from "./keys.js";
import { packJson, unpackText } from "./packing.js";
import { IDEMPOTENCY_WINDOW_SECONDS, IdempotencyConflictError, type IdempotencyCompletion, type IdempotencyContext } from "../core/idempotency.js";
import { writeTransaction } from "./transactions.js";

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

/** The live stored outcome of a scope with its body as JSON text, or undefined (missing or past its window). */
export async function readStoredOutcome(context: IdempotencyContext): Promise<(IdempotencyItem & { body: string }) | undefined> {
  const { data } = await db()
    .entities.idempotencyRecord.get({ accountId: context.accountId, scope: context.scope })
    .go({ consistent: true });
  if (!data || data.expiresAt < epochSeconds()) return undefined;
  if (data.body !== undefined) return { ...data, body: data.body };
  const count = data.parts ?? 0;
  const parts =
    count === 0
      ? []
      : (
          await db()
            .entities.idempotencyPart.get(Array.from({ length: count }, (_, i) => ({ accountId: context.accountId, scope: context.scope, part: i + 1 })))
            .go({ consistent: true })
        ).data.sort((a, b) => a.part - b.part);
  if (parts.length !== count) return undefined; // not all there: never replay a partial body
  return { ...data, body: unpackText([data.packed as Uint8Array, ...parts.map((part) => part.packed as Uint8Array)]) };
}

/**
 * Stores an outcome that no transaction carried (a handler result without writes, or a 4xx
 * raised by the domain). Returns false when a live record of the scope already exists.
 */
export async function storeOutcome(completion: IdempotencyCompletion, body: unknown): Promise<boolean> {
  if (Buffer.byteLength(JSON.stringify(body), "utf8") > MAX_PLAIN_OUTCOME_BYTES) {
    // Record and parts together: the transaction writer stores exactly this outcome (and retries conflicts).
    try {
      await writeTransaction(() => undefined, { completion, body });
      return true;
    } catch (error) {
      if (error instanceof IdempotencyConflictError) return false;
      throw error;
    }
  }
  const { record } = outcomeItems(completion, body);
  try {
    await db()
      .entities.idempotencyRecord.put(record)
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
