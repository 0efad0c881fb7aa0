import { randomUUID } from "node:crypto";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { hashApiKey } from "../../lib/auth/api-keys.js";
import { PERMISSIONS, PERMISSION_DESCRIPTIONS, SCOPES, SCOPE_DESCRIPTIONS, USER_SETTING_DESCRIPTIONS } from "../../lib/auth/permissions.js";
import { readAccount } from "../../lib/db/admin-store.js";
import { revokeKey } from "../../lib/domain/admin/service.js";
import { freePort } from "../../scripts/local/dynamodb.js";
import { useApiServer, type TestResponse } from "../support/api.js";
import { idempotencyKey, newAccount, newKey, newUser, updateUser } from "../support/fixtures.js";
import { cli, cliInEnv, cliWithEnv, failed, npmAdmin, succeeded, type CliResult } from "../support/cli.js";

/**
 * The operator CLI (architecture section 7) run as a subprocess, exactly as an operator runs
 * `npm run admin -- ...`, against the suite's DynamoDB Local; its effects are checked through
 * the API. Subprocesses are slow, so secondary set-up uses the in-process fixtures.
 */
const api = useApiServer();

const CLI_TIMEOUT = 60_000;

function expectUnauthenticated(response: TestResponse): void {
  expect(response.status, response.text).toBe(401);
  expect(response.headers.get("www-authenticate")).toBe("Bearer");
  expect(response.body.error).toMatchObject({ type: "authentication_error", code: "authentication_required" });
}

const API_KEY = /^isk_live_[0-9A-Za-z]{40}$/;

describe("admin CLI (architecture 7)", () => {
  it(
    "account create --json prints exactly {account_id, user_id, key_id, api_key} and the key works with every scope",
    async () => {
      const created = succeeded(await cli("account", "create", "--name", "CLI Account", "--json"));
      expect(Object.keys(created).sort()).toEqual(["account_id", "api_key", "key_id", "user_id"]);
      expect(created.api_key).toMatch(API_KEY);
      expect(created.account_id).toMatch(/^[0-9a-f-]{36}$/);

      const client = api().withKey(created.api_key);
      const list = await client.get("/locations");
      expect(list.status, list.text).toBe(200);
      expect(list.body.data).toEqual([]);
      // An owner user and an all-scopes key: writes work too.
      const location = await client.post("/locations", { name: "CLI depot", short_name: "CLI" }, { idempotencyKey: idempotencyKey() });
      expect(location.status, location.text).toBe(201);
    },
    CLI_TIMEOUT,
  );

  it(
    "account create with an unknown time zone exits non-zero and prints one {error} object with --json",
    async () => {
      const body = failed(await cli("account", "create", "--name", "Martians", "--time-zone", "Mars/Base", "--json"), "invalid_arguments");
      expect(body.error.message).toContain("Mars/Base");
    },
    CLI_TIMEOUT,
  );

  it(
    "user create --permissions --json prints {user_id}; key create --scopes items:read --json prints {key_id, api_key} and that key cannot write",
    async () => {
      const account = await newAccount();
      const created = succeeded(
        await cli("user", "create", "--account", account.accountId, "--name", "Stock clerk", "--permissions", "inventory.modify", "--json"),
      );
      expect(Object.keys(created)).toEqual(["user_id"]);

      const key = succeeded(await cli("key", "create", "--user", created.user_id, "--scopes", "items:read", "--json"));
      expect(Object.keys(key).sort()).toEqual(["api_key", "key_id"]);
      expect(key.api_key).toMatch(API_KEY);

      // The scoped key reads, but cannot write whatever its user may do.
      const client = api().withKey(key.api_key);
      expect((await client.get("/locations")).status).toBe(200);
      const write = await client.post("/locations", { name: "Scoped", short_name: "S" }, { idempotencyKey: idempotencyKey() });
      expect(write.status, write.text).toBe(403);
      expect(write.body.error).toMatchObject({ type: "invalid_request_error", code: "insufficient_scope", param: "items:write" });
      expect((await api().withKey(account.ownerKey).get("/locations")).body.data).toEqual([]);

      // With an all-scopes key the stored inventory.modify permission lets the staff user create.
      const full = await newKey(created.user_id);
      const allowed = await api().withKey(full.key).post("/locations", { name: "Clerk depot", short_name: "CLK" }, { idempotencyKey: idempotencyKey() });
      expect(allowed.status, allowed.text).toBe(201);
    },
    CLI_TIMEOUT,
  );

  it(
    "user create with an unknown permission exits non-zero with an {error} naming it",
    async () => {
      const account = await newAccount();
      const body = failed(
        await cli("user", "create", "--account", account.accountId, "--name", "Wizard", "--permissions", "inventory.modify,magic.cast", "--json"),
        "invalid_arguments",
      );
      expect(body.error.message).toContain("magic.cast");
    },
    CLI_TIMEOUT,
  );

  it(
    "key revoke makes that key 401 at once while the user's other key keeps working",
    async () => {
      const account = await newAccount();
      const user = await newUser(account, { permissions: ["inventory.list"] });
      const other = await newUser(account); // a different user, unaffected
      const extra = succeeded(await cli("key", "create", "--user", user.userId, "--json"));
      expect((await api().withKey(extra.api_key).get("/locations")).status).toBe(200);

      const revoked = await cli("key", "revoke", "--key", extra.key_id);
      expect(revoked.code, revoked.stderr).toBe(0);

      expectUnauthenticated(await api().withKey(extra.api_key).get("/locations"));
      expect((await api().withKey(user.key).get("/locations")).status).toBe(200);
      expect((await api().withKey(other.key).get("/locations")).status).toBe(200);
    },
    CLI_TIMEOUT,
  );

  it(
    "user update --status inactive, --account OTHER and user delete each make the user's key 401",
    async () => {
      const account = await newAccount();
      const otherAccount = await newAccount();
      const inactive = await newUser(account);
      const moved = await newUser(account);
      const deleted = await newUser(account);
      const bystander = await newUser(account);
      for (const user of [inactive, moved, deleted]) expect((await api().withKey(user.key).get("/locations")).status).toBe(200);

      const results = await Promise.all([
        cli("user", "update", "--user", inactive.userId, "--status", "inactive"),
        cli("user", "update", "--user", moved.userId, "--account", otherAccount.accountId),
        cli("user", "delete", "--user", deleted.userId),
      ]);
      for (const result of results) expect(result.code, `${result.stdout}\n${result.stderr}`).toBe(0);

      expectUnauthenticated(await api().withKey(inactive.key).get("/locations"));
      expectUnauthenticated(await api().withKey(moved.key).get("/locations"));
      expectUnauthenticated(await api().withKey(deleted.key).get("/locations"));
      expect((await api().withKey(bystander.key).get("/locations")).status).toBe(200);
    },
    CLI_TIMEOUT,
  );

  it(
    "account update --record-limit none --packing-lists off --json succeeds and stores the settings",
    async () => {
      const account = await newAccount();
      const updated = succeeded(await cli("account", "update", "--account", account.accountId, "--record-limit", "none", "--packing-lists", "off", "--json"));
      expect(updated).toMatchObject({ account_id: account.accountId, packing_lists_enabled: false, record_limit: null });

      const stored = await readAccount(account.accountId);
      expect(stored?.packingListsEnabled).toBe(false);
      expect(stored?.recordLimit ?? null).toBeNull();
      // The account still works through the API.
      expect((await api().withKey(account.ownerKey).get("/locations")).status).toBe(200);
    },
    CLI_TIMEOUT,
  );

  it(
    "account update trims text settings, and a blank one removes the setting (documents show null, not an empty string)",
    async () => {
      const account = await newAccount();
      const set = succeeded(await cli("account", "update", "--account", account.accountId, "--payment-terms", "  Net 30 ", "--tax-label", "GST", "--json"));
      expect(set).toMatchObject({ payment_terms: "Net 30", tax_label: "GST" });
      const cleared = succeeded(await cli("account", "update", "--account", account.accountId, "--payment-terms", "", "--tax-label", "   ", "--json"));
      expect(cleared).toMatchObject({ payment_terms: null, tax_label: null });
      const stored = await readAccount(account.accountId);
      expect(stored?.paymentTerms).toBeUndefined();
      expect(stored?.taxLabel).toBeUndefined();
      failed(await cli("account", "update", "--account", account.accountId, "--payment-terms", "x".repeat(256), "--json"));

      const client = api().withKey(account.ownerKey);
      const location = (await client.post("/locations", { name: "Main", short_name: "MAIN" }, { idempotencyKey: idempotencyKey() })).body.id;
      const supplier = (await client.post("/suppliers", { name: "Maker" })).body.id;
      const order = await client.post("/purchase-orders", { supplier_id: supplier, location_id: location, lines: [{ name: "Freight", unit_cost: 5 }] });
      expect(order.status, order.text).toBe(201);
      expect(order.body).toMatchObject({ payment_terms: null, tax_label: null });
    },
    CLI_TIMEOUT,
  );
});

describe("admin CLI: account reference data", () => {
  it(
    "custom-field, customer-label and pricing-tier create print their id, and records accept them",
    async () => {
      const account = await newAccount();
      const field = succeeded(await cli("custom-field", "create", "--account", account.accountId, "--kind", "customer", "--name", "Territory", "--json"));
      expect(Object.keys(field)).toEqual(["custom_field_id"]);
      const label = succeeded(await cli("customer-label", "create", "--account", account.accountId, "--name", "Wholesale", "--json"));
      expect(Object.keys(label)).toEqual(["customer_label_id"]);
      const tier = succeeded(await cli("pricing-tier", "create", "--account", account.accountId, "--name", "Gold", "--json"));
      expect(Object.keys(tier)).toEqual(["pricing_tier_id"]);

      const created = await api()
        .withKey(account.ownerKey)
        .post(
          "/customers",
          {
            name: "Referenced",
            customer_label_id: label.customer_label_id,
            pricing_tier_id: tier.pricing_tier_id,
            custom_field_values: [{ custom_field_id: field.custom_field_id, value: "North" }],
          },
          { idempotencyKey: idempotencyKey() },
        );
      expect(created.status).toBe(201);
      expect(created.body.pricing_tier_id).toBe(tier.pricing_tier_id);
      expect(created.body.custom_field_values).toEqual([{ custom_field_id: field.custom_field_id, value: "North" }]);

      const wrongKind = await cli("custom-field", "create", "--account", account.accountId, "--kind", "spaceship", "--name", "X", "--json");
      expect(failed(wrongKind, "invalid_arguments").error.message).toMatch(/--kind/);
    },
    CLI_TIMEOUT,
  );
});

const COMMAND_NAMES = [
  "account create",
  "account list",
  "account update",
  "user create",
  "user list",
  "user update",
  "user delete",
  "key create",
  "key list",
  "key revoke",
  "location create",
  "custom-field create",
  "customer-label create",
  "pricing-tier create",
  "unit create",
  "item create",
  "kit create",
  "scopes",
  "permissions",
];

describe("admin CLI: help and argument errors", () => {
  it(
    "npm run -s admin -- --help lists every command; a command's --help shows its options; with --json help is one object",
    async () => {
      const [overview, accountList, locationJson, keyGroup] = await Promise.all([
        npmAdmin("--help"),
        cli("account", "list", "--help"),
        cli("location", "create", "--help", "--json"),
        cli("key", "--help"),
      ]);
      expect(overview.code, overview.stderr).toBe(0);
      expect(overview.stdout.startsWith("Usage: npm run -s admin -- <command>"), overview.stdout).toBe(true); // no npm banner
      for (const name of COMMAND_NAMES) expect(overview.stdout).toContain(`  ${name} `);

      expect(accountList.code).toBe(0);
      expect(accountList.stdout).toContain("Usage: npm run -s admin -- account list [--json]");
      const help = succeeded(locationJson);
      expect(Object.keys(help)).toEqual(["help"]);
      expect(help.help).toContain("location create --account ID --name N --short-name S");
      expect(keyGroup.code).toBe(0);
      for (const name of ["key create", "key list", "key revoke"]) expect(keyGroup.stdout).toContain(name);
    },
    CLI_TIMEOUT,
  );

  const scratch = mkdtempSync(join(tmpdir(), "admin-cli-"));
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));

  it(
    "argument errors exit 2 with {error: {code: invalid_arguments}} before any database is started or contacted",
    async () => {
      // Nothing answers at this endpoint: a CLI that contacted it would report database_unavailable.
      const unreachable = { DYNAMODB_ENDPOINT: `http://127.0.0.1:${await freePort()}` };
      // No endpoint, nothing on DYNAMODB_PORT: a CLI that started DynamoDB Local would create DATA_DIR.
      const dataDir = join(scratch, "never-created");
      const wouldStart = { DYNAMODB_ENDPOINT: undefined, DYNAMODB_PORT: String(await freePort()), DATA_DIR: dataDir };
      const cases: [Record<string, string | undefined>, string[], RegExp][] = [
        [unreachable, ["frobnicate", "--json"], /Unknown command: frobnicate/],
        [unreachable, ["account", "list", "--bogus", "1", "--json"], /Unknown option --bogus/],
        [unreachable, ["key", "list", "--user", "not-an-id", "--json"], /--user takes an id/],
        [wouldStart, ["account", "create", "--name", "X", "--time-zone", "Mars/Base", "--json"], /Mars\/Base/],
        [wouldStart, ["account", "create", "--name", "X", "--currency", "XYZ", "--json"], /ISO 4217 code in use.*XYZ/],
        [wouldStart, ["key", "create", "--user", randomUUID(), "--name", "K".repeat(300), "--json"], /--name must be at most 255/],
        [wouldStart, ["key", "create", "--user", randomUUID(), "--expires-at", "2020-01-01T00:00:00Z", "--json"], /--expires-at must be in the future/],
        [wouldStart, ["key", "revoke", "--key", `isk_live_${"a".repeat(40)}`, "--json"], /key id/],
        [wouldStart, ["location", "create", "--account", randomUUID(), "--name", "Depot", "--json"], /--short-name is required/],
        [wouldStart, ["item", "create", "--account", randomUUID(), "--name", "Nut", "--price", "abc", "--json"], /^--price: /],
        [wouldStart, ["item", "create", "--account", randomUUID(), "--name", "Nut", "--sku", "S".repeat(300), "--json"], /^--sku: /],
        [unreachable, ["frobnicate", "--help", "--json"], /Unknown command: frobnicate/],
        // An unknown flag without a value is named as unknown, not as missing its value.
        [unreachable, ["account", "list", "--bogus", "--json"], /Unknown option --bogus for account list/],
        [unreachable, ["account", "update", "--account", randomUUID(), "--estimate-expiry-days", "99999999999999999999", "--json"], /up to 36500/],
        [unreachable, ["account", "update", "--account", randomUUID(), "--record-limit", "99999999999999999999", "--json"], /up to 1000000000 or none/],
        [wouldStart, ["key", "create", "--user", randomUUID(), "--expires-at", "2030-02-30T00:00:00Z", "--json"], /--expires-at must be an ISO 8601/],
        [wouldStart, ["key", "create", "--user", randomUUID(), "--expires-at", "2030-01-01T00:00:00", "--json"], /with its offset/],
        [wouldStart, ["user", "create", "--account", randomUUID(), "--name", "Bad", "--email", "notanemail", "--json"], /--email must be an email address/],
        // A list with an empty entry is refused, not read without it.
        [
          wouldStart,
          ["user", "create", "--account", randomUUID(), "--name", "Clerk", "--permissions", "inventory.list,", "--json"],
          /--permissions .*without empty entries/,
        ],
        [wouldStart, ["key", "create", "--user", randomUUID(), "--scopes", "items:read,,items:write", "--json"], /--scopes .*without empty entries/],
        // --name is optional on key create: given blank, it is blank, not missing.
        [wouldStart, ["key", "create", "--user", randomUUID(), "--name", "", "--json"], /^--name must not be blank\.$/],
      ];
      // In this process (a process start per case cost most of the suite's CLI time), then the
      // first case of each environment as an operator runs it.
      const results: CliResult[] = [];
      for (const [env, args] of cases) results.push(await cliInEnv(env, ...args));
      const firstOfEach = [cases.findIndex(([env]) => env === unreachable), cases.findIndex(([env]) => env === wouldStart)];
      const started = await Promise.all(firstOfEach.map((i) => cliWithEnv(cases[i]![0], ...cases[i]![1])));
      firstOfEach.forEach((caseIndex, i) => {
        expect(started[i]!.stdout).toBe(results[caseIndex]!.stdout);
        expect(started[i]!.code).toBe(results[caseIndex]!.code);
      });
      results.forEach((result, i) => {
        const body = failed(result, "invalid_arguments");
        expect(result.code).toBe(2);
        expect(body.error.message).toMatch(cases[i]![2]);
      });
      expect(existsSync(dataDir)).toBe(false);

      // The same endpoint with valid arguments is contacted, and reported unreachable.
      const contacted = await cliWithEnv(unreachable, "account", "list", "--json");
      expect(failed(contacted, "database_unavailable").error.message).toContain(unreachable.DYNAMODB_ENDPOINT);
      expect(contacted.code).toBe(1);
    },
    CLI_TIMEOUT,
  );

  it(
    "a command against DYNAMODB_ENDPOINT writes nothing under DATA_DIR (no cursor secret: the CLI signs no cursor)",
    async () => {
      const dataDir = join(scratch, "untouched");
      const listed = await cliWithEnv({ DATA_DIR: dataDir, SYNC_CURSOR_SECRET: undefined }, "account", "list", "--json");
      expect(listed.code, listed.stderr).toBe(0);
      expect(existsSync(dataDir)).toBe(false);
    },
    CLI_TIMEOUT,
  );
});

describe("admin CLI: the database it talks to", () => {
  const scratch = mkdtempSync(join(tmpdir(), "admin-cli-db-"));
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));

  it(
    "DYNAMODB_PORT set with nothing there is database_unavailable naming it: never DATA_DIR's data instead",
    async () => {
      const port = await freePort();
      const dataDir = join(scratch, "other-data");
      const result = await cliWithEnv({ DYNAMODB_ENDPOINT: undefined, DYNAMODB_PORT: String(port), DATA_DIR: dataDir }, "account", "list", "--json");
      expect(result.code).toBe(1);
      expect(failed(result, "database_unavailable").error.message).toContain(`DYNAMODB_PORT=${port}`);
      expect(existsSync(dataDir)).toBe(false);
    },
    CLI_TIMEOUT,
  );

  it(
    "a TABLE_NAME the DynamoDB does not hold is database_unavailable naming the tables there, and no table is made",
    async () => {
      const missing = `no-such-table-${randomUUID().slice(0, 8)}`;
      const result = await cliWithEnv({ TABLE_NAME: missing }, "account", "list", "--json");
      expect(result.code).toBe(1);
      const message = failed(result, "database_unavailable").error.message;
      expect(message).toContain(`has no table ${missing}`);
      expect(message).toContain(process.env.TABLE_NAME!);
      const { ListTablesCommand } = await import("@aws-sdk/client-dynamodb");
      const { createDynamoClient } = await import("../../lib/db/client.js");
      const client = createDynamoClient();
      try {
        expect((await client.send(new ListTablesCommand({}))).TableNames).not.toContain(missing);
      } finally {
        client.destroy();
      }
    },
    CLI_TIMEOUT,
  );

  it(
    "stores a time zone with the zone database's casing, as the API does",
    async () => {
      const created = succeeded(await cli("account", "create", "--name", "Zones", "--time-zone", "america/new_york", "--json"));
      expect((await readAccount(created.account_id))?.timeZone).toBe("America/New_York");
      const updated = succeeded(await cli("account", "update", "--account", created.account_id, "--time-zone", "utc", "--json"));
      expect(updated.time_zone).toBe("UTC");
    },
    CLI_TIMEOUT,
  );
});

describe("admin CLI: against AWS (DYNAMODB_ENDPOINT=aws)", () => {
  const home = mkdtempSync(join(tmpdir(), "admin-cli-home-"));
  afterAll(() => rmSync(home, { recursive: true, force: true }));
  /** Every way the AWS SDK could find credentials, hidden: an empty home, no variables, no instance metadata. */
  const noCredentials = {
    DYNAMODB_ENDPOINT: "aws",
    TABLE_NAME: "InventoryApi-Table",
    HOME: home,
    AWS_EC2_METADATA_DISABLED: "true",
    ...Object.fromEntries(
      [
        "AWS_PROFILE",
        "AWS_ACCESS_KEY_ID",
        "AWS_SECRET_ACCESS_KEY",
        "AWS_SESSION_TOKEN",
        "AWS_SHARED_CREDENTIALS_FILE",
        "AWS_CONFIG_FILE",
        "AWS_WEB_IDENTITY_TOKEN_FILE",
        "AWS_ROLE_ARN",
        "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
        "AWS_CONTAINER_CREDENTIALS_FULL_URI",
        "AWS_DEFAULT_REGION",
      ].map((name) => [name, undefined]),
    ),
  };

  it(
    "without credentials, or without a region, answers database_unavailable (exit 1) saying what to set",
    async () => {
      const [credentials, region] = await Promise.all([
        cliWithEnv({ ...noCredentials, AWS_REGION: "eu-west-1" }, "account", "list", "--json"),
        cliWithEnv({ ...noCredentials, AWS_REGION: undefined }, "account", "list", "--json"),
      ]);
      expect(credentials.code).toBe(1);
      expect(failed(credentials, "database_unavailable").error.message).toBe(
        "Could not load credentials from any providers: no AWS credentials found; configure them (AWS_PROFILE, or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY).",
      );
      expect(region.code).toBe(1);
      expect(failed(region, "database_unavailable").error.message).toBe(
        "No AWS region is set (the AWS SDK says: Region is missing): set AWS_REGION to the stack's region.",
      );
    },
    CLI_TIMEOUT,
  );
});

describe("admin CLI: listing and locations", () => {
  it(
    "account list, user list --account and key list --user show ids, names, scopes, status and dates, never a key or its hash",
    async () => {
      const account = await newAccount(`Listed ${randomUUID().slice(0, 8)}`);
      const otherAccount = await newAccount();
      const clerk = await newUser(account, { permissions: ["inventory.list", "inventory.modify"] });
      const readOnly = await newKey(clerk.userId, { scopes: ["items:read"] });
      const expired = await newKey(clerk.userId, { expiresAt: "2020-01-01T00:00:00Z" });
      const revoked = await newKey(clerk.userId);
      await revokeKey(revoked.keyId);
      const moved = await newUser(account);
      await updateUser(moved.userId, { accountId: otherAccount.accountId });

      const [accounts, users, keys, keysText, movedKeys, noAccount, noUser] = await Promise.all([
        cli("account", "list", "--json"),
        cli("user", "list", "--account", account.accountId, "--json"),
        cli("key", "list", "--user", clerk.userId, "--json"),
        cli("key", "list", "--user", clerk.userId),
        cli("key", "list", "--user", moved.userId, "--json"),
        cli("user", "list", "--account", randomUUID(), "--json"),
        cli("key", "list", "--user", randomUUID(), "--json"),
      ]);

      const listed = succeeded(accounts);
      expect(Object.keys(listed)).toEqual(["accounts"]);
      const mine = listed.accounts.find((a: { account_id: string }) => a.account_id === account.accountId);
      expect(mine).toEqual({
        account_id: account.accountId,
        name: expect.stringMatching(/^Listed /),
        time_zone: "UTC",
        currency: "USD",
        created_at: expect.any(String),
      });

      const people = succeeded(users).users as Record<string, unknown>[];
      expect(people.map((u) => u.user_id).sort()).toEqual([account.ownerUserId, clerk.userId].sort());
      expect(people.find((u) => u.user_id === clerk.userId)).toEqual({
        user_id: clerk.userId,
        name: expect.any(String),
        email: null,
        role: "staff",
        status: "active",
        permissions: ["inventory.list", "inventory.modify"],
        location_id: null,
        created_at: expect.any(String),
      });
      // An owner holds every permission (and no location), whatever is stored for them.
      expect(people.find((u) => u.user_id === account.ownerUserId)).toEqual({
        user_id: account.ownerUserId,
        name: "Owner",
        email: null,
        role: "owner",
        status: "active",
        permissions: [...PERMISSIONS].sort(),
        location_id: null,
        created_at: expect.any(String),
      });
      const usersText = await cli("user", "list", "--account", account.accountId);
      expect(usersText.code, usersText.stderr).toBe(0);
      const textLines = usersText.stdout.split("\n");
      expect(textLines[0]).toBe("users: 2");
      expect(textLines.find((line) => line.includes(`user_id=${account.ownerUserId}`))).toContain(
        `  role=owner  status=active  permissions=${[...PERMISSIONS].sort().join(",")}  created_at=`,
      );
      expect(textLines.find((line) => line.includes(`user_id=${clerk.userId}`))).toContain(
        "  role=staff  status=active  permissions=inventory.list,inventory.modify  created_at=",
      );

      const listedKeys = succeeded(keys).keys as Record<string, unknown>[];
      expect(listedKeys.map((k) => [k.key_id, k.status])).toEqual(
        expect.arrayContaining([
          [clerk.keyId, "active"],
          [readOnly.keyId, "active"],
          [expired.keyId, "expired"],
          [revoked.keyId, "revoked"],
        ]),
      );
      expect(listedKeys).toHaveLength(4);
      expect(listedKeys.find((k) => k.key_id === readOnly.keyId)).toEqual({
        key_id: readOnly.keyId,
        name: null,
        scopes: ["items:read"],
        status: "active",
        created_at: expect.any(String),
        expires_at: null,
        revoked_at: null,
      });
      expect(listedKeys.find((k) => k.key_id === revoked.keyId)?.revoked_at).toEqual(expect.any(String));
      expect(listedKeys.find((k) => k.key_id === expired.keyId)?.expires_at).toBe("2020-01-01T00:00:00.000Z");
      // Never a key, never a hash, in either output format.
      for (const output of [keys.stdout, keysText.stdout]) {
        expect(output).not.toContain("isk_live_");
        for (const key of [clerk.key, readOnly.key, expired.key, revoked.key]) expect(output).not.toContain(hashApiKey(key));
        expect(output).not.toMatch(/[0-9a-f]{64}/);
      }
      expect(keysText.code).toBe(0);
      expect(keysText.stdout).toContain(`key_id=${revoked.keyId}`);

      // Keys minted before their user moved to another account are void.
      expect(succeeded(movedKeys).keys).toEqual([expect.objectContaining({ key_id: moved.keyId, status: "void" })]);
      expect(failed(noAccount, "not_found").error.message).toMatch(/No such account/);
      expect(noAccount.code).toBe(1);
      expect(failed(noUser, "not_found").error.message).toMatch(/No such user/);
    },
    CLI_TIMEOUT,
  );

  it(
    "location create --json prints {location_id}; the API serves the location; a missing account is not_found",
    async () => {
      const account = await newAccount();
      const [created, tooLong, noAccount] = await Promise.all([
        cli("location", "create", "--account", account.accountId, "--name", "Back Office", "--short-name", "BACK", "--json"),
        cli("location", "create", "--account", account.accountId, "--name", "Long", "--short-name", "S".repeat(26), "--json"),
        cli("location", "create", "--account", randomUUID(), "--name", "Nowhere", "--short-name", "NO", "--json"),
      ]);
      const location = succeeded(created);
      expect(Object.keys(location)).toEqual(["location_id"]);
      const served = await api().withKey(account.ownerKey).get("/locations");
      expect(served.status, served.text).toBe(200);
      expect(served.body.data).toEqual([{ id: location.location_id, object: "location", name: "Back Office", short_name: "BACK" }]);

      expect(failed(tooLong, "invalid_arguments").error.message).toMatch(/--short-name/);
      expect(failed(noAccount, "not_found").error.message).toMatch(/No such account/);
    },
    CLI_TIMEOUT,
  );
});

/** The rows of a `scopes` / `permissions` table: a name, then its description wrapped on indented lines. */
function tableRows(text: string): [string, string][] {
  const rows: [string, string][] = [];
  for (const line of text.split("\n")) {
    const match = /^(\S+)\s{2,}(.*)$/.exec(line);
    if (match) rows.push([match[1]!, match[2]!]);
    else if (/^\s+\S/.test(line) && rows.length > 0) rows[rows.length - 1]![1] += ` ${line.trim()}`;
  }
  return rows;
}

describe("admin CLI: scopes and permissions", () => {
  it(
    "scopes and permissions print every description of lib/auth/permissions.ts (--json: one object; else a table), with no database at all",
    async () => {
      // Nothing answers here: a command that contacted a database would fail.
      const unreachable = { DYNAMODB_ENDPOINT: `http://127.0.0.1:${await freePort()}` };
      const scopesJson = await cliInEnv(unreachable, "scopes", "--json");
      const permissionsJson = await cliInEnv(unreachable, "permissions", "--json");
      const scopesText = await cliInEnv(unreachable, "scopes");
      const permissionsText = await cliInEnv(unreachable, "permissions");
      const scopes = SCOPES.map((name) => ({ name, description: SCOPE_DESCRIPTIONS[name] }));
      const permissions = PERMISSIONS.map((name) => ({ name, description: PERMISSION_DESCRIPTIONS[name] }));
      const settings = Object.entries(USER_SETTING_DESCRIPTIONS).map(([name, description]) => ({ name, description }));
      expect(succeeded(scopesJson)).toEqual({ scopes });
      expect(succeeded(permissionsJson)).toEqual({ permissions, user_settings: settings });

      expect(scopesText.code, scopesText.stderr).toBe(0);
      expect(scopesText.stdout.split("\n")[0]).toMatch(/^scope {2,}what it lets a key do$/);
      expect(tableRows(scopesText.stdout).slice(1, 1 + scopes.length)).toEqual(scopes.map((s) => [s.name, s.description]));
      expect(scopesText.stdout).toContain("A key created with --scopes all (the default) holds every scope.");
      expect(permissionsText.code, permissionsText.stderr).toBe(0);
      const rows = tableRows(permissionsText.stdout);
      expect(rows[0]).toEqual(["permission", "what it grants"]);
      expect(rows.slice(1, 1 + permissions.length)).toEqual(permissions.map((p) => [p.name, p.description]));
      expect(permissionsText.stdout).toMatch(/\nuser setting {2,}what it does\n/);
      expect(rows.slice(-settings.length)).toEqual(settings.map((p) => [p.name, p.description]));
      for (const line of [...scopesText.stdout.split("\n"), ...permissionsText.stdout.split("\n")]) expect(line.length, line).toBeLessThanOrEqual(100);
    },
    CLI_TIMEOUT,
  );

  it(
    "an unknown scope or permission is refused before any database is contacted, with the list of valid ones",
    async () => {
      const unreachable = { DYNAMODB_ENDPOINT: `http://127.0.0.1:${await freePort()}` };
      const scope = await cliInEnv(unreachable, "key", "create", "--user", randomUUID(), "--scopes", "items:read,bad", "--json");
      const permission = await cliInEnv(unreachable, "user", "update", "--user", randomUUID(), "--permissions", "magic.cast", "--json");
      expect(scope.code).toBe(2);
      expect(failed(scope, "invalid_arguments").error.message).toBe(`Unknown scope(s): bad. Known: ${SCOPES.join(", ")}, or all (every scope).`);
      expect(permission.code).toBe(2);
      expect(failed(permission, "invalid_arguments").error.message).toBe(`Unknown permission(s): magic.cast. Known: ${PERMISSIONS.join(", ")}.`);
    },
    CLI_TIMEOUT,
  );
});
