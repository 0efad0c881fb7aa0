import { describe, expect, it } from "vitest";
import { mintApiKey } from "../../lib/auth/api-keys.js";
import { deleteUser, revokeKey } from "../../lib/domain/admin/service.js";
import { useApiServer, type ApiClient, type TestResponse } from "../support/api.js";
import { idempotencyKey, newAccount, newKey, newUser, updateUser, type TestAccount } from "../support/fixtures.js";

/**
 * Authentication, account isolation, scopes and permissions (spec part 1, sections 1 and 5;
 * architecture sections 3 and 4). Every request goes through the real handlers against
 * DynamoDB Local; every test makes its own accounts.
 */
const api = useApiServer();

/** Spec part 1, section 5, rules 3 and 4: the one shape of every authentication failure. */
function expectUnauthenticated(response: TestResponse): void {
  expect(response.status, response.text).toBe(401);
  expect(response.headers.get("www-authenticate")).toBe("Bearer");
  expect(response.body).toEqual({
    error: { type: "authentication_error", code: "authentication_required", message: expect.any(String) },
  });
  expect(response.body.error.message.length).toBeGreaterThan(0);
}

function expectInsufficientScope(response: TestResponse, scope: string): void {
  expect(response.status, response.text).toBe(403);
  expect(response.body).toEqual({
    error: { type: "invalid_request_error", code: "insufficient_scope", param: scope, message: expect.any(String) },
  });
}

function expectPermissionDenied(response: TestResponse): void {
  expect(response.status, response.text).toBe(403);
  expect(response.body.error).toMatchObject({ type: "invalid_request_error", code: "permission_denied" });
  expect(typeof response.body.error.message).toBe("string");
}

/** GET /locations with a raw Authorization header value (or none at all). */
function listLocationsWith(authorization: string | undefined): Promise<TestResponse> {
  return api().get("/locations", undefined, authorization === undefined ? {} : { headers: { authorization } });
}

async function createLocation(client: ApiClient, name = "Main warehouse", shortName = "MAIN") {
  const response = await client.post("/locations", { name, short_name: shortName }, { idempotencyKey: idempotencyKey() });
  expect(response.status, response.text).toBe(201);
  return response.body as { id: string; name: string };
}

async function locationNames(account: TestAccount): Promise<string[]> {
  const list = await api().withKey(account.ownerKey).get("/locations");
  expect(list.status).toBe(200);
  return (list.body.data as { name: string }[]).map((l) => l.name);
}

describe("authentication: credential format (spec 5.1, 5.3)", () => {
  it("a request without an Authorization header is 401 authentication_required with WWW-Authenticate: Bearer", async () => {
    expectUnauthenticated(await listLocationsWith(undefined));
  });

  it("a valid key under a scheme other than Bearer is 401", async () => {
    const account = await newAccount();
    expectUnauthenticated(await listLocationsWith(`Basic ${account.ownerKey}`));
    expectUnauthenticated(await listLocationsWith(`Token ${account.ownerKey}`));
    const bare = await listLocationsWith(account.ownerKey);
    expectUnauthenticated(bare);
    // The message names what is wrong: the scheme, not the key.
    expect(bare.body.error.message).toBe("The Authorization header is missing its scheme. Send Authorization: Bearer <API_KEY>.");
    expect((await listLocationsWith(`Token ${account.ownerKey}`)).body.error.message).toMatch(/^The Authorization scheme Token is not supported/);
    expect((await listLocationsWith("Bearer")).body.error.message).toMatch(/no API key after Bearer/);
    expect((await listLocationsWith(`Bearer ${account.ownerKey.slice(0, -1)}`)).body.error.message).toBe("The API key is malformed.");
    // The same key with the right scheme works, so only the scheme was wrong.
    expect((await listLocationsWith(`Bearer ${account.ownerKey}`)).status).toBe(200);
  });

  it("a malformed key (wrong prefix, wrong length, non-base62 character, empty) is 401", async () => {
    const account = await newAccount();
    const tail = account.ownerKey.slice("isk_live_".length);
    expect(tail).toMatch(/^[0-9A-Za-z]{40}$/);
    const malformed = [
      `isk_test_${tail}`, // wrong prefix
      `sk_live_${tail}`, // wrong prefix
      `ISK_LIVE_${tail}`, // prefix is case-sensitive
      `isk_live_${tail.slice(0, 39)}`, // 39 characters
      `isk_live_${tail}A`, // 41 characters
      `isk_live_${tail.slice(0, 39)}-`, // non-base62 character
      `isk_live_${tail.slice(0, 39)}_`, // non-base62 character
      `isk_live_${tail.slice(0, 20)}é${tail.slice(21)}`, // non-ASCII character
    ];
    for (const key of malformed) {
      expectUnauthenticated(await listLocationsWith(`Bearer ${key}`));
    }
    expectUnauthenticated(await listLocationsWith("Bearer"));
    expectUnauthenticated(await listLocationsWith("Bearer "));
  });

  it("a well-formed key that was never issued is 401, and the account's real key still works", async () => {
    const account = await newAccount();
    const forged = mintApiKey(account.accountId).apiKey; // same account part, different random tail; never stored
    expect(forged).toMatch(/^isk_live_[0-9A-Za-z]{40}$/);
    expect(forged).not.toBe(account.ownerKey);
    expectUnauthenticated(await api().withKey(forged).get("/locations"));
    // The account's real random tail under another account's prefix is no key either.
    const other = await newAccount();
    const transplanted = other.ownerKey.slice(0, 9 + 22) + account.ownerKey.slice(9 + 22);
    expectUnauthenticated(await api().withKey(transplanted).get("/locations"));
    // Base62 but encoding no possible account id.
    expectUnauthenticated(
      await api()
        .withKey(`isk_live_${"z".repeat(40)}`)
        .get("/locations"),
    );
    expect((await api().withKey(account.ownerKey).get("/locations")).status).toBe(200);
  });
});

describe("authentication: key lifecycle (spec 5.3, 5.6)", () => {
  it("revocation is immediate and affects only the revoked key", async () => {
    const account = await newAccount();
    const first = await newKey(account.ownerUserId);
    const second = await newKey(account.ownerUserId);
    expect((await api().withKey(first.key).get("/locations")).status).toBe(200);

    await revokeKey(first.keyId);

    expectUnauthenticated(await api().withKey(first.key).get("/locations"));
    expect((await api().withKey(second.key).get("/locations")).status).toBe(200);
    expect((await api().withKey(account.ownerKey).get("/locations")).status).toBe(200);
    // Still revoked on a second try (no caching of key validity).
    expectUnauthenticated(await api().withKey(first.key).get("/locations"));
  });

  it("an expired key is 401 and a key with a future expiry works", async () => {
    const account = await newAccount();
    const expired = await newKey(account.ownerUserId, { expiresAt: new Date(Date.now() - 60_000).toISOString() });
    const future = await newKey(account.ownerUserId, { expiresAt: new Date(Date.now() + 24 * 3600_000).toISOString() });
    expectUnauthenticated(await api().withKey(expired.key).get("/locations"));
    expect((await api().withKey(future.key).get("/locations")).status).toBe(200);
  });
});

describe("authentication: the key owner's live record (spec 5.2, 5.3)", () => {
  it("an inactive user's key is 401 and works again once the user is reactivated", async () => {
    const account = await newAccount();
    const user = await newUser(account, { permissions: ["inventory.list"] });
    expect((await api().withKey(user.key).get("/locations")).status).toBe(200);

    await updateUser(user.userId, { status: "inactive" });
    const refused = await api().withKey(user.key).get("/locations");
    expectUnauthenticated(refused);
    // The key's window counted the refused request too, and its RateLimit headers say so.
    const remaining = (response: { headers: Headers }) => Number(response.headers.get("ratelimit-remaining"));
    const limit = Number(refused.headers.get("ratelimit-limit"));
    expect(remaining(refused)).toBeLessThanOrEqual(limit - 2);

    await updateUser(user.userId, { status: "active" });
    const again = await api().withKey(user.key).get("/locations");
    expect(again.status).toBe(200);
    if (Number(again.headers.get("ratelimit-reset")) < Number(refused.headers.get("ratelimit-reset"))) expect(remaining(again)).toBe(remaining(refused) - 1);
  });

  it("a deleted user's key is 401", async () => {
    const account = await newAccount();
    const user = await newUser(account);
    expect((await api().withKey(user.key).get("/locations")).status).toBe(200);

    await deleteUser(user.userId);
    expectUnauthenticated(await api().withKey(user.key).get("/locations"));
  });

  it("a key no longer belongs to its user once the user moves to another account, even after moving back", async () => {
    const home = await newAccount();
    const other = await newAccount();
    const user = await newUser(home);
    expect((await api().withKey(user.key).get("/locations")).status).toBe(200);

    await updateUser(user.userId, { accountId: other.accountId });
    expectUnauthenticated(await api().withKey(user.key).get("/locations"));

    await updateUser(user.userId, { accountId: home.accountId });
    expectUnauthenticated(await api().withKey(user.key).get("/locations"));
  });

  it("a key created after the move works and sees only the new account's records", async () => {
    const home = await newAccount();
    const other = await newAccount();
    await createLocation(api().withKey(home.ownerKey), "Home depot", "HOME");
    const otherLocation = await createLocation(api().withKey(other.ownerKey), "Other depot", "OTHR");
    const user = await newUser(home, { permissions: ["inventory.list", "inventory.modify"] });

    const before = await api().withKey(user.key).get("/locations");
    expect(before.body.data.map((l: { name: string }) => l.name)).toEqual(["Home depot"]);

    await updateUser(user.userId, { accountId: other.accountId });
    const fresh = await newKey(user.userId);

    const after = await api().withKey(fresh.key).get("/locations");
    expect(after.status, after.text).toBe(200);
    expect(after.body.data).toEqual([{ id: otherLocation.id, object: "location", name: "Other depot", short_name: "OTHR" }]);
    // Writes land in the new account too.
    await createLocation(api().withKey(fresh.key), "Moved user's depot", "MOVD");
    expect(await locationNames(other)).toEqual(["Moved user's depot", "Other depot"]);
    expect(await locationNames(home)).toEqual(["Home depot"]);
    expectUnauthenticated(await api().withKey(user.key).get("/locations"));
  });
});

describe("account isolation (spec 1, 4.1 rule 3, 7)", () => {
  it("another account's location is 404 resource_missing and lists show only the caller's account", async () => {
    const a = await newAccount();
    const b = await newAccount();
    const aLocation = await createLocation(api().withKey(a.ownerKey), "Alpha store", "ALPH");
    const bLocation = await createLocation(api().withKey(b.ownerKey), "Bravo store", "BRAV");
    const bClient = api().withKey(b.ownerKey);

    const zones = await bClient.get(`/locations/${aLocation.id}/zones`);
    expect(zones.status, zones.text).toBe(404);
    expect(zones.body.error).toMatchObject({ type: "invalid_request_error", code: "resource_missing" });
    expect(zones.text).not.toContain("Alpha store");

    const list = await bClient.get("/locations");
    expect(list.status).toBe(200);
    expect(list.body.data.map((l: { id: string }) => l.id)).toEqual([bLocation.id]);
    expect(list.body.pagination.total_records).toBe(1);
  });

  it("creating a zone in another account's location is 404 and stores nothing there", async () => {
    const a = await newAccount();
    const b = await newAccount();
    const aLocation = await createLocation(api().withKey(a.ownerKey));

    const attempt = await api()
      .withKey(b.ownerKey)
      .post(`/locations/${aLocation.id}/zones`, { name: "Intruder", short_name: "X" }, { idempotencyKey: idempotencyKey() });
    expect(attempt.status, attempt.text).toBe(404);
    expect(attempt.body.error.code).toBe("resource_missing");

    const aZones = await api().withKey(a.ownerKey).get(`/locations/${aLocation.id}/zones`);
    expect(aZones.status).toBe(200);
    expect(aZones.body.data).toEqual([]);
  });

  it("another account's item category is 404 and never listed", async () => {
    const a = await newAccount();
    const b = await newAccount();
    const category = await api().withKey(a.ownerKey).post("/item-categories", { name: "Alpha widgets", inventory_type: "quantity" });
    expect(category.status, category.text).toBe(201);

    const get = await api().withKey(b.ownerKey).get(`/item-categories/${category.body.id}`);
    expect(get.status).toBe(404);
    expect(get.body.error.code).toBe("resource_missing");
    const list = await api().withKey(b.ownerKey).get("/item-categories");
    expect(list.status).toBe(200);
    expect(list.body.data).toEqual([]);
  });
});

describe("scopes (spec 4, 5.5, 5.7; architecture 4: insufficient_scope)", () => {
  it("an items:read key can list locations but creating one is 403 insufficient_scope naming items:write", async () => {
    const account = await newAccount();
    const readOnly = await newKey(account.ownerUserId, { scopes: ["items:read"] });
    const client = api().withKey(readOnly.key);

    expect((await client.get("/locations")).status).toBe(200);
    const attempt = await client.post("/locations", { name: "Nope", short_name: "N" }, { idempotencyKey: idempotencyKey() });
    expectInsufficientScope(attempt, "items:write");
    expect(await locationNames(account)).toEqual([]);
  });

  it("a customers:read key is 403 insufficient_scope naming items:read on the location list", async () => {
    const account = await newAccount();
    const other = await newKey(account.ownerUserId, { scopes: ["customers:read"] });
    expectInsufficientScope(await api().withKey(other.key).get("/locations"), "items:read");
  });

  it("the scope check comes before body validation (an invalid body from an unscoped key is still 403)", async () => {
    const account = await newAccount();
    const readOnly = await newKey(account.ownerUserId, { scopes: ["items:read"] });
    const attempt = await api().withKey(readOnly.key).post("/locations", {}, { idempotencyKey: idempotencyKey() });
    expectInsufficientScope(attempt, "items:write");
  });

  it("a scoped key never grants more than its user's permissions", async () => {
    const account = await newAccount();
    const user = await newUser(account, { permissions: ["inventory.list"], scopes: ["items:read", "items:write"] });
    const attempt = await api().withKey(user.key).post("/locations", { name: "Nope", short_name: "N" }, { idempotencyKey: idempotencyKey() });
    expectPermissionDenied(attempt);
  });
});

describe("user permissions (spec 1, 4.1 rules 1-2, 4.2; architecture 4: permission_denied)", () => {
  it("a staff user without inventory-modify is 403 permission_denied on location, zone and category creation, stores nothing, and can still read", async () => {
    const account = await newAccount();
    const ownerClient = api().withKey(account.ownerKey);
    const location = await createLocation(ownerClient, "Owner depot", "OWN");
    const staff = await newUser(account, { permissions: [] });
    const client = api().withKey(staff.key);

    expectPermissionDenied(await client.post("/locations", { name: "Staff depot", short_name: "STF" }, { idempotencyKey: idempotencyKey() }));
    expectPermissionDenied(await client.post(`/locations/${location.id}/zones`, { name: "Aisle 1", short_name: "A1" }, { idempotencyKey: idempotencyKey() }));
    expectPermissionDenied(await client.post("/item-categories", { name: "Tools", inventory_type: "quantity" }));

    const locations = await client.get("/locations");
    expect(locations.status).toBe(200);
    expect(locations.body.data.map((l: { id: string }) => l.id)).toEqual([location.id]);
    const zones = await client.get(`/locations/${location.id}/zones`);
    expect(zones.status).toBe(200);
    expect(zones.body.data).toEqual([]);
    const categories = await client.get("/item-categories");
    expect(categories.status).toBe(200);
    expect(categories.body.data).toEqual([]);

    expect(await locationNames(account)).toEqual(["Owner depot"]);
  });

  it("permissions are read live on every request: granting and withdrawing inventory-modify applies to the same key", async () => {
    const account = await newAccount();
    const staff = await newUser(account, { permissions: [] });
    const client = api().withKey(staff.key);
    expectPermissionDenied(await client.post("/locations", { name: "Later", short_name: "L" }, { idempotencyKey: idempotencyKey() }));

    await updateUser(staff.userId, { permissions: ["inventory.modify"] });
    const created = await client.post("/locations", { name: "Later", short_name: "L" }, { idempotencyKey: idempotencyKey() });
    expect(created.status, created.text).toBe(201);
    expect(await locationNames(account)).toEqual(["Later"]);

    await updateUser(staff.userId, { permissions: ["inventory.list"] });
    expectPermissionDenied(await client.post("/locations", { name: "Again", short_name: "AG" }, { idempotencyKey: idempotencyKey() }));
    expect(await locationNames(account)).toEqual(["Later"]);
  });

  it("a user restricted to one location cannot create locations even with inventory-modify (403 permission_denied)", async () => {
    const account = await newAccount();
    const location = await createLocation(api().withKey(account.ownerKey), "Assigned", "ASG");
    const restricted = await newUser(account, { permissions: ["inventory.modify"], locationId: location.id });
    const attempt = await api().withKey(restricted.key).post("/locations", { name: "Second", short_name: "SEC" }, { idempotencyKey: idempotencyKey() });
    expectPermissionDenied(attempt);
    expect(await locationNames(account)).toEqual(["Assigned"]);
  });
});
