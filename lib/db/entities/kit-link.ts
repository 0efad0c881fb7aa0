import { Entity } from "electrodb";

/**
 * The kit an item is the assembled item of (at most one: written with the kit, on condition
 * that it does not exist). Lives in the item's partition, outside its `itemTree` collection.
 * Builds read these for their components in one BatchGetItem to find automatic sub-kits.
 */
export const kitLinkEntity = () =>
  new Entity({
    model: { entity: "kitlink", version: "1", service: "inv" },
    attributes: {
      accountId: { type: "string", required: true, readOnly: true },
      itemId: { type: "string", required: true, readOnly: true },
      kitId: { type: "string", required: true, readOnly: true },
      method: { type: ["manual", "automatic"] as const, required: true },
      createdAt: { type: "string", required: true, readOnly: true },
    },
    indexes: {
      primary: {
        pk: { field: "pk", composite: ["accountId", "itemId"] },
        sk: { field: "sk", composite: [] },
      },
    },
  });
