/**
 * Classifies a changed table item for the change feed (architecture section 6). Only the
 * entities behind sync resources produce markers; platform records (keys, users, idempotency
 * records, counters) and the feed's own items never do, or the processor would feed itself.
 */
export const SYNC_RESOURCES = ["estimate", "invoice", "item", "purchase_order", "sales_order"] as const;
export type SyncResource = (typeof SYNC_RESOURCES)[number];

/** ElectroDB's entity-name attribute on every item it writes. */
export const ENTITY_ATTRIBUTE = "__edb_e__";

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
  // Task tallies move with every task write.
  "tasktally",
  "taskaccounttally",
  // The feed's own writes: processing them would feed the processor forever.
  "synchead",
  "syncmarker",
  "syncpointer",
  "synccheckpoint",
] as const;

const IGNORED_ENTITIES = new Set<string>([
  ...PLATFORM_ENTITIES,
  "account",
  "user",
  "location",
  "zone",
  "itemcategory",
  "customfield",
  "customerlabel",
  "pricingtier",
  // Parties and contacts are not sync resources (spec part 1, section 4.7).
  "party",
  "contact",
  "contactlink",
  "contactaccess",
  "unit",
  // Kits are not sync resources; a build's stock changes mark their items (stock rows, history).
  "kit",
  "kitlink",
  "kitbuild",
  "stockjournal",
  // A document's lines and payments never change without its header (revision, totals), which
  // marks the document; stock transfers are not a sync resource (the header check skips them).
  "documentlines",
  "documentpayment",
  // Tasks are not sync resources (spec part 1, section 4.7; part 2, section 4.6 has reconcile).
  "task",
  "tasklink",
  "taskactivity",
  "taskreminder",
  // Packing lists: every pack and ship also rewrites the document's header (quantities,
  // percentages, revision), which marks the sales order or invoice.
  "fulfillment",
]);

/**
 * Item-side entities whose change marks their parent item (a variation, a stock row or a
 * history entry changes the item's figures).
 */
export const ITEM_CHILD_ENTITIES = ["itemvariation", "stockrow", "stockhistory"] as const;

export type ChangeClass = { kind: "ignored"; entity: string | null } | { kind: "tracked"; entity: string };

export function classifyChange(image: Record<string, unknown> | undefined): ChangeClass {
  const entity = typeof image?.[ENTITY_ATTRIBUTE] === "string" ? (image[ENTITY_ATTRIBUTE] as string) : null;
  if (entity === null || IGNORED_ENTITIES.has(entity)) return { kind: "ignored", entity };
  return { kind: "tracked", entity };
}
