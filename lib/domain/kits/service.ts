import { StockRuleError, TransactionTooLargeError } from "../../core/failures.js";
import { randomUUID } from "node:crypto";
import { locationRestriction, requirePermission, type Principal } from "../../auth/permissions.js";
import { mayReachLocation, requireReachableLocation } from "../common/location-access.js";
import { readUser } from "../../db/auth-store.js";
import { queryItemCategories, readItemCategory } from "../../db/item-categories.js";
import { readItem, readItems, readVariations } from "../../db/items.js";
import { nowIso } from "../../db/keys.js";
import {
  BUILD_LABELS,
  addBuildNumbers,
  addBuildRecord,
  addBuildRemoval,
  addKitStats,
  queryBuilds,
  queryKits,
  readBuild,
  readBuildSequence,
  readKit,
  readKitLinks,
  readKits,
} from "../../db/kits.js";
import { readLocation, readLocations } from "../../db/locations.js";
import { checkReferences, referenceDetail, referenceDetails } from "../../db/references.js";
import { RETRY, retrying } from "../../db/retry.js";
import type { ItemRecord, KitBuildItem, KitItem, LocationItem } from "../../db/service.js";
import { MAX_TRANSACTION_ITEMS } from "../../db/transactions.js";
import { errors } from "../../core/errors.js";
import type { IdempotencyCompletion } from "../../core/idempotency.js";
import { listEnvelope, type ListEnvelope, type PageRequest } from "../../core/pagination.js";
import type { KitBuildBody } from "../../schemas/kits.js";
import { MAX_INLINE_CHANGES, STOCK_MOVED, itemLockName, readLedgerState, releaseHold, tryStockChanges, type LedgerState } from "../inventory/service.js";
import { itemStock, type LedgerSource, type StockChange } from "../inventory/ledger-plan.js";
import { foldNowOrLater, holdStock, type StockHold } from "../inventory/stock-holds.js";
import { BALANCE_FIELDS, sumBalances, type Balances } from "../inventory/math.js";
import {
  DisassemblyRefusal,
  KitBuildRefusal,
  planAssembly,
  planDisassembly,
  rowOf,
  splitForJournal,
  statsAfter,
  visibleStats,
  type BuildChange,
  type KitDefinition,
  type LocationStats,
  type PlanItem,
} from "./planning.js";

/**
 * Kits (spec part 2, sections 2.7, 3.7 and 4.7; architecture section 8, "Kit builds"): the kit
 * list, a kit with its components, build history, assembly and disassembly. Definitions are
 * written by operators only (`npm run admin -- kit create`). Builds move stock only through
 * the inventory ledger, in ONE transaction with the build records (see `assembleKit`).
 */

const orNull = <T>(value: T | undefined): T | null => (value === undefined ? null : value);
const requireList = (principal: Principal) => requirePermission(principal, "inventory.list");
const requireModify = (principal: Principal) => requirePermission(principal, "inventory.modify");

/** How deep automatic sub-kits may nest (a deeper definition is refused as invalid). */
export const MAX_KIT_NESTING = 8;

/** A kit is served while its assembled item exists and is not archived ("active kit-backed item"). */
const isActive = (item: ItemRecord | undefined): item is ItemRecord => item !== undefined && !item.archived;

function definitionOf(kit: KitItem): KitDefinition {
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

const planItemOf = (item: ItemRecord): PlanItem => ({
  itemId: item.itemId,
  name: item.name,
  archived: item.archived,
  inventoryType: item.inventoryType,
  cost: item.cost,
  averageCost: item.averageCost,
  stock: itemStock(item),
});

const statsOf = (kit: KitItem) => (kit.buildStats ?? {}) as Record<string, LocationStats>;

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

// ---------------------------------------------------------------------------------------------
// Assembly

interface Closure {
  root: KitDefinition;
  kits: Map<string, KitDefinition>;
  records: Map<string, KitItem>;
  automaticKits: Map<string, string>;
  variationCosts: Map<string, string>;
}

const refused = (error: KitBuildRefusal) => errors.invalidKitBuild(error.message, error.reason === "invalid_definition" ? "kit_id" : "quantity");

/**
 * The definitions a build may reach: the kit, and (level by level: one BatchGetItem of item
 * links, one of kits) every automatic kit whose assembled item is a component, transitively.
 * Definitions never change once written, so they are read once per request.
 */
async function loadClosure(accountId: string, root: KitItem): Promise<Closure> {
  const records = new Map<string, KitItem>([[root.kitId, root]]);
  const automaticKits = new Map<string, string>();
  const seenItems = new Set<string>();
  let frontier: KitItem[] = [root];
  for (let depth = 0; frontier.length > 0; depth++) {
    if (depth > MAX_KIT_NESTING) throw new KitBuildRefusal("invalid_definition", `Automatic kits nest deeper than ${MAX_KIT_NESTING} levels.`);
    const itemIds = [...new Set(frontier.flatMap((kit) => kit.components.map((c) => c.itemId)))].filter((id) => !seenItems.has(id));
    for (const id of itemIds) seenItems.add(id);
    const links = (await readKitLinks(accountId, itemIds)).filter((link) => link.method === "automatic");
    for (const link of links) automaticKits.set(link.itemId, link.kitId);
    frontier = await readKits(
      accountId,
      links.map((link) => link.kitId).filter((id) => !records.has(id)),
    );
    for (const kit of frontier) records.set(kit.kitId, kit);
  }
  for (const [itemId, kitId] of automaticKits) if (!records.has(kitId)) automaticKits.delete(itemId);
  const kits = new Map([...records.values()].map((kit) => [kit.kitId, definitionOf(kit)]));
  for (const definition of kits.values()) {
    if (!definition.variationId || definition.components.some((c) => !c.variationId)) {
      throw new KitBuildRefusal("invalid_definition", `Kit ${definition.number} was defined without its variations; define it again with the admin CLI.`);
    }
  }
  const selected = [...kits.values()].flatMap((k) =>
    k.components.filter((c) => c.itemVariationId).map((c) => ({ itemId: c.itemId, variationId: c.itemVariationId! })),
  );
  const variationCosts = new Map(
    (await readVariations(accountId, [...new Map(selected.map((s) => [s.variationId, s])).values()]))
      .filter((v) => v.unitCostOverride !== undefined)
      .map((v) => [v.variationId, v.unitCostOverride!]),
  );
  return { root: kits.get(root.kitId)!, kits, records, automaticKits, variationCosts };
}

/** Upper bound of the items a ledger write of `changes` puts in its transaction. */
function ledgerItems(changes: readonly StockChange[]): number {
  const items = new Set(changes.map((c) => c.itemId)).size;
  const rows = new Set(changes.map((c) => rowOf(c.itemId, c.variationId) + c.locationId)).size;
  return items + rows + changes.length + 1; // + the row sequence, when a row is created
}

interface WritePlan {
  atomic: StockChange[];
  journaled: StockChange[];
}

/**
 * Decides how a kit write fits DynamoDB's transactions: everything in ONE transaction when it
 * fits; otherwise the rows that lose stock (and unique items) stay in the transaction, whose
 * conditions make "insufficient stock" impossible, and the rows that only gain stock are held
 * first and bound by that transaction (`holdGains`). Refuses (null) a write whose atomic part
 * alone does not fit.
 */
function fitWrite(
  changes: readonly StockChange[],
  items: LedgerState["items"],
  ownItems: (journal: boolean, atomic: readonly StockChange[]) => number,
): WritePlan | null {
  if (changes.length <= MAX_INLINE_CHANGES && ledgerItems(changes) + ownItems(false, changes) <= MAX_TRANSACTION_ITEMS) {
    return { atomic: [...changes], journaled: [] };
  }
  const { atomic, journaled } = splitForJournal(changes, new Map([...items].map(([id, item]) => [id, { inventoryType: item.inventoryType }])));
  if (atomic.length > MAX_INLINE_CHANGES || ledgerItems(atomic) + ownItems(true, atomic) > MAX_TRANSACTION_ITEMS) return null;
  return { atomic, journaled };
}

/**
 * Holds the stock a kit write's rows only gain before its transaction, which binds the hold:
 * the build (or disassembly) and every stock change it makes commit together, and no reader
 * sees the gains before that, nor part of them after (a reader folds a bound hold first; see
 * `lib/domain/inventory/stock-holds.ts`). The hold moves its items' versions, so the ledger state is read
 * again to commit against; when anything the plan read moved meanwhile (balances, what other
 * holds reserve, an item's kind, status or cost), the hold is released and the write plans
 * again (null).
 */
async function holdGains(
  accountId: string,
  source: LedgerSource,
  gains: readonly StockChange[],
  planned: LedgerState,
  reread: () => Promise<LedgerState>,
): Promise<{ hold: StockHold; state: LedgerState } | null> {
  const hold = await holdStock({ accountId, source, changes: gains });
  let state: LedgerState;
  try {
    state = await reread();
  } catch (error) {
    await releaseHold(accountId, hold.journalId);
    throw error;
  }
  if (sameStock(planned, state)) return { hold, state };
  await releaseHold(accountId, hold.journalId);
  return null;
}

/**
 * Whether two reads of the ledger state agree on all a kit plan reads: balances, what live
 * holds reserve, and each item's plan view. What the write's own hold leaves is no difference:
 * rows it created (empty), its positive deltas (no reservation) and the items' versions.
 */
function sameStock(before: LedgerState, after: LedgerState): boolean {
  const sameBalances = (a: Partial<Balances> | undefined, b: Partial<Balances> | undefined) =>
    BALANCE_FIELDS.every((field) => (a?.[field] ?? 0) === (b?.[field] ?? 0));
  const sameAt = <T extends Partial<Balances>>(a: ReadonlyMap<string, T> | Record<string, T>, b: ReadonlyMap<string, T> | Record<string, T>) => {
    const [x, y] = [a instanceof Map ? a : new Map(Object.entries(a)), b instanceof Map ? b : new Map(Object.entries(b))];
    return [...new Set([...x.keys(), ...y.keys()])].every((key) => sameBalances(x.get(key), y.get(key)));
  };
  if (!sameAt(before.rows, after.rows) || !sameAt(before.reserved ?? new Map(), after.reserved ?? new Map())) return false;
  for (const key of new Set([...before.items.keys(), ...after.items.keys()])) {
    const [a, b] = [before.items.get(key), after.items.get(key)];
    if (!a || !b) return false;
    const { stock: stockA, ...viewA } = planItemOf(a);
    const { stock: stockB, ...viewB } = planItemOf(b);
    if (JSON.stringify(viewA) !== JSON.stringify(viewB) || !sameAt(stockA, stockB)) return false;
  }
  return true;
}

function stockRuleRefusal(error: StockRuleError): KitBuildRefusal {
  return new KitBuildRefusal(error.rule === "negative_balance" ? "insufficient_stock" : "invalid_quantity", `The build breaks a stock rule: ${error.message}`);
}

const kitLockName = (accountId: string, kitId: string) => `kit:${accountId}:${kitId}`;
const buildSequenceLockName = (accountId: string) => `sequence:${accountId}:kit_build`;

/**
 * Assembles `quantity` kits at a location (spec part 2, section 4.7): creates one manual build
 * (method and user set here), nested automatic builds for short automatic sub-kits, consumes the
 * components and adds the assembled item at the location through the ledger (history source
 * `kit_build`, unit costs recorded, the assembled item's moving average cost updated), in ONE
 * transaction with the build records, the build numbers, the kits' build figures, the location
 * check and the stored idempotency outcome (see `fitWrite` for builds larger than that).
 * Rows missing at the location are prepared (created and numbered) in the same write, before
 * the stock is validated; a refusal writes nothing. Insufficient stock or an unusable definition:
 * 422 `invalid_kit_build`.
 */
export async function assembleKit(principal: Principal, kitId: string, input: KitBuildBody, completion: IdempotencyCompletion | undefined) {
  requireModify(principal);
  const accountId = principal.accountId;
  const locationId = input.location_id;
  requireReachableLocation(principal, "location_id", locationId);
  const [kit, location, user] = await Promise.all([readKit(accountId, kitId), readLocation(accountId, locationId), readUser(accountId, principal.userId)]);
  if (!kit) throw errors.resourceMissing("kit", kitId);
  if (!location?.active) throw errors.validationFailed([referenceDetail("location_id", "is not an active location of this account.")]);

  let closure: Closure;
  try {
    closure = await loadClosure(accountId, kit);
  } catch (error) {
    if (error instanceof KitBuildRefusal) {
      // An archived or missing assembled item hides the kit itself (404) before its definition is judged.
      if (!isActive(await readItem(accountId, kit.itemId))) throw errors.resourceMissing("kit", kitId);
      throw refused(error);
    }
    throw error;
  }
  const definitions = [...closure.kits.values()];
  const itemIds = [...new Set(definitions.flatMap((k) => [k.itemId, ...k.components.map((c) => c.itemId)]))];
  const rowKeys = [
    ...new Map(
      definitions
        .flatMap((k) => [{ itemId: k.itemId, variationId: k.variationId }, ...k.components.map((c) => ({ itemId: c.itemId, variationId: c.variationId }))])
        .map((key) => [rowOf(key.itemId, key.variationId), { ...key, locationId }]),
    ).values(),
  ];
  const locks = [
    ...itemIds.map((id) => itemLockName(accountId, id)),
    ...definitions.map((k) => kitLockName(accountId, k.kitId)),
    buildSequenceLockName(accountId),
  ];

  return retrying(
    "kit build",
    async (_attempt, turns) => {
      const [state, kitRecords, sequence] = await Promise.all([
        readLedgerState(accountId, itemIds, rowKeys),
        // The kits' build figures as they are now (definitions never change).
        readKits(accountId, [...closure.records.keys()]),
        readBuildSequence(accountId, true),
      ]);
      if (!isActive(state.items.get(kit.itemId))) throw errors.resourceMissing("kit", kitId);
      const records = new Map(kitRecords.map((k) => [k.kitId, k]));
      const onHand = new Map(
        [...state.rows.values()].filter((row) => row.locationId === locationId).map((row) => [rowOf(row.itemId, row.variationId), row.onHand]),
      );
      let plan: ReturnType<typeof planAssembly>;
      try {
        plan = planAssembly({
          kit: closure.root,
          quantity: input.quantity,
          locationId,
          kits: closure.kits,
          automaticKits: closure.automaticKits,
          items: new Map([...state.items].map(([id, item]) => [id, planItemOf(item)])),
          onHand,
          variationCosts: closure.variationCosts,
          newId: randomUUID,
        });
      } catch (error) {
        if (error instanceof KitBuildRefusal) throw refused(error);
        throw error;
      }
      const builtKits = [...new Set(plan.builds.map((b) => b.kitId))];
      const fit = fitWrite(plan.changes, state.items, (journal, atomic) => {
        const atomicItems = new Set(atomic.map((c) => c.itemId));
        const valuedApart = [...plan.averageCosts.keys()].filter((id) => !atomicItems.has(id)).length;
        return 2 + plan.builds.length + builtKits.length + valuedApart + (journal ? 1 : 0) + (completion ? 1 : 0);
      });
      if (!fit) {
        throw errors.invalidKitBuild(
          `This build (${plan.builds.length} builds, ${plan.changes.length} stock changes with its nested kits) is too large to check and apply atomically; assemble the nested kits first, or fewer component lines.`,
          "kit_id",
        );
      }

      const at = nowIso();
      const buildRecords: KitBuildItem[] = plan.builds.map((planned, i) => ({
        accountId,
        kitId: planned.kitId,
        buildId: planned.buildId,
        number: sequence + 1 + i,
        locationId,
        quantity: planned.quantity,
        method: planned.method,
        parentKitId: planned.parent?.kitId,
        parentKitNumber: planned.parent?.kitNumber,
        parentBuildId: planned.parent?.buildId,
        userId: principal.userId,
        userName: user?.name,
        unitCost: planned.unitCost,
        changes: planned.changes,
        createdAt: at,
      }));
      const requested = buildRecords[buildRecords.length - 1]!;
      const body = presentBuild(requested, location);
      const source: LedgerSource = { sourceType: "kit_build", sourceId: requested.buildId, userId: principal.userId, reason: `Kit ${kit.number} assembly` };
      let held: Awaited<ReturnType<typeof holdGains>> | undefined;
      let result: Awaited<ReturnType<typeof tryStockChanges>>;
      try {
        held =
          fit.journaled.length > 0 ? await holdGains(accountId, source, fit.journaled, state, () => readLedgerState(accountId, itemIds, rowKeys)) : undefined;
        if (held === null) return RETRY;
        result = await tryStockChanges({
          accountId,
          source,
          changes: fit.atomic,
          state: held?.state ?? state,
          itemSets: new Map([...plan.averageCosts].map(([itemId, averageCost]) => [itemId, { averageCost }])),
          extra: (tx) => {
            checkReferences(tx, accountId, [{ param: "location_id", kind: "location", id: locationId }]);
            addBuildNumbers(tx, accountId, sequence, sequence + buildRecords.length);
            for (const record of buildRecords) addBuildRecord(tx, record);
            for (const builtKitId of builtKits) {
              const record = records.get(builtKitId)!;
              const count = plan.builds.filter((b) => b.kitId === builtKitId).length;
              addKitStats(tx, record, statsAfter(statsOf(record), locationId, count, at) as Record<string, unknown>, at);
            }
            if (held) held.hold.bind(tx);
            // No hold to fold: the next builder in line (other processes) may start as this commits.
            else turns.serveAllWithin(tx);
          },
          respond: () => ({ completion, body }),
        });
      } catch (error) {
        if (held) await releaseHold(accountId, held.hold.journalId);
        if (error instanceof StockRuleError) throw refused(stockRuleRefusal(error));
        if (error instanceof TransactionTooLargeError) throw errors.invalidKitBuild("This build is too large to check and apply atomically.", "kit_id");
        throw error;
      }
      if (held && (result === STOCK_MOVED || result.rejected)) await releaseHold(accountId, held.hold.journalId);
      if (result === STOCK_MOVED) return RETRY;
      if (result.rejected) {
        const details = referenceDetails(result.rejected);
        if (details.length > 0) throw errors.validationFailed(details);
        return RETRY; // a kit's build figures or the build sequence moved: plan again
      }
      // Still this process's turn on these items: the hold is folded before the next build
      // here reads them (its valuation sees them).
      if (held) await foldNowOrLater(accountId, held.hold.journalId);
      else turns.servedWithin();
      return body;
    },
    undefined,
    locks,
  );
}

// ---------------------------------------------------------------------------------------------
// Disassembly

/**
 * Disassembles a build (spec part 2, sections 3.7 and 4.7): reverses exactly its own stock
 * changes at its location through the ledger (history source `kit_disassembly`: the assembled
 * units leave, the components come back at the unit costs they were consumed at) and deletes
 * the build, in ONE transaction conditioned on the build still existing (a repeat is 404). The
 * build must be under the kit and account of the path; a user assigned to a location reaches
 * only that location's builds (others are 404). When the assembled units are no longer on hand
 * at the location: 409 `kit_disassembly_not_allowed`, nothing changed.
 *
 * Nested automatic builds made for this build stay: they were complete builds of their own
 * kits, whose assembled units this disassembly returns to stock as they went in (the parent's
 * own changes only). Each can be disassembled on its own.
 */
export async function disassembleKit(principal: Principal, kitId: string, buildId: string) {
  requireModify(principal);
  const accountId = principal.accountId;
  const resource = { id: buildId, object: "kit_build" as const, kit_id: kitId, deleted: true as const };
  const missing = () => errors.resourceMissing("kit build", buildId);
  const [firstKit, firstBuild] = await Promise.all([readKit(accountId, kitId), readBuild(accountId, kitId, buildId)]);
  if (!firstKit) throw errors.resourceMissing("kit", kitId);
  if (!firstBuild || !mayReachLocation(principal, firstBuild.locationId)) throw missing();
  const locks = [kitLockName(accountId, kitId), ...(firstBuild.changes as BuildChange[]).map((c) => itemLockName(accountId, c.itemId))];

  return retrying(
    "kit disassembly",
    async (attempt, turns) => {
      const [kit, build] = attempt === 0 ? [firstKit, firstBuild] : await Promise.all([readKit(accountId, kitId), readBuild(accountId, kitId, buildId)]);
      if (!kit) throw errors.resourceMissing("kit", kitId);
      if (!build) throw missing();
      const changes = build.changes as BuildChange[];
      const readState = () =>
        readLedgerState(
          accountId,
          [kit.itemId, ...changes.map((c) => c.itemId)],
          changes.map((c) => ({ itemId: c.itemId, variationId: c.variationId, locationId: build.locationId })),
        );
      const state = await readState();
      if (!isActive(state.items.get(kit.itemId))) throw errors.resourceMissing("kit", kitId);
      const onHand = new Map(
        [...state.rows.values()].filter((row) => row.locationId === build.locationId).map((row) => [rowOf(row.itemId, row.variationId), row.onHand]),
      );
      let plan: ReturnType<typeof planDisassembly>;
      try {
        plan = planDisassembly({
          build: { quantity: build.quantity, changes },
          kitNumber: kit.number,
          locationId: build.locationId,
          items: new Map([...state.items].map(([id, item]) => [id, planItemOf(item)])),
          onHand,
        });
      } catch (error) {
        if (error instanceof DisassemblyRefusal) {
          // Read before this request's turn: the build may have been disassembled meanwhile.
          if (attempt === 0 && !(await readBuild(accountId, kitId, buildId))) throw missing();
          throw errors.kitDisassemblyNotAllowed(error.message);
        }
        throw error;
      }
      const fit = fitWrite(plan.changes, state.items, (journal, atomic) => {
        const atomicItems = new Set(atomic.map((c) => c.itemId));
        return 2 + [...plan.averageCosts.keys()].filter((id) => !atomicItems.has(id)).length + (journal ? 1 : 0);
      });
      if (!fit) throw errors.kitDisassemblyNotAllowed("This build is too large to reverse atomically.");
      const at = nowIso();
      const source: LedgerSource = {
        sourceType: "kit_disassembly",
        sourceId: build.buildId,
        userId: principal.userId,
        reason: `Kit ${kit.number} disassembly`,
      };
      let held: Awaited<ReturnType<typeof holdGains>> | undefined;
      let result: Awaited<ReturnType<typeof tryStockChanges>>;
      try {
        held = fit.journaled.length > 0 ? await holdGains(accountId, source, fit.journaled, state, readState) : undefined;
        if (held === null) return RETRY;
        result = await tryStockChanges({
          accountId,
          source,
          changes: fit.atomic,
          state: held?.state ?? state,
          itemSets: new Map([...plan.averageCosts].map(([itemId, averageCost]) => [itemId, { averageCost }])),
          extra: (tx) => {
            addBuildRemoval(tx, build);
            addKitStats(tx, kit, statsAfter(statsOf(kit), build.locationId, -1) as Record<string, unknown>, at);
            if (held) held.hold.bind(tx);
            // No hold to fold: the next builder in line (other processes) may start as this commits.
            else turns.serveAllWithin(tx);
          },
        });
      } catch (error) {
        if (held) await releaseHold(accountId, held.hold.journalId);
        if (error instanceof StockRuleError) {
          if (attempt === 0 && !(await readBuild(accountId, kitId, buildId))) throw missing();
          throw errors.kitDisassemblyNotAllowed(`The reversal breaks a stock rule: ${error.message}`);
        }
        throw error;
      }
      if (held && (result === STOCK_MOVED || result.rejected)) await releaseHold(accountId, held.hold.journalId);
      if (result === STOCK_MOVED) return RETRY;
      if (result.rejected) {
        if (result.rejected.failed(BUILD_LABELS.build)) throw missing(); // disassembled by a concurrent request
        return RETRY; // the kit's build figures moved
      }
      if (held) await foldNowOrLater(accountId, held.hold.journalId);
      else turns.servedWithin();
      return resource;
    },
    undefined,
    locks,
  );
}
