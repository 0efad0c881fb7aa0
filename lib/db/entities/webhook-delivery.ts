import { Entity } from "electrodb";

/** Delivery records expire with this TTL (the table's `expires_at`). */
const EXPIRY = { expiresAt: { type: "number" as const, required: true as const, field: "expires_at" } };

/**
 * One attempt to deliver one webhook message (architecture section 9), kept 30 days. An
 * endpoint's attempts share a partition ordered by `createdAt`, so its newest come first from
 * one Query read backwards.
 */
export const webhookDeliveryEntity = () =>
  new Entity({
    model: { entity: "webhookdelivery", version: "1", service: "inv" },
    attributes: {
      accountId: { type: "string", required: true, readOnly: true },
      endpointId: { type: "string", required: true, readOnly: true },
      deliveryId: { type: "string", required: true, readOnly: true },
      messageId: { type: "string", required: true },
      eventType: { type: "string", required: true },
      attempt: { type: "number", required: true },
      status: { type: ["succeeded", "failed"] as const, required: true },
      responseStatus: { type: "number" },
      error: { type: "string" },
      durationMs: { type: "number", required: true },
      nextAttemptAt: { type: "string" },
      /** When the message was made (its retry is dropped if the endpoint was enabled again since). */
      messageCreatedAt: { type: "string" },
      createdAt: { type: "string", required: true, readOnly: true },
      ...EXPIRY,
    },
    indexes: {
      primary: {
        pk: { field: "pk", composite: ["accountId", "endpointId"], template: "$inv#accountid_${accountId}#webhookendpoint_${endpointId}#deliveries" },
        sk: { field: "sk", composite: ["createdAt", "deliveryId"], template: "${createdAt}#${deliveryId}", casing: "none" },
      },
    },
  });

/**
 * How many attempts an endpoint recorded on one UTC day: the list's `total_records` is the sum
 * of the days still kept (at most 30 small items), never a count of the attempts themselves.
 */
export const webhookDeliveryDayEntity = () =>
  new Entity({
    model: { entity: "webhookdeliveryday", version: "1", service: "inv" },
    attributes: {
      accountId: { type: "string", required: true, readOnly: true },
      endpointId: { type: "string", required: true, readOnly: true },
      day: { type: "string", required: true, readOnly: true },
      count: { type: "number", required: true },
      ...EXPIRY,
    },
    indexes: {
      primary: {
        pk: { field: "pk", composite: ["accountId", "endpointId"], template: "$inv#accountid_${accountId}#webhookendpoint_${endpointId}#deliverydays" },
        sk: { field: "sk", composite: ["day"], template: "${day}", casing: "none" },
      },
    },
  });
