import { TIMESTAMP_ATTRIBUTES } from "./timestamps.js";
import { Entity } from "electrodb";

/**
 * A customer, prospect or supplier (spec part 1, section 2.6): one shape, `kind` says which.
 * `gsi1` lists a kind ordered by name for users who see every record; `gsi2` lists one
 * owner's records of a kind ordered by name (record visibility). The owner never changes; the
 * kind changes only when a prospect becomes a customer (`addProspectConversion`).
 * `documentCount`, `lifetimeRevenueMinor` (ten-thousandths, exact integer) and
 * `lastInvoiceDate` are maintained by the document write path (`documentActivityOp`).
 */
export const partyEntity = () =>
  new Entity({
    model: { entity: "party", version: "1", service: "inv" },
    attributes: {
      accountId: { type: "string", required: true, readOnly: true },
      partyId: { type: "string", required: true, readOnly: true },
      kind: { type: ["customer", "prospect", "supplier"] as const, required: true },
      number: { type: "number", required: true, readOnly: true },
      ownerUserId: { type: "string", required: true, readOnly: true },
      name: { type: "string", required: true },
      nameKey: { type: "string", required: true },
      /** Lower-cased office email, for `q`. */
      emailKey: { type: "string" },
      officeEmail: { type: "string" },
      officePhone: { type: "string" },
      officeFax: { type: "string" },
      url: { type: "string" },
      billingAddress1: { type: "string" },
      billingAddress2: { type: "string" },
      billingCity: { type: "string" },
      billingRegion: { type: "string" },
      billingPostalCode: { type: "string" },
      billingCountry: { type: "string" },
      shippingAddress1: { type: "string" },
      shippingAddress2: { type: "string" },
      shippingCity: { type: "string" },
      shippingRegion: { type: "string" },
      shippingPostalCode: { type: "string" },
      shippingCountry: { type: "string" },
      billingRegionId: { type: "number" },
      billingCountryId: { type: "number" },
      shippingRegionId: { type: "number" },
      shippingCountryId: { type: "number" },
      vatNumber: { type: "string" },
      /** Default tax rates as decimal strings with three decimals. */
      taxRate1: { type: "string" },
      taxRate2: { type: "string" },
      customerLabelId: { type: "string" },
      pricingTierId: { type: "string" },
      customFieldValues: {
        type: "list",
        items: {
          type: "map",
          properties: { id: { type: "string", required: true }, value: { type: "string", required: true } },
        },
      },
      saleOpportunity: { type: "string" },
      closingPercentage: { type: "number" },
      prospectDate: { type: "string" },
      archived: { type: "boolean", required: true, default: false },
      documentCount: { type: "number", required: true, default: 0 },
      lifetimeRevenueMinor: { type: "number", required: true, default: 0 },
      lastInvoiceDate: { type: "string" },
      /** Contacts linked to this record. */
      contactCount: { type: "number", required: true, default: 0 },
      ...TIMESTAMP_ATTRIBUTES,
    },
    indexes: {
      primary: {
        pk: { field: "pk", composite: ["accountId", "partyId"] },
        sk: { field: "sk", composite: [] },
      },
      byName: {
        index: "gsi1",
        pk: { field: "gsi1pk", composite: ["accountId", "kind"] },
        sk: { field: "gsi1sk", composite: ["nameKey", "partyId"] },
      },
      byOwnerName: {
        index: "gsi2",
        pk: { field: "gsi2pk", composite: ["accountId", "kind", "ownerUserId"] },
        sk: { field: "gsi2sk", composite: ["nameKey", "partyId"] },
      },
    },
  });
