import { TIMESTAMP_ATTRIBUTES } from "./timestamps.js";
import { Entity } from "electrodb";

/**
 * Contacts and their links to customers, prospects and suppliers. A contact shares its
 * partition (collection `contactTree`) with:
 * - one `ContactLink` per linked record (gsi1: the contacts of a record, by contact name);
 * - one `ContactAccess` per distinct owner of its linked records (gsi1: the contacts a user
 *   without `records.view_all` may see, by contact name).
 * So one Query reads a contact with everything that decides who sees it. The contact itself
 * keeps a copy of its links (`links`: id, kind, owner; kind and owner of a record never change)
 * so that list pages render `account_records` without reading the link items.
 */
export const contactEntity = () =>
  new Entity({
    model: { entity: "contact", version: "1", service: "inv" },
    attributes: {
      accountId: { type: "string", required: true, readOnly: true },
      contactId: { type: "string", required: true, readOnly: true },
      firstName: { type: "string", required: true },
      lastName: { type: "string" },
      jobTitle: { type: "string" },
      phone: { type: "string" },
      cell: { type: "string" },
      fax: { type: "string" },
      email1: { type: "string" },
      email2: { type: "string" },
      autoAddEmail: { type: "boolean", required: true, default: false },
      /** Lower-cased "first last": the list order. */
      nameKey: { type: "string", required: true },
      /** Lower-cased names, emails and phone numbers (also digits only), for `q`. */
      searchText: { type: "string", required: true },
      links: {
        type: "list",
        items: {
          type: "map",
          properties: {
            id: { type: "string", required: true },
            kind: { type: ["customer", "prospect", "supplier"] as const, required: true },
            ownerUserId: { type: "string", required: true },
          },
        },
      },
      ...TIMESTAMP_ATTRIBUTES,
    },
    indexes: {
      primary: {
        collection: "contactTree",
        pk: { field: "pk", composite: ["accountId", "contactId"] },
        sk: { field: "sk", composite: [] },
      },
      byName: {
        index: "gsi1",
        pk: { field: "gsi1pk", composite: ["accountId"] },
        sk: { field: "gsi1sk", composite: ["nameKey", "contactId"] },
      },
    },
  });
