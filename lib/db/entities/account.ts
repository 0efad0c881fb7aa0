import { TIMESTAMP_ATTRIBUTES } from "./timestamps.js";
import { Entity } from "electrodb";

/** An account: the tenant every other record belongs to, with its settings. */
export const accountEntity = () =>
  new Entity({
    model: { entity: "account", version: "1", service: "inv" },
    attributes: {
      accountId: { type: "string", required: true, readOnly: true },
      name: { type: "string", required: true },
      timeZone: { type: "string", required: true, default: "UTC" },
      currency: { type: "string", required: true, default: "USD" },
      estimateExpiryDays: { type: "number", required: true, default: 30 },
      paymentTerms: { type: "string" },
      taxLabel: { type: "string" },
      tax2Label: { type: "string" },
      packingListsEnabled: { type: "boolean", required: true, default: true },
      packingServiceItems: { type: "boolean", required: true, default: false },
      /** Maximum number of account records; undefined means no limit. */
      recordLimit: { type: "number" },
      ...TIMESTAMP_ATTRIBUTES,
    },
    indexes: {
      primary: {
        pk: { field: "pk", composite: ["accountId"] },
        sk: { field: "sk", composite: [] },
      },
    },
  });
