import { epochSeconds, nowIso } from "../core/clock.js";
import { db, type IdempotencyItem } from "./service.js";
import { unpackText } from "./packing.js";
import { isConditionalFailure } from "./dynamo-errors.js";
import { randomUUID } from "node:crypto";
import { IDEMPOTENCY_CLAIM_SECONDS, IdempotencyConflictError, type IdempotencyCompletion, type IdempotencyContext } from "../core/idempotency.js";
import { writeTransaction } from "./transactions.js";
import { MAX_PLAIN_OUTCOME_BYTES, outcomeItems, recordWritable } from "./outcome-items.js";

/**
 * Claims a scope before its request runs: an in-progress record (status 0) with a lease of
 * `IDEMPOTENCY_CLAIM_SECONDS`, written only where no live record exists. Returns false when one
 * does (a stored outcome to replay, or another request still running).
 */
export async function claimScope(context: IdempotencyContext): Promise<boolean> {
  const claim = randomUUID();
  try {
    await db()
      .entities.idempotencyRecord.put({
        accountId: context.accountId,
        scope: context.scope,
        fingerprint: context.fingerprint,
        statusCode: 0,
        claim,
        headers: {},
        createdAt: nowIso(),
        expiresAt: epochSeconds() + IDEMPOTENCY_CLAIM_SECONDS,
      })
      .where(recordWritable(context) as never)
      .go({ response: "none" });
    context.claim = claim;
    return true;
  } catch (error) {
    if (isConditionalFailure(error)) return false;
    throw error;
  }
}

/** Gives up this request's claim (a 5xx: the retry runs again); a claim already replaced is left alone. */
export async function releaseClaim(context: IdempotencyContext): Promise<void> {
  if (!context.claim || context.stored) return;
  try {
    await db()
      .entities.idempotencyRecord.delete({ accountId: context.accountId, scope: context.scope })
      .where(({ claim }, { eq }) => eq(claim, context.claim!))
      .go({ response: "none" });
  } catch (error) {
    if (!isConditionalFailure(error)) throw error;
  }
}

/**
 * The live record of a scope: `inProgress` for another request's claim, else the stored outcome
 * with its body as JSON text; undefined when none is live (missing, or past its window or lease).
 */
export async function readStoredOutcome(
  context: IdempotencyContext,
): Promise<{ inProgress: true; fingerprint: string } | (IdempotencyItem & { inProgress: false; body: string }) | undefined> {
  const { data } = await db().entities.idempotencyRecord.get({ accountId: context.accountId, scope: context.scope }).go({ consistent: true });
  if (!data || data.expiresAt < epochSeconds()) return undefined;
  if (data.statusCode === 0) return { inProgress: true, fingerprint: data.fingerprint };
  if (data.body !== undefined) return { ...data, inProgress: false, body: data.body };
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
  return { ...data, inProgress: false, body: unpackText([data.packed as Uint8Array, ...parts.map((part) => part.packed as Uint8Array)]) };
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
      .where(recordWritable(completion.context) as never)
      .go({ response: "none" });
    completion.context.stored = true;
    return true;
  } catch (error) {
    if (isConditionalFailure(error)) return false;
    throw error;
  }
}
