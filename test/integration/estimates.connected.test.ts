import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { advanceClock, resetClock } from "../../lib/core/clock.js";
import { updateAccount } from "../../lib/domain/admin/service.js";
import { db } from "../../lib/db/service.js";
import { useApiServer, type ApiClient, type TestResponse } from "../support/api.js";
import { expectError, expectValidation } from "../support/assertions.js";
import { ESTIMATE_KEYS, LINE_KEYS, estimateWorld, type EstimateWorld } from "../support/estimates.js";
import { idempotencyKey, newUser, updateUser } from "../support/fixtures.js";

/**
 * Estimates through HTTP against DynamoDB Local (spec part 2, sections 2.3, 3.3, 4.3; spec
 * part 1, sections 2.1, 4.6, 7; architecture sections 4 and 8): create with defaults and
 * totals, refusals with their stored effect, update, decline, delete, expiry, lists and
 * visibility. Previews, large estimates, concurrency and conversion are in estimates-*.
 */
const api = useApiServer();

const withoutCosts = (keys: string[]) => keys.filter((k) => !["shipping_cost", "unit_cost", "total_cost"].includes(k));

type World = EstimateWorld;

const world = (): Promise<World> => estimateWorld((key) => api().withKey(key), { item: { description: "2 m braided" } });

function createEstimate(w: World, extra: Record<string, unknown> = {}, client: ApiClient = w.client): Promise<TestResponse> {
  return client.post("/estimates", {
    customer_id: w.customer.id,
    lines: [
      { item_id: w.item.id, quantity: 10 },
      { name: "Installation", unit_price: "35" },
    ],
    ...extra,
  });
}

const estimateCount = async (client: ApiClient) => (await client.get("/estimates", { limit: 1 })).body.pagination.total_records as number;
const documentCount = async (client: ApiClient, partyId: string, kind = "customers") => (await client.get(`/${kind}/${partyId}`)).body.document_count as number;
async function sequenceOf(accountId: string): Promise<{ value?: number; count?: number }> {
  const { data } = await db().entities.sequence.get({ accountId, name: "estimate" }).go({ consistent: true });
  return { value: data?.value, count: data?.count };
}
const today = (zone = "UTC") => new Intl.DateTimeFormat("en-CA", { timeZone: zone }).format(new Date());
const plusDays = (date: string, days: number) => new Date(Date.parse(`${date}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10);

describe("connected: estimates", () => {
  it("creates an Open estimate numbered from the sequence, with item and customer defaults, totals, expiry and an ETag", async () => {
    const w = await world();
    const created = await createEstimate(w, { purchase_order_number: "PO-7781", attention: "Purchasing", shipping_fee: 12, shipping_cost: "3.5" });
    expect(created.status, created.text).toBe(201);
    const estimate = created.body;
    expect(Object.keys(estimate)).toEqual([...ESTIMATE_KEYS, "lines"]);
    expect(created.headers.get("etag")).toBe(`"${estimate.revision}"`);
    expect(estimate.revision).toMatch(/^est_/);
    const issue = today();
    expect(estimate).toMatchObject({
      object: "estimate",
      estimate_number: 1,
      custom_estimate_number: null,
      customer_id: w.customer.id,
      customer_name: "Acme Retail",
      customer_kind: "customer",
      salesperson_id: w.account.ownerUserId,
      status_id: 5,
      status: "Open",
      issue_date: issue,
      expiry_date: plusDays(issue, 30),
      date_sent: null,
      purchase_order_number: "PO-7781",
      attention: "Purchasing",
      shipping_cost: "3.5000",
      discount_percent: "0.000",
      pre_discount_subtotal: "155.0000",
      discount: "0.0000",
      can_edit: true,
      edit_block_reason: null,
      custom_field_values: [],
      converted_document: null,
    });
    const [inventory, service] = estimate.lines;
    expect(Object.keys(inventory)).toEqual(LINE_KEYS);
    expect(inventory).toMatchObject({
      item_id: w.item.id,
      item_variation_location_id: null,
      line_type: "inventory",
      name: "USB-C Cable",
      description: "2 m braided",
      quantity: 10,
      sku: "CAB-1",
      variation_values: {},
      variation_number: 1,
      location_name: null,
      thumbnail_url: null,
      position: 0,
      unit_price: "12.0000",
      unit_cost: "4.2500",
      total_cost: "42.5000",
      discount_percent: "0.000",
      discounted_unit_price: null,
      tax_rate: "8.250",
      tax_2_rate: "1.500",
      subtotal: "120.0000",
      tax: "9.9000",
      tax_2: "1.8000",
      total: "131.7000",
    });
    expect(service).toMatchObject({
      item_id: null,
      line_type: "service",
      position: 1,
      name: "Installation",
      unit_price: "35.0000",
      unit_cost: "0.0000",
      total_cost: "0.0000",
      quantity: 1,
      subtotal: "35.0000",
      tax: "2.8875",
      tax_2: "0.5250",
    });
    // 120 + 35 = 155; tax 9.9 + 2.8875 = 12.7875; tax 2 1.8 + 0.525 = 2.325; + 12 shipping
    expect(estimate).toMatchObject({ subtotal: "155.0000", shipping_fee: "12.0000", tax: "12.7875", tax_2: "2.3250", total: "182.1125" });

    const fetched = await w.client.get(`/estimates/${estimate.id}`);
    expect(fetched.status).toBe(200);
    expect(fetched.body).toEqual(estimate);
    expect(fetched.headers.get("etag")).toBe(`"${estimate.revision}"`);
    expect(await documentCount(w.client, w.customer.id)).toBe(1);
    expect(await sequenceOf(w.account.accountId)).toEqual({ value: 1, count: 1 });

    const prospect = (await w.client.post("/prospects", { name: "Future Corp" })).body;
    const second = await createEstimate(w, { customer_id: prospect.id, expiry_date: plusDays(issue, 3) });
    expect(second.status, second.text).toBe(201);
    expect(second.body).toMatchObject({ estimate_number: 2, customer_kind: "prospect", customer_name: "Future Corp", expiry_date: plusDays(issue, 3) });
    expect(second.body.lines[0].tax_rate).toBe("0.000");
    expect(await documentCount(w.client, prospect.id, "prospects")).toBe(1);
  });

  it("adds one generated discount line for discount_percent, discounts every taxable base, and prices variation rows with their location", async () => {
    const w = await world();
    const item = (
      await w.client.post("/items", {
        name: "T-shirt",
        price: "20",
        cost: "8",
        variations: [{ values: { Size: "M" }, unit_price_override: "22" }, { values: { Size: "L" } }],
      })
    ).body;
    const variations = (await w.client.get(`/items/${item.id}/variations`, { include: "locations" })).body.data;
    const medium = variations.find((v: any) => v.values.Size === "M");
    const adjusted = await w.client.post(`/items/${item.id}/adjustments`, { location_id: w.location, item_variation_id: medium.id, quantity: 5 });
    expect(adjusted.status, adjusted.text).toBe(201);
    const ivl = adjusted.body.item_variation_location_id;
    expectValidation(await createEstimate(w, { lines: [{ item_id: item.id }] }), "lines[0].item_variation_location_id", "required");
    const created = await createEstimate(w, {
      discount_percent: 10,
      lines: [
        { item_id: item.id, item_variation_location_id: ivl, quantity: 2, tax_rate: 20, tax_2_rate: 0 },
        { name: "Printing", unit_price: "100", tax_rate: 20, tax_2_rate: 0 },
      ],
    });
    expect(created.status, created.text).toBe(201);
    const estimate = created.body;
    expect(estimate.lines).toHaveLength(3);
    expect(estimate.lines[0]).toMatchObject({
      item_variation_location_id: ivl,
      variation_values: { Size: "M" },
      location_name: "Main Warehouse",
      unit_price: "22.0000",
      subtotal: "44.0000",
      discounted_unit_price: "19.8000",
    });
    expect(estimate.lines[2]).toMatchObject({
      line_type: "discount",
      position: 2,
      name: "Discount",
      unit_name: "discount",
      quantity: 1,
      unit_price: "-14.4000",
      subtotal: "-14.4000",
      tax: "0.0000",
      total: "-14.4000",
      unit_cost: null,
      total_cost: null,
      item_id: null,
    });
    // 144 - 14.4 = 129.6; tax 20% of the discounted bases 39.6 + 90 = 25.92
    expect(estimate).toMatchObject({
      discount_percent: "10.000",
      pre_discount_subtotal: "144.0000",
      discount: "-14.4000",
      subtotal: "129.6000",
      tax: "25.9200",
      tax_2: "0.0000",
      total: "155.5200",
    });
  });

  it("takes the expiry default from the account's setting and dates from the user's and account's time zones", async () => {
    const w = await world();
    await updateAccount(w.account.accountId, { timeZone: "Pacific/Kiritimati", estimateExpiryDays: 7 });
    const estimate = (await createEstimate(w)).body;
    const kiritimati = today("Pacific/Kiritimati");
    expect(estimate.issue_date).toBe(kiritimati);
    expect(estimate.expiry_date).toBe(plusDays(kiritimati, 7));
    const given = (await createEstimate(w, { issue_date: "2030-01-10" })).body;
    expect(given.expiry_date).toBe("2030-01-17");
    // The default never runs past the last date (9999-12-31), and such an estimate is Open and never expires.
    const last = await createEstimate(w, { issue_date: "9999-12-28" });
    expect(last.status, last.text).toBe(201);
    expect(last.body).toMatchObject({ expiry_date: "9999-12-31", status: "Open" });
    await updateAccount(w.account.accountId, { paymentTerms: "Net 30" });
    expect((await createEstimate(w)).body.payment_terms).toBe("Net 30");
    expect((await createEstimate(w, { payment_terms: "Due on receipt" })).body.payment_terms).toBe("Due on receipt");
  });

  it("omits cost fields without costs.view and refuses shipping_cost (403) and inventory unit_price without prices.modify (403)", async () => {
    const w = await world();
    const staff = await newUser(w.account, { permissions: ["estimates.list", "estimates.modify", "records.view_all"] });
    const client = api().withKey(staff.key);
    const created = await createEstimate(w, {}, client);
    expect(created.status, created.text).toBe(201);
    expect(Object.keys(created.body)).toEqual([...withoutCosts(ESTIMATE_KEYS), "lines"]);
    expect(Object.keys(created.body.lines[0])).toEqual(withoutCosts(LINE_KEYS));
    expect(Object.keys((await client.get("/estimates")).body.data[0])).toEqual(withoutCosts(ESTIMATE_KEYS));
    const before = await sequenceOf(w.account.accountId);
    expectError(await createEstimate(w, { shipping_cost: 5 }, client), 403, "permission_denied", "shipping_cost");
    expectError(await createEstimate(w, { lines: [{ item_id: w.item.id, unit_price: "9" }] }, client), 403, "permission_denied", "lines[0].unit_price");
    expect(await sequenceOf(w.account.accountId)).toEqual(before);
    // Service lines name their own price; a user with prices.modify may override an item's.
    const pricer = api().withKey((await newUser(w.account, { permissions: ["estimates.list", "estimates.modify", "records.view_all", "prices.modify"] })).key);
    const priced = await createEstimate(w, { lines: [{ item_id: w.item.id, unit_price: "9" }] }, pricer);
    expect(priced.status, priced.text).toBe(201);
    expect(priced.body.lines[0].unit_price).toBe("9.0000");
  });

  it("a user who no longer sees the estimate's customer still edits the estimate (as invoices and sales orders); a new customer must be visible", async () => {
    const w = await world();
    const staff = await newUser(w.account, { permissions: ["estimates.list", "estimates.modify", "records.view_all"] });
    const client = api().withKey(staff.key);
    const created = await createEstimate(w, {}, client);
    expect(created.status, created.text).toBe(201);
    const otherCustomer = (await w.client.post("/customers", { name: "Owner's other customer" })).body;
    await updateUser(staff.userId, { permissions: ["estimates.list", "estimates.modify"] });
    const read = await client.get(`/estimates/${created.body.id}`);
    expect(read.body).toMatchObject({ can_edit: true, edit_block_reason: null });
    const renamed = await client.patch(`/estimates/${created.body.id}`, { name: "Renamed", customer_id: w.customer.id });
    expect(renamed.status, renamed.text).toBe(200);
    expect(renamed.body).toMatchObject({ name: "Renamed", customer_id: w.customer.id });
    const moved = await client.patch(`/estimates/${created.body.id}`, { customer_id: otherCustomer.id, lines: [{ name: "Study", unit_price: "5" }] });
    expectError(moved, 422, "validation_failed", "customer_id");
    expect((await w.client.get(`/estimates/${created.body.id}`)).body).toMatchObject({ customer_id: w.customer.id, revision: renamed.body.revision });
  });

  it("refuses bad requests with the spec's errors, storing nothing and consuming no number", async () => {
    const w = await world();
    const other = await world();
    const supplier = (await w.client.post("/suppliers", { name: "Not a customer" })).body;
    const archived = (await w.client.post("/customers", { name: "Gone Ltd" })).body;
    await db().entities.party.patch({ accountId: w.account.accountId, partyId: archived.id }).set({ archived: true }).go();
    const archivedItem = (await w.client.post("/items", { name: "Old" })).body;
    expect((await w.client.patch(`/items/${archivedItem.id}`, { archived: true })).status).toBe(200);
    const soldItem = (await w.client.post("/items", { name: "One of a kind", inventory_type: "unique", serial_number: "SN-1" })).body;
    await db().entities.item.patch({ accountId: w.account.accountId, itemId: soldItem.id }).set({ sold: true }).go();
    const line = { item_id: w.item.id };

    expectValidation(await w.client.post("/estimates", { lines: [line] }), "customer_id", "required");
    expectValidation(await createEstimate(w, { customer_id: randomUUID() }), "customer_id", "invalid_reference");
    expectValidation(await createEstimate(w, { customer_id: other.customer.id }), "customer_id", "invalid_reference");
    expectValidation(await createEstimate(w, { customer_id: supplier.id }), "customer_id", "invalid_reference");
    expectValidation(await createEstimate(w, { customer_id: archived.id }), "customer_id", "archived");
    expectValidation(await createEstimate(w, { lines: [] }), "lines", "too_few");
    expectValidation(await createEstimate(w, { lines: Array.from({ length: 501 }, () => line) }), "lines", "too_many");
    expectValidation(await createEstimate(w, { lines: [{ item_id: w.item.id, quantity: 0 }] }), "lines[0].quantity");
    expectValidation(await createEstimate(w, { lines: [{ item_id: other.item.id }] }), "lines[0].item_id", "invalid_reference");
    expectValidation(await createEstimate(w, { lines: [{ item_id: archivedItem.id }] }), "lines[0].item_id", "archived");
    expectValidation(await createEstimate(w, { lines: [{ item_id: soldItem.id }] }), "lines[0].item_id", "sold");
    expectValidation(await createEstimate(w, { lines: [{ name: "Labour" }] }), "lines[0].unit_price", "required");
    expectValidation(await createEstimate(w, { lines: [{ unit_price: 5 }] }), "lines[0].name", "required");
    expectValidation(await createEstimate(w, { lines: [{ item_id: w.item.id, name: "Renamed" }] }), "lines[0].name", "invalid");
    expectValidation(await createEstimate(w, { issue_date: "2030-01-10", expiry_date: "2030-01-09" }), "expiry_date", "before_issue_date");
    expectValidation(await createEstimate(w, { custom_estimate_number: "x".repeat(25) }), "custom_estimate_number", "too_long");
    expectValidation(
      await createEstimate(w, { custom_field_values: [{ custom_field_id: randomUUID(), value: "x" }] }),
      "custom_field_values[0].custom_field_id",
      "invalid_reference",
    );
    expectValidation(await createEstimate(w, { shipping_fee: -1 }), "shipping_fee");
    // Service-controlled fields: 422 unsupported_estimate_field, not the generic unknown_field.
    for (const field of [
      "estimate_number",
      "status_id",
      "status",
      "salesperson_id",
      "account_id",
      "source",
      "subtotal",
      "total",
      "tax",
      "converted_document",
      "created_at",
      "updated_at",
      "revision",
    ]) {
      const refused = await createEstimate(w, { [field]: 1 });
      expectError(refused, 422, "unsupported_estimate_field", field);
    }
    const lineField = await createEstimate(w, { lines: [{ item_id: w.item.id }, { name: "X", unit_price: 1, subtotal: "1", total_cost: "1" }] });
    expectError(lineField, 422, "unsupported_estimate_field", "lines[1].subtotal");
    expect(lineField.body.error.details.map((d: any) => d.param)).toEqual(["lines[1].subtotal", "lines[1].total_cost"]);
    // Any other field the body does not define is an unsupported field too (spec 4.3).
    expectError(await createEstimate(w, { colour: "red" }), 422, "unsupported_estimate_field", "colour");
    expectError(
      await createEstimate(w, { lines: [{ item_id: w.item.id, discount_percent: 5 }] }),
      422,
      "unsupported_estimate_field",
      "lines[0].discount_percent",
    );

    expect(await estimateCount(w.client)).toBe(0);
    expect(await documentCount(w.client, w.customer.id)).toBe(0);
    expect(await documentCount(w.client, archived.id)).toBe(0);
    expect(await sequenceOf(w.account.accountId)).toEqual({ value: undefined, count: undefined });
    expect((await createEstimate(w)).body.estimate_number).toBe(1);
  });

  it("updates Open estimates partially with complete line replacement, If-Match and customer changes", async () => {
    const w = await world();
    const estimate = (await createEstimate(w, { issue_date: plusDays(today(), -10) })).body;
    const [inventory, service] = estimate.lines;
    const renamed = await w.client.patch(`/estimates/${estimate.id}`, { name: "Q4 refresh", discount_percent: 5 });
    expect(renamed.status, renamed.text).toBe(200);
    expect(renamed.body).toMatchObject({ name: "Q4 refresh", discount_percent: "5.000", discount: "-7.7500", subtotal: "147.2500", estimate_number: 1 });
    expect(renamed.body.lines.map((l: any) => l.id).slice(0, 2)).toEqual([inventory.id, service.id]);
    expect(renamed.body.lines[2].line_type).toBe("discount");
    expect(renamed.body.revision).not.toBe(estimate.revision);
    expect(renamed.headers.get("etag")).toBe(`"${renamed.body.revision}"`);

    const stale = await w.client.patch(`/estimates/${estimate.id}`, { name: "Late" }, { headers: { "if-match": `"${estimate.revision}"` } });
    expectError(stale, 409, "mobile_mutation_conflict");
    expect((await w.client.get(`/estimates/${estimate.id}`)).body.name).toBe("Q4 refresh");

    const replaced = await w.client.patch(
      `/estimates/${estimate.id}`,
      {
        lines: [
          { id: inventory.id, item_id: w.item.id, quantity: 3, description: "" },
          { name: "Delivery", unit_price: "5" },
        ],
      },
      { headers: { "if-match": renamed.body.revision } },
    );
    expect(replaced.status, replaced.text).toBe(200);
    expect(replaced.body.lines).toHaveLength(3);
    expect(replaced.body.lines[0]).toMatchObject({ id: inventory.id, quantity: 3, description: null, subtotal: "36.0000" });
    expect(replaced.body.lines[1]).toMatchObject({ name: "Delivery", line_type: "service" });
    expect(replaced.body.lines[1].id).not.toBe(service.id);
    expect(replaced.body.lines[2]).toMatchObject({ id: renamed.body.lines[2].id, line_type: "discount", unit_price: "-2.0500" });

    expectValidation(
      await w.client.patch(`/estimates/${estimate.id}`, { lines: [{ id: randomUUID(), item_id: w.item.id }] }),
      "lines[0].id",
      "invalid_reference",
    );
    expectValidation(
      await w.client.patch(`/estimates/${estimate.id}`, { lines: [{ id: renamed.body.lines[2].id, name: "Discount", unit_price: 1 }] }),
      "lines[0].id",
      "invalid_reference",
    );
    expectValidation(
      await w.client.patch(`/estimates/${estimate.id}`, {
        lines: [
          { id: inventory.id, item_id: w.item.id },
          { id: inventory.id, item_id: w.item.id },
        ],
      }),
      "lines[1].id",
      "duplicate",
    );
    expectValidation(await w.client.patch(`/estimates/${estimate.id}`, { expiry_date: plusDays(today(), -1) }), "expiry_date", "past_date");
    expectValidation(await w.client.patch(`/estimates/${estimate.id}`, { expiry_date: today() }), "expiry_date", "past_date");
    expectValidation(await w.client.patch(`/estimates/${estimate.id}`, { expiry_date: plusDays(today(), -11) }), "expiry_date", "before_issue_date");
    expectValidation(await w.client.patch(`/estimates/${estimate.id}`, { issue_date: plusDays(estimate.expiry_date, 1) }), "issue_date", "before_issue_date");
    expectError(await w.client.patch(`/estimates/${estimate.id}`, { status_id: 7 }), 422, "unsupported_estimate_field", "status_id");

    const otherCustomer = (await w.client.post("/customers", { name: "Globex", tax_rate1: 0 })).body;
    expectValidation(await w.client.patch(`/estimates/${estimate.id}`, { customer_id: otherCustomer.id }), "lines", "required");
    const moved = await w.client.patch(`/estimates/${estimate.id}`, {
      customer_id: otherCustomer.id,
      lines: [{ item_id: w.item.id, quantity: 1 }],
      expiry_date: plusDays(today(), 1),
    });
    expect(moved.status, moved.text).toBe(200);
    expect(moved.body).toMatchObject({ customer_name: "Globex", customer_id: otherCustomer.id, expiry_date: plusDays(today(), 1), status: "Open" });
    expect(moved.body.lines[0].tax_rate).toBe("0.000");
    expect(await documentCount(w.client, w.customer.id)).toBe(0);
    expect(await documentCount(w.client, otherCustomer.id)).toBe(1);
    const current = (await w.client.get(`/estimates/${estimate.id}`)).body;
    expect(current).toEqual(moved.body);
  });

  it("declines Open estimates (status 7, safe repeat) and protects declined ones from updates, deletion and decline bodies", async () => {
    const w = await world();
    const estimate = (await createEstimate(w)).body;
    expectValidation(await w.client.post(`/estimates/${estimate.id}/decline`, { reason: "too expensive" }), "reason", "unknown_field");
    const declined = await w.client.post(`/estimates/${estimate.id}/decline`, {});
    expect(declined.status, declined.text).toBe(200);
    expect(declined.body).toMatchObject({ status_id: 7, status: "Declined", can_edit: false, edit_block_reason: "estimate_not_open" });
    expect(declined.body.lines).toEqual(estimate.lines);
    expect(declined.headers.get("etag")).toBe(`"${declined.body.revision}"`);
    const again = await w.client.post(`/estimates/${estimate.id}/decline`);
    expect(again.status, again.text).toBe(200);
    expect(again.body).toEqual(declined.body);
    // A repeat is checked against If-Match first, as every write is: the revision before the decline is stale.
    expectError(await w.client.post(`/estimates/${estimate.id}/decline`, {}, { headers: { "if-match": estimate.revision } }), 409, "mobile_mutation_conflict");
    const listed = await w.client.post(
      `/estimates/${estimate.id}/decline`,
      {},
      { headers: { "if-match": `"${estimate.revision}", "${declined.body.revision}"` } },
    );
    expect(listed.status, listed.text).toBe(200);
    expectError(await w.client.patch(`/estimates/${estimate.id}`, { name: "x" }), 409, "estimate_update_not_allowed");
    expectError(await w.client.request("DELETE", `/estimates/${estimate.id}`), 409, "estimate_delete_not_allowed");
    expect((await w.client.get(`/estimates/${estimate.id}`)).body).toEqual(declined.body);

    const listOnly = api().withKey((await newUser(w.account, { permissions: ["estimates.list", "records.view_all"] })).key);
    const open = (await createEstimate(w)).body;
    expectError(await listOnly.post(`/estimates/${open.id}/decline`, {}), 403, "permission_denied");
    expectError(await listOnly.patch(`/estimates/${open.id}`, { name: "x" }), 403, "permission_denied");
    expect((await listOnly.get(`/estimates/${open.id}`)).body).toMatchObject({ can_edit: false, edit_block_reason: "permission_denied" });
    const stale = await w.client.post(`/estimates/${open.id}/decline`, {}, { headers: { "if-match": "est_stale" } });
    expectError(stale, 409, "mobile_mutation_conflict");
    expect((await w.client.get(`/estimates/${open.id}`)).body.status).toBe("Open");
  });

  it("deletes Open estimates with their lines and counts; the answer is {id, object, deleted}", async () => {
    const w = await world();
    const kept = (await createEstimate(w)).body;
    const estimate = (await createEstimate(w)).body;
    expect(await documentCount(w.client, w.customer.id)).toBe(2);
    const key = idempotencyKey();
    const deleted = await w.client.request("DELETE", `/estimates/${estimate.id}`, undefined, { idempotencyKey: key });
    expect(deleted.status, deleted.text).toBe(200);
    expect(deleted.body).toEqual({ id: estimate.id, object: "estimate", deleted: true });
    const replay = await w.client.request("DELETE", `/estimates/${estimate.id}`, undefined, { idempotencyKey: key });
    expect(replay.status).toBe(200);
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    expectError(await w.client.get(`/estimates/${estimate.id}`), 404, "resource_missing");
    expectError(await w.client.request("DELETE", `/estimates/${estimate.id}`), 404, "resource_missing");
    const { data } = await db().collections.documentTree({ accountId: w.account.accountId, documentId: estimate.id }).go({ consistent: true });
    expect(data.document).toHaveLength(0);
    expect(data.documentLines).toHaveLength(0);
    expect(await documentCount(w.client, w.customer.id)).toBe(1);
    expect(await sequenceOf(w.account.accountId)).toEqual({ value: 2, count: 1 });
    const list = await w.client.get("/estimates");
    expect(list.body.data.map((e: any) => e.id)).toEqual([kept.id]);
    expect(list.body.pagination.total_records).toBe(1);
    expect((await createEstimate(w)).body.estimate_number).toBe(3);
    expectError(
      await w.client.request("DELETE", `/estimates/${kept.id}`, undefined, { headers: { "if-match": "est_stale" } }),
      409,
      "mobile_mutation_conflict",
    );
  });

  it("an Open estimate becomes Expired once its expiry date has passed (account time zone): reads show it, writes are refused", async () => {
    const w = await world();
    const zone = "Pacific/Kiritimati"; // UTC+14: its today is often UTC's tomorrow
    await updateAccount(w.account.accountId, { timeZone: zone });
    const localToday = today(zone);
    const expiring = (await createEstimate(w, { issue_date: plusDays(localToday, -10), expiry_date: localToday })).body;
    expect(expiring).toMatchObject({ status_id: 5, status: "Open", can_edit: true });
    const later = (await createEstimate(w, { issue_date: localToday, expiry_date: plusDays(localToday, 5) })).body;
    try {
      // Two days on (this process's clock; the system clock elsewhere): past the end of its expiry day.
      advanceClock(2 * 86_400_000);
      const read = (await w.client.get(`/estimates/${expiring.id}`)).body;
      expect(read).toMatchObject({ status_id: 8, status: "Expired", can_edit: false, edit_block_reason: "estimate_not_open" });
      expectError(await w.client.patch(`/estimates/${expiring.id}`, { name: "x" }), 409, "estimate_update_not_allowed");
      expectError(await w.client.patch(`/estimates/${expiring.id}`, { expiry_date: plusDays(localToday, 5) }), 409, "estimate_update_not_allowed");
      expectError(await w.client.post(`/estimates/${expiring.id}/decline`, {}), 409, "estimate_decline_not_allowed");
      expectError(await w.client.post(`/estimates/${expiring.id}/convert-to-invoice`, {}), 409, "estimate_conversion_not_allowed");
      expectError(await w.client.request("DELETE", `/estimates/${expiring.id}`), 409, "estimate_delete_not_allowed");
      const ids = (params: Record<string, string | number>) => w.client.get("/estimates", params).then((r) => r.body.data.map((e: any) => e.id));
      expect(await ids({ status_id: 8 })).toEqual([expiring.id]);
      expect(await ids({ status_id: 5 })).toEqual([later.id]);
    } finally {
      resetClock();
    }
  });

  it("an estimate recorded after its expiry date had passed is created Open (spec 3.3) and never expires: it can be edited, declined and converted", async () => {
    const w = await world();
    const backdated = await createEstimate(w, { issue_date: "2024-01-15", expiry_date: "2024-02-14", lines: [{ name: "Survey", unit_price: "120" }] });
    expect(backdated.status, backdated.text).toBe(201);
    expect(backdated.body).toMatchObject({ status_id: 5, status: "Open", can_edit: true, edit_block_reason: null, expiry_date: "2024-02-14" });
    // The default expiry date (issue date + the account's estimate_expiry_days) is past as well.
    const defaulted = (await createEstimate(w, { issue_date: "2025-03-01" })).body;
    expect(defaulted).toMatchObject({ status_id: 5, status: "Open" });
    const renamed = await w.client.patch(`/estimates/${backdated.body.id}`, { name: "Recorded late" });
    expect(renamed.status, renamed.text).toBe(200);
    expect(renamed.body).toMatchObject({ status_id: 5, name: "Recorded late" });
    const ids = (params: Record<string, string | number>) => w.client.get("/estimates", params).then((r) => r.body.data.map((e: any) => e.id));
    expect(await ids({ status_id: 5 })).toEqual([defaulted.id, backdated.body.id]);
    expect(await ids({ status_id: 8 })).toEqual([]);
    const declined = await w.client.post(`/estimates/${defaulted.id}/decline`, {});
    expect(declined.status, declined.text).toBe(200);
    expect(declined.body).toMatchObject({ status_id: 7, status: "Declined" });
    const invoice = await w.client.post(`/estimates/${backdated.body.id}/convert-to-invoice`, {});
    expect(invoice.status, invoice.text).toBe(201);
    expect((await w.client.get(`/estimates/${backdated.body.id}`)).body).toMatchObject({ status_id: 6 });
  });

  it("lists newest number first with every filter, ids and visibility", async () => {
    const w = await world();
    const first = (await createEstimate(w, { name: "Alpha", custom_estimate_number: "EST-77", issue_date: "2030-01-10", expiry_date: "2030-02-01" })).body;
    const second = (await createEstimate(w, { name: "Beta", issue_date: "2030-03-05", expiry_date: "2030-03-20" })).body;
    const zeta = (await w.client.post("/customers", { name: "Zeta Partners" })).body;
    const third = (await createEstimate(w, { customer_id: zeta.id, issue_date: "2030-04-01" })).body;
    await w.client.post(`/estimates/${second.id}/decline`, {});

    const list = await w.client.get("/estimates");
    expect(list.status).toBe(200);
    expect(list.body.data.map((e: any) => e.estimate_number)).toEqual([3, 2, 1]);
    expect(Object.keys(list.body.data[0])).toEqual(ESTIMATE_KEYS);
    expect(list.body.pagination).toEqual({ page: 1, per_page: 20, total_pages: 1, total_records: 3 });
    const ids = (params: Record<string, string | number>) => w.client.get("/estimates", params).then((r) => r.body.data.map((e: any) => e.id));
    expect(await ids({ status_id: 7 })).toEqual([second.id]);
    expect(await ids({ status_id: 5 })).toEqual([third.id, first.id]);
    expect(await ids({ status_id: 6 })).toEqual([]);
    // A status id no estimate can have is refused, as the document's enum says (5-8).
    expectError(await w.client.get("/estimates", { status_id: 99 }), 422, "invalid_query_parameter", "status_id");
    expect(await ids({ customer_id: zeta.id })).toEqual([third.id]);
    expect(await ids({ q: "zeta" })).toEqual([third.id]);
    expect(await ids({ q: "est-77" })).toEqual([first.id]);
    expect(await ids({ q: "alpha" })).toEqual([first.id]);
    expect(await ids({ q: "2" })).toEqual([second.id]);
    expect(await ids({ issue_date_from: "2030-03-01", issue_date_to: "2030-03-31" })).toEqual([second.id]);
    // One bound alone, and a range whose bounds are reversed (empty).
    expect(await ids({ issue_date_to: "2030-03-31" })).toEqual([second.id, first.id]);
    expect(await ids({ issue_date_from: "2030-03-01" })).toEqual([third.id, second.id]);
    expect(await ids({ issue_date_from: "2030-04-30", issue_date_to: "2030-03-01" })).toEqual([]);
    expect(await ids({ expiry_date_from: "2030-02-01", expiry_date_to: "2030-03-20" })).toEqual([second.id, first.id]);
    expect(await ids({ limit: 2, page: 2 })).toEqual([first.id]);
    const batch = await w.client.get("/estimates", { ids: `${first.id},${randomUUID()},${third.id}` });
    expect(batch.body.data.map((e: any) => e.id)).toEqual([third.id, first.id]);
    expect(batch.body.pagination).toMatchObject({ per_page: 3, total_records: 2 });
    expectError(await w.client.get("/estimates", { ids: Array.from({ length: 51 }, () => randomUUID()).join(",") }), 422, "invalid_query_parameter", "ids");
    expectError(await w.client.get("/estimates", { ids: "nope" }), 422, "invalid_query_parameter", "ids");
    // 50 ids with a space after each comma: the count is what is limited, not the text.
    const spaced = await w.client.get("/estimates", { ids: [first.id, ...Array.from({ length: 49 }, () => randomUUID())].join(", ") });
    expect(spaced.status, spaced.text).toBe(200);
    expect(spaced.body.pagination).toMatchObject({ per_page: 50, total_records: 1 });

    const staff = await newUser(w.account, { permissions: ["estimates.list", "estimates.modify"] });
    const staffClient = api().withKey(staff.key);
    // The customer is not the staff user's own record: invisible to them.
    expectValidation(await createEstimate(w, {}, staffClient), "customer_id", "invalid_reference");
    const own = (await staffClient.post("/customers", { name: "Staff customer" })).body;
    const mine = await createEstimate(w, { customer_id: own.id }, staffClient);
    expect(mine.status, mine.text).toBe(201);
    expect(mine.body.salesperson_id).toBe(staff.userId);
    const staffList = await staffClient.get("/estimates");
    expect(staffList.body.data.map((e: any) => e.id)).toEqual([mine.body.id]);
    expect(staffList.body.pagination.total_records).toBe(1);
    expect((await staffClient.get("/estimates", { ids: `${first.id},${mine.body.id}` })).body.data.map((e: any) => e.id)).toEqual([mine.body.id]);
    expectError(await staffClient.get(`/estimates/${first.id}`), 404, "resource_missing");
    expectError(await staffClient.patch(`/estimates/${first.id}`, { name: "x" }), 404, "resource_missing");
    expect((await w.client.get("/estimates")).body.pagination.total_records).toBe(4);
    expectError(
      await api()
        .withKey((await newUser(w.account, { permissions: [] })).key)
        .get("/estimates"),
      403,
      "permission_denied",
    );
    expectError(await (await world()).client.get(`/estimates/${first.id}`), 404, "resource_missing");
  });

  it("keeps a customer with estimates from being deleted (422 on document_count)", async () => {
    const w = await world();
    await createEstimate(w);
    expectValidation(await w.client.request("DELETE", `/customers/${w.customer.id}`), "document_count");
  });
});
