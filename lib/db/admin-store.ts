import { ScanCommand } from "@aws-sdk/lib-dynamodb";
import { getDocumentClient } from "./client.js";
import { tableName } from "./table.js";
import { db, type AccountItem, type ApiKeyItem, type UserItem } from "./service.js";
import { writeTransaction } from "./transactions.js";

/**
 * Storage for operator actions (the admin CLI and the local seed). Lookups by user or key id
 * alone scan the table: they serve the operator tool only, never an API request, which
 * always knows the account from its key.
 */
export async function insertAccountWithOwner(account: AccountItem, owner: UserItem, key: ApiKeyItem): Promise<void> {
  const failed = await writeTransaction((tx) => {
    tx.add("account", tx.entities.account.create(account).commit());
    tx.add("owner", tx.entities.user.create(owner).commit());
    tx.add("key", tx.entities.apiKey.create(key).commit());
  });
  if (failed) throw new Error("The account could not be created (id collision).");
}

export async function readAccount(accountId: string): Promise<AccountItem | undefined> {
  const { data } = await db().entities.account.get({ accountId }).go({ consistent: true });
  return data ?? undefined;
}

export async function patchAccount(accountId: string, changes: Partial<AccountItem>, remove: (keyof AccountItem)[]): Promise<AccountItem> {
  let update = db()
    .entities.account.patch({ accountId })
    .set(changes as never);
  if (remove.length > 0) update = update.remove(remove as never);
  const { data } = await update.go({ response: "all_new" });
  return data as AccountItem;
}

/** Inserts a user on condition that the account exists. */
export async function insertUser(user: UserItem): Promise<boolean> {
  const failed = await writeTransaction((tx) => {
    tx.add(
      "account",
      tx.entities.account
        .check({ accountId: user.accountId })
        .where(({ accountId }, { exists }) => exists(accountId))
        .commit(),
    );
    tx.add("user", tx.entities.user.create(user).commit());
  });
  return failed === null;
}

export async function findUserById(userId: string): Promise<UserItem | undefined> {
  const { data } = await db()
    .entities.user.scan.where(({ userId: id }, { eq }) => eq(id, userId))
    .go({ pages: "all", consistent: true });
  return data[0];
}

export async function findApiKeyById(keyId: string): Promise<ApiKeyItem | undefined> {
  const { data } = await db()
    .entities.apiKey.scan.where(({ keyId: id }, { eq }) => eq(id, keyId))
    .go({ pages: "all", consistent: true });
  return data[0];
}

export async function writeUser(user: UserItem): Promise<void> {
  await db().entities.user.put(user).go({ response: "none" });
}

/** Moves a user to another account: one transaction deletes the old record and writes the new. */
export async function moveUser(previous: UserItem, next: UserItem): Promise<boolean> {
  const failed = await writeTransaction((tx) => {
    const e = tx.entities;
    tx.add(
      "old user",
      e.user
        .delete({ accountId: previous.accountId, userId: previous.userId })
        .where(({ userId }, { exists }) => exists(userId))
        .commit(),
    );
    tx.add(
      "new account",
      e.account
        .check({ accountId: next.accountId })
        .where(({ accountId }, { exists }) => exists(accountId))
        .commit(),
    );
    tx.add("new user", e.user.create(next).commit());
  });
  return failed === null;
}

export async function removeUser(user: UserItem): Promise<void> {
  await db().entities.user.delete({ accountId: user.accountId, userId: user.userId }).go({ response: "none" });
}

export async function insertApiKey(key: ApiKeyItem): Promise<void> {
  await db().entities.apiKey.create(key).go({ response: "none" });
}

export async function markApiKeyRevoked(key: ApiKeyItem, revokedAt: string): Promise<void> {
  await db().entities.apiKey.patch({ accountId: key.accountId, keyHash: key.keyHash }).set({ revokedAt }).go({ response: "none" });
}

/** True when the table holds no record at all (the local stack seeds an empty database). */
export async function tableIsEmpty(): Promise<boolean> {
  // A raw Scan of one item: an entity-filtered scan would apply the filter after the limit.
  const { Items } = await getDocumentClient().send(new ScanCommand({ TableName: tableName(), Limit: 1 }));
  return (Items ?? []).length === 0;
}

/** Inserts account reference data (custom field, label, pricing tier) if the account exists. */
export async function insertReferenceData(
  accountId: string,
  build: (entities: import("./transactions.js").TransactionEntities) => import("./transactions.js").TransactionOp,
): Promise<boolean> {
  const failed = await writeTransaction((tx) => {
    tx.add(
      "account",
      tx.entities.account
        .check({ accountId })
        .where(({ accountId: id }, { exists }) => exists(id))
        .commit(),
    );
    tx.add("reference data", build(tx.entities));
  });
  return failed === null;
}

/** Every account (a scan: the operator's `account list`, never an API request). */
export async function scanAccounts(): Promise<AccountItem[]> {
  const { data } = await db().entities.account.scan.go({ pages: "all", consistent: true });
  return data;
}

/** The users of one account (one Query of the account's partition). */
export async function readUsersOfAccount(accountId: string): Promise<UserItem[]> {
  const { data } = await db().entities.user.query.primary({ accountId }).go({ pages: "all", consistent: true });
  return data;
}

/** Every key minted for a user, in any account (a scan: the operator's `key list`). */
export async function findApiKeysOfUser(userId: string): Promise<ApiKeyItem[]> {
  const { data } = await db()
    .entities.apiKey.scan.where(({ userId: id }, { eq }) => eq(id, userId))
    .go({ pages: "all", consistent: true });
  return data;
}
