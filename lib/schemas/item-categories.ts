import * as z from "zod";
import { type Infer, lazy } from "./lazy.js";
import { customFieldId, documentedAs, listEnvelope, pageQuery, requiredText, text, uuid } from "./common.js";

export const customFieldDefinition = lazy(() =>
  z
    .object({
      id: z.string(),
      name: z.string(),
      display_order: z.int().min(0),
      display_on_inventory_list: z.boolean(),
      publish_on_documents: z.boolean(),
    })
    .meta({ id: "CustomFieldDefinition" }),
);

export const itemCategoryResource = lazy(() =>
  z
    .object({
      id: uuid(),
      object: z.literal("item_category"),
      name: z.string(),
      parent_id: uuid().nullable(),
      inventory_type: z.enum(["quantity", "unique"]),
      custom_fields: z.array(customFieldDefinition()),
    })
    .meta({ id: "ItemCategory" }),
);

export const itemCategoryList = lazy(() => listEnvelope(itemCategoryResource(), "ItemCategoryList"));

const customFieldInput = lazy(() =>
  z.strictObject({
    id: customFieldId().optional().meta({ description: "Existing field id to keep; omit to add a field." }),
    name: requiredText(255),
    // Absent: false on a new field, the stored flag on a kept one (resolveCustomFields).
    display_on_inventory_list: z.boolean().optional(),
    publish_on_documents: z.boolean().optional(),
  }),
);

export const MAX_CUSTOM_FIELDS = 100;

export const itemCategoryCreateBody = lazy(() =>
  z
    .strictObject({
      name: requiredText(255),
      inventory_type: z.enum(["quantity", "unique"]),
      parent_id: uuid().nullish().meta({ description: "Top-level parent category; null or omitted for a root category." }),
      custom_fields: z.array(customFieldInput()).max(MAX_CUSTOM_FIELDS).optional().default([]),
    })
    .meta({ id: "ItemCategoryCreate" }),
);

export const itemCategoryUpdateBody = lazy(() =>
  z
    .strictObject({
      name: requiredText(255).optional(),
      inventory_type: z.enum(["quantity", "unique"]).optional(),
      parent_id: uuid().nullish(),
      custom_fields: z.array(customFieldInput()).max(MAX_CUSTOM_FIELDS).optional().meta({
        description:
          "The complete desired list: include an existing `id` to keep a field, omit `id` to add one; omitted fields are deleted; array order becomes `display_order`.",
      }),
    })
    .meta({ id: "ItemCategoryUpdate" }),
);

export const itemCategoryListQuery = lazy(() =>
  pageQuery().extend({
    q: text(255).optional().meta({ description: "Case-insensitive search in category names." }),
    parent_id: z
      .string()
      .optional()
      .meta({
        description: "`root` for root categories, or a category UUID of the account for its direct children (anything else is 422 invalid_query_parameter).",
        ...documentedAs({
          schema: { type: "string", pattern: "^(root|[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})$", examples: ["root"] },
        }),
      }),
  }),
);

export const itemCategoryPath = lazy(() => z.object({ category_id: uuid() }));

export type ItemCategoryCreateBody = Infer<typeof itemCategoryCreateBody>;
export type ItemCategoryUpdateBody = Infer<typeof itemCategoryUpdateBody>;
