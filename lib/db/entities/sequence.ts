import { Entity } from "electrodb";

/**
 * A per-account number sequence of its own item (document, packing-list, kit and build
 * numbers), with the count of the records it numbered that still exist (list totals). Older
 * sequences live on the counter items whose counts they move together (`AccountCounters`,
 * `InventoryCounters`); `lib/db/sequences.ts` hides where each one is.
 */
export const sequenceEntity = () =>
  new Entity({
    model: { entity: "sequence", version: "1", service: "inv" },
    attributes: {
      accountId: { type: "string", required: true, readOnly: true },
      name: { type: "string", required: true, readOnly: true },
      /** The last number handed out. */
      value: { type: "number" },
      /** Records of this kind that exist now. */
      count: { type: "number" },
      /**
       * On the item named `<kind>.removed`: the numbers of deleted documents of the kind, so a
       * list page's position maps to a number (`queryDocumentPage`) without reading the pages before it.
       */
      removed: { type: "set", items: "number" },
    },
    indexes: {
      primary: {
        pk: { field: "pk", composite: ["accountId"] },
        sk: { field: "sk", composite: ["name"] },
      },
    },
  });
