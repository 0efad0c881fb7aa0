import { StockRuleError } from "../../core/failures.js";
import { randomUUID } from "node:crypto";
import { hasPermission, locationRestriction, requirePermission, type Principal } from "../../auth/permissions.js";
import { mayReachLocation, requireReachableLocation } from "../common/location-access.js";
import { queryItemCategories, readItemCategory } from "../../db/item-categories.js";
import { queryHistory, readItemTree, rowKeyOf } from "../../db/inventory.js";
import {
  insertItem,
  queryItemPage,
  queryUnits,
  readItem,
  readItems,
  readUnit,
  removeItem,
  replaceItem,
  searchItemPage,
  readInventoryCounters,
  type ItemFilter,
} from "../../db/items.js";
import { nowIso } from "../../db/keys.js";
import { checkReferences, referenceDetail, referenceDetails, type Reference } from "../../db/references.js";
import { RETRY, retrying } from "../../db/retry.js";
import type { ItemCategoryItem, ItemRecord, ItemVariationItem, StockHistoryItem, StockRowItem } from "../../db/service.js";
import { errors, type DetailCode, type ValidationDetail } from "../../core/errors.js";
import { ledgerEntryUuid } from "../../core/uuid.js";
import type { IdempotencyCompletion } from "../../core/idempotency.js";
import { listEnvelope, pageOfAll, type ListEnvelope, type PageRequest } from "../../core/pagination.js";
import type { AdjustmentBody, ItemCreateBody, ItemUpdateBody } from "../../schemas/items.js";
import { normalizeCustomFieldValues, presentCustomFieldValues } from "../common/custom-field-values.js";
import { itemLockName, postStockChanges, readSettledItemTree, readSettledItems } from "../inventory/service.js";
import { itemStock, rowBalances } from "../inventory/ledger-plan.js";
import { addQuantities, sumBalances, type Balances } from "../inventory/math.js";
import { money } from "../common/money.js";
import { nameSortKey } from "../common/ordering.js";
import { sameRecord, UPDATED_AT } from "../../core/records.js";

/** Items, variations, units and adjustments (architecture section 4, "Items, variations and stock"). */

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const orNull = <T>(value: T | undefined): T | null => (value === undefined ? null : value);

/** The locations whose stock the caller sees: one for a restricted user, all otherwise. */
function visibleStock(principal: Principal, stock: Record<string, Balances>): Balances[] {
  const restriction = locationRestriction(principal);
  return restriction === null ? Object.values(stock) : stock[restriction] ? [stock[restriction]] : [];
}

interface PresentContext {
  principal: Principal;
  categoryNames: ReadonlyMap<string, string>;
  locationId?: string;
}

export function presentItem(item: ItemRecord, ctx: PresentContext): Record<string, unknown> {
  const stock = itemStock(item);
  const totals = sumBalances(visibleStock(ctx.principal, stock));
  const at = ctx.locationId ? stock[ctx.locationId] : undefined;
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
    category_name: item.categoryId ? (ctx.categoryNames.get(item.categoryId) ?? null) : null,
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
          location_id: ctx.locationId,
          quantity: at.onHand,
          quantity_reserved: at.reserved,
          quantity_available: addQuantities(at.onHand, -at.reserved),
          quantity_incoming: at.incoming,
          threshold: item.threshold,
        }
      : null,
    custom_field_values: presentCustomFieldValues(item.customFieldValues),
    created_at: item.createdAt,
    updated_at: item.updatedAt,
  });
  return out;
}

async function categoryNames(accountId: string, items: readonly ItemRecord[]): Promise<Map<string, string>> {
  if (!items.some((item) => item.categoryId)) return new Map();
  return new Map((await queryItemCategories(accountId)).map((c) => [c.categoryId, c.name]));
}

/** Reads need the inventory-list permission (architecture section 4). */
const requireList = (principal: Principal) => requirePermission(principal, "inventory.list");
const requireModify = (principal: Principal) => requirePermission(principal, "inventory.modify");

/**
 * The unit-cost fields of a write (`cost`, a variation's `unit_cost_override`) need `costs.view`
 * (403 `permission_denied`). A caller without it reads them as `null`, so `null` sent back
 * means "as read" and is dropped: what it reads it can write back (architecture section 8).
 */
function withCostPermission<I extends { cost?: unknown; variations?: { unit_cost_override?: unknown }[] }>(principal: Principal, input: I): I {
  if (hasPermission(principal, "costs.view")) return input;
  const writesCost =
    (input.cost !== undefined && input.cost !== null) ||
    (input.variations ?? []).some((v) => v.unit_cost_override !== undefined && v.unit_cost_override !== null);
  if (writesCost) throw errors.permissionDenied("Writing unit costs requires the costs.view permission.");
  const { cost: _hidden, ...rest } = input;
  return { ...rest, ...(input.variations ? { variations: input.variations.map(({ unit_cost_override: _none, ...variation }) => variation) } : {}) } as I;
}

const moneyOrUndefined = (value: string | number | null | undefined) => (value === null || value === undefined ? undefined : money(value));

interface Changes {
  set: Partial<ItemRecord>;
  remove: (keyof ItemRecord)[];
  /** Account-owned references the write proves in its transaction. */
  references: Reference[];
}

/**
 * Attribute changes for the fields sent; custom-field ids defined by the item's category are
 * accepted as they are, others must be account-level item custom fields (checked in the write).
 */
function itemChanges(input: ItemUpdateBody | ItemCreateBody, category: ItemCategoryItem | undefined, unitName: string | undefined): Changes {
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
  for (const [field, attribute] of text) {
    const value = input[field] as string | null | undefined;
    if (value === undefined) continue;
    if (value === null || value === "") remove.push(attribute);
    else set[attribute] = value;
  }
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
  for (const [field, attribute] of [
    ["price", "price"],
    ["cost", "cost"],
  ] as const) {
    const value = input[field];
    if (value === undefined) continue;
    if (value === null) remove.push(attribute);
    else set[attribute] = money(value);
  }
  if (input.inventory_type !== undefined) set.inventoryType = input.inventory_type;
  if (input.threshold !== undefined) set.threshold = input.threshold;
  if (input.published !== undefined) set.published = input.published;
  if ("archived" in input && input.archived !== undefined) set.archived = input.archived;

  const references: Reference[] = [];
  if (input.custom_field_values !== undefined) {
    const { values, checkedIds, positions } = normalizeCustomFieldValues(input.custom_field_values);
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

/** Reads the category and unit a write names (the category decides defaults and its fields). */
async function readReferences(accountId: string, input: { category_id?: string | null; unit_id?: number | null }) {
  const [category, unit] = await Promise.all([
    input.category_id ? readItemCategory(accountId, input.category_id) : Promise.resolve(undefined),
    input.unit_id ? readUnit(accountId, input.unit_id) : Promise.resolve(undefined),
  ]);
  const details: ValidationDetail[] = [];
  if (input.category_id && !category) details.push(referenceDetail("category_id"));
  if (input.unit_id && !unit) details.push(referenceDetail("unit_id"));
  if (details.length > 0) throw errors.validationFailed(details);
  return { category, unitName: unit?.name };
}

/**
 * Creates an item numbered from the account's item sequence, with one base variation or the
 * variations given. `inventory_type` defaults from the category (else `quantity`).
 */
export async function createItem(principal: Principal, body: ItemCreateBody, completion: IdempotencyCompletion | undefined) {
  requireModify(principal);
  const input = withCostPermission(principal, body);
  const { category, unitName } = await readReferences(principal.accountId, input);
  const changes = itemChanges(input, category, unitName);
  const inventoryType = input.inventory_type ?? category?.inventoryType ?? "quantity";
  if (inventoryType === "unique" && (input.variations?.length ?? 0) > 1) {
    throw errors.validationFailed([{ param: "variations", code: "invalid", message: "a unique item has a single variation." }]);
  }
  const now = nowIso();
  const itemId = randomUUID();
  const variationInputs = input.variations && input.variations.length > 0 ? input.variations : [{ values: {} as Record<string, string> }];
  const variations: ItemVariationItem[] = variationInputs.map((v, index) => ({
    accountId: principal.accountId,
    itemId,
    variationId: randomUUID(),
    variationNumber: index + 1,
    values: v.values,
    sku: "sku" in v ? (v.sku ?? undefined) : undefined,
    barcode: "barcode" in v ? (v.barcode ?? undefined) : undefined,
    unitPriceOverride: "unit_price_override" in v ? moneyOrUndefined(v.unit_price_override) : undefined,
    unitCostOverride: "unit_cost_override" in v ? moneyOrUndefined(v.unit_cost_override) : undefined,
    createdAt: now,
    updatedAt: now,
  }));
  const variationSkus = variations.map((v) => v.sku).filter(Boolean) as string[];
  const item = {
    accountId: principal.accountId,
    itemId,
    name: "",
    nameKey: "",
    categoryKey: "none",
    inventoryType,
    threshold: 0,
    published: false,
    archived: false,
    sold: false,
    documentCount: 0,
    variationCount: variations.length,
    adjustmentCount: 0,
    stockVersion: 0,
    stock: {},
    variationIds: variations.map((v) => v.variationId),
    rowIndex: {},
    createdAt: now,
    updatedAt: now,
    ...changes.set,
  } as Omit<ItemRecord, "number">;
  item.skuKey = [item.sku, ...variationSkus].filter(Boolean).join(" ").toLowerCase() || undefined;
  const categoryNames = new Map(category ? [[category.categoryId, category.name]] : []);
  const present = (number: number) => presentItem({ ...item, number } as ItemRecord, { principal, categoryNames });
  const { number, result } = await insertItem(item, variations, changes.references, (number) => ({ completion, body: present(number) }));
  if (!result.ok) throw errors.validationFailed(result.references);
  return present(number);
}

export async function getItem(principal: Principal, itemId: string) {
  requireList(principal);
  // The item (settled: no hold half-seen) and the category names in parallel: one round trip.
  const [[item], categories] = await Promise.all([
    readSettledItems(principal.accountId, async () => [await readItem(principal.accountId, itemId)]),
    queryItemCategories(principal.accountId),
  ]);
  if (!item) throw errors.resourceMissing("item", itemId);
  return presentItem(item, { principal, categoryNames: new Map(categories.map((c) => [c.categoryId, c.name])) });
}

/** Updates the fields sent; `archived` archives or restores. */
export async function updateItem(principal: Principal, itemId: string, body: ItemUpdateBody, completion: IdempotencyCompletion | undefined) {
  requireModify(principal);
  const input = withCostPermission(principal, body);
  const references = await readReferences(principal.accountId, input);
  return retrying(
    "update item",
    async () => {
      const [previous] = await readSettledItems(principal.accountId, async () => [await readItem(principal.accountId, itemId)]);
      if (!previous) throw errors.resourceMissing("item", itemId);
      const category = references.category ?? (previous.categoryId ? await readItemCategory(principal.accountId, previous.categoryId) : undefined);
      const changes = itemChanges(input, category, references.unitName);
      if (changes.set.inventoryType && changes.set.inventoryType !== previous.inventoryType) {
        const onHand = sumBalances(Object.values(itemStock(previous))).onHand;
        if (onHand !== 0 || previous.variationCount > 1) {
          throw errors.validationFailed([
            { param: "inventory_type", code: "invalid", message: "cannot change while the item has stock or several variations." },
          ]);
        }
      }
      let updatedAt = nowIso();
      if (updatedAt <= previous.updatedAt) updatedAt = new Date(Date.parse(previous.updatedAt) + 1).toISOString();
      const set = { ...changes.set, updatedAt };
      if ("sku" in set || changes.remove.includes("sku")) {
        const tree = await readItemTree(principal.accountId, itemId);
        const skus = [set.sku ?? (changes.remove.includes("sku") ? undefined : previous.sku), ...tree.variations.map((v) => v.sku)].filter(Boolean);
        if (skus.length > 0) set.skuKey = skus.join(" ").toLowerCase();
      }
      const next = { ...previous, ...set } as ItemRecord;
      for (const attribute of changes.remove) delete (next as Record<string, unknown>)[attribute];
      const categoryNames = new Map(category ? [[category.categoryId, category.name]] : []);
      if (sameRecord(previous, next, UPDATED_AT)) return presentItem(previous, { principal, categoryNames }); // sent back as read: nothing to write
      const resource = presentItem(next, { principal, categoryNames });
      const result = await replaceItem(previous, { set, remove: changes.remove.filter((a) => !(a in set)) }, changes.references, {
        completion,
        body: resource,
      });
      if (result.ok) return resource;
      if (result.references.length > 0) throw errors.validationFailed(result.references);
      return RETRY;
    },
    undefined,
    [itemLockName(principal.accountId, itemId)],
  );
}

/** Deletes an item that no document references (else 422 on `document_count`). */
export async function deleteItem(principal: Principal, itemId: string, completion: IdempotencyCompletion | undefined) {
  requireModify(principal);
  const resource = { id: itemId, object: "item" as const, deleted: true as const };
  return retrying(
    "delete item",
    async () => {
      const tree = await readSettledItemTree(principal.accountId, itemId);
      if (!tree.item) throw errors.resourceMissing("item", itemId);
      if (tree.item.documentCount > 0) {
        throw errors.validationFailed([
          {
            param: "document_count",
            code: "has_documents",
            message: `the item is referenced by ${tree.item.documentCount} document(s) and cannot be deleted.`,
          },
        ]);
      }
      const result = await removeItem(tree.item, tree.variations, tree.rows, { completion, body: resource });
      return result.ok ? resource : RETRY;
    },
    undefined,
    [itemLockName(principal.accountId, itemId)],
  );
}

export interface ItemListQuery {
  q?: string;
  category_id?: string;
  location_id?: string;
  ids?: string;
  archived?: string;
  include_sold?: string;
}

function parseListQuery(principal: Principal, query: ItemListQuery) {
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

/**
 * Lists items ordered by name. `ids` returns every existing requested item (archived and sold
 * too) in one response, whatever `limit` says; otherwise archived and sold items are left out
 * unless asked for, `q` searches name and SKU (and the exact number), `category_id` narrows.
 */
export async function listItems(principal: Principal, url: string, page: PageRequest, query: ItemListQuery): Promise<ListEnvelope<Record<string, unknown>>> {
  requireList(principal);
  const { filter, ids, categoryId, locationId, needle } = parseListQuery(principal, query);
  const present = async (items: ItemRecord[]) => {
    const names = await categoryNames(principal.accountId, items);
    return items.map((item) => presentItem(item, { principal, categoryNames: names, locationId }));
  };
  const byName = (a: ItemRecord, b: ItemRecord) => (a.nameKey < b.nameKey ? -1 : a.nameKey > b.nameKey ? 1 : a.itemId < b.itemId ? -1 : 1);
  if (ids) {
    const [items, categories] = await Promise.all([
      readSettledItems(principal.accountId, () => readItems(principal.accountId, ids)),
      queryItemCategories(principal.accountId).then((all) => new Map(all.map((c) => [c.categoryId, c.name]))),
    ]);
    const data = items.sort(byName).map((item) => presentItem(item, { principal, categoryNames: categories, locationId }));
    return listEnvelope(url, { page: 1, limit: ids.length }, data.length, data);
  }
  if (needle || categoryId) {
    const number = needle && /^\d{1,15}$/.test(needle) ? Number(needle) : undefined;
    const { total, itemIds } = await searchItemPage(principal.accountId, filter, { categoryId, needle, number }, (page.page - 1) * page.limit, page.limit);
    const items = (await readSettledItems(principal.accountId, () => readItems(principal.accountId, itemIds, { consistent: false }))).sort(byName);
    return listEnvelope(url, page, total, await present(items));
  }
  const offset = (page.page - 1) * page.limit;
  const [counters, items] = await Promise.all([
    readInventoryCounters(principal.accountId, true),
    readSettledItems(principal.accountId, () => queryItemPage(principal.accountId, filter, offset, page.limit)),
  ]);
  const counted =
    (counters?.items_00 ?? 0) +
    (filter.includeArchived ? (counters?.items_10 ?? 0) : 0) +
    (filter.includeSold ? (counters?.items_01 ?? 0) : 0) +
    (filter.includeArchived && filter.includeSold ? (counters?.items_11 ?? 0) : 0);
  const total = items.length > 0 ? Math.max(counted, offset + items.length) : counted;
  return listEnvelope(url, page, total, await present(items));
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

/** An item's variations (one Query reads the item, its variations and its stock rows). */
export async function listVariations(principal: Principal, itemId: string, url: string, page: PageRequest, include: string | undefined) {
  requireList(principal);
  const tree = await readSettledItemTree(principal.accountId, itemId);
  if (!tree.item) throw errors.resourceMissing("item", itemId);
  return pageOfAll(
    url,
    page,
    tree.variations.map((v) => presentVariation(principal, v, tree.rows, include === "locations")),
  );
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

/**
 * Adjusts the on-hand stock of one item-variation-location (the first stock at a location
 * creates its row). Refuses to take on hand below zero (422). One transaction writes the
 * balance, its history entry, the item's figures and the request's stored outcome.
 */
export async function adjustItem(principal: Principal, itemId: string, input: AdjustmentBody, completion: IdempotencyCompletion | undefined) {
  requireModify(principal);
  requireReachableLocation(principal, "location_id", input.location_id);
  const tree = await readItemTree(principal.accountId, itemId);
  if (!tree.item) throw errors.resourceMissing("item", itemId);
  const variationId = resolveVariation(tree.variations, tree.rows, input);
  try {
    const result = await postStockChanges({
      accountId: principal.accountId,
      source: { sourceType: "adjustment", userId: principal.userId, reason: input.reason ?? undefined },
      changes: [{ itemId, variationId, locationId: input.location_id, deltas: { onHand: input.quantity } }],
      itemAdds: new Map([[itemId, { adjustmentCount: 1 }]]),
      extra: (tx) => checkReferences(tx, principal.accountId, [{ param: "location_id", kind: "location", id: input.location_id }]),
      respond: (write) => ({ completion, body: presentAdjustment(write.history[0]!) }),
      known: {
        items: new Map([[itemId, tree.item]]),
        rows: new Map(tree.rows.map((row) => [rowKeyOf(row), row])),
      },
    });
    if (result.rejected) throw errors.validationFailed(referenceDetails(result.rejected));
    return presentAdjustment(result.write.history[0]!);
  } catch (error) {
    if (error instanceof StockRuleError) {
      const [code, message]: [DetailCode, string] =
        error.rule === "unique_quantity"
          ? ["unique_item", "a unique item can have at most one unit on hand."]
          : error.rule === "no_effect"
            ? ["no_effect", "the adjustment would not move the stock."]
            : ["insufficient_stock", "the adjustment would take on-hand stock below zero."];
      throw errors.validationFailed([{ param: "quantity", code, message }]);
    }
    throw error;
  }
}

function resolveVariation(variations: readonly ItemVariationItem[], rows: readonly StockRowItem[], input: AdjustmentBody): string {
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

/** An item's adjustments, newest first (a restricted user sees its location's only). */
export async function listAdjustments(principal: Principal, itemId: string, url: string, page: PageRequest) {
  requireList(principal);
  const [item] = await readSettledItems(principal.accountId, async () => [await readItem(principal.accountId, itemId)]);
  if (!item) throw errors.resourceMissing("item", itemId);
  const restriction = locationRestriction(principal);
  if (restriction !== null) {
    const all = await queryHistory(principal.accountId, itemId, "adjustment", 0, Number.MAX_SAFE_INTEGER);
    return pageOfAll(url, page, all.filter((e) => e.locationId === restriction).map(presentAdjustment));
  }
  const offset = (page.page - 1) * page.limit;
  const entries = await queryHistory(principal.accountId, itemId, "adjustment", offset, page.limit);
  const total = entries.length > 0 ? Math.max(item.adjustmentCount, offset + entries.length) : item.adjustmentCount;
  return listEnvelope(url, page, total, entries.map(presentAdjustment));
}

/** The account's units of measure, by `unit_id`. */
export async function listUnits(principal: Principal, url: string, page: PageRequest) {
  requireList(principal);
  const units = (await queryUnits(principal.accountId)).sort((a, b) => a.unitId - b.unitId);
  return pageOfAll(
    url,
    page,
    units.map((unit) => ({ object: "unit" as const, unit_id: unit.unitId, name: unit.name })),
  );
}
