import { setTimeout as sleep } from "node:timers/promises";
import { readSettledItemTree, readSettledItems } from "../inventory/reads.js";
import { itemLockName } from "../inventory/settling.js";
import { referenceDetail } from "../../core/errors.js";
import { rowKeyOf } from "../../core/records.js";
import { nowIso, laterUpdatedAt } from "../../core/clock.js";
import { StockRuleError } from "../../core/failures.js";
import { randomUUID } from "node:crypto";
import { locationRestriction, requirePermission, type Principal } from "../../auth/permissions.js";
import { mayReachLocation, requireReachableLocation } from "../common/location-access.js";
import { queryItemCategories, readItemCategory } from "../../db/item-categories.js";
import { queryHistory, readItemTree } from "../../db/inventory.js";
import { readLocation } from "../../db/locations.js";
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
} from "../../db/items.js";
import { checkReferences, referenceDetails } from "../../db/references.js";
import { documentsReferencingItem } from "../../db/documents.js";
import { RETRY, retrying } from "../../db/retry.js";
import type { ItemRecord, ItemVariationItem } from "../../db/service.js";
import { errors, type DetailCode, type ValidationDetail } from "../../core/errors.js";
import type { IdempotencyCompletion } from "../../core/idempotency.js";
import { listEnvelope, pageOfAll, type ListEnvelope, type PageRequest } from "../../core/pagination.js";
import type { AdjustmentBody, ItemCreateBody, ItemUpdateBody } from "../../schemas/items.js";
import { postStockChanges } from "../inventory/service.js";
import { itemStock, pendingJournalsOf } from "../inventory/stock-changes.js";
import { BALANCE_FIELDS, MAX_STOCK_BALANCE } from "../inventory/math.js";
import { sameRecord, UPDATED_AT } from "../../core/records.js";
import { replaceOutcome } from "./record-writes.js";
import {
  type CategoryView,
  categoryView,
  itemChanges,
  liveFieldValues,
  moneyOrUndefined,
  parseListQuery,
  presentAdjustment,
  presentItem,
  presentVariation,
  resolveVariation,
  withCostPermission,
  type ItemListQuery,
} from "./item-model.js";

/**
 * Items, variations, units and adjustments (architecture section 4, "Items, variations and
 * stock"): reads and writes here, presentation and write rules in `item-model.ts`.
 */

/** The categories presenting `items` needs (none read when no item has one). */
async function categoriesOf(accountId: string, items: readonly ItemRecord[]): Promise<CategoryView> {
  if (!items.some((item) => item.categoryId)) return categoryView([]);
  return categoryView(await queryItemCategories(accountId));
}

/** Reads need the inventory-list permission (architecture section 4). */
const requireList = (principal: Principal) => requirePermission(principal, "inventory.list");
const requireModify = (principal: Principal) => requirePermission(principal, "inventory.modify");

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
  // The location rule (architecture section 8): a restricted user names only their location.
  requireReachableLocation(principal, "location_id", input.location_id);
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
  const categories = categoryView([category]);
  const present = (number: number) => presentItem({ ...item, number } as ItemRecord, { principal, categories });
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
  return presentItem(item, { principal, categories: categoryView(categories) });
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
      // A location sent back as stored is kept; a new one must be the caller's (the location rule).
      if (input.location_id !== previous.locationId) requireReachableLocation(principal, "location_id", input.location_id);
      // A new category drops the former category's field values; values sent with it are checked as
      // usual, one sent back as read included (it is kept unchecked only while the category stays).
      const categoryChanges = input.category_id !== undefined && input.category_id !== (previous.categoryId ?? null);
      const dropsFormerValues = categoryChanges && input.custom_field_values === undefined;
      // The stored category is read only when it matters: to check values against it, or to drop its values;
      // every category when the item holds values (those of fields deleted since are not its own any more).
      const [former, all] = await Promise.all([
        previous.categoryId && (input.category_id === undefined || dropsFormerValues)
          ? readItemCategory(principal.accountId, previous.categoryId)
          : Promise.resolve(undefined),
        (previous.customFieldValues?.length ?? 0) > 0 ? queryItemCategories(principal.accountId) : Promise.resolve(undefined),
      ]);
      // The category the values are checked against: the one sent (none for null), else the stored one.
      const category = input.category_id !== undefined ? references.category : former;
      const categories = categoryView(all ?? [category]);
      const shownValues = liveFieldValues(previous.customFieldValues, categories.deletedFieldIds);
      const changes = itemChanges(input, category, references.unitName, categoryChanges ? [] : shownValues);
      if (dropsFormerValues) {
        const formerFields = new Set((former?.customFields ?? []).map((field) => field.id));
        const kept = (shownValues ?? []).filter((value) => !formerFields.has(value.id));
        if (kept.length !== (previous.customFieldValues ?? []).length) changes.set.customFieldValues = kept;
      }
      if (changes.set.inventoryType && changes.set.inventoryType !== previous.inventoryType) {
        // Any balance (a sent purchase order's incoming units, a sales order's reservation, a
        // transfer in transit) and a sold unit were counted under the old type's rules.
        // Location by location: an oversold location's negative on hand must not hide another's stock.
        const holdsStock = Object.values(itemStock(previous)).some((balances) => BALANCE_FIELDS.some((field) => balances[field] !== 0));
        if (holdsStock || previous.sold || previous.variationCount > 1) {
          throw errors.validationFailed([
            {
              param: "inventory_type",
              code: "invalid",
              message: "cannot change while the item has stock (on hand, reserved, incoming or in transit), is sold, or has several variations.",
            },
          ]);
        }
      }
      const set = { ...changes.set, updatedAt: laterUpdatedAt(previous.updatedAt) };
      if ("sku" in set || changes.remove.includes("sku")) {
        const tree = await readItemTree(principal.accountId, itemId);
        const skus = [set.sku ?? (changes.remove.includes("sku") ? undefined : previous.sku), ...tree.variations.map((v) => v.sku)].filter(Boolean);
        if (skus.length > 0) set.skuKey = skus.join(" ").toLowerCase();
      }
      // What the write removes: the attributes cleared and not set again (a cleared SKU's search
      // key is rebuilt from the variations' SKUs).
      const remove = changes.remove.filter((attribute) => !(attribute in set));
      const next = { ...previous, ...set } as ItemRecord;
      for (const attribute of remove) delete (next as Record<string, unknown>)[attribute];
      // Sent back as read (the values of deleted fields, which no one sees, aside): nothing to write.
      // A deleted field's value sent again is a change, which the write's reference check refuses.
      if (sameRecord({ ...previous, customFieldValues: shownValues }, { ...next, customFieldValues: set.customFieldValues ?? shownValues }, UPDATED_AT)) {
        return presentItem(previous, { principal, categories });
      }
      const resource = presentItem(next, { principal, categories });
      const stockRules = changes.set.inventoryType !== undefined && changes.set.inventoryType !== previous.inventoryType;
      const result = await replaceItem(previous, { set, remove }, changes.references, { completion, body: resource }, { stockRules });
      return replaceOutcome(result, resource);
    },
    undefined,
    [itemLockName(principal.accountId, itemId)],
  );
}

/** How often a deletion looks again at an item a document write has marked (`referencingUntil`). */
const REFERENCE_MARK_POLL_MS = 250;

/** Deletes an item that no document references (else 422 on `document_count`). */
export async function deleteItem(principal: Principal, itemId: string, completion: IdempotencyCompletion | undefined) {
  requireModify(principal);
  const resource = { id: itemId, object: "item" as const, deleted: true as const };
  return retrying(
    "delete item",
    async () => {
      // The item as it was BEFORE the reference intents are read: a document write that commits
      // after this read moves its referenceTick (or stockVersion), which the deletion is
      // conditioned on; one that committed before it left an intent the next read sees.
      const before = await readItem(principal.accountId, itemId);
      if (!before) throw errors.resourceMissing("item", itemId);
      let tree: Awaited<ReturnType<typeof readSettledItemTree>> | undefined;
      const referencing = await documentsReferencingItem(principal.accountId, itemId, async () => {
        tree = await readSettledItemTree(principal.accountId, itemId);
        if (!tree.item) throw errors.resourceMissing("item", itemId);
        return tree.item.documentCount;
      });
      // A write landed between the two reads: its intent may have been missed; read again.
      if (tree?.item && (tree.item.referenceTick !== before.referenceTick || tree.item.stockVersion !== before.stockVersion)) return RETRY;
      if (referencing > 0) {
        throw errors.validationFailed([
          { param: "document_count", code: "has_documents", message: `the item is referenced by ${referencing} document(s) and cannot be deleted.` },
        ]);
      }
      if (!tree?.item) throw errors.resourceMissing("item", itemId);
      // A write in flight that will name the item: a stock hold not ended (a long document's
      // stock), or a reference mark (a document of more distinct items than its transaction can
      // touch). Wait for it, looking again a quarter second apart (the retries stop before the
      // request's deadline: 503 resource_busy): once committed its reference intent refuses this
      // deletion (422); a write that gave up took its mark back, or its hold was released.
      const held = Object.keys(pendingJournalsOf(tree.item)).length > 0;
      const markedFor = (tree.item.referencingUntil ?? 0) - Date.now();
      if (held || markedFor > 0) {
        await sleep(held ? REFERENCE_MARK_POLL_MS : Math.min(markedFor, REFERENCE_MARK_POLL_MS));
        return RETRY;
      }
      const kits = tree.item.kitCount ?? 0;
      if (kits > 0) {
        throw errors.validationFailed([
          {
            param: "kits",
            code: "has_kits",
            message: `the item is the assembled item or a component of ${kits} kit(s) and cannot be deleted (archive it instead).`,
          },
        ]);
      }
      // Deleting the item deletes its stock: a restricted user may do that only at their location.
      const elsewhere = tree.rows.some((row) => !mayReachLocation(principal, row.locationId) && (row.onHand || row.reserved || row.incoming || row.inTransit));
      if (elsewhere) {
        throw errors.validationFailed([
          {
            param: "locations",
            code: "not_allowed",
            message: "the item holds stock at a location outside yours, and only a user of every location can delete it.",
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

/**
 * Lists items ordered by name. `ids` returns every existing requested item (archived and sold
 * too) in one response, whatever `limit` says; otherwise archived and sold items are left out
 * unless asked for, `q` searches name and SKU (and the exact number), `category_id` narrows.
 */
export async function listItems(principal: Principal, url: string, page: PageRequest, query: ItemListQuery): Promise<ListEnvelope<Record<string, unknown>>> {
  requireList(principal);
  const parsed = parseListQuery(principal, query);
  // The filters' ids must name records of the account (spec part 1, section 2.1), checked beside the list's reads.
  const [, list] = await Promise.all([requireFilterRecords(principal.accountId, parsed), listParsedItems(principal, url, page, parsed)]);
  return list;
}

/** 422 `invalid_query_parameter` when `category_id` or `location_id` names no category or location of the account. */
async function requireFilterRecords(accountId: string, { categoryId, locationId }: { categoryId?: string; locationId?: string }): Promise<void> {
  const [category, location] = await Promise.all([
    categoryId === undefined ? undefined : readItemCategory(accountId, categoryId),
    locationId === undefined ? undefined : readLocation(accountId, locationId),
  ]);
  if (categoryId !== undefined && !category) throw errors.invalidQueryParameter("category_id", "category_id must name an item category of this account.");
  if (locationId !== undefined && !location) throw errors.invalidQueryParameter("location_id", "location_id must name a location of this account.");
}

async function listParsedItems(
  principal: Principal,
  url: string,
  page: PageRequest,
  { filter, ids, categoryId, locationId, needle }: ReturnType<typeof parseListQuery>,
): Promise<ListEnvelope<Record<string, unknown>>> {
  const present = async (items: ItemRecord[]) => {
    const categories = await categoriesOf(principal.accountId, items);
    return items.map((item) => presentItem(item, { principal, categories, locationId }));
  };
  const byName = (a: ItemRecord, b: ItemRecord) => (a.nameKey < b.nameKey ? -1 : a.nameKey > b.nameKey ? 1 : a.itemId < b.itemId ? -1 : 1);
  if (ids) {
    const [items, categories] = await Promise.all([
      readSettledItems(principal.accountId, () => readItems(principal.accountId, ids)),
      queryItemCategories(principal.accountId).then(categoryView),
    ]);
    const data = items.sort(byName).map((item) => presentItem(item, { principal, categories, locationId }));
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
      // Deleted since it was read (a parallel DELETE won): as if the adjustment came after it.
      if (error.rule === "unknown_item") throw errors.resourceMissing("item", itemId);
      const [code, message]: [DetailCode, string] =
        error.rule === "unique_quantity"
          ? ["unique_item", "a unique item is counted in whole units: at most one unit, on hand or in transit."]
          : error.rule === "no_effect"
            ? ["no_effect", "the adjustment would not move the stock."]
            : error.rule === "too_large"
              ? ["too_large", `the adjustment would take the item's on-hand stock over ${MAX_STOCK_BALANCE}, the most it can count exactly.`]
              : ["insufficient_stock", "the adjustment would take on-hand stock below zero."];
      throw errors.validationFailed([{ param: "quantity", code, message }]);
    }
    throw error;
  }
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
