import { Entity } from "electrodb";

/** Marks a contact visible to the owner of one of its linked records. */
export const contactAccessEntity = () =>
  new Entity({
    model: { entity: "contactaccess", version: "1", service: "inv" },
    attributes: {
      accountId: { type: "string", required: true, readOnly: true },
      contactId: { type: "string", required: true, readOnly: true },
      ownerUserId: { type: "string", required: true, readOnly: true },
      contactNameKey: { type: "string", required: true },
    },
    indexes: {
      primary: {
        collection: "contactTree",
        pk: { field: "pk", composite: ["accountId", "contactId"] },
        sk: { field: "sk", composite: ["ownerUserId"] },
      },
      byOwner: {
        index: "gsi1",
        pk: { field: "gsi1pk", composite: ["accountId", "ownerUserId"] },
        sk: { field: "gsi1sk", composite: ["contactNameKey", "contactId"] },
      },
    },
  });
