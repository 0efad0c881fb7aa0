import { Entity } from "electrodb";

/** A link from a contact to a customer, prospect or supplier. */
export const contactLinkEntity = () =>
  new Entity({
    model: { entity: "contactlink", version: "1", service: "inv" },
    attributes: {
      accountId: { type: "string", required: true, readOnly: true },
      contactId: { type: "string", required: true, readOnly: true },
      partyId: { type: "string", required: true, readOnly: true },
      contactNameKey: { type: "string", required: true },
    },
    indexes: {
      primary: {
        collection: "contactTree",
        pk: { field: "pk", composite: ["accountId", "contactId"] },
        sk: { field: "sk", composite: ["partyId"] },
      },
      byParty: {
        index: "gsi1",
        pk: { field: "gsi1pk", composite: ["accountId", "partyId"] },
        sk: { field: "gsi1sk", composite: ["contactNameKey", "contactId"] },
      },
    },
  });
