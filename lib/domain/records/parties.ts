import { seesOwnedBy } from "../common/ownership.js";
import { collectFields } from "./record-fields.js";
import { nowIso, laterUpdatedAt } from "../../core/clock.js";
import { randomUUID } from "node:crypto";
import { moneyFromMinor, rate } from "../common/money.js";
import { hasPermission, type Principal } from "../../auth/permissions.js";
import {
  COUNT_FIELD,
  insertParty,
  queryPartyPage,
  readAccountCounters,
  readOwnerCounters,
  readParty,
  removeParty,
  replaceParty,
  searchPartyPage,
  type PartyScope,
} from "../../db/parties.js";
import type { Reference } from "../../db/references.js";
import { RETRY, retrying } from "../../db/retry.js";
import { UNLINK_IN_DELETE, contactsOfParty, unlinkExcessContacts } from "../../db/contacts.js";
import type { PartyItem } from "../../db/service.js";
import { showEstimatesAsCustomers } from "../../db/documents.js";
import { ENTITY_ATTRIBUTE } from "../../core/entity-attribute.js";
import { errors } from "../../core/errors.js";
import type { IdempotencyCompletion } from "../../core/idempotency.js";
import { listEnvelope, type ListEnvelope, type PageRequest } from "../../core/pagination.js";
import type { PartyKind, PartyWriteBody } from "../../schemas/parties.js";
import { normalizeCustomFieldValues, presentCustomFieldValues, type StoredCustomFieldValue } from "../common/custom-field-values.js";
import { nameSortKey } from "../../core/name-keys.js";
import { replaceOutcome } from "./record-writes.js";
import { sameRecord, UPDATED_AT } from "../../core/records.js";

/** Customers, prospects and suppliers: spec part 1, sections 2.6, 3 and 4.4. */

export type PartyResource = Record<string, unknown> & { id: string; object: PartyKind; name: string };

const orNull = <T>(value: T | undefined): T | null => (value === undefined ? null : value);

/** The record as the API shows it: the fields of its kind only, in the spec's order. */
export function presentParty(party: PartyItem): PartyResource {
  const kind = party.kind;
  const out: Record<string, unknown> = {
    id: party.partyId,
    object: kind,
    customer_number: party.number,
    name: party.name,
    office_email: orNull(party.officeEmail),
    office_phone: orNull(party.officePhone),
    office_fax: orNull(party.officeFax),
    url: orNull(party.url),
    billing_address_1: orNull(party.billingAddress1),
    billing_address_2: orNull(party.billingAddress2),
    billing_city: orNull(party.billingCity),
    billing_region: orNull(party.billingRegion),
    billing_postal_code: orNull(party.billingPostalCode),
    billing_country: orNull(party.billingCountry),
    shipping_address_1: orNull(party.shippingAddress1),
    shipping_address_2: orNull(party.shippingAddress2),
    shipping_city: orNull(party.shippingCity),
    shipping_region: orNull(party.shippingRegion),
    shipping_postal_code: orNull(party.shippingPostalCode),
    shipping_country: orNull(party.shippingCountry),
  };
  if (kind !== "supplier") out.vat_number = orNull(party.vatNumber);
  out.document_count = party.documentCount;
  if (kind === "customer") {
    out.last_invoice_date = orNull(party.lastInvoiceDate);
    out.lifetime_revenue_total = moneyFromMinor(party.lifetimeRevenueMinor);
  }
  out.archived = party.archived;
  if (kind !== "supplier") out.pricing_tier_id = orNull(party.pricingTierId);
  out.owner_user_id = party.ownerUserId;
  out.custom_field_values = presentCustomFieldValues(party.customFieldValues);
  out.created_at = party.createdAt;
  out.updated_at = party.updatedAt;
  if (kind === "prospect") {
    out.sale_opportunity = orNull(party.saleOpportunity);
    out.closing_percentage = party.closingPercentage ?? 0;
    out.prospect_date = orNull(party.prospectDate);
  }
  return out as PartyResource;
}

/** Whether the caller may see a record: its own, else every record with `records.view_all`. */
export function canSeeParty(principal: Principal, party: Pick<PartyItem, "ownerUserId">): boolean {
  return seesOwnedBy(principal, party.ownerUserId);
}

/** API field -> stored attribute, for every writable field that is stored as given. */
const FIELD_MAP: Record<string, keyof PartyItem> = {
  name: "name",
  office_email: "officeEmail",
  office_phone: "officePhone",
  office_fax: "officeFax",
  url: "url",
  billing_address_1: "billingAddress1",
  billing_address_2: "billingAddress2",
  billing_city: "billingCity",
  billing_region: "billingRegion",
  billing_postal_code: "billingPostalCode",
  billing_country: "billingCountry",
  shipping_address_1: "shippingAddress1",
  shipping_address_2: "shippingAddress2",
  shipping_city: "shippingCity",
  shipping_region: "shippingRegion",
  shipping_postal_code: "shippingPostalCode",
  shipping_country: "shippingCountry",
  billing_region_id: "billingRegionId",
  billing_country_id: "billingCountryId",
  shipping_region_id: "shippingRegionId",
  shipping_country_id: "shippingCountryId",
  vat_number: "vatNumber",
  customer_label_id: "customerLabelId",
  pricing_tier_id: "pricingTierId",
  sale_opportunity: "saleOpportunity",
  closing_percentage: "closingPercentage",
  prospect_date: "prospectDate",
};

interface FieldChanges {
  set: Partial<PartyItem>;
  remove: (keyof PartyItem)[];
  /** Account-owned references the write must prove (checked in its transaction). */
  references: Reference[];
}

/**
 * Turns a validated body into attribute changes; null or "" clears a field. A custom field value
 * the record holds already (`stored`) may be sent back as read.
 */
function fieldChanges(kind: PartyKind, body: PartyWriteBody, stored: readonly StoredCustomFieldValue[] = []): FieldChanges {
  // A prospect always has a closing percentage (0 unless set): null sets it back to the 0 it reads as.
  const input = body.closing_percentage === null ? { ...body, closing_percentage: 0 } : body;
  const set: Record<string, unknown> = {};
  const remove: (keyof PartyItem)[] = [];
  collectFields(input, Object.entries(FIELD_MAP), set, remove);
  if (typeof set.name === "string") set.nameKey = nameSortKey(set.name);
  if ("officeEmail" in set) set.emailKey = String(set.officeEmail).toLowerCase();
  if (remove.includes("officeEmail")) remove.push("emailKey");
  collectFields(
    input,
    [
      ["tax_rate1", "taxRate1"],
      ["tax_rate2", "taxRate2"],
    ] as const,
    set,
    remove,
    rate,
  );
  const references: Reference[] = [];
  if (input.custom_field_values !== undefined) {
    const { values, checkedIds, positions } = normalizeCustomFieldValues(input.custom_field_values, stored);
    set.customFieldValues = values;
    for (const [i, id] of checkedIds.entries())
      references.push({ param: `custom_field_values[${positions[i]}].custom_field_id`, kind: "custom_field", id, recordKind: kind });
  }
  if (typeof set.customerLabelId === "string") references.push({ param: "customer_label_id", kind: "customer_label", id: set.customerLabelId });
  if (typeof set.pricingTierId === "string") references.push({ param: "pricing_tier_id", kind: "pricing_tier", id: set.pricingTierId });
  return { set: set as Partial<PartyItem>, remove, references };
}

/** Creates a record numbered by its kind's sequence, owned by the key's user (section 4.4). */
export async function createParty(
  principal: Principal,
  kind: PartyKind,
  input: PartyWriteBody,
  completion: IdempotencyCompletion | undefined,
): Promise<PartyResource> {
  const changes = fieldChanges(kind, input);
  const now = nowIso();
  const party = {
    accountId: principal.accountId,
    partyId: randomUUID(),
    kind,
    ownerUserId: principal.userId,
    name: "",
    nameKey: "",
    archived: false,
    documentCount: 0,
    lifetimeRevenueMinor: 0,
    contactCount: 0,
    createdAt: now,
    updatedAt: now,
    ...changes.set,
  } as Omit<PartyItem, "number">;
  if (kind === "prospect" && party.closingPercentage === undefined) party.closingPercentage = 0;
  const present = (number: number) => presentParty({ ...party, number } as PartyItem);
  const { number, result } = await insertParty(party, changes.references, (number) => ({ completion, body: present(number) }));
  if (!result.ok) throw errors.validationFailed(result.references);
  return present(number);
}

async function visibleParty(principal: Principal, kind: PartyKind, partyId: string): Promise<PartyItem> {
  const party = await readParty(principal.accountId, partyId);
  if (!party || party.kind !== kind || !canSeeParty(principal, party)) throw errors.resourceMissing(kind, partyId);
  return party;
}

export async function getParty(principal: Principal, kind: PartyKind, partyId: string): Promise<PartyResource> {
  return presentParty(await visibleParty(principal, kind, partyId));
}

/** Updates the fields sent (PATCH and PUT alike); omitted writable fields are kept. */
export async function updateParty(
  principal: Principal,
  kind: PartyKind,
  partyId: string,
  input: PartyWriteBody,
  completion: IdempotencyCompletion | undefined,
): Promise<PartyResource> {
  fieldChanges(kind, input); // a malformed body is refused before any read
  return retrying(
    `update ${kind}`,
    async () => {
      const previous = await visibleParty(principal, kind, partyId);
      const changes = fieldChanges(kind, input, previous.customFieldValues);
      const updatedAt = laterUpdatedAt(previous.updatedAt);
      const next = { ...previous, ...changes.set, updatedAt } as PartyItem;
      for (const attribute of changes.remove) delete (next as Record<string, unknown>)[attribute];
      if (sameRecord(previous, next, UPDATED_AT)) return presentParty(previous); // sent back as read: nothing to write
      const resource = presentParty(next);
      const result = await replaceParty(previous, { set: { ...changes.set, updatedAt }, remove: changes.remove }, changes.references, {
        completion,
        body: resource,
      });
      return replaceOutcome(result, resource);
    },
    undefined,
    [`party:${principal.accountId}:${partyId}`],
  );
}

const documentsExist = (count: number) =>
  errors.validationFailed([
    { param: "document_count", code: "has_documents", message: `the record has ${count} associated document(s) and cannot be deleted.` },
  ]);

/** Deletes a record that has no associated documents (else 422 on `document_count`). */
export async function deleteParty(
  principal: Principal,
  kind: PartyKind,
  partyId: string,
  completion: IdempotencyCompletion | undefined,
): Promise<{ id: string; object: PartyKind; deleted: true }> {
  const resource = { id: partyId, object: kind, deleted: true as const };
  return retrying(`delete ${kind}`, async () => {
    const previous = await visibleParty(principal, kind, partyId);
    if (previous.documentCount > 0) throw documentsExist(previous.documentCount);
    if (previous.contactCount > UNLINK_IN_DELETE) {
      // More linked contacts than one transaction holds: unlink the excess first.
      await unlinkExcessContacts(previous);
      return RETRY;
    }
    const linked = previous.contactCount > 0 ? await contactsOfParty(principal.accountId, partyId) : [];
    const result = await removeParty(previous, linked, { completion, body: resource });
    return result.ok ? resource : RETRY;
  });
}

/**
 * Lists a kind ordered by name within the caller's visibility. Without `q` a page costs one
 * counter read, the name-index entries before it (deep pages) and one index Query for the
 * page; `q` matches over the scope's name-index entries and reads the page's records by key.
 */
export async function listParties(
  principal: Principal,
  kind: PartyKind,
  url: string,
  page: PageRequest,
  q: string | undefined,
): Promise<ListEnvelope<PartyResource>> {
  const viewAll = hasPermission(principal, "records.view_all");
  const scope: PartyScope = viewAll ? { accountId: principal.accountId, kind } : { accountId: principal.accountId, kind, ownerUserId: principal.userId };
  const needle = q?.trim().toLowerCase();
  if (needle) {
    const number = /^\d{1,15}$/.test(needle) ? Number(needle) : undefined;
    const { total, items } = await searchPartyPage(scope, needle, number, (page.page - 1) * page.limit, page.limit);
    return listEnvelope(url, page, total, items.map(presentParty));
  }
  const offset = (page.page - 1) * page.limit;
  const [counters, items] = await Promise.all([
    viewAll ? readAccountCounters(principal.accountId, true) : readOwnerCounters(principal.accountId, principal.userId),
    queryPartyPage(scope, offset, page.limit),
  ]);
  // Counts are written with the records; a page that shows more than the count proves a lag.
  const counted = counters?.[COUNT_FIELD[kind]] ?? 0;
  const total = items.length > 0 ? Math.max(counted, offset + items.length) : counted;
  return listEnvelope(url, page, total, items.map(presentParty));
}

/**
 * The prospect a stream record shows becoming a customer (an estimate's conversion: same record,
 * kind `prospect` -> `customer`), if it shows one.
 */
export function prospectConversionOf(
  image: Record<string, unknown> | undefined,
  oldImage: Record<string, unknown> | undefined,
): { accountId: string; partyId: string } | undefined {
  if (image?.[ENTITY_ATTRIBUTE] !== "party" || oldImage?.kind !== "prospect" || image.kind !== "customer") return undefined;
  return { accountId: String(image.accountId), partyId: String(image.partyId) };
}

/**
 * After prospects became customers (the stream processor), their estimates show
 * `customer_kind: "customer"`: the one converted was written so by its conversion, the others
 * follow here. Idempotent. Returns how many estimates changed.
 */
export async function followProspectConversions(conversions: readonly { accountId: string; partyId: string }[]): Promise<number> {
  const counts = await Promise.all(conversions.map(({ accountId, partyId }) => showEstimatesAsCustomers(accountId, partyId)));
  return counts.reduce((sum, count) => sum + count, 0);
}
