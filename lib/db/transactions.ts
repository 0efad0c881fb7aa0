import { db, type InventoryService } from "./service.js";
import { outcomeRecord } from "./idempotency.js";
import { epochSeconds } from "./keys.js";
import { IdempotencyConflictError, type IdempotencyCompletion } from "../core/idempotency.js";

type WriteBuilder = Parameters<InventoryService["transaction"]["write"]>[0];
/** The entities as ElectroDB hands them to a transaction builder. */
export type TransactionEntities = Parameters<WriteBuilder>[0];
/** A transaction item as ElectroDB's `commit()` returns it. */
export type TransactionOp = ReturnType<WriteBuilder>[number];
type Entities = TransactionEntities;

export interface CancellationReason {
  /** Position of the item in the list the caller built. */
  index: number;
  /** DynamoDB's code: `ConditionalCheckFailed`, `TransactionConflict`, ... */
  code: string;
}

/** Thrown when a transaction is cancelled for a reason the caller did not map. */
export class TransactionCanceledError extends Error {
  readonly reasons: CancellationReason[];
  constructor(reasons: CancellationReason[]) {
    super(`Transaction cancelled: ${reasons.map((r) => `${r.index}:${r.code}`).join(", ")}`);
    this.name = "TransactionCanceledError";
    this.reasons = reasons;
  }
}

const MAX_CONFLICT_RETRIES = 4;
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Writes `build`'s items, plus the request's stored outcome when one is given, in ONE
 * DynamoDB transaction. Returns null when it committed, or the reasons of the caller's own
 * items when a condition failed (the caller maps them to API errors). Throws
 * `IdempotencyConflictError` when the outcome record already exists, and retries a few times
 * when DynamoDB reports a conflict with a concurrent transaction.
 */
export async function writeTransaction(
  build: (entities: Entities) => TransactionOp[],
  outcome?: { completion: IdempotencyCompletion | undefined; body: unknown },
): Promise<CancellationReason[] | null> {
  for (let attempt = 0; ; attempt++) {
    let ownCount = 0;
    const result = await db()
      .transaction.write((entities) => {
        const ops = build(entities);
        ownCount = ops.length;
        if (outcome?.completion) ops.push(
            entities.idempotencyRecord
              .put(outcomeRecord(outcome.completion, outcome.body))
              .where(({ expiresAt }, { notExists, lt }) => `${notExists(expiresAt)} OR ${lt(expiresAt, epochSeconds())}`)
              .commit(),
          );
        return ops as never;
      })
      .go();
    if (!result.canceled) {
      if (outcome?.completion) outcome.completion.context.stored = true;
      return null;
    }
    const reasons: CancellationReason[] = result.data
      .map((item: { code: string }, index: number) => ({ index, code: item.code }))
      .filter((r: CancellationReason) => r.code !== "None");
    const idempotencyRejected = reasons.some((r) => r.index >= ownCount);
    const failed = reasons.filter((r) => r.code === "ConditionalCheckFailed" && r.index < ownCount);
    if (idempotencyRejected && failed.length === 0) throw new IdempotencyConflictError(reasons);
    if (failed.length > 0) return failed;
    if (reasons.every((r) => r.code === "TransactionConflict") && attempt < MAX_CONFLICT_RETRIES) {
      await pause(10 + Math.random() * 40 * (attempt + 1));
      continue;
    }
    throw new TransactionCanceledError(reasons);
  }
}
