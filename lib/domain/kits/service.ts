import { itemStock } from "../inventory/stock-changes.js";
import { locationRestriction, requirePermission, type Principal } from "../../auth/permissions.js";
import { mayReachLocation } from "../common/location-access.js";
import { queryItemCategories, readItemCategory } from "../../db/item-categories.js";
import { readItem, readItems, readVariations } from "../../db/items.js";
import { queryBuilds, queryKits, readKit } from "../../db/kits.js";
import { readLocation, readLocations } from "../../db/locations.js";
import type { ItemRecord, KitBuildItem, KitItem, LocationItem } from "../../db/service.js";
import { errors } from "../../core/errors.js";
import { listEnvelope, type ListEnvelope, type PageRequest } from "../../core/pagination.js";
import { sumBalances } from "../inventory/math.js";
import { visibleStats, type KitDefinition, type LocationStats } from "./planning.js";

/**
 * Kits (spec part 2, sections 2.7, 3.7 and 4.7; architecture section 8, "Kit builds"): the kit
 * list, a kit with its components, build history, assembly and disassembly. Definitions are
 * written by operators only (`npm run admin -- kit create`). Builds move stock only through
 * the inventory ledger, in ONE transaction with the build records (see `assembleKit` in
 * `builds.ts`). This file holds the reads and how kits and builds are shown.
 */

const orNull = <T>(value: T | undefined): T | null => (value === undefined ? null : value);
const requireList = (principal: Principal) => requirePermission(principal, "inventory.list");
export const requireModify = (principal: Principal) => requirePermission(principal, "inventory.modify");

/** A kit is served while its assembled item exists and is not archived ("active kit-backed item"). */
export const isActive = (item: ItemRecord | undefined): item is ItemRecord => item !== undefined && !item.archived;

/** A stored kit as the planner reads it (a component without an id or position takes its place in the list). */
export function definitionOf(kit: KitItem): KitDefinition {
  return {
    kitId: kit.kitId,
    number: kit.number,
    itemId: kit.itemId,
    variationId: kit.variationId ?? "",
    method: kit.method,
    components: kit.components.map((c, i) => ({
      id: c.id ?? `${kit.kitId}:${i}`,
      itemId: c.itemId,
      itemVariationId: c.itemVariationId,
      variationId: c.variationId ?? "",
      quantity: c.quantity,
      position: c.position ?? i + 1,
    })),
  };
}

export const statsOf = (kit: KitItem) => (kit.buildStats ?? {}) as Record<string, LocationStats>;

// ---------------------------------------------------------------------------------------------
// Presentation

function visibleOnHand(principal: Principal, item: ItemRecord): number {
  const stock = itemStock(item);
  const restriction = locationRestriction(principal);
  const rows = restriction === null ? Object.values(stock) : stock[restriction] ? [stock[restriction]] : [];
  return sumBalances(rows).onHand;
}

export function presentKit(principal: Principal, kit: KitItem, item: ItemRecord, categoryName: string | null): Record<string, unknown> {
  const stats = visibleStats(statsOf(kit), locationRestriction(principal));
  return {
    id: kit.kitId,
    object: "kit",
    kit_number: kit.number,
    item_id: kit.itemId,
    item_number: item.number,
    name: item.name,
    description: orNull(item.description),
    sku: orNull(item.sku),
    barcode: orNull(item.barcode),
    category_id: orNull(item.categoryId),
    category_name: item.categoryId ? categoryName : null,
    quantity: visibleOnHand(principal, item),
    pieces: kit.components.length,
    assembly_method: kit.method,
    build_count: stats.count,
    last_built_at: stats.lastBuiltAt,
    created_at: kit.createdAt,
    // biome-ignore lint/complexity/useMathMinMax: ISO instants (strings), the later one
    updated_at: kit.updatedAt > item.updatedAt ? kit.updatedAt : item.updatedAt,
  };
}

export function presentBuild(build: KitBuildItem, location: LocationItem | undefined): Record<string, unknown> {
  return {
    id: build.buildId,
    object: "kit_build",
    kit_id: build.kitId,
    location: { id: build.locationId, name: location?.active ? location.name : null },
    quantity: build.quantity,
    assembly_method: build.method,
    parent_kit: build.parentKitId ? { id: build.parentKitId, kit_number: build.parentKitNumber ?? null } : null,
    user: { id: build.userId, name: orNull(build.userName) },
    created_at: build.createdAt,
  };
}

/** The kit and its assembled item, or 404 when either is missing or the item is archived. */
async function readActiveKit(accountId: string, kitId: string): Promise<{ kit: KitItem; item: ItemRecord }> {
  const kit = await readKit(accountId, kitId);
  const item = kit ? await readItem(accountId, kit.itemId) : undefined;
  if (!kit || !isActive(item)) throw errors.resourceMissing("kit", kitId);
  return { kit, item };
}

async function categoryNameOf(accountId: string, item: ItemRecord): Promise<string | null> {
  if (!item.categoryId) return null;
  return (await readItemCategory(accountId, item.categoryId))?.name ?? null;
}

// ---------------------------------------------------------------------------------------------
// Reads

export interface KitListQuery {
  q?: string;
  assembly_method?: "manual" | "automatic";
}

/**
 * Lists the account's active kits (assembled item present and not archived) by kit number, the
 * kit's own stable identifier: an assembled item can be renamed, a kit number never changes, so
 * pages stay stable. `q` searches the assembled item's name and SKU; a whole number also
 * matches the kit number. Reads every kit definition of the account (one Query) and their
 * assembled items (BatchGetItem per 100): kit definitions are a small, operator-made collection.
 */
export async function listKits(principal: Principal, url: string, page: PageRequest, query: KitListQuery): Promise<ListEnvelope<Record<string, unknown>>> {
  requireList(principal);
  const accountId = principal.accountId;
  const kits = (await queryKits(accountId)).filter((kit) => query.assembly_method === undefined || kit.method === query.assembly_method);
  const itemIds = [...new Set(kits.map((kit) => kit.itemId))];
  const chunks: string[][] = [];
  for (let i = 0; i < itemIds.length; i += 100) chunks.push(itemIds.slice(i, i + 100));
  const items = new Map((await Promise.all(chunks.map((chunk) => readItems(accountId, chunk)))).flat().map((item) => [item.itemId, item]));
  const needle = query.q?.trim().toLowerCase() || undefined;
  const number = needle !== undefined && /^\d{1,15}$/.test(needle) ? Number(needle) : undefined;
  const matches = kits
    .filter((kit) => isActive(items.get(kit.itemId)))
    .filter((kit) => {
      if (needle === undefined) return true;
      const item = items.get(kit.itemId)!;
      return item.nameKey.includes(needle) || (item.skuKey ?? "").includes(needle) || kit.number === number;
    })
    .sort((a, b) => a.number - b.number);
  const start = (page.page - 1) * page.limit;
  const pageKits = matches.slice(start, start + page.limit);
  const categories = pageKits.some((kit) => items.get(kit.itemId)!.categoryId)
    ? new Map((await queryItemCategories(accountId)).map((c) => [c.categoryId, c.name]))
    : new Map<string, string>();
  const data = pageKits.map((kit) => {
    const item = items.get(kit.itemId)!;
    return presentKit(principal, kit, item, item.categoryId ? (categories.get(item.categoryId) ?? null) : null);
  });
  return listEnvelope(url, page, matches.length, data);
}

/** A kit with its components ordered by position. */
export async function getKit(principal: Principal, kitId: string): Promise<Record<string, unknown>> {
  requireList(principal);
  const accountId = principal.accountId;
  const { kit, item } = await readActiveKit(accountId, kitId);
  const definition = definitionOf(kit);
  const selected = definition.components.filter((c) => c.itemVariationId).map((c) => ({ itemId: c.itemId, variationId: c.itemVariationId! }));
  const [componentItems, variations, categoryName] = await Promise.all([
    readItems(
      accountId,
      definition.components.map((c) => c.itemId),
    ),
    readVariations(accountId, selected),
    categoryNameOf(accountId, item),
  ]);
  const itemsById = new Map(componentItems.map((i) => [i.itemId, i]));
  const variationsById = new Map(variations.map((v) => [v.variationId, v]));
  const components = [...definition.components]
    .sort((a, b) => a.position - b.position)
    .map((component) => {
      const componentItem = itemsById.get(component.itemId);
      const variation = component.itemVariationId ? variationsById.get(component.itemVariationId) : undefined;
      return {
        id: component.id,
        object: "kit_component",
        item_id: component.itemId,
        item_variation_id: orNull(component.itemVariationId),
        name: orNull(componentItem?.name),
        sku: orNull(component.itemVariationId ? variation?.sku : componentItem?.sku),
        barcode: orNull(component.itemVariationId ? variation?.barcode : componentItem?.barcode),
        quantity: component.quantity,
        position: component.position,
      };
    });
  return { ...presentKit(principal, kit, item, categoryName), components };
}

/**
 * A kit's builds, newest first. `location_id` (an active location of the account) narrows to
 * one location; a user assigned to a location sees only its location's builds, and naming
 * another location is 422 `invalid_query_parameter` (it cannot widen the user's access).
 * `total_records` comes from the kit's per-location build counts (no counting read).
 */
export async function listBuilds(principal: Principal, kitId: string, url: string, page: PageRequest, locationId: string | undefined) {
  requireList(principal);
  const accountId = principal.accountId;
  const restriction = locationRestriction(principal);
  if (locationId !== undefined && !mayReachLocation(principal, locationId)) {
    throw errors.invalidQueryParameter("location_id", "location_id is outside your location.");
  }
  const [{ kit }, location] = await Promise.all([
    readActiveKit(accountId, kitId),
    locationId === undefined ? Promise.resolve(undefined) : readLocation(accountId, locationId),
  ]);
  if (locationId !== undefined && !location?.active) {
    throw errors.invalidQueryParameter("location_id", "location_id is not an active location of this account.");
  }
  const effective = locationId ?? restriction ?? undefined;
  const total = visibleStats(statsOf(kit), effective ?? null).count;
  const offset = (page.page - 1) * page.limit;
  const builds = await queryBuilds(accountId, kitId, effective, offset, page.limit);
  const locations = new Map(
    (
      await readLocations(
        accountId,
        builds.map((b) => b.locationId),
      )
    ).map((l) => [l.locationId, l]),
  );
  const data = builds.map((build) => presentBuild(build, locations.get(build.locationId)));
  return listEnvelope(url, page, builds.length > 0 ? Math.max(total, offset + builds.length) : total, data);
}
