import { db, type ItemCategoryItem } from "./service.js";
import { writeTransaction, type CancellationReason, type TransactionEntities, type TransactionOp } from "./transactions.js";
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

/**
 * Inserts a category; with a parent, the parent's child count moves in the same transaction
 * (index 1 fails when the parent is missing or not top-level).
 */
export async function insertItemCategory(category: ItemCategoryItem, outcome: Outcome): Promise<CancellationReason[] | null> {
  return writeTransaction((entities) => {
    const ops: TransactionOp[] = [entities.itemCategory.create(category).commit()];
    if (category.parentId !== "root") ops.push(adoptChild(entities, category.accountId, category.parentId));
    return ops;
  }, outcome);
}

/**
 * Writes a category's new state over `previous`, on condition that nobody changed it since it
 * was read (index 0) and, when it moves under a parent, that it still has no children. A
 * parent change moves the child counts (index 1 = the new parent check).
 */
export async function replaceItemCategory(
  previous: ItemCategoryItem,
  next: ItemCategoryItem,
  outcome: Outcome,
): Promise<CancellationReason[] | null> {
  return writeTransaction((entities) => {
    const key = { accountId: next.accountId, categoryId: next.categoryId };
    const ops: TransactionOp[] = [
      entities.itemCategory
        .patch(key)
        .set({
          name: next.name,
          parentId: next.parentId,
          inventoryType: next.inventoryType,
          customFields: next.customFields ?? [],
          updatedAt: next.updatedAt,
        })
        .where(({ updatedAt, childCount }, { eq }) =>
          next.parentId === "root"
            ? eq(updatedAt, previous.updatedAt)
            : `${eq(updatedAt, previous.updatedAt)} AND ${eq(childCount, 0)}`,
        )
        .commit(),
    ];
    if (next.parentId !== previous.parentId) {
      if (next.parentId !== "root") ops.push(adoptChild(entities, next.accountId, next.parentId));
      if (previous.parentId !== "root") ops.push(releaseChild(entities, next.accountId, previous.parentId));
    }
    return ops;
  }, outcome);
}
