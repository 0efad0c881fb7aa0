import { TIMESTAMP_ATTRIBUTES } from "./timestamps.js";
import { Entity } from "electrodb";

/**
 * A kit definition: an assembled item made of component items (created by operators with the
 * admin CLI; the API cannot define or edit kits). `number` comes from the account's `kit`
 * sequence. Components keep the order given (`position`); `variationId` is the variation whose
 * stock a build consumes (the one selected, `itemVariationId`, or the item's only variation).
 *
 * Build figures per location (`buildStats`: locationId -> {count, lastBuiltAt}) move with
 * every build and disassembly, on condition that `buildVersion` is unchanged (no lost update).
 * All kits of an account share one partition of index gsi1, ordered by number (the kit list).
 */
export const kitEntity = () =>
  new Entity({
    model: { entity: "kit", version: "1", service: "inv" },
    attributes: {
      accountId: { type: "string", required: true, readOnly: true },
      kitId: { type: "string", required: true, readOnly: true },
      number: { type: "number", required: true, readOnly: true, padding: { length: 12, char: "0" } },
      itemId: { type: "string", required: true, readOnly: true },
      /** The assembled item's variation that builds add to (its only variation). */
      variationId: { type: "string" },
      method: { type: ["manual", "automatic"] as const, required: true, default: "manual" },
      components: {
        type: "list",
        required: true,
        items: {
          type: "map",
          properties: {
            id: { type: "string" },
            itemId: { type: "string", required: true },
            /** The variation selected by the definition (absent: the item as a whole). */
            itemVariationId: { type: "string" },
            /** The variation whose stock builds consume. */
            variationId: { type: "string" },
            quantity: { type: "number", required: true },
            position: { type: "number" },
          },
        },
      },
      buildStats: { type: "any", required: true, default: () => ({}) },
      buildVersion: { type: "number", required: true, default: 0 },
      ...TIMESTAMP_ATTRIBUTES,
    },
    indexes: {
      primary: {
        pk: { field: "pk", composite: ["accountId", "kitId"] },
        sk: { field: "sk", composite: [] },
      },
      byNumber: {
        index: "gsi1",
        pk: { field: "gsi1pk", composite: ["accountId"] },
        sk: { field: "gsi1sk", composite: ["number"] },
      },
    },
  });
