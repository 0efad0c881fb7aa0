import { nowIso } from "../../core/clock.js";
import { randomUUID } from "node:crypto";
import { requirePermission, type Principal } from "../../auth/permissions.js";
import { PARENT_LABEL, insertItemCategory, queryItemCategories, readItemCategory, replaceItemCategory } from "../../db/item-categories.js";
import { RETRY, retrying } from "../../db/retry.js";
import { itemIdsInCategory, readItem, readItems, replaceItemFieldValues } from "../../db/items.js";
import { ENTITY_ATTRIBUTE } from "../../core/entity-attribute.js";
import type { ItemCategoryItem } from "../../db/service.js";
import { errors, type ValidationDetail } from "../../core/errors.js";
import type { IdempotencyCompletion } from "../../core/idempotency.js";
import { pageOfAll, type ListEnvelope, type PageRequest } from "../../core/pagination.js";
import type { ItemCategoryCreateBody, ItemCategoryUpdateBody } from "../../schemas/item-categories.js";
import { compareByName } from "../common/ordering.js";

/** Item categories: spec part 1, sections 2.4 and 4.2. */

export interface CustomFieldDefinition {
  id: string;
  name: string;
  display_order: number;
  display_on_inventory_list: boolean;
  publish_on_documents: boolean;
}

export interface ItemCategoryResource {
  id: string;
  object: "item_category";
  name: string;
  parent_id: string | null;
  inventory_type: "quantity" | "unique";
  custom_fields: CustomFieldDefinition[];
}

type StoredField = NonNullable<ItemCategoryItem["customFields"]>[number];

export function presentItemCategory(category: ItemCategoryItem): ItemCategoryResource {
  return {
    id: category.categoryId,
    object: "item_category",
    name: category.name,
    parent_id: category.parentId === "root" ? null : category.parentId,
    inventory_type: category.inventoryType,
    custom_fields: (category.customFields ?? []).map((field, index) => ({
      id: field.id,
      name: field.name,
      display_order: index + 1,
      display_on_inventory_list: field.displayOnInventoryList,
      publish_on_documents: field.publishOnDocuments,
    })),
  };
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The `parent_id` filter of the list: `root`, a UUID, or 422 `invalid_query_parameter`. */
export function parseParentFilter(value: string | undefined): "root" | string | undefined {
  if (value === undefined) return undefined;
  if (value === "root") return "root";
  if (UUID.test(value)) return value.toLowerCase();
  throw errors.invalidQueryParameter("parent_id", "parent_id must be `root` or a category UUID.");
}

/** Weight, then name (case-insensitive), then id. */
function compareCategories(a: ItemCategoryItem, b: ItemCategoryItem): number {
  if (a.weight !== b.weight) return a.weight - b.weight;
  return compareByName({ name: a.name, id: a.categoryId }, { name: b.name, id: b.categoryId });
}

/** Lists categories (all are visible, even to location-restricted users) with `q` and `parent_id`. */
export async function listItemCategories(
  principal: Principal,
  url: string,
  page: PageRequest,
  filters: { q?: string; parentId?: string },
): Promise<ListEnvelope<ItemCategoryResource>> {
  const parent = parseParentFilter(filters.parentId);
  const needle = filters.q?.trim().toLowerCase();
  const categories = await queryItemCategories(principal.accountId);
  // A UUID that is no category of the account is an invalid filter (spec part 1, 2.1 and 4.2),
  // as for every list filter naming a record; a category without children lists nothing.
  if (parent !== undefined && parent !== "root" && !categories.some((category) => category.categoryId === parent)) {
    throw errors.invalidQueryParameter("parent_id", "parent_id must be `root` or the id of a category of this account.");
  }
  const matching = categories
    .filter((category) => parent === undefined || category.parentId === parent)
    .filter((category) => !needle || category.name.toLowerCase().includes(needle))
    .sort(compareCategories);
  return pageOfAll(url, page, matching.map(presentItemCategory));
}

export async function getItemCategory(principal: Principal, categoryId: string): Promise<ItemCategoryResource> {
  const category = await readItemCategory(principal.accountId, categoryId);
  if (!category) throw errors.resourceMissing("item category", categoryId);
  return presentItemCategory(category);
}

type FieldInput = NonNullable<ItemCategoryUpdateBody["custom_fields"]>[number];

/**
 * Resolves the complete desired custom-field list: an `id` keeps that existing field (with
 * the new name, and the flags sent; a flag left out keeps its value), no `id` adds a field
 * (flags default to false), an existing field left out is deleted.
 */
export function resolveCustomFields(existing: readonly StoredField[], desired: readonly FieldInput[]): StoredField[] {
  const known = new Map(existing.map((field) => [field.id, field]));
  const seen = new Set<string>();
  const details: ValidationDetail[] = [];
  const fields = desired.map((input, index) => {
    if (input.id !== undefined) {
      if (!known.has(input.id)) {
        details.push({ param: `custom_fields[${index}].id`, code: "not_found", message: "is not a custom field of this category." });
      } else if (seen.has(input.id)) {
        details.push({ param: `custom_fields[${index}].id`, code: "duplicate", message: "appears more than once." });
      }
      seen.add(input.id);
    }
    const kept = input.id === undefined ? undefined : known.get(input.id);
    return {
      id: input.id ?? randomUUID(),
      name: input.name,
      displayOnInventoryList: input.display_on_inventory_list ?? kept?.displayOnInventoryList ?? false,
      publishOnDocuments: input.publish_on_documents ?? kept?.publishOnDocuments ?? false,
    };
  });
  if (details.length > 0) throw errors.validationFailed(details);
  return fields;
}

/**
 * The category's deleted field ids once `fields` replace its fields: each field it drops joins
 * them, so items' values for it are hidden from then on and refused on write (spec part 1,
 * section 2.1: every id must belong to a custom field of the record kind).
 */
function withDeletedFields(previous: ItemCategoryItem, fields: readonly StoredField[]): Pick<ItemCategoryItem, "deletedFieldIds"> {
  const kept = new Set(fields.map((field) => field.id));
  const dropped = (previous.customFields ?? []).map((field) => field.id).filter((id) => !kept.has(id));
  return previous.deletedFieldIds || dropped.length > 0 ? { deletedFieldIds: [...(previous.deletedFieldIds ?? []), ...dropped] } : {};
}

const parentInvalid = () =>
  errors.validationFailed([{ param: "parent_id", code: "invalid_reference", message: "must be a top-level item category of this account." }]);

/** Creates a category; a parent must be an existing top-level category of the account. */
export async function createItemCategory(
  principal: Principal,
  input: ItemCategoryCreateBody,
  completion: IdempotencyCompletion | undefined,
): Promise<ItemCategoryResource> {
  requirePermission(principal, "inventory.modify");
  const now = nowIso();
  const category: ItemCategoryItem = {
    accountId: principal.accountId,
    categoryId: randomUUID(),
    name: input.name,
    parentId: input.parent_id ?? "root",
    inventoryType: input.inventory_type,
    weight: 0,
    childCount: 0,
    customFields: resolveCustomFields([], input.custom_fields),
    createdAt: now,
    updatedAt: now,
  };
  const resource = presentItemCategory(category);
  const failed = await insertItemCategory(category, { completion, body: resource });
  if (failed) throw parentInvalid();
  return resource;
}

/**
 * Updates a category: fields sent replace the stored ones; `custom_fields` is the complete
 * desired list. A category cannot be its own parent, and one with subcategories cannot get a
 * parent (the tree has two levels).
 */
export async function updateItemCategory(
  principal: Principal,
  categoryId: string,
  input: ItemCategoryUpdateBody,
  completion: IdempotencyCompletion | undefined,
): Promise<ItemCategoryResource> {
  requirePermission(principal, "inventory.modify");
  return retrying("update item category", async () => {
    const previous = await readItemCategory(principal.accountId, categoryId);
    if (!previous) throw errors.resourceMissing("item category", categoryId);
    const parentId = input.parent_id === undefined ? previous.parentId : (input.parent_id ?? "root");
    if (parentId === categoryId) {
      throw errors.validationFailed([{ param: "parent_id", code: "invalid_reference", message: "cannot be the category itself." }]);
    }
    if (parentId !== "root" && previous.childCount > 0) {
      throw errors.validationFailed([{ param: "parent_id", code: "has_children", message: "a category with subcategories cannot have a parent." }]);
    }
    const customFields = input.custom_fields === undefined ? previous.customFields : resolveCustomFields(previous.customFields ?? [], input.custom_fields);
    const next: ItemCategoryItem = {
      ...previous,
      name: input.name ?? previous.name,
      inventoryType: input.inventory_type ?? previous.inventoryType,
      parentId,
      customFields,
      ...withDeletedFields(previous, customFields ?? []),
      updatedAt: nowIso(),
    };
    if (next.updatedAt === previous.updatedAt) next.updatedAt = new Date(Date.parse(previous.updatedAt) + 1).toISOString();
    const resource = presentItemCategory(next);
    const cancellation = await replaceItemCategory(previous, next, { completion, body: resource });
    if (!cancellation) return resource;
    if (cancellation.failed(PARENT_LABEL)) throw parentInvalid();
    // The category changed (or gained children) since it was read: read it again.
    return RETRY;
  });
}

/** Custom fields deleted from an item category, as a stream record shows them (its `deletedFieldIds` grew). */
export interface DeletedCategoryFields {
  accountId: string;
  categoryId: string;
  fieldIds: string[];
}

export function deletedCategoryFieldsOf(
  image: Record<string, unknown> | undefined,
  oldImage: Record<string, unknown> | undefined,
): DeletedCategoryFields | undefined {
  if (image?.[ENTITY_ATTRIBUTE] !== "itemcategory") return undefined;
  const before = new Set((oldImage?.deletedFieldIds as string[] | undefined) ?? []);
  const fieldIds = ((image.deletedFieldIds as string[] | undefined) ?? []).filter((id) => !before.has(id));
  return fieldIds.length > 0 ? { accountId: String(image.accountId), categoryId: String(image.categoryId), fieldIds } : undefined;
}

/**
 * After custom fields left an item category (the stream processor), its items drop their values
 * for them: they were hidden at once (`liveFieldValues`); now the stored item changes too, so the
 * feed marks it and a synced copy follows. Each item is written on condition that it is
 * unchanged since read (else read again; `updatedAt` is kept: no one edited it). Idempotent.
 * Returns how many items changed.
 */
export async function dropDeletedFieldValues(deletions: readonly DeletedCategoryFields[]): Promise<number> {
  let changed = 0;
  for (const { accountId, categoryId, fieldIds } of deletions) {
    const deleted = new Set(fieldIds);
    const holding = (await readItems(accountId, await itemIdsInCategory(accountId, categoryId))).filter((item) =>
      (item.customFieldValues ?? []).some((value) => deleted.has(value.id)),
    );
    await Promise.all(
      holding.map(async (read) => {
        let item: typeof read | undefined = read;
        for (let attempt = 0; item && attempt < 5; attempt++) {
          const kept = (item.customFieldValues ?? []).filter((value) => !deleted.has(value.id));
          if (kept.length === (item.customFieldValues ?? []).length) return;
          if (await replaceItemFieldValues(item, kept)) {
            changed++;
            return;
          }
          item = await readItem(accountId, read.itemId);
        }
      }),
    );
  }
  return changed;
}
