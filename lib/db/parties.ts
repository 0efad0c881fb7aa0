import { batchGetAll } from "./batch-get.js";
import { byNameThenId, keepTextMatches, namePartitionOf, readNameEntries, readNamePage, type NameEntry } from "./name-index.js";
import { isCutNameKey } from "../core/name-keys.js";
import { db, type AccountCountersItem, type ContactItem, type OwnerCountersItem, type PartyItem } from "./service.js";
import { addUnlinks } from "./contacts.js";
import { checkReferences, referenceDetails, type Reference } from "./references.js";
import { allocateNumber } from "./sequences.js";
import { writeTransaction, type Cancellation, type TransactionBuilder } from "./transactions.js";
import type { ValidationDetail } from "../core/errors.js";
import type { IdempotencyCompletion } from "../core/idempotency.js";
import type { PartyKind } from "../schemas/parties.js";

type Outcome = { completion: IdempotencyCompletion | undefined; body: unknown };

/** The counter attribute of each kind's record count, and of its number sequence. */
export const COUNT_FIELD = { customer: "customerCount", prospect: "prospectCount", supplier: "supplierCount" } as const;

export async function readParty(accountId: string, partyId: string): Promise<PartyItem | undefined> {
  const { data } = await db().entities.party.get({ accountId, partyId }).go({ consistent: true });
  return data ?? undefined;
}

/** Several parties, ONE BatchGetItem per 100 (missing ones are simply absent); `consistent: false` for display (half the read units). */
export async function readParties(accountId: string, partyIds: readonly string[], options: { consistent?: boolean } = {}): Promise<PartyItem[]> {
  const keys = [...new Set(partyIds)].map((partyId) => ({ accountId, partyId }));
  return batchGetAll("read parties", keys, (chunk) =>
    db()
      .entities.party.get(chunk)
      .go({ consistent: options.consistent ?? true }),
  );
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
 * The records at positions [offset, offset + limit) in name order: a deep page skips its
 * offset over the name index (`lib/db/name-index.ts`), then one Query on the scope's index
 * reads the page from there. Cost: the page, plus about 200 bytes per record before it.
 */
export async function queryPartyPage(scope: PartyScope, offset: number, limit: number): Promise<PartyItem[]> {
  const partition = namePartitionOf(partyIndexQuery(scope).params(), "party");
  return readNamePage<PartyItem>(partition, offset, limit, undefined, (nameKey, cursor, want) => {
    const query = partyIndexQuery(scope);
    return (nameKey === undefined ? query : query.gte({ nameKey })).go({ cursor, limit: want });
  });
}

/**
 * The scope's records whose name or office email contains `needle` (lower case), or whose
 * number equals `number`, in name order: matched over the scope's name-index entries (ids,
 * names, email, number), never its records; only the page [offset, offset + limit) is read, by
 * key. `total`: every match.
 */
export async function searchPartyPage(
  scope: PartyScope,
  needle: string,
  number: number | undefined,
  offset: number,
  limit: number,
): Promise<{ total: number; items: PartyItem[] }> {
  const matchesKeys = (entry: NameEntry) =>
    entry.nameKey.includes(needle) || Boolean(entry.emailKey?.includes(needle)) || (number !== undefined && entry.number === number);
  const entries = await readNameEntries(namePartitionOf(partyIndexQuery(scope).params(), "party"), {
    keep: (entry) => matchesKeys(entry) || isCutNameKey(entry.nameKey),
  });
  const matches = await keepTextMatches(
    entries,
    needle,
    matchesKeys,
    (entry) => entry.partyId!,
    async (ids) => new Map((await readParties(scope.accountId, ids, { consistent: false })).map((party) => [party.partyId, party.name])),
  );
  const ids = matches
    .sort(byNameThenId((entry) => entry.partyId))
    .slice(offset, offset + limit)
    .map((entry) => entry.partyId!);
  const byId = new Map((await readParties(scope.accountId, ids, { consistent: false })).map((party) => [party.partyId, party]));
  return { total: matches.length, items: ids.flatMap((id) => byId.get(id) ?? []) };
}

export type PartyWriteResult = { ok: true } | { ok: false; conflict: boolean; references: ValidationDetail[] };

function interpret(cancellation: Cancellation | null): PartyWriteResult {
  if (!cancellation) return { ok: true };
  const references = referenceDetails(cancellation);
  return { ok: false, conflict: references.length === 0 || cancellation.failedUnder("party").length > 0, references };
}

/**
 * Inserts a party numbered from its kind's sequence, in ONE transaction with the sequence
 * claim, the account's and the owner's counts, and a ConditionCheck per reference. Retries
 * while other creates take the number first; returns the number it took.
 */
export async function insertParty(
  party: Omit<PartyItem, "number">,
  references: readonly Reference[],
  outcome: (number: number) => Outcome,
): Promise<{ number: number; result: PartyWriteResult }> {
  const countField = COUNT_FIELD[party.kind];
  const { number, cancellation } = await allocateNumber(party.accountId, party.kind, (next, claim) =>
    writeTransaction((tx) => {
      claim(tx, { [countField]: 1 });
      tx.add(
        "owner counts",
        tx.entities.ownerCounters
          .update({ accountId: party.accountId, userId: party.ownerUserId })
          .add({ [countField]: 1 })
          .commit(),
      );
      tx.add("party", tx.entities.party.create({ ...party, number: next } as PartyItem).commit());
      checkReferences(tx, party.accountId, references);
    }, outcome(next)),
  );
  return { number, result: interpret(cancellation) };
}

/**
 * Writes a party's new writable fields on condition that it has not changed since it was read
 * (`conflict`: read again), with a ConditionCheck per reference.
 */
export async function replaceParty(
  previous: PartyItem,
  changes: { set: Partial<PartyItem>; remove: (keyof PartyItem)[] },
  references: readonly Reference[],
  outcome: Outcome,
): Promise<PartyWriteResult> {
  const cancellation = await writeTransaction((tx) => {
    let update = tx.entities.party.patch({ accountId: previous.accountId, partyId: previous.partyId }).set(changes.set as never);
    if (changes.remove.length > 0) update = update.remove(changes.remove as never);
    tx.add("party", update.where(({ updatedAt }, { eq }) => eq(updatedAt, previous.updatedAt)).commit());
    checkReferences(tx, previous.accountId, references);
  }, outcome);
  return interpret(cancellation);
}

/**
 * Deletes a party and unlinks `linkedContacts` from it in ONE transaction, on condition that
 * the party is unchanged, has no documents and has exactly those contacts, and takes it out of
 * the account's and the owner's counts. `conflict`: read it again.
 */
export async function removeParty(previous: PartyItem, linkedContacts: readonly ContactItem[], outcome: Outcome): Promise<PartyWriteResult> {
  const countField = COUNT_FIELD[previous.kind];
  const cancellation = await writeTransaction((tx) => {
    tx.add(
      "party",
      tx.entities.party
        .delete({ accountId: previous.accountId, partyId: previous.partyId })
        .where(
          ({ updatedAt, documentCount, contactCount }, { eq }) =>
            `${eq(updatedAt, previous.updatedAt)} AND ${eq(documentCount, 0)} AND ${eq(contactCount, linkedContacts.length)}`,
        )
        .commit(),
    );
    tx.add(
      "account counts",
      tx.entities.accountCounters
        .update({ accountId: previous.accountId })
        .add({ [countField]: -1 })
        .commit(),
    );
    // Also moves the owner's record count, on the same owner item as the contact counts.
    addUnlinks(tx, previous, linkedContacts, { ownerCounts: { [countField]: -1 } });
  }, outcome);
  return cancellation ? { ok: false, conflict: true, references: [] } : { ok: true };
}

/**
 * The document write path's effect on its party: adds the item that moves `document_count`
 * and `lifetime_revenue_total` by exact amounts and sets `last_invoice_date` (the caller passes
 * the later of the stored and the new date), on condition that the party exists (label
 * `party:<id>`: its failure means the party was deleted, or with `requireActive` archived, or
 * with `requireKind` of another kind (a prospect converted), meanwhile). With `invoiceDateWas`
 * (the stored date as read, null when none), the date is set
 * only on condition that it is still that one, so a concurrent later date is never overwritten
 * by an earlier one (the label's failure then means: read the party again).
 */
export function addDocumentActivity(
  tx: TransactionBuilder,
  party: { accountId: string; partyId: string },
  activity: DocumentActivity,
  options: { requireActive?: boolean; requireKind?: PartyKind; convertProspect?: { ownerUserId: string; now: string } } = {},
): void {
  let update = tx.entities.party.patch(party).add({ documentCount: activity.documents, lifetimeRevenueMinor: activity.revenueMinor ?? 0 });
  if (activity.invoiceDate) update = update.set({ lastInvoiceDate: activity.invoiceDate });
  else if (activity.invoiceDate === null) update = update.remove(["lastInvoiceDate"]);
  const convert = options.convertProspect;
  // A prospect becoming a customer: its kind (and so its list keys, rebuilt from the owner) in the same operation.
  if (convert)
    update = update
      .set({ kind: "customer", updatedAt: convert.now })
      .composite({ ownerUserId: convert.ownerUserId })
      .remove([...PROSPECT_ONLY]);
  const was = activity.invoiceDateWas;
  const guardDate = activity.invoiceDate !== undefined && was !== undefined;
  // `requireActive`: the party must still be unarchived when the document commits (a document
  // for a party archived meanwhile fails with the same label); a conversion also needs it to be
  // still a prospect.
  if (guardDate || options.requireActive || options.requireKind || convert) {
    update = update.where(({ lastInvoiceDate, archived, kind }, { eq, notExists }) => {
      const conditions: string[] = [];
      if (convert) conditions.push(eq(kind, "prospect"));
      // The kind the document shows (`customer_kind`): a prospect converted meanwhile fails the label.
      else if (options.requireKind) conditions.push(eq(kind, options.requireKind));
      if (guardDate) conditions.push(was === null ? notExists(lastInvoiceDate) : eq(lastInvoiceDate, was));
      if (options.requireActive || convert) conditions.push(eq(archived, false));
      return conditions.join(" AND ");
    });
  }
  tx.add(`party:${party.partyId}`, update.commit());
}

/** What a document moves on its party (see `addDocumentActivity`). */
export interface DocumentActivity {
  documents: number;
  revenueMinor?: number;
  /** The new last invoice date; null removes it (the party's last invoice is gone). */
  invoiceDate?: string | null;
  invoiceDateWas?: string | null;
}

/**
 * Attributes only a prospect carries (spec part 1, section 2.6), and its custom field values
 * (every one names a prospect field: a customer's must name customer fields, section 2.1): a
 * converted prospect drops them.
 */
const PROSPECT_ONLY = ["saleOpportunity", "closingPercentage", "prospectDate", "customFieldValues"] as const;

/** The counts a prospect's conversion moves on the account's and on its owner's counters item. */
export const PROSPECT_CONVERSION_COUNTS: Record<string, number> = { [COUNT_FIELD.prospect]: -1, [COUNT_FIELD.customer]: 1 };

/**
 * Adds "this prospect becomes a customer" to the caller's transaction (an estimate converted into
 * an invoice): same id and number (the kinds share one sequence), kind `customer` (its list keys
 * move with it), the prospect-only fields removed, and the new document's `activity` applied in
 * the same operation, on condition that it is still an unarchived prospect (label `party:<id>`;
 * with `invoiceDateWas` also that the last invoice date is still the one read). Moves the
 * account's counts here; the owner's counts (`PROSPECT_CONVERSION_COUNTS`) are the caller's,
 * since its owner-counters item may already be in the transaction.
 */
export function addProspectConversion(
  tx: TransactionBuilder,
  prospect: { accountId: string; partyId: string; ownerUserId: string },
  activity: DocumentActivity,
  now: string,
): void {
  addDocumentActivity(tx, { accountId: prospect.accountId, partyId: prospect.partyId }, activity, {
    convertProspect: { ownerUserId: prospect.ownerUserId, now },
  });
  tx.add("account counts", tx.entities.accountCounters.update({ accountId: prospect.accountId }).add(PROSPECT_CONVERSION_COUNTS).commit());
}
