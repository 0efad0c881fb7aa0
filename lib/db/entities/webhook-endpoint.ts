import { Entity } from "electrodb";
import { TIMESTAMP_ATTRIBUTES } from "./timestamps.js";

/**
 * A webhook endpoint (architecture section 9). An account's endpoints (at most 10) share one
 * partition, so the fan-out of a change reads them all with ONE Query. `secret` signs
 * messages; after a rotation `previousSecret` signs them too until `previousSecretUntil`
 * (epoch seconds). `failedMessages` counts the endpoint's consecutive messages that failed
 * every attempt (a success resets it; the third disables the endpoint with `failing`).
 */
export const webhookEndpointEntity = () =>
  new Entity({
    model: { entity: "webhookendpoint", version: "1", service: "inv" },
    attributes: {
      accountId: { type: "string", required: true, readOnly: true },
      endpointId: { type: "string", required: true, readOnly: true },
      url: { type: "string", required: true },
      description: { type: "string" },
      resources: { type: "list", items: { type: "string" }, required: true },
      status: { type: ["enabled", "disabled"] as const, required: true },
      disabledReason: { type: ["manual", "failing", "permission_revoked"] as const },
      /** The creating key's user: messages follow that user's current permissions. */
      userId: { type: "string", required: true, readOnly: true },
      secret: { type: "string", required: true },
      previousSecret: { type: "string" },
      previousSecretUntil: { type: "number" },
      failedMessages: { type: "number", required: true, default: 0 },
      /** When the endpoint was last enabled again after being disabled: messages made before it are dropped. */
      enabledAt: { type: "string" },
      ...TIMESTAMP_ATTRIBUTES,
    },
    indexes: {
      primary: {
        pk: { field: "pk", composite: ["accountId"], template: "$inv#accountid_${accountId}#webhookendpoints" },
        sk: { field: "sk", composite: ["endpointId"] },
      },
    },
  });
