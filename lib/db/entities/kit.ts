import { Entity } from "electrodb";

/** A kit definition: an assembled item made of component items (created by operators). */
export const Kit = new Entity({
  model: { entity: "kit", version: "1", service: "inv" },
  attributes: {
    accountId: { type: "string", required: true, readOnly: true },
    kitId: { type: "string", required: true, readOnly: true },
    itemId: { type: "string", required: true },
    method: { type: ["manual", "automatic"] as const, required: true, default: "manual" },
    components: {
      type: "list",
      required: true,
      items: {
        type: "map",
        properties: { itemId: { type: "string", required: true }, quantity: { type: "number", required: true } },
      },
    },
    createdAt: { type: "string", required: true, readOnly: true },
    updatedAt: { type: "string", required: true },
  },
  indexes: {
    primary: {
      pk: { field: "pk", composite: ["accountId", "kitId"] },
      sk: { field: "sk", composite: [] },
    },
  },
});
