/**
 * Classifies a changed table item for the change feed (architecture section 6). Only the
 * entities behind sync resources produce markers; platform records (keys, users, idempotency
 * records, counters) and the feed's own items never do, or the processor would feed itself.
 */
export const SYNC_RESOURCES = ["estimate", "invoice", "item", "purchase_order", "sales_order"] as const;
export type SyncResource = (typeof SYNC_RESOURCES)[number];

export { ENTITY_ATTRIBUTE } from "../core/entity-attribute.js";

/**
 * High-churn platform records that never mark anything: the key record is written on every
 * request (rate window), idempotency records on every keyed write. The CDK stack filters them
 * out of the event source, so they never even invoke the processor.
 */
export const PLATFORM_ENTITIES = [
  "apikey",
  "idempotency",
  "idempotencypart",
  "counters",
  "ownercounters",
  "inventorycounters",
  "sequence",
  // The queues of contended writers (lib/db/turns.ts): every contended write moves one.
  "turn",
  "itemreference",
  // Item references a document write started, until the processor counted them.
  "referenceintent",
  // Task tallies move with every task write.
  "tasktally",
  "taskaccounttally",
  // The feed's own writes: processing them would feed the processor forever.
  "synchead",
  "syncmarker",
  "syncpointer",
  "synccheckpoint",
  // Webhook endpoints and their delivery records (the deliveries would feed the processor forever).
  "webhookendpoint",
  "webhookdelivery",
  "webhookdeliveryday",
  // The admin CLI's directory of users, keys and accounts (written with them).
  "operatordirectory",
] as const;

/**
 * Item-side entities whose change marks their parent item (a variation, a stock row or a
 * history entry changes the item's figures).
 */
export const ITEM_CHILD_ENTITIES = ["itemvariation", "stockrow", "stockhistory"] as const;
