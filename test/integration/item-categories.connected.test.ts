import { randomUUID } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { db } from "../../lib/db/service.js";
import { useApiServer, type ApiClient, type TestResponse } from "../support/api.js";
import { idempotencyKey, newAccount, newUser, type TestAccount } from "../support/fixtures.js";

/**
 * Item categories over HTTP against DynamoDB Local: spec part 1, sections 2.1, 2.4, 4.2, 7
 * and 8; architecture sections 3 and 4. Each test makes its own account, so tests share the
 * table safely.
 */
const api = useApiServer();

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const PATH = "/item-categories";
const LIST_URL = "/api/v3/item-categories";

interface CustomField {
  id: string;
  name: string;
  display_order: number;
  display_on_inventory_list: boolean;
  publish_on_documents: boolean;
}
interface Category {
  id: string;
  object: "item_category";
  name: string;
  parent_id: string | null;
  inventory_type: "quantity" | "unique";
  custom_fields: CustomField[];
}

type CreateBody = {
  name: string;
  inventory_type?: string;
  parent_id?: string | null;
  custom_fields?: Array<{ name?: string; display_on_inventory_list?: boolean; publish_on_documents?: boolean }>;
};

/** A fresh account and a client holding its owner's all-scopes key. */
async function ownerOfNewAccount(): Promise<{ account: TestAccount; client: ApiClient }> {
  const account = await newAccount();
  return { account, client: api().withKey(account.ownerKey) };
}

async function create(client: ApiClient, body: CreateBody): Promise<Category> {
  const response = await client.post<Category>(PATH, { inventory_type: "quantity", ...body });
  expect(response.status, response.text).toBe(201);
  return response.body;
}

async function listAll(client: ApiClient, query: Record<string, string | number> = {}): Promise<Category[]> {
  const response = await client.get(PATH, { limit: 100, ...query });
  expect(response.status, response.text).toBe(200);
  return response.body.data;
}

/** Asserts the spec's error body and returns its `error` object. */
function expectError(response: TestResponse, status: number, code: string, param?: string) {
  expect(response.status, response.text).toBe(status);
  expect(response.body.error).toMatchObject({ type: "invalid_request_error", code, message: expect.any(String) });
  if (param !== undefined) expect(response.body.error.param).toBe(param);
  return response.body.error as { param?: string; details?: Array<{ param: string; code: string; message: string }> };
}

/** Asserts 422 validation_failed with a detail at `param`. */
function expectValidationFailed(response: TestResponse, param: string) {
  const error = expectError(response, 422, "validation_failed");
  expect(
    error.details?.map((d) => d.param),
    response.text,
  ).toContain(param);
  return error;
}

async function setWeight(accountId: string, categoryId: string, weight: number): Promise<void> {
  await db().entities.itemCategory.patch({ accountId, categoryId }).set({ weight }).go();
}

describe("connected: item categories", () => {
  describe("POST /item-categories", () => {
    it("returns 201 with exactly the spec's fields", async () => {
      const { client } = await ownerOfNewAccount();
      const response = await client.post(PATH, { name: "Tools", inventory_type: "quantity" });
      expect(response.status).toBe(201);
      expect(response.headers.get("content-type")).toMatch(/application\/json/);
      expect(response.body).toEqual({
        id: expect.stringMatching(UUID),
        object: "item_category",
        name: "Tools",
        parent_id: null,
        inventory_type: "quantity",
        custom_fields: [],
      });
      expect(Object.keys(response.body).sort()).toEqual(["custom_fields", "id", "inventory_type", "name", "object", "parent_id"]);
    });

    it("custom fields keep array order, numbered 1, 2, 3, flags default false", async () => {
      const { client } = await ownerOfNewAccount();
      const category = await create(client, {
        name: "Phones",
        inventory_type: "unique",
        custom_fields: [{ name: "IMEI", display_on_inventory_list: true }, { name: "Colour" }, { name: "Warranty", publish_on_documents: true }],
      });
      expect(category.inventory_type).toBe("unique");
      expect(category.custom_fields).toEqual([
        { id: expect.any(String), name: "IMEI", display_order: 1, display_on_inventory_list: true, publish_on_documents: false },
        { id: expect.any(String), name: "Colour", display_order: 2, display_on_inventory_list: false, publish_on_documents: false },
        { id: expect.any(String), name: "Warranty", display_order: 3, display_on_inventory_list: false, publish_on_documents: true },
      ]);
      expect(new Set(category.custom_fields.map((f) => f.id)).size).toBe(3);
      const fetched = await client.get(`${PATH}/${category.id}`);
      expect(fetched.body).toEqual(category);
    });

    it("inventory_type is required and must be quantity or unique", async () => {
      const { client } = await ownerOfNewAccount();
      expectValidationFailed(await client.post(PATH, { name: "No type" }), "inventory_type");
      expectValidationFailed(await client.post(PATH, { name: "Bad type", inventory_type: "bulk" }), "inventory_type");
      expectValidationFailed(await client.post(PATH, { name: "Bad type", inventory_type: null }), "inventory_type");
      expect(await listAll(client)).toEqual([]);
    });

    it("name is required, at most 255 characters", async () => {
      const { client } = await ownerOfNewAccount();
      const longest = await create(client, { name: "n".repeat(255) });
      expect(longest.name).toHaveLength(255);
      const error = expectValidationFailed(await client.post(PATH, { name: "n".repeat(256), inventory_type: "quantity" }), "name");
      expect(error.details?.find((d) => d.param === "name")?.code).toBe("too_long");
      expectValidationFailed(await client.post(PATH, { inventory_type: "quantity" }), "name");
      expectValidationFailed(await client.post(PATH, { name: "", inventory_type: "quantity" }), "name");
      expect((await listAll(client)).map((c) => c.id)).toEqual([longest.id]);
    });

    it("a custom field needs a name (param custom_fields[i].name)", async () => {
      const { client } = await ownerOfNewAccount();
      const response = await client.post(PATH, {
        name: "Fields",
        inventory_type: "quantity",
        custom_fields: [{ display_on_inventory_list: true }],
      });
      expectValidationFailed(response, "custom_fields[0].name");
      const second = await client.post(PATH, { name: "Fields", inventory_type: "quantity", custom_fields: [{ name: "ok" }, { name: "" }] });
      expectValidationFailed(second, "custom_fields[1].name");
      expect(await listAll(client)).toEqual([]);
    });

    it("unknown body fields are rejected", async () => {
      const { client } = await ownerOfNewAccount();
      expectValidationFailed(await client.post(PATH, { name: "X", inventory_type: "quantity", weight: 3 }), "weight");
    });

    it("malformed JSON is 400 invalid_json", async () => {
      const { client } = await ownerOfNewAccount();
      expectError(await client.post(PATH, undefined, { raw: '{"name": "Tools",' }), 400, "invalid_json");
    });
  });

  describe("parent_id on create", () => {
    it("a top-level category can be the parent; the child shows parent_id", async () => {
      const { client } = await ownerOfNewAccount();
      const root = await create(client, { name: "Hardware" });
      const child = await create(client, { name: "Screws", parent_id: root.id });
      expect(child.parent_id).toBe(root.id);
      expect((await client.get(`${PATH}/${child.id}`)).body.parent_id).toBe(root.id);
      expect((await client.get(`${PATH}/${root.id}`)).body.parent_id).toBeNull();
    });

    it("an explicit null parent makes a root category", async () => {
      const { client } = await ownerOfNewAccount();
      expect((await create(client, { name: "Top", parent_id: null })).parent_id).toBeNull();
    });

    it("a child category cannot be a parent: 422 validation_failed param parent_id, nothing created", async () => {
      const { client } = await ownerOfNewAccount();
      const root = await create(client, { name: "Hardware" });
      const child = await create(client, { name: "Screws", parent_id: root.id });
      const response = await client.post(PATH, { name: "Grandchild", inventory_type: "quantity", parent_id: child.id });
      expectError(response, 422, "validation_failed", "parent_id");
      expect(await listAll(client)).toHaveLength(2);
    });

    it("an unknown UUID as parent is 422 validation_failed param parent_id, nothing created", async () => {
      const { client } = await ownerOfNewAccount();
      await create(client, { name: "Existing" });
      const response = await client.post(PATH, { name: "Orphan", inventory_type: "quantity", parent_id: randomUUID() });
      expectError(response, 422, "validation_failed", "parent_id");
      expect(await listAll(client)).toHaveLength(1);
    });

    it("another account's category as parent is 422 validation_failed param parent_id, nothing created or exposed", async () => {
      const { client } = await ownerOfNewAccount();
      const other = await ownerOfNewAccount();
      const foreign = await create(other.client, { name: "Foreign root" });
      await create(client, { name: "Mine" });
      const response = await client.post(PATH, { name: "Sneaky", inventory_type: "quantity", parent_id: foreign.id });
      expectError(response, 422, "validation_failed", "parent_id");
      expect(response.text).not.toContain("Foreign root");
      expect(await listAll(client)).toHaveLength(1);
      // The other account's category gained no child and is untouched.
      expect(await listAll(other.client)).toEqual([foreign]);
      const stored = await db().entities.itemCategory.get({ accountId: other.account.accountId, categoryId: foreign.id }).go();
      expect(stored.data?.childCount).toBe(0);
    });

    it("a malformed parent_id is 422 validation_failed", async () => {
      const { client } = await ownerOfNewAccount();
      expectValidationFailed(await client.post(PATH, { name: "X", inventory_type: "quantity", parent_id: "not-a-uuid" }), "parent_id");
    });
  });

  describe("GET /item-categories/{id}", () => {
    it("returns the category", async () => {
      const { client } = await ownerOfNewAccount();
      const category = await create(client, { name: "Tools", custom_fields: [{ name: "Brand" }] });
      const response = await client.get(`${PATH}/${category.id}`);
      expect(response.status).toBe(200);
      expect(response.body).toEqual(category);
    });

    it("an unknown id is 404 resource_missing", async () => {
      const { client } = await ownerOfNewAccount();
      expectError(await client.get(`${PATH}/${randomUUID()}`), 404, "resource_missing");
    });

    it("another account's category is 404", async () => {
      const { client } = await ownerOfNewAccount();
      const other = await ownerOfNewAccount();
      const foreign = await create(other.client, { name: "Theirs" });
      const response = await client.get(`${PATH}/${foreign.id}`);
      expectError(response, 404, "resource_missing");
      expect(response.text).not.toContain("Theirs");
    });

    it("a malformed id is 404", async () => {
      const { client } = await ownerOfNewAccount();
      expectError(await client.get(`${PATH}/not-a-uuid`), 404, "resource_missing");
      expectError(await client.get(`${PATH}/12345`), 404, "resource_missing");
    });
  });

  describe("GET /item-categories", () => {
    it("an account without categories gets an empty list", async () => {
      const { client } = await ownerOfNewAccount();
      const response = await client.get(PATH);
      expect(response.status).toBe(200);
      expect(response.body).toEqual({
        object: "list",
        url: LIST_URL,
        has_more: false,
        data: [],
        pagination: { page: 1, per_page: 20, total_pages: 0, total_records: 0 },
      });
    });

    it("orders by weight, then name", async () => {
      const { account, client } = await ownerOfNewAccount();
      const bravo = await create(client, { name: "Bravo" });
      const alpha = await create(client, { name: "alpha" });
      const charlie = await create(client, { name: "Charlie" });
      const delta = await create(client, { name: "delta" });
      const echo = await create(client, { name: "Echo" });
      // Before any weight is set: by name, case-insensitively.
      expect((await listAll(client)).map((c) => c.name)).toEqual(["alpha", "Bravo", "Charlie", "delta", "Echo"]);
      await setWeight(account.accountId, alpha.id, 5);
      await setWeight(account.accountId, charlie.id, 5);
      await setWeight(account.accountId, echo.id, -1);
      const listed = await listAll(client);
      expect(listed.map((c) => c.name)).toEqual(["Echo", "Bravo", "delta", "alpha", "Charlie"]);
      // Weight is not a field of the resource.
      expect(listed.find((c) => c.id === alpha.id)).toEqual(alpha);
      expect([bravo, delta].every((c) => listed.some((l) => l.id === c.id))).toBe(true);
    });

    it("q is a case-insensitive search in names", async () => {
      const { client } = await ownerOfNewAccount();
      await create(client, { name: "Hand Tools" });
      await create(client, { name: "power tools" });
      await create(client, { name: "Hardware" });
      expect((await listAll(client, { q: "TOOL" })).map((c) => c.name)).toEqual(["Hand Tools", "power tools"]);
      expect((await listAll(client, { q: "hard" })).map((c) => c.name)).toEqual(["Hardware"]);
      expect((await listAll(client, { q: "ha" })).map((c) => c.name)).toEqual(["Hand Tools", "Hardware"]);
      const none = await client.get(PATH, { q: "nothing like it" });
      expect(none.status).toBe(200);
      expect(none.body.data).toEqual([]);
      expect(none.body.pagination.total_records).toBe(0);
    });

    describe("parent_id filter", () => {
      let client: ApiClient;
      let hardware: Category;
      let garden: Category;
      let screws: Category;
      let nails: Category;
      let seeds: Category;
      let lonely: Category;

      beforeAll(async () => {
        ({ client } = await ownerOfNewAccount());
        hardware = await create(client, { name: "Hardware" });
        garden = await create(client, { name: "Garden" });
        lonely = await create(client, { name: "Lonely" });
        screws = await create(client, { name: "Screws", parent_id: hardware.id });
        nails = await create(client, { name: "Nails", parent_id: hardware.id });
        seeds = await create(client, { name: "Seeds", parent_id: garden.id });
      });

      it("without a filter lists every category", async () => {
        expect((await listAll(client)).map((c) => c.name)).toEqual(["Garden", "Hardware", "Lonely", "Nails", "Screws", "Seeds"]);
      });

      it("root returns only root categories", async () => {
        expect(await listAll(client, { parent_id: "root" })).toEqual([garden, hardware, lonely]);
      });

      it("a category UUID returns its direct children", async () => {
        expect(await listAll(client, { parent_id: hardware.id })).toEqual([nails, screws]);
        expect(await listAll(client, { parent_id: garden.id })).toEqual([seeds]);
        expect(await listAll(client, { parent_id: hardware.id.toUpperCase() })).toEqual([nails, screws]);
      });

      it("combines with q", async () => {
        expect(await listAll(client, { parent_id: hardware.id, q: "SCR" })).toEqual([screws]);
        expect(await listAll(client, { parent_id: "root", q: "e" })).toEqual([garden, hardware, lonely]);
      });

      it("a category without children, or a child, gives an empty list", async () => {
        for (const parent of [lonely.id, screws.id]) {
          const response = await client.get(PATH, { parent_id: parent });
          expect(response.status).toBe(200);
          expect(response.body.data).toEqual([]);
          expect(response.body.has_more).toBe(false);
          expect(response.body.pagination.total_records).toBe(0);
        }
      });

      it("a value that is neither root nor a UUID is 422 invalid_query_parameter naming parent_id", async () => {
        for (const value of ["garbage", "ROOT-ish", "123"]) {
          expectError(await client.get(PATH, { parent_id: value }), 422, "invalid_query_parameter", "parent_id");
        }
      });

      it("a UUID of no category, or of another account's, is 422 invalid_query_parameter naming parent_id, exposing nothing", async () => {
        const { client: other } = await ownerOfNewAccount();
        const foreign = await create(other, { name: "Foreign" });
        await create(other, { name: "Foreign child", parent_id: foreign.id });
        for (const parent of [randomUUID(), foreign.id]) {
          const response = await client.get(PATH, { parent_id: parent });
          expectError(response, 422, "invalid_query_parameter", "parent_id");
          expect(JSON.stringify(response.body)).not.toContain("Foreign");
        }
      });
    });

    it("pagination fields follow the page and limit", async () => {
      const { client } = await ownerOfNewAccount();
      const names = ["A1", "A2", "A3", "A4", "A5"];
      for (const name of names) await create(client, { name });

      const first = await client.get(PATH, { page: 1, limit: 2 });
      expect(first.status).toBe(200);
      expect(first.body).toMatchObject({ object: "list", url: LIST_URL, has_more: true });
      expect(first.body.pagination).toEqual({ page: 1, per_page: 2, total_pages: 3, total_records: 5 });
      expect(first.body.data.map((c: Category) => c.name)).toEqual(["A1", "A2"]);

      const second = await client.get(PATH, { page: 2, limit: 2 });
      expect(second.body.has_more).toBe(true);
      expect(second.body.data.map((c: Category) => c.name)).toEqual(["A3", "A4"]);

      const last = await client.get(PATH, { page: 3, limit: 2 });
      expect(last.body.has_more).toBe(false);
      expect(last.body.data.map((c: Category) => c.name)).toEqual(["A5"]);
      expect(last.body.pagination).toEqual({ page: 3, per_page: 2, total_pages: 3, total_records: 5 });

      const past = await client.get(PATH, { page: 4, limit: 2 });
      expect(past.status).toBe(200);
      expect(past.body.has_more).toBe(false);
      expect(past.body.data).toEqual([]);
      expect(past.body.pagination).toEqual({ page: 4, per_page: 2, total_pages: 3, total_records: 5 });
    });

    it("normalizes page and limit instead of rejecting them", async () => {
      const { client } = await ownerOfNewAccount();
      await create(client, { name: "One" });
      await create(client, { name: "Two" });
      const defaults = await client.get(PATH);
      expect(defaults.body.pagination).toMatchObject({ page: 1, per_page: 20 });
      const low = await client.get(PATH, { page: 0, limit: 0 });
      expect(low.status).toBe(200);
      expect(low.body.pagination).toEqual({ page: 1, per_page: 1, total_pages: 2, total_records: 2 });
      expect(low.body.has_more).toBe(true);
      const high = await client.get(PATH, { page: -3, limit: 500 });
      expect(high.status).toBe(200);
      expect(high.body.pagination).toEqual({ page: 1, per_page: 100, total_pages: 1, total_records: 2 });
    });

    it("a location-restricted user sees every category of the account", async () => {
      const { account, client } = await ownerOfNewAccount();
      const location = await client.post("/locations", { name: "North", short_name: "N" }, { idempotencyKey: idempotencyKey() });
      expect(location.status, location.text).toBe(201);
      const root = await create(client, { name: "Root" });
      const child = await create(client, { name: "Child", parent_id: root.id });
      const restricted = await newUser(account, { locationId: location.body.id, permissions: ["inventory.list"] });
      const restrictedClient = api().withKey(restricted.key);
      expect(await listAll(restrictedClient)).toEqual([child, root]);
      const one = await restrictedClient.get(`${PATH}/${child.id}`);
      expect(one.status).toBe(200);
      expect(one.body).toEqual(child);
    });

    it("never shows another account's categories", async () => {
      const { client } = await ownerOfNewAccount();
      const other = await ownerOfNewAccount();
      const mine = await create(client, { name: "Shared name" });
      const theirs = await create(other.client, { name: "Shared name" });
      const theirRoot = await create(other.client, { name: "Their root" });
      await create(other.client, { name: "Their child", parent_id: theirRoot.id });
      expect(await listAll(client)).toEqual([mine]);
      expect(await listAll(client, { q: "shared" })).toEqual([mine]);
      expectError(await client.get(PATH, { parent_id: theirRoot.id }), 422, "invalid_query_parameter", "parent_id");
      expect(await listAll(other.client, { q: "shared" })).toEqual([theirs]);
    });
  });

  describe("PATCH /item-categories/{id}", () => {
    it("changes the name and inventory type, keeping the rest", async () => {
      const { client } = await ownerOfNewAccount();
      const category = await create(client, { name: "Old", custom_fields: [{ name: "F" }] });
      const response = await client.patch(`${PATH}/${category.id}`, { name: "New", inventory_type: "unique" });
      expect(response.status, response.text).toBe(200);
      expect(response.body).toEqual({ ...category, name: "New", inventory_type: "unique" });
      expect((await client.get(`${PATH}/${category.id}`)).body).toEqual(response.body);
    });

    it("custom_fields is the complete desired list: keep by id, add without id, delete by omission", async () => {
      const { client } = await ownerOfNewAccount();
      const category = await create(client, {
        name: "Fields",
        custom_fields: [{ name: "A" }, { name: "B", display_on_inventory_list: true }, { name: "C", publish_on_documents: true }],
      });
      const [a, b, c] = category.custom_fields as [CustomField, CustomField, CustomField];
      const response = await client.patch(`${PATH}/${category.id}`, {
        custom_fields: [{ id: c.id, name: "C2", publish_on_documents: true }, { name: "D" }, { id: a.id, name: "A" }],
      });
      expect(response.status, response.text).toBe(200);
      const fields = response.body.custom_fields as CustomField[];
      expect(fields).toEqual([
        { id: c.id, name: "C2", display_order: 1, display_on_inventory_list: false, publish_on_documents: true },
        { id: expect.any(String), name: "D", display_order: 2, display_on_inventory_list: false, publish_on_documents: false },
        { id: a.id, name: "A", display_order: 3, display_on_inventory_list: false, publish_on_documents: false },
      ]);
      expect([a.id, b.id, c.id]).not.toContain(fields[1]!.id);
      expect(fields.map((f) => f.id)).not.toContain(b.id);
      expect((await client.get(`${PATH}/${category.id}`)).body.custom_fields).toEqual(fields);

      // A kept field keeps the flags the request leaves out (an id keeps the field, spec part 1, 4.2).
      const flagged = await client.patch(`${PATH}/${category.id}`, {
        custom_fields: [
          { id: c.id, name: "C3", display_on_inventory_list: true },
          { id: fields[1]!.id, name: "D" },
        ],
      });
      const renamed = await client.patch(`${PATH}/${category.id}`, {
        custom_fields: [
          { id: c.id, name: "C4" },
          { id: fields[1]!.id, name: "D" },
        ],
      });
      expect(flagged.status, flagged.text).toBe(200);
      expect(renamed.body.custom_fields[0]).toEqual({ id: c.id, name: "C4", display_order: 1, display_on_inventory_list: true, publish_on_documents: true });
    });

    it("an id that is not a field of this category is 422 at custom_fields[i].id, and nothing changes", async () => {
      const { client } = await ownerOfNewAccount();
      const category = await create(client, { name: "Mine", custom_fields: [{ name: "A" }] });
      const other = await create(client, { name: "Other", custom_fields: [{ name: "X" }] });
      const a = category.custom_fields[0]!;
      const otherField = other.custom_fields[0]!;
      const response = await client.patch(`${PATH}/${category.id}`, {
        name: "Changed",
        custom_fields: [
          { id: a.id, name: "A" },
          { id: otherField.id, name: "X" },
        ],
      });
      expectError(response, 422, "validation_failed", "custom_fields[1].id");
      const unknown = await client.patch(`${PATH}/${category.id}`, { custom_fields: [{ id: randomUUID(), name: "Z" }] });
      expectError(unknown, 422, "validation_failed", "custom_fields[0].id");
      expect((await client.get(`${PATH}/${category.id}`)).body).toEqual(category);
    });

    it("a PATCH without custom_fields keeps them", async () => {
      const { client } = await ownerOfNewAccount();
      const category = await create(client, { name: "Keep", custom_fields: [{ name: "A", display_on_inventory_list: true }, { name: "B" }] });
      const response = await client.patch(`${PATH}/${category.id}`, { name: "Kept" });
      expect(response.status).toBe(200);
      expect(response.body.custom_fields).toEqual(category.custom_fields);
    });

    it("an empty custom_fields list deletes every field", async () => {
      const { client } = await ownerOfNewAccount();
      const category = await create(client, { name: "Drop", custom_fields: [{ name: "A" }, { name: "B" }] });
      const response = await client.patch(`${PATH}/${category.id}`, { custom_fields: [] });
      expect(response.status).toBe(200);
      expect(response.body.custom_fields).toEqual([]);
    });

    it("parent_id null makes a child a root category", async () => {
      const { client } = await ownerOfNewAccount();
      const root = await create(client, { name: "Root" });
      const child = await create(client, { name: "Child", parent_id: root.id });
      const response = await client.patch(`${PATH}/${child.id}`, { parent_id: null });
      expect(response.status, response.text).toBe(200);
      expect(response.body.parent_id).toBeNull();
      expect(await listAll(client, { parent_id: root.id })).toEqual([]);
      expect((await listAll(client, { parent_id: "root" })).map((c) => c.id).sort()).toEqual([root.id, child.id].sort());
      // The former parent has no children left, so it can itself get a parent now.
      const other = await create(client, { name: "Other" });
      const moved = await client.patch(`${PATH}/${root.id}`, { parent_id: other.id });
      expect(moved.status, moved.text).toBe(200);
      expect(moved.body.parent_id).toBe(other.id);
    });

    it("a category with children cannot get a parent (422 param parent_id)", async () => {
      const { client } = await ownerOfNewAccount();
      const parent = await create(client, { name: "Parent" });
      await create(client, { name: "Child", parent_id: parent.id });
      const other = await create(client, { name: "Other" });
      const response = await client.patch(`${PATH}/${parent.id}`, { parent_id: other.id });
      expectError(response, 422, "validation_failed", "parent_id");
      expect((await client.get(`${PATH}/${parent.id}`)).body.parent_id).toBeNull();
      expect(await listAll(client, { parent_id: other.id })).toEqual([]);
    });

    it("a category cannot be its own parent (422 param parent_id)", async () => {
      const { client } = await ownerOfNewAccount();
      const category = await create(client, { name: "Self" });
      const response = await client.patch(`${PATH}/${category.id}`, { parent_id: category.id });
      expectError(response, 422, "validation_failed", "parent_id");
      expect((await client.get(`${PATH}/${category.id}`)).body.parent_id).toBeNull();
    });

    it("a child, an unknown UUID or another account's category cannot become the parent", async () => {
      const { client } = await ownerOfNewAccount();
      const other = await ownerOfNewAccount();
      const root = await create(client, { name: "Root" });
      const child = await create(client, { name: "Child", parent_id: root.id });
      const loose = await create(client, { name: "Loose" });
      const foreign = await create(other.client, { name: "Foreign" });
      for (const parent of [child.id, randomUUID(), foreign.id]) {
        const response = await client.patch(`${PATH}/${loose.id}`, { parent_id: parent });
        expectError(response, 422, "validation_failed", "parent_id");
      }
      expect((await client.get(`${PATH}/${loose.id}`)).body).toEqual(loose);
    });

    it("a child can move to another root parent", async () => {
      const { client } = await ownerOfNewAccount();
      const first = await create(client, { name: "First" });
      const second = await create(client, { name: "Second" });
      const child = await create(client, { name: "Child", parent_id: first.id });
      const response = await client.patch(`${PATH}/${child.id}`, { parent_id: second.id });
      expect(response.status, response.text).toBe(200);
      expect(response.body).toEqual({ ...child, parent_id: second.id });
      expect(await listAll(client, { parent_id: first.id })).toEqual([]);
      expect(await listAll(client, { parent_id: second.id })).toEqual([response.body]);
      // First lost its only child: it may now get a parent; Second now has one: it may not.
      expect((await client.patch(`${PATH}/${second.id}`, { parent_id: first.id })).status).toBe(422);
      const moved = await client.patch(`${PATH}/${first.id}`, { parent_id: second.id });
      expect(moved.status, moved.text).toBe(200);
    });

    it("the tree stays two levels deep when children are added while their parent moves", async () => {
      const { client } = await ownerOfNewAccount();
      const parent = await create(client, { name: "Parent" });
      const target = await create(client, { name: "Target" });
      const results = await Promise.all([
        client.patch(`${PATH}/${parent.id}`, { parent_id: target.id }),
        ...Array.from({ length: 4 }, (_, i) => client.post(PATH, { name: `Child ${i}`, inventory_type: "quantity", parent_id: parent.id })),
      ]);
      for (const result of results) expect([200, 201, 422], result.text).toContain(result.status);
      const all = await listAll(client);
      const byId = new Map(all.map((c) => [c.id, c]));
      for (const category of all) {
        if (category.parent_id === null) continue;
        expect(byId.get(category.parent_id)?.parent_id, `${category.name} sits under a child`).toBeNull();
      }
      const children = all.filter((c) => c.parent_id === parent.id);
      if (byId.get(parent.id)!.parent_id === target.id) expect(children, "a moved parent has no children").toEqual([]);
      expect(children.length).toBe(results.slice(1).filter((r) => r.status === 201).length);
    });

    it("sending the current parent again changes nothing", async () => {
      const { client } = await ownerOfNewAccount();
      const root = await create(client, { name: "Root" });
      const child = await create(client, { name: "Child", parent_id: root.id });
      const response = await client.patch(`${PATH}/${child.id}`, { name: "Child 2", parent_id: root.id });
      expect(response.status, response.text).toBe(200);
      expect(response.body).toEqual({ ...child, name: "Child 2" });
      expect(await listAll(client, { parent_id: root.id })).toEqual([response.body]);
    });

    it("invalid fields are 422 validation_failed", async () => {
      const { client } = await ownerOfNewAccount();
      const category = await create(client, { name: "Valid" });
      expectValidationFailed(await client.patch(`${PATH}/${category.id}`, { name: "n".repeat(256) }), "name");
      expectValidationFailed(await client.patch(`${PATH}/${category.id}`, { inventory_type: "bulk" }), "inventory_type");
      expectValidationFailed(await client.patch(`${PATH}/${category.id}`, { custom_fields: [{ id: randomUUID() }] }), "custom_fields[0].name");
      expect((await client.get(`${PATH}/${category.id}`)).body).toEqual(category);
    });

    it("an unknown, malformed or foreign category is 404", async () => {
      const { client } = await ownerOfNewAccount();
      const other = await ownerOfNewAccount();
      const foreign = await create(other.client, { name: "Foreign" });
      expectError(await client.patch(`${PATH}/${randomUUID()}`, { name: "X" }), 404, "resource_missing");
      expectError(await client.patch(`${PATH}/not-a-uuid`, { name: "X" }), 404, "resource_missing");
      expectError(await client.patch(`${PATH}/${foreign.id}`, { name: "Hijacked" }), 404, "resource_missing");
      expect((await other.client.get(`${PATH}/${foreign.id}`)).body).toEqual(foreign);
    });
  });

  describe("permissions and scopes", () => {
    it("staff without inventory.modify get 403 permission_denied on POST and PATCH, but can read", async () => {
      const { account, client } = await ownerOfNewAccount();
      const category = await create(client, { name: "Owned" });
      const staff = await newUser(account, { permissions: ["inventory.list", "inventory.manage"] });
      const staffClient = api().withKey(staff.key);

      expectError(await staffClient.post(PATH, { name: "Nope", inventory_type: "quantity" }), 403, "permission_denied");
      expectError(await staffClient.patch(`${PATH}/${category.id}`, { name: "Nope" }), 403, "permission_denied");
      expect((await client.get(`${PATH}/${category.id}`)).body).toEqual(category);
      expect(await listAll(client)).toEqual([category]);

      const one = await staffClient.get(`${PATH}/${category.id}`);
      expect(one.status).toBe(200);
      expect(one.body).toEqual(category);
      expect(await listAll(staffClient)).toEqual([category]);
    });

    it("staff with inventory.modify can write", async () => {
      const { account } = await ownerOfNewAccount();
      const staff = await newUser(account, { permissions: ["inventory.modify"] });
      const staffClient = api().withKey(staff.key);
      const category = await create(staffClient, { name: "By staff" });
      const response = await staffClient.patch(`${PATH}/${category.id}`, { name: "Edited by staff" });
      expect(response.status).toBe(200);
    });

    it("a read-only key is 403 insufficient_scope on writes and can still read", async () => {
      const { account, client } = await ownerOfNewAccount();
      const category = await create(client, { name: "Scoped" });
      const reader = await newUser(account, { role: "owner", scopes: ["items:read"] });
      const readerClient = api().withKey(reader.key);
      expectError(await readerClient.post(PATH, { name: "Nope", inventory_type: "quantity" }), 403, "insufficient_scope", "items:write");
      expectError(await readerClient.patch(`${PATH}/${category.id}`, { name: "Nope" }), 403, "insufficient_scope", "items:write");
      expect((await readerClient.get(`${PATH}/${category.id}`)).status).toBe(200);
    });

    it("no API key is 401", async () => {
      const response = await api().get(PATH);
      expect(response.status).toBe(401);
      expect(response.body.error).toMatchObject({ type: "authentication_error", code: "authentication_required" });
      expect(response.headers.get("www-authenticate")).toBe("Bearer");
    });
  });

  describe("Idempotency-Key (optional)", () => {
    it("an exact replay returns the original category with Idempotent-Replayed: true; one category exists", async () => {
      const { client } = await ownerOfNewAccount();
      const key = idempotencyKey();
      const body = { name: "Once", inventory_type: "quantity", custom_fields: [{ name: "A" }] };
      const first = await client.post(PATH, body, { idempotencyKey: key });
      expect(first.status).toBe(201);
      expect(first.headers.get("idempotent-replayed")).toBeNull();
      const replay = await client.post(PATH, { custom_fields: [{ name: "A" }], inventory_type: "quantity", name: "Once" }, { idempotencyKey: key });
      expect(replay.status).toBe(201);
      expect(replay.headers.get("idempotent-replayed")).toBe("true");
      expect(replay.body).toEqual(first.body);
      expect(await listAll(client)).toEqual([first.body]);
    });

    it("concurrent identical requests with one key create one category", async () => {
      const { client } = await ownerOfNewAccount();
      const key = idempotencyKey();
      const body = { name: "Raced", inventory_type: "quantity" };
      const results = await Promise.all(Array.from({ length: 5 }, () => client.post(PATH, body, { idempotencyKey: key })));
      for (const result of results) {
        if (result.status === 409) expect(result.body.error.code, result.text).toBe("idempotency_in_progress");
        else expect(result.status, result.text).toBe(201);
      }
      const created = results.filter((r) => r.status === 201);
      expect(created.length).toBeGreaterThanOrEqual(1);
      expect(created.filter((r) => r.headers.get("idempotent-replayed") !== "true")).toHaveLength(1);
      for (const result of created) expect(result.body).toEqual(created[0]!.body);
      expect(await listAll(client)).toEqual([created[0]!.body]);
    });

    it("the same key with different data is 409 idempotency_key_reused", async () => {
      const { client } = await ownerOfNewAccount();
      const key = idempotencyKey();
      expect((await client.post(PATH, { name: "One", inventory_type: "quantity" }, { idempotencyKey: key })).status).toBe(201);
      const reused = await client.post(PATH, { name: "Two", inventory_type: "quantity" }, { idempotencyKey: key });
      expectError(reused, 409, "idempotency_key_reused", "Idempotency-Key");
      expect((await listAll(client)).map((c) => c.name)).toEqual(["One"]);
    });

    it("without a key, two identical POSTs create two categories", async () => {
      const { client } = await ownerOfNewAccount();
      await create(client, { name: "Twin" });
      await create(client, { name: "Twin" });
      expect(await listAll(client)).toHaveLength(2);
    });

    it("a PATCH replay returns the stored result", async () => {
      const { client } = await ownerOfNewAccount();
      const category = await create(client, { name: "Before" });
      const key = idempotencyKey();
      const first = await client.patch(`${PATH}/${category.id}`, { name: "After" }, { idempotencyKey: key });
      expect(first.status).toBe(200);
      const replay = await client.patch(`${PATH}/${category.id}`, { name: "After" }, { idempotencyKey: key });
      expect(replay.status).toBe(200);
      expect(replay.headers.get("idempotent-replayed")).toBe("true");
      expect(replay.body).toEqual(first.body);
    });

    it("an invalid key is 400 invalid_idempotency_key and creates nothing", async () => {
      const { client } = await ownerOfNewAccount();
      const response = await client.post(PATH, { name: "X", inventory_type: "quantity" }, { idempotencyKey: "k".repeat(256) });
      expectError(response, 400, "invalid_idempotency_key", "Idempotency-Key");
      expect(await listAll(client)).toEqual([]);
    });
  });
});
