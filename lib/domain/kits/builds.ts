import type { LedgerSource } from "../inventory/stock-changes.js";
import { readLedgerState } from "../inventory/reads.js";
import { itemLockName } from "../inventory/settling.js";
import { referenceDetail } from "../../core/errors.js";
import { nowIso } from "../../core/clock.js";
import { StockRuleError, TransactionTooLargeError } from "../../core/failures.js";
import { randomUUID } from "node:crypto";
import type { Principal } from "../../auth/permissions.js";
import { mayReachLocation, requireReachableLocation } from "../common/location-access.js";
import { readUser } from "../../db/auth-store.js";
import { readItem, readVariations } from "../../db/items.js";
import {
  BUILD_LABELS,
  addBuildNumbers,
  addBuildRecord,
  addBuildRemoval,
  addKitStats,
  readBuild,
  readBuildSequence,
  readKit,
  queryBuilds,
  readKitLinks,
  readKits,
} from "../../db/kits.js";
import { readLocation } from "../../db/locations.js";
import { checkReferences, referenceDetails } from "../../db/references.js";
import { RETRY, retrying } from "../../db/retry.js";
import type { KitBuildItem, KitItem } from "../../db/service.js";
import { errors } from "../../core/errors.js";
import type { IdempotencyCompletion } from "../../core/idempotency.js";
import type { KitBuildBody } from "../../schemas/kits.js";
import {
  DisassemblyRefusal,
  KitBuildRefusal,
  planAssembly,
  planDisassembly,
  rowOf,
  statsAfter,
  statsAfterDisassembly,
  type BuildChange,
  type KitDefinition,
} from "./planning.js";
import { commitBuildStock, fitWrite, planItemOf } from "./build-writes.js";
import { definitionOf, isActive, presentBuild, requireModify, statsOf } from "./service.js";

/**
 * Kit builds (spec part 2, sections 3.7 and 4.7; architecture section 8, "Kit builds"):
 * assembly and disassembly, each ONE `retrying` loop per request that reads, plans
 * (`planning.ts`) and commits (`build-writes.ts`).
 */

/** How deep automatic sub-kits may nest (a deeper definition is refused as invalid). */
export const MAX_KIT_NESTING = 8;

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

/**
 * A build's answer to a stock rule it breaks: short component stock (or any rule of the
 * definition) is 422 `invalid_kit_build`, as the spec says; a build that would count more of an
 * item than `MAX_STOCK_BALANCE` is an input bound, 422 `validation_failed` (`too_large` on
 * `quantity`), as an adjustment's is.
 */
function stockRuleAnswer(error: StockRuleError) {
  if (error.rule === "too_large") return errors.validationFailed([{ param: "quantity", code: "too_large", message: error.message }]);
  return refused(
    new KitBuildRefusal(error.rule === "negative_balance" ? "insufficient_stock" : "invalid_quantity", `The build breaks a stock rule: ${error.message}`),
  );
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
      const result = await commitBuildStock({
        accountId,
        source,
        fit,
        state,
        reread: () => readLedgerState(accountId, itemIds, rowKeys),
        averageCosts: plan.averageCosts,
        turns,
        extra: (tx) => {
          checkReferences(tx, accountId, [{ param: "location_id", kind: "location", id: locationId }]);
          addBuildNumbers(tx, accountId, sequence, sequence + buildRecords.length);
          for (const record of buildRecords) addBuildRecord(tx, record);
          for (const builtKitId of builtKits) {
            const record = records.get(builtKitId)!;
            const count = plan.builds.filter((b) => b.kitId === builtKitId).length;
            addKitStats(tx, record, statsAfter(statsOf(record), locationId, count, at) as Record<string, unknown>, at);
          }
        },
        respond: () => ({ completion, body }),
        explain: async (error) => {
          if (error instanceof StockRuleError) return stockRuleAnswer(error);
          if (error instanceof TransactionTooLargeError) return errors.invalidKitBuild("This build is too large to check and apply atomically.", "kit_id");
          return error;
        },
      });
      if (result === RETRY) return RETRY;
      if (result.rejected) {
        const details = referenceDetails(result.rejected);
        if (details.length > 0) throw errors.validationFailed(details);
        return RETRY; // a kit's build figures or the build sequence moved: plan again
      }
      return body;
    },
    undefined,
    locks,
    { queueOn: [buildSequenceLockName(accountId)] },
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
      // The location's newest build left once this one goes: its last build time stays unless this
      // build was that last one; only then one Query finds the next (read after the kit: a build
      // since moves the kit's buildVersion, and the stats' condition retries).
      const lastThere = statsOf(kit)[build.locationId]?.lastBuiltAt;
      const newestLeft =
        lastThere !== undefined && build.createdAt < lastThere
          ? lastThere
          : (await queryBuilds(accountId, kitId, build.locationId, 0, 2)).find((other) => other.buildId !== build.buildId)?.createdAt;
      const at = nowIso();
      const source: LedgerSource = {
        sourceType: "kit_disassembly",
        sourceId: build.buildId,
        userId: principal.userId,
        reason: `Kit ${kit.number} disassembly`,
      };
      const result = await commitBuildStock({
        accountId,
        source,
        fit,
        state,
        reread: readState,
        averageCosts: plan.averageCosts,
        turns,
        extra: (tx) => {
          addBuildRemoval(tx, build);
          addKitStats(tx, kit, statsAfterDisassembly(statsOf(kit), build.locationId, newestLeft) as Record<string, unknown>, at);
        },
        explain: async (error) => {
          if (error instanceof StockRuleError) {
            if (attempt === 0 && !(await readBuild(accountId, kitId, buildId))) return missing();
            return errors.kitDisassemblyNotAllowed(`The reversal breaks a stock rule: ${error.message}`);
          }
          return error;
        },
      });
      if (result === RETRY) return RETRY;
      if (result.rejected) {
        if (result.rejected.failed(BUILD_LABELS.build)) throw missing(); // disassembled by a concurrent request
        return RETRY; // the kit's build figures moved
      }
      return resource;
    },
    undefined,
    locks,
  );
}
