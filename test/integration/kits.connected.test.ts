import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { useApiServer, type ApiClient, type TestResponse } from "../support/api.js";
import { deactivateLocation, idempotencyKey, newAccount, newUser, type TestAccount } from "../support/fixtures.js";
import { expectError, expectValidation } from "../support/assertions.js";
import { cli, failed, succeeded } from "../support/cli.js";
import { createKit } from "../../lib/domain/admin/service.js";
import { db } from "../../lib/db/service.js";
import { readHead } from "../../lib/db/sync.js";
import { tableName } from "../../lib/db/table.js";
import { handler as streamHandler } from "../../functions/stream-processor/handler.js";
import { startStreamPoller } from "../../scripts/local/stream-poller.js";
import { scaled } from "../support/timeouts.js";
import { readItemTree } from "../../lib/db/inventory.js";
import { writeTransaction } from "../../lib/db/transactions.js";
import { holdStock } from "../../lib/domain/inventory/stock-holds.js";
import { foldHold, releaseHold } from "../../lib/domain/inventory/settling.js";

/**
 * Kits through HTTP against DynamoDB Local (spec part 2, sections 2.7, 3.7 and 4.7;
 * architecture section 8, "Kit builds"): the kit list, a kit with its components, build
 * history, assembly (nested automatic kits, valuation, the ledger) and disassembly, with the
 * stock asserted after every build, refusal and disassembly.
 */
const api = useApiServer();

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;
const KIT_KEYS = [
  "id",
  "object",
  "kit_number",
  "item_id",
  "item_number",
  "name",
  "description",
  "sku",
  "barcode",
  "category_id",
  "category_name",
  "quantity",
  "pieces",
  "assembly_method",
  "build_count",
  "last_built_at",
  "created_at",
  "updated_at",
];
const COMPONENT_KEYS = ["id", "object", "item_id", "item_variation_id", "name", "sku", "barcode", "quantity", "position"];
const BUILD_KEYS = ["id", "object", "kit_id", "location", "quantity", "assembly_method", "parent_kit", "user", "created_at"];

interface Setup {
  account: TestAccount;
  client: ApiClient;
  location: string;
}

async function setup(): Promise<Setup> {
  const account = await newAccount();
  const client = api().withKey(account.ownerKey);
  return { account, client, location: await createLocation(client) };
}

async function createLocation(client: ApiClient, name = `Loc ${randomUUID().slice(0, 8)}`): Promise<string> {
  const response = await client.post("/locations", { name, short_name: name.slice(0, 25) }, { idempotencyKey: idempotencyKey() });
  expect(response.status, response.text).toBe(201);
  return response.body.id as string;
}

async function createItem(client: ApiClient, body: Record<string, unknown> = {}): Promise<Record<string, any> & { id: string }> {
  const response = await client.post("/items", { name: `Item ${randomUUID().slice(0, 8)}`, ...body });
  expect(response.status, response.text).toBe(201);
  return response.body;
}

async function stock(client: ApiClient, itemId: string, locationId: string, quantity: number, variationId?: string) {
  const response = await client.post(`/items/${itemId}/adjustments`, { location_id: locationId, quantity, item_variation_id: variationId });
  expect(response.status, response.text).toBe(201);
}

/** On hand of each item at a location, as the API shows it. */
async function onHandAt(client: ApiClient, itemIds: string[], locationId: string): Promise<Record<string, number>> {
  const response = await client.get("/items", { ids: itemIds.join(","), location_id: locationId });
  expect(response.status, response.text).toBe(200);
  return Object.fromEntries(itemIds.map((id) => [id, response.body.data.find((i: any) => i.id === id)?.location_inventory?.quantity ?? 0]));
}

async function defineKit(account: TestAccount, itemId: string, components: [string, number, string?][], method: "manual" | "automatic" = "manual") {
  const { kit_id } = await createKit({
    accountId: account.accountId,
    itemId,
    method,
    components: components.map(([componentId, quantity, variationId]) => ({ itemId: componentId, quantity, ...(variationId ? { variationId } : {}) })),
  });
  return kit_id;
}

const build = (client: ApiClient, kitId: string, body: Record<string, unknown>, options = {}) => client.post(`/kits/${kitId}/builds`, body, options);
const disassemble = (client: ApiClient, kitId: string, buildId: string) => client.request("DELETE", `/kits/${kitId}/builds/${buildId}`);

/** A kit of 25 one-unit components (more stock changes than one transaction holds), each stocked `each` at the location. */
async function bigKit(each: number) {
  const s = await setup();
  const parts = await Promise.all(Array.from({ length: 25 }, (_, i) => createItem(s.client, { name: `Part ${i}`, cost: "1.0000" })));
  for (const part of parts) await stock(s.client, part.id, s.location, each);
  const box = await createItem(s.client, { name: "Big kit" });
  const kitId = await defineKit(
    s.account,
    box.id,
    parts.map((p) => [p.id, 1] as [string, number]),
  );
  return { s, parts, box, kitId };
}

async function buildOk(client: ApiClient, kitId: string, body: Record<string, unknown>) {
  const response = await build(client, kitId, body);
  expect(response.status, response.text).toBe(201);
  return response.body as Record<string, any>;
}

async function getKit(client: ApiClient, kitId: string) {
  const response = await client.get(`/kits/${kitId}`);
  expect(response.status, response.text).toBe(200);
  return response.body as Record<string, any>;
}

async function builds(client: ApiClient, kitId: string, query: Record<string, string | number> = { limit: 100 }) {
  const response = await client.get(`/kits/${kitId}/builds`, query);
  expect(response.status, response.text).toBe(200);
  return response.body as { data: Record<string, any>[]; has_more: boolean; pagination: Record<string, number>; url: string; object: string };
}

async function history(accountId: string, itemId: string, sourceType: string) {
  const { data } = await db().entities.stockHistory.query.primary({ accountId, itemId, sourceType }).go({ pages: "all", consistent: true });
  return data;
}

async function storedItem(accountId: string, itemId: string) {
  const { data } = await db().entities.item.get({ accountId, itemId }).go({ consistent: true });
  return data!;
}

async function storedRows(accountId: string, itemId: string) {
  const { data } = await db().entities.stockRow.query.primary({ accountId, itemId }).go({ pages: "all", consistent: true });
  return data;
}

function statuses(responses: TestResponse[]): Record<number, number> {
  const counts: Record<number, number> = {};
  for (const r of responses) counts[r.status] = (counts[r.status] ?? 0) + 1;
  return counts;
}

/** A "cable kit": box + 2 cables + 1 plug, with stock and costs. */
async function cableKit(s: Setup, options: { cables?: number; plugs?: number; method?: "manual" | "automatic" } = {}) {
  const box = await createItem(s.client, { name: `Cable Kit ${randomUUID().slice(0, 6)}`, sku: `KIT-${randomUUID().slice(0, 6)}`, cost: "1.0000" });
  const cable = await createItem(s.client, { name: "USB Cable", sku: `CAB-${randomUUID().slice(0, 6)}`, cost: "4.2000" });
  const plug = await createItem(s.client, { name: "Plug", cost: "0.5000" });
  if ((options.cables ?? 10) > 0) await stock(s.client, cable.id, s.location, options.cables ?? 10);
  if ((options.plugs ?? 10) > 0) await stock(s.client, plug.id, s.location, options.plugs ?? 10);
  const kitId = await defineKit(
    s.account,
    box.id,
    [
      [cable.id, 2],
      [plug.id, 1],
    ],
    options.method,
  );
  return { box, cable, plug, kitId };
}

describe("GET /kits and GET /kits/{kit_id}", () => {
  it("lists active kits by kit number with the kit shape; q (name, SKU, kit number) and assembly_method filter", async () => {
    const s = await setup();
    const category = await s.client.post("/item-categories", { name: "Kits", inventory_type: "quantity" });
    expect(category.status, category.text).toBe(201);
    const parts = await createItem(s.client, { name: "Part" });
    const alpha = await createItem(s.client, { name: "Zeta Starter", sku: "ZS-1", description: "A starter", barcode: "0123", category_id: category.body.id });
    const beta = await createItem(s.client, { name: "Alpha Deluxe", sku: "AD-9" });
    const gamma = await createItem(s.client, { name: "Gamma Pack", sku: "GP-3" });
    const k1 = await defineKit(s.account, alpha.id, [[parts.id, 2]]);
    const k2 = await defineKit(s.account, beta.id, [[parts.id, 1]], "automatic");
    const k3 = await defineKit(s.account, gamma.id, [[parts.id, 3]]);
    await stock(s.client, alpha.id, s.location, 4);

    const list = await s.client.get("/kits");
    expect(list.status, list.text).toBe(200);
    expect(list.body.object).toBe("list");
    expect(list.body.url).toBe("/api/v3/kits");
    expect(list.body.pagination).toEqual({ page: 1, per_page: 20, total_pages: 1, total_records: 3 });
    // By kit number, not by name.
    expect(list.body.data.map((k: any) => [k.id, k.kit_number])).toEqual([
      [k1, 1],
      [k2, 2],
      [k3, 3],
    ]);
    const first = list.body.data[0];
    expect(Object.keys(first)).toEqual(KIT_KEYS);
    expect(first).toEqual({
      id: k1,
      object: "kit",
      kit_number: 1,
      item_id: alpha.id,
      item_number: alpha.item_number,
      name: "Zeta Starter",
      description: "A starter",
      sku: "ZS-1",
      barcode: "0123",
      category_id: category.body.id,
      category_name: "Kits",
      quantity: 4,
      pieces: 1,
      assembly_method: "manual",
      build_count: 0,
      last_built_at: null,
      created_at: expect.stringMatching(ISO),
      updated_at: expect.stringMatching(ISO),
    });
    expect(list.body.data[1]).toMatchObject({
      assembly_method: "automatic",
      quantity: 0,
      category_id: null,
      category_name: null,
      description: null,
      barcode: null,
    });

    const q = async (query: Record<string, string>) => (await s.client.get("/kits", query)).body.data.map((k: any) => k.id);
    expect(await q({ q: "deluxe" })).toEqual([k2]);
    expect(await q({ q: "gp-" })).toEqual([k3]);
    expect(await q({ q: "3" })).toEqual([k3]); // kit number 3 (and the SKU GP-3)
    expect(await q({ q: "1" })).toEqual([k1]); // kit number 1 (ZS-1 too)
    expect(await q({ q: "2" })).toEqual([k2]); // kit number 2
    expect(await q({ assembly_method: "automatic" })).toEqual([k2]);
    expect(await q({ assembly_method: "manual" })).toEqual([k1, k3]);
    expect(await q({ q: "nothing" })).toEqual([]);
    const bad = await s.client.get("/kits", { assembly_method: "robotic" });
    expectError(bad, 422, "invalid_query_parameter", "assembly_method");

    const page2 = await s.client.get("/kits", { limit: 2, page: 2 });
    expect(page2.body.data.map((k: any) => k.id)).toEqual([k3]);
    expect(page2.body.has_more).toBe(false);
    expect(page2.body.pagination).toEqual({ page: 2, per_page: 2, total_pages: 2, total_records: 3 });

    // An archived assembled item hides its kit (list and retrieve); restoring brings it back.
    expect((await s.client.patch(`/items/${beta.id}`, { archived: true })).status).toBe(200);
    expect(await q({})).toEqual([k1, k3]);
    expect((await s.client.get("/kits")).body.pagination.total_records).toBe(2);
    expectError(await s.client.get(`/kits/${k2}`), 404, "resource_missing");
    expect((await s.client.patch(`/items/${beta.id}`, { archived: false })).status).toBe(200);
    expect(await q({})).toEqual([k1, k2, k3]);

    // Another account sees none of them.
    const other = await setup();
    expect((await other.client.get("/kits")).body.data).toEqual([]);
    expectError(await other.client.get(`/kits/${k1}`), 404, "resource_missing");
    expectError(await s.client.get(`/kits/${randomUUID()}`), 404, "resource_missing");
    expectError(await s.client.get("/kits/not-a-uuid"), 404, "resource_missing");
  });

  it("retrieves a kit with its components ordered by position; a selected variation gives its barcode and SKU", async () => {
    const s = await setup();
    const box = await createItem(s.client, { name: "Gift Box", sku: "GB" });
    const shirt = await createItem(s.client, {
      name: "Shirt",
      sku: "SH",
      barcode: "SH-ITEM",
      variations: [
        { values: { Size: "M" }, sku: "SH-M", barcode: "SH-M-BC" },
        { values: { Size: "L" }, sku: "SH-L" },
      ],
    });
    const card = await createItem(s.client, { name: "Card", sku: "CD", barcode: "CD-BC" });
    const vars = (await s.client.get(`/items/${shirt.id}/variations`)).body.data;
    const kitId = await defineKit(s.account, box.id, [
      [card.id, 1],
      [shirt.id, 2, vars[0].id],
    ]);
    const kit = await getKit(s.client, kitId);
    expect(Object.keys(kit)).toEqual([...KIT_KEYS, "components"]);
    expect(kit.pieces).toBe(2);
    expect(kit.components.map((c: any) => Object.keys(c))).toEqual([COMPONENT_KEYS, COMPONENT_KEYS]);
    expect(kit.components).toEqual([
      {
        id: expect.any(String),
        object: "kit_component",
        item_id: card.id,
        item_variation_id: null,
        name: "Card",
        sku: "CD",
        barcode: "CD-BC",
        quantity: 1,
        position: 1,
      },
      {
        id: expect.any(String),
        object: "kit_component",
        item_id: shirt.id,
        item_variation_id: vars[0].id,
        name: "Shirt",
        sku: "SH-M",
        barcode: "SH-M-BC",
        quantity: 2,
        position: 2,
      },
    ]);
    expect(new Set(kit.components.map((c: any) => c.id)).size).toBe(2);
    expect(JSON.stringify(kit)).not.toMatch(/cost|price/);
  });

  it("reads need kits:read and the inventory-list permission", async () => {
    const s = await setup();
    const { kitId } = await cableKit(s);
    const noPermission = await newUser(s.account, { permissions: [] });
    const noScope = await newUser(s.account, { permissions: ["inventory.list"], scopes: ["items:read"] });
    for (const path of ["/kits", `/kits/${kitId}`, `/kits/${kitId}/builds`]) {
      expectError(await api().withKey(noPermission.key).get(path), 403, "permission_denied");
      expectError(await api().withKey(noScope.key).get(path), 403, "insufficient_scope", "kits:read");
    }
    const reader = await newUser(s.account, { permissions: ["inventory.list"], scopes: ["kits:read"] });
    expect((await api().withKey(reader.key).get(`/kits/${kitId}`)).status).toBe(200);
  });
});

describe("POST /kits/{kit_id}/builds", () => {
  it("assembles: 201 kit_build; components consumed and the assembled item added at the location through the ledger, with costs", async () => {
    const s = await setup();
    const { box, cable, plug, kitId } = await cableKit(s);
    const other = await createLocation(s.client);
    await stock(s.client, cable.id, other, 3);

    const response = await build(s.client, kitId, { location_id: s.location, quantity: 3 }, { idempotencyKey: idempotencyKey() });
    expect(response.status, response.text).toBe(201);
    const made = response.body;
    expect(Object.keys(made)).toEqual(BUILD_KEYS);
    expect(made).toEqual({
      id: expect.any(String),
      object: "kit_build",
      kit_id: kitId,
      location: { id: s.location, name: expect.any(String) },
      quantity: 3,
      assembly_method: "manual",
      parent_kit: null,
      user: { id: s.account.ownerUserId, name: expect.any(String) },
      created_at: expect.stringMatching(ISO),
    });
    expect(await onHandAt(s.client, [box.id, cable.id, plug.id], s.location)).toEqual({ [box.id]: 3, [cable.id]: 4, [plug.id]: 7 });
    // The other location is untouched.
    expect(await onHandAt(s.client, [box.id, cable.id], other)).toEqual({ [box.id]: 0, [cable.id]: 3 });

    // Ledger: one history entry per change, source kit_build, with unit costs; one transaction.
    const [boxHistory, cableHistory, plugHistory] = await Promise.all([
      history(s.account.accountId, box.id, "kit_build"),
      history(s.account.accountId, cable.id, "kit_build"),
      history(s.account.accountId, plug.id, "kit_build"),
    ]);
    expect(cableHistory.map((e) => [e.onHandDelta, e.onHandAfter, e.unitCost, e.sourceId, e.userId])).toEqual([
      [-6, 4, "4.2000", made.id, s.account.ownerUserId],
    ]);
    expect(plugHistory.map((e) => [e.onHandDelta, e.onHandAfter, e.unitCost])).toEqual([[-3, 7, "0.5000"]]);
    // One box = 2 x 4.20 + 1 x 0.50 = 8.90.
    expect(boxHistory.map((e) => [e.onHandDelta, e.onHandAfter, e.unitCost])).toEqual([[3, 3, "8.9000"]]);
    expect(new Set([...boxHistory, ...cableHistory, ...plugHistory].map((e) => e.journalId)).size).toBe(1);
    // The assembled item's moving average: no stock before, so the build's unit cost.
    expect((await storedItem(s.account.accountId, box.id)).averageCost).toBe("8.9000");

    // A second build at a different cost: the moving average follows.
    await s.client.patch(`/items/${plug.id}`, { cost: "2.5000" });
    await buildOk(s.client, kitId, { location_id: s.location, quantity: 1 });
    // 3 at 8.90 + 1 at 10.90 = 9.40
    expect((await storedItem(s.account.accountId, box.id)).averageCost).toBe("9.4000");
    expect(await onHandAt(s.client, [box.id, cable.id, plug.id], s.location)).toEqual({ [box.id]: 4, [cable.id]: 2, [plug.id]: 6 });

    const kit = await getKit(s.client, kitId);
    expect(kit).toMatchObject({ quantity: 4, build_count: 2, last_built_at: expect.stringMatching(ISO) });
    const list = await builds(s.client, kitId);
    expect(list.url).toBe(`/api/v3/kits/${kitId}/builds`);
    expect(list.data).toHaveLength(2);
    expect(list.data[1]).toEqual(made);
    expect(list.pagination.total_records).toBe(2);
  });

  it("prepares the location's rows in the same write: the first stock of the assembled item at a location creates its row", async () => {
    const s = await setup();
    const { box, kitId } = await cableKit(s);
    expect(await storedRows(s.account.accountId, box.id)).toEqual([]);
    await buildOk(s.client, kitId, { location_id: s.location, quantity: 1 });
    const rows = await storedRows(s.account.accountId, box.id);
    expect(rows.map((r) => [r.locationId, r.onHand])).toEqual([[s.location, 1]]);
    const variations = (await s.client.get(`/items/${box.id}/variations`, { include: "locations" })).body.data;
    expect(variations[0].locations[0]).toMatchObject({ location_id: s.location, quantity: 1, item_variation_location_id: rows[0]!.ivlId });
  });

  it("insufficient component stock: 422 invalid_kit_build and nothing changes (no build, no row, no number)", async () => {
    const s = await setup();
    const { box, cable, plug, kitId } = await cableKit(s, { cables: 5, plugs: 10 });
    const before = await onHandAt(s.client, [box.id, cable.id, plug.id], s.location);

    const refused = await build(s.client, kitId, { location_id: s.location, quantity: 3 });
    expectError(refused, 422, "invalid_kit_build", "quantity");
    expect(refused.body.error.message).toContain("6 needed, 5 available");
    expect(await onHandAt(s.client, [box.id, cable.id, plug.id], s.location)).toEqual(before);
    expect(await storedRows(s.account.accountId, box.id)).toEqual([]);
    expect(await history(s.account.accountId, cable.id, "kit_build")).toEqual([]);
    expect((await builds(s.client, kitId)).data).toEqual([]);
    expect((await getKit(s.client, kitId)).build_count).toBe(0);

    // At a location with no stock at all (no rows): the same refusal.
    const empty = await createLocation(s.client);
    expectError(await build(s.client, kitId, { location_id: empty, quantity: 1 }), 422, "invalid_kit_build");
    expect(await storedRows(s.account.accountId, box.id)).toEqual([]);
    expect((await storedRows(s.account.accountId, cable.id)).map((r) => r.locationId)).toEqual([s.location]);

    // Exactly the stock there is: fine, and the build number is the first (nothing was used).
    const ok = await buildOk(s.client, kitId, { location_id: s.location, quantity: 2.5 });
    expect(ok.quantity).toBe(2.5);
    expect(await onHandAt(s.client, [box.id, cable.id, plug.id], s.location)).toEqual({ [box.id]: 2.5, [cable.id]: 0, [plug.id]: 7.5 });
    const { data: stored } = await db().entities.kitBuild.query.primary({ accountId: s.account.accountId, kitId }).go();
    expect(stored.map((b) => b.number)).toEqual([1]);
  });

  it("refuses fields the service sets, bad quantities and bad locations with 422 validation_failed; nothing changes", async () => {
    const s = await setup();
    const { box, cable, plug, kitId } = await cableKit(s);
    const before = await onHandAt(s.client, [box.id, cable.id, plug.id], s.location);
    const base = { location_id: s.location, quantity: 1 };
    for (const field of ["user_id", "automatic", "kit_id", "unit_cost", "parent_kit", "parent_kit_id", "assembly_method"]) {
      expectValidation(await build(s.client, kitId, { ...base, [field]: field === "automatic" ? true : randomUUID() }), field, "unknown_field");
    }
    for (const quantity of [0, -1, 0.00001, "1", 1_000_000_000]) expectValidation(await build(s.client, kitId, { ...base, quantity }), "quantity");
    expectValidation(await build(s.client, kitId, { location_id: s.location }), "quantity");
    expectValidation(await build(s.client, kitId, { quantity: 1 }), "location_id");

    const inactive = await createLocation(s.client);
    await deactivateLocation(s.account.accountId, inactive);
    const foreign = await (await setup()).location;
    for (const locationId of [inactive, foreign, randomUUID()]) {
      expectValidation(await build(s.client, kitId, { location_id: locationId, quantity: 1 }), "location_id", "invalid_reference");
    }
    expect(await onHandAt(s.client, [box.id, cable.id, plug.id], s.location)).toEqual(before);
    expect((await builds(s.client, kitId)).data).toEqual([]);

    // A kit of another account, or none: 404.
    const other = await setup();
    expectError(await build(other.client, kitId, { location_id: other.location, quantity: 1 }), 404, "resource_missing");
    expectError(await build(s.client, randomUUID(), base), 404, "resource_missing");
    expect(await onHandAt(s.client, [box.id, cable.id, plug.id], s.location)).toEqual(before);
  });

  it("a build that would count more of the assembled item than the stock maximum is 422 too_large on quantity, nothing changes", async () => {
    const s = await setup();
    const { box, cable, plug, kitId } = await cableKit(s, { cables: 1000, plugs: 1000 });
    // 100 purchase-order lines of the largest quantity, received: 99999999900 of the box on hand.
    const supplier = await s.client.post("/suppliers", { name: "Bulk" });
    const lines = Array.from({ length: 100 }, () => ({ item_id: box.id, quantity: 999_999_999 }));
    const order = await s.client.post("/purchase-orders", { supplier_id: supplier.body.id, location_id: s.location, lines });
    expect(order.status, order.text).toBe(201);
    expect((await s.client.post(`/purchase-orders/${order.body.id}/send`, {})).status).toBe(200);
    const received = await s.client.post(`/purchase-orders/${order.body.id}/receive`, {
      lines: order.body.lines.map((line: any) => ({ line_id: line.id, quantity: 999_999_999 })),
    });
    expect(received.status, received.text).toBe(200);
    const before = await onHandAt(s.client, [box.id, cable.id, plug.id], s.location);
    expect(before[box.id]).toBe(99_999_999_900);

    const refused = await build(s.client, kitId, { location_id: s.location, quantity: 100 });
    expectValidation(refused, "quantity", "too_large");
    expect(refused.body.error.details[0].message).toContain("99999999999.9999");
    expect(await onHandAt(s.client, [box.id, cable.id, plug.id], s.location)).toEqual(before);
    expect(await history(s.account.accountId, cable.id, "kit_build")).toEqual([]);
    expect((await getKit(s.client, kitId)).build_count).toBe(0);

    // Up to the maximum itself: built.
    expect((await buildOk(s.client, kitId, { location_id: s.location, quantity: 99.9999 })).quantity).toBe(99.9999);
    expect((await onHandAt(s.client, [box.id], s.location))[box.id]).toBe(99_999_999_999.9999);
  });

  it("an invalid definition (archived or deleted component, its own item, a cycle) is 422 invalid_kit_build, nothing changes", async () => {
    const s = await setup();
    const { box, cable, plug, kitId } = await cableKit(s);
    const snapshot = () => onHandAt(s.client, [box.id, cable.id, plug.id], s.location);
    const before = await snapshot();

    expect((await s.client.patch(`/items/${plug.id}`, { archived: true })).status).toBe(200);
    const archived = await build(s.client, kitId, { location_id: s.location, quantity: 1 });
    expectError(archived, 422, "invalid_kit_build", "kit_id");
    expect(archived.body.error.message).toContain("archived");
    expect(await snapshot()).toEqual(before);
    expect((await s.client.patch(`/items/${plug.id}`, { archived: false })).status).toBe(200);

    // A deleted component: the API refuses to delete an item of a kit (422 has_kits, nothing
    // changes); one deleted by an older version is gone from the table all the same.
    const gone = await createItem(s.client, { name: "Vanishing part" });
    const box2 = await createItem(s.client, { name: "Box 2" });
    const kit2 = await defineKit(s.account, box2.id, [
      [cable.id, 1],
      [gone.id, 1],
    ]);
    const refused = await s.client.request("DELETE", `/items/${gone.id}`);
    expectValidation(refused, "kits");
    expect(refused.body.error.details[0].code).toBe("has_kits");
    expectValidation(await s.client.request("DELETE", `/items/${box2.id}`), "kits");
    expect((await s.client.get(`/items/${gone.id}`)).status).toBe(200);
    await db().entities.item.delete({ accountId: s.account.accountId, itemId: gone.id }).go();
    expectError(await build(s.client, kit2, { location_id: s.location, quantity: 1 }), 422, "invalid_kit_build", "kit_id");

    // Definitions the CLI refuses, as stored by an older version or a race: written directly.
    const stored = (await db().entities.kit.get({ accountId: s.account.accountId, kitId }).go()).data!;
    const selfKitId = randomUUID();
    await db()
      .entities.kit.create({
        ...stored,
        kitId: selfKitId,
        number: 90,
        components: [...stored.components, { ...stored.components[0]!, id: randomUUID(), itemId: box.id, variationId: stored.variationId }],
      })
      .go();
    const self = await build(s.client, selfKitId, { location_id: s.location, quantity: 1 });
    expectError(self, 422, "invalid_kit_build", "kit_id");
    expect(self.body.error.message).toContain("its own assembled item");

    // A cycle of automatic kits: A needs B, B needs A.
    const [a, b] = [await createItem(s.client, { name: "A" }), await createItem(s.client, { name: "B" })];
    const kitA = await defineKit(s.account, a.id, [[b.id, 1]], "automatic");
    const kitB = await defineKit(s.account, b.id, [[cable.id, 1]], "automatic");
    const storedB = (await db().entities.kit.get({ accountId: s.account.accountId, kitId: kitB }).go()).data!;
    const aVariation = (await db().entities.kit.get({ accountId: s.account.accountId, kitId: kitA }).go()).data!.variationId!;
    await db()
      .entities.kit.patch({ accountId: s.account.accountId, kitId: kitB })
      .set({ components: [...storedB.components, { id: randomUUID(), itemId: a.id, variationId: aVariation, quantity: 1, position: 2 }] })
      .go();
    const cycle = await build(s.client, kitA, { location_id: s.location, quantity: 1 });
    expectError(cycle, 422, "invalid_kit_build", "kit_id");
    expect(cycle.body.error.message).toContain("cycle");
    expect(await snapshot()).toEqual(before);
    expect(await onHandAt(s.client, [a.id, b.id], s.location)).toEqual({ [a.id]: 0, [b.id]: 0 });
  });

  it("a kit's definition and its item's deletion in flight together never both commit: the kit names live items, or the item is gone and no kit", async () => {
    const s = await setup();
    const outcomes = { kit: 0, deleted: 0 };
    for (let round = 0; round < 6; round++) {
      const part = await createItem(s.client, { name: `Part ${round}` });
      const box = await createItem(s.client, { name: `Box ${round}` });
      const [defined, deletion] = await Promise.allSettled([
        defineKit(s.account, box.id, [[part.id, 1]]),
        s.client.request("DELETE", `/items/${round % 2 === 0 ? part.id : box.id}`),
      ]);
      const deleted = deletion.status === "fulfilled" && deletion.value.status === 200;
      if (deleted) {
        expect(defined.status, "a kit was defined on a deleted item").toBe("rejected");
        outcomes.deleted += 1;
      } else {
        expect(defined.status).toBe("fulfilled");
        if (deletion.status === "fulfilled") expectValidation(deletion.value, "kits");
        const kit = await getKit(s.client, (defined as PromiseFulfilledResult<string>).value);
        expect(kit.components.map((c: { item_id: string; name: string | null }) => [c.item_id, c.name !== null])).toEqual([[part.id, true]]);
        outcomes.kit += 1;
      }
    }
    console.info(`kit definition vs item deletion: ${JSON.stringify(outcomes)}`);
  });

  it("nested automatic kit: the shortfall is assembled first as an automatic build with parent_kit, all in one write", async () => {
    const s = await setup();
    const wire = await createItem(s.client, { name: "Wire", cost: "1.0000" });
    const plugItem = await createItem(s.client, { name: "Plug", cost: "0.2500" });
    const cable = await createItem(s.client, { name: "Cable", cost: "9.0000" });
    const bag = await createItem(s.client, { name: "Bag", cost: "0.1000" });
    const box = await createItem(s.client, { name: "Box" });
    const cableKitId = await defineKit(
      s.account,
      cable.id,
      [
        [wire.id, 2],
        [plugItem.id, 2],
      ],
      "automatic",
    );
    const boxKitId = await defineKit(s.account, box.id, [
      [cable.id, 3],
      [bag.id, 1],
    ]);
    await stock(s.client, wire.id, s.location, 20);
    await stock(s.client, plugItem.id, s.location, 20);
    await stock(s.client, cable.id, s.location, 2);
    await stock(s.client, bag.id, s.location, 5);
    const ids = [wire.id, plugItem.id, cable.id, bag.id, box.id];

    const made = await buildOk(s.client, boxKitId, { location_id: s.location, quantity: 2 });
    // 6 cables needed, 2 on hand: 4 assembled (8 wires, 8 plugs), then all 6 consumed.
    expect(await onHandAt(s.client, ids, s.location)).toEqual({ [wire.id]: 12, [plugItem.id]: 12, [cable.id]: 0, [bag.id]: 3, [box.id]: 2 });
    const nested = await builds(s.client, cableKitId);
    expect(nested.data).toHaveLength(1);
    expect(nested.data[0]).toMatchObject({
      kit_id: cableKitId,
      quantity: 4,
      assembly_method: "automatic",
      parent_kit: { id: boxKitId, kit_number: 2 },
      location: { id: s.location },
    });
    expect((await builds(s.client, boxKitId)).data.map((b) => b.id)).toEqual([made.id]);
    expect(made.parent_kit).toBeNull();
    // One transaction: every history entry of both builds carries the same journal id.
    const entries = (await Promise.all(ids.map((id) => history(s.account.accountId, id, "kit_build")))).flat();
    expect(entries).toHaveLength(6); // wire -8, plug -8, cable +4, cable -6, bag -2, box +2
    expect(new Set(entries.map((e) => e.journalId)).size).toBe(1);
    // Valuation: a cable built = 2 x 1 + 2 x 0.25 = 2.50; cable average (2 x 9 + 4 x 2.5) / 6 = 4.6667;
    // a box = 3 x 4.6667 + 0.10 = 14.1001.
    expect((await storedItem(s.account.accountId, cable.id)).averageCost).toBe("4.6667");
    expect((await storedItem(s.account.accountId, box.id)).averageCost).toBe("14.1001");
    expect((await getKit(s.client, cableKitId)).build_count).toBe(1);

    // Enough cables now? none: the next build assembles 6 more; not enough wire for 9: refused, nothing changes.
    const before = await onHandAt(s.client, ids, s.location);
    expectError(await build(s.client, boxKitId, { location_id: s.location, quantity: 3 }), 422, "invalid_kit_build");
    expect(await onHandAt(s.client, ids, s.location)).toEqual(before);
    expect((await builds(s.client, cableKitId)).data).toHaveLength(1);
  });

  it("replays a build sent again with the same Idempotency-Key without building twice", async () => {
    const s = await setup();
    const { box, cable, kitId } = await cableKit(s);
    const key = idempotencyKey();
    const first = await build(s.client, kitId, { location_id: s.location, quantity: 1 }, { idempotencyKey: key });
    expect(first.status, first.text).toBe(201);
    const replay = await build(s.client, kitId, { location_id: s.location, quantity: 1 }, { idempotencyKey: key });
    expect(replay.status).toBe(201);
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    expect(replay.body).toEqual(first.body);
    expect(await onHandAt(s.client, [box.id, cable.id], s.location)).toEqual({ [box.id]: 1, [cable.id]: 8 });
    expect((await builds(s.client, kitId)).data).toHaveLength(1);
    expectError(await build(s.client, kitId, { location_id: s.location, quantity: 2 }, { idempotencyKey: key }), 409, "idempotency_key_reused");
  });

  it("builds need kits:build and the inventory-modify permission; a location-restricted user builds only at its location", async () => {
    const s = await setup();
    const { box, kitId } = await cableKit(s);
    const other = await createLocation(s.client);
    const lister = await newUser(s.account, { permissions: ["inventory.list"] });
    const noScope = await newUser(s.account, { permissions: ["inventory.modify", "inventory.list"], scopes: ["kits:read"] });
    expectError(await build(api().withKey(lister.key), kitId, { location_id: s.location, quantity: 1 }), 403, "permission_denied");
    expectError(await build(api().withKey(noScope.key), kitId, { location_id: s.location, quantity: 1 }), 403, "insufficient_scope", "kits:build");
    const restricted = await newUser(s.account, { permissions: ["inventory.modify", "inventory.list"], locationId: s.location });
    expectValidation(await build(api().withKey(restricted.key), kitId, { location_id: other, quantity: 1 }), "location_id");
    expect(await onHandAt(s.client, [box.id], s.location)).toEqual({ [box.id]: 0 });
    const made = await buildOk(api().withKey(restricted.key), kitId, { location_id: s.location, quantity: 1 });
    expect(made.user.id).toBe(restricted.userId);
    expect(await onHandAt(s.client, [box.id], s.location)).toEqual({ [box.id]: 1 });
  });

  it("a kit of 25 components assembles and disassembles exactly (the consumption atomic, the additions held and bound by the build)", {
    timeout: scaled(60_000),
  }, async () => {
    const { s, parts, box, kitId } = await bigKit(2);
    const ids = [box.id, ...parts.map((p) => p.id)];

    const made = await buildOk(s.client, kitId, { location_id: s.location, quantity: 2 });
    const after = await onHandAt(s.client, ids, s.location);
    expect(after[box.id]).toBe(2);
    for (const part of parts) expect(after[part.id]).toBe(0);
    expect((await storedItem(s.account.accountId, box.id)).averageCost).toBe("25.0000");
    const { data: journals } = await db()
      .entities.stockJournal.scan.where(({ accountId }, { eq }) => eq(accountId, s.account.accountId))
      .go({ pages: "all" });
    expect(journals.map((j) => [j.mode, j.status, j.sourceType, j.sourceId])).toEqual([["hold", "applied", "kit_build", made.id]]);

    // Short by one part: refused, nothing changes.
    await stock(s.client, parts[0]!.id, s.location, 1);
    expectError(await build(s.client, kitId, { location_id: s.location, quantity: 1 }), 422, "invalid_kit_build");
    expect((await onHandAt(s.client, ids, s.location))[box.id]).toBe(2);

    const removed = await disassemble(s.client, kitId, made.id);
    expect(removed.status, removed.text).toBe(200);
    const back = await onHandAt(s.client, ids, s.location);
    expect(back[box.id]).toBe(0);
    expect(back[parts[0]!.id]).toBe(3);
    for (const part of parts.slice(1)) expect(back[part.id]).toBe(2);
  });

  it("readers during 25-component builds and disassemblies never see the parts moved without the assembled units (one commit point)", {
    timeout: scaled(120_000),
  }, async () => {
    const { s, parts, box, kitId } = await bigKit(3);
    const part = parts[24]!.id; // the last part: its row is the last the build's transaction writes
    const onHand = async (id: string) => (await onHandAt(s.client, [id], s.location))[id]!;
    // While builds run, a reader that sees parts consumed must then see as many units made; while
    // disassemblies run, one that sees units gone must then see their parts back.
    const watch = async (phase: "build" | "disassemble", work: () => Promise<void>) => {
      let done = false;
      const seen: string[] = [];
      const reader = async () => {
        while (!done) {
          if (phase === "build") {
            const consumed = 3 - (await onHand(part));
            const made = await onHand(box.id);
            if (made < consumed) seen.push(`saw ${consumed} consumed, then ${made} made`);
          } else {
            const made = await onHand(box.id);
            const consumed = 3 - (await onHand(part));
            if (consumed > made) seen.push(`saw ${made} made, then ${consumed} still consumed`);
          }
        }
      };
      const readers = Array.from({ length: 3 }, reader);
      try {
        await work();
      } finally {
        done = true;
        await Promise.all(readers);
      }
      expect(seen, phase).toEqual([]);
    };
    const made: string[] = [];
    await watch("build", async () => {
      for (let i = 0; i < 3; i++) made.push((await buildOk(s.client, kitId, { location_id: s.location, quantity: 1 })).id);
    });
    expect(await onHand(box.id)).toBe(3);
    await watch("disassemble", async () => {
      for (const id of made) expect((await disassemble(s.client, kitId, id)).status).toBe(200);
    });
    expect(await onHandAt(s.client, [box.id, part], s.location)).toEqual({ [box.id]: 0, [part]: 3 });
    const { data: journals } = await db()
      .entities.stockJournal.scan.where(({ accountId }, { eq }) => eq(accountId, s.account.accountId))
      .go({ pages: "all" });
    expect(journals.map((j) => `${j.mode} ${j.status} ${j.sourceType}`).sort()).toEqual([
      ...Array(3).fill("hold applied kit_build"),
      ...Array(3).fill("hold applied kit_disassembly"),
    ]);
  });
});

describe("assembly under concurrency", () => {
  it("20 parallel builds against stock for exactly 5: exactly 5 succeed, the rest 422 invalid_kit_build, never below zero", {
    timeout: scaled(60_000),
  }, async () => {
    const s = await setup();
    const { box, cable, plug, kitId } = await cableKit(s, { cables: 10, plugs: 5 });
    const responses = await Promise.all(Array.from({ length: 20 }, () => build(s.client, kitId, { location_id: s.location, quantity: 1 })));
    expect(responses.filter((r) => r.status !== 201 && r.status !== 422).map((r) => `${r.status} ${r.text}`)).toEqual([]);
    expect(statuses(responses)).toEqual({ 201: 5, 422: 15 });
    for (const refused of responses.filter((r) => r.status === 422)) expectError(refused, 422, "invalid_kit_build");
    expect(await onHandAt(s.client, [box.id, cable.id, plug.id], s.location)).toEqual({ [box.id]: 5, [cable.id]: 0, [plug.id]: 0 });
    // Every balance the ledger wrote was at or above zero, and each step saw the one before.
    const entries = [...(await history(s.account.accountId, cable.id, "kit_build")), ...(await history(s.account.accountId, plug.id, "kit_build"))];
    expect(entries).toHaveLength(10);
    expect(entries.every((e) => e.onHandAfter >= 0)).toBe(true);
    expect((await history(s.account.accountId, cable.id, "kit_build")).map((e) => e.onHandAfter).sort((a, b) => a - b)).toEqual([0, 2, 4, 6, 8]);
    const list = await builds(s.client, kitId);
    expect(list.data).toHaveLength(5);
    expect(list.pagination.total_records).toBe(5);
    expect((await getKit(s.client, kitId)).build_count).toBe(5);
    // Build numbers: 1..5, no gaps.
    const { data: stored } = await db().entities.kitBuild.query.primary({ accountId: s.account.accountId, kitId }).go();
    expect(stored.map((b) => b.number).sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5]);
  });
});

describe("assembly beside a long document's stock hold", () => {
  it("a build refused only for stock a live hold reserves waits for the hold: released, the build goes ahead (201); had it committed, 422", {
    timeout: scaled(60_000),
  }, async () => {
    const s = await setup();
    const part = await createItem(s.client);
    const kitItem = await createItem(s.client);
    await stock(s.client, part.id, s.location, 10);
    const kitId = await defineKit(s.account, kitItem.id, [[part.id, 2]]);
    const variationId = (await readItemTree(s.account.accountId, part.id)).variations[0]!.variationId;
    const holdOf = (quantity: number) =>
      holdStock({
        accountId: s.account.accountId,
        source: { sourceType: "invoice", reason: "test: a long document's hold" },
        changes: [{ itemId: part.id, variationId, locationId: s.location, deltas: { onHand: -quantity } }],
      });
    // 9 of the 10 units held: a build of 2 meets the reservation and waits ...
    const hold = await holdOf(9);
    const pending = build(s.client, kitId, { location_id: s.location, quantity: 1 });
    await new Promise((resolve) => setTimeout(resolve, 300));
    // ... for the hold to end: released, the stock is there again.
    await releaseHold(s.account.accountId, hold.journalId);
    const built = await pending;
    expect(built.status, built.text).toBe(201);
    expect(await onHandAt(s.client, [part.id], s.location)).toEqual({ [part.id]: 8 });

    // A hold that commits takes the stock: the waiting build is then refused, nothing built.
    const taking = await holdOf(7);
    const refused = build(s.client, kitId, { location_id: s.location, quantity: 1 });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await writeTransaction((tx) => taking.bind(tx))).toBeNull();
    await foldHold(s.account.accountId, taking.journalId);
    expectError(await refused, 422, "invalid_kit_build");
    expect(await onHandAt(s.client, [part.id], s.location)).toEqual({ [part.id]: 1 });
    expect((await getKit(s.client, kitId)).build_count).toBe(1);
  });
});

describe("GET /kits/{kit_id}/builds", () => {
  it("newest first with pagination; location_id narrows; a restricted user sees only its location and cannot widen it", async () => {
    const s = await setup();
    const { box, cable, plug, kitId } = await cableKit(s, { cables: 20, plugs: 20 });
    const second = await createLocation(s.client, "Second");
    await stock(s.client, cable.id, second, 20);
    await stock(s.client, plug.id, second, 20);
    const made: Record<string, any>[] = [];
    for (const [location, quantity] of [
      [s.location, 1],
      [second, 2],
      [s.location, 3],
      [second, 4],
    ] as const) {
      made.push(await buildOk(s.client, kitId, { location_id: location, quantity }));
    }
    const all = await builds(s.client, kitId);
    expect(all.data.map((b) => b.quantity)).toEqual([4, 3, 2, 1]);
    expect(all.data.map((b) => Object.keys(b))).toEqual(all.data.map(() => BUILD_KEYS));
    const page = await builds(s.client, kitId, { limit: 3, page: 2 });
    expect(page.data.map((b) => b.quantity)).toEqual([1]);
    expect(page.pagination).toEqual({ page: 2, per_page: 3, total_pages: 2, total_records: 4 });
    const atSecond = await builds(s.client, kitId, { location_id: second });
    expect(atSecond.data.map((b) => b.quantity)).toEqual([4, 2]);
    expect(atSecond.pagination.total_records).toBe(2);
    expect(atSecond.data[0]!.location).toEqual({ id: second, name: "Second" });

    expectError(await s.client.get(`/kits/${kitId}/builds`, { location_id: "nope" }), 422, "invalid_query_parameter", "location_id");
    expectError(await s.client.get(`/kits/${kitId}/builds`, { location_id: randomUUID() }), 422, "invalid_query_parameter", "location_id");
    const foreign = (await setup()).location;
    expectError(await s.client.get(`/kits/${kitId}/builds`, { location_id: foreign }), 422, "invalid_query_parameter", "location_id");

    const restricted = await newUser(s.account, { permissions: ["inventory.list"], locationId: second });
    const client = api().withKey(restricted.key);
    const own = await builds(client, kitId);
    expect(own.data.map((b) => b.quantity)).toEqual([4, 2]);
    expect(own.pagination.total_records).toBe(2);
    expect((await builds(client, kitId, { location_id: second })).data).toHaveLength(2);
    expectError(await client.get(`/kits/${kitId}/builds`, { location_id: s.location }), 422, "invalid_query_parameter", "location_id");
    // The kit's figures cover the restricted user's location only.
    const seen = (await client.get(`/kits/${kitId}`)).body;
    expect(seen).toMatchObject({ quantity: 6, build_count: 2 });
    expect(await getKit(s.client, kitId)).toMatchObject({ quantity: 10, build_count: 4 });
    void box;

    // A location that is no longer active: the filter is refused, and builds there show a null name.
    await deactivateLocation(s.account.accountId, second);
    expectError(await s.client.get(`/kits/${kitId}/builds`, { location_id: second }), 422, "invalid_query_parameter", "location_id");
    expect((await builds(s.client, kitId)).data[0]!.location).toEqual({ id: second, name: null });
    expectError(await s.client.get(`/kits/${randomUUID()}/builds`), 404, "resource_missing");
  });
});

describe("DELETE /kits/{kit_id}/builds/{build_id}", () => {
  it("reverses the build's stock exactly, removes it from history; a repeat is 404", async () => {
    const s = await setup();
    const { box, cable, plug, kitId } = await cableKit(s);
    const ids = [box.id, cable.id, plug.id];
    const first = await buildOk(s.client, kitId, { location_id: s.location, quantity: 2 });
    const second = await buildOk(s.client, kitId, { location_id: s.location, quantity: 1 });
    expect(await onHandAt(s.client, ids, s.location)).toEqual({ [box.id]: 3, [cable.id]: 4, [plug.id]: 7 });

    const removed = await disassemble(s.client, kitId, first.id);
    expect(removed.status, removed.text).toBe(200);
    expect(removed.body).toEqual({ id: first.id, object: "kit_build", kit_id: kitId, deleted: true });
    expect(Object.keys(removed.body)).toEqual(["id", "object", "kit_id", "deleted"]);
    expect(await onHandAt(s.client, ids, s.location)).toEqual({ [box.id]: 1, [cable.id]: 8, [plug.id]: 9 });
    expect((await builds(s.client, kitId)).data.map((b) => b.id)).toEqual([second.id]);
    expect(await getKit(s.client, kitId)).toMatchObject({ build_count: 1, quantity: 1 });
    // The ledger keeps both: the build's entries and the disassembly's (source kit_disassembly).
    const reversal = await history(s.account.accountId, cable.id, "kit_disassembly");
    expect(reversal.map((e) => [e.onHandDelta, e.onHandAfter, e.unitCost, e.sourceId])).toEqual([[4, 8, "4.2000", first.id]]);
    expect(await history(s.account.accountId, cable.id, "kit_build")).toHaveLength(2);

    expectError(await disassemble(s.client, kitId, first.id), 404, "resource_missing");
    expect(await onHandAt(s.client, ids, s.location)).toEqual({ [box.id]: 1, [cable.id]: 8, [plug.id]: 9 });

    // last_built_at is the newest build left: a third build, disassembled, hands it back to the second; none left, null.
    const third = await buildOk(s.client, kitId, { location_id: s.location, quantity: 1 });
    expect(await getKit(s.client, kitId)).toMatchObject({ build_count: 2, last_built_at: third.created_at });
    expect((await disassemble(s.client, kitId, third.id)).status).toBe(200);
    expect(await getKit(s.client, kitId)).toMatchObject({ build_count: 1, last_built_at: second.created_at });
    expect((await disassemble(s.client, kitId, second.id)).status).toBe(200);
    expect(await getKit(s.client, kitId)).toMatchObject({ build_count: 0, last_built_at: null });
  });

  it("a build after a disassembly costs the components at their current cost (a cost changed since counts; none takes a moving average from the reversal)", async () => {
    const s = await setup();
    const { box, cable, plug, kitId } = await cableKit(s);
    const first = await buildOk(s.client, kitId, { location_id: s.location, quantity: 1 });
    expect((await disassemble(s.client, kitId, first.id)).status).toBe(200);
    expect((await storedItem(s.account.accountId, cable.id)).averageCost).toBeUndefined();
    expect((await storedItem(s.account.accountId, plug.id)).averageCost).toBeUndefined();
    // The cable's cost changes: the next build takes the new cost (2 x 5.00 + 0.50).
    expect((await s.client.patch(`/items/${cable.id}`, { cost: "5.0000" })).status).toBe(200);
    await buildOk(s.client, kitId, { location_id: s.location, quantity: 1 });
    const builds = await history(s.account.accountId, cable.id, "kit_build");
    expect(builds.map((e) => [e.onHandDelta, e.unitCost])).toEqual([
      [-2, "4.2000"],
      [-2, "5.0000"],
    ]);
    const assembled = await history(s.account.accountId, box.id, "kit_build");
    expect(assembled.map((e) => e.unitCost)).toEqual(["8.9000", "10.5000"]);
  });

  it("the build must belong to the kit and account of the path; a restricted user removes only its location's builds", async () => {
    const s = await setup();
    const { box, cable, kitId } = await cableKit(s, { cables: 20, plugs: 20 });
    const other = await cableKit(s);
    const second = await createLocation(s.client);
    await stock(s.client, cable.id, second, 4);
    await stock(s.client, (await getKit(s.client, kitId)).components[1].item_id, second, 4);
    const here = await buildOk(s.client, kitId, { location_id: s.location, quantity: 1 });
    const there = await buildOk(s.client, kitId, { location_id: second, quantity: 1 });
    const snapshot = async () => [await onHandAt(s.client, [box.id, cable.id], s.location), await onHandAt(s.client, [box.id, cable.id], second)];
    const before = await snapshot();

    expectError(await disassemble(s.client, other.kitId, here.id), 404, "resource_missing");
    expectError(await disassemble(s.client, kitId, randomUUID()), 404, "resource_missing");
    const stranger = await setup();
    expectError(await disassemble(stranger.client, kitId, here.id), 404, "resource_missing");
    const restricted = await newUser(s.account, { permissions: ["inventory.modify", "inventory.list"], locationId: second });
    expectError(await disassemble(api().withKey(restricted.key), kitId, here.id), 404, "resource_missing");
    const noPermission = await newUser(s.account, { permissions: ["inventory.list"] });
    expectError(await disassemble(api().withKey(noPermission.key), kitId, here.id), 403, "permission_denied");
    const noScope = await newUser(s.account, { permissions: ["inventory.modify"], scopes: ["kits:build"] });
    expectError(await disassemble(api().withKey(noScope.key), kitId, here.id), 403, "insufficient_scope", "kits:disassemble");
    expect(await snapshot()).toEqual(before);
    expect((await builds(s.client, kitId)).data).toHaveLength(2);

    const ok = await disassemble(api().withKey(restricted.key), kitId, there.id);
    expect(ok.status, ok.text).toBe(200);
    expect(await onHandAt(s.client, [box.id, cable.id], second)).toEqual({ [box.id]: 0, [cable.id]: 4 });
    expect(await onHandAt(s.client, [box.id, cable.id], s.location)).toEqual(before[0]);
  });

  it("refuses with 409 kit_disassembly_not_allowed when the assembled stock was used since; nothing changes", async () => {
    const s = await setup();
    const { box, cable, plug, kitId } = await cableKit(s);
    const ids = [box.id, cable.id, plug.id];
    const made = await buildOk(s.client, kitId, { location_id: s.location, quantity: 2 });
    await s.client.post(`/items/${box.id}/adjustments`, { location_id: s.location, quantity: -1 });
    const before = await onHandAt(s.client, ids, s.location);
    const refused = await disassemble(s.client, kitId, made.id);
    expectError(refused, 409, "kit_disassembly_not_allowed");
    expect(refused.body.error.message).toContain("used since");
    expect(await onHandAt(s.client, ids, s.location)).toEqual(before);
    expect((await builds(s.client, kitId)).data.map((b) => b.id)).toEqual([made.id]);
    // Back in stock: the reversal goes through.
    await s.client.post(`/items/${box.id}/adjustments`, { location_id: s.location, quantity: 1 });
    expect((await disassemble(s.client, kitId, made.id)).status).toBe(200);
    expect(await onHandAt(s.client, ids, s.location)).toEqual({ [box.id]: 0, [cable.id]: 10, [plug.id]: 10 });
  });

  it("disassembling a parent reverses its own changes only; its nested builds stay and can be disassembled on their own", async () => {
    const s = await setup();
    const wire = await createItem(s.client, { name: "Wire" });
    const cable = await createItem(s.client, { name: "Cable" });
    const box = await createItem(s.client, { name: "Box" });
    const cableKitId = await defineKit(s.account, cable.id, [[wire.id, 2]], "automatic");
    const boxKitId = await defineKit(s.account, box.id, [[cable.id, 2]]);
    await stock(s.client, wire.id, s.location, 10);
    const ids = [wire.id, cable.id, box.id];
    const parent = await buildOk(s.client, boxKitId, { location_id: s.location, quantity: 2 });
    expect(await onHandAt(s.client, ids, s.location)).toEqual({ [wire.id]: 2, [cable.id]: 0, [box.id]: 2 });
    const [nested] = (await builds(s.client, cableKitId)).data;

    expect((await disassemble(s.client, boxKitId, parent.id)).status).toBe(200);
    // The 4 cables come back as cables; the wires stay in them.
    expect(await onHandAt(s.client, ids, s.location)).toEqual({ [wire.id]: 2, [cable.id]: 4, [box.id]: 0 });
    expect((await builds(s.client, cableKitId)).data.map((b) => b.id)).toEqual([nested!.id]);
    expect((await disassemble(s.client, cableKitId, nested!.id)).status).toBe(200);
    expect(await onHandAt(s.client, ids, s.location)).toEqual({ [wire.id]: 10, [cable.id]: 0, [box.id]: 0 });
    expect((await getKit(s.client, cableKitId)).build_count).toBe(0);
  });

  it("parallel disassemblies of one build: exactly one succeeds, the stock is reversed once", async () => {
    const s = await setup();
    const { box, cable, plug, kitId } = await cableKit(s);
    const made = await buildOk(s.client, kitId, { location_id: s.location, quantity: 2 });
    const responses = await Promise.all(Array.from({ length: 5 }, () => disassemble(s.client, kitId, made.id)));
    expect(statuses(responses)).toEqual({ 200: 1, 404: 4 });
    expect(await onHandAt(s.client, [box.id, cable.id, plug.id], s.location)).toEqual({ [box.id]: 0, [cable.id]: 10, [plug.id]: 10 });
  });
});

describe("sync feed", () => {
  it("a build and a disassembly mark their items (components and assembled item); kit records mark nothing", { timeout: scaled(60_000) }, async () => {
    const s = await setup();
    const { box, cable, plug, kitId } = await cableKit(s);
    const poller = await startStreamPoller({ endpoint: process.env.DYNAMODB_ENDPOINT!, tableName: tableName(), handler: streamHandler, intervalMs: 50 });
    try {
      const settle = async () => {
        let head = -1;
        for (let round = 0, stable = 0; round < 40 && stable < 2; round++) {
          await poller.drain();
          const next = (await readHead(s.account.accountId)).seq;
          stable = next === head ? stable + 1 : 0;
          head = next;
          await new Promise((resolve) => setTimeout(resolve, 60));
        }
      };
      await settle();
      const start = await s.client.get("/sync", { start: "now", resources: "item" });
      expect(start.status, start.text).toBe(200);
      const changedSince = async (cursor: string) => {
        await settle();
        const page = await s.client.get("/sync", { cursor, limit: 100 });
        expect(page.status, page.text).toBe(200);
        return {
          ids: new Set((page.body.changes as { id: string; resource: string; operation: string }[]).map((c) => `${c.resource}:${c.id}:${c.operation}`)),
          cursor: page.body.next_cursor as string,
        };
      };
      const made = await buildOk(s.client, kitId, { location_id: s.location, quantity: 1 });
      const afterBuild = await changedSince(start.body.cursor);
      expect(afterBuild.ids).toEqual(new Set([box.id, cable.id, plug.id].map((id) => `item:${id}:upsert`)));
      expect((await disassemble(s.client, kitId, made.id)).status).toBe(200);
      const afterRemoval = await changedSince(afterBuild.cursor);
      expect(afterRemoval.ids).toEqual(new Set([box.id, cable.id, plug.id].map((id) => `item:${id}:upsert`)));
    } finally {
      await poller.stop();
    }
  });
});

describe("admin CLI: kit create", () => {
  it("numbers kits from the account's sequence, selects variations, and refuses more than 25 components, cycles and a second kit per item", {
    timeout: scaled(60_000),
  }, async () => {
    const s = await setup();
    const box = await createItem(s.client, { name: "CLI box" });
    const shirt = await createItem(s.client, { name: "Shirt", variations: [{ values: { Size: "M" } }, { values: { Size: "L" } }] });
    const vars = (await s.client.get(`/items/${shirt.id}/variations`)).body.data;
    const id = s.account.accountId;
    const [created, needsVariation, tooMany] = await Promise.all([
      cli("kit", "create", "--account", id, "--item", box.id, "--components", `${shirt.id}:2:${vars[1].id}`, "--method", "automatic", "--json"),
      cli("kit", "create", "--account", id, "--item", box.id, "--components", `${shirt.id}:2`, "--json"),
      cli("kit", "create", "--account", id, "--item", box.id, "--components", Array.from({ length: 26 }, () => `${randomUUID()}:1`).join(","), "--json"),
    ]);
    const kitId = succeeded(created).kit_id as string;
    expect(failed(needsVariation).error.message).toContain("variations");
    expect(failed(tooMany, "invalid_arguments").error.message).toContain("25");
    const kit = await getKit(s.client, kitId);
    expect(kit).toMatchObject({ kit_number: 1, assembly_method: "automatic", pieces: 1 });
    expect(kit.components[0]).toMatchObject({ item_id: shirt.id, item_variation_id: vars[1].id, quantity: 2, position: 1 });

    // An item backs one kit at most.
    await expect(createKit({ accountId: id, itemId: box.id, components: [{ itemId: shirt.id, quantity: 1, variationId: vars[0].id }] })).rejects.toThrow(
      /already backs kit/,
    );
    // A chain a <- b <- c: a kit of c made from a would be a cycle (directly or deeper).
    const [a, b, c] = [await createItem(s.client, { name: "A" }), await createItem(s.client, { name: "B" }), await createItem(s.client, { name: "C" })];
    const kitA = await defineKit(s.account, a.id, [[b.id, 1]]);
    await defineKit(s.account, b.id, [[c.id, 1]]);
    expect((await getKit(s.client, kitA)).kit_number).toBe(2);
    await expect(createKit({ accountId: id, itemId: c.id, components: [{ itemId: a.id, quantity: 1 }] })).rejects.toThrow(/cycle/);
    await expect(createKit({ accountId: id, itemId: c.id, components: [{ itemId: b.id, quantity: 1 }] })).rejects.toThrow(/cycle/);
    // Refused definitions took no number.
    const d = await createItem(s.client, { name: "D" });
    expect((await getKit(s.client, await defineKit(s.account, d.id, [[a.id, 1]]))).kit_number).toBe(4);
    // Archived items, unique kit items and unknown variations are refused too.
    const unique = await createItem(s.client, { name: "Serial", inventory_type: "unique" });
    await expect(createKit({ accountId: id, itemId: unique.id, components: [{ itemId: a.id, quantity: 1 }] })).rejects.toThrow(/quantity item/);
    await expect(createKit({ accountId: id, itemId: c.id, components: [{ itemId: d.id, quantity: 1, variationId: randomUUID() }] })).rejects.toThrow(
      /not a variation/,
    );
    expect((await s.client.patch(`/items/${d.id}`, { archived: true })).status).toBe(200);
    await expect(createKit({ accountId: id, itemId: c.id, components: [{ itemId: d.id, quantity: 1 }] })).rejects.toThrow(/archived/);
  });
});
