import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { CreateTableCommand, DeleteTableCommand, DescribeTableCommand, DescribeTimeToLiveCommand, UpdateTableCommand } from "@aws-sdk/client-dynamodb";
import { afterAll, describe, expect, it } from "vitest";
import { createDynamoClient } from "../../lib/db/client.js";
import { newDbUsage, withDbUsage, type DbUsage } from "../../lib/db/metrics.js";
import { db } from "../../lib/db/service.js";
import { RESTORE_GAP } from "../../lib/db/sync-restore.js";
import { tableDefinition } from "../../lib/db/create-table.js";
import { GLOBAL_INDEXES, TABLE_KEYS } from "../../lib/db/table.js";
import { useApiServer } from "../support/api.js";
import { cli, failed, succeeded } from "../support/cli.js";
import { newAccount, newKey, newUser } from "../support/fixtures.js";

/**
 * The operator tools without table Scans (issue 22, point 4) and the restore preparation
 * (point 3): the admin CLI finds users, keys and accounts through the operator directory
 * (lib/db/entities/operator-directory.ts), and `table prepare-restored` readies a table
 * restored from a backup, against the suite's DynamoDB Local.
 */
const api = useApiServer();
const CLI_TIMEOUT = 60_000;

/** Runs a CLI command in this process, noting every DynamoDB call it makes. */
async function counted(...args: string[]): Promise<{ result: Awaited<ReturnType<typeof cli>>; usage: DbUsage }> {
  const usage = newDbUsage();
  const result = await withDbUsage(usage, () => cli(...args));
  return { result, usage };
}

describe("admin CLI: lookups by id without a Scan", () => {
  it(
    "user update, key list, key revoke, user delete and account list find their records with Gets and Queries only",
    async () => {
      const account = await newAccount();
      const other = await newAccount();
      const clerk = await newUser(account, { permissions: ["inventory.list"] });
      const key = await newKey(clerk.userId);

      const moved = await counted("user", "update", "--user", clerk.userId, "--account", other.accountId, "--json");
      expect(succeeded(moved.result)).toEqual({ user_id: clerk.userId, account_id: other.accountId });
      const listed = await counted("key", "list", "--user", clerk.userId, "--json");
      // Keys minted in the first account are still listed (void: their user moved).
      const keys = succeeded(listed.result).keys as { key_id: string; status: string }[];
      expect(keys).toContainEqual(expect.objectContaining({ key_id: key.keyId, status: "void" }));
      expect(keys.every((k) => k.status === "void")).toBe(true);
      const revoked = await counted("key", "revoke", "--key", key.keyId, "--json");
      expect(succeeded(revoked.result)).toEqual({ key_id: key.keyId, revoked: true });
      const accounts = await counted("account", "list", "--json");
      const ids = (succeeded(accounts.result).accounts as { account_id: string }[]).map((a) => a.account_id);
      expect(ids).toEqual(expect.arrayContaining([account.accountId, other.accountId]));
      const deleted = await counted("user", "delete", "--user", clerk.userId, "--json");
      expect(succeeded(deleted.result)).toEqual({ user_id: clerk.userId, deleted: true });

      for (const { usage } of [moved, listed, revoked, accounts, deleted]) {
        expect(usage.commands.length).toBeGreaterThan(0);
        expect(usage.commands).not.toContain("Scan");
      }
      // Deleted: the user is gone from the directory, its keys stay revocable.
      failed(await cli("user", "update", "--user", clerk.userId, "--status", "inactive", "--json"), "not_found");
      expect(succeeded(await cli("key", "revoke", "--key", key.keyId, "--json")).revoked).toBe(true);
      // The owner key of the first account still works; the revoked key is refused.
      expect((await api().withKey(account.ownerKey).get("/locations")).status).toBe(200);
      expect((await api().withKey(key.key).get("/locations")).status).toBe(401);
    },
    CLI_TIMEOUT,
  );

  it(
    "directory rebuild restores the entries of a table written before the directory existed",
    async () => {
      const account = await newAccount();
      const clerk = await newUser(account);
      const key = await newKey(clerk.userId);
      // What an older version wrote: the records without their directory entries.
      const entries = db().entities.operatorDirectory;
      await Promise.all([
        entries.delete({ directory: `user:${clerk.userId}`, entry: "user" }).go(),
        entries.delete({ directory: `user:${clerk.userId}`, entry: `key:${key.keyId}` }).go(),
        entries.delete({ directory: `key:${key.keyId}`, entry: "key" }).go(),
        entries.delete({ directory: "accounts", entry: account.accountId }).go(),
      ]);
      failed(await cli("key", "revoke", "--key", key.keyId, "--json"), "not_found");
      failed(await cli("key", "list", "--user", clerk.userId, "--json"), "not_found");

      const rebuilt = succeeded(await cli("directory", "rebuild", "--json"));
      expect(Object.keys(rebuilt).sort()).toEqual(["accounts", "keys", "users"]);
      expect(rebuilt.keys).toBeGreaterThanOrEqual(2);
      expect(succeeded(await cli("key", "list", "--user", clerk.userId, "--json")).keys).toContainEqual(expect.objectContaining({ key_id: key.keyId }));
      const accounts = succeeded(await cli("account", "list", "--json")).accounts as { account_id: string }[];
      expect(accounts.map((a) => a.account_id)).toContain(account.accountId);
      // Running it again changes nothing that matters.
      succeeded(await cli("directory", "rebuild", "--json"));
      expect(succeeded(await cli("key", "revoke", "--key", key.keyId, "--json")).revoked).toBe(true);
      expect((await api().withKey(key.key).get("/locations")).status).toBe(401);
    },
    CLI_TIMEOUT,
  );
});

/** The README's operator policy: the actions of its `AdminCli` statement. */
function operatorPolicyActions(): Set<string> {
  const readme = readFileSync(join(import.meta.dirname, "..", "..", "README.md"), "utf8");
  const section = readme.slice(readme.indexOf("### Operator IAM policy"));
  const policy = JSON.parse(section.slice(section.indexOf("```json") + 7, section.indexOf("```", section.indexOf("```json") + 7))) as {
    Statement: { Sid: string; Action: string[] }[];
  };
  return new Set(policy.Statement.find((s) => s.Sid === "AdminCli")!.Action);
}

/** The IAM actions a DynamoDB call needs (a transaction: the action of each item it may hold). */
const ACTIONS_OF_CALL: Record<string, string[]> = {
  GetItem: ["dynamodb:GetItem"],
  BatchGetItem: ["dynamodb:BatchGetItem"],
  Query: ["dynamodb:Query"],
  PutItem: ["dynamodb:PutItem"],
  UpdateItem: ["dynamodb:UpdateItem"],
  DeleteItem: ["dynamodb:DeleteItem"],
  TransactGetItems: ["dynamodb:GetItem"],
  TransactWriteItems: ["dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem", "dynamodb:ConditionCheckItem"],
};

describe("admin CLI: the README's operator IAM policy", () => {
  it(
    "covers every DynamoDB call of the record commands, and none of them scans",
    async () => {
      const calls = new Set<string>();
      const run = async (...args: string[]) => {
        const { result, usage } = await counted(...args, "--json");
        // DescribeTable: the CLI's check of a local DynamoDB's table (ensureTable), never made
        // with DYNAMODB_ENDPOINT=aws.
        for (const command of usage.commands) if (command !== "DescribeTable") calls.add(command);
        return succeeded(result);
      };
      const account = await run("account", "create", "--name", "Policy check");
      const other = await run("account", "create", "--name", "Policy check 2");
      await run("account", "update", "--account", account.account_id, "--time-zone", "Europe/Paris");
      await run("account", "list");
      const location = await run("location", "create", "--account", account.account_id, "--name", "Depot", "--short-name", "DEP");
      const user = await run("user", "create", "--account", account.account_id, "--name", "Sam", "--location", location.location_id);
      await run("user", "list", "--account", account.account_id);
      await run("user", "update", "--user", user.user_id, "--status", "inactive");
      const key = await run("key", "create", "--user", user.user_id, "--scopes", "items:read");
      await run("key", "list", "--user", user.user_id);
      await run("key", "revoke", "--key", key.key_id);
      await run("user", "update", "--user", user.user_id, "--account", other.account_id);
      await run("custom-field", "create", "--account", account.account_id, "--kind", "item", "--name", "Colour");
      await run("customer-label", "create", "--account", account.account_id, "--name", "VIP");
      await run("pricing-tier", "create", "--account", account.account_id, "--name", "Trade");
      const unit = await run("unit", "create", "--account", account.account_id, "--name", "Box");
      const part = await run(
        "item",
        "create",
        "--account",
        account.account_id,
        "--name",
        "Part",
        "--sku",
        `P-${randomUUID().slice(0, 6)}`,
        "--unit",
        String(unit.unit_id),
      );
      const kit = await run("item", "create", "--account", account.account_id, "--name", "Kit", "--sku", `K-${randomUUID().slice(0, 6)}`);
      await run("kit", "create", "--account", account.account_id, "--item", kit.item_id, "--components", `${part.item_id}:2`);
      await run("user", "delete", "--user", user.user_id);

      expect(calls).not.toContain("Scan");
      const allowed = operatorPolicyActions();
      for (const call of calls) {
        expect(ACTIONS_OF_CALL[call], `${call} is not an item call the policy knows`).toBeDefined();
        for (const action of ACTIONS_OF_CALL[call]!) expect(allowed, `${call} needs ${action}`).toContain(action);
      }
      // And the policy grants nothing the commands do not use.
      const used = new Set([...calls].flatMap((call) => ACTIONS_OF_CALL[call] ?? []));
      expect([...allowed].sort()).toEqual([...used].sort());
    },
    CLI_TIMEOUT * 2,
  );
});

describe("admin CLI: table prepare-restored", () => {
  const client = createDynamoClient();
  const created: string[] = [];
  afterAll(async () => {
    for (const name of created) {
      await client.send(new UpdateTableCommand({ TableName: name, DeletionProtectionEnabled: false })).catch(() => undefined);
      await client.send(new DeleteTableCommand({ TableName: name })).catch(() => undefined);
    }
    client.destroy();
  });

  /** A table as a point-in-time restore returns it: keys and indexes, no stream, TTL or protection. */
  async function restoredTable(indexes = GLOBAL_INDEXES): Promise<string> {
    const name = `restored-${randomUUID().slice(0, 8)}`;
    await client.send(new CreateTableCommand(tableDefinition(name, { indexes, stream: false })));
    created.push(name);
    return name;
  }

  it(
    "enables the stream, TTL and deletion protection, prints the stream ARN, and changes nothing the second time",
    async () => {
      const name = await restoredTable();
      const first = succeeded(await cli("table", "prepare-restored", "--table", name, "--json"));
      expect(Object.keys(first).sort()).toEqual(
        ["changed", "deletion_protection", "indexes", "point_in_time_recovery", "stream_arn", "sync_feeds", "table_name", "time_to_live"].sort(),
      );
      expect(first).toMatchObject({ table_name: name, time_to_live: "enabled", deletion_protection: true });
      // DynamoDB Local has no backups API; AWS answers "enabled".
      expect(first.point_in_time_recovery).toBe("unsupported");
      expect(first.indexes).toEqual(GLOBAL_INDEXES.map((i) => i.indexName));
      expect(first.sync_feeds).toEqual({ accounts: 0, carried: 0 });
      expect(first.changed).toEqual(["stream enabled (NEW_AND_OLD_IMAGES)", "TTL enabled on expires_at", "deletion protection enabled"]);

      const { Table: table } = await client.send(new DescribeTableCommand({ TableName: name }));
      expect(table?.StreamSpecification).toEqual({ StreamEnabled: true, StreamViewType: "NEW_AND_OLD_IMAGES" });
      expect(first.stream_arn).toBe(table?.LatestStreamArn);
      expect(table?.DeletionProtectionEnabled).toBe(true);
      const ttl = await client.send(new DescribeTimeToLiveCommand({ TableName: name }));
      expect(ttl.TimeToLiveDescription).toMatchObject({ TimeToLiveStatus: "ENABLED", AttributeName: TABLE_KEYS.timeToLiveAttribute });

      const second = succeeded(await cli("table", "prepare-restored", "--table", name, "--json"));
      expect(second).toEqual({ ...first, changed: [] });
      // Without --json: the values and the deploy command to run next.
      const text = await cli("table", "prepare-restored", "--table", name);
      expect(text.code).toBe(0);
      expect(text.stdout).toContain(`npx cdk deploy --parameters ExistingTableName=${name} --parameters ExistingTableStreamArn=${first.stream_arn}`);
    },
    CLI_TIMEOUT,
  );

  it(
    "carries every account's sync feed past the sequences the restore lost, once per restored table",
    async () => {
      const name = await restoredTable();
      const e = db().entities;
      // Two accounts as the restore brought them back: one whose feed was at 7, one with none.
      const [synced, quiet] = [randomUUID(), randomUUID()];
      for (const accountId of [synced, quiet]) {
        await e.operatorDirectory.put({ directory: "accounts", entry: accountId, accountId }).go({ table: name });
        await e.account.put({ accountId, name: "Restored", createdAt: "2026-01-01T00:00:00.000Z", updatedAt: "2026-01-01T00:00:00.000Z" }).go({ table: name });
      }
      await e.syncHead.put({ accountId: synced, seq: 7, lastAt: 1_700_000_000_000 }).go({ table: name });

      const first = succeeded(await cli("table", "prepare-restored", "--table", name, "--json"));
      expect(first.sync_feeds).toEqual({ accounts: 2, carried: 2 });
      expect(first.changed[0]).toBe("sync feeds of 2 accounts carried past the restore");
      const head = async (accountId: string) => (await e.syncHead.get({ accountId }).go({ consistent: true, table: name })).data;
      expect(await head(synced)).toMatchObject({
        seq: 7 + RESTORE_GAP,
        lastAt: 1_700_000_000_000,
        restoreGaps: [{ table: name, after: 7, upTo: 7 + RESTORE_GAP }],
      });
      expect(await head(quiet)).toMatchObject({ seq: RESTORE_GAP, restoreGaps: [{ table: name, after: 0, upTo: RESTORE_GAP }] });

      const second = succeeded(await cli("table", "prepare-restored", "--table", name, "--json"));
      expect(second.sync_feeds).toEqual({ accounts: 2, carried: 0 });
      expect(second.changed).toEqual([]);
      expect((await head(synced))?.seq).toBe(7 + RESTORE_GAP);
    },
    CLI_TIMEOUT,
  );

  it(
    "a restored table written before the directory existed is refused until directory rebuild has run on it",
    async () => {
      const name = await restoredTable();
      const accountId = randomUUID();
      await db()
        .entities.account.put({ accountId, name: "Old", createdAt: "2020-01-01T00:00:00.000Z", updatedAt: "2020-01-01T00:00:00.000Z" })
        .go({ table: name });
      const refused = failed(await cli("table", "prepare-restored", "--table", name, "--json"), "invalid_input");
      expect(refused.error.message).toContain(`TABLE_NAME=${name} npm run admin -- directory rebuild`);
      const { Table: table } = await client.send(new DescribeTableCommand({ TableName: name }));
      expect(table?.StreamSpecification?.StreamEnabled ?? false).toBe(false);
    },
    CLI_TIMEOUT,
  );

  it(
    "a stream of another view type is replaced by one with new and old images",
    async () => {
      const name = await restoredTable();
      await client.send(new UpdateTableCommand({ TableName: name, StreamSpecification: { StreamEnabled: true, StreamViewType: "KEYS_ONLY" } }));
      const prepared = succeeded(await cli("table", "prepare-restored", "--table", name, "--json"));
      expect(prepared.changed.slice(0, 2)).toEqual(["stream with KEYS_ONLY disabled", "stream enabled (NEW_AND_OLD_IMAGES)"]);
      const { Table: table } = await client.send(new DescribeTableCommand({ TableName: name }));
      expect(table?.StreamSpecification?.StreamViewType).toBe("NEW_AND_OLD_IMAGES");
    },
    CLI_TIMEOUT,
  );

  it(
    "a table without every index, an unknown table and a malformed name are refused and nothing is changed",
    async () => {
      const name = await restoredTable(GLOBAL_INDEXES.slice(1));
      const missing = failed(await cli("table", "prepare-restored", "--table", name, "--json"), "invalid_input");
      expect(missing.error.message).toContain(GLOBAL_INDEXES[0]!.indexName);
      const { Table: table } = await client.send(new DescribeTableCommand({ TableName: name }));
      expect(table?.StreamSpecification?.StreamEnabled ?? false).toBe(false);
      expect(table?.DeletionProtectionEnabled ?? false).toBe(false);

      const unknown = failed(await cli("table", "prepare-restored", "--table", `absent-${randomUUID().slice(0, 8)}`, "--json"), "not_found");
      expect(unknown.error.message).toMatch(/^No such table: absent-/);
      failed(await cli("table", "prepare-restored", "--table", "a/b", "--json"), "invalid_arguments");
      failed(await cli("table", "prepare-restored", "--json"), "invalid_arguments");
    },
    CLI_TIMEOUT,
  );
});
