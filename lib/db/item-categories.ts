import { db, type ItemCategoryItem } from "./service.js";
import { writeTransaction, type Cancellation, type TransactionEntities, type TransactionOp } from "./transactions.js";
import type { IdempotencyCompletion } from "../core/idempotency.js";

type Outcome = { completion: IdempotencyCompletion | undefined; body: unknown };

/** Every category of the account in ONE Query (they share the account partition). */
export async function queryItemCategories(accountId: string): Promise<ItemCategoryItem[]> {
  const { data } = await db().entities.itemCategory.query.primary({ accountId }).go({ pages: "all", consistent: true });
  return data;
}

export async function readItemCategory(accountId: string, categoryId: string): Promise<ItemCategoryItem | undefined> {
  const { data } = await db().entities.itemCategory.get({ accountId, categoryId }).go({ consistent: true });
  return data ?? undefined;
}

/** Counts a new child on a parent, on condition that the parent exists and is top-level. */
function adoptChild(entities: TransactionEntities, accountId: string, parentId: string): TransactionOp {
  return entities.itemCategory
    .patch({ accountId, categoryId: parentId })
    .add({ childCount: 1 })
    .where(({ parentId: grandparent }, { eq }) => eq(grandparent, "root"))
    .commit();
}

function releaseChild(entities: TransactionEntities, accountId: string, parentId: string): TransactionOp {
  return entities.itemCategory.patch({ accountId, categoryId: parentId }).subtract({ childCount: 1 }).commit();
}

/** The label of the new parent's item: its failure means the parent is missing or not top-level. */
export const PARENT_LABEL = "parent";

/**
 * Inserts a category; with a parent, the parent's child count moves in the same transaction
 * (`PARENT_LABEL` fails when the parent is missing or not top-level).
 */
export async function insertItemCategory(category: ItemCategoryItem, outcome: Outcome): Promise<Cancellation | null> {
  return writeTransaction((tx) => {
    tx.add("category", tx.entities.itemCategory.create(category).commit());
    if (category.parentId !== "root") tx.add(PARENT_LABEL, adoptChild(tx.entities, category.accountId, category.parentId));
  }, outcome);
}

/**
 * Writes a category's new state over `previous`, on condition that nobody changed it since it
 * was read and, when it moves under a parent, that it still has no children. A parent change
 * moves the child counts (`PARENT_LABEL` = the new parent check).
 */
export async function replaceItemCategory(previous: ItemCategoryItem, next: ItemCategoryItem, outcome: Outcome): Promise<Cancellation | null> {
  return writeTransaction((tx) => {
    const entities = tx.entities;
    const key = { accountId: next.accountId, categoryId: next.categoryId };
    tx.add(
      "category",
      entities.itemCategory
        .patch(key)
        .set({
          name: next.name,
          parentId: next.parentId,
          inventoryType: next.inventoryType,
          customFields: next.customFields ?? [],
          ...(next.deletedFieldIds ? { deletedFieldIds: next.deletedFieldIds } : {}),
          updatedAt: next.updatedAt,
        })
        .where(({ updatedAt, childCount }, { eq }) =>
          next.parentId === "root" ? eq(updatedAt, previous.updatedAt) : `${eq(updatedAt, previous.updatedAt)} AND ${eq(childCount, 0)}`,
        )
        .commit(),
    );
    if (next.parentId !== previous.parentId) {
      if (next.parentId !== "root") tx.add(PARENT_LABEL, adoptChild(entities, next.accountId, next.parentId));
      if (previous.parentId !== "root") tx.add("old parent", releaseChild(entities, next.accountId, previous.parentId));
    }
  }, outcome);
}
