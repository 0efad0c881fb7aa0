import { TIMESTAMP_ATTRIBUTES } from "./timestamps.js";
import { Entity } from "electrodb";

/**
 * An item category with its custom-field definitions (kept inside the record, in display
 * order). Categories live in the account partition: one Query reads them all.
 * `childCount` guards the two-level tree: a category with children cannot get a parent.
 */
export const itemCategoryEntity = () =>
  new Entity({
    model: { entity: "itemcategory", version: "1", service: "inv" },
    attributes: {
      accountId: { type: "string", required: true, readOnly: true },
      categoryId: { type: "string", required: true, readOnly: true },
      name: { type: "string", required: true },
      /** `"root"` for a top-level category, else the parent's id (kept non-null for conditions). */
      parentId: { type: "string", required: true, default: "root" },
      inventoryType: { type: ["quantity", "unique"] as const, required: true },
      /** Ordering weight; categories are listed by weight, then name. */
      weight: { type: "number", required: true, default: 0 },
      childCount: { type: "number", required: true, default: 0 },
      customFields: {
        type: "list",
        items: {
          type: "map",
          properties: {
            id: { type: "string", required: true },
            name: { type: "string", required: true },
            displayOnInventoryList: { type: "boolean", required: true },
            publishOnDocuments: { type: "boolean", required: true },
          },
        },
      },
      /** Ids of custom fields deleted from the category: items' values for them are hidden and refused. */
      deletedFieldIds: { type: "list", items: { type: "string" } },
      ...TIMESTAMP_ATTRIBUTES,
    },
    indexes: {
      primary: {
        pk: { field: "pk", composite: ["accountId"] },
        sk: { field: "sk", composite: ["categoryId"] },
      },
    },
  });
