import { readToOffset } from "./offset-page.js";
import { db, type AccountCountersItem, type ContactItem, type OwnerCountersItem, type PartyItem } from "./service.js";
import { unlinkOps } from "./contacts.js";
import { writeTransaction, type CancellationReason, type TransactionEntities, type TransactionOp } from "./transactions.js";
import type { IdempotencyCompletion } from "../core/idempotency.js";
import type { PartyKind } from "../schemas/parties.js";

type Outcome = { completion: IdempotencyCompletion | undefined; body: unknown };

/** The counter attribute of each kind's record count, and of its number sequence. */
export const COUNT_FIELD = { customer: "customerCount", prospect: "prospectCount", supplier: "supplierCount" } as const;
export const SEQUENCE_FIELD = { customer: "customerSeq", prospect: "customerSeq", supplier: "supplierSeq" } as const;

export async function readParty(accountId: string, partyId: string): Promise<PartyItem | undefined> {
  const { data } = await db().entities.party.get({ accountId, partyId }).go({ consistent: true });
  return data ?? undefined;
}

/** Several parties in one BatchGetItem (missing ones are simply absent). */
export async function readParties(accountId: string, partyIds: readonly string[]): Promise<PartyItem[]> {
  if (partyIds.length === 0) return [];
  const { data } = await db()
    .entities.party.get([...new Set(partyIds)].map((partyId) => ({ accountId, partyId })))
    .go({ consistent: true });
  return data;
}

export async function readAccountCounters(accountId: string, consistent: boolean): Promise<AccountCountersItem | undefined> {
  const { data } = await db().entities.accountCounters.get({ accountId }).go({ consistent });
  return data ?? undefined;
}

export async function readOwnerCounters(accountId: string, userId: string): Promise<OwnerCountersItem | undefined> {
  const { data } = await db().entities.ownerCounters.get({ accountId, userId }).go({ consistent: true });
  return data ?? undefined;
}

export interface PartyScope {
  accountId: string;
  kind: PartyKind;
  /** Only this owner's records (users without `records.view_all`). */
  ownerUserId?: string;
}

function partyIndexQuery(scope: PartyScope) {
  const parties = db().entities.party.query;
  return scope.ownerUserId
    ? parties.byOwnerName({ accountId: scope.accountId, kind: scope.kind, ownerUserId: scope.ownerUserId })
    : parties.byName({ accountId: scope.accountId, kind: scope.kind });
}

/**
 * The records at positions [offset, offset + limit) in name order. DynamoDB has no offset, so
 * the index is read from its start: the cost grows with the page's depth, never with records
 * after it.
 */
export async function queryPartyPage(scope: PartyScope, offset: number, limit: number): Promise<PartyItem[]> {
  return readToOffset<PartyItem>(offset, limit, (cursor, want) => partyIndexQuery(scope).go({ cursor, limit: want }));
}

/**
 * Every record of the scope whose name or office email contains `needle` (lower case), or
 * whose number equals `number`: one filtered Query over the scope's index (reads the scope).
 */
export async function searchParties(scope: PartyScope, needle: string, number: number | undefined): Promise<PartyItem[]> {
  const { data } = await partyIndexQuery(scope)
    .where(({ nameKey, emailKey, number: partyNumber }, { contains, eq }) =>
      [contains(nameKey, needle), contains(emailKey, needle), ...(number === undefined ? [] : [eq(partyNumber, number)])].join(" OR "),
    )
    .go({ pages: "all" });
  return data;
}

/** References a party write must check (custom fields of its kind, label, pricing tier). */
export interface PartyReferences {
  customFieldIds: string[];
  customerLabelId?: string;
  pricingTierId?: string;
}

export type ReferenceFailure = { field: "custom_field_values"; index: number } | { field: "customer_label_id" | "pricing_tier_id" };

function referenceChecks(entities: TransactionEntities, accountId: string, kind: PartyKind, refs: PartyReferences) {
  const ops: TransactionOp[] = [];
  const meaning: ReferenceFailure[] = [];
  refs.customFieldIds.forEach((customFieldId, index) => {
    ops.push(
      entities.customField
        .check({ accountId, kind, customFieldId })
        .where(({ customFieldId: id }, { exists }) => exists(id))
        .commit(),
    );
    meaning.push({ field: "custom_field_values", index });
  });
  if (refs.customerLabelId) {
    ops.push(entities.customerLabel.check({ accountId, labelId: refs.customerLabelId }).where(({ labelId }, { exists }) => exists(labelId)).commit());
    meaning.push({ field: "customer_label_id" });
  }
  if (refs.pricingTierId) {
    ops.push(
      entities.pricingTier
        .check({ accountId, pricingTierId: refs.pricingTierId })
        .where(({ pricingTierId }, { exists }) => exists(pricingTierId))
        .commit(),
    );
    meaning.push({ field: "pricing_tier_id" });
  }
  return { ops, meaning };
}

export type PartyWriteResult =
  | { ok: true }
  | { ok: false; conflict: boolean; references: ReferenceFailure[] };

function interpret(failed: CancellationReason[] | null, fixedOps: number, meaning: ReferenceFailure[]): PartyWriteResult {
  if (!failed) return { ok: true };
  const references = failed.filter((r) => r.index >= fixedOps).map((r) => meaning[r.index - fixedOps]!);
  return { ok: false, conflict: failed.some((r) => r.index < fixedOps), references };
}

/**
 * Inserts a party with its number `expectedSequence + 1`, in one transaction with the
 * sequence (conditioned on still being `expectedSequence`), the account's and the owner's
 * counts, and a ConditionCheck per reference. `conflict` means the sequence moved: retry.
 */
export async function insertParty(
  party: PartyItem,
  expectedSequence: number,
  refs: PartyReferences,
  outcome: Outcome,
): Promise<PartyWriteResult> {
  let meaning: ReferenceFailure[] = [];
  const sequenceField = SEQUENCE_FIELD[party.kind];
  const countField = COUNT_FIELD[party.kind];
  const failed = await writeTransaction((entities) => {
    const checks = referenceChecks(entities, party.accountId, party.kind, refs);
    meaning = checks.meaning;
    return [
      entities.accountCounters
        .update({ accountId: party.accountId })
        .set({ [sequenceField]: party.number })
        .add({ [countField]: 1 })
        .where((attributes, { eq, notExists }) =>
          expectedSequence === 0 ? notExists(attributes[sequenceField]) : eq(attributes[sequenceField], expectedSequence),
        )
        .commit(),
      entities.ownerCounters.update({ accountId: party.accountId, userId: party.ownerUserId }).add({ [countField]: 1 }).commit(),
      entities.party.create(party).commit(),
      ...checks.ops,
    ];
  }, outcome);
  return interpret(failed, 3, meaning);
}

/**
 * Writes a party's new writable fields on condition that it has not changed since it was read
 * (`conflict`: read again), with a ConditionCheck per reference.
 */
export async function replaceParty(
  previous: PartyItem,
  changes: { set: Partial<PartyItem>; remove: (keyof PartyItem)[] },
  refs: PartyReferences,
  outcome: Outcome,
): Promise<PartyWriteResult> {
  let meaning: ReferenceFailure[] = [];
  const failed = await writeTransaction((entities) => {
    const checks = referenceChecks(entities, previous.accountId, previous.kind, refs);
    meaning = checks.meaning;
    let update = entities.party.patch({ accountId: previous.accountId, partyId: previous.partyId }).set(changes.set as never);
    if (changes.remove.length > 0) update = update.remove(changes.remove as never);
    return [update.where(({ updatedAt }, { eq }) => eq(updatedAt, previous.updatedAt)).commit(), ...checks.ops];
  }, outcome);
  return interpret(failed, 1, meaning);
}

/**
 * Deletes a party and unlinks `linkedContacts` from it in ONE transaction, on condition that
 * the party is unchanged, has no documents and has exactly those contacts, and takes it out of
 * the account's and the owner's counts. `conflict`: read it again.
 */
export async function removeParty(previous: PartyItem, linkedContacts: readonly ContactItem[], outcome: Outcome): Promise<PartyWriteResult> {
  const countField = COUNT_FIELD[previous.kind];
  const failed = await writeTransaction(
    (entities) => [
      entities.party
        .delete({ accountId: previous.accountId, partyId: previous.partyId })
        .where(
          ({ updatedAt, documentCount, contactCount }, { eq }) =>
            `${eq(updatedAt, previous.updatedAt)} AND ${eq(documentCount, 0)} AND ${eq(contactCount, linkedContacts.length)}`,
        )
        .commit(),
      entities.accountCounters.update({ accountId: previous.accountId }).add({ [countField]: -1 }).commit(),
      // Also moves the owner's record count, on the same owner item as the contact counts.
      ...unlinkOps(entities, previous, linkedContacts, { ownerCounts: { [countField]: -1 } }),
    ],
    outcome,
  );
  return failed ? { ok: false, conflict: true, references: [] } : { ok: true };
}

/**
 * The document write path's effect on its party (documents arrive with later endpoint groups):
 * a transaction item that moves `document_count` and `lifetime_revenue_total` by exact
 * amounts and sets `last_invoice_date` (the caller passes the later of the stored and the new
 * date), on condition that the party exists.
 */
export function documentActivityOp(
  entities: TransactionEntities,
  party: { accountId: string; partyId: string },
  activity: { documents: number; revenueMinor?: number; invoiceDate?: string },
): TransactionOp {
  let update = entities.party.patch(party).add({ documentCount: activity.documents, lifetimeRevenueMinor: activity.revenueMinor ?? 0 });
  if (activity.invoiceDate) update = update.set({ lastInvoiceDate: activity.invoiceDate });
  return update.commit();
}
