import { Entity } from "electrodb";
import { RETENTION } from "./sync-retention.js";

export const syncPointerEntity = () =>
  new Entity({
    model: { entity: "syncpointer", version: "1", service: "inv" },
    attributes: {
      accountId: { type: "string", required: true, readOnly: true },
      resource: { type: "string", required: true, readOnly: true },
      recordId: { type: "string", required: true, readOnly: true },
      seq: { type: "number", required: true },
      operation: { type: ["upsert", "delete"] as const, required: true },
      ...RETENTION,
    },
    indexes: {
      primary: {
        pk: { field: "pk", composite: ["accountId", "resource", "recordId"], template: "$inv#accountid_${accountId}#syncpointer#${resource}#${recordId}" },
        sk: { field: "sk", composite: [], template: "pointer" },
      },
    },
  });
