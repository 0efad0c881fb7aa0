import { TIMESTAMP_ATTRIBUTES } from "./timestamps.js";
import { Entity } from "electrodb";

/** A variation of an item; a plain item has one base variation with empty `values`. */
export const itemVariationEntity = () =>
  new Entity({
    model: { entity: "itemvariation", version: "1", service: "inv" },
    attributes: {
      accountId: { type: "string", required: true, readOnly: true },
      itemId: { type: "string", required: true, readOnly: true },
      variationId: { type: "string", required: true, readOnly: true },
      variationNumber: { type: "number", required: true, readOnly: true },
      /** Label -> value, e.g. {"Size": "M", "Colour": "Red"}. */
      values: { type: "any", required: true },
      sku: { type: "string" },
      barcode: { type: "string" },
      unitPriceOverride: { type: "string" },
      unitCostOverride: { type: "string" },
      ...TIMESTAMP_ATTRIBUTES,
    },
    indexes: {
      primary: {
        collection: "itemTree",
        pk: { field: "pk", composite: ["accountId", "itemId"] },
        sk: { field: "sk", composite: ["variationId"] },
      },
    },
  });
