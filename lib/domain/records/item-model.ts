/**
 * Items' pure rules (architecture section 4, "Items, variations and stock"): how an item, a
 * variation and an adjustment are presented, which attributes a write changes, who may write
 * unit costs, the list query's checks and which variation an adjustment moves. No database.
 */
import { collectFields } from "./record-fields.js";
import { hasPermission, locationRestriction, type Principal } from "../../auth/permissions.js";
import { mayReachLocation } from "../common/location-access.js";
import type { ItemFilter } from "../../db/items.js";
import type { Reference } from "../../db/references.js";
import type { ItemCategoryItem, ItemRecord, ItemVariationItem, StockHistoryItem, StockRowItem } from "../../db/service.js";
import { errors } from "../../core/errors.js";
import { ledgerEntryUuid } from "../../core/uuid.js";
import type { AdjustmentBody, ItemCreateBody, ItemUpdateBody } from "../../schemas/items.js";
import { normalizeCustomFieldValues, presentCustomFieldValues, type StoredCustomFieldValue } from "../common/custom-field-values.js";
import { itemStock, rowBalances } from "../inventory/stock-changes.js";
import { addQuantities, sumBalances, type Balances } from "../inventory/math.js";
import { money } from "../common/money.js";
import { nameSortKey } from "../../core/name-keys.js";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
export const orNull = <T>(value: T | undefined): T | null => (value === undefined ? null : value);

/** The locations whose stock the caller sees: one for a restricted user, all otherwise. */
function visibleStock(principal: Principal, stock: Record<string, Balances>): Balances[] {
  const restriction = locationRestriction(principal);
  return restriction === null ? Object.values(stock) : stock[restriction] ? [stock[restriction]] : [];
}

export interface PresentContext {
  principal: Principal;
  categories: CategoryView;
  locationId?: string;
}

/** What presenting items needs of the account's categories: their names, and the custom fields deleted from them. */
export interface CategoryView {
  names: ReadonlyMap<string, string>;
  deletedFieldIds: ReadonlySet<string>;
}

export const categoryView = (categories: readonly (Pick<ItemCategoryItem, "categoryId" | "name" | "deletedFieldIds"> | undefined)[]): CategoryView => {
  const known = categories.filter((category) => category !== undefined);
  return {
    names: new Map(known.map((category) => [category.categoryId, category.name])),
    deletedFieldIds: new Set(known.flatMap((category) => category.deletedFieldIds ?? [])),
  };
};

/**
 * An item's custom field values but those of fields deleted from a category since: they are
 * not shown, not taken back as read, and go with the item's next replacement of its values.
 */
export const liveFieldValues = <T extends { id: string }>(values: readonly T[] | undefined, deleted: ReadonlySet<string>): T[] | undefined =>
  values === undefined || deleted.size === 0 ? (values as T[] | undefined) : values.filter((value) => !deleted.has(value.id));

export function presentItem(item: ItemRecord, ctx: PresentContext): Record<string, unknown> {
  const stock = itemStock(item);
  const totals = sumBalances(visibleStock(ctx.principal, stock));
  // The stock at the list's `location_id`, else at the item's own location (architecture section
  // 4: "the stock at location_id"), when the caller may see that location; null without a row.
  const inventoryAt = ctx.locationId ?? (item.locationId && mayReachLocation(ctx.principal, item.locationId) ? item.locationId : undefined);
  const at = inventoryAt ? stock[inventoryAt] : undefined;
  const out: Record<string, unknown> = {
    id: item.itemId,
    object: "item",
    item_number: item.number,
    name: item.name,
    description: orNull(item.description),
    sku: orNull(item.sku),
    barcode: orNull(item.barcode),
    serial_number: item.inventoryType === "unique" ? orNull(item.serialNumber) : null,
    category_id: orNull(item.categoryId),
    category_name: item.categoryId ? (ctx.categories.names.get(item.categoryId) ?? null) : null,
    inventory_type: item.inventoryType,
    status_id: item.archived ? 3 : item.sold ? 2 : 1,
    location_id: orNull(item.locationId),
    unit_id: orNull(item.unitId),
    unit_name: orNull(item.unitName),
    price: orNull(item.price),
  };
  // Always present (existing v3 clients reject an item without it): null without costs.view.
  out.cost = hasPermission(ctx.principal, "costs.view") ? orNull(item.cost) : null;
  Object.assign(out, {
    quantity: totals.onHand,
    quantity_reserved: totals.reserved,
    quantity_incoming: totals.incoming,
    quantity_available: addQuantities(totals.onHand, -totals.reserved),
    in_transit: totals.inTransit,
    threshold: item.threshold,
    variation_count: item.variationCount,
    archived: item.archived,
    published: item.published,
    sold: item.sold,
    location_inventory: at
      ? {
          location_id: inventoryAt,
          quantity: at.onHand,
          quantity_reserved: at.reserved,
          quantity_available: addQuantities(at.onHand, -at.reserved),
          quantity_incoming: at.incoming,
          threshold: item.threshold,
        }
      : null,
    custom_field_values: presentCustomFieldValues(liveFieldValues(item.customFieldValues, ctx.categories.deletedFieldIds)),
    created_at: item.createdAt,
    updated_at: item.updatedAt,
  });
  return out;
}

/**
 * The unit-cost fields of a write (`cost`, a variation's `unit_cost_override`) need `costs.view`
 * (403 `permission_denied`). A caller without it reads them as `null`, so `null` sent back
 * means "as read" and is dropped: what it reads it can write back (architecture section 8).
 */
export function withCostPermission<I extends { cost?: unknown; variations?: { unit_cost_override?: unknown }[] }>(principal: Principal, input: I): I {
  if (hasPermission(principal, "costs.view")) return input;
  const variation = (input.variations ?? []).findIndex((v) => v.unit_cost_override !== undefined && v.unit_cost_override !== null);
  const param = input.cost !== undefined && input.cost !== null ? "cost" : variation >= 0 ? `variations[${variation}].unit_cost_override` : undefined;
  if (param) throw errors.permissionDenied(`${param}: writing unit costs requires the costs.view permission.`, param);
  const { cost: _hidden, ...rest } = input;
  return { ...rest, ...(input.variations ? { variations: input.variations.map(({ unit_cost_override: _none, ...variation }) => variation) } : {}) } as I;
}

export const moneyOrUndefined = (value: string | number | null | undefined) => (value === null || value === undefined ? undefined : money(value));

export interface Changes {
  set: Partial<ItemRecord>;
  remove: (keyof ItemRecord)[];
  /** Account-owned references the write proves in its transaction. */
  references: Reference[];
}

/**
 * Attribute changes for the fields sent; custom-field ids defined by the item's category are
 * accepted as they are, others must be account-level item custom fields (checked in the write);
 * a value the item holds already (`stored`) may be sent back as read.
 */
export function itemChanges(
  input: ItemUpdateBody | ItemCreateBody,
  category: ItemCategoryItem | undefined,
  unitName: string | undefined,
  stored: readonly StoredCustomFieldValue[] = [],
): Changes {
  const set: Record<string, unknown> = {};
  const remove: (keyof ItemRecord)[] = [];
  const text: [keyof typeof input, keyof ItemRecord][] = [
    ["name", "name"],
    ["description", "description"],
    ["sku", "sku"],
    ["barcode", "barcode"],
    ["serial_number", "serialNumber"],
    ["location_id", "locationId"],
  ];
  collectFields(input, text, set, remove);
  if (typeof set.name === "string") set.nameKey = nameSortKey(set.name);
  if ("sku" in set) set.skuKey = String(set.sku).toLowerCase();
  if (remove.includes("sku")) remove.push("skuKey");
  if (input.category_id !== undefined) {
    if (input.category_id === null) {
      remove.push("categoryId");
      set.categoryKey = "none";
    } else {
      set.categoryId = input.category_id;
      set.categoryKey = input.category_id;
    }
  }
  if (input.unit_id !== undefined) {
    if (input.unit_id === null) remove.push("unitId", "unitName");
    else Object.assign(set, { unitId: input.unit_id, unitName });
  }
  collectFields(
    input,
    [
      ["price", "price"],
      ["cost", "cost"],
    ] as const,
    set,
    remove,
    money,
  );
  if (input.inventory_type !== undefined) set.inventoryType = input.inventory_type;
  if (input.threshold !== undefined) set.threshold = input.threshold;
  if (input.published !== undefined) set.published = input.published;
  if ("archived" in input && input.archived !== undefined) set.archived = input.archived;

  const references: Reference[] = [];
  if (input.custom_field_values !== undefined) {
    const { values, checkedIds, positions } = normalizeCustomFieldValues(input.custom_field_values, stored);
    set.customFieldValues = values;
    const categoryFields = new Set((category?.customFields ?? []).map((f) => f.id));
    checkedIds.forEach((id, i) => {
      if (categoryFields.has(id)) return;
      references.push({ param: `custom_field_values[${positions[i]}].custom_field_id`, kind: "custom_field", id, recordKind: "item" });
    });
  }
  if (typeof set.categoryId === "string") references.push({ param: "category_id", kind: "item_category", id: set.categoryId });
  if (typeof set.unitId === "number") references.push({ param: "unit_id", kind: "unit", id: set.unitId });
  if (typeof set.locationId === "string") references.push({ param: "location_id", kind: "location", id: set.locationId });
  return { set: set as Partial<ItemRecord>, remove, references };
}

export interface ItemListQuery {
  q?: string;
  category_id?: string;
  location_id?: string;
  ids?: string;
  archived?: string;
  include_sold?: string;
}

export function parseListQuery(principal: Principal, query: ItemListQuery) {
  const invalid = (param: string, message: string) => errors.invalidQueryParameter(param, message);
  if (query.archived !== undefined && query.archived !== "all") throw invalid("archived", "archived accepts only `all`.");
  if (query.include_sold !== undefined && !["true", "false"].includes(query.include_sold))
    throw invalid("include_sold", "include_sold accepts `true` or `false`.");
  const filter: ItemFilter = { includeArchived: query.archived === "all", includeSold: query.include_sold === "true" };
  let ids: string[] | undefined;
  if (query.ids !== undefined) {
    ids = query.ids.split(",").map((id) => id.trim().toLowerCase());
    if (ids.length > 50) throw invalid("ids", "ids accepts at most 50 UUIDs.");
    if (ids.some((id) => !UUID.test(id))) throw invalid("ids", "ids must be comma-separated UUIDs.");
  }
  const categoryId = query.category_id?.toLowerCase();
  if (categoryId !== undefined && !UUID.test(categoryId)) throw invalid("category_id", "category_id must be a UUID.");
  const locationId = query.location_id?.toLowerCase();
  if (locationId !== undefined) {
    if (!UUID.test(locationId)) throw invalid("location_id", "location_id must be a UUID.");
    if (!mayReachLocation(principal, locationId)) throw invalid("location_id", "location_id is outside your location.");
  }
  return { filter, ids, categoryId, locationId, needle: query.q?.trim().toLowerCase() || undefined };
}

export function presentVariation(principal: Principal, variation: ItemVariationItem, rows: readonly StockRowItem[], includeLocations: boolean) {
  const restriction = locationRestriction(principal);
  const visible = rows.filter((row) => row.variationId === variation.variationId && (restriction === null || row.locationId === restriction));
  const totals = sumBalances(visible.map(rowBalances));
  const out: Record<string, unknown> = {
    id: variation.variationId,
    object: "item_variation",
    item_id: variation.itemId,
    variation_number: variation.variationNumber,
    values: variation.values ?? {},
    sku: orNull(variation.sku),
    barcode: orNull(variation.barcode),
    unit_price_override: orNull(variation.unitPriceOverride),
  };
  // Always present, null without costs.view (as an item's `cost`).
  out.unit_cost_override = hasPermission(principal, "costs.view") ? orNull(variation.unitCostOverride) : null;
  Object.assign(out, {
    quantity: totals.onHand,
    quantity_reserved: totals.reserved,
    quantity_incoming: totals.incoming,
    in_transit: totals.inTransit,
    location_count: visible.length,
  });
  if (includeLocations) {
    out.locations = visible
      .sort((a, b) => a.ivlId - b.ivlId)
      .map((row) => ({
        object: "item_variation_location",
        item_variation_location_id: row.ivlId,
        location_id: row.locationId,
        zone_id: orNull(row.zoneId),
        quantity: row.onHand,
        quantity_reserved: row.reserved,
        quantity_incoming: row.incoming,
        in_transit: row.inTransit,
      }));
  }
  return out;
}

/** An adjustment: one ledger history entry; its id is the entry's public UUID (`ledgerEntryUuid`). */
export function presentAdjustment(entry: StockHistoryItem) {
  return {
    id: ledgerEntryUuid(entry.entryId),
    object: "inventory_adjustment" as const,
    item_id: entry.itemId,
    item_variation_id: entry.variationId,
    item_variation_location_id: entry.ivlId,
    location_id: entry.locationId,
    quantity: entry.onHandDelta,
    quantity_after: entry.onHandAfter,
    reason: orNull(entry.reason),
    user_id: orNull(entry.userId),
    created_at: entry.at,
  };
}

/** The variation an adjustment moves: the one its row or `item_variation_id` names, else the only one. */
export function resolveVariation(variations: readonly ItemVariationItem[], rows: readonly StockRowItem[], input: AdjustmentBody): string {
  if (input.item_variation_location_id) {
    const row = rows.find((r) => r.ivlId === input.item_variation_location_id);
    if (!row) throw errors.validationFailed([{ param: "item_variation_location_id", code: "invalid_reference", message: "is not a stock row of this item." }]);
    if (row.locationId !== input.location_id) {
      throw errors.validationFailed([
        { param: "item_variation_location_id", code: "invalid_reference", message: "belongs to another location than location_id." },
      ]);
    }
    if (input.item_variation_id && input.item_variation_id !== row.variationId) {
      throw errors.validationFailed([{ param: "item_variation_id", code: "invalid_reference", message: "does not match item_variation_location_id." }]);
    }
    return row.variationId;
  }
  if (input.item_variation_id) {
    if (!variations.some((v) => v.variationId === input.item_variation_id)) {
      throw errors.validationFailed([{ param: "item_variation_id", code: "invalid_reference", message: "is not a variation of this item." }]);
    }
    return input.item_variation_id;
  }
  if (variations.length !== 1) {
    throw errors.validationFailed([{ param: "item_variation_id", code: "required", message: "is required for an item with several variations." }]);
  }
  return variations[0]!.variationId;
}
