import * as z from "zod";
import { type Infer, lazy } from "./lazy.js";
import { listEnvelope, pageQuery, text, uuid } from "./common.js";
import { quantityInput } from "./amounts.js";

/** Kits, components and builds (spec part 2, sections 2.7, 3.7 and 4.7). */

export const kitPath = lazy(() => z.object({ kit_id: uuid() }));
export const kitBuildPath = lazy(() => z.object({ kit_id: uuid(), build_id: uuid() }));

export const kitListQuery = lazy(() =>
  pageQuery().extend({
    q: text(255)
      .optional()
      .meta({ description: "Searches the assembled item's name and SKU (case-insensitive substring); a whole number also matches the exact kit_number." }),
    assembly_method: z.enum(["manual", "automatic"]).optional().meta({ description: "Only kits with this assembly method." }),
  }),
);

export const kitBuildListQuery = lazy(() =>
  pageQuery().extend({
    location_id: uuid().optional().meta({
      description:
        "Only builds at this active location of the account. A user assigned to one location sees only that location's builds whatever is sent; another location is 422 invalid_query_parameter.",
    }),
  }),
);

export const kitComponentResource = lazy(() =>
  z
    .object({
      id: uuid(),
      object: z.literal("kit_component"),
      item_id: uuid(),
      item_variation_id: z.string().nullable().meta({ description: "The variation the definition selected, or null (the item as a whole)." }),
      name: z.string().nullable().meta({ description: "The component item's name (null when the item no longer exists)." }),
      sku: z.string().nullable().meta({ description: "The selected variation's SKU when a variation is selected, else the item's." }),
      barcode: z.string().nullable().meta({ description: "The selected variation's barcode when a variation is selected, else the item's." }),
      quantity: z.number().meta({ description: "Quantity per kit." }),
      position: z.int().min(0).meta({ description: "Ordering weight: components are listed by position." }),
    })
    .meta({ id: "KitComponent" }),
);

const kitFields = lazy(() => ({
  id: uuid(),
  object: z.literal("kit"),
  kit_number: z.int().min(1).meta({ description: "From the account's kit sequence (assigned when an operator defines the kit)." }),
  item_id: uuid().meta({ description: "The assembled item." }),
  item_number: z.int().min(1),
  name: z.string().meta({ description: "The assembled item's name." }),
  description: z.string().nullable(),
  sku: z.string().nullable(),
  barcode: z.string().nullable(),
  category_id: z.string().nullable(),
  category_name: z.string().nullable(),
  quantity: z.number().meta({ description: "Assembled-item quantity on hand over the locations the caller sees." }),
  pieces: z.int().min(0).meta({ description: "Number of component lines." }),
  assembly_method: z.enum(["manual", "automatic"]).meta({
    description: "`automatic`: when a build of another kit needs this kit's item and it is short at the location, the shortfall is assembled first.",
  }),
  build_count: z.number().meta({ description: "Builds in the kit's history (assembled and not disassembled), over the locations the caller sees." }),
  last_built_at: z.string().nullable().meta({
    description: "Time of the newest build in the kit's history, over the locations the caller sees; null when none (a disassembly takes its build out).",
  }),
  created_at: z.string().nullable(),
  updated_at: z.string().nullable(),
}));

export const kitResource = lazy(() => z.object(kitFields()).meta({ id: "Kit" }));
export const kitDetailResource = lazy(() =>
  z.object({ ...kitFields(), components: z.array(kitComponentResource()).meta({ description: "Ordered by position." }) }).meta({ id: "KitDetail" }),
);
export const kitList = lazy(() => listEnvelope(kitResource(), "KitList"));

export const kitBuildResource = lazy(() =>
  z
    .object({
      id: uuid(),
      object: z.literal("kit_build"),
      kit_id: uuid(),
      location: z.object({ id: uuid(), name: z.string().nullable().meta({ description: "Null when the location is no longer active." }) }).nullable(),
      quantity: z.number(),
      assembly_method: z.enum(["manual", "automatic"]).meta({
        description: "`manual` for builds requested through the API; `automatic` for a nested build assembled for a parent kit's build.",
      }),
      parent_kit: z
        .object({ id: uuid(), kit_number: z.int().min(1) })
        .nullable()
        .meta({ description: "The kit whose build needed this nested automatic build; null for requested builds." }),
      user: z.object({ id: uuid(), name: z.string().nullable() }),
      created_at: z.string().nullable(),
    })
    .meta({ id: "KitBuild" }),
);
export const kitBuildList = lazy(() => listEnvelope(kitBuildResource(), "KitBuildList"));

export const kitBuildBody = lazy(() =>
  z
    .strictObject({
      location_id: uuid().meta({ description: "An active location of the account (a user assigned to a location: that location)." }),
      quantity: quantityInput({ positive: true, description: "Kits to assemble: positive, at most 4 decimals." }),
    })
    .meta({
      id: "KitBuildCreate",
      description:
        "Only these fields: the method (manual), the user, the kit, costs and parent-kit fields are set by the service (other fields: 422 unknown_field).",
    }),
);
export type KitBuildBody = Infer<typeof kitBuildBody>;

export const deletedKitBuild = lazy(() =>
  z.object({ id: uuid(), object: z.literal("kit_build"), kit_id: uuid(), deleted: z.literal(true) }).meta({ id: "DeletedKitBuild" }),
);
