import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { useApiServer, type ApiClient } from "../support/api.js";
import { deactivateLocation, idempotencyKey, newAccount, newUser, storedLocations, storedZones, type TestAccount } from "../support/fixtures.js";
import { expectError, expectValidation } from "../support/assertions.js";

/**
 * Locations and zones (spec part 1, sections 2.1-2.3, 4.1, 7 and 8; architecture section 4
 * "Readings of the contract"). Each test creates its own account; stored effects are read
 * straight from DynamoDB Local.
 */
const api = useApiServer();

const LOCATION_KEYS = ["id", "name", "object", "short_name"];
const ZONE_KEYS = ["description", "id", "location_id", "name", "object", "short_name"];
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

async function setup(): Promise<{ account: TestAccount; client: ApiClient }> {
  const account = await newAccount();
  return { account, client: api().withKey(account.ownerKey) };
}

async function createLocation(client: ApiClient, name: string, shortName = name.slice(0, 25)) {
  const response = await client.post("/locations", { name, short_name: shortName }, { idempotencyKey: idempotencyKey() });
  expect(response.status, response.text).toBe(201);
  return response.body as { id: string; object: string; name: string; short_name: string };
}

async function createZone(client: ApiClient, locationId: string, body: Record<string, unknown>) {
  const response = await client.post(`/locations/${locationId}/zones`, body, { idempotencyKey: idempotencyKey() });
  expect(response.status, response.text).toBe(201);
  return response.body as { id: string; location_id: string; name: string; short_name: string; description: string | null };
}

describe("GET /locations", () => {
  it("lists active locations ordered by name, case-insensitively, with exactly the location fields", async () => {
    const { client } = await setup();
    const bravo = await createLocation(client, "bravo", "B");
    const alpha = await createLocation(client, "Alpha", "A");
    const charlie = await createLocation(client, "charlie", "C");
    expect(Object.keys(bravo).sort()).toEqual(LOCATION_KEYS);

    const list = await client.get("/locations");
    expect(list.status, list.text).toBe(200);
    expect(list.body).toEqual({
      object: "list",
      url: "/api/v3/locations",
      has_more: false,
      data: [alpha, bravo, charlie],
      pagination: { page: 1, per_page: 20, total_pages: 1, total_records: 3 },
    });
    for (const location of list.body.data) {
      expect(Object.keys(location).sort()).toEqual(LOCATION_KEYS);
      expect(location.object).toBe("location");
      expect(location.id).toMatch(UUID);
    }
    expect(list.body.data.map((l: { name: string }) => l.name)).toEqual(["Alpha", "bravo", "charlie"]);
  });

  it("returns only the location fields even when the create carried address fields", async () => {
    const { account, client } = await setup();
    const body = {
      name: "Full",
      short_name: "FU",
      address_1: "1 Main St",
      address_2: "Unit 2",
      city: "Lyon",
      region: "ARA",
      country: "France",
      postal_code: "69001",
      manager: "Ann",
      phone: "+33 1 23 45 67 89",
      fax: "+33 1 23 45 67 90",
      email: "store@example.com",
    };
    const created = await client.post("/locations", body, { idempotencyKey: idempotencyKey() });
    expect(created.status, created.text).toBe(201);
    expect(Object.keys(created.body).sort()).toEqual(LOCATION_KEYS);
    expect(created.body).toEqual({ id: expect.stringMatching(UUID), object: "location", name: "Full", short_name: "FU" });

    const list = await client.get("/locations");
    expect(list.body.data).toEqual([created.body]);

    const [stored] = await storedLocations(account.accountId);
    expect(stored).toMatchObject({ city: "Lyon", postalCode: "69001", email: "store@example.com", active: true });
  });

  it("hides inactive locations; their zones are 404 for list and create", async () => {
    const { account, client } = await setup();
    const active = await createLocation(client, "Active");
    const inactive = await createLocation(client, "Inactive");
    const zone = await createZone(client, inactive.id, { name: "Old zone", short_name: "OZ" });
    await deactivateLocation(account.accountId, inactive.id);

    const list = await client.get("/locations");
    expect(list.status).toBe(200);
    expect(list.body.data).toEqual([active]);
    expect(list.body.pagination.total_records).toBe(1);

    expectError(await client.get(`/locations/${inactive.id}/zones`), 404, "resource_missing");
    const create = await client.post(`/locations/${inactive.id}/zones`, { name: "New zone", short_name: "NZ" }, { idempotencyKey: idempotencyKey() });
    expectError(create, 404, "resource_missing");
    const patch = await client.patch(`/locations/${inactive.id}/zones/${zone.id}`, { name: "Renamed", short_name: "RN" }, { idempotencyKey: idempotencyKey() });
    expectError(patch, 404, "resource_missing");

    const zones = await storedZones(account.accountId, inactive.id);
    expect(zones).toHaveLength(1);
    expect(zones[0]!.name).toBe("Old zone");
  });

  it("does not list another account's locations", async () => {
    const one = await setup();
    const two = await setup();
    const mine = await createLocation(one.client, "Mine");
    await createLocation(two.client, "Theirs");
    const list = await one.client.get("/locations");
    expect(list.body.data).toEqual([mine]);
  });
});

describe("pagination (spec section 8)", () => {
  it("pages, clamps and normalizes page and limit", async () => {
    const { client } = await setup();
    const names = ["Echo", "Delta", "Charlie", "Bravo", "Alpha"];
    await Promise.all(names.map((name) => createLocation(client, name)));
    const sorted = [...names].sort();

    const page1 = await client.get("/locations", { limit: 2, page: 1 });
    expect(page1.status, page1.text).toBe(200);
    expect(page1.body.url).toBe("/api/v3/locations");
    expect(page1.body.has_more).toBe(true);
    expect(page1.body.data.map((l: { name: string }) => l.name)).toEqual(sorted.slice(0, 2));
    expect(page1.body.pagination).toEqual({ page: 1, per_page: 2, total_pages: 3, total_records: 5 });

    const page2 = await client.get("/locations", { limit: 2, page: 2 });
    expect(page2.body.has_more).toBe(true);
    expect(page2.body.data.map((l: { name: string }) => l.name)).toEqual(sorted.slice(2, 4));

    const page3 = await client.get("/locations", { limit: 2, page: 3 });
    expect(page3.body.has_more).toBe(false);
    expect(page3.body.data.map((l: { name: string }) => l.name)).toEqual(sorted.slice(4));
    expect(page3.body.pagination).toEqual({ page: 3, per_page: 2, total_pages: 3, total_records: 5 });

    // past the end: 200, empty data, has_more false
    const page4 = await client.get("/locations", { limit: 2, page: 4 });
    expect(page4.status).toBe(200);
    expect(page4.body.url).toBe("/api/v3/locations");
    expect(page4.body.data).toEqual([]);
    expect(page4.body.has_more).toBe(false);
    expect(page4.body.pagination).toEqual({ page: 4, per_page: 2, total_pages: 3, total_records: 5 });

    // limit below 1 is raised to 1
    const zero = await client.get("/locations", { limit: 0 });
    expect(zero.status).toBe(200);
    expect(zero.body.pagination).toEqual({ page: 1, per_page: 1, total_pages: 5, total_records: 5 });
    expect(zero.body.data).toHaveLength(1);
    expect(zero.body.has_more).toBe(true);
    const negativeLimit = await client.get("/locations", { limit: -5 });
    expect(negativeLimit.body.pagination.per_page).toBe(1);

    // limit above 100 is capped at 100
    const big = await client.get("/locations", { limit: 1000 });
    expect(big.status).toBe(200);
    expect(big.body.pagination).toEqual({ page: 1, per_page: 100, total_pages: 1, total_records: 5 });
    expect(big.body.data).toHaveLength(5);
    expect(big.body.has_more).toBe(false);

    // default page size is 20
    const plain = await client.get("/locations");
    expect(plain.body.pagination).toEqual({ page: 1, per_page: 20, total_pages: 1, total_records: 5 });

    // page below 1 becomes 1
    for (const page of [0, -3]) {
      const response = await client.get("/locations", { page, limit: 2 });
      expect(response.status, response.text).toBe(200);
      expect(response.body.pagination).toEqual({ page: 1, per_page: 2, total_pages: 3, total_records: 5 });
      expect(response.body.data).toEqual(page1.body.data);
    }
  });

  it("rejects page and limit that are not integers with 422 invalid_query_parameter naming the parameter", async () => {
    const { client } = await setup();
    await createLocation(client, "Only");
    expectError(await client.get("/locations", { limit: "abc" }), 422, "invalid_query_parameter", "limit");
    expectError(await client.get("/locations", { page: "abc" }), 422, "invalid_query_parameter", "page");
    expectError(await client.get("/locations", { page: "1.5" }), 422, "invalid_query_parameter", "page");
    expectError(await client.get("/locations", { limit: "2x" }), 422, "invalid_query_parameter", "limit");
  });
});

describe("POST /locations validation (rule 4)", () => {
  it("enforces the field limits and reports the offending field; failed creates store nothing", async () => {
    const { account, client } = await setup();
    const post = (body: Record<string, unknown>) => client.post("/locations", body, { idempotencyKey: idempotencyKey() });
    let expected = 0;
    const expectCount = async () => expect(await storedLocations(account.accountId)).toHaveLength(expected);

    // name: 100 ok, 101 fails
    const name100 = await post({ name: "n".repeat(100), short_name: "N100" });
    expect(name100.status, name100.text).toBe(201);
    expect(name100.body.name).toBe("n".repeat(100));
    expected++;
    await expectCount();
    expectValidation(await post({ name: "n".repeat(101), short_name: "N101" }), "name", "too_long");
    await expectCount();

    // short_name: 25 ok, 26 fails
    const short25 = await post({ name: "Short 25", short_name: "s".repeat(25) });
    expect(short25.status, short25.text).toBe(201);
    expected++;
    await expectCount();
    const short26 = await post({ name: "Short 26", short_name: "s".repeat(26) });
    expectValidation(short26, "short_name", "too_long");
    expect(short26.body.error.param).toBe("short_name");
    await expectCount();

    // postal_code: 20 ok, 21 fails
    const postal20 = await post({ name: "Postal 20", short_name: "P20", postal_code: "9".repeat(20) });
    expect(postal20.status, postal20.text).toBe(201);
    expected++;
    expectValidation(await post({ name: "Postal 21", short_name: "P21", postal_code: "9".repeat(21) }), "postal_code", "too_long");
    await expectCount();

    // other optional text limits
    expectValidation(await post({ name: "City", short_name: "CI", city: "c".repeat(101) }), "city", "too_long");
    expectValidation(await post({ name: "Phone", short_name: "PH", phone: "1".repeat(256) }), "phone", "too_long");
    await expectCount();

    // email must be valid
    expectValidation(await post({ name: "Mail", short_name: "ML", email: "not-an-email" }), "email", "invalid_email");
    await expectCount();

    // required fields
    const missingShort = await post({ name: "No short" });
    expectValidation(missingShort, "short_name", "required");
    expectValidation(await post({ short_name: "NN" }), "name", "required");
    expectValidation(await post({ name: "   ", short_name: "BL" }), "name");
    expectValidation(await post({ name: 42, short_name: "NT" }), "name");
    await expectCount();

    // every error lists each offending field
    const several = await post({ name: "n".repeat(101), short_name: "s".repeat(26), email: "nope" });
    expectValidation(several, "name");
    expect((several.body.error.details as { param: string }[]).map((d) => d.param).sort()).toEqual(["email", "name", "short_name"]);
    await expectCount();

    const list = await client.get("/locations");
    expect(list.body.pagination.total_records).toBe(expected);
  });

  it("returns the original object when a create is retried with the same key and body (rule 5)", async () => {
    const { account, client } = await setup();
    const key = idempotencyKey();
    const first = await client.post("/locations", { name: "Retry", short_name: "RT" }, { idempotencyKey: key });
    const retry = await client.post("/locations", { name: "Retry", short_name: "RT" }, { idempotencyKey: key });
    expect(first.status).toBe(201);
    expect(retry.status).toBe(201);
    expect(retry.body).toEqual(first.body);
    expect(retry.headers.get("idempotent-replayed")).toBe("true");
    expect(await storedLocations(account.accountId)).toHaveLength(1);
  });
});

describe("permissions and the location boundary (rules 1-3)", () => {
  it("limits a user restricted to one location to that location", async () => {
    const { account, client } = await setup();
    const l1 = await createLocation(client, "Zulu one");
    const l2 = await createLocation(client, "Alpha two");
    const l2Zone = await createZone(client, l2.id, { name: "Outside", short_name: "OUT" });
    const user = await newUser(account, { permissions: ["inventory.modify"], locationId: l1.id });
    const restricted = api().withKey(user.key);

    const list = await restricted.get("/locations");
    expect(list.status, list.text).toBe(200);
    expect(list.body.data).toEqual([l1]);
    expect(list.body.pagination).toEqual({ page: 1, per_page: 20, total_pages: 1, total_records: 1 });

    const createLoc = await restricted.post("/locations", { name: "Nope", short_name: "NO" }, { idempotencyKey: idempotencyKey() });
    expectError(createLoc, 403, "permission_denied");
    expect(await storedLocations(account.accountId)).toHaveLength(2);

    expectError(await restricted.get(`/locations/${l2.id}/zones`), 404, "resource_missing");
    const createOutside = await restricted.post(`/locations/${l2.id}/zones`, { name: "Sneaky", short_name: "SN" }, { idempotencyKey: idempotencyKey() });
    expectError(createOutside, 404, "resource_missing");
    const patchOutside = await restricted.patch(
      `/locations/${l2.id}/zones/${l2Zone.id}`,
      { name: "Sneaky", short_name: "SN" },
      { idempotencyKey: idempotencyKey() },
    );
    expectError(patchOutside, 404, "resource_missing");
    const l2Zones = await storedZones(account.accountId, l2.id);
    expect(l2Zones.map((z) => z.name)).toEqual(["Outside"]);

    const zone = await createZone(restricted, l1.id, { name: "Inside", short_name: "IN" });
    expect(zone.location_id).toBe(l1.id);
    const zones = await restricted.get(`/locations/${l1.id}/zones`);
    expect(zones.status).toBe(200);
    expect(zones.body.data).toEqual([zone]);
    const patched = await restricted.patch(
      `/locations/${l1.id}/zones/${zone.id}`,
      { name: "Inside 2", short_name: "IN2" },
      { idempotencyKey: idempotencyKey() },
    );
    expect(patched.status, patched.text).toBe(200);
    expect(patched.body.name).toBe("Inside 2");

    // once the assigned location is inactive, the restricted user sees no location at all
    await deactivateLocation(account.accountId, l1.id);
    const none = await restricted.get("/locations");
    expect(none.status).toBe(200);
    expect(none.body.data).toEqual([]);
    expect(none.body.pagination).toEqual({ page: 1, per_page: 20, total_pages: 0, total_records: 0 });
    expectError(await restricted.get(`/locations/${l1.id}/zones`), 404, "resource_missing");
  });

  it("denies location and zone writes to a user without inventory-modify, who can still read", async () => {
    const { account, client } = await setup();
    const location = await createLocation(client, "Store");
    const zone = await createZone(client, location.id, { name: "Shelf", short_name: "SH" });
    const user = await newUser(account, { permissions: ["inventory.list", "inventory.manage"] });
    const viewer = api().withKey(user.key);

    const list = await viewer.get("/locations");
    expect(list.status).toBe(200);
    expect(list.body.data).toEqual([location]);
    expect((await viewer.get(`/locations/${location.id}/zones`)).body.data).toEqual([zone]);

    expectError(await viewer.post("/locations", { name: "New", short_name: "NW" }, { idempotencyKey: idempotencyKey() }), 403, "permission_denied");
    expectError(
      await viewer.post(`/locations/${location.id}/zones`, { name: "New", short_name: "NW" }, { idempotencyKey: idempotencyKey() }),
      403,
      "permission_denied",
    );
    expectError(
      await viewer.patch(`/locations/${location.id}/zones/${zone.id}`, { name: "Changed", short_name: "CH" }, { idempotencyKey: idempotencyKey() }),
      403,
      "permission_denied",
    );

    expect(await storedLocations(account.accountId)).toHaveLength(1);
    const zones = await storedZones(account.accountId, location.id);
    expect(zones).toHaveLength(1);
    expect(zones[0]!.name).toBe("Shelf");
  });

  it("treats another account's location as missing for zone list, create and patch", async () => {
    const mine = await setup();
    const theirs = await setup();
    const location = await createLocation(theirs.client, "Foreign");
    const zone = await createZone(theirs.client, location.id, { name: "Foreign zone", short_name: "FZ" });

    expectError(await mine.client.get(`/locations/${location.id}/zones`), 404, "resource_missing");
    expectError(
      await mine.client.post(`/locations/${location.id}/zones`, { name: "Intruder", short_name: "IN" }, { idempotencyKey: idempotencyKey() }),
      404,
      "resource_missing",
    );
    expectError(
      await mine.client.patch(`/locations/${location.id}/zones/${zone.id}`, { name: "Hijacked", short_name: "HJ" }, { idempotencyKey: idempotencyKey() }),
      404,
      "resource_missing",
    );

    const zones = await storedZones(theirs.account.accountId, location.id);
    expect(zones).toHaveLength(1);
    expect(zones[0]!.name).toBe("Foreign zone");
    expect(await storedZones(mine.account.accountId, location.id)).toHaveLength(0);
  });

  it("answers 404 resource_missing for a malformed or unknown location id in the path", async () => {
    const { account, client } = await setup();
    const location = await createLocation(client, "Real");
    const zone = await createZone(client, location.id, { name: "Real zone", short_name: "RZ" });

    for (const id of ["not-a-uuid", "12345", randomUUID()]) {
      expectError(await client.get(`/locations/${id}/zones`), 404, "resource_missing");
      expectError(await client.post(`/locations/${id}/zones`, { name: "Z", short_name: "Z" }, { idempotencyKey: idempotencyKey() }), 404, "resource_missing");
    }
    // malformed zone id
    expectError(
      await client.patch(`/locations/${location.id}/zones/not-a-uuid`, { name: "Z", short_name: "Z" }, { idempotencyKey: idempotencyKey() }),
      404,
      "resource_missing",
    );
    // malformed location id with a real zone id
    expectError(
      await client.patch(`/locations/nope/zones/${zone.id}`, { name: "Z", short_name: "Z" }, { idempotencyKey: idempotencyKey() }),
      404,
      "resource_missing",
    );
    expect((await storedZones(account.accountId, location.id)).map((z) => z.name)).toEqual(["Real zone"]);
  });
});

describe("zones", () => {
  it("lists zones ordered by name with exactly the zone fields", async () => {
    const { client } = await setup();
    const location = await createLocation(client, "Depot");
    const other = await createLocation(client, "Other depot");
    const b = await createZone(client, location.id, { name: "bin B", short_name: "B", description: "second" });
    const a = await createZone(client, location.id, { name: "Aisle A", short_name: "A" });
    const c = await createZone(client, location.id, { name: "Cold room", short_name: "C", description: "chilled" });
    await createZone(client, other.id, { name: "Elsewhere", short_name: "E" });

    expect(a).toEqual({
      id: expect.stringMatching(UUID),
      object: "zone",
      location_id: location.id,
      name: "Aisle A",
      short_name: "A",
      description: null,
    });
    expect(Object.keys(a).sort()).toEqual(ZONE_KEYS);
    expect(b.description).toBe("second");

    const list = await client.get(`/locations/${location.id}/zones`);
    expect(list.status, list.text).toBe(200);
    expect(list.body).toEqual({
      object: "list",
      url: `/api/v3/locations/${location.id}/zones`,
      has_more: false,
      data: [a, b, c],
      pagination: { page: 1, per_page: 20, total_pages: 1, total_records: 3 },
    });
    for (const zone of list.body.data) expect(Object.keys(zone).sort()).toEqual(ZONE_KEYS);

    const paged = await client.get(`/locations/${location.id}/zones`, { limit: 2, page: 2 });
    expect(paged.body.url).toBe(`/api/v3/locations/${location.id}/zones`);
    expect(paged.body.data).toEqual([c]);
    expect(paged.body.has_more).toBe(false);
    expect(paged.body.pagination).toEqual({ page: 2, per_page: 2, total_pages: 2, total_records: 3 });

    expectError(await client.get(`/locations/${location.id}/zones`, { limit: "abc" }), 422, "invalid_query_parameter", "limit");
  });

  it("returns an empty list for a location without zones (total_pages 0)", async () => {
    const { client } = await setup();
    const location = await createLocation(client, "Empty");
    const list = await client.get(`/locations/${location.id}/zones`);
    expect(list.status, list.text).toBe(200);
    expect(list.body).toEqual({
      object: "list",
      url: `/api/v3/locations/${location.id}/zones`,
      has_more: false,
      data: [],
      pagination: { page: 1, per_page: 20, total_pages: 0, total_records: 0 },
    });
  });

  it("validates zone creates and stores nothing when they fail", async () => {
    const { account, client } = await setup();
    const location = await createLocation(client, "Validated");
    const post = (body: Record<string, unknown>) => client.post(`/locations/${location.id}/zones`, body, { idempotencyKey: idempotencyKey() });

    const ok = await post({ name: "z".repeat(100), short_name: "s".repeat(25) });
    expect(ok.status, ok.text).toBe(201);
    expectValidation(await post({ name: "z".repeat(101), short_name: "Z" }), "name", "too_long");
    expectValidation(await post({ name: "Z", short_name: "s".repeat(26) }), "short_name", "too_long");
    expectValidation(await post({ name: "Z" }), "short_name", "required");
    expectValidation(await post({ short_name: "Z" }), "name", "required");
    expectValidation(await post({ name: "Z", short_name: "Z", description: 5 }), "description");
    expect(await storedZones(account.accountId, location.id)).toHaveLength(1);
  });

  it("PATCH replaces name, short_name and description; the list shows the change", async () => {
    const { account, client } = await setup();
    const location = await createLocation(client, "Patched");
    const zone = await createZone(client, location.id, { name: "Before", short_name: "BF", description: "old" });
    const path = `/locations/${location.id}/zones/${zone.id}`;

    const patched = await client.patch(path, { name: "After", short_name: "AF", description: "new" }, { idempotencyKey: idempotencyKey() });
    expect(patched.status, patched.text).toBe(200);
    expect(patched.body).toEqual({
      id: zone.id,
      object: "zone",
      location_id: location.id,
      name: "After",
      short_name: "AF",
      description: "new",
    });
    expect((await client.get(`/locations/${location.id}/zones`)).body.data).toEqual([patched.body]);

    // project decision: omitting description clears it
    const cleared = await client.patch(path, { name: "After", short_name: "AF" }, { idempotencyKey: idempotencyKey() });
    expect(cleared.status, cleared.text).toBe(200);
    expect(cleared.body.description).toBeNull();
    expect((await client.get(`/locations/${location.id}/zones`)).body.data).toEqual([cleared.body]);

    const nulled = await client.patch(path, { name: "Again", short_name: "AG", description: null }, { idempotencyKey: idempotencyKey() });
    expect(nulled.status, nulled.text).toBe(200);
    expect(nulled.body.description).toBeNull();

    const stored = await storedZones(account.accountId, location.id);
    expect(stored).toHaveLength(1);
    expect(stored[0]).toMatchObject({ name: "Again", shortName: "AG", locationId: location.id });
    expect(stored[0]!.description).toBeUndefined();
  });

  it("PATCH requires complete name and short_name with the create limits", async () => {
    const { account, client } = await setup();
    const location = await createLocation(client, "Strict");
    const zone = await createZone(client, location.id, { name: "Keep", short_name: "KP", description: "kept" });
    const patch = (body: Record<string, unknown>) => client.patch(`/locations/${location.id}/zones/${zone.id}`, body, { idempotencyKey: idempotencyKey() });

    expectValidation(await patch({ name: "Only name" }), "short_name", "required");
    expectValidation(await patch({ short_name: "ON" }), "name", "required");
    expectValidation(await patch({ name: "n".repeat(101), short_name: "X" }), "name", "too_long");
    expectValidation(await patch({ name: "X", short_name: "s".repeat(26) }), "short_name", "too_long");
    // the location cannot change: location_id is not an accepted field
    expectValidation(await patch({ name: "X", short_name: "X", location_id: randomUUID() }), "location_id");

    const [stored] = await storedZones(account.accountId, location.id);
    expect(stored).toMatchObject({ name: "Keep", shortName: "KP", description: "kept" });
  });

  it("PATCH of a zone through another location's path, or of an unknown zone, is 404 and changes nothing", async () => {
    const { account, client } = await setup();
    const l1 = await createLocation(client, "First");
    const l2 = await createLocation(client, "Second");
    const zone = await createZone(client, l1.id, { name: "Home", short_name: "HM", description: "d" });

    const crossed = await client.patch(`/locations/${l2.id}/zones/${zone.id}`, { name: "Moved", short_name: "MV" }, { idempotencyKey: idempotencyKey() });
    expectError(crossed, 404, "resource_missing");

    const unknown = await client.patch(`/locations/${l1.id}/zones/${randomUUID()}`, { name: "Ghost", short_name: "GH" }, { idempotencyKey: idempotencyKey() });
    expectError(unknown, 404, "resource_missing");

    const l1Zones = await storedZones(account.accountId, l1.id);
    expect(l1Zones).toHaveLength(1);
    expect(l1Zones[0]).toMatchObject({ zoneId: zone.id, name: "Home", shortName: "HM", description: "d" });
    expect(await storedZones(account.accountId, l2.id)).toHaveLength(0);
    expect((await client.get(`/locations/${l1.id}/zones`)).body.data).toEqual([zone]);
    expect((await client.get(`/locations/${l2.id}/zones`)).body.data).toEqual([]);
  });

  it("GET of one zone answers it as the list shows it (404 through another location or for an unknown zone); what it shows, sent back to PATCH, changes nothing", async () => {
    const { client } = await setup();
    const l1 = await createLocation(client, "First");
    const l2 = await createLocation(client, "Second");
    const zone = await createZone(client, l1.id, { name: "Home", short_name: "HM", description: "d" });
    const got = await client.get(`/locations/${l1.id}/zones/${zone.id}`);
    expect(got.status, got.text).toBe(200);
    expect(got.body).toEqual(zone);
    expect(got.body).toEqual((await client.get(`/locations/${l1.id}/zones`)).body.data[0]);
    expectError(await client.get(`/locations/${l2.id}/zones/${zone.id}`), 404, "resource_missing");
    expectError(await client.get(`/locations/${l1.id}/zones/${randomUUID()}`), 404, "resource_missing");
    // Its GET body with the zone's own id removed: object and location_id repeat it and are accepted.
    const { id: _id, ...body } = got.body;
    const written = await client.patch(`/locations/${l1.id}/zones/${zone.id}`, body, { idempotencyKey: idempotencyKey() });
    expect(written.status, written.text).toBe(200);
    expect(written.body).toEqual(zone);
    // Another location_id is still refused: a zone's location cannot change.
    const moved = await client.patch(`/locations/${l1.id}/zones/${zone.id}`, { ...body, location_id: l2.id }, { idempotencyKey: idempotencyKey() });
    expect(moved.status).toBe(422);
    expect(moved.body.error.param).toBe("location_id");
    expect((await client.get(`/locations/${l1.id}/zones/${zone.id}`)).body).toEqual(zone);
  });
});
