import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { useApiServer, type ApiClient, type TestResponse } from "../support/api.js";
import { idempotencyKey, newAccount, newKey, newUser, type TestAccount } from "../support/fixtures.js";
import { createCustomField, createCustomerLabel, createPricingTier } from "../../lib/domain/admin/service.js";
import { addDocumentActivity } from "../../lib/db/parties.js";
import { writeTransaction } from "../../lib/db/transactions.js";
import { db } from "../../lib/db/service.js";
import { expectError, expectValidation } from "../support/assertions.js";

/**
 * Customers, prospects and suppliers (spec part 1, sections 2.1, 2.6, 3, 4.4, 7 and 8;
 * architecture section 4: records.view_all, sequences). Every test makes its own account;
 * everything runs against DynamoDB Local through the real handlers.
 */
const api = useApiServer();

type Kind = "customer" | "prospect" | "supplier";
const PATHS: Record<Kind, string> = { customer: "/customers", prospect: "/prospects", supplier: "/suppliers" };
const KINDS: { kind: Kind; path: string }[] = (["customer", "prospect", "supplier"] as const).map((kind) => ({ kind, path: PATHS[kind] }));
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

const ADDRESS_FIELDS = [
  "billing_address_1",
  "billing_address_2",
  "billing_city",
  "billing_region",
  "billing_postal_code",
  "billing_country",
  "shipping_address_1",
  "shipping_address_2",
  "shipping_city",
  "shipping_region",
  "shipping_postal_code",
  "shipping_country",
];

/** The exact keys of each kind, in the spec's order (section 2.6). */
function expectedKeys(kind: Kind): string[] {
  const keys = ["id", "object", "customer_number", "name", "office_email", "office_phone", "office_fax", "url", ...ADDRESS_FIELDS];
  if (kind !== "supplier") keys.push("vat_number");
  keys.push("document_count");
  if (kind === "customer") keys.push("last_invoice_date", "lifetime_revenue_total");
  keys.push("archived");
  if (kind !== "supplier") keys.push("pricing_tier_id");
  keys.push("owner_user_id", "custom_field_values", "created_at", "updated_at");
  if (kind === "prospect") keys.push("sale_opportunity", "closing_percentage", "prospect_date");
  return keys;
}

/** Nullable string fields of each kind (present and null on a bare create). */
function nullableFields(kind: Kind): string[] {
  const fields = ["office_email", "office_phone", "office_fax", "url", ...ADDRESS_FIELDS];
  if (kind !== "supplier") fields.push("vat_number", "pricing_tier_id");
  if (kind === "customer") fields.push("last_invoice_date");
  if (kind === "prospect") fields.push("sale_opportunity", "prospect_date");
  return fields;
}

async function setup(): Promise<{ account: TestAccount; client: ApiClient }> {
  const account = await newAccount();
  return { account, client: api().withKey(account.ownerKey) };
}

const put = (client: ApiClient, path: string, body: unknown, options = {}) => client.request("PUT", path, body, options);
const del = (client: ApiClient, path: string) => client.request("DELETE", path);

async function create(client: ApiClient, path: string, body: Record<string, unknown>, options = {}) {
  const response = await client.post(path, body, options);
  expect(response.status, response.text).toBe(201);
  return response.body as Record<string, any> & { id: string; customer_number: number; name: string };
}

async function total(client: ApiClient, path: string): Promise<number> {
  const response = await client.get(path);
  expect(response.status, response.text).toBe(200);
  return response.body.pagination.total_records as number;
}

async function storedParty(accountId: string, partyId: string) {
  const { data } = await db().entities.party.get({ accountId, partyId }).go({ consistent: true });
  return data;
}

/** A complete writable body for a kind (every field of section 2.6's writable table). */
function fullBody(kind: Kind): Record<string, unknown> {
  const body: Record<string, unknown> = {
    name: "Full Record",
    office_email: "office@example.com",
    office_phone: "+1 555 0100",
    office_fax: "+1 555 0101",
    url: "https://example.com/about",
    billing_region_id: 5,
    billing_country_id: 840,
    shipping_region_id: 6,
    shipping_country_id: 124,
    tax_rate1: 8.25,
    tax_rate2: 0,
  };
  for (const field of ADDRESS_FIELDS) body[field] = `${field} value`;
  if (kind !== "supplier") body.vat_number = "GB123456789";
  if (kind === "prospect") Object.assign(body, { sale_opportunity: "Big deal", closing_percentage: 40, prospect_date: "2026-03-15" });
  return body;
}

/** Every response of a burst must be 201; shows the failures' bodies otherwise. */
function expectAllCreated(responses: TestResponse[]) {
  expect(responses.filter((r) => r.status !== 201).map((r) => `${r.status} ${r.text}`)).toEqual([]);
}

const OTHER_PATHS: Record<Kind, string[]> = {
  customer: ["/prospects", "/suppliers"],
  prospect: ["/customers", "/suppliers"],
  supplier: ["/customers", "/prospects"],
};

describe.each(KINDS)("$path", ({ kind, path }) => {
  describe("field shape", () => {
    it("create returns 201 with exactly the fields of the kind, in order, nullable fields null", async () => {
      const { account, client } = await setup();
      const response = await client.post(path, { name: "Acme" });
      expect(response.status, response.text).toBe(201);
      const body = response.body;
      expect(Object.keys(body)).toEqual(expectedKeys(kind));
      expect(body.id).toMatch(UUID);
      expect(body.object).toBe(kind);
      expect(body.customer_number).toBe(1);
      expect(body.name).toBe("Acme");
      for (const field of nullableFields(kind)) expect(body[field], field).toBeNull();
      expect(body.document_count).toBe(0);
      expect(body.archived).toBe(false);
      expect(body.owner_user_id).toBe(account.ownerUserId);
      expect(body.custom_field_values).toEqual([]);
      expect(body.created_at).toMatch(ISO);
      expect(body.updated_at).toMatch(ISO);
      if (kind === "customer") expect(body.lifetime_revenue_total).toBe("0.0000");
      if (kind === "prospect") expect(body.closing_percentage).toBe(0);

      const fetched = await client.get(`${path}/${body.id}`);
      expect(fetched.status, fetched.text).toBe(200);
      expect(fetched.body).toEqual(body);
      expect(Object.keys(fetched.body)).toEqual(expectedKeys(kind));
    });

    it("accepts every writable field of the kind and echoes the shown ones", async () => {
      const { account, client } = await setup();
      const body = fullBody(kind);
      const created = await create(client, path, body);
      expect(Object.keys(created)).toEqual(expectedKeys(kind));
      for (const field of ["name", "office_email", "office_phone", "office_fax", "url", ...ADDRESS_FIELDS]) {
        expect(created[field], field).toBe(body[field]);
      }
      if (kind !== "supplier") expect(created.vat_number).toBe("GB123456789");
      if (kind === "prospect") {
        expect(created.sale_opportunity).toBe("Big deal");
        expect(created.closing_percentage).toBe(40);
        expect(created.prospect_date).toBe("2026-03-15");
      }
      const stored = await storedParty(account.accountId, created.id);
      expect(stored).toMatchObject({ billingRegionId: 5, billingCountryId: 840, shippingRegionId: 6, shippingCountryId: 124 });
      expect((await client.get(`${path}/${created.id}`)).body).toEqual(created);
    });
  });

  describe("numbers", () => {
    it("a failed create consumes no number", async () => {
      const { client } = await setup();
      const first = await create(client, path, { name: "One" });
      expect(first.customer_number).toBe(1);
      expectValidation(await client.post(path, { name: "" }), "name");
      // A reference failure is detected inside the numbering transaction: it must not consume a number either.
      expectValidation(await client.post(path, { name: "Bad ref", customer_label_id: randomUUID() }), "customer_label_id");
      const second = await create(client, path, { name: "Two" });
      expect(second.customer_number).toBe(2);
      expect(await total(client, path)).toBe(2);
    });

    it("parallel creates get distinct consecutive numbers", async () => {
      const { client } = await setup();
      const n = 8;
      const responses = await Promise.all(Array.from({ length: n }, (_, i) => client.post(path, { name: `Parallel ${i}` })));
      expectAllCreated(responses);
      const numbers = responses.map((r) => r.body.customer_number as number).sort((a, b) => a - b);
      expect(numbers).toEqual(Array.from({ length: n }, (_, i) => i + 1));
      expect(await total(client, path)).toBe(n);
      expect((await create(client, path, { name: "After" })).customer_number).toBe(n + 1);
    });
  });

  describe("validation", () => {
    it("rejects invalid fields with 422 validation_failed and creates nothing", async () => {
      const { client } = await setup();
      const post = (body: Record<string, unknown>) => client.post(path, body);

      expectValidation(await post({}), "name", "required");
      expectValidation(await post({ office_phone: "1" }), "name");
      expectValidation(await post({ name: "" }), "name");
      expectValidation(await post({ name: "   " }), "name");
      expectValidation(await post({ name: "x".repeat(256) }), "name");
      expectValidation(await post({ name: "ok", office_email: "e".repeat(256) }), "office_email");
      expectValidation(await post({ name: "ok", billing_city: "c".repeat(256) }), "billing_city");
      expectValidation(await post({ name: "ok", url: "not a url" }), "url");
      expectValidation(await post({ name: "ok", url: "ftp://x.com" }), "url");
      expectValidation(await post({ name: "ok", url: "https://" }), "url");
      for (const bad of [0, 1.5, "x", -3]) {
        expectValidation(await post({ name: "ok", billing_region_id: bad }), "billing_region_id");
      }
      expectValidation(await post({ name: "ok", shipping_country_id: 0 }), "shipping_country_id");
      expectValidation(await post({ name: "ok", tax_rate1: -1 }), "tax_rate1");
      expectValidation(await post({ name: "ok", tax_rate2: "abc" }), "tax_rate2");
      expectValidation(await post({ name: "ok", customer_label_id: "not-a-uuid" }), "customer_label_id");
      expectValidation(await post({ name: "ok", custom_field_values: "nope" }), "custom_field_values");
      expectValidation(await post({ name: "ok", nonsense: 1 }), "nonsense", "unknown_field");

      if (kind === "supplier") {
        expectValidation(await post({ name: "ok", vat_number: "GB1" }), "vat_number", "unknown_field");
        expectValidation(await post({ name: "ok", pricing_tier_id: randomUUID() }), "pricing_tier_id", "unknown_field");
      } else {
        expectValidation(await post({ name: "ok", vat_number: "v".repeat(25) }), "vat_number");
      }
      if (kind !== "prospect") {
        expectValidation(await post({ name: "ok", sale_opportunity: "deal" }), "sale_opportunity", "unknown_field");
        expectValidation(await post({ name: "ok", closing_percentage: 10 }), "closing_percentage", "unknown_field");
        expectValidation(await post({ name: "ok", prospect_date: "2026-01-01" }), "prospect_date", "unknown_field");
      } else {
        expectValidation(await post({ name: "ok", closing_percentage: 101 }), "closing_percentage");
        expectValidation(await post({ name: "ok", closing_percentage: -1 }), "closing_percentage");
        expectValidation(await post({ name: "ok", closing_percentage: 12.5 }), "closing_percentage");
        expectValidation(await post({ name: "ok", prospect_date: "2026-02-30" }), "prospect_date");
        expectValidation(await post({ name: "ok", prospect_date: "26-02-01" }), "prospect_date");
        expectValidation(await post({ name: "ok", sale_opportunity: "s".repeat(256) }), "sale_opportunity");
      }
      expect(await total(client, path)).toBe(0);

      // The boundaries that are accepted; the failures above consumed no number.
      const ok = await create(client, path, { name: "x".repeat(255), url: "https://example.com" });
      expect(ok.customer_number).toBe(1);
      expect(ok.url).toBe("https://example.com");
      await create(client, path, { name: "plain http", url: "http://example.com/path?q=1" });
      // Any valid http(s) URL is taken (spec 2.6, "valid URL"): a single-label host, an IP address with a port.
      for (const url of ["http://127.0.0.1:8080/x", "https://localhost", "http://[::1]:3000/"])
        expect((await create(client, path, { name: "any host", url })).url).toBe(url);
      await create(client, path, { name: "region", billing_region_id: 1, tax_rate1: 0, tax_rate2: 7.5 });
      if (kind !== "supplier") expect((await create(client, path, { name: "vat", vat_number: "v".repeat(24) })).vat_number).toBe("v".repeat(24));
      if (kind === "prospect") {
        const p = await create(client, path, { name: "dated", prospect_date: "2026-02-28", closing_percentage: 100 });
        expect(p.prospect_date).toBe("2026-02-28");
        expect(p.closing_percentage).toBe(100);
        // null sets it back to the 0 a prospect reads as; sending that 0 back then changes nothing.
        const cleared = await client.patch(`${path}/${p.id}`, { closing_percentage: null });
        expect(cleared.status, cleared.text).toBe(200);
        expect(cleared.body.closing_percentage).toBe(0);
        const again = await client.patch(`${path}/${p.id}`, { closing_percentage: 0 });
        expect(again.body.updated_at).toBe(cleared.body.updated_at);
      }
    });

    it("rejects invalid fields on PATCH and leaves the record unchanged", async () => {
      const { client } = await setup();
      const created = await create(client, path, { name: "Keep", url: "https://keep.example.com" });
      expectValidation(await client.patch(`${path}/${created.id}`, { name: "" }), "name");
      expectValidation(await client.patch(`${path}/${created.id}`, { name: null }), "name");
      expectValidation(await client.patch(`${path}/${created.id}`, { url: "ftp://x.com" }), "url");
      expectValidation(await put(client, `${path}/${created.id}`, { tax_rate1: -5 }), "tax_rate1");
      if (kind === "supplier") {
        expectValidation(await client.patch(`${path}/${created.id}`, { vat_number: "GB1" }), "vat_number", "unknown_field");
      } else {
        expectValidation(await client.patch(`${path}/${created.id}`, { vat_number: "v".repeat(25) }), "vat_number");
      }
      expect((await client.get(`${path}/${created.id}`)).body).toEqual(created);
    });
  });

  describe("references", () => {
    it("accepts the account's label and pricing tier; rejects missing and other accounts' ones", async () => {
      const { account, client } = await setup();
      const other = await newAccount();
      const { customer_label_id: label } = await createCustomerLabel({ accountId: account.accountId, name: "VIP" });
      const { customer_label_id: foreignLabel } = await createCustomerLabel({ accountId: other.accountId, name: "VIP" });
      const { pricing_tier_id: tier } = await createPricingTier({ accountId: account.accountId, name: "Wholesale" });
      const { pricing_tier_id: foreignTier } = await createPricingTier({ accountId: other.accountId, name: "Wholesale" });

      for (const bad of [randomUUID(), foreignLabel]) {
        expectValidation(await client.post(path, { name: "Bad label", customer_label_id: bad }), "customer_label_id");
      }
      if (kind !== "supplier") {
        for (const bad of [randomUUID(), foreignTier]) {
          const response = await client.post(path, { name: "Bad tier", pricing_tier_id: bad });
          expectValidation(response, "pricing_tier_id");
          expect(response.text).not.toContain("Wholesale");
        }
      }
      expect(await total(client, path)).toBe(0);

      const body: Record<string, unknown> = { name: "Good refs", customer_label_id: label };
      if (kind !== "supplier") body.pricing_tier_id = tier;
      const created = await create(client, path, body);
      expect(created.customer_number).toBe(1);
      if (kind !== "supplier") expect(created.pricing_tier_id).toBe(tier);
      expect(await storedParty(account.accountId, created.id)).toMatchObject({ customerLabelId: label });

      // Updates check references the same way and change nothing when one is bad.
      expectValidation(await client.patch(`${path}/${created.id}`, { customer_label_id: foreignLabel }), "customer_label_id");
      if (kind !== "supplier") {
        expectValidation(await client.patch(`${path}/${created.id}`, { pricing_tier_id: foreignTier }), "pricing_tier_id");
        const cleared = await client.patch(`${path}/${created.id}`, { pricing_tier_id: null });
        expect(cleared.status, cleared.text).toBe(200);
        expect(cleared.body.pricing_tier_id).toBeNull();
      }
      expect(await storedParty(account.accountId, created.id)).toMatchObject({ customerLabelId: label });
      expect(await total(client, path)).toBe(1);
    });
  });

  describe("custom fields", () => {
    it("round-trips values in order and validates ids against kind and account", async () => {
      const { account, client } = await setup();
      const otherKind: Kind = kind === "supplier" ? "customer" : "supplier";
      const other = await newAccount();
      const [f1, f2, f3] = (
        await Promise.all(["Region code", "Tier", "Notes"].map((name) => createCustomField({ accountId: account.accountId, kind, name })))
      ).map((field) => field.custom_field_id) as [string, string, string];
      const { custom_field_id: wrongKind } = await createCustomField({ accountId: account.accountId, kind: otherKind, name: "Other kind" });
      const { custom_field_id: foreign } = await createCustomField({ accountId: other.accountId, kind, name: "Foreign" });

      const values = [
        { custom_field_id: f2, value: "gold" },
        { custom_field_id: f1, value: "EU-1" },
        { custom_field_id: f3, value: "hello" },
      ];
      const created = await create(client, path, { name: "With fields", custom_field_values: values });
      expect(created.custom_field_values).toEqual(values);
      expect((await client.get(`${path}/${created.id}`)).body.custom_field_values).toEqual(values);

      // Wrong kind, other account, duplicates: 422 naming the index in the request.
      expectValidation(
        await client.post(path, {
          name: "x",
          custom_field_values: [
            { custom_field_id: f1, value: "a" },
            { custom_field_id: wrongKind, value: "b" },
          ],
        }),
        "custom_field_values[1].custom_field_id",
      );
      expectValidation(
        await client.post(path, { name: "x", custom_field_values: [{ custom_field_id: foreign, value: "a" }] }),
        "custom_field_values[0].custom_field_id",
      );
      expectValidation(
        await client.post(path, {
          name: "x",
          custom_field_values: [
            { custom_field_id: f1, value: "" },
            { custom_field_id: f2, value: "b" },
            { custom_field_id: foreign, value: "c" },
          ],
        }),
        "custom_field_values[2].custom_field_id",
      );
      expectValidation(
        await client.post(path, {
          name: "x",
          custom_field_values: [
            { custom_field_id: f1, value: "a" },
            { custom_field_id: f1, value: "b" },
          ],
        }),
        "custom_field_values[1].custom_field_id",
      );
      // One id in two casings is one field: a duplicate (422, not a failed write), on create and PATCH.
      const twoCasings = [
        { custom_field_id: f1, value: "a" },
        { custom_field_id: f1.toUpperCase(), value: "b" },
      ];
      const duplicated = await client.post(path, { name: "x", custom_field_values: twoCasings });
      expectValidation(duplicated, "custom_field_values[1].custom_field_id", "duplicate");
      expectValidation(await client.patch(`${path}/${created.id}`, { custom_field_values: twoCasings }), "custom_field_values[1].custom_field_id", "duplicate");
      expectValidation(
        await client.patch(`${path}/${created.id}`, { custom_field_values: [{ custom_field_id: wrongKind, value: "a" }] }),
        "custom_field_values[0].custom_field_id",
      );
      expect(await total(client, path)).toBe(1);
      expect((await client.get(`${path}/${created.id}`)).body.custom_field_values).toEqual(values);

      // An id sent in upper case is stored and shown as the field's own (lower case) id.
      const upper = await create(client, path, { name: "Upper", custom_field_values: [{ custom_field_id: ` ${f3.toUpperCase()} `, value: "up" }] });
      expect(upper.custom_field_values).toEqual([{ custom_field_id: f3, value: "up" }]);
      expect((await client.get(`${path}/${upper.id}`)).body.custom_field_values).toEqual([{ custom_field_id: f3, value: "up" }]);
      expect((await client.request("DELETE", `${path}/${upper.id}`)).status).toBe(200);

      // PATCH without custom_field_values keeps them.
      const renamed = await client.patch(`${path}/${created.id}`, { name: "Renamed" });
      expect(renamed.status, renamed.text).toBe(200);
      expect(renamed.body.custom_field_values).toEqual(values);

      // The full list with one value blank: that value is gone, the rest keep their order.
      const blanked = await client.patch(`${path}/${created.id}`, {
        custom_field_values: [values[0], { custom_field_id: f1, value: "" }, values[2]],
      });
      expect(blanked.status, blanked.text).toBe(200);
      expect(blanked.body.custom_field_values).toEqual([values[0], values[2]]);
      const nulled = await client.patch(`${path}/${created.id}`, {
        custom_field_values: [values[0], { custom_field_id: f3, value: null }],
      });
      expect(nulled.status, nulled.text).toBe(200);
      expect(nulled.body.custom_field_values).toEqual([values[0]]);

      // A list replaces the whole set.
      const replaced = await client.patch(`${path}/${created.id}`, { custom_field_values: [{ custom_field_id: f3, value: "new" }] });
      expect(replaced.body.custom_field_values).toEqual([{ custom_field_id: f3, value: "new" }]);
      const emptied = await put(client, `${path}/${created.id}`, { custom_field_values: [] });
      expect(emptied.status, emptied.text).toBe(200);
      expect(emptied.body.custom_field_values).toEqual([]);
      expect((await client.get(`${path}/${created.id}`)).body.custom_field_values).toEqual([]);
    });
  });

  describe("GET one, PATCH and PUT", () => {
    it.each(["PATCH", "PUT"] as const)("%s is partial; null and blank clear; number and created_at stay", async (method) => {
      const { client } = await setup();
      const created = await create(client, path, fullBody(kind));
      await new Promise((resolve) => setTimeout(resolve, 5));
      const send = (body: Record<string, unknown>) => client.request(method, `${path}/${created.id}`, body);

      const first = await send({ office_phone: "+44 20 0000 0000", office_email: null, billing_city: "" });
      expect(first.status, first.text).toBe(200);
      expect(Object.keys(first.body)).toEqual(expectedKeys(kind));
      expect(first.body).toEqual({
        ...created,
        office_phone: "+44 20 0000 0000",
        office_email: null,
        billing_city: null,
        updated_at: expect.any(String),
      });
      expect(first.body.updated_at > created.updated_at, `${first.body.updated_at} > ${created.updated_at}`).toBe(true);
      expect(first.body.created_at).toBe(created.created_at);
      expect(first.body.customer_number).toBe(created.customer_number);

      const clear: Record<string, unknown> = { url: null, name: "  Trimmed Name  " };
      if (kind !== "supplier") clear.vat_number = null;
      if (kind === "prospect") Object.assign(clear, { sale_opportunity: null, prospect_date: null, closing_percentage: 75 });
      const second = await send(clear);
      expect(second.status, second.text).toBe(200);
      expect(second.body.name).toBe("Trimmed Name");
      expect(second.body.url).toBeNull();
      expect(second.body.office_phone).toBe("+44 20 0000 0000");
      expect(second.body.shipping_city).toBe("shipping_city value");
      if (kind !== "supplier") expect(second.body.vat_number).toBeNull();
      if (kind === "prospect") {
        expect(second.body.sale_opportunity).toBeNull();
        expect(second.body.prospect_date).toBeNull();
        expect(second.body.closing_percentage).toBe(75);
      }
      expect(second.body.updated_at >= first.body.updated_at).toBe(true);
      expect(second.body.created_at).toBe(created.created_at);
      expect(second.body.customer_number).toBe(created.customer_number);

      // An empty body changes nothing it was not asked to.
      const empty = await send({});
      expect(empty.status, empty.text).toBe(200);
      expect({ ...empty.body, updated_at: null }).toEqual({ ...second.body, updated_at: null });
      expect((await client.get(`${path}/${created.id}`)).body).toEqual(empty.body);
    });

    it("is 404 resource_missing for unknown, malformed, other-kind and other-account ids", async () => {
      const { client } = await setup();
      const theirs = await setup();
      const mine = await create(client, path, { name: "Mine" });
      const foreign = await create(theirs.client, path, { name: "Theirs" });
      const otherKindRecords = await Promise.all(OTHER_PATHS[kind].map((p) => create(client, p, { name: `Other ${p}` })));

      const missingIds = [
        `${path}/${randomUUID()}`,
        `${path}/not-a-uuid`,
        `${path}/12345`,
        `${path}/${foreign.id}`,
        ...otherKindRecords.map((record) => `${path}/${record.id}`),
        ...OTHER_PATHS[kind].map((p) => `${p}/${mine.id}`),
      ];
      for (const target of missingIds) {
        expectError(await client.get(target), 404, "resource_missing");
        expectError(await client.patch(target, { name: "Hijack" }), 404, "resource_missing");
        expectError(await put(client, target, { name: "Hijack" }), 404, "resource_missing");
        expectError(await del(client, target), 404, "resource_missing");
      }
      // Ids are case-insensitive UUIDs: an upper-case id names the same record.
      const upper = await client.get(`${path}/${mine.id.toUpperCase()}`);
      expect(upper.status, upper.text).toBe(200);
      expect(upper.body.id).toBe(mine.id);
      expect((await theirs.client.get(`${path}/${foreign.id}`)).body.name).toBe("Theirs");
      expect((await client.get(`${path}/${mine.id}`)).body.name).toBe("Mine");
      for (const record of otherKindRecords) expect(record.name).not.toBe("Hijack");
      for (const p of OTHER_PATHS[kind]) expect(await total(client, p)).toBe(1);
    });
  });

  describe("list", () => {
    it("orders by name case-insensitively and paginates", async () => {
      const { client } = await setup();
      const names = ["bravo", "Echo", "Alpha", "golf", "Delta", "charlie", "Foxtrot"];
      for (const name of names) await create(client, path, { name });
      const other = await setup();
      await create(other.client, path, { name: "Aardvark (other account)" });

      const all = await client.get(path);
      expect(all.status, all.text).toBe(200);
      expect(all.body).toMatchObject({
        object: "list",
        url: `/api/v3${path}`,
        has_more: false,
        pagination: { page: 1, per_page: 20, total_pages: 1, total_records: 7 },
      });
      expect(all.body.data.map((r: { name: string }) => r.name)).toEqual(["Alpha", "bravo", "charlie", "Delta", "Echo", "Foxtrot", "golf"]);
      for (const record of all.body.data) expect(Object.keys(record)).toEqual(expectedKeys(kind));

      const page = async (n: number) => {
        const response = await client.get(path, { limit: 3, page: n });
        expect(response.status, response.text).toBe(200);
        return response.body;
      };
      const p1 = await page(1);
      expect(p1.data.map((r: { name: string }) => r.name)).toEqual(["Alpha", "bravo", "charlie"]);
      expect(p1.has_more).toBe(true);
      expect(p1.pagination).toEqual({ page: 1, per_page: 3, total_pages: 3, total_records: 7 });
      const p2 = await page(2);
      expect(p2.data.map((r: { name: string }) => r.name)).toEqual(["Delta", "Echo", "Foxtrot"]);
      expect(p2.has_more).toBe(true);
      expect(p2.pagination).toEqual({ page: 2, per_page: 3, total_pages: 3, total_records: 7 });
      const p3 = await page(3);
      expect(p3.data.map((r: { name: string }) => r.name)).toEqual(["golf"]);
      expect(p3.has_more).toBe(false);
      expect(p3.pagination).toEqual({ page: 3, per_page: 3, total_pages: 3, total_records: 7 });
      const p4 = await page(4);
      expect(p4.data).toEqual([]);
      expect(p4.has_more).toBe(false);
      expect.soft(p4.pagination, "a page past the end keeps the real total").toEqual({ page: 4, per_page: 3, total_pages: 3, total_records: 7 });

      // page and limit are normalized, never rejected (section 8).
      const normalized = await client.get(path, { page: 0, limit: 500 });
      expect(normalized.status, normalized.text).toBe(200);
      expect(normalized.body.pagination).toEqual({ page: 1, per_page: 100, total_pages: 1, total_records: 7 });
      const tiny = await client.get(path, { limit: 0 });
      expect(tiny.body.pagination).toEqual({ page: 1, per_page: 1, total_pages: 7, total_records: 7 });
      expect(tiny.body.data.map((r: { name: string }) => r.name)).toEqual(["Alpha"]);

      // Renaming moves a record in the order.
      const alpha = all.body.data[0];
      await client.patch(`${path}/${alpha.id}`, { name: "zulu" });
      const renamed = await client.get(path);
      expect(renamed.body.data.map((r: { name: string }) => r.name)).toEqual(["bravo", "charlie", "Delta", "Echo", "Foxtrot", "golf", "zulu"]);
    });

    it("q searches name and office email substrings case-insensitively; a number also matches the exact number", async () => {
      const { client } = await setup();
      // Numbers 1..13 in creation order; no name or email below contains a digit unless stated.
      const specs: { name: string; office_email?: string }[] = [
        { name: "Acme Corp", office_email: "sales@acme.example" }, // 1
        { name: "Blue Widgets" }, // 2
        { name: "Cobalt Industries" }, // 3
        { name: "acme two" }, // 4
        { name: "Delta Supplies", office_email: "Orders@BigBox.example" }, // 5
        { name: "Room 3B" }, // 6: name contains "3"
        { name: "Echo" }, // 7
        { name: "Foxtrot", office_email: "x3y@mail.example" }, // 8: email contains "3"
        { name: "Golf" }, // 9
        { name: "Hotel" }, // 10
        { name: "India" }, // 11
        { name: "Juliet" }, // 12
        { name: "Kilo" }, // 13
      ];
      const records: Record<string, any>[] = [];
      for (const spec of specs) records.push(await create(client, path, spec));
      expect(records.map((r) => r.customer_number)).toEqual(specs.map((_, i) => i + 1));

      const search = async (q: string) => {
        const response = await client.get(path, { q });
        expect(response.status, response.text).toBe(200);
        return response.body;
      };
      const names = (body: { data: { name: string }[] }) => body.data.map((r) => r.name);

      const acme = await search("ACM");
      expect(names(acme)).toEqual(["Acme Corp", "acme two"]);
      expect(acme.pagination).toEqual({ page: 1, per_page: 20, total_pages: 1, total_records: 2 });
      expect(acme.url).toBe(`/api/v3${path}`);
      expect(names(await search("widget"))).toEqual(["Blue Widgets"]);
      expect(names(await search("bigbox"))).toEqual(["Delta Supplies"]);
      expect(names(await search("@ACME.example"))).toEqual(["Acme Corp"]);
      // "3" matches number 3, the name "Room 3B" and the email "x3y@...", not number 13.
      expect(names(await search("3"))).toEqual(["Cobalt Industries", "Foxtrot", "Room 3B"]);
      expect(names(await search("12"))).toEqual(["Juliet"]);
      expect(names(await search("1"))).toEqual(["Acme Corp"]);

      const none = await search("zzz-no-match");
      expect(none).toEqual({
        object: "list",
        url: `/api/v3${path}`,
        has_more: false,
        data: [],
        pagination: { page: 1, per_page: 20, total_pages: 0, total_records: 0 },
      });
      expect((await search("99")).data).toEqual([]);

      const paged = await client.get(path, { q: "e", limit: 2, page: 2 });
      expect(paged.status, paged.text).toBe(200);
      expect(paged.body.pagination.per_page).toBe(2);
      expect(paged.body.data).toHaveLength(2);
      expect(paged.body.has_more).toBe(true);
    });
  });

  describe("record visibility", () => {
    it("a user without records.view_all sees and changes only their own records", async () => {
      const { account, client: owner } = await setup();
      const staffUser = await newUser(account, { permissions: [] });
      const viewerUser = await newUser(account, { permissions: ["records.view_all"] });
      const staff = api().withKey(staffUser.key);
      const viewer = api().withKey(viewerUser.key);

      const a = await create(owner, path, { name: "Owner A" });
      const b = await create(owner, path, { name: "Owner B" });
      const s = await create(staff, path, { name: "Staff S" });
      expect(s.owner_user_id).toBe(staffUser.userId);
      expect(a.owner_user_id).toBe(account.ownerUserId);

      const staffList = await staff.get(path);
      expect(staffList.status, staffList.text).toBe(200);
      expect(staffList.body.data.map((r: { id: string }) => r.id)).toEqual([s.id]);
      expect(staffList.body.pagination.total_records).toBe(1);
      expect(staffList.body.pagination.total_pages).toBe(1);
      expect((await staff.get(path, { q: "Owner" })).body.data).toEqual([]);
      expect((await staff.get(path, { q: String(a.customer_number) })).body.data).toEqual([]);

      for (const target of [a, b]) {
        expectError(await staff.get(`${path}/${target.id}`), 404, "resource_missing");
        expectError(await staff.patch(`${path}/${target.id}`, { name: "Stolen" }), 404, "resource_missing");
        expectError(await put(staff, `${path}/${target.id}`, { name: "Stolen" }), 404, "resource_missing");
        expectError(await del(staff, `${path}/${target.id}`), 404, "resource_missing");
      }
      const own = await staff.patch(`${path}/${s.id}`, { office_phone: "555" });
      expect(own.status, own.text).toBe(200);
      expect(own.body.owner_user_id).toBe(staffUser.userId);

      const viewerList = await viewer.get(path);
      expect(viewerList.body.data.map((r: { name: string }) => r.name)).toEqual(["Owner A", "Owner B", "Staff S"]);
      expect(viewerList.body.pagination.total_records).toBe(3);
      const updated = await viewer.patch(`${path}/${a.id}`, { name: "Owner A2" });
      expect(updated.status, updated.text).toBe(200);
      expect(updated.body.owner_user_id).toBe(account.ownerUserId);
      expect((await viewer.get(`${path}/${s.id}`)).status).toBe(200);

      const ownerList = await owner.get(path);
      expect(ownerList.body.pagination.total_records).toBe(3);
      expect(ownerList.body.data.map((r: { name: string }) => r.name)).toEqual(["Owner A2", "Owner B", "Staff S"]);
      expect((await owner.get(`${path}/${a.id}`)).body.name).toBe("Owner A2");

      // Staff deletes its own record: its own count drops, the account's too.
      const deleted = await del(staff, `${path}/${s.id}`);
      expect(deleted.status, deleted.text).toBe(200);
      expect((await staff.get(path)).body.pagination.total_records).toBe(0);
      expect(await total(owner, path)).toBe(2);
    });
  });

  describe("DELETE", () => {
    it("deletes a record without documents", async () => {
      const { client } = await setup();
      const keep = await create(client, path, { name: "Keep" });
      const gone = await create(client, path, { name: "Gone" });
      expect(await total(client, path)).toBe(2);

      const response = await del(client, `${path}/${gone.id}`);
      expect(response.status, response.text).toBe(200);
      expect(response.body).toEqual({ id: gone.id, object: kind, deleted: true });
      expect(Object.keys(response.body)).toEqual(["id", "object", "deleted"]);

      expectError(await client.get(`${path}/${gone.id}`), 404, "resource_missing");
      expectError(await del(client, `${path}/${gone.id}`), 404, "resource_missing");
      const list = await client.get(path);
      expect(list.body.data.map((r: { id: string }) => r.id)).toEqual([keep.id]);
      expect(list.body.pagination.total_records).toBe(1);
      // Numbers are never reused.
      expect((await create(client, path, { name: "Next" })).customer_number).toBe(3);
    });

    it("refuses to delete a record with documents (422 on document_count) until they are gone", async () => {
      const { account, client } = await setup();
      const party = await create(client, path, { name: "Busy" });
      await writeTransaction((tx) =>
        addDocumentActivity(tx, { accountId: account.accountId, partyId: party.id }, { documents: 2, revenueMinor: 1234500, invoiceDate: "2026-11-01" }),
      );

      const fetched = await client.get(`${path}/${party.id}`);
      expect(fetched.status, fetched.text).toBe(200);
      expect(fetched.body.document_count).toBe(2);
      if (kind === "customer") {
        expect(fetched.body.lifetime_revenue_total).toBe("123.4500");
        expect(fetched.body.last_invoice_date).toBe("2026-11-01");
      }
      expect(Object.keys(fetched.body)).toEqual(expectedKeys(kind));

      const refused = await del(client, `${path}/${party.id}`);
      expectValidation(refused, "document_count");
      expect((await client.get(`${path}/${party.id}`)).status).toBe(200);
      expect(await total(client, path)).toBe(1);

      // An update keeps the document figures.
      const patched = await client.patch(`${path}/${party.id}`, { name: "Still busy" });
      expect(patched.body.document_count).toBe(2);
      if (kind === "customer") expect(patched.body.lifetime_revenue_total).toBe("123.4500");

      await writeTransaction((tx) => addDocumentActivity(tx, { accountId: account.accountId, partyId: party.id }, { documents: -2 }));
      expect((await client.get(`${path}/${party.id}`)).body.document_count).toBe(0);
      const deleted = await del(client, `${path}/${party.id}`);
      expect(deleted.status, deleted.text).toBe(200);
      expect(deleted.body).toEqual({ id: party.id, object: kind, deleted: true });
      expect(await total(client, path)).toBe(0);
    });
  });

  describe("scopes", () => {
    it(`a key with only ${path.slice(1)}:read can read but not write or delete, nor read other kinds`, async () => {
      const { account, client } = await setup();
      const collection = path.slice(1);
      const existing = await create(client, path, { name: "Existing" });
      const { key } = await newKey(account.ownerUserId, { scopes: [`${collection}:read`] });
      const reader = api().withKey(key);

      const list = await reader.get(path);
      expect(list.status, list.text).toBe(200);
      expect(list.body.pagination.total_records).toBe(1);
      expect((await reader.get(`${path}/${existing.id}`)).status).toBe(200);

      expectError(await reader.post(path, { name: "Nope" }), 403, "insufficient_scope", `${collection}:write`);
      expectError(await reader.patch(`${path}/${existing.id}`, { name: "Nope" }), 403, "insufficient_scope", `${collection}:write`);
      expectError(await put(reader, `${path}/${existing.id}`, { name: "Nope" }), 403, "insufficient_scope", `${collection}:write`);
      expectError(await del(reader, `${path}/${existing.id}`), 403, "insufficient_scope", `${collection}:delete`);
      for (const other of OTHER_PATHS[kind]) {
        expectError(await reader.get(other), 403, "insufficient_scope", `${other.slice(1)}:read`);
      }
      expect(await total(client, path)).toBe(1);
      expect((await client.get(`${path}/${existing.id}`)).body.name).toBe("Existing");
    });
  });

  describe("idempotency", () => {
    it("POST and PATCH replay with an optional Idempotency-Key; without one, each POST creates", async () => {
      const { client } = await setup();
      const key = idempotencyKey();
      const first = await client.post(path, { name: "Once" }, { idempotencyKey: key });
      expect(first.status, first.text).toBe(201);
      expect(first.headers.get("idempotent-replayed")).not.toBe("true");
      const replay = await client.post(path, { name: "Once" }, { idempotencyKey: key });
      expect(replay.status, replay.text).toBe(201);
      expect(replay.headers.get("idempotent-replayed")).toBe("true");
      expect(replay.body).toEqual(first.body);
      expect(replay.body.id).toBe(first.body.id);
      expect(replay.body.customer_number).toBe(first.body.customer_number);
      expect(await total(client, path)).toBe(1);

      // No key is fine too; the replay consumed no number.
      const plain = await create(client, path, { name: "No key" });
      expect(plain.customer_number).toBe(first.body.customer_number + 1);

      const patchKey = idempotencyKey();
      const patched = await client.patch(`${path}/${first.body.id}`, { office_phone: "1" }, { idempotencyKey: patchKey });
      expect(patched.status, patched.text).toBe(200);
      const patchReplay = await client.patch(`${path}/${first.body.id}`, { office_phone: "1" }, { idempotencyKey: patchKey });
      expect(patchReplay.status, patchReplay.text).toBe(200);
      expect(patchReplay.headers.get("idempotent-replayed")).toBe("true");
      expect(patchReplay.body).toEqual(patched.body);
      expect((await client.get(`${path}/${first.body.id}`)).body.updated_at).toBe(patched.body.updated_at);

      expectError(await client.post(path, { name: "Different" }, { idempotencyKey: key }), 409, "idempotency_key_reused");
      expect(await total(client, path)).toBe(2);
    });
  });
});

describe("number sequences across kinds", () => {
  it("customers and prospects share one sequence; suppliers have their own", async () => {
    const { client } = await setup();
    expect((await create(client, "/customers", { name: "C1" })).customer_number).toBe(1);
    expect((await create(client, "/prospects", { name: "P2" })).customer_number).toBe(2);
    expect((await create(client, "/suppliers", { name: "S1" })).customer_number).toBe(1);
    expect((await create(client, "/customers", { name: "C3" })).customer_number).toBe(3);
    expect((await create(client, "/suppliers", { name: "S2" })).customer_number).toBe(2);
    expectValidation(await client.post("/prospects", { name: "bad", closing_percentage: 101 }), "closing_percentage");
    expectValidation(await client.post("/suppliers", { name: "" }), "name");
    expect((await create(client, "/prospects", { name: "P4" })).customer_number).toBe(4);
    expect((await create(client, "/suppliers", { name: "S3" })).customer_number).toBe(3);

    // Each kind counts its own records.
    expect(await total(client, "/customers")).toBe(2);
    expect(await total(client, "/prospects")).toBe(2);
    expect(await total(client, "/suppliers")).toBe(3);

    // Another account starts its own sequences.
    const other = await setup();
    expect((await create(other.client, "/prospects", { name: "P1" })).customer_number).toBe(1);
  });

  it("a burst of 16 parallel customer and prospect creates shares one gapless sequence", async () => {
    const { client } = await setup();
    const responses = await Promise.all(Array.from({ length: 16 }, (_, i) => client.post(i % 2 === 0 ? "/customers" : "/prospects", { name: `Mixed ${i}` })));
    expectAllCreated(responses);
    expect(responses.map((r) => r.body.customer_number as number).sort((a, b) => a - b)).toEqual(Array.from({ length: 16 }, (_, i) => i + 1));
    expect(await total(client, "/customers")).toBe(8);
    expect(await total(client, "/prospects")).toBe(8);
  });
});
