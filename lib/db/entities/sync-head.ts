import { Entity } from "electrodb";

export const syncHeadEntity = () =>
  new Entity({
    model: { entity: "synchead", version: "1", service: "inv" },
    attributes: {
      accountId: { type: "string", required: true, readOnly: true },
      seq: { type: "number", required: true },
      /** Epoch milliseconds of the last marker (markers' times never go backwards). */
      lastAt: { type: "number", required: true },
    },
    indexes: {
      primary: {
        pk: { field: "pk", composite: ["accountId"], template: "$inv#accountid_${accountId}#sync" },
        sk: { field: "sk", composite: [], template: "head" },
      },
    },
  });
