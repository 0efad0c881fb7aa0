import { batchGetAll } from "./batch-get.js";
import { readToOffset } from "./offset-page.js";
import { db, type KitBuildItem, type KitItem, type KitLinkItem } from "./service.js";
import { allocateNumber, claimNumbers, readSequence, sequenceLabel } from "./sequences.js";
import { writeTransaction, type Cancellation, type TransactionBuilder } from "./transactions.js";

/**
 * Storage of kits (architecture sections 5 and 8, "Kit builds"): definitions (written by the
 * admin CLI only), the item -> kit links, and builds. Stock itself moves only through the
 * ledger (`lib/domain/inventory/service.ts`); the helpers here add a build's own items to the ledger's
 * transaction.
 */

export async function readKit(accountId: string, kitId: string): Promise<KitItem | undefined> {
  const { data } = await db().entities.kit.get({ accountId, kitId }).go({ consistent: true });
  return data ?? undefined;
}

/** Kits by id, in ONE BatchGetItem per 100 (missing ones are absent). */
export async function readKits(accountId: string, kitIds: readonly string[]): Promise<KitItem[]> {
  const keys = [...new Set(kitIds)].map((kitId) => ({ accountId, kitId }));
  return batchGetAll("read kits", keys, (chunk) => db().entities.kit.get(chunk).go({ consistent: true }));
}

/** Every kit of the account, by number (one Query of the account's kit index partition). */
export async function queryKits(accountId: string): Promise<KitItem[]> {
  const { data } = await db().entities.kit.query.byNumber({ accountId }).go({ pages: "all" });
  return data;
}

/** The kits that these items are the assembled items of (ONE BatchGetItem per 100 items). */
export async function readKitLinks(accountId: string, itemIds: readonly string[]): Promise<KitLinkItem[]> {
  const keys = [...new Set(itemIds)].map((itemId) => ({ accountId, itemId }));
  return batchGetAll("read kit links", keys, (chunk) => db().entities.kitLink.get(chunk).go({ consistent: true }));
}

/** The label of the link item when a kit is created: it fails when the item backs a kit already. */
export const KIT_LINK_LABEL = "kit link";

/** The label prefix of the kit's items in its insert (`kit item:<id>`: failed, that item is gone). */
export const KIT_ITEM_LABEL = "kit item:";

/**
 * Inserts a kit numbered from the account's `kit` sequence (counted there), with its item
 * link (on condition that the item backs no kit yet), in ONE transaction. Each item it names
 * (assembled and components) counts it in `kitCount` and moves its `referenceTick`, so an item
 * deletion in flight and the insert cannot both commit.
 */
export async function insertKit(kit: Omit<KitItem, "number">, link: KitLinkItem): Promise<{ number: number; cancellation: Cancellation | null }> {
  const itemIds = [...new Set([kit.itemId, ...kit.components.map((component) => component.itemId)])];
  return allocateNumber(kit.accountId, "kit", (number, claim) =>
    writeTransaction((tx) => {
      claim(tx, { count: 1 });
      tx.add("kit", tx.entities.kit.create({ ...kit, number } as KitItem).commit());
      tx.add(KIT_LINK_LABEL, tx.entities.kitLink.create(link).commit());
      for (const itemId of itemIds) {
        tx.add(`${KIT_ITEM_LABEL}${itemId}`, tx.entities.item.patch({ accountId: kit.accountId, itemId }).add({ kitCount: 1, referenceTick: 1 }).commit());
      }
    }),
  );
}

export async function readBuild(accountId: string, kitId: string, buildId: string): Promise<KitBuildItem | undefined> {
  const { data } = await db().entities.kitBuild.get({ accountId, kitId, buildId }).go({ consistent: true });
  return data ?? undefined;
}

/** A page of a kit's builds, newest (highest number) first; at one location when given. */
export async function queryBuilds(accountId: string, kitId: string, locationId: string | undefined, offset: number, limit: number): Promise<KitBuildItem[]> {
  return readToOffset<KitBuildItem>(offset, limit, (cursor, want) =>
    locationId === undefined
      ? db().entities.kitBuild.query.byNumber({ accountId, kitId }).go({ cursor, order: "desc", limit: want })
      : db().entities.kitBuild.query.byLocation({ accountId, kitId, locationId }).go({ cursor, order: "desc", limit: want }),
  );
}

/** The last build number handed out (`kit_build` sequence). */
export const readBuildSequence = (accountId: string, consistent: boolean): Promise<number> => readSequence(accountId, "kit_build", consistent);

/** Labels of a build transaction's own items (a failure of each is mapped by the domain). */
export const BUILD_LABELS = {
  build: "kit build",
  kit: "kit",
  sequence: sequenceLabel("kit_build"),
} as const;

/** Claims build numbers `from + 1 .. to` (the sequence must still be at `from`). */
export function addBuildNumbers(tx: TransactionBuilder, accountId: string, from: number, to: number): void {
  claimNumbers(tx, accountId, "kit_build", from, to);
}

export function addBuildRecord(tx: TransactionBuilder, build: KitBuildItem): void {
  tx.add(BUILD_LABELS.build, tx.entities.kitBuild.create(build).commit());
}

/** Deletes a build on condition that it still exists (a second disassembly fails here). */
export function addBuildRemoval(tx: TransactionBuilder, build: Pick<KitBuildItem, "accountId" | "kitId" | "buildId">): void {
  tx.add(
    BUILD_LABELS.build,
    tx.entities.kitBuild
      .delete({ accountId: build.accountId, kitId: build.kitId, buildId: build.buildId })
      .where(({ buildId }, { exists }) => exists(buildId))
      .commit(),
  );
}

/** Writes a kit's build figures on condition that they are still those read (`buildVersion`). */
export function addKitStats(
  tx: TransactionBuilder,
  kit: Pick<KitItem, "accountId" | "kitId" | "buildVersion">,
  buildStats: Record<string, unknown>,
  at: string,
): void {
  tx.add(
    BUILD_LABELS.kit,
    tx.entities.kit
      .patch({ accountId: kit.accountId, kitId: kit.kitId })
      .set({ buildStats, buildVersion: kit.buildVersion + 1, updatedAt: at })
      .where(({ buildVersion }, { eq }) => eq(buildVersion, kit.buildVersion))
      .commit(),
  );
}
