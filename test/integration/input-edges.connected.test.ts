import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { useApiServer, type ApiClient } from "../support/api.js";
import { expectError, expectValidation } from "../support/assertions.js";
import { idempotencyKey, newAccount } from "../support/fixtures.js";
import { newItem } from "../support/sales.js";

/**
 * Input edges (issue 18, point 5), through HTTP: year 0000 dates, a query that is not valid
 * percent-encoding, a known path with another method behind a path parameter, the one rule for
 * blank text (an optional field's "" or whitespace is null: it clears the field; a required
 * field refuses it), and messages that read right ("an invoice").
 */
const api = useApiServer();

async function owner(): Promise<ApiClient> {
  return api().withKey((await newAccount()).ownerKey);
}

async function created(response: Promise<{ status: number; text: string; body: any }>): Promise<any> {
  const answer = await response;
  expect(answer.status, answer.text).toBe(201);
  return answer.body;
}

describe("connected: input edges", () => {
  it("a body that is not UTF-8 is 400 invalid_json and stores nothing (two such bodies never replay as one)", async () => {
    const account = await newAccount();
    const client = api().withKey(account.ownerKey);
    const before = (await client.get("/customers", { limit: 1 })).body.pagination.total_records;
    const raw = (bytes: number[]) =>
      fetch(`${client.baseUrl}/api/v3/customers`, {
        method: "POST",
        headers: { authorization: `Bearer ${account.ownerKey}`, "content-type": "application/json", "idempotency-key": "utf8-key" },
        body: Buffer.concat([Buffer.from('{"name":"bad'), Buffer.from(bytes), Buffer.from('"}')]),
      });
    for (const bytes of [[0xff, 0xfe], [0xfe]]) {
      const response = await raw(bytes);
      expect(response.status).toBe(400);
      expect(((await response.json()) as { error: { code: string } }).error.code).toBe("invalid_json");
    }
    expect((await client.get("/customers", { limit: 1 })).body.pagination.total_records).toBe(before);
    // Multi-byte UTF-8 is JSON as usual.
    expect((await client.post("/customers", { name: "Café ☕" })).body.name).toBe("Café ☕");
  });

  it("refuses a year-0000 date with 422 on the field, in bodies and queries, and stores nothing", async () => {
    const client = await owner();
    expectValidation(await client.post("/prospects", { name: "Year zero", prospect_date: "0000-01-01" }), "prospect_date");
    expectError(await client.get("/invoices", { issue_date_from: "0000-12-31" }), 422, "invalid_query_parameter", "issue_date_from");
    expect((await client.get("/prospects")).body.data).toEqual([]);
    const earliest = await created(client.post("/prospects", { name: "Year one", prospect_date: "0001-01-01" }));
    expect(earliest.prospect_date).toBe("0001-01-01");
  });

  it("answers a query that is not valid percent-encoding with 422 invalid_query_parameter naming the parameter (sync: 400)", async () => {
    const client = await owner();
    const broken = await fetch(`${client.baseUrl}/api/v3/items?q=%E0%A4%A`, { headers: { authorization: `Bearer ${client.apiKey}` } });
    expect(broken.status).toBe(422);
    const body = (await broken.json()) as any;
    expect(body.error).toMatchObject({ type: "invalid_request_error", code: "invalid_query_parameter", param: "q" });
    const brokenName = await fetch(`${client.baseUrl}/api/v3/items?%ZZ=1`, { headers: { authorization: `Bearer ${client.apiKey}` } });
    expect(brokenName.status).toBe(422);
    // Spec part 1, section 7: sync's parameter errors are 400.
    const brokenSync = await fetch(`${client.baseUrl}/api/v3/sync?start=now&resources=item%E0`, { headers: { authorization: `Bearer ${client.apiKey}` } });
    expect(brokenSync.status).toBe(400);
    expect(((await brokenSync.json()) as any).error).toMatchObject({ code: "invalid_query_parameter", param: "resources" });
    // Valid escapes (UTF-8, + as space) still search.
    const fine = await fetch(`${client.baseUrl}/api/v3/items?q=caf%C3%A9+au+lait`, { headers: { authorization: `Bearer ${client.apiKey}` } });
    expect(fine.status).toBe(200);
  });

  it("answers a parameter given twice with 422 invalid_query_parameter naming it (sync: 400); a comma-separated list may repeat", async () => {
    const client = await owner();
    const get = (query: string) => fetch(`${client.baseUrl}/api/v3/${query}`, { headers: { authorization: `Bearer ${client.apiKey}` } });
    for (const [query, param] of [
      ["items?page=2&page=3", "page"],
      ["invoices?q=a&q=b", "q"],
      ["customers?limit=5&q=x&limit=5", "limit"],
    ] as const) {
      const response = await get(query);
      expect(response.status, query).toBe(422);
      expect(((await response.json()) as any).error, query).toMatchObject({ code: "invalid_query_parameter", param });
    }
    // A parameter the route does not know is answered as when given once (a list ignores it; sync refuses it with 400).
    expect((await get("locations?foo=1&foo=2")).status).toBe(200);
    expect((await get("tasks/reminders?x=1&x=2")).status).toBe(200);
    const sync = await get("sync?start=now&resources=item&foo=1&foo=2");
    expect(sync.status).toBe(400);
    expect(((await sync.json()) as any).error).toMatchObject({ code: "invalid_query_parameter", param: "foo" });
    const twiceSync = await get("sync?start=now&start=now&resources=item");
    expect(twiceSync.status).toBe(400);
    expect(((await twiceSync.json()) as any).error).toMatchObject({ code: "invalid_query_parameter", param: "start" });
    const [a, b] = [(await client.post("/items", { name: "Repeat A" })).body, (await client.post("/items", { name: "Repeat B" })).body];
    const listed = await get(`items?ids=${a.id}&ids=${b.id}`);
    expect(listed.status).toBe(200);
    expect((((await listed.json()) as any).data as { id: string }[]).map((item) => item.id).sort()).toEqual([a.id, b.id].sort());
  });

  it("answers a wrong method on a literal path that a path parameter would match with 404 route_not_found and Allow", async () => {
    const client = await owner();
    for (const [path, allow] of [
      ["/estimates/preview", "POST"],
      ["/tasks/reconcile", "POST"],
    ] as const) {
      const response = await client.get(path);
      expectError(response, 404, "route_not_found");
      expect(response.headers.get("allow"), path).toBe(allow);
    }
    expect((await client.get("/tasks/reconcile")).headers.get("cache-control")).toBe("no-store");
    // A real id is still a missing estimate.
    expectError(await client.get(`/estimates/${randomUUID()}`), 404, "resource_missing");
  });

  it("treats blank text in an optional field as null on every resource: it clears the field and reads back as null", async () => {
    const client = await owner();
    const customer = await created(
      client.post("/customers", { name: "Blank test", office_phone: "+1 555 0100", url: "https://a.test", billing_city: "Springfield" }),
    );
    const cleared = await client.patch(`/customers/${customer.id}`, { office_phone: "", url: "   ", billing_city: " \t " });
    expect(cleared.status, cleared.text).toBe(200);
    expect(cleared.body).toMatchObject({ office_phone: null, url: null, billing_city: null });
    expectValidation(await client.patch(`/customers/${customer.id}`, { name: "   " }), "name");

    const contact = await created(client.post("/contacts", { first_name: "Ann", last_name: "  ", email_1: "", job_title: "" }));
    expect(contact).toMatchObject({ last_name: null, email_1: null, job_title: null });

    const location = await created(
      client.post("/locations", { name: "Blank Yard", short_name: "BY", city: " ", email: "" }, { idempotencyKey: idempotencyKey() }),
    );
    const zone = await created(
      client.post(`/locations/${location.id}/zones`, { name: "Shelf", short_name: "S", description: "  " }, { idempotencyKey: idempotencyKey() }),
    );
    expect(zone.description).toBeNull();

    const item = await newItem(client, location.id, { stock: 5, body: { description: "Blue", sku: " " } });
    expect(item).toMatchObject({ sku: null });
    expect((await client.patch(`/items/${item.id}`, { description: "" })).body.description).toBeNull();
    expect((await client.patch(`/items/${item.id}`, { description: "Blue" })).body.description).toBe("Blue");

    const task = await created(
      client.post("/tasks", { title: "Blank fields", description: "", due_date: "", due_time: "", reminder_at: "" }, { idempotencyKey: idempotencyKey() }),
    );
    expect(task).toMatchObject({ description: null, due_date: null, due_time: null, reminder: null });
    const described = await client.patch(`/tasks/${task.id}`, { version: task.version, description: "Call back" }, { idempotencyKey: idempotencyKey() });
    expect(described.body.description).toBe("Call back");
    const blanked = await client.patch(`/tasks/${task.id}`, { version: described.body.version, description: " " }, { idempotencyKey: idempotencyKey() });
    expect(blanked.body.description).toBeNull();
    // A blank reminder_at removes the reminder, on update too (it never schedules one at "").
    const reminded = await client.patch(
      `/tasks/${task.id}`,
      { version: blanked.body.version, reminder_at: "2030-01-01T09:00:00Z" },
      { idempotencyKey: idempotencyKey() },
    );
    expect(reminded.body.reminder).toMatchObject({ status: "scheduled", scheduled_at: "2030-01-01T09:00:00.000Z" });
    let version = reminded.body.version;
    for (const blank of ["", "   "]) {
      const cleared = await client.patch(`/tasks/${task.id}`, { version, reminder_at: blank }, { idempotencyKey: idempotencyKey() });
      expect(cleared.status, cleared.text).toBe(200);
      expect(cleared.body.reminder).toBeNull();
      version = cleared.body.version;
    }
    expect((await client.post("/tasks", { title: "Blank reminder", reminder_at: " \t" }, { idempotencyKey: idempotencyKey() })).status).toBe(201);
    expectValidation(await client.post("/tasks", { title: "  " }, { idempotencyKey: idempotencyKey() }), "title");

    const supplier = await created(client.post("/suppliers", { name: "Supply Co" }));
    const order = await created(
      client.post("/purchase-orders", {
        supplier_id: supplier.id,
        location_id: location.id,
        lines: [{ item_id: item.id, quantity: 1, description: "" }],
        attention: " ",
        date_needed: "",
      }),
    );
    expect(order).toMatchObject({ attention: null, date_needed: null });
    // A line description: blank or null clears it; omitted, the item's description applies.
    expect(order.lines[0].description).toBeNull();
    const relined = await client.patch(`/purchase-orders/${order.id}`, { lines: [{ id: order.lines[0].id, item_id: item.id, quantity: 1 }] });
    expect(relined.body.lines[0].description).toBe("Blue");
    const nulled = await client.patch(`/purchase-orders/${order.id}`, { lines: [{ id: order.lines[0].id, item_id: item.id, quantity: 1, description: null }] });
    expect(nulled.body.lines[0].description).toBeNull();

    const transfer = await created(
      client.post("/stock-transfers", {
        origin_location_id: location.id,
        destination_location_id: (await created(client.post("/locations", { name: "Other", short_name: "O" }, { idempotencyKey: idempotencyKey() }))).id,
        estimated_arrival_date: "2030-01-01",
        lines: [{ item_id: item.id, quantity: 1 }],
      }),
    );
    expect((await client.patch(`/stock-transfers/${transfer.id}`, { estimated_arrival_date: "  ", shipping_provider: "" })).body).toMatchObject({
      estimated_arrival_date: null,
      shipping_provider: null,
    });
  });

  it("writes messages with the right article ('an invoice', 'an estimate', 'an item')", async () => {
    const client = await owner();
    for (const [type, words] of [
      ["invoice", "an invoice"],
      ["estimate", "an estimate"],
      ["item", "an item"],
      ["sales_order", "a sales order"],
    ] as const) {
      const response = await client.post("/tasks", { title: "Linked", record: { type, id: randomUUID() } }, { idempotencyKey: idempotencyKey() });
      expectValidation(response, "record.id");
      expect(response.body.error.message, type).toBe(`record.id: is not ${words} of this account that you can see.`);
    }
  });
});
