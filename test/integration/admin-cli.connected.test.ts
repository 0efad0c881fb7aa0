import { describe, expect, it } from "vitest";
import { readAccount } from "../../lib/db/admin-store.js";
import { useApiServer, type TestResponse } from "../support/api.js";
import { idempotencyKey, newAccount, newKey, newUser } from "../support/fixtures.js";
import { cli, failed, singleJsonObject, succeeded } from "../support/cli.js";

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
      const body = failed(await cli("account", "create", "--name", "Martians", "--time-zone", "Mars/Base", "--json"));
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
      const allowed = await api()
        .withKey(full.key)
        .post("/locations", { name: "Clerk depot", short_name: "CLK" }, { idempotencyKey: idempotencyKey() });
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
      const updated = succeeded(
        await cli("account", "update", "--account", account.accountId, "--record-limit", "none", "--packing-lists", "off", "--json"),
      );
      expect(updated).toMatchObject({ account_id: account.accountId, packing_lists_enabled: false, record_limit: null });

      const stored = await readAccount(account.accountId);
      expect(stored?.packingListsEnabled).toBe(false);
      expect(stored?.recordLimit ?? null).toBeNull();
      // The account still works through the API.
      expect((await api().withKey(account.ownerKey).get("/locations")).status).toBe(200);
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
      expect(wrongKind.code).not.toBe(0);
      expect(singleJsonObject(wrongKind).error.message).toMatch(/--kind/);
    },
    CLI_TIMEOUT,
  );
});
