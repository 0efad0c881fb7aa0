import type { DocumentItem, PartyItem } from "../../db/service.js";

/**
 * The `party` object of document details (spec part 2, sections 2.1, 2.4 and 2.5): the
 * counterparty's account number, phone, email and its billing and shipping address as ordered,
 * non-empty lines.
 */
export interface PartyDetails {
  account_number: string | null;
  phone: string | null;
  email: string | null;
  billing_address: string[];
  shipping_address: string[];
}

const lines = (...parts: (string | undefined)[]): string[] => parts.map((part) => part?.trim() ?? "").filter((part) => part !== "");

export function partyDetailsOf(party: PartyItem): PartyDetails {
  const cityLine = (city?: string, region?: string, postal?: string) => [city, region, postal].filter((p) => p?.trim()).join(", ") || undefined;
  return {
    account_number: String(party.number),
    phone: party.officePhone ?? null,
    email: party.officeEmail ?? null,
    billing_address: lines(
      party.name,
      party.billingAddress1,
      party.billingAddress2,
      cityLine(party.billingCity, party.billingRegion, party.billingPostalCode),
      party.billingCountry,
    ),
    shipping_address: lines(
      party.name,
      party.shippingAddress1,
      party.shippingAddress2,
      cityLine(party.shippingCity, party.shippingRegion, party.shippingPostalCode),
      party.shippingCountry,
    ),
  };
}

/**
 * The party name a document stores (spec part 2, section 2.5 snapshot rule: identity is a stored
 * value; section 2.1: the supplier name is stored with the order): the name when the document was
 * made for this party, kept by every later write; the party's current name for a new document
 * or a change of party.
 */
export const storedPartyName = (header: Pick<DocumentItem, "partyId" | "partyName">, party: Pick<PartyItem, "partyId" | "name">): string =>
  header.partyId === party.partyId && header.partyName !== undefined ? header.partyName : party.name;

/** A header's stored party details (or empty ones), in the documented key order (a stored map keeps none). */
export function partyOf(header: DocumentItem): PartyDetails {
  const stored = (header.partyDetails ?? {}) as Partial<PartyDetails>;
  return {
    account_number: stored.account_number ?? null,
    phone: stored.phone ?? null,
    email: stored.email ?? null,
    billing_address: stored.billing_address ?? [],
    shipping_address: stored.shipping_address ?? [],
  };
}

/**
 * The `party` of a customer's document (a sales order, an invoice): the customer's contact and
 * billing lines, and the document's own stored shipping address when it has one (spec 2.5:
 * "stored invoice address when present, else the customer's"), else the customer's.
 */
export function customerPartyOf(header: DocumentItem): PartyDetails {
  const party = partyOf(header);
  const stored = header.shippingAddress
    ?.split(/\r?\n/)
    .map((part) => part.trim())
    .filter((part) => part !== "");
  return { ...party, shipping_address: stored && stored.length > 0 ? stored : party.shipping_address };
}
