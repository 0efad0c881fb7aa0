import { ScanCommand } from "@aws-sdk/lib-dynamodb";
import { getDocumentClient } from "./client.js";
import { pagesOf } from "./pages.js";
import { ENTITY_ATTRIBUTE } from "../core/entity-attribute.js";
import { batchGetAll } from "./batch-get.js";
import { batchPutAll } from "./batch-write.js";
import { tableName } from "./table.js";
import { db, type AccountItem, type ApiKeyItem, type UserItem } from "./service.js";
import { type TransactionBuilder, writeTransaction } from "./transactions.js";

/**
 * Storage for operator actions (the admin CLI and the local seed). Users, keys and accounts
 * are found by their ids alone through the operator directory
 * (lib/db/entities/operator-directory.ts), whose entries every write here keeps in the same
 * transaction as the record: consistent Gets and Queries, never a Scan.
 */

const USERS_AND_KEYS = (userId: string) => `user:${userId}`;
const KEY = (keyId: string) => `key:${keyId}`;
const ACCOUNTS = "accounts";

/** Puts the directory entries of a user (where its record is now). */
function addUserEntry(tx: TransactionBuilder, user: UserItem): void {
  tx.add("directory: user", tx.entities.operatorDirectory.put({ directory: USERS_AND_KEYS(user.userId), entry: "user", accountId: user.accountId }).commit());
}

/** Puts the directory entries of a key: under its id, and among its user's keys. */
function addKeyEntries(tx: TransactionBuilder, key: ApiKeyItem): void {
  const where = { accountId: key.accountId, userId: key.userId, keyId: key.keyId, keyHash: key.keyHash };
  tx.add("directory: key", tx.entities.operatorDirectory.put({ directory: KEY(key.keyId), entry: "key", ...where }).commit());
  tx.add("directory: user's key", tx.entities.operatorDirectory.put({ directory: USERS_AND_KEYS(key.userId), entry: KEY(key.keyId), ...where }).commit());
}

export async function insertAccountWithOwner(account: AccountItem, owner: UserItem, key: ApiKeyItem): Promise<void> {
  const failed = await writeTransaction((tx) => {
    tx.add("account", tx.entities.account.create(account).commit());
    tx.add("owner", tx.entities.user.create(owner).commit());
    tx.add("key", tx.entities.apiKey.create(key).commit());
    tx.add("directory: account", tx.entities.operatorDirectory.put({ directory: ACCOUNTS, entry: account.accountId, accountId: account.accountId }).commit());
    addUserEntry(tx, owner);
    addKeyEntries(tx, key);
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
    addUserEntry(tx, user);
  });
  return failed === null;
}

/** The directory entries of a user: where its record is, and its keys (one consistent Query). */
async function readUserDirectory(userId: string) {
  const { data } = await db()
    .entities.operatorDirectory.query.primary({ directory: USERS_AND_KEYS(userId) })
    .go({ pages: "all", consistent: true });
  return { home: data.find((e) => e.entry === "user"), keys: data.filter((e) => e.entry !== "user") };
}

/** A user by id alone: its directory entry, then its record. */
export async function findUserById(userId: string): Promise<UserItem | undefined> {
  const { home } = await readUserDirectory(userId);
  if (!home) return undefined;
  const { data } = await db().entities.user.get({ accountId: home.accountId, userId }).go({ consistent: true });
  return data ?? undefined;
}

/** A key by id alone: its directory entry, then its record. */
export async function findApiKeyById(keyId: string): Promise<ApiKeyItem | undefined> {
  const { data: entry } = await db()
    .entities.operatorDirectory.get({ directory: KEY(keyId), entry: "key" })
    .go({ consistent: true });
  if (!entry?.keyHash) return undefined;
  const { data } = await db().entities.apiKey.get({ accountId: entry.accountId, keyHash: entry.keyHash }).go({ consistent: true });
  return data ?? undefined;
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
    addUserEntry(tx, next);
  });
  return failed === null;
}

/** Deletes a user and its directory entry (its keys stay findable, to list or revoke them). */
export async function removeUser(user: UserItem): Promise<void> {
  const failed = await writeTransaction((tx) => {
    tx.add("user", tx.entities.user.delete({ accountId: user.accountId, userId: user.userId }).commit());
    tx.add("directory: user", tx.entities.operatorDirectory.delete({ directory: USERS_AND_KEYS(user.userId), entry: "user" }).commit());
  });
  if (failed) throw new Error(`The user ${user.userId} could not be deleted.`);
}

export async function insertApiKey(key: ApiKeyItem): Promise<void> {
  const failed = await writeTransaction((tx) => {
    tx.add("key", tx.entities.apiKey.create(key).commit());
    addKeyEntries(tx, key);
  });
  if (failed) throw new Error("The key could not be created (id collision).");
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

/**
 * Writes the directory entries of every account, user and key: the one table Scan of the
 * operator tools, run once on a table written before the directory existed (`directory
 * rebuild`). Entries are plain puts of what the records say, so running it again, or beside
 * other admin commands, changes nothing they wrote.
 */
export async function rebuildOperatorDirectory(): Promise<{ accounts: number; users: number; keys: number }> {
  const e = db().entities;
  // ONE Scan for the three kinds (an entity's own scan reads the whole table for its kind alone).
  const kinds = { account: e.account.schema.model.entity, user: e.user.schema.model.entity, apiKey: e.apiKey.schema.model.entity };
  const accounts: { accountId: string }[] = [];
  const users: { accountId: string; userId: string }[] = [];
  const keys: { accountId: string; keyHash: string; keyId: string; userId: string }[] = [];
  const pages = pagesOf((start) =>
    getDocumentClient().send(
      new ScanCommand({
        TableName: tableName(),
        ConsistentRead: true,
        FilterExpression: "#kind IN (:account, :user, :key)",
        ProjectionExpression: "#kind, accountId, userId, keyId, keyHash",
        ExpressionAttributeNames: { "#kind": ENTITY_ATTRIBUTE },
        ExpressionAttributeValues: { ":account": kinds.account, ":user": kinds.user, ":key": kinds.apiKey },
        ExclusiveStartKey: start,
      }),
    ),
  );
  for await (const items of pages) {
    for (const item of items) {
      const kind = item[ENTITY_ATTRIBUTE];
      if (kind === kinds.account) accounts.push(item as (typeof accounts)[number]);
      else if (kind === kinds.user) users.push(item as (typeof users)[number]);
      else if (kind === kinds.apiKey) keys.push(item as (typeof keys)[number]);
    }
  }
  const entries = [
    ...accounts.map((a) => ({ directory: ACCOUNTS, entry: a.accountId, accountId: a.accountId })),
    ...users.map((u) => ({ directory: USERS_AND_KEYS(u.userId), entry: "user", accountId: u.accountId })),
    ...keys.flatMap((k) => {
      const where = { accountId: k.accountId, userId: k.userId, keyId: k.keyId, keyHash: k.keyHash };
      return [
        { directory: KEY(k.keyId), entry: "key", ...where },
        { directory: USERS_AND_KEYS(k.userId), entry: KEY(k.keyId), ...where },
      ];
    }),
  ];
  await batchPutAll("rebuild the operator directory", entries, async (chunk) => {
    // What DynamoDB left unprocessed comes back as its keys: the entries to send again.
    const byKey = new Map(chunk.map((entry) => [`${entry.directory} ${entry.entry}`, entry]));
    const { unprocessed } = await e.operatorDirectory.put(chunk).go();
    return { unprocessed: unprocessed.map((key) => byKey.get(`${key.directory} ${key.entry}`)!) };
  });
  return { accounts: accounts.length, users: users.length, keys: keys.length };
}

/**
 * True when the table (by default the configured one) holds accounts but the directory lists
 * none: a table written before the directory existed (the local stack then rebuilds it as it
 * starts; `table prepare-restored` asks for `directory rebuild` first).
 */
export async function operatorDirectoryMissing(table = tableName()): Promise<boolean> {
  const { data: listed } = await db().entities.operatorDirectory.query.primary({ directory: ACCOUNTS }).go({ limit: 1, consistent: true, table });
  if (listed.length > 0) return false;
  const { data: accounts } = await db().entities.account.scan.go({ limit: 1, pages: "all", table });
  return accounts.length > 0;
}

/** Every account: the directory's list of account ids, then their records. */
export async function readAllAccounts(): Promise<AccountItem[]> {
  const { data: entries } = await db().entities.operatorDirectory.query.primary({ directory: ACCOUNTS }).go({ pages: "all", consistent: true });
  return batchGetAll(
    "read accounts",
    entries.map((e) => ({ accountId: e.accountId })),
    (chunk) => db().entities.account.get(chunk).go({ consistent: true }),
  );
}

/** The users of one account (one Query of the account's partition). */
export async function readUsersOfAccount(accountId: string): Promise<UserItem[]> {
  const { data } = await db().entities.user.query.primary({ accountId }).go({ pages: "all", consistent: true });
  return data;
}

/** Every key minted for a user, in any account: the user's directory entries, then the records. */
export async function findApiKeysOfUser(userId: string): Promise<ApiKeyItem[]> {
  const { keys } = await readUserDirectory(userId);
  return batchGetAll(
    "read keys",
    keys.flatMap((e) => (e.keyHash ? [{ accountId: e.accountId, keyHash: e.keyHash }] : [])),
    (chunk) => db().entities.apiKey.get(chunk).go({ consistent: true }),
  );
}
