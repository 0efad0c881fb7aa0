import { Entity } from "electrodb";
import { RETENTION } from "./sync-retention.js";

export const syncCheckpointEntity = () =>
  new Entity({
    model: { entity: "synccheckpoint", version: "1", service: "inv" },
    attributes: {
      accountId: { type: "string", required: true, readOnly: true },
      /** Zero-padded epoch second. */
      secondKey: { type: "string", required: true, readOnly: true },
      firstSeq: { type: "number", required: true },
      ...RETENTION,
    },
    indexes: {
      primary: {
        pk: { field: "pk", composite: ["accountId"], template: "$inv#accountid_${accountId}#synccheckpoints" },
        sk: { field: "sk", composite: ["secondKey"], template: "${secondKey}" },
      },
    },
  });
