import * as z from "zod";
import { type Infer, lazy } from "./lazy.js";
import { IDS_QUERY_MAX_LENGTH, QUERY_UUID, documentedAs, listEnvelope, optionalText, pageQuery, requiredText, text, timestamp, uuid } from "./common.js";
import { moneyInput, quantityInput } from "./amounts.js";
import { customFieldValuesInput } from "./parties.js";

/** Items, variations, units and adjustments (architecture section 4, "Items, variations and stock"). */

export { moneyInput };

const text255 = lazy(() => optionalText(255));

export const variationInput = lazy(() =>
  z.strictObject({
    values: z
      .record(requiredText(100), requiredText(255))
      .refine((values) => Object.keys(values).length > 0 && Object.keys(values).length <= 5, 'must name 1 to 5 attributes, e.g. {"Size": "M"}')
      .meta({ minProperties: 1, maxProperties: 5 }),
    sku: text255(),
    barcode: text255(),
    unit_price_override: moneyInput().nullish(),
    unit_cost_override: moneyInput()
      .nullish()
      .meta({ description: "Unit cost override; needs the costs.view permission (else 403 permission_denied), except null" }),
  }),
);

const itemWritable = lazy(() => ({
  name: requiredText(255),
  description: optionalText(10_000),
  sku: text255(),
  barcode: text255(),
  serial_number: text255(),
  category_id: uuid().nullish(),
  inventory_type: z.enum(["quantity", "unique"]).optional().meta({
    description: "Changes only while the item holds no stock (on hand, reserved, incoming or in transit), is not sold and has one variation; else 422",
  }),
  location_id: uuid().nullish(),
  unit_id: z.int().min(1).nullish(),
  price: moneyInput().nullish(),
  cost: moneyInput().nullish().meta({
    description:
      "Unit cost; needs the costs.view permission (else 403 permission_denied). null clears it; without costs.view, null (as GET shows it) changes nothing",
  }),
  threshold: quantityInput({ min: 0, description: "Reorder level, at most 4 decimals" }).optional(),
  published: z.boolean().optional(),
  custom_field_values: customFieldValuesInput(50).optional(),
}));

export const MAX_VARIATIONS = 50;

export const itemCreateBody = lazy(() =>
  z.strictObject({ ...itemWritable(), variations: z.array(variationInput()).max(MAX_VARIATIONS).optional() }).meta({ id: "ItemCreate" }),
);
export const itemUpdateBody = lazy(() =>
  z.strictObject({ ...itemWritable(), name: itemWritable().name.optional(), archived: z.boolean().optional() }).meta({ id: "ItemUpdate" }),
);
export type ItemCreateBody = Infer<typeof itemCreateBody>;
export type ItemUpdateBody = Infer<typeof itemUpdateBody>;

const locationInventory = lazy(() =>
  z
    .object({
      location_id: uuid(),
      quantity: z.number(),
      quantity_reserved: z.number(),
      quantity_available: z.number(),
      quantity_incoming: z.number(),
      threshold: z.number(),
    })
    .nullable(),
);

export const itemResource = lazy(() =>
  z
    .object({
      id: uuid(),
      object: z.literal("item"),
      item_number: z.int().min(1),
      name: z.string(),
      description: z.string().nullable(),
      sku: z.string().nullable(),
      barcode: z.string().nullable(),
      serial_number: z.string().nullable(),
      category_id: uuid().nullable(),
      category_name: z.string().nullable(),
      inventory_type: z.enum(["quantity", "unique"]),
      status_id: z
        .int()
        .min(1)
        .max(3)
        .meta({ description: "1 active, 2 sold, 3 archived", enum: [1, 2, 3] }),
      location_id: uuid().nullable(),
      unit_id: z.int().min(1).nullable(),
      unit_name: z.string().nullable(),
      price: z.string().nullable(),
      cost: z.string().nullable().meta({ description: "Four-decimal unit cost, or null: always null without the costs.view permission" }),
      quantity: z.number(),
      quantity_reserved: z.number(),
      quantity_incoming: z.number(),
      quantity_available: z.number(),
      in_transit: z.number(),
      threshold: z.number(),
      variation_count: z.int().min(0),
      archived: z.boolean(),
      published: z.boolean(),
      sold: z.boolean(),
      location_inventory: locationInventory(),
      custom_field_values: z.array(z.object({ custom_field_id: z.string(), value: z.string() })),
      created_at: timestamp(),
      updated_at: timestamp(),
    })
    .meta({ id: "Item" }),
);

export const itemList = lazy(() => listEnvelope(itemResource(), "ItemList"));

export const itemListQuery = lazy(() =>
  pageQuery().extend({
    q: text(255).optional().meta({ description: "Searches name and SKU (case-insensitive); a number also matches the exact item_number." }),
    category_id: z
      .string()
      .optional()
      .meta({ description: "Only items of this category.", ...documentedAs({ schema: QUERY_UUID }) }),
    location_id: z
      .string()
      .optional()
      .meta({
        description: "location_inventory for this location instead of the item's (a location-restricted user: only its own).",
        ...documentedAs({ schema: QUERY_UUID }),
      }),
    ids: z
      .string()
      .max(IDS_QUERY_MAX_LENGTH)
      .optional()
      .meta({
        description:
          "1 to 50 comma-separated item UUIDs (`ids=a,b`): returns every visible existing one (archived and sold included) in one response, whatever page and limit say. An id absent from the response no longer exists.",
        ...documentedAs({ schema: { type: "array", items: QUERY_UUID, minItems: 1, maxItems: 50 }, explode: false }),
      }),
    archived: z
      .string()
      .optional()
      .meta({ description: "`all` includes archived items.", ...documentedAs({ schema: { type: "string", enum: ["all"] } }) }),
    include_sold: z
      .string()
      .optional()
      .meta({ description: "`true` includes sold unique items.", ...documentedAs({ schema: { type: "boolean", default: false } }) }),
  }),
);

export const itemPath = lazy(() => z.object({ id: uuid() }));

export const variationLocation = lazy(() =>
  z
    .object({
      object: z.literal("item_variation_location"),
      item_variation_location_id: z.int().min(1),
      location_id: uuid(),
      zone_id: uuid().nullable(),
      quantity: z.number(),
      quantity_reserved: z.number(),
      quantity_incoming: z.number(),
      in_transit: z.number(),
    })
    .meta({ id: "ItemVariationLocation" }),
);

export const variationResource = lazy(() =>
  z
    .object({
      id: uuid(),
      object: z.literal("item_variation"),
      item_id: uuid(),
      variation_number: z.int().min(1),
      values: z.record(z.string(), z.string()),
      sku: z.string().nullable(),
      barcode: z.string().nullable(),
      unit_price_override: z.string().nullable(),
      unit_cost_override: z
        .string()
        .nullable()
        .meta({ description: "Four-decimal unit cost override, or null: always null without the costs.view permission" }),
      quantity: z.number(),
      quantity_reserved: z.number(),
      quantity_incoming: z.number(),
      in_transit: z.number(),
      location_count: z.int().min(0),
      locations: z.array(variationLocation()).optional().meta({ description: "With include=locations" }),
    })
    .meta({ id: "ItemVariation" }),
);

export const variationList = lazy(() => listEnvelope(variationResource(), "ItemVariationList"));
export const variationListQuery = lazy(() =>
  pageQuery().extend({
    include: z.enum(["locations"]).optional().meta({ description: "`locations` embeds the stock rows." }),
  }),
);

export const adjustmentBody = lazy(() =>
  z
    .strictObject({
      location_id: uuid(),
      quantity: quantityInput({ nonZero: true, description: "Signed change of on-hand stock, at most 4 decimals" }),
      item_variation_id: uuid().nullish(),
      item_variation_location_id: z.int().min(1).nullish(),
      reason: optionalText(255),
    })
    .meta({ id: "InventoryAdjustmentCreate" }),
);
export type AdjustmentBody = Infer<typeof adjustmentBody>;

export const adjustmentResource = lazy(() =>
  z
    .object({
      id: uuid().meta({ description: "UUID of the adjustment (its stock history entry)" }),
      object: z.literal("inventory_adjustment"),
      item_id: uuid(),
      item_variation_id: uuid(),
      item_variation_location_id: z.int().min(1),
      location_id: uuid(),
      quantity: z.number(),
      quantity_after: z.number().meta({ description: "On hand at this item-variation-location after the adjustment" }),
      reason: z.string().nullable(),
      user_id: uuid().nullable(),
      created_at: timestamp(),
    })
    .meta({ id: "InventoryAdjustment" }),
);
export const adjustmentList = lazy(() => listEnvelope(adjustmentResource(), "InventoryAdjustmentList"));

export const unitResource = lazy(() => z.object({ object: z.literal("unit"), unit_id: z.int().min(1), name: z.string() }).meta({ id: "Unit" }));
export const unitList = lazy(() => listEnvelope(unitResource(), "UnitList"));

export const deletedItem = lazy(() => z.object({ id: uuid(), object: z.literal("item"), deleted: z.literal(true) }).meta({ id: "DeletedItem" }));
