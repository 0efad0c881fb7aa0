import { Entity } from "electrodb";
import { RETENTION } from "./sync-retention.js";

export const syncMarkerEntity = () =>
  new Entity({
    model: { entity: "syncmarker", version: "1", service: "inv" },
    attributes: {
      accountId: { type: "string", required: true, readOnly: true },
      /** Zero-padded sequence: the sort key orders markers by sequence. */
      seqKey: { type: "string", required: true, readOnly: true },
      seq: { type: "number", required: true },
      resource: { type: "string", required: true },
      recordId: { type: "string", required: true },
      operation: { type: ["upsert", "delete"] as const, required: true },
      at: { type: "number", required: true },
      ...RETENTION,
    },
    indexes: {
      primary: {
        pk: { field: "pk", composite: ["accountId"], template: "$inv#accountid_${accountId}#syncmarkers" },
        sk: { field: "sk", composite: ["seqKey"], template: "${seqKey}" },
      },
    },
  });
