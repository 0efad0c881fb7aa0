import { RecordLimitError } from "../core/failures.js";
import { db } from "./service.js";
import type { Cancellation, TransactionBuilder } from "./transactions.js";
import { RETRY, retrying } from "./retry.js";

/**
 * Per-account number sequences (architecture section 4): the number is taken in the SAME
 * transaction that writes the record, so a failed write consumes no number and no gap appears.
 * `allocateNumber` reads the counter (n), lets the caller write its record numbered n+1 in one
 * transaction together with `claim` (counter n -> n+1 on condition that it is still n), and
 * retries with the shared policy when another writer took n+1 first.
 */
interface SequenceDefinition {
  /** The item holding the counter. */
  entity: "accountCounters" | "inventoryCounters" | "sequence";
  attribute: string;
}

const SEQUENCES = {
  // Customers and prospects share one sequence (spec part 1, section 2.6).
  customer: { entity: "accountCounters", attribute: "customerSeq" },
  prospect: { entity: "accountCounters", attribute: "customerSeq" },
  supplier: { entity: "accountCounters", attribute: "supplierSeq" },
  item: { entity: "inventoryCounters", attribute: "itemSeq" },
  stockRow: { entity: "inventoryCounters", attribute: "ivlSeq" },
  unit: { entity: "inventoryCounters", attribute: "unitSeq" },
} as const satisfies Record<string, SequenceDefinition>;

/** Sequences with an item of their own (`Sequence` entity, keyed by name). */
export const OWN_SEQUENCES = ["purchase_order", "stock_transfer", "estimate", "sales_order", "invoice", "packing_list", "kit", "kit_build"] as const;
export type OwnSequence = (typeof OWN_SEQUENCES)[number];
export type SequenceName = keyof typeof SEQUENCES | OwnSequence;

function definitionOf(name: SequenceName): SequenceDefinition {
  return (SEQUENCES as Record<string, SequenceDefinition>)[name] ?? { entity: "sequence", attribute: "value" };
}

function keyOf(accountId: string, name: SequenceName, definition: SequenceDefinition): Record<string, string> {
  return definition.entity === "sequence" ? { accountId, name } : { accountId };
}

/** The last number a sequence handed out (0 before the first). */
export async function readSequence(accountId: string, name: SequenceName, consistent: boolean): Promise<number> {
  const definition = definitionOf(name);
  const entity = (db().entities as unknown as Record<string, unknown>)[definition.entity] as {
    get(key: Record<string, string>): { go(options: { consistent: boolean }): Promise<{ data: Record<string, unknown> | null }> };
  };
  const { data } = await entity.get(keyOf(accountId, name, definition)).go({ consistent });
  return (data?.[definition.attribute] as number | undefined) ?? 0;
}

/** The label of a sequence's counter item in a transaction. */
export const sequenceLabel = (name: SequenceName): string => `sequence:${name}`;

/**
 * Adds the counter item moving `name` from `from` to `to` on condition that it is still
 * `from`; `add` moves counts kept on the same item (one item, one operation).
 */
export function claimNumbers(
  tx: TransactionBuilder,
  accountId: string,
  name: SequenceName,
  from: number,
  to: number,
  add: Record<string, number> = {},
  countBelow?: number,
): void {
  const definition = definitionOf(name);
  const attribute = definition.attribute;
  const entity = (tx.entities as unknown as Record<string, unknown>)[definition.entity] as {
    update(key: Record<string, string>): {
      set(values: Record<string, number>): {
        add(values: Record<string, number>): { where(fn: unknown): { commit(options?: { response: "all_old" }): never } };
      };
    };
  };
  const op = entity
    .update(keyOf(accountId, name, definition))
    .set({ [attribute]: to })
    .add(add)
    .where(
      (
        attributes: Record<string, unknown>,
        { eq, lt, notExists }: { eq: (a: unknown, v: number) => string; lt: (a: unknown, v: number) => string; notExists: (a: unknown) => string },
      ) => {
        const claimed = from === 0 ? notExists(attributes[attribute]) : eq(attributes[attribute], from);
        // `countBelow`: the records counted on the item (`count`) must stay under a limit.
        return countBelow === undefined ? claimed : `${claimed} AND (${notExists(attributes.count)} OR ${lt(attributes.count, countBelow)})`;
      },
    )
    // A lost race returns the counter as it is, so the next attempt needs no read.
    .commit({ response: "all_old" });
  tx.add(sequenceLabel(name), op);
}

/** Claims the next number inside the caller's transaction; `add` moves counts on the counter item. */
export type ClaimNumber = (tx: TransactionBuilder, add?: Record<string, number>) => void;

/**
 * Writes a record numbered from `name`: `write(number, claim)` builds and commits ONE
 * transaction that includes `claim(tx)`, and returns its cancellation (or null). When the
 * sequence moved under it, the number is read again and `write` runs again; any other
 * cancellation is returned to the caller, with the number it tried. With `recordLimit` (own
 * sequences: their `count` of existing records), the claim also requires the count to be under
 * the limit, in the same write; reaching it throws `RecordLimitError`.
 */
export async function allocateNumber(
  accountId: string,
  name: SequenceName,
  write: (number: number, claim: ClaimNumber) => Promise<Cancellation | null>,
  options: { recordLimit?: number } = {},
): Promise<{ number: number; cancellation: Cancellation | null }> {
  const limit = options.recordLimit;
  if (limit !== undefined && limit <= 0) throw new RecordLimitError(name, limit);
  const label = sequenceLabel(name);
  const attribute = definitionOf(name).attribute;
  let known: number | undefined;
  const counterItem = `${definitionOf(name).entity}:${accountId}${definitionOf(name).entity === "sequence" ? `:${name}` : ""}`;
  return retrying(
    `next ${name} number`,
    async (attempt, context) => {
      // An eventually consistent read is right almost always; the condition catches the rest. After
      // waiting for its turn, what a lost race told this writer is stale: read it again, unless
      // the writer before in line handed on the number it wrote (one read less per turn).
      if (context.afterWait) {
        const handed = context.received(counterItem);
        known = typeof handed === "number" ? handed : undefined;
      }
      const current = known ?? (await readSequence(accountId, name, attempt > 0 || context.afterWait));
      const number = current + 1;
      const cancellation = await write(number, (tx, add) => {
        claimNumbers(tx, accountId, name, current, number, add, limit);
        // The next writer in line (if any) starts the moment this number is written.
        context.serveNextWithin(tx, counterItem, number);
      });
      if (!cancellation) {
        context.handOn(counterItem, number);
        context.servedWithin();
      }
      if (cancellation?.failed(label) && !cancellation.failedOtherThan(label)) {
        const item = cancellation.itemOf(label);
        const stored = item?.[attribute];
        if (limit !== undefined && (stored ?? 0) === current && typeof item?.count === "number" && item.count >= limit) throw new RecordLimitError(name, limit);
        known = typeof stored === "number" && stored > current ? stored : undefined;
        return RETRY;
      }
      return { number, cancellation };
    },
    undefined,
    [counterItem],
  );
}
