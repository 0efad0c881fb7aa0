import { Entity } from "electrodb";

/**
 * One stock change of one row: who, when, why, the source (document or adjustment), the
 * deltas and the balances after. Written in the same transaction as the balance it changes.
 * Stored in the item's partition outside `itemTree`, newest last per source type.
 */
export const stockHistoryEntity = () =>
  new Entity({
    model: { entity: "stockhistory", version: "1", service: "inv" },
    attributes: {
      accountId: { type: "string", required: true, readOnly: true },
      itemId: { type: "string", required: true, readOnly: true },
      sourceType: { type: "string", required: true, readOnly: true },
      entryId: { type: "string", required: true, readOnly: true },
      at: { type: "string", required: true, readOnly: true },
      sourceId: { type: "string" },
      journalId: { type: "string", required: true },
      variationId: { type: "string", required: true },
      locationId: { type: "string", required: true },
      ivlId: { type: "number", required: true },
      userId: { type: "string" },
      reason: { type: "string" },
      onHandDelta: { type: "number", required: true, default: 0 },
      reservedDelta: { type: "number", required: true, default: 0 },
      incomingDelta: { type: "number", required: true, default: 0 },
      inTransitDelta: { type: "number", required: true, default: 0 },
      onHandAfter: { type: "number", required: true },
      reservedAfter: { type: "number", required: true },
      incomingAfter: { type: "number", required: true },
      inTransitAfter: { type: "number", required: true },
      /** Unit cost of the units moved (four-decimal string), when the source values them (kit builds). */
      unitCost: { type: "string" },
    },
    indexes: {
      primary: {
        pk: { field: "pk", composite: ["accountId", "itemId"] },
        sk: { field: "sk", composite: ["sourceType", "at", "entryId"] },
      },
    },
  });
