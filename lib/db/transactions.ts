import { ReferencedItemGoneError, TransactionTooLargeError, TransactionCanceledError } from "../core/failures.js";
import { createWriteTransaction } from "electrodb";
import { constructedEntities, db, type Entities, type InventoryService } from "./service.js";
import { outcomeItems, recordWritable } from "./outcome-items.js";
import { CONFLICT_POLICY, RETRY, retrying } from "./retry.js";
import { IdempotencyConflictError, type IdempotencyCompletion } from "../core/idempotency.js";

type WriteBuilder = Parameters<InventoryService["transaction"]["write"]>[0];
/** The entities as ElectroDB hands them to a transaction builder. */
export type TransactionEntities = Parameters<WriteBuilder>[0];
/** A transaction item as ElectroDB's `commit()` returns it. */
export type TransactionOp = ReturnType<WriteBuilder>[number];

/** DynamoDB's limit of items in one TransactWriteItems. */
export const MAX_TRANSACTION_ITEMS = 100;

/** The label of the stored idempotency outcome, when a transaction carries one. */
const OUTCOME_LABEL = "idempotency-outcome";
/** The further chunks of a large stored outcome (unconditioned puts). */
const OUTCOME_PART_LABEL = "idempotency-outcome-part";

/**
 * Collects the items of one transaction, each under a label that says what it is
 * (`sequence:customer`, `party`, `ref:custom_field_values[2].custom_field_id`, ...). A
 * cancellation reason is mapped back to its item by label, never by position, so adding an
 * item can never shift what a failure means. Counts its items and refuses the 101st.
 */
export class TransactionBuilder {
  private readonly entries: { label: string; op: TransactionOp; note?: string }[] = [];
  private readonly touched = new Map<string, { accountId: string; itemId: string }>();

  constructor(
    readonly entities: TransactionEntities,
    /** Items this builder may hold (the limit, less what the writer adds itself). */
    readonly capacity: number = MAX_TRANSACTION_ITEMS,
  ) {}

  /** Adds an item; `note` travels with a failure of it (e.g. the message of a reference check). */
  add(label: string, op: TransactionOp, note?: string): this {
    if (this.entries.length >= this.capacity)
      throw new TransactionTooLargeError(this.entries.length + 1 + (MAX_TRANSACTION_ITEMS - this.capacity), MAX_TRANSACTION_ITEMS);
    this.entries.push({ label, op, note });
    return this;
  }

  /** Adds several items under one label. */
  addAll(label: string, ops: readonly TransactionOp[]): this {
    for (const op of ops) this.add(label, op);
    return this;
  }

  /**
   * Items the write starts referencing (a document's lines): each gets a touch, an update that
   * moves its `referenceTick` on condition that it exists, unless the transaction already
   * writes the item (the ledger's stock update, which the deletion conditions on too). Added
   * last, while room is left (`withItemTouches`): a deletion in flight and this write then
   * cannot both commit.
   */
  touchItems(accountId: string, itemIds: Iterable<string>): this {
    for (const itemId of itemIds) this.touched.set(`${accountId}|${itemId}`, { accountId, itemId });
    return this;
  }

  /**
   * @internal the touches not already written by another item of the transaction, while room
   * is left; returns the items left without one (no room), for `markReferencing`.
   */
  withItemTouches(): { accountId: string; itemId: string }[] {
    const untouched: { accountId: string; itemId: string }[] = [];
    if (this.touched.size === 0) return untouched;
    const written = new Set(this.entries.map((entry) => keyOf(entry.op)));
    for (const { accountId, itemId } of this.touched.values()) {
      const op = this.entities.item.patch({ accountId, itemId }).add({ referenceTick: 1 }).commit();
      if (written.has(keyOf(op))) continue;
      if (this.remaining > 0) this.add(ITEM_TOUCH_LABEL, op, itemId);
      else untouched.push({ accountId, itemId });
    }
    return untouched;
  }

  get size(): number {
    return this.entries.length;
  }

  /** Room left for more items. */
  get remaining(): number {
    return this.capacity - this.entries.length;
  }

  /** @internal the items in order, for the writer. */
  items(): readonly { label: string; op: TransactionOp; note?: string }[] {
    return this.entries;
  }
}

/** The label of an item touch (`touchItems`); its note is the item id. */
const ITEM_TOUCH_LABEL = "item touch";

/** The table key an item of a transaction writes (`pk|sk`). */
function keyOf(op: TransactionOp): string {
  const request = op as unknown as Record<string, { Key?: Record<string, unknown>; Item?: Record<string, unknown> } | undefined>;
  const body = request.Update ?? request.Delete ?? request.ConditionCheck ?? request.Put;
  const key = body?.Key ?? body?.Item ?? {};
  return `${String(key.pk)}|${String(key.sk)}`;
}

export interface CancellationReason {
  label: string;
  /** DynamoDB's code: `ConditionalCheckFailed`, `TransactionConflict`, ... */
  code: string;
  note?: string;
  /** The item as it was, for items committed with `{ response: "all_old" }`. */
  item?: Record<string, unknown>;
}

/** Why a transaction did not commit: the failed conditions of the caller's items, by label. */
export class Cancellation {
  constructor(readonly reasons: readonly CancellationReason[]) {}

  /** Whether the item(s) labelled exactly `label` failed their condition. */
  failed(label: string): boolean {
    return this.reasons.some((r) => r.label === label);
  }

  /** The failures whose label starts with `prefix`. */
  failedUnder(prefix: string): CancellationReason[] {
    return this.reasons.filter((r) => r.label.startsWith(prefix));
  }

  /** The stored item of a failed item committed with `{ response: "all_old" }`. */
  itemOf(label: string): Record<string, unknown> | undefined {
    return this.reasons.find((r) => r.label === label)?.item;
  }

  /** Whether any failure has a label other than the given ones. */
  failedOtherThan(...labels: string[]): boolean {
    return this.reasons.some((r) => !labels.includes(r.label));
  }

  get labels(): string[] {
    return this.reasons.map((r) => r.label);
  }
}

/**
 * How long a reference mark (`markReferencing`) holds off an item's deletion: longer than any
 * request runs (API Gateway gives an integration 29 s), so the write that set it has committed
 * or given up by then.
 */
const REFERENCING_LEASE_MS = 30_000;

/**
 * Marks items a document write starts referencing but cannot touch in its own transaction (no
 * room: a document of about 95 distinct items or more), BEFORE that transaction: each moves its
 * `referenceTick` and holds `referencingUntil` a lease ahead, on condition that it exists. A
 * deletion that read the item before the mark fails its condition; one that reads it after
 * waits for the lease or finds the write's reference intent. RETRY on a conflict; throws
 * `ReferencedItemGoneError` naming the items deleted meanwhile.
 */
async function markReferencing(
  entities: TransactionEntities,
  items: readonly { accountId: string; itemId: string }[],
  until: number,
  progress: { marked: number },
): Promise<typeof RETRY | undefined> {
  for (let start = 0; start < items.length; start += MAX_TRANSACTION_ITEMS) {
    const chunk = items.slice(start, start + MAX_TRANSACTION_ITEMS);
    const ops = chunk.map(({ accountId, itemId }) =>
      entities.item.patch({ accountId, itemId }).add({ referenceTick: 1 }).set({ referencingUntil: until }).commit(),
    );
    const result = await createWriteTransaction(constructedEntities() as Entities, () => ops as never).go();
    if (!result.canceled) {
      progress.marked = start + chunk.length;
      continue;
    }
    const codes = (result.data as { code: string }[]).map((entry) => entry.code);
    const gone = chunk.filter((_, index) => codes[index] === "ConditionalCheckFailed").map((item) => item.itemId);
    if (gone.length > 0) throw new ReferencedItemGoneError(gone);
    if (codes.every((code) => code === "None" || TRANSIENT_CODES.has(code))) return RETRY;
    throw new TransactionCanceledError(
      codes.map((code, index) => ({ label: ITEM_TOUCH_LABEL, code, note: chunk[index]?.itemId })).filter((r) => r.code !== "None"),
    );
  }
  return undefined;
}

/**
 * Takes back the marks of a write that will not commit (its transaction was refused, or threw),
 * so deletions need not wait out the lease: each only while it is still this write's (another
 * write's later mark of the same item stays). Best effort: a mark left behind runs out.
 */
async function unmarkReferencing(items: readonly { accountId: string; itemId: string }[], until: number): Promise<void> {
  await Promise.all(
    items.map(({ accountId, itemId }) =>
      db()
        .entities.item.patch({ accountId, itemId })
        .remove(["referencingUntil"])
        .where(({ referencingUntil }, { eq }) => eq(referencingUntil, until))
        .go()
        .catch(() => undefined),
    ),
  );
}

/** Codes that say "try again": another transaction held the items, or DynamoDB throttled. */
const TRANSIENT_CODES = new Set(["TransactionConflict", "ThrottlingError", "ProvisionedThroughputExceeded", "RequestLimitExceeded"]);

/**
 * Writes the items `build` adds, plus the request's stored outcome when one is given, in ONE
 * DynamoDB transaction. Returns null when it committed, or a `Cancellation` naming (by label)
 * the caller's items whose condition failed, for the caller to map to API errors. Retries
 * (with the shared policy) while DynamoDB reports conflicts with concurrent transactions.
 * Throws `IdempotencyConflictError` when only the stored outcome's condition failed (the
 * request was already answered), and `ContentionError` when conflicts outlast the retries.
 */
export async function writeTransaction(
  build: (tx: TransactionBuilder) => void,
  outcome?: { completion: IdempotencyCompletion | undefined; body: unknown },
): Promise<Cancellation | null> {
  const storesOutcome = outcome?.completion !== undefined;
  // A large outcome (a 500-line estimate) is compressed into the record and part items: encode once.
  const stored = storesOutcome ? outcomeItems(outcome!.completion!, outcome!.body) : undefined;
  const outcomeItemCount = stored ? 1 + stored.parts.length : 0;
  return retrying(
    "transaction",
    async () => {
      const entities = db().entities as unknown as TransactionEntities;
      const tx = new TransactionBuilder(entities, MAX_TRANSACTION_ITEMS - outcomeItemCount);
      build(tx);
      const untouched = tx.withItemTouches();
      if (untouched.length === 0) return sendTransaction(entities, tx, stored, outcome);
      const until = Date.now() + REFERENCING_LEASE_MS;
      // Marks already made (earlier chunks) are taken back when a later chunk, or the write, fails.
      const progress = { marked: 0 };
      let committed = false;
      try {
        if ((await markReferencing(entities, untouched, until, progress)) === RETRY) return RETRY;
        const sent = await sendTransaction(entities, tx, stored, outcome);
        committed = sent === null;
        return sent;
      } finally {
        if (!committed && progress.marked > 0) await unmarkReferencing(untouched.slice(0, progress.marked), until);
      }
    },
    CONFLICT_POLICY,
  );
}

/** Sends a built transaction (with the stored outcome, when one is given): null when it committed, else what `writeTransaction` says of it. */
async function sendTransaction(
  entities: TransactionEntities,
  tx: TransactionBuilder,
  stored: ReturnType<typeof outcomeItems> | undefined,
  outcome: { completion: IdempotencyCompletion | undefined; body: unknown } | undefined,
): Promise<Cancellation | null | typeof RETRY> {
  const items = [...tx.items()];
  if (stored) {
    const writable = recordWritable(outcome!.completion!.context) as never;
    items.push({ label: OUTCOME_LABEL, op: entities.idempotencyRecord.put(stored.record).where(writable).commit() });
    for (const part of stored.parts) items.push({ label: OUTCOME_PART_LABEL, op: entities.idempotencyPart.put(part).commit() });
  }
  const result = await createWriteTransaction(constructedEntities() as Entities, () => items.map((item) => item.op) as never).go();
  if (!result.canceled) {
    if (stored) outcome!.completion!.context.stored = true;
    return null;
  }
  const reasons: CancellationReason[] = (result.data as { code: string; item?: Record<string, unknown> }[])
    .map((entry, index) => ({ label: items[index]?.label ?? `#${index}`, code: entry.code, note: items[index]?.note, item: entry.item ?? undefined }))
    .filter((r) => r.code !== "None");
  const failed = reasons.filter((r) => r.code === "ConditionalCheckFailed" && r.label !== OUTCOME_LABEL);
  const gone = failed.filter((r) => r.label === ITEM_TOUCH_LABEL);
  if (gone.length > 0) throw new ReferencedItemGoneError(gone.map((r) => r.note ?? ""));
  if (failed.length > 0) return new Cancellation(failed);
  if (reasons.some((r) => r.label === OUTCOME_LABEL && r.code === "ConditionalCheckFailed")) throw new IdempotencyConflictError(reasons);
  if (reasons.length > 0 && reasons.every((r) => TRANSIENT_CODES.has(r.code))) return RETRY;
  throw new TransactionCanceledError(reasons);
}
