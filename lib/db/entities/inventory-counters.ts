import { Entity } from "electrodb";

/**
 * Inventory sequences and item counts, apart from the party counters so that stock postings
 * and customer creation never contend. `items_<archived><sold>` count items by status.
 */
export const inventoryCountersEntity = () =>
  new Entity({
    model: { entity: "inventorycounters", version: "1", service: "inv" },
    attributes: {
      accountId: { type: "string", required: true, readOnly: true },
      itemSeq: { type: "number" },
      ivlSeq: { type: "number" },
      unitSeq: { type: "number" },
      items_00: { type: "number" },
      items_01: { type: "number" },
      items_10: { type: "number" },
      items_11: { type: "number" },
    },
    indexes: {
      primary: {
        pk: { field: "pk", composite: ["accountId"] },
        sk: { field: "sk", composite: [] },
      },
    },
  });
