import { batchGetAll, inOrderOf } from "./batch-get.js";
import { readToOffset } from "./offset-page.js";
import { db, type ContactItem, type PartyItem } from "./service.js";
import { writeTransaction, type Cancellation, type TransactionBuilder } from "./transactions.js";
import type { IdempotencyCompletion } from "../core/idempotency.js";
import { laterUpdatedAt } from "../core/clock.js";

type Outcome = { completion: IdempotencyCompletion | undefined; body: unknown };
export type ContactLinkRef = NonNullable<ContactItem["links"]>[number];

/** A contact with the owners it is visible to, in ONE Query of its partition. */
export async function readContactTree(accountId: string, contactId: string): Promise<{ contact: ContactItem | undefined; accessOwners: string[] }> {
  const { data } = await db().collections.contactTree({ accountId, contactId }).go({ pages: "all", consistent: true });
  return { contact: data.contact[0], accessOwners: data.contactAccess.map((a) => a.ownerUserId) };
}

/** Contacts by id, ONE BatchGetItem per 100, in the order asked (missing ones are absent). */
export async function readContacts(accountId: string, contactIds: readonly string[]): Promise<ContactItem[]> {
  const keys = contactIds.map((contactId) => ({ accountId, contactId }));
  const found = await batchGetAll("read contacts", keys, (chunk) => db().entities.contact.get(chunk).go({ consistent: true }));
  return inOrderOf(contactIds, found, (contact) => contact.contactId);
}

/** Which list a caller reads: every contact, the contacts of one owner, or of one record. */
export type ContactScope =
  | { kind: "all"; accountId: string }
  | { kind: "owner"; accountId: string; ownerUserId: string }
  | { kind: "party"; accountId: string; partyId: string };

async function pageOfIds(scope: Exclude<ContactScope, { kind: "all" }>, offset: number, limit: number): Promise<string[]> {
  const entries = await readToOffset<{ contactId: string }>(offset, limit, (cursor, want) =>
    scope.kind === "owner"
      ? db().entities.contactAccess.query.byOwner({ accountId: scope.accountId, ownerUserId: scope.ownerUserId }).go({ cursor, limit: want })
      : db().entities.contactLink.query.byParty({ accountId: scope.accountId, partyId: scope.partyId }).go({ cursor, limit: want }),
  );
  return entries.map((entry) => entry.contactId);
}

/**
 * Contacts at positions [offset, offset + limit) of a scope, in name order: one index Query
 * that stops at the page's end (plus, for owner and record scopes, one BatchGetItem of the
 * page's contacts).
 */
export async function queryContactPage(scope: ContactScope, offset: number, limit: number): Promise<ContactItem[]> {
  if (scope.kind === "all") {
    return readToOffset<ContactItem>(offset, limit, (cursor, want) =>
      db().entities.contact.query.byName({ accountId: scope.accountId }).go({ cursor, limit: want }),
    );
  }
  return readContacts(scope.accountId, await pageOfIds(scope, offset, limit));
}

/** Every contact of a scope whose search text contains `needle` (reads the whole scope). */
export async function searchContacts(scope: ContactScope, needle: string): Promise<ContactItem[]> {
  if (scope.kind === "all") {
    const { data } = await db()
      .entities.contact.query.byName({ accountId: scope.accountId })
      .where(({ searchText }, { contains }) => contains(searchText, needle))
      .go({ pages: "all" });
    return data;
  }
  const ids = await pageOfIds(scope, 0, Number.MAX_SAFE_INTEGER);
  const matches: ContactItem[] = [];
  for (let i = 0; i < ids.length; i += 100) {
    matches.push(...(await readContacts(scope.accountId, ids.slice(i, i + 100))).filter((c) => c.searchText.includes(needle)));
  }
  return matches;
}

/** The change of a contact's links: what a write adds and removes, and the owner sets. */
export interface LinkChange {
  added: ContactLinkRef[];
  removed: ContactLinkRef[];
  ownersBefore: Set<string>;
  ownersAfter: Set<string>;
}

export function linkChange(before: readonly ContactLinkRef[], after: readonly ContactLinkRef[]): LinkChange {
  const beforeIds = new Set(before.map((l) => l.id));
  const afterIds = new Set(after.map((l) => l.id));
  return {
    added: after.filter((l) => !beforeIds.has(l.id)),
    removed: before.filter((l) => !afterIds.has(l.id)),
    ownersBefore: new Set(before.map((l) => l.ownerUserId)),
    ownersAfter: new Set(after.map((l) => l.ownerUserId)),
  };
}

/** Count changes that several contact writes in one transaction must apply as ONE item each. */
interface CountDeltas {
  parties: Map<string, number>;
  owners: Map<string, number>;
}

const newDeltas = (): CountDeltas => ({ parties: new Map(), owners: new Map() });
const bump = (map: Map<string, number>, key: string, by: number) => map.set(key, (map.get(key) ?? 0) + by);

/**
 * Adds the link and access items that move with a contact write, and accumulates the count
 * changes they imply into `deltas`; `nameChanged` re-sorts the index entries.
 */
function addLinkItems(tx: TransactionBuilder, contact: ContactItem, change: LinkChange, nameChanged: boolean, deltas: CountDeltas): void {
  const { accountId, contactId, nameKey } = contact;
  const e = tx.entities;
  for (const link of change.added) {
    tx.add("contact link", e.contactLink.create({ accountId, contactId, partyId: link.id, contactNameKey: nameKey }).commit());
    bump(deltas.parties, link.id, 1);
  }
  for (const link of change.removed) {
    tx.add("contact link", e.contactLink.delete({ accountId, contactId, partyId: link.id }).commit());
    bump(deltas.parties, link.id, -1);
  }
  if (nameChanged) {
    // Links that stay (the contact passed in carries its links from before this write).
    const kept = (contact.links ?? []).filter((l) => !change.removed.some((r) => r.id === l.id));
    for (const link of kept) {
      tx.add("contact link", e.contactLink.patch({ accountId, contactId, partyId: link.id }).set({ contactNameKey: nameKey }).commit());
    }
  }
  for (const owner of change.ownersAfter) {
    if (!change.ownersBefore.has(owner)) {
      tx.add("contact access", e.contactAccess.create({ accountId, contactId, ownerUserId: owner, contactNameKey: nameKey }).commit());
      bump(deltas.owners, owner, 1);
    } else if (nameChanged) {
      tx.add("contact access", e.contactAccess.patch({ accountId, contactId, ownerUserId: owner }).set({ contactNameKey: nameKey }).commit());
    }
  }
  for (const owner of change.ownersBefore) {
    if (change.ownersAfter.has(owner)) continue;
    tx.add("contact access", e.contactAccess.delete({ accountId, contactId, ownerUserId: owner }).commit());
    bump(deltas.owners, owner, -1);
  }
}

/** The label of a linked record's count item: its failure means the record is gone. */
const PARTY_LABEL = "linked record:";

/**
 * One item per counted record and owner. A record that gains links must still exist (its item
 * is labelled with its id, so a failure names it); one that loses links may already be gone.
 */
function addCounts(
  tx: TransactionBuilder,
  accountId: string,
  deltas: CountDeltas,
  /** Other counts to move on the same owner items (one item, one operation). */
  ownerExtras: ReadonlyMap<string, Record<string, number>> = new Map(),
): void {
  const e = tx.entities;
  for (const [partyId, delta] of deltas.parties) {
    if (delta === 0) continue;
    if (delta > 0) {
      tx.add(`${PARTY_LABEL}${partyId}`, e.party.patch({ accountId, partyId }).add({ contactCount: delta }).commit());
    } else {
      tx.add(
        "party count",
        e.party
          .update({ accountId, partyId })
          .add({ contactCount: delta })
          .where(({ partyId: id }, { exists }) => exists(id))
          .commit(),
      );
    }
  }
  for (const userId of new Set([...deltas.owners.keys(), ...ownerExtras.keys()])) {
    const adds: Record<string, number> = { ...ownerExtras.get(userId) };
    const delta = deltas.owners.get(userId) ?? 0;
    if (delta !== 0) adds.contactCount = delta;
    if (Object.keys(adds).length > 0) tx.add("owner counts", e.ownerCounters.update({ accountId, userId }).add(adds).commit());
  }
}

export type ContactWriteResult = { ok: true } | { ok: false; conflict: boolean; missingParties: string[] };

function interpret(cancellation: Cancellation | null): ContactWriteResult {
  if (!cancellation) return { ok: true };
  const missingParties = cancellation.failedUnder(PARTY_LABEL).map((r) => r.label.slice(PARTY_LABEL.length));
  return { ok: false, conflict: missingParties.length === 0, missingParties };
}

/** Inserts a contact with its links, access entries and counts in ONE transaction. */
export async function insertContact(contact: ContactItem, outcome: Outcome): Promise<ContactWriteResult> {
  const change = linkChange([], contact.links ?? []);
  const cancellation = await writeTransaction((tx) => {
    const deltas = newDeltas();
    tx.add("contact", tx.entities.contact.create(contact).commit());
    tx.add("account counts", tx.entities.accountCounters.update({ accountId: contact.accountId }).add({ contactCount: 1 }).commit());
    addLinkItems(tx, contact, change, false, deltas);
    addCounts(tx, contact.accountId, deltas);
  }, outcome);
  return interpret(cancellation);
}

/**
 * Writes a contact's new state over `previous` (condition: unchanged since read), moving its
 * links, access entries and counts in the same transaction.
 */
export async function replaceContact(previous: ContactItem, next: ContactItem, outcome: Outcome): Promise<ContactWriteResult> {
  const change = linkChange(previous.links ?? [], next.links ?? []);
  const nameChanged = previous.nameKey !== next.nameKey;
  const cancellation = await writeTransaction((tx) => {
    const { accountId, contactId, createdAt: _created, ...fields } = next;
    const removed = (["lastName", "jobTitle", "phone", "cell", "fax", "email1", "email2"] as const).filter((f) => next[f] === undefined);
    let update = tx.entities.contact.patch({ accountId, contactId }).set({ ...fields, links: next.links ?? [] } as never);
    if (removed.length > 0) update = update.remove(removed as never);
    const deltas = newDeltas();
    tx.add("contact", update.where(({ updatedAt }, { eq }) => eq(updatedAt, previous.updatedAt)).commit());
    addLinkItems(tx, { ...next, links: previous.links }, change, nameChanged, deltas);
    addCounts(tx, accountId, deltas);
  }, outcome);
  return interpret(cancellation);
}

/** The ids of the contacts linked to a record (all of them). */
export async function contactIdsOfParty(accountId: string, partyId: string): Promise<string[]> {
  return pageOfIds({ kind: "party", accountId, partyId }, 0, Number.MAX_SAFE_INTEGER);
}

/** The contacts linked to a record (one index Query and one BatchGetItem per hundred). */
export async function contactsOfParty(accountId: string, partyId: string): Promise<ContactItem[]> {
  const ids = await contactIdsOfParty(accountId, partyId);
  const contacts: ContactItem[] = [];
  for (let i = 0; i < ids.length; i += 100) contacts.push(...(await readContacts(accountId, ids.slice(i, i + 100))));
  return contacts;
}

/**
 * Adds the items that take a record out of these contacts (each conditioned on the contact
 * being unchanged), with the counts moved once per counted item. With `deletedParty` the same
 * transaction deletes the record: its own `contactCount` is left alone, and its owner's item
 * also takes `deletedParty.ownerCounts` (one operation per item).
 */
export function addUnlinks(
  tx: TransactionBuilder,
  party: Pick<PartyItem, "accountId" | "partyId" | "ownerUserId">,
  contacts: readonly ContactItem[],
  deletedParty?: { ownerCounts: Record<string, number> },
): void {
  const deltas = newDeltas();
  for (const contact of contacts) {
    const after = (contact.links ?? []).filter((l) => l.id !== party.partyId);
    tx.add(
      "linked contact",
      tx.entities.contact
        .patch({ accountId: contact.accountId, contactId: contact.contactId })
        // Its account_records change: a write of the contact (updated_at moves, as sync clients compare it).
        .set({ links: after, updatedAt: laterUpdatedAt(contact.updatedAt) })
        .where(({ updatedAt }, { eq }) => eq(updatedAt, contact.updatedAt))
        .commit(),
    );
    addLinkItems(tx, contact, linkChange(contact.links ?? [], after), false, deltas);
  }
  const extras = new Map<string, Record<string, number>>();
  if (deletedParty) {
    deltas.parties.delete(party.partyId);
    extras.set(party.ownerUserId, deletedParty.ownerCounts);
  }
  addCounts(tx, party.accountId, deltas, extras);
}

/** How many linked contacts a record's delete transaction unlinks itself (the rest go first). */
export const UNLINK_IN_DELETE = 20;

/**
 * For a record with more linked contacts than one transaction holds: unlinks all but
 * `UNLINK_IN_DELETE` of them, a chunk per transaction (each contact's change is atomic).
 * Returns false when a contact changed meanwhile (the caller reads again and retries).
 */
export async function unlinkExcessContacts(party: PartyItem): Promise<boolean> {
  const contacts = await contactsOfParty(party.accountId, party.partyId);
  const excess = contacts.slice(UNLINK_IN_DELETE);
  const CONTACTS_PER_TRANSACTION = 25;
  for (let i = 0; i < excess.length; i += CONTACTS_PER_TRANSACTION) {
    const failed = await writeTransaction((tx) => addUnlinks(tx, party, excess.slice(i, i + CONTACTS_PER_TRANSACTION)));
    if (failed) return false;
  }
  return true;
}
