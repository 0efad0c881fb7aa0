import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { useApiServer, type ApiClient, type TestResponse } from "../support/api.js";
import { expectValidation } from "../support/assertions.js";
import { idempotencyKey, newAccount } from "../support/fixtures.js";
import { createCustomField } from "../../lib/domain/admin/reference-data.js";

/**
 * Bounded input (issue 8, point 3): money and rates take at most 12 integer digits and 4
 * decimals, quantities are finite and bounded, validation details are capped, a body over 1 MB
 * is 413, texts refuse NUL and unpaired surrogates; every refusal changes nothing.
 */
const api = useApiServer();

async function owner(): Promise<ApiClient> {
  return api().withKey((await newAccount()).ownerKey);
}

const customerTotal = async (client: ApiClient) => (await client.get("/customers", { limit: 1 })).body.pagination.total_records as number;

describe("connected: bounded input", () => {
  it("money: 12 integer digits and 4 decimals, as numbers (15 significant digits at most) or numeric strings; 1e300 and a 500,000-digit string are 422", async () => {
    const client = await owner();
    const ok = await client.post("/items", { name: "Max", price: "999999999999.9999", cost: 99999999999.9999 });
    expect(ok.status, ok.text).toBe(201);
    expect(ok.body).toMatchObject({ price: "999999999999.9999", cost: "99999999999.9999" });
    // As a JSON number, 16 digits may read as another amount (999999999999.9997 as ...9998): refused, asking for a string.
    const sixteen = await client.post("/items", { name: "Bad", price: 999999999999.9999 });
    expectValidation(sixteen, "price");
    expect(sixteen.body.error.details[0].message).toContain("send it as a string");
    for (const price of [1e300, "1".repeat(500_000), "1234567890123", 12.34567, "12.34567", "1e3", -1, "NaN", ""]) {
      const refused = await client.post("/items", { name: "Bad", price });
      expectValidation(refused, "price");
      expect(refused.text.length).toBeLessThan(4000);
    }
    // A negative amount as text says what is wrong with it.
    const negative = await client.post("/items", { name: "Bad", price: "-1.0000" });
    expectValidation(negative, "price");
    expect(negative.body.error.details[0].message).toContain("not negative");
    const list = await client.get("/items", { limit: 1 });
    expect(list.body.pagination.total_records).toBe(1);
  });

  it("documents that move money total at most 900000000000.0000 (422 on lines, nothing written); an estimate above it is kept but cannot be converted", async () => {
    const client = await owner();
    const customer = (await client.post("/customers", { name: "Big spender" })).body;
    const supplier = (await client.post("/suppliers", { name: "Big supplier" })).body;
    const location = (await client.post("/locations", { name: "Main", short_name: "M" }, { idempotencyKey: idempotencyKey() })).body;
    const huge = [{ name: "Fee", unit_price: "999999999999.9999", tax_rate: 0, tax_2_rate: 0 }];
    const tooLarge = (response: TestResponse) => {
      expectValidation(response, "lines", "too_large");
      expect(response.body.error.details[0].message).toContain("900000000000.0000");
    };
    tooLarge(await client.post("/invoices", { customer_id: customer.id, lines: huge }));
    tooLarge(await client.post("/sales-orders", { customer_id: customer.id, location_id: location.id, lines: huge }));
    tooLarge(
      await client.post("/purchase-orders", { supplier_id: supplier.id, location_id: location.id, lines: [{ name: "Fee", unit_cost: "999999999999.9999" }] }),
    );
    // At the bound: created, paid in full, and the customer's revenue exact.
    const top = await client.post("/invoices", { customer_id: customer.id, lines: [{ name: "Fee", unit_price: "900000000000", tax_rate: 0, tax_2_rate: 0 }] });
    expect(top.status, top.text).toBe(201);
    expect((await client.post(`/invoices/${top.body.id}/payments`, { amount: "900000000000" })).status).toBe(201);
    expect((await client.get(`/invoices/${top.body.id}`)).body).toMatchObject({ amount_paid: "900000000000.0000", amount_due: "0.0000" });
    // An update that would pass it changes nothing; the fee that takes it past is named.
    const small = (await client.post("/invoices", { customer_id: customer.id, lines: [{ name: "Fee", unit_price: "1", tax_rate: 0, tax_2_rate: 0 }] })).body;
    const byFee = await client.patch(`/invoices/${small.id}`, { shipping_fee: "999999999999.9999" });
    expectValidation(byFee, "shipping_fee", "too_large");
    expect(byFee.body.error.details[0].message).toContain("900000000000.0000");
    expect((await client.get(`/invoices/${small.id}`)).body.total).toBe("1.0000");
    // Estimates move no money: kept exact, but a conversion to an invoice is refused the same way.
    const estimate = await client.post("/estimates", { customer_id: customer.id, lines: huge });
    expect(estimate.status, estimate.text).toBe(201);
    expect(estimate.body.total).toBe("999999999999.9999");
    tooLarge(await client.post(`/estimates/${estimate.body.id}/convert-to-invoice`, {}));
    expect((await client.get("/invoices", { limit: 1 })).body.pagination.total_records).toBe(2);
    expect((await client.get(`/customers/${customer.id}`)).body).toMatchObject({ document_count: 3, lifetime_revenue_total: "900000000001.0000" });
    // Revenue past 2^53 ten-thousandths (about 900719925474) stays exact and readable.
    for (let i = 0; i < 10; i++) {
      const more = await client.post("/invoices", {
        customer_id: customer.id,
        lines: [{ name: "Fee", unit_price: "899999999999.9997", tax_rate: 0, tax_2_rate: 0 }],
      });
      expect(more.status, more.text).toBe(201);
    }
    expect((await client.get(`/customers/${customer.id}`)).body.lifetime_revenue_total).toBe("9900000000000.9970");
    expect((await client.get("/customers", { q: "Big spender" })).body.data[0].lifetime_revenue_total).toBe("9900000000000.9970");
  });

  it("rates: 0 to 100 with at most 4 decimals", async () => {
    const client = await owner();
    const ok = await client.post("/customers", { name: "Taxed", tax_rate1: "8.25", tax_rate2: 0.0001 });
    expect(ok.status, ok.text).toBe(201);
    for (const tax_rate1 of [101, -1, 1e300, "8.123456", "abc"]) expectValidation(await client.post("/customers", { name: "Bad", tax_rate1 }), "tax_rate1");
    expect(await customerTotal(client)).toBe(1);
  });

  it("quantities are finite, bounded and at most 4 decimals; a change too small to move stock is refused and records nothing", async () => {
    const client = await owner();
    const location = await client.post("/locations", { name: "Main", short_name: "M" }, { idempotencyKey: idempotencyKey() });
    const item = await client.post("/items", { name: `Bolt ${randomUUID().slice(0, 6)}` });
    for (const quantity of [0.00001, 1e10, -1e10, 1e300, 0]) {
      expectValidation(await client.post(`/items/${item.body.id}/adjustments`, { location_id: location.body.id, quantity }), "quantity");
    }
    expectValidation(await client.post("/items", { name: "T", threshold: 1e300 }), "threshold");
    const history = await client.get(`/items/${item.body.id}/adjustments`);
    expect(history.body.pagination.total_records).toBe(0);
    expect((await client.get(`/items/${item.body.id}`)).body.quantity).toBe(0);
  });

  it("a body of 20,000 unknown fields gets a small 422 with at most 50 details", async () => {
    const client = await owner();
    const body: Record<string, unknown> = { name: "Many" };
    for (let i = 0; i < 20_000; i++) body[`field_${i}`] = i;
    const refused = await client.post("/customers", body);
    expectValidation(refused, "field_0", "unknown_field");
    expect(refused.body.error.details.length).toBe(50);
    expect(refused.body.error.message).toMatch(/and 19999 more/);
    expect(refused.text.length).toBeLessThan(10_000);
    expect(await customerTotal(client)).toBe(0);
  });

  it("lines that copy a long item description past a document's storage limit are 422 too_large on lines on every kind, nothing written, no number used", async () => {
    const client = await owner();
    const customer = (await client.post("/customers", { name: "Long lines" })).body;
    const supplier = (await client.post("/suppliers", { name: "Long supplier" })).body;
    const [from, to] = [
      (await client.post("/locations", { name: "From", short_name: "F" }, { idempotencyKey: idempotencyKey() })).body,
      (await client.post("/locations", { name: "To", short_name: "T" }, { idempotencyKey: idempotencyKey() })).body,
    ];
    // Characters that do not compress: each line copies 40 KB of the item's description.
    const description = Array.from({ length: 10_000 }, (_, i) => String.fromCodePoint(0x20000 + ((i * 7919) % 42_000))).join("");
    const item = (await client.post("/items", { name: "Described", description, location_id: from.id })).body;
    expect((await client.post(`/items/${item.id}/adjustments`, { location_id: from.id, quantity: 1000 })).status).toBe(201);
    const lines = Array.from({ length: 100 }, () => ({ item_id: item.id, quantity: 1 }));
    const refusals = [
      await client.post("/invoices", { customer_id: customer.id, lines }),
      await client.post("/sales-orders", { customer_id: customer.id, location_id: from.id, lines }),
      await client.post("/purchase-orders", { supplier_id: supplier.id, location_id: from.id, lines }),
      await client.post("/stock-transfers", { origin_location_id: from.id, destination_location_id: to.id, lines }),
    ];
    for (const refused of refusals) expectValidation(refused, "lines", "too_large");
    for (const path of ["/invoices", "/sales-orders", "/purchase-orders", "/stock-transfers"]) {
      expect((await client.get(path)).body.pagination.total_records, path).toBe(0);
    }
    expect((await client.get(`/items/${item.id}`)).body.quantity).toBe(1000);
    const invoice = await client.post("/invoices", { customer_id: customer.id, lines: lines.slice(0, 2) });
    expect(invoice.status, invoice.text).toBe(201);
    expect(invoice.body.invoice_number).toBe(1);
  });

  it("custom field values over 128 KB of UTF-8 together are 422 too_large (not a 500 on DynamoDB's item size), and nothing is written", async () => {
    const account = await newAccount();
    const client = api().withKey(account.ownerKey);
    const fields = await Promise.all(
      Array.from({ length: 30 }, (_, i) => createCustomField({ accountId: account.accountId, kind: "customer", name: `Field ${i}` })),
    );
    const values = (text: string) => fields.map(({ custom_field_id }) => ({ custom_field_id, value: text }));
    expectValidation(await client.post("/customers", { name: "Too much", custom_field_values: values("😀".repeat(4000)) }), "custom_field_values", "too_large");
    expect(await customerTotal(client)).toBe(0);
    const created = await client.post("/customers", { name: "Plenty", custom_field_values: values("a".repeat(4000)) });
    expect(created.status, created.text).toBe(201);
    expectValidation(
      await client.patch(`/customers/${created.body.id}`, { custom_field_values: values("漢".repeat(4000)) }),
      "custom_field_values",
      "too_large",
    );
    expect((await client.get(`/customers/${created.body.id}`)).body.custom_field_values).toEqual(values("a".repeat(4000)));
  });

  it("a body over 1 MB is 413 request_too_large in the error shape, and nothing is created", async () => {
    const client = await owner();
    const refused = await client.post("/customers", { name: "Big", office_fax: "x".repeat(1024 * 1024) });
    expect(refused.status).toBe(413);
    expect(refused.body.error).toMatchObject({ type: "invalid_request_error", code: "request_too_large" });
    expect(await customerTotal(client)).toBe(0);
  });

  it("texts refuse NUL characters and unpaired surrogates, and accept real emoji", async () => {
    const client = await owner();
    expectValidation(await client.post("/customers", { name: "Bad\u0000Name" }), "name");
    expectValidation(await client.post("/customers", { name: "Lone \ud800 surrogate" }), "name");
    expectValidation(await client.post("/contacts", { first_name: "Ok", job_title: "tail \udc00" }), "job_title");
    expectValidation(await client.post("/items", { name: "Bad", variations: [{ values: { "Size\u0000": "M" } }] }), "variations[0].values.Size\u0000");
    expect(await customerTotal(client)).toBe(0);
    const emoji = await client.post("/customers", { name: "Café 🚚 Logistics" });
    expect(emoji.status, emoji.text).toBe(201);
    expect(emoji.body.name).toBe("Café 🚚 Logistics");
  });
});
