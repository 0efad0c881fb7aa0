import { Entity } from "electrodb";

/**
 * The stock of one variation at one location (an item-variation-location row). Created by the
 * first stock change there; `ivlId` comes from the account's sequence and never changes.
 */
export const stockRowEntity = () => new Entity({
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
    createdAt: { type: "string", required: true, readOnly: true },
    updatedAt: { type: "string", required: true },
  },
  indexes: {
    primary: {
      collection: "itemTree",
      pk: { field: "pk", composite: ["accountId", "itemId"] },
      sk: { field: "sk", composite: ["variationId", "locationId"] },
    },
  },
});
