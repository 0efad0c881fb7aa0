import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { db } from "../../lib/db/service.js";
import { readHead } from "../../lib/db/sync.js";
import { useStreamPoller } from "../support/stream-poller.js";
import { useApiServer, type ApiClient } from "../support/api.js";
import { expectError } from "../support/assertions.js";
import { idempotencyKey, newAccount, newUser, type TestAccount } from "../support/fixtures.js";
import { ESTIMATE_KEYS, LINE_KEYS } from "../support/estimates.js";

/**
 * Estimate previews (spec part 2, section 4.3 preview; spec part 1, section 6: "Preview
 * requests and reads publish no events"), and the change feed of estimate writes. Every preview
 * is checked against the table: the estimate sequence item, the estimate's partition and the
 * account's sync head are exactly as before.
 */
const api = useApiServer();
const poller = useStreamPoller();

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Waits until the stream is processed and the account's feed head stays put. */
async function settle(accountId: string): Promise<number> {
  await poller.drain();
  await poller.drain();
  let head = (await readHead(accountId)).seq;
  for (let round = 0, stable = 0; round < 40 && stable < 2; round++) {
    await sleep(60);
    await poller.drain();
    const next = (await readHead(accountId)).seq;
    stable = next === head ? stable + 1 : 0;
    head = next;
  }
  return head;
}

interface World {
  account: TestAccount;
  client: ApiClient;
  customer: Record<string, any>;
  item: Record<string, any>;
  location: string;
}

async function world(): Promise<World> {
  const account = await newAccount();
  const client = api().withKey(account.ownerKey);
  const customer = (await client.post("/customers", { name: "Acme Retail", tax_rate1: 10 })).body;
  const location = (await client.post("/locations", { name: "Main Warehouse", short_name: "MAIN" }, { idempotencyKey: idempotencyKey() })).body.id;
  const item = (await client.post("/items", { name: "USB-C Cable", description: "2 m braided", cost: "4", price: "12", location_id: location })).body;
  const adjusted = await client.post(`/items/${item.id}/adjustments`, { location_id: location, quantity: 5 });
  expect(adjusted.status, adjusted.text).toBe(201);
  return { account, client, customer, item, location };
}

const body = (w: World, extra: Record<string, unknown> = {}) => ({
  customer_id: w.customer.id,
  lines: [
    { item_id: w.item.id, quantity: 3 },
    { name: "Setup", unit_price: "20" },
  ],
  ...extra,
});

/** Everything a preview must leave untouched: the sequence item, the account's estimates (headers and pages) and the feed head. */
async function tableState(accountId: string, estimateIds: readonly string[] = []) {
  const sequence = (await db().entities.sequence.get({ accountId, name: "estimate" }).go({ consistent: true })).data ?? null;
  const partitions = await Promise.all(
    estimateIds.map(async (documentId) => (await db().collections.documentTree({ accountId, documentId }).go({ consistent: true, pages: "all" })).data),
  );
  const { data: listed } = await db().entities.document.query.byNumber({ accountId, kind: "estimate" }).go({ pages: "all" });
  return { sequence, partitions, listed: listed.map((d) => `${d.documentId}:${d.revision}`), head: await readHead(accountId) };
}

describe("connected: estimate previews", () => {
  it("previews a new estimate: the canonical estimate with null identity, errors and warnings; no number, no write, no change marker", async () => {
    const w = await world();
    await settle(w.account.accountId);
    const before = await tableState(w.account.accountId);
    const preview = await w.client.post("/estimates/preview", body(w, { discount_percent: 10 }));
    await settle(w.account.accountId);
    expect(await tableState(w.account.accountId)).toEqual(before);
    expect(preview.status, preview.text).toBe(200);
    expect(Object.keys(preview.body)).toEqual(["object", "estimate", "errors", "warnings"]);
    expect(preview.body).toMatchObject({ object: "estimate_preview", errors: [], warnings: [] });
    expect(preview.headers.get("etag")).toBeNull();
    const estimate = preview.body.estimate;
    expect(Object.keys(estimate)).toEqual([...ESTIMATE_KEYS, "lines"]);
    expect(estimate).toMatchObject({
      id: null,
      estimate_number: null,
      revision: null,
      created_at: null,
      updated_at: null,
      status: "Open",
      customer_name: "Acme Retail",
    });
    expect(estimate.lines.map((l: any) => l.id)).toEqual([null, null, null]);
    expect(Object.keys(estimate.lines[0])).toEqual(LINE_KEYS);
    // The same request as a create gives the same estimate (with identity).
    const created = await w.client.post("/estimates", body(w, { discount_percent: 10 }));
    expect(created.status, created.text).toBe(201);
    const identity = { id: null, estimate_number: null, revision: null, created_at: null, updated_at: null };
    expect({ ...created.body, ...identity, lines: created.body.lines.map((l: any) => ({ ...l, id: null })) }).toEqual(estimate);

    // The first preview stored nothing (no sequence item, no estimate, no marker); more previews neither.
    expect(before).toMatchObject({ sequence: null, listed: [] });
    await settle(w.account.accountId);
    const afterCreate = await tableState(w.account.accountId, [created.body.id]);
    expect(afterCreate.sequence).toMatchObject({ value: 1, count: 1 });
    expect(afterCreate.head.seq).toBeGreaterThan(before.head.seq);
    for (const extra of [{}, { lines: Array.from({ length: 50 }, () => ({ name: "X", unit_price: 1 })) }]) {
      expect((await w.client.post("/estimates/preview", body(w, extra))).status).toBe(200);
    }
    await settle(w.account.accountId);
    expect(await tableState(w.account.accountId, [created.body.id])).toEqual(afterCreate);
  });

  it("lists every refusal of the create in errors (200) with the create's codes and params, and warns about stock and past expiry", async () => {
    const w = await world();
    const other = await world();
    await settle(w.account.accountId);
    const before = await tableState(w.account.accountId);
    const staff = api().withKey((await newUser(w.account, { permissions: ["estimates.modify", "estimates.list", "records.view_all"] })).key);
    const refused = await staff.post(
      "/estimates/preview",
      body(w, {
        issue_date: "2020-03-10",
        expiry_date: "2020-03-01",
        shipping_cost: 4,
        lines: [{ item_id: w.item.id, quantity: 9, unit_price: "1" }, { name: "Setup" }],
        custom_field_values: [{ custom_field_id: randomUUID(), value: "x" }],
      }),
    );
    expect(refused.status, refused.text).toBe(200);
    expect(refused.body.errors).toEqual(
      expect.arrayContaining([
        { code: "permission_denied", param: "shipping_cost", message: expect.any(String) },
        { code: "permission_denied", param: "lines[0].unit_price", message: expect.any(String) },
        { code: "required", param: "lines[1].unit_price", message: expect.any(String) },
        { code: "before_issue_date", param: "expiry_date", message: expect.any(String) },
        { code: "invalid_reference", param: "custom_field_values[0].custom_field_id", message: expect.any(String) },
      ]),
    );
    expect(refused.body.errors).toHaveLength(5);
    // Recorded after its expiry date: created Open (and never expiring), with a warning.
    expect(refused.body.estimate).toMatchObject({ id: null, status: "Open" });
    expect(Object.keys(refused.body.estimate)).not.toContain("shipping_cost");
    expect(refused.body.warnings).toEqual([{ code: "insufficient_stock", param: "lines[0].quantity", message: expect.stringContaining("5 available") }]);

    // An inventory line with a name that is not the item's: refused, and shown with the item's name.
    const renamed = await w.client.post("/estimates/preview", body(w, { lines: [{ item_id: w.item.id, quantity: 1, name: "Not the item name" }] }));
    expect(renamed.body.errors).toEqual([{ code: "invalid", param: "lines[0].name", message: expect.any(String) }]);
    expect(renamed.body.estimate.lines[0].name).toBe(w.item.name);

    const warned = await w.client.post("/estimates/preview", body(w, { issue_date: "2020-03-01", expiry_date: "2020-03-10" }));
    expect(warned.body.errors).toEqual([]);
    expect(warned.body.warnings.map((x: any) => x.code)).toEqual(["expiry_date_passed"]);

    // A caller restricted to a location without the item's stock is warned of it (its conversion
    // would sell there); the owner, who sees the 5 at Main, is not.
    const annex = await w.client.post("/locations", { name: "Annex", short_name: "ANX" }, { idempotencyKey: idempotencyKey() });
    const atAnnex = api().withKey(
      (await newUser(w.account, { permissions: ["estimates.list", "estimates.modify", "records.view_all"], locationId: annex.body.id })).key,
    );
    const restricted = await atAnnex.post("/estimates/preview", body(w));
    expect(restricted.status, restricted.text).toBe(200);
    expect(restricted.body.warnings).toEqual([expect.objectContaining({ code: "insufficient_stock", param: "lines[0].quantity" })]);
    expect(restricted.body.warnings[0].message).toContain("0 available");
    expect((await w.client.post("/estimates/preview", body(w))).body.warnings).toEqual([]);

    // The customer or an item that cannot be resolved: no estimate, the errors say why.
    const foreign = await w.client.post("/estimates/preview", body(w, { customer_id: other.customer.id }));
    expect(foreign.status).toBe(200);
    expect(foreign.body).toEqual({
      object: "estimate_preview",
      estimate: null,
      errors: [{ code: "invalid_reference", param: "customer_id", message: expect.any(String) }],
      warnings: [],
    });
    const foreignItem = await w.client.post("/estimates/preview", body(w, { lines: [{ item_id: other.item.id }] }));
    expect(foreignItem.body).toMatchObject({ estimate: null, errors: [{ code: "invalid_reference", param: "lines[0].item_id" }] });
    expect(foreignItem.text).not.toContain(other.item.name);

    // What the create's schema refuses is in errors too, each as a detail of the create's 422, and no estimate.
    const protectedField = await w.client.post("/estimates/preview", body(w, { estimate_number: 9 }));
    expect(protectedField.status, protectedField.text).toBe(200);
    expect(protectedField.body).toEqual({
      object: "estimate_preview",
      estimate: null,
      errors: [{ code: "unsupported_estimate_field", param: "estimate_number", message: expect.any(String) }],
      warnings: [],
    });
    const schema = await w.client.post("/estimates/preview", { discount_percent: 150, lines: [] });
    expect(schema.status, schema.text).toBe(200);
    expect(schema.body.estimate).toBeNull();
    expect(schema.body.errors).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ param: "customer_id", code: "required" }),
        expect.objectContaining({ param: "discount_percent" }),
        expect.objectContaining({ param: "lines" }),
      ]),
    );
    // Malformed JSON, or JSON that is not an object, is still 400: there is no body to judge.
    expectError(await w.client.request("POST", "/estimates/preview", undefined, { raw: "{" }), 400, "invalid_json");
    expectError(await w.client.post("/estimates/preview", []), 400, "invalid_json");
    expectError(
      await api()
        .withKey((await newUser(w.account, { permissions: ["estimates.list"] })).key)
        .post("/estimates/preview", body(w)),
      403,
      "permission_denied",
    );
    await settle(w.account.accountId);
    expect(await tableState(w.account.accountId)).toEqual(before);
  });

  it("previews changes to an existing estimate with If-Match (428 without, 409 stale); writes nothing", async () => {
    const w = await world();
    const estimate = (await w.client.post("/estimates", body(w))).body;
    await settle(w.account.accountId);
    const before = await tableState(w.account.accountId, [estimate.id]);
    const path = `/estimates/${estimate.id}/preview`;
    expectError(await w.client.post(path, { name: "x" }), 428, "estimate_revision_required", "If-Match");
    expectError(await w.client.post(path, { name: "x" }, { headers: { "if-match": "*" } }), 428, "estimate_revision_required");
    expectError(await w.client.post(path, { name: "x" }, { headers: { "if-match": '"est_stale"' } }), 409, "mobile_mutation_conflict");
    expectError(
      await w.client.post(`/estimates/${randomUUID()}/preview`, { name: "x" }, { headers: { "if-match": estimate.revision } }),
      404,
      "resource_missing",
    );
    // A body the update's schema refuses: the same 428, 409 and 404 first, then its problems as errors.
    const badBody = { discount_percent: 150, status_id: 6 };
    expectError(await w.client.post(path, badBody), 428, "estimate_revision_required");
    expectError(await w.client.post(path, badBody, { headers: { "if-match": '"est_stale"' } }), 409, "mobile_mutation_conflict");
    expectError(await w.client.post(`/estimates/${randomUUID()}/preview`, badBody, { headers: { "if-match": estimate.revision } }), 404, "resource_missing");
    const problems = await w.client.post(path, { discount_percent: 150 }, { headers: { "if-match": estimate.revision } });
    expect(problems.status, problems.text).toBe(200);
    expect(problems.body).toEqual({
      object: "estimate_preview",
      estimate: null,
      errors: [{ code: "too_large", param: "discount_percent", message: expect.any(String) }],
      warnings: [],
    });

    const [inventory] = estimate.lines;
    const preview = await w.client.post(
      path,
      {
        name: "Bigger",
        discount_percent: 50,
        lines: [
          { id: inventory.id, item_id: w.item.id, quantity: 6 },
          { name: "Training", unit_price: "100" },
        ],
      },
      { headers: { "if-match": `"${estimate.revision}"` } },
    );
    expect(preview.status, preview.text).toBe(200);
    expect(preview.body.errors).toEqual([]);
    expect(preview.body.warnings.map((x: any) => x.code)).toEqual(["insufficient_stock"]);
    const previewed = preview.body.estimate;
    expect(previewed).toMatchObject({
      id: estimate.id,
      estimate_number: estimate.estimate_number,
      revision: null,
      name: "Bigger",
      created_at: estimate.created_at,
      updated_at: estimate.updated_at,
    });
    expect(previewed.lines.map((l: any) => l.id)).toEqual([inventory.id, null, null]);
    expect(previewed.lines.map((l: any) => l.line_type)).toEqual(["inventory", "service", "discount"]);

    const refused = await w.client.post(path, { customer_id: randomUUID() }, { headers: { "if-match": estimate.revision } });
    expect(refused.body).toMatchObject({ estimate: null });
    expect(refused.body.errors.map((e: any) => [e.code, e.param])).toEqual([
      ["required", "lines"],
      ["invalid_reference", "customer_id"],
    ]);
    await settle(w.account.accountId);
    expect(await tableState(w.account.accountId, [estimate.id])).toEqual(before);

    // A declined estimate's preview shows the refusal the update would answer.
    const declined = (await w.client.post(`/estimates/${estimate.id}/decline`, {})).body;
    const closed = await w.client.post(path, { name: "x" }, { headers: { "if-match": declined.revision } });
    expect(closed.status).toBe(200);
    expect(closed.body.errors).toEqual([{ code: "estimate_update_not_allowed", param: null, message: expect.stringContaining("Declined") }]);
    expect(closed.body.estimate).toMatchObject({ status: "Declined", name: "x" });

    // So does an expired one's: still Expired, not editable.
    const other = (await w.client.post("/estimates", body(w))).body;
    await db().entities.document.patch({ accountId: w.account.accountId, documentId: other.id }).set({ expiryInstant: "2020-01-01T00:00:00.000Z" }).go();
    const expired = await w.client.post(`/estimates/${other.id}/preview`, {}, { headers: { "if-match": other.revision } });
    expect(expired.status, expired.text).toBe(200);
    expect(expired.body.errors.map((e: any) => e.code)).toEqual(["estimate_update_not_allowed"]);
    expect(expired.body.estimate).toMatchObject({ status_id: 8, status: "Expired", can_edit: false, edit_block_reason: "estimate_not_open" });
  });

  it("marks the estimate in the change feed on create, update and decline, and deletes it on delete", async () => {
    const w = await world();
    const cursor = (await w.client.get("/sync", { start: "now", resources: "estimate" })).body.cursor as string;
    const estimate = (await w.client.post("/estimates", body(w))).body;
    const deleted = (await w.client.post("/estimates", body(w))).body;
    await w.client.patch(`/estimates/${estimate.id}`, { name: "Renamed" });
    await w.client.post(`/estimates/${estimate.id}/decline`, {});
    await w.client.request("DELETE", `/estimates/${deleted.id}`);
    await settle(w.account.accountId);
    const page = await w.client.get("/sync", { cursor });
    expect(page.status, page.text).toBe(200);
    const changes = (page.body.changes as { resource: string; id: string; operation: string }[]).filter((c) => c.resource === "estimate");
    expect(changes).toEqual(
      expect.arrayContaining([
        { resource: "estimate", id: estimate.id, operation: "upsert" },
        { resource: "estimate", id: deleted.id, operation: "delete" },
      ]),
    );
    expect(changes.filter((c) => c.id === estimate.id)).toHaveLength(1);
  });
});
