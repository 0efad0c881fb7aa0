import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { createCustomField, createUnit } from "../../lib/domain/admin/service.js";
import { db } from "../../lib/db/service.js";
import { useApiServer, type ApiClient, type TestResponse } from "../support/api.js";
import { expectError, expectValidation } from "../support/assertions.js";
import { deactivateLocation, idempotencyKey, newAccount, newKey, newUser, type TestAccount } from "../support/fixtures.js";
import { cli, failed, succeeded } from "../support/cli.js";
import { scaled } from "../support/timeouts.js";

/**
 * Items, variations, units and stock rows over HTTP against DynamoDB Local (architecture
 * section 4, "Items, variations and stock" and "Permissions"; spec part 1, sections 2.1, 4.5,
 * 4.6, 7 and 8), plus the operator CLI's unit, item and kit commands. Every test makes its own
 * account, so tests share the table safely.
 */
const api = useApiServer();

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;
const LIST_URL = "/api/v3/items";

/** The item's keys in the contract's order (architecture section 4). */
const ITEM_KEYS = [
  "id",
  "object",
  "item_number",
  "name",
  "description",
  "sku",
  "barcode",
  "serial_number",
  "category_id",
  "category_name",
  "inventory_type",
  "status_id",
  "location_id",
  "unit_id",
  "unit_name",
  "price",
  "cost",
  "quantity",
  "quantity_reserved",
  "quantity_incoming",
  "quantity_available",
  "in_transit",
  "threshold",
  "variation_count",
  "archived",
  "published",
  "sold",
  "location_inventory",
  "custom_field_values",
  "created_at",
  "updated_at",
];

const VARIATION_KEYS = [
  "id",
  "object",
  "item_id",
  "variation_number",
  "values",
  "sku",
  "barcode",
  "unit_price_override",
  "unit_cost_override",
  "quantity",
  "quantity_reserved",
  "quantity_incoming",
  "in_transit",
  "location_count",
];
const ROW_KEYS = ["object", "item_variation_location_id", "location_id", "zone_id", "quantity", "quantity_reserved", "quantity_incoming", "in_transit"];
const LOCATION_INVENTORY_KEYS = ["location_id", "quantity", "quantity_reserved", "quantity_available", "quantity_incoming", "threshold"];

type Item = Record<string, any> & { id: string; item_number: number; name: string };

async function setup(): Promise<{ account: TestAccount; client: ApiClient }> {
  const account = await newAccount();
  return { account, client: api().withKey(account.ownerKey) };
}

const del = (client: ApiClient, path: string) => client.request("DELETE", path);

async function createItem(client: ApiClient, body: Record<string, unknown>): Promise<Item> {
  const response = await client.post("/items", body);
  expect(response.status, response.text).toBe(201);
  return response.body as Item;
}

async function getItem(client: ApiClient, itemId: string): Promise<Item> {
  const response = await client.get(`/items/${itemId}`);
  expect(response.status, response.text).toBe(200);
  return response.body as Item;
}

async function listItems(client: ApiClient, query: Record<string, string | number> = {}): Promise<TestResponse> {
  const response = await client.get("/items", query);
  expect(response.status, response.text).toBe(200);
  return response;
}

const names = (response: TestResponse): string[] => response.body.data.map((item: Item) => item.name);

async function createLocation(client: ApiClient, name: string): Promise<string> {
  const response = await client.post("/locations", { name, short_name: name.slice(0, 25) }, { idempotencyKey: idempotencyKey() });
  expect(response.status, response.text).toBe(201);
  return response.body.id as string;
}

async function createCategory(client: ApiClient, body: Record<string, unknown>) {
  const response = await client.post("/item-categories", { inventory_type: "quantity", ...body });
  expect(response.status, response.text).toBe(201);
  return response.body as { id: string; name: string; inventory_type: string; custom_fields: { id: string; name: string }[] };
}

async function adjust(client: ApiClient, itemId: string, body: Record<string, unknown>) {
  const response = await client.post(`/items/${itemId}/adjustments`, body);
  expect(response.status, response.text).toBe(201);
  return response.body as { item_variation_location_id: number; quantity_after: number; item_variation_id: string };
}

async function variations(client: ApiClient, itemId: string, query: Record<string, string | number> = {}) {
  const response = await client.get(`/items/${itemId}/variations`, query);
  expect(response.status, response.text).toBe(200);
  return response;
}

/* ---------------------------------------------------------------------------------------- */

describe("POST /items: the item record", () => {
  it("returns exactly the item keys in the contract's order with the documented defaults, and GET returns the same", async () => {
    const { client } = await setup();
    const created = await client.post("/items", { name: "Widget" });
    expect(created.status, created.text).toBe(201);
    const item = created.body as Item;
    expect(Object.keys(item)).toEqual(ITEM_KEYS);
    expect(item).toMatchObject({
      object: "item",
      item_number: 1,
      name: "Widget",
      description: null,
      sku: null,
      barcode: null,
      serial_number: null,
      category_id: null,
      category_name: null,
      inventory_type: "quantity",
      status_id: 1,
      location_id: null,
      unit_id: null,
      unit_name: null,
      price: null,
      cost: null,
      quantity: 0,
      quantity_reserved: 0,
      quantity_incoming: 0,
      quantity_available: 0,
      in_transit: 0,
      threshold: 0,
      variation_count: 1,
      archived: false,
      published: false,
      sold: false,
      location_inventory: null,
      custom_field_values: [],
    });
    expect(item.id).toMatch(UUID);
    expect(item.created_at).toMatch(ISO);
    expect(item.updated_at).toMatch(ISO);

    const read = await client.get(`/items/${item.id}`);
    expect(read.status, read.text).toBe(200);
    expect(Object.keys(read.body)).toEqual(ITEM_KEYS);
    expect(read.body).toEqual(item);
  });

  it("stores the writable fields and shows price and cost as four-decimal strings from numbers or decimal strings", async () => {
    const { client } = await setup();
    const location = await createLocation(client, "Main");
    const item = await createItem(client, {
      name: "Gadget",
      description: "A fine gadget",
      sku: "GAD-1",
      barcode: "0123456789012",
      location_id: location,
      price: 19.99,
      cost: "5.5",
      threshold: 3,
      published: true,
    });
    expect(item).toMatchObject({
      description: "A fine gadget",
      sku: "GAD-1",
      barcode: "0123456789012",
      location_id: location,
      price: "19.9900",
      cost: "5.5000",
      threshold: 3,
      published: true,
      location_inventory: null,
    });
    const more = await createItem(client, { name: "Whole", price: 12, cost: "0.1234" });
    expect(more.price).toBe("12.0000");
    expect(more.cost).toBe("0.1234");
    const zero = await createItem(client, { name: "Free", price: "0", cost: 0 });
    expect(zero.price).toBe("0.0000");
    expect(zero.cost).toBe("0.0000");
  });

  it("rejects a price or cost with more than four decimals or below zero with 422 on the field", async () => {
    const { client } = await setup();
    expectValidation(await client.post("/items", { name: "X", price: 1.23456 }), "price");
    expectValidation(await client.post("/items", { name: "X", price: "1.23456" }), "price");
    expectValidation(await client.post("/items", { name: "X", price: -1 }), "price");
    expectValidation(await client.post("/items", { name: "X", cost: "-0.5" }), "cost");
    expectValidation(await client.post("/items", { name: "X", cost: 0.00001 }), "cost");
    expectValidation(await client.post("/items", {}), "name");
    const list = await listItems(client);
    expect(list.body.data).toEqual([]);
  });

  it("shows cost and unit_cost_override as null to a user without costs.view (GET, list, variations, own creates), refuses writing a cost with 403 and takes null back", async () => {
    const { account, client } = await setup();
    const item = await createItem(client, { name: "Secret cost", price: "10", cost: "4" });

    const reader = api().withKey((await newUser(account, { permissions: ["inventory.list"] })).key);
    const read = await reader.get(`/items/${item.id}`);
    expect(read.status, read.text).toBe(200);
    // Existing v3 clients reject an item without the key: it is always there, null.
    expect(Object.keys(read.body)).toEqual(ITEM_KEYS);
    expect(read.body.cost).toBeNull();
    expect(read.body.price).toBe("10.0000");
    const list = await listItems(reader);
    expect(list.body.data).toHaveLength(1);
    expect(Object.keys(list.body.data[0])).toEqual(ITEM_KEYS);
    expect(list.body.data[0].cost).toBeNull();
    const variationList = await variations(reader, item.id);
    expect(variationList.body.data[0]).toHaveProperty("unit_cost_override", null);

    const modifier = api().withKey((await newUser(account, { permissions: ["inventory.modify", "inventory.list"] })).key);
    expectError(await modifier.post("/items", { name: "With cost", cost: "1.00" }), 403, "permission_denied", "cost");
    expectError(await modifier.patch(`/items/${item.id}`, { cost: "2" }), 403, "permission_denied", "cost");
    expectError(
      await modifier.post("/items", { name: "With override", variations: [{ values: { Size: "M" }, unit_cost_override: "1" }] }),
      403,
      "permission_denied",
      "variations[0].unit_cost_override",
    );
    const allowed = await modifier.post("/items", { name: "Without cost", price: "3" });
    expect(allowed.status, allowed.text).toBe(201);
    expect(allowed.body.cost).toBeNull();
    // What it read it can write back: cost null (as shown) changes nothing.
    const writtenBack = await modifier.patch(`/items/${item.id}`, { name: "Secret cost", cost: null });
    expect(writtenBack.status, writtenBack.text).toBe(200);
    expect(writtenBack.body.cost).toBeNull();

    // The refused writes changed nothing.
    expect((await getItem(client, item.id)).cost).toBe("4.0000");
    expect(names(await listItems(client))).toEqual(["Secret cost", "Without cost"]);
  });
});

describe("item_number: the account's item sequence", () => {
  it("numbers 1, 2, 3 without gaps: rejected creates (schema, unknown reference, inactive location) consume no number", async () => {
    const { client, account } = await setup();
    const first = await createItem(client, { name: "One" });
    expect(first.item_number).toBe(1);

    expectValidation(await client.post("/items", { name: "Bad price", price: -5 }), "price");
    expectValidation(await client.post("/items", { name: "Bad category", category_id: randomUUID() }), "category_id");
    expectValidation(await client.post("/items", { name: "Bad location", location_id: randomUUID() }), "location_id");
    const location = await createLocation(client, "Closed");
    await deactivateLocation(account.accountId, location);
    expectValidation(await client.post("/items", { name: "Inactive location", location_id: location }), "location_id");

    const second = await createItem(client, { name: "Two" });
    const third = await createItem(client, { name: "Three" });
    expect([second.item_number, third.item_number]).toEqual([2, 3]);
    expect((await listItems(client)).body.pagination.total_records).toBe(3);
  });

  it("gives parallel creates distinct consecutive numbers", async () => {
    const { client } = await setup();
    const responses = await Promise.all(Array.from({ length: 8 }, (_, i) => client.post("/items", { name: `Parallel ${i}` })));
    expect(responses.filter((r) => r.status !== 201).map((r) => `${r.status} ${r.text}`)).toEqual([]);
    const numbers = responses.map((r) => r.body.item_number as number).sort((a, b) => a - b);
    expect(numbers).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    const next = await createItem(client, { name: "After" });
    expect(next.item_number).toBe(9);
    expect((await listItems(client)).body.pagination.total_records).toBe(9);
  });

  it("keeps each account's sequence separate", async () => {
    const a = await setup();
    const b = await setup();
    await createItem(a.client, { name: "A1" });
    await createItem(a.client, { name: "A2" });
    expect((await createItem(b.client, { name: "B1" })).item_number).toBe(1);
  });
});

describe("categories, units and locations on items", () => {
  it("defaults inventory_type from the category, lets an explicit one win, and shows category_name after a rename", async () => {
    const { client } = await setup();
    const unique = await createCategory(client, { name: "Serialised", inventory_type: "unique" });
    const bulk = await createCategory(client, { name: "Bulk", inventory_type: "quantity" });

    const fromCategory = await createItem(client, { name: "Laptop", category_id: unique.id, serial_number: "SN-001" });
    expect(fromCategory).toMatchObject({ category_id: unique.id, category_name: "Serialised", inventory_type: "unique", serial_number: "SN-001" });
    const explicit = await createItem(client, { name: "Cable", category_id: unique.id, inventory_type: "quantity" });
    expect(explicit).toMatchObject({ category_id: unique.id, inventory_type: "quantity", serial_number: null });
    const quantity = await createItem(client, { name: "Screws", category_id: bulk.id });
    expect(quantity).toMatchObject({ category_name: "Bulk", inventory_type: "quantity" });
    const explicitUnique = await createItem(client, { name: "Phone", category_id: bulk.id, inventory_type: "unique" });
    expect(explicitUnique.inventory_type).toBe("unique");

    const renamed = await client.patch(`/item-categories/${unique.id}`, { name: "Serial numbered" });
    expect(renamed.status, renamed.text).toBe(200);
    expect((await getItem(client, fromCategory.id)).category_name).toBe("Serial numbered");
    const list = await listItems(client);
    const laptop = list.body.data.find((item: Item) => item.id === fromCategory.id);
    expect(laptop.category_name).toBe("Serial numbered");
    const byIds = await listItems(client, { ids: `${fromCategory.id},${quantity.id}` });
    expect(byIds.body.data.map((item: Item) => item.category_name)).toEqual(["Serial numbered", "Bulk"]);
  });

  it("changes inventory_type only while the item holds nothing under the old type: not once sold, nor with stock on hand or incoming", async () => {
    const { client } = await setup();
    const location = await createLocation(client, "Main");
    const customer = (await client.post("/customers", { name: "Buyer" })).body.id as string;
    const supplier = (await client.post("/suppliers", { name: "Maker" })).body.id as string;

    const unit = await createItem(client, { name: "Phone", inventory_type: "unique" });
    await adjust(client, unit.id, { location_id: location, quantity: 1 });
    expect((await client.post("/invoices", { customer_id: customer, lines: [{ item_id: unit.id, quantity: 1 }] })).status).toBe(201);
    const sold = await getItem(client, unit.id);
    expect(sold).toMatchObject({ sold: true, status_id: 2, quantity: 0 });
    expectValidation(await client.patch(`/items/${unit.id}`, { inventory_type: "quantity" }), "inventory_type", "invalid");
    expect(await getItem(client, unit.id)).toEqual(sold);

    const bulk = await createItem(client, { name: "Screws" });
    const order = (await client.post("/purchase-orders", { supplier_id: supplier, location_id: location, lines: [{ item_id: bulk.id, quantity: 3 }] })).body;
    expect((await client.post(`/purchase-orders/${order.id}/send`, {})).status).toBe(200);
    expect((await getItem(client, bulk.id)).quantity_incoming).toBe(3);
    expectValidation(await client.patch(`/items/${bulk.id}`, { inventory_type: "unique" }), "inventory_type", "invalid");
    expect((await getItem(client, bulk.id)).inventory_type).toBe("quantity");

    // Stock that nets to zero over its locations is still stock: 5 at Main, 1 at Annex oversold by 6.
    const annex = await createLocation(client, "Annex");
    const spread = await createItem(client, { name: "Bolts" });
    await adjust(client, spread.id, { location_id: location, quantity: 5 });
    const annexRow = (await adjust(client, spread.id, { location_id: annex, quantity: 1 })).item_variation_location_id as number;
    const oversold = await client.post("/invoices", {
      customer_id: customer,
      lines: [{ item_id: spread.id, item_variation_location_id: annexRow, quantity: 6 }],
    });
    expect(oversold.status, oversold.text).toBe(201);
    expect((await getItem(client, spread.id)).quantity).toBe(0);
    expectValidation(await client.patch(`/items/${spread.id}`, { inventory_type: "unique" }), "inventory_type", "invalid");

    const empty = await createItem(client, { name: "Blank" });
    const changed = await client.patch(`/items/${empty.id}`, { inventory_type: "unique" });
    expect(changed.status, changed.text).toBe(200);
    expect(changed.body.inventory_type).toBe("unique");
  });

  it("refuses unknown or foreign category_id and unit_id, and a location_id that is not an active location of the account, with 422 on the param", async () => {
    const { account, client } = await setup();
    const other = await setup();
    const foreignCategory = await createCategory(other.client, { name: "Theirs" });
    const foreignLocation = await createLocation(other.client, "Their store");
    await createUnit({ accountId: other.account.accountId, name: "Theirs" });

    expectValidation(await client.post("/items", { name: "X", category_id: randomUUID() }), "category_id");
    expectValidation(await client.post("/items", { name: "X", category_id: foreignCategory.id }), "category_id");
    expectValidation(await client.post("/items", { name: "X", unit_id: 1 }), "unit_id");
    expectValidation(await client.post("/items", { name: "X", unit_id: 99 }), "unit_id");
    expectValidation(await client.post("/items", { name: "X", location_id: randomUUID() }), "location_id");
    expectValidation(await client.post("/items", { name: "X", location_id: foreignLocation }), "location_id");
    const inactive = await createLocation(client, "Old");
    await deactivateLocation(account.accountId, inactive);
    expectValidation(await client.post("/items", { name: "X", location_id: inactive }), "location_id");

    const item = await createItem(client, { name: "Valid" });
    expectValidation(await client.patch(`/items/${item.id}`, { category_id: foreignCategory.id }), "category_id");
    expectValidation(await client.patch(`/items/${item.id}`, { location_id: inactive }), "location_id");
    expectValidation(await client.patch(`/items/${item.id}`, { unit_id: 7 }), "unit_id");
    const unchanged = await getItem(client, item.id);
    expect(unchanged).toMatchObject({ category_id: null, location_id: null, unit_id: null, item_number: 1 });

    const active = await createLocation(client, "Store");
    const located = await createItem(client, { name: "Located", location_id: active });
    expect(located.location_id).toBe(active);
    expect(located.item_number).toBe(2);
  });

  it("gives integer unit ids 1, 2... from createUnit, lists them by unit_id, and shows unit_id and unit_name on items", async () => {
    const { account, client } = await setup();
    expect(await createUnit({ accountId: account.accountId, name: "Pallet" })).toEqual({ unit_id: 1 });
    expect(await createUnit({ accountId: account.accountId, name: "Box" })).toEqual({ unit_id: 2 });
    expect(await createUnit({ accountId: account.accountId, name: "Each" })).toEqual({ unit_id: 3 });

    const units = await client.get("/units");
    expect(units.status, units.text).toBe(200);
    expect(units.body).toMatchObject({ object: "list", url: "/api/v3/units", has_more: false });
    expect(units.body.data).toEqual([
      { object: "unit", unit_id: 1, name: "Pallet" },
      { object: "unit", unit_id: 2, name: "Box" },
      { object: "unit", unit_id: 3, name: "Each" },
    ]);
    for (const unit of units.body.data) expect(Object.keys(unit)).toEqual(["object", "unit_id", "name"]);

    const item = await createItem(client, { name: "Boxed", unit_id: 2 });
    expect(item).toMatchObject({ unit_id: 2, unit_name: "Box" });
    expect(await getItem(client, item.id)).toMatchObject({ unit_id: 2, unit_name: "Box" });
    const moved = await client.patch(`/items/${item.id}`, { unit_id: 3 });
    expect(moved.status, moved.text).toBe(200);
    expect(moved.body).toMatchObject({ unit_id: 3, unit_name: "Each" });
    const cleared = await client.patch(`/items/${item.id}`, { unit_id: null });
    expect(cleared.body).toMatchObject({ unit_id: null, unit_name: null });

    // Another account has its own unit sequence.
    const other = await newAccount();
    expect(await createUnit({ accountId: other.accountId, name: "Box" })).toEqual({ unit_id: 1 });
  });
});

describe("variations and stock rows", () => {
  it("gives a plain item one base variation with empty values and exactly the variation keys", async () => {
    const { client } = await setup();
    const item = await createItem(client, { name: "Plain", sku: "PL-1" });
    expect(item.variation_count).toBe(1);

    const list = await variations(client, item.id);
    expect(list.body).toMatchObject({ object: "list", url: `/api/v3/items/${item.id}/variations`, has_more: false });
    expect(list.body.data).toHaveLength(1);
    const [base] = list.body.data;
    expect(Object.keys(base)).toEqual(VARIATION_KEYS);
    expect(base).toMatchObject({
      object: "item_variation",
      item_id: item.id,
      variation_number: 1,
      values: {},
      unit_price_override: null,
      unit_cost_override: null,
      quantity: 0,
      quantity_reserved: 0,
      quantity_incoming: 0,
      in_transit: 0,
      location_count: 0,
    });
    expect(base.id).toMatch(UUID);
    expect(base).not.toHaveProperty("locations");

    const withRows = await variations(client, item.id, { include: "locations" });
    expect(Object.keys(withRows.body.data[0])).toEqual([...VARIATION_KEYS, "locations"]);
    expect(withRows.body.data[0].locations).toEqual([]);
  });

  it("creates the variations given, numbered in order, and sums stock rows into variations and variations into the item", async () => {
    const { client } = await setup();
    const l1 = await createLocation(client, "North");
    const l2 = await createLocation(client, "South");
    const item = await createItem(client, {
      name: "T-shirt",
      variations: [{ values: { Size: "M" }, sku: "TS-M", unit_price_override: "12.5" }, { values: { Size: "L" } }],
    });
    expect(item.variation_count).toBe(2);
    // A no-op: the item's own SKU is null already (the variations' SKUs stay searchable).
    const unchanged = await client.patch(`/items/${item.id}`, { sku: null });
    expect(unchanged.status, unchanged.text).toBe(200);
    expect(unchanged.body.updated_at).toBe(item.updated_at);
    expect((await client.get("/items", { q: "ts-m" })).body.data.map((found: any) => found.id)).toEqual([item.id]);

    const before = await variations(client, item.id);
    expect(before.body.data.map((v: any) => [v.variation_number, v.values, v.sku])).toEqual([
      [1, { Size: "M" }, "TS-M"],
      [2, { Size: "L" }, null],
    ]);
    expect(before.body.data[0].unit_price_override).toBe("12.5000");
    const [medium, large] = before.body.data as { id: string }[];

    // An item with several variations needs to be told which one.
    expectValidation(await client.post(`/items/${item.id}/adjustments`, { location_id: l1, quantity: 1 }), "item_variation_id");

    const m1 = await adjust(client, item.id, { location_id: l1, quantity: 5, item_variation_id: medium!.id });
    const m2 = await adjust(client, item.id, { location_id: l2, quantity: 3, item_variation_id: medium!.id });
    const l1Large = await adjust(client, item.id, { location_id: l1, quantity: 2, item_variation_id: large!.id });
    const ids = [m1.item_variation_location_id, m2.item_variation_location_id, l1Large.item_variation_location_id];
    for (const id of ids) expect(Number.isInteger(id)).toBe(true);
    expect(new Set(ids).size).toBe(3);

    const after = await variations(client, item.id, { include: "locations" });
    const [vm, vl] = after.body.data;
    for (const variation of after.body.data) {
      expect(Object.keys(variation)).toEqual([...VARIATION_KEYS, "locations"]);
      for (const row of variation.locations) {
        expect(Object.keys(row)).toEqual(ROW_KEYS);
        expect(row).toMatchObject({ object: "item_variation_location", zone_id: null, quantity_reserved: 0, quantity_incoming: 0, in_transit: 0 });
      }
      const rowSum = variation.locations.reduce((sum: number, row: any) => sum + row.quantity, 0);
      expect(variation.quantity).toBe(rowSum);
      expect(variation.location_count).toBe(variation.locations.length);
    }
    expect(vm.quantity).toBe(8);
    expect(vm.location_count).toBe(2);
    expect(vl.quantity).toBe(2);
    expect(vl.location_count).toBe(1);
    const rowsById = new Map<number, any>(
      after.body.data.flatMap((v: any) => v.locations.map((row: any) => [row.item_variation_location_id, { ...row, variation: v.id }])),
    );
    expect(rowsById.get(m1.item_variation_location_id)).toMatchObject({ location_id: l1, quantity: 5, variation: medium!.id });
    expect(rowsById.get(m2.item_variation_location_id)).toMatchObject({ location_id: l2, quantity: 3, variation: medium!.id });
    expect(rowsById.get(l1Large.item_variation_location_id)).toMatchObject({ location_id: l1, quantity: 2, variation: large!.id });

    const itemNow = await getItem(client, item.id);
    expect(itemNow.quantity).toBe(vm.quantity + vl.quantity);
    expect(itemNow.quantity).toBe(10);
    expect(itemNow.quantity_available).toBe(10);

    // Later adjustments keep each row's id (by variation, or naming the row itself).
    const again = await adjust(client, item.id, { location_id: l1, quantity: 4, item_variation_id: medium!.id });
    expect(again.item_variation_location_id).toBe(m1.item_variation_location_id);
    expect(again.quantity_after).toBe(9);
    const byRow = await adjust(client, item.id, { location_id: l2, quantity: -1, item_variation_location_id: m2.item_variation_location_id });
    expect(byRow.item_variation_location_id).toBe(m2.item_variation_location_id);
    expect(byRow.quantity_after).toBe(2);

    const final = await variations(client, item.id, { include: "locations" });
    const finalIds = final.body.data.flatMap((v: any) => v.locations.map((row: any) => row.item_variation_location_id)).sort();
    expect(finalIds).toEqual([...ids].sort());
    expect(final.body.data.map((v: any) => v.quantity)).toEqual([11, 2]);
    expect((await getItem(client, item.id)).quantity).toBe(13);
  });

  it("refuses an adjustment that would take stock below zero, and one at an inactive location", async () => {
    const { account, client } = await setup();
    const location = await createLocation(client, "Depot");
    const item = await createItem(client, { name: "Bolt" });
    await adjust(client, item.id, { location_id: location, quantity: 2 });
    expectValidation(await client.post(`/items/${item.id}/adjustments`, { location_id: location, quantity: -3 }), "quantity");
    const closed = await createLocation(client, "Closed");
    await deactivateLocation(account.accountId, closed);
    expectValidation(await client.post(`/items/${item.id}/adjustments`, { location_id: closed, quantity: 1 }), "location_id");
    expect((await getItem(client, item.id)).quantity).toBe(2);
  });
});

describe("custom_field_values on items", () => {
  it("accepts a field of the item's category and an account-level item field, and refuses a customer field on its position", async () => {
    const { account, client } = await setup();
    const category = await createCategory(client, { name: "Paint", custom_fields: [{ name: "Colour" }] });
    const categoryField = category.custom_fields[0]!.id;
    const { custom_field_id: itemField } = await createCustomField({ accountId: account.accountId, kind: "item", name: "Origin" });
    const { custom_field_id: customerField } = await createCustomField({ accountId: account.accountId, kind: "customer", name: "Region" });

    const item = await createItem(client, {
      name: "Red paint",
      category_id: category.id,
      custom_field_values: [
        { custom_field_id: categoryField, value: "Red" },
        { custom_field_id: itemField, value: "Italy" },
      ],
    });
    expect(item.custom_field_values).toEqual([
      { custom_field_id: categoryField, value: "Red" },
      { custom_field_id: itemField, value: "Italy" },
    ]);
    expect((await getItem(client, item.id)).custom_field_values).toEqual(item.custom_field_values);

    const plain = await createItem(client, { name: "Plain", custom_field_values: [{ custom_field_id: itemField, value: "France" }] });
    expect(plain.custom_field_values).toEqual([{ custom_field_id: itemField, value: "France" }]);

    expectValidation(
      await client.post("/items", { name: "Wrong", custom_field_values: [{ custom_field_id: customerField, value: "North" }] }),
      "custom_field_values[0].custom_field_id",
    );
    expectValidation(
      await client.post("/items", {
        name: "Wrong too",
        custom_field_values: [
          { custom_field_id: itemField, value: "Spain" },
          { custom_field_id: customerField, value: "North" },
        ],
      }),
      "custom_field_values[1].custom_field_id",
    );
    expectValidation(
      await client.patch(`/items/${plain.id}`, { custom_field_values: [{ custom_field_id: randomUUID(), value: "x" }] }),
      "custom_field_values[0].custom_field_id",
    );
    expect((await getItem(client, plain.id)).custom_field_values).toEqual([{ custom_field_id: itemField, value: "France" }]);
    // Ids match in any casing and read back as the field's own; two casings of one id are a duplicate.
    const upper = await client.patch(`/items/${plain.id}`, { custom_field_values: [{ custom_field_id: itemField.toUpperCase(), value: "Italy" }] });
    expect(upper.status, upper.text).toBe(200);
    expect(upper.body.custom_field_values).toEqual([{ custom_field_id: itemField, value: "Italy" }]);
    expectValidation(
      await client.patch(`/items/${plain.id}`, {
        custom_field_values: [
          { custom_field_id: itemField, value: "a" },
          { custom_field_id: itemField.toUpperCase(), value: "b" },
        ],
      }),
      "custom_field_values[1].custom_field_id",
      "duplicate",
    );
    expect((await getItem(client, plain.id)).custom_field_values).toEqual([{ custom_field_id: itemField, value: "Italy" }]);

    // A complete replacement: a blank value removes the value.
    const cleared = await client.patch(`/items/${item.id}`, { custom_field_values: [{ custom_field_id: itemField, value: "" }] });
    expect(cleared.status, cleared.text).toBe(200);
    expect(cleared.body.custom_field_values).toEqual([]);
  });

  it("a value of a field deleted from its category is gone: not shown, not taken back, dropped by the next replacement; the GET body goes back unchanged", async () => {
    const { client } = await setup();
    const category = await createCategory(client, { name: "Electrics", custom_fields: [{ name: "Voltage" }, { name: "Plug" }] });
    const [voltage, plug] = category.custom_fields.map((field) => field.id);
    const item = await createItem(client, {
      name: "Kettle",
      category_id: category.id,
      custom_field_values: [
        { custom_field_id: voltage, value: "230V" },
        { custom_field_id: plug, value: "Type G" },
      ],
    });
    // The field to keep named in upper case: the same field, kept under its own id.
    const kept = await client.patch(`/item-categories/${category.id}`, { custom_fields: [{ id: plug!.toUpperCase(), name: "Plug" }] });
    expect(kept.status, kept.text).toBe(200);
    expect(kept.body.custom_fields.map((field: { id: string }) => field.id)).toEqual([plug]);
    const read = await getItem(client, item.id);
    expect(read.custom_field_values).toEqual([{ custom_field_id: plug, value: "Type G" }]);
    const listed = (await client.get("/items", { ids: item.id })).body.data[0];
    expect(listed.custom_field_values).toEqual(read.custom_field_values);
    // The GET body sent back changes nothing (the value of the deleted field is no one's to see).
    const back = await client.patch(`/items/${item.id}`, { custom_field_values: read.custom_field_values });
    expect(back.status, back.text).toBe(200);
    expect(back.body.updated_at).toBe(read.updated_at);
    // Its former value sent again, or a new one, is refused as any unknown field is (spec part 1, section 2.1).
    for (const value of ["230V", "110V"]) {
      expectValidation(
        await client.patch(`/items/${item.id}`, { custom_field_values: [...read.custom_field_values, { custom_field_id: voltage, value }] }),
        "custom_field_values[1].custom_field_id",
        "invalid_reference",
      );
    }
    // Another edit keeps it hidden; a new category takes none of it along.
    const edited = await client.patch(`/items/${item.id}`, { description: "Boils" });
    expect(edited.body).toMatchObject({ description: "Boils", custom_field_values: [{ custom_field_id: plug, value: "Type G" }] });
    const other = await createCategory(client, { name: "Kitchen" });
    const moved = await client.patch(`/items/${item.id}`, { category_id: other.id });
    expect(moved.status, moved.text).toBe(200);
    expect(moved.body.custom_field_values).toEqual([]);
    const stored = await client.patch(`/items/${item.id}`, { category_id: category.id });
    expect(stored.body.custom_field_values).toEqual([]);
  });

  it("a new category drops the former category's values (account-level item fields stay); a value of the former one sent with it is refused", async () => {
    const { account, client } = await setup();
    const paint = await createCategory(client, { name: "Paint", custom_fields: [{ name: "Colour" }] });
    const tools = await createCategory(client, { name: "Tools", custom_fields: [{ name: "Voltage" }] });
    const colour = paint.custom_fields[0]!.id;
    const voltage = tools.custom_fields[0]!.id;
    const { custom_field_id: origin } = await createCustomField({ accountId: account.accountId, kind: "item", name: "Origin" });
    const item = await createItem(client, {
      name: "Mixer",
      category_id: paint.id,
      custom_field_values: [
        { custom_field_id: colour, value: "Red" },
        { custom_field_id: origin, value: "Italy" },
      ],
    });
    // The former category's value sent back unchanged with the new category is refused too: it is
    // no longer the item's (only while the category stays may a value be sent back as read).
    const carried = await client.patch(`/items/${item.id}`, { category_id: tools.id, custom_field_values: item.custom_field_values });
    expectValidation(carried, "custom_field_values[0].custom_field_id", "invalid_reference");
    expect(await getItem(client, item.id)).toMatchObject({ category_id: paint.id, custom_field_values: item.custom_field_values });
    const moved = await client.patch(`/items/${item.id}`, { category_id: tools.id });
    expect(moved.status, moved.text).toBe(200);
    expect(moved.body.custom_field_values).toEqual([{ custom_field_id: origin, value: "Italy" }]);
    expect((await getItem(client, item.id)).custom_field_values).toEqual([{ custom_field_id: origin, value: "Italy" }]);
    expectValidation(
      await client.patch(`/items/${item.id}`, { category_id: paint.id, custom_field_values: [{ custom_field_id: voltage, value: "220V" }] }),
      "custom_field_values[0].custom_field_id",
    );
    const uncategorised = await client.patch(`/items/${item.id}`, { category_id: null, custom_field_values: [{ custom_field_id: origin, value: "Spain" }] });
    expect(uncategorised.status, uncategorised.text).toBe(200);
    expect(uncategorised.body).toMatchObject({ category_id: null, custom_field_values: [{ custom_field_id: origin, value: "Spain" }] });
  });
});

describe("PATCH and DELETE /items/{id}", () => {
  it("updates only the fields sent", async () => {
    const { client } = await setup();
    const item = await createItem(client, { name: "Lamp", sku: "LMP", price: "20", cost: "8", description: "Desk lamp" });
    await new Promise((resolve) => setTimeout(resolve, 5));
    const patched = await client.patch(`/items/${item.id}`, { description: "Floor lamp", price: 25.5 });
    expect(patched.status, patched.text).toBe(200);
    expect(Object.keys(patched.body)).toEqual(ITEM_KEYS);
    expect(patched.body).toMatchObject({
      id: item.id,
      item_number: item.item_number,
      name: "Lamp",
      sku: "LMP",
      description: "Floor lamp",
      price: "25.5000",
      cost: "8.0000",
      created_at: item.created_at,
    });
    expect(patched.body.updated_at > item.updated_at).toBe(true);
    expect(await getItem(client, item.id)).toEqual(patched.body);

    const renamed = await client.patch(`/items/${item.id}`, { name: "Lantern", sku: null });
    expect(renamed.body).toMatchObject({ name: "Lantern", sku: null, description: "Floor lamp", price: "25.5000" });
    expectError(await client.patch(`/items/${randomUUID()}`, { name: "Ghost" }), 404, "resource_missing");
  });

  it("a change to unique racing stock additions never leaves a unique item with more than one unit (the loser plans again)", async () => {
    const { client } = await setup();
    const location = await createLocation(client, "Depot");
    const outcomes = new Map<string, number>();
    for (let round = 0; round < 8; round++) {
      const item = await createItem(client, { name: `Shifting ${round}` });
      const [adjusted, patched] = await Promise.all([
        client.post(`/items/${item.id}/adjustments`, { location_id: location, quantity: 5 }),
        client.patch(`/items/${item.id}`, { inventory_type: "unique" }),
      ]);
      const outcome = `${adjusted.status}/${patched.status}`;
      outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
      expect(adjusted.status === 201 && patched.status === 200, `both committed: ${adjusted.text} ${patched.text}`).toBe(false);
      const now = await getItem(client, item.id);
      if (now.inventory_type === "unique") expect(now.quantity).toBeLessThanOrEqual(1);
      else expect(now.quantity).toBe(adjusted.status === 201 ? 5 : 0);
    }
    console.info(`unique vs stock: ${JSON.stringify(Object.fromEntries(outcomes))}`);
  });

  it("archives with archived: true (status_id 3, left out of lists unless archived=all) and restores with false", async () => {
    const { client } = await setup();
    const kept = await createItem(client, { name: "Kept" });
    const item = await createItem(client, { name: "Old stock" });

    const archived = await client.patch(`/items/${item.id}`, { archived: true });
    expect(archived.status, archived.text).toBe(200);
    expect(archived.body).toMatchObject({ status_id: 3, archived: true });

    const active = await listItems(client);
    expect(names(active)).toEqual(["Kept"]);
    expect(active.body.pagination.total_records).toBe(1);
    const all = await listItems(client, { archived: "all" });
    expect(names(all)).toEqual(["Kept", "Old stock"]);
    expect(all.body.pagination.total_records).toBe(2);
    expect(all.body.data[1]).toMatchObject({ id: item.id, status_id: 3, archived: true });
    expectError(await client.get("/items", { archived: "true" }), 422, "invalid_query_parameter", "archived");

    const restored = await client.patch(`/items/${item.id}`, { archived: false });
    expect(restored.body).toMatchObject({ status_id: 1, archived: false });
    const again = await listItems(client);
    expect(names(again)).toEqual(["Kept", "Old stock"]);
    expect(again.body.pagination.total_records).toBe(2);
    expect(kept.status_id).toBe(1);
  });

  it("deletes an item (then 404) and refuses to delete one a document references with a detail on document_count", async () => {
    const { account, client } = await setup();
    const item = await createItem(client, { name: "Disposable" });
    const deleted = await del(client, `/items/${item.id}`);
    expect(deleted.status, deleted.text).toBe(200);
    expect(deleted.body).toEqual({ id: item.id, object: "item", deleted: true });
    expect(Object.keys(deleted.body)).toEqual(["id", "object", "deleted"]);
    expectError(await client.get(`/items/${item.id}`), 404, "resource_missing");
    expectError(await client.get(`/items/${item.id}/variations`), 404, "resource_missing");
    expectError(await del(client, `/items/${item.id}`), 404, "resource_missing");
    expect((await listItems(client)).body.pagination.total_records).toBe(0);

    const referenced = await createItem(client, { name: "On an invoice" });
    await db().entities.item.patch({ accountId: account.accountId, itemId: referenced.id }).add({ documentCount: 1 }).go();
    const refused = await del(client, `/items/${referenced.id}`);
    expectValidation(refused, "document_count");
    expect((await getItem(client, referenced.id)).name).toBe("On an invoice");
    expect((await listItems(client)).body.pagination.total_records).toBe(1);
  });
});

describe("GET /items", () => {
  it("orders by name case-insensitively with the list envelope and pagination; a page past the end is empty", async () => {
    const { client } = await setup();
    for (const name of ["banana", "Cherry", "apple-pie", "Apple", "date"]) await createItem(client, { name });

    const all = await listItems(client);
    expect(names(all)).toEqual(["Apple", "apple-pie", "banana", "Cherry", "date"]);
    expect(all.body).toMatchObject({
      object: "list",
      url: LIST_URL,
      has_more: false,
      pagination: { page: 1, per_page: 20, total_pages: 1, total_records: 5 },
    });
    for (const item of all.body.data) expect(Object.keys(item)).toEqual(ITEM_KEYS);

    const page1 = await listItems(client, { limit: 2 });
    expect(names(page1)).toEqual(["Apple", "apple-pie"]);
    expect(page1.body).toMatchObject({ has_more: true, pagination: { page: 1, per_page: 2, total_pages: 3, total_records: 5 } });
    const page2 = await listItems(client, { limit: 2, page: 2 });
    expect(names(page2)).toEqual(["banana", "Cherry"]);
    const page3 = await listItems(client, { limit: 2, page: 3 });
    expect(names(page3)).toEqual(["date"]);
    expect(page3.body).toMatchObject({ has_more: false, pagination: { page: 3, per_page: 2, total_pages: 3, total_records: 5 } });
    const past = await listItems(client, { limit: 2, page: 4 });
    expect(past.body.data).toEqual([]);
    expect(past.body).toMatchObject({ url: LIST_URL, has_more: false, pagination: { page: 4, per_page: 2, total_records: 5 } });
    const capped = await listItems(client, { limit: 1000 });
    expect(capped.body.pagination.per_page).toBe(100);
    // Any integer is normalised, however large (spec part 1, section 8); a page past 15 digits is that last page (empty).
    const huge = await listItems(client, { limit: "9999999999", page: "99999999999999" });
    expect(huge.status).toBe(200);
    expect(huge.body).toMatchObject({ data: [], has_more: false, pagination: { page: 99999999999999, per_page: 100, total_records: 5 } });
    expect((await listItems(client, { limit: "-9999999999" })).body.pagination.per_page).toBe(1);
    const longer = await listItems(client, { limit: "1".repeat(21), page: "9".repeat(20) });
    expect(longer.status, longer.text).toBe(200);
    expect(longer.body).toMatchObject({ data: [], has_more: false, pagination: { page: 999_999_999_999_999, per_page: 100, total_records: 5 } });
    const below = await listItems(client, { limit: `-${"9".repeat(20)}`, page: `-${"9".repeat(20)}` });
    expect(below.body).toMatchObject({ pagination: { page: 1, per_page: 1, total_records: 5 } });
    expect(names(below)).toEqual(["Apple"]);
    expectError(await client.get("/items", { limit: "1".repeat(101) }), 422, "invalid_query_parameter", "limit");
    expectError(await client.get("/items", { page: "2.0" }), 422, "invalid_query_parameter", "page");
  });

  it('orders a name before a longer name it is a prefix of ("Apple" before "apple pie")', async () => {
    const { client } = await setup();
    for (const name of ["apple pie", "Apple", "banana"]) await createItem(client, { name });
    // The search path and the plain list must agree on name order.
    expect(names(await listItems(client, { q: "a" }))).toEqual(["Apple", "apple pie", "banana"]);
    expect(names(await listItems(client))).toEqual(["Apple", "apple pie", "banana"]);
  });

  it("q matches name and SKU substrings case-insensitively, and a number also matches the exact item_number", async () => {
    const { client } = await setup();
    await createItem(client, { name: "Red Hammer", sku: "TOOL-A" }); // 1
    await createItem(client, { name: "Blue Wrench", sku: "tool-b" }); // 2
    await createItem(client, { name: "Green hammer head", sku: "PART-C" }); // 3
    await createItem(client, { name: "Nail", sku: "FIX-D" }); // 4

    expect(names(await listItems(client, { q: "HAMMER" }))).toEqual(["Green hammer head", "Red Hammer"]);
    expect(names(await listItems(client, { q: "ool-" }))).toEqual(["Blue Wrench", "Red Hammer"]);
    expect(names(await listItems(client, { q: "wrench" }))).toEqual(["Blue Wrench"]);
    const byNumber = await listItems(client, { q: "3" });
    expect(names(byNumber)).toEqual(["Green hammer head"]);
    expect(byNumber.body.pagination.total_records).toBe(1);
    const none = await listItems(client, { q: "zzz" });
    expect(none.body.data).toEqual([]);
    expect(none.body.pagination.total_records).toBe(0);
    const paged = await listItems(client, { q: "e", limit: 1, page: 2 });
    expect(paged.body.pagination).toMatchObject({ page: 2, per_page: 1, total_records: 3 });
    expect(names(paged)).toEqual(["Green hammer head"]);
  });

  it("category_id narrows to that category; a non-UUID is 422 invalid_query_parameter", async () => {
    const { client } = await setup();
    const tools = await createCategory(client, { name: "Tools" });
    const paint = await createCategory(client, { name: "Paint" });
    await createItem(client, { name: "Saw", category_id: tools.id });
    await createItem(client, { name: "Drill", category_id: tools.id });
    await createItem(client, { name: "Primer", category_id: paint.id });
    await createItem(client, { name: "Loose" });

    const narrowed = await listItems(client, { category_id: tools.id });
    expect(names(narrowed)).toEqual(["Drill", "Saw"]);
    expect(narrowed.body.pagination.total_records).toBe(2);
    expect(names(await listItems(client, { category_id: tools.id, q: "saw" }))).toEqual(["Saw"]);
    // An id that names no category of the account is refused (spec part 1, section 2.1), not an empty list.
    expectError(await client.get("/items", { category_id: randomUUID() }), 422, "invalid_query_parameter", "category_id");
    expectError(await client.get("/items", { category_id: "tools" }), 422, "invalid_query_parameter", "category_id");
  });

  it("location_id adds location_inventory for items with stock there and null for the others", async () => {
    const { client } = await setup();
    const l1 = await createLocation(client, "Front");
    const l2 = await createLocation(client, "Back");
    const stocked = await createItem(client, { name: "Stocked", threshold: 4 });
    const elsewhere = await createItem(client, { name: "Elsewhere" });
    const none = await createItem(client, { name: "None" });
    await adjust(client, stocked.id, { location_id: l1, quantity: 6 });
    await adjust(client, stocked.id, { location_id: l2, quantity: 1 });
    await adjust(client, elsewhere.id, { location_id: l2, quantity: 9 });

    const list = await listItems(client, { location_id: l1 });
    const byName = new Map<string, Item>(list.body.data.map((item: Item) => [item.name, item]));
    const inventory = byName.get("Stocked")!.location_inventory;
    expect(Object.keys(inventory)).toEqual(LOCATION_INVENTORY_KEYS);
    expect(inventory).toEqual({ location_id: l1, quantity: 6, quantity_reserved: 0, quantity_available: 6, quantity_incoming: 0, threshold: 4 });
    expect(byName.get("Stocked")!.quantity).toBe(7);
    expect(byName.get("Elsewhere")!.location_inventory).toBeNull();
    expect(byName.get("None")!.location_inventory).toBeNull();
    expect(none.location_inventory).toBeNull();

    const plain = await listItems(client);
    for (const item of plain.body.data) expect(item.location_inventory).toBeNull();
    const byIds = await listItems(client, { ids: elsewhere.id, location_id: l2 });
    expect(byIds.body.data[0].location_inventory).toMatchObject({ location_id: l2, quantity: 9 });
    // A location of no account, or of another one, is refused (spec part 1, section 2.1).
    const { client: stranger } = await setup();
    const theirs = await createLocation(stranger, "Theirs");
    for (const location_id of [randomUUID(), theirs]) {
      expectError(await client.get("/items", { location_id }), 422, "invalid_query_parameter", "location_id");
    }
  });

  it("without location_id, location_inventory is the stock at the item's own location_id (architecture 4), when the caller may see it", async () => {
    const { account, client } = await setup();
    const l1 = await createLocation(client, "Home");
    const l2 = await createLocation(client, "Away");
    const homed = await createItem(client, { name: "Homed", location_id: l1, threshold: 2 });
    expect(homed.location_inventory).toBeNull(); // no stock row there yet
    await adjust(client, homed.id, { location_id: l1, quantity: 10 });
    await adjust(client, homed.id, { location_id: l2, quantity: 3 });
    const read = (await client.get(`/items/${homed.id}`)).body;
    expect(read.location_inventory).toEqual({
      location_id: l1,
      quantity: 10,
      quantity_reserved: 0,
      quantity_available: 10,
      quantity_incoming: 0,
      threshold: 2,
    });
    expect((await listItems(client)).body.data.find((item: Item) => item.id === homed.id).location_inventory).toMatchObject({ location_id: l1, quantity: 10 });
    // The list's location_id chooses another location's stock.
    expect((await listItems(client, { location_id: l2 })).body.data.find((item: Item) => item.id === homed.id).location_inventory).toMatchObject({
      location_id: l2,
      quantity: 3,
    });
    // A user restricted to another location does not see the item's location's stock.
    const away = api().withKey((await newUser(account, { permissions: ["inventory.list"], locationId: l2 })).key);
    const seen = (await away.get(`/items/${homed.id}`)).body;
    expect(seen).toMatchObject({ location_id: l1, quantity: 3, location_inventory: null });
  });
});

describe("GET /items?ids=", () => {
  it("returns every existing requested item (archived too) in one response whatever limit says, ordered by name", async () => {
    const { client } = await setup();
    const other = await setup();
    const zeta = await createItem(client, { name: "Zeta" });
    const alpha = await createItem(client, { name: "alpha" });
    const mid = await createItem(client, { name: "Mid" });
    const gone = await createItem(client, { name: "Gone" });
    await createItem(client, { name: "Not requested" });
    const foreign = await createItem(other.client, { name: "Foreign" });
    expect((await client.patch(`/items/${mid.id}`, { archived: true })).status).toBe(200);
    expect((await del(client, `/items/${gone.id}`)).status).toBe(200);

    const requested = [zeta.id, gone.id, alpha.id, randomUUID(), mid.id, foreign.id];
    const response = await listItems(client, { ids: requested.join(","), limit: 1 });
    expect(names(response)).toEqual(["alpha", "Mid", "Zeta"]);
    expect(response.body.data[1]).toMatchObject({ archived: true, status_id: 3 });
    expect(response.body).toMatchObject({
      object: "list",
      url: LIST_URL,
      has_more: false,
      pagination: { page: 1, per_page: 6, total_records: 3 },
    });
    for (const item of response.body.data) expect(Object.keys(item)).toEqual(ITEM_KEYS);

    const single = await listItems(client, { ids: alpha.id.toUpperCase() });
    expect(names(single)).toEqual(["alpha"]);
    expectError(await client.get(`/items/${foreign.id}`), 404, "resource_missing");
    const nothing = await listItems(client, { ids: `${gone.id},${foreign.id}` });
    expect(nothing.body.data).toEqual([]);
    expect(nothing.body.pagination).toMatchObject({ per_page: 2, total_records: 0 });
  });

  it("refuses more than 50 ids or a non-UUID with 422 invalid_query_parameter on ids", async () => {
    const { client } = await setup();
    const fifty = Array.from({ length: 50 }, () => randomUUID());
    const ok = await listItems(client, { ids: fifty.join(",") });
    expect(ok.body.data).toEqual([]);
    expect(ok.body.pagination.per_page).toBe(50);
    expectError(await client.get("/items", { ids: [...fifty, randomUUID()].join(",") }), 422, "invalid_query_parameter", "ids");
    expectError(await client.get("/items", { ids: `${randomUUID()},not-a-uuid` }), 422, "invalid_query_parameter", "ids");
    expectError(await client.get("/items", { ids: "42" }), 422, "invalid_query_parameter", "ids");
  });
});

describe("permissions and scopes", () => {
  it("reads need inventory.list, writes need inventory.modify, and a key without items:write gets insufficient_scope", async () => {
    const { account, client } = await setup();
    const item = await createItem(client, { name: "Guarded" });

    const nobody = api().withKey((await newUser(account, { permissions: ["costs.view"] })).key);
    expectError(await nobody.get("/items"), 403, "permission_denied");
    expectError(await nobody.get(`/items/${item.id}`), 403, "permission_denied");
    expectError(await nobody.get(`/items/${item.id}/variations`), 403, "permission_denied");
    expectError(await nobody.get("/units"), 403, "permission_denied");

    const reader = api().withKey((await newUser(account, { permissions: ["inventory.list", "costs.view"] })).key);
    expect((await reader.get("/items")).status).toBe(200);
    expect((await reader.get(`/items/${item.id}`)).body.cost).toBeNull();
    expectError(await reader.post("/items", { name: "No" }), 403, "permission_denied");
    expectError(await reader.patch(`/items/${item.id}`, { name: "No" }), 403, "permission_denied");
    expectError(await del(reader, `/items/${item.id}`), 403, "permission_denied");

    const readOnlyKey = api().withKey((await newKey(account.ownerUserId, { scopes: ["items:read"] })).key);
    expect((await readOnlyKey.get(`/items/${item.id}`)).status).toBe(200);
    expectError(await readOnlyKey.post("/items", { name: "No" }), 403, "insufficient_scope", "items:write");
    expectError(await readOnlyKey.patch(`/items/${item.id}`, { name: "No" }), 403, "insufficient_scope", "items:write");

    expect(await getItem(client, item.id)).toMatchObject({ name: "Guarded" });
    expect((await listItems(client)).body.pagination.total_records).toBe(1);
  });

  it("a location-restricted user sees quantities and stock rows of its own location only", async () => {
    const { account, client } = await setup();
    const l1 = await createLocation(client, "Own");
    const l2 = await createLocation(client, "Other");
    const item = await createItem(client, { name: "Split" });
    const own = await adjust(client, item.id, { location_id: l1, quantity: 5 });
    await adjust(client, item.id, { location_id: l2, quantity: 7 });
    expect((await getItem(client, item.id)).quantity).toBe(12);

    const restricted = api().withKey((await newUser(account, { permissions: ["inventory.list"], locationId: l1 })).key);
    const read = await restricted.get(`/items/${item.id}`);
    expect(read.status, read.text).toBe(200);
    expect(read.body).toMatchObject({ quantity: 5, quantity_available: 5 });
    const list = await listItems(restricted);
    expect(list.body.data[0]).toMatchObject({ id: item.id, quantity: 5 });
    const byIds = await listItems(restricted, { ids: item.id });
    expect(byIds.body.data[0].quantity).toBe(5);

    const rows = await variations(restricted, item.id, { include: "locations" });
    const [variation] = rows.body.data;
    expect(variation).toMatchObject({ quantity: 5, location_count: 1 });
    expect(variation.locations).toHaveLength(1);
    expect(variation.locations[0]).toMatchObject({ location_id: l1, quantity: 5, item_variation_location_id: own.item_variation_location_id });
  });

  it("a location-restricted user gives an item only its own location (422 on location_id); a stored one sent back is kept", async () => {
    const { account, client } = await setup();
    const l1 = await createLocation(client, "Own");
    const l2 = await createLocation(client, "Other");
    const restricted = api().withKey((await newUser(account, { permissions: ["inventory.list", "inventory.modify"], locationId: l1 })).key);
    expectValidation(await restricted.post("/items", { name: "Elsewhere", location_id: l2 }), "location_id");
    expect((await listItems(client)).body.pagination.total_records).toBe(0);
    const mine = await restricted.post("/items", { name: "Mine", location_id: l1 });
    expect(mine.status, mine.text).toBe(201);
    expectValidation(await restricted.patch(`/items/${mine.body.id}`, { location_id: l2 }), "location_id");
    const theirs = await createItem(client, { name: "Theirs", location_id: l2 });
    const kept = await restricted.patch(`/items/${theirs.id}`, { location_id: l2, name: "Theirs too" });
    expect(kept.status, kept.text).toBe(200);
    expect(kept.body).toMatchObject({ location_id: l2, name: "Theirs too" });
    expect((await getItem(client, mine.body.id)).location_id).toBe(l1);
  });
});

/* ---------------------------------------------------------------------------------------- */

describe("admin CLI: unit, item and kit create", () => {
  it("creates a unit, an item and a kit, and refuses kits with unknown components or containing themselves", { timeout: scaled(60_000) }, async () => {
    const { account, client } = await setup();
    const kitItem = await createItem(client, { name: "Kit" });
    const a = await createItem(client, { name: "Part A" });
    const b = await createItem(client, { name: "Part B" });
    const id = account.accountId;

    const [unit, item, kit, unknownComponent, selfComponent] = await Promise.all([
      cli("unit", "create", "--account", id, "--name", "Box", "--json"),
      cli("item", "create", "--account", id, "--name", "CLI widget", "--sku", "CLI-1", "--price", "9.5", "--json"),
      cli("kit", "create", "--account", id, "--item", kitItem.id, "--components", `${a.id}:2,${b.id}:1`, "--json"),
      cli("kit", "create", "--account", id, "--item", kitItem.id, "--components", `${a.id}:2,${randomUUID()}:1`, "--json"),
      cli("kit", "create", "--account", id, "--item", kitItem.id, "--components", `${a.id}:1,${kitItem.id}:1`, "--json"),
    ]);

    expect(succeeded(unit)).toEqual({ unit_id: 1 });
    const units = await client.get("/units");
    expect(units.body.data).toEqual([{ object: "unit", unit_id: 1, name: "Box" }]);

    const createdItem = succeeded(item);
    expect(Object.keys(createdItem)).toEqual(["item_id"]);
    expect(createdItem.item_id).toMatch(UUID);
    const read = await getItem(client, createdItem.item_id);
    expect(read).toMatchObject({ name: "CLI widget", sku: "CLI-1", price: "9.5000", item_number: 4, variation_count: 1 });

    const createdKit = succeeded(kit);
    expect(Object.keys(createdKit)).toEqual(["kit_id"]);
    expect(createdKit.kit_id).toMatch(UUID);

    failed(unknownComponent);
    failed(selfComponent);
  });
});
