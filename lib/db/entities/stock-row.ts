import { TIMESTAMP_ATTRIBUTES } from "./timestamps.js";
import { Entity } from "electrodb";

/**
 * The stock of one variation at one location (an item-variation-location row). Created by the
 * first stock change there; `ivlId` comes from the account's sequence and never changes.
 */
export const stockRowEntity = () =>
  new Entity({
    model: { entity: "stockrow", version: "1", service: "inv" },
    attributes: {
      accountId: { type: "string", required: true, readOnly: true },
      itemId: { type: "string", required: true, readOnly: true },
      variationId: { type: "string", required: true, readOnly: true },
      locationId: { type: "string", required: true, readOnly: true },
      ivlId: { type: "number", required: true, readOnly: true },
      zoneId: { type: "string" },
      onHand: { type: "number", required: true, default: 0 },
      reserved: { type: "number", required: true, default: 0 },
      incoming: { type: "number", required: true, default: 0 },
      inTransit: { type: "number", required: true, default: 0 },
      /**
       * journalId -> balance deltas of a stock hold not folded in yet. The balances above never
       * include them: until its journal commits (is bound) a delta is invisible to readers and
       * only reserves stock against other writers; once it commits it is folded into the balances
       * (by its writer, the next reader or writer that meets it, or the sweeper).
       */
      pending: { type: "any" },
      /** The hold that created this row, until it is folded (readers hide the row until then). */
      heldBy: { type: "string" },
      ...TIMESTAMP_ATTRIBUTES,
    },
    indexes: {
      primary: {
        collection: "itemTree",
        pk: { field: "pk", composite: ["accountId", "itemId"] },
        sk: { field: "sk", composite: ["variationId", "locationId"] },
      },
    },
  });
