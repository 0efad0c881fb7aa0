import { referenceDetail } from "../../core/errors.js";
import { nowIso, laterUpdatedAt } from "../../core/clock.js";
import { randomUUID } from "node:crypto";
import { hasPermission, requirePermission, type Principal } from "../../auth/permissions.js";
import {
  insertContact,
  queryContactPage,
  readContactTree,
  replaceContact,
  searchContacts,
  type ContactLinkRef,
  type ContactScope,
  type ContactWriteResult,
} from "../../db/contacts.js";
import { readAccountCounters, readOwnerCounters, readParties, readParty } from "../../db/parties.js";
import type { ContactItem, PartyItem } from "../../db/service.js";
import { errors, type ValidationDetail } from "../../core/errors.js";
import { RETRY, retrying } from "../../db/retry.js";
import type { IdempotencyCompletion } from "../../core/idempotency.js";
import { listEnvelope, pageOfAll, type ListEnvelope, type PageRequest } from "../../core/pagination.js";
import type { ContactWriteBody } from "../../schemas/contacts.js";
import { canSeeParty } from "./parties.js";
import { nameSortKey } from "../../core/name-keys.js";
import { sameRecord, UPDATED_AT } from "../../core/records.js";

const NOT_A_VISIBLE_RECORD = "is not a visible customer, prospect or supplier.";

/** Contacts: spec part 1, sections 2.5 and 4.3. */

export interface ContactResource {
  id: string;
  object: "contact";
  first_name: string;
  last_name: string | null;
  job_title: string | null;
  phone: string | null;
  cell: string | null;
  fax: string | null;
  email_1: string | null;
  email_2: string | null;
  auto_add_email: boolean;
  account_records: { id: string; object: PartyItem["kind"]; name: string }[];
  created_at: string | null;
  updated_at: string | null;
}

const orNull = (value: string | undefined) => value ?? null;

/** The contact as the caller sees it: only links to records the caller can see. */
export function presentContact(contact: ContactItem, visibleParties: ReadonlyMap<string, PartyItem>): ContactResource {
  return {
    id: contact.contactId,
    object: "contact",
    first_name: contact.firstName,
    last_name: orNull(contact.lastName),
    job_title: orNull(contact.jobTitle),
    phone: orNull(contact.phone),
    cell: orNull(contact.cell),
    fax: orNull(contact.fax),
    email_1: orNull(contact.email1),
    email_2: orNull(contact.email2),
    auto_add_email: contact.autoAddEmail,
    account_records: (contact.links ?? [])
      .map((link) => visibleParties.get(link.id))
      .filter((party): party is PartyItem => Boolean(party))
      .map((party) => ({ id: party.partyId, object: party.kind, name: party.name })),
    created_at: contact.createdAt,
    updated_at: contact.updatedAt,
  };
}

/** A contact is visible with `records.view_all`, or when it links a record the caller owns. */
function canSeeContact(principal: Principal, contact: ContactItem): boolean {
  return (contact.links ?? []).some((l) => l.ownerUserId === principal.userId) || hasPermission(principal, "records.view_all");
}

/**
 * Reads the visible linked records of some contacts (one BatchGetItem, skipping those already
 * `known`). Owners never change, so links to records the caller cannot see are not even read.
 */
async function visibleLinkedParties(
  principal: Principal,
  contacts: readonly ContactItem[],
  known: ReadonlyMap<string, PartyItem>,
): Promise<Map<string, PartyItem>> {
  const ids = contacts.flatMap((c) => (c.links ?? []).filter((l) => canSeeParty(principal, l) && !known.has(l.id)).map((l) => l.id));
  const parties = await readParties(principal.accountId, ids);
  return new Map([...known, ...parties.map((p) => [p.partyId, p] as const)]);
}

async function present(principal: Principal, contacts: readonly ContactItem[], known: ReadonlyMap<string, PartyItem> = new Map()): Promise<ContactResource[]> {
  const parties = await visibleLinkedParties(principal, contacts, known);
  return contacts.map((contact) => presentContact(contact, parties));
}

function searchTextOf(contact: Pick<ContactItem, "firstName" | "lastName" | "email1" | "email2" | "phone" | "cell" | "fax">): string {
  const phones = [contact.phone, contact.cell, contact.fax].filter(Boolean) as string[];
  // The full name too, so "Ann Lee" finds Ann Lee.
  const fullName = contact.lastName ? `${contact.firstName} ${contact.lastName}` : undefined;
  return [contact.firstName, contact.lastName, fullName, contact.email1, contact.email2, ...phones, ...phones.map((p) => p.replace(/\D/g, ""))]
    .filter(Boolean)
    .join(" | ")
    .toLowerCase();
}

const nameKeyOf = (firstName: string, lastName: string | undefined) => nameSortKey(`${firstName} ${lastName ?? ""}`.trim());

/**
 * Resolves `account_record_ids` into links: unique ids of visible records of the account
 * (else 422 naming `account_record_ids[i]`).
 */
async function resolveLinks(principal: Principal, ids: readonly string[]): Promise<{ links: ContactLinkRef[]; parties: Map<string, PartyItem> }> {
  const details: ValidationDetail[] = [];
  const seen = new Set<string>();
  ids.forEach((id, index) => {
    if (seen.has(id)) details.push({ param: `account_record_ids[${index}]`, code: "duplicate", message: "appears more than once." });
    seen.add(id);
  });
  if (details.length > 0) throw errors.validationFailed(details);
  const found = new Map((await readParties(principal.accountId, ids)).map((p) => [p.partyId, p]));
  const links: ContactLinkRef[] = [];
  ids.forEach((id, index) => {
    const party = found.get(id);
    if (!party || !canSeeParty(principal, party)) {
      details.push(referenceDetail(`account_record_ids[${index}]`, NOT_A_VISIBLE_RECORD));
    } else {
      links.push({ id, kind: party.kind, ownerUserId: party.ownerUserId });
    }
  });
  if (details.length > 0) throw errors.validationFailed(details);
  return { links, parties: found };
}

const FIELD_MAP = {
  first_name: "firstName",
  last_name: "lastName",
  job_title: "jobTitle",
  phone: "phone",
  cell: "cell",
  fax: "fax",
  email_1: "email1",
  email_2: "email2",
} as const;

function applyFields(base: ContactItem, input: ContactWriteBody): ContactItem {
  const next: ContactItem = { ...base };
  for (const [field, attribute] of Object.entries(FIELD_MAP) as [keyof typeof FIELD_MAP, (typeof FIELD_MAP)[keyof typeof FIELD_MAP]][]) {
    const value = input[field];
    if (value === undefined) continue;
    if (value === null || value === "") {
      if (attribute !== "firstName") delete next[attribute];
    } else next[attribute] = value;
  }
  if (input.auto_add_email !== undefined) next.autoAddEmail = input.auto_add_email;
  next.nameKey = nameKeyOf(next.firstName, next.lastName);
  next.searchText = searchTextOf(next);
  return next;
}

function linkFailure(result: Extract<ContactWriteResult, { ok: false }>, ids: readonly string[]) {
  return errors.validationFailed(
    result.missingParties.map((id) => referenceDetail(`account_record_ids[${Math.max(0, ids.indexOf(id))}]`, NOT_A_VISIBLE_RECORD)),
  );
}

export async function createContact(
  principal: Principal,
  input: ContactWriteBody & { first_name: string },
  completion: IdempotencyCompletion | undefined,
): Promise<ContactResource> {
  const ids = input.account_record_ids ?? [];
  const { links, parties } = await resolveLinks(principal, ids);
  const now = nowIso();
  const contact = applyFields(
    {
      accountId: principal.accountId,
      contactId: randomUUID(),
      firstName: input.first_name,
      autoAddEmail: false,
      nameKey: "",
      searchText: "",
      links,
      createdAt: now,
      updatedAt: now,
    },
    input,
  );
  const [resource] = await present(principal, [contact], parties);
  const result = await insertContact(contact, { completion, body: resource });
  if (!result.ok) {
    if (result.missingParties.length > 0) throw linkFailure(result, ids);
    throw errors.internal(new Error("contact insert conflicted"));
  }
  return resource!;
}

async function visibleContact(principal: Principal, contactId: string): Promise<ContactItem> {
  const { contact } = await readContactTree(principal.accountId, contactId);
  if (!contact || !canSeeContact(principal, contact)) throw errors.resourceMissing("contact", contactId);
  return contact;
}

export async function getContact(principal: Principal, contactId: string): Promise<ContactResource> {
  const [resource] = await present(principal, [await visibleContact(principal, contactId)]);
  return resource!;
}

/**
 * The links after a caller who sees only some of them replaces those (`requested`, in order):
 * each hidden link keeps its place, the visible places take the requested links in turn, and
 * what is left is appended. The same visible links sent back in their order give the stored list.
 */
function mergeVisibleLinks<L>(stored: readonly L[], requested: readonly L[], visible: (link: L) => boolean): L[] {
  const queue = [...requested];
  const merged: L[] = [];
  for (const link of stored) {
    if (!visible(link)) merged.push(link);
    else if (queue.length > 0) merged.push(queue.shift()!);
  }
  return [...merged, ...queue];
}

/**
 * Updates a contact. `account_record_ids` omitted keeps the links; an array replaces the
 * links the caller can see (links to records the caller cannot see are kept); [] removes them.
 */
export async function updateContact(
  principal: Principal,
  contactId: string,
  input: ContactWriteBody,
  completion: IdempotencyCompletion | undefined,
): Promise<ContactResource> {
  const ids = input.account_record_ids;
  const requested = ids === undefined ? undefined : await resolveLinks(principal, ids);
  return retrying(
    "update contact",
    async () => {
      const previous = await visibleContact(principal, contactId);
      let next = applyFields(previous, input);
      if (requested !== undefined) next = { ...next, links: mergeVisibleLinks(previous.links ?? [], requested.links, (l) => canSeeParty(principal, l)) };
      if (sameRecord(previous, next, UPDATED_AT)) return (await present(principal, [previous], requested?.parties))[0]!; // sent back as read: nothing to write
      next.updatedAt = laterUpdatedAt(previous.updatedAt);
      const [resource] = await present(principal, [next], requested?.parties);
      const result = await replaceContact(previous, next, { completion, body: resource });
      if (result.ok) return resource!;
      if (result.missingParties.length > 0) throw linkFailure(result, ids ?? []);
      return RETRY;
    },
    undefined,
    [`contact:${principal.accountId}:${contactId}`],
  );
}

/**
 * Lists contacts (requires the account-management permission). Users with `records.view_all`
 * see every contact; others see contacts linked to a record they own. `account_record_id`
 * narrows to one visible record's contacts; `q` searches names, emails and phone numbers.
 */
export async function listContacts(
  principal: Principal,
  url: string,
  page: PageRequest,
  filters: { q?: string; accountRecordId?: string },
): Promise<ListEnvelope<ContactResource>> {
  requirePermission(principal, "accounts.manage");
  let scope: ContactScope;
  let total: () => Promise<number>;
  if (filters.accountRecordId !== undefined) {
    const id = filters.accountRecordId.toLowerCase();
    const party = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(id) ? await readParty(principal.accountId, id) : undefined;
    if (!party || !canSeeParty(principal, party)) {
      throw errors.invalidQueryParameter("account_record_id", "account_record_id must name a visible customer, prospect or supplier.");
    }
    scope = { kind: "party", accountId: principal.accountId, partyId: id };
    total = async () => party.contactCount;
  } else if (hasPermission(principal, "records.view_all")) {
    scope = { kind: "all", accountId: principal.accountId };
    total = async () => (await readAccountCounters(principal.accountId, true))?.contactCount ?? 0;
  } else {
    scope = { kind: "owner", accountId: principal.accountId, ownerUserId: principal.userId };
    total = async () => (await readOwnerCounters(principal.accountId, principal.userId))?.contactCount ?? 0;
  }
  const needle = filters.q?.trim().toLowerCase();
  if (needle) {
    const matches = await searchContacts(scope, needle);
    const start = (page.page - 1) * page.limit;
    const shown = await present(principal, matches.slice(start, start + page.limit));
    return { ...pageOfAll(url, page, matches), data: shown };
  }
  const offset = (page.page - 1) * page.limit;
  const [count, contacts] = await Promise.all([total(), queryContactPage(scope, offset, page.limit)]);
  const totalRecords = contacts.length > 0 ? Math.max(count, offset + contacts.length) : count;
  return listEnvelope(url, page, totalRecords, await present(principal, contacts));
}
