import { describe, expect, it } from "vitest";
import { useApiServer, type ApiClient } from "../support/api.js";
import { estimateWorld, type EstimateWorld } from "../support/estimates.js";
import { expectError } from "../support/assertions.js";
import { idempotencyKey, newUser } from "../support/fixtures.js";
import { createTask, newTask, patchTask } from "../support/tasks.js";
import { naiveWriteBack } from "../support/write-back.js";
import { scaled } from "../support/timeouts.js";

/**
 * "What you read you can write back" (architecture section 8) at its edges: records whose
 * stored lines name an item archived or sold since, an estimate on the last day it is valid, a
 * document converted from a prospect's estimate, and a 500-line estimate with its generated
 * discount line. The body sent back is the GET with only ids, numbers, totals, timestamps,
 * statuses and computed quantities removed; it must answer 200 and change nothing (not even
 * `updated_at` or `revision`).
 */
const api = useApiServer();

type Json = Record<string, any>;

/** GET, PATCH the GET body back, GET again: 200 and the same record. */
async function expectWriteBack(client: ApiClient, path: string): Promise<void> {
  const before = await client.get(path);
  expect(before.status, before.text).toBe(200);
  const written = await client.patch(path, naiveWriteBack(before.body));
  expect(written.status, `${path}: ${written.text.slice(0, 600)}`).toBe(200);
  expect((await client.get(path)).body, `${path}: a no-op write changed the record`).toEqual(before.body);
}

async function created(response: Promise<{ status: number; text: string; body: any }>): Promise<Json> {
  const result = await response;
  expect(result.status, result.text.slice(0, 600)).toBe(201);
  return result.body;
}

const world = (): Promise<EstimateWorld> => estimateWorld((key) => api().withKey(key), { stock: 100 });

describe("connected: write-back at the edges", () => {
  it("documents whose lines name an item archived since: the unchanged lines go back (a new line for it is still refused)", async () => {
    const w = await world();
    const supplier = await created(w.client.post("/suppliers", { name: "Parts Ltd" }));
    const branch = await created(w.client.post("/locations", { name: "Branch", short_name: "BR" }, { idempotencyKey: idempotencyKey() }));
    const line = { item_id: w.item.id, quantity: 1 };
    const paths = [
      `/estimates/${(await created(w.client.post("/estimates", { customer_id: w.customer.id, lines: [line] }))).id}`,
      `/sales-orders/${(await created(w.client.post("/sales-orders", { customer_id: w.customer.id, location_id: w.location, lines: [line] }))).id}`,
      `/invoices/${(await created(w.client.post("/invoices", { customer_id: w.customer.id, lines: [line] }))).id}`,
      `/purchase-orders/${(await created(w.client.post("/purchase-orders", { supplier_id: supplier.id, location_id: w.location, lines: [line] }))).id}`,
      `/stock-transfers/${(await created(w.client.post("/stock-transfers", { origin_location_id: w.location, destination_location_id: branch.id, lines: [line] }))).id}`,
    ];
    expect((await w.client.patch(`/items/${w.item.id}`, { archived: true })).status).toBe(200);
    for (const path of paths) await expectWriteBack(w.client, path);
    // A line that newly names the archived item is refused as before.
    const estimate = (await w.client.get(paths[0]!)).body;
    const added = await w.client.patch(paths[0]!, { lines: [{ id: estimate.lines[0].id, item_id: w.item.id, quantity: 1 }, line] });
    expect(added.status).toBe(422);
    expect(added.body.error.details).toEqual([{ param: "lines[1].item_id", code: "archived", message: "is an archived item." }]);
  });

  it("documents whose customer and supplier were renamed since: the stored names stay, write-backs and other edits keep them", async () => {
    const w = await world();
    const supplier = await created(w.client.post("/suppliers", { name: "Orig Supplier" }));
    const customer = await created(w.client.post("/customers", { name: "Orig Customer" }));
    const line = { item_id: w.item.id, quantity: 1 };
    const made = {
      estimate: await created(w.client.post("/estimates", { customer_id: customer.id, lines: [line] })),
      salesOrder: await created(w.client.post("/sales-orders", { customer_id: customer.id, location_id: w.location, lines: [line] })),
      invoice: await created(w.client.post("/invoices", { customer_id: customer.id, lines: [line] })),
      purchaseOrder: await created(w.client.post("/purchase-orders", { supplier_id: supplier.id, location_id: w.location, lines: [line] })),
    };
    const paths = [
      `/estimates/${made.estimate.id}`,
      `/sales-orders/${made.salesOrder.id}`,
      `/invoices/${made.invoice.id}`,
      `/purchase-orders/${made.purchaseOrder.id}`,
    ];
    expect((await w.client.patch(`/customers/${customer.id}`, { name: "New Customer", billing_address_1: "1 New Road" })).status).toBe(200);
    expect((await w.client.patch(`/suppliers/${supplier.id}`, { name: "New Supplier", office_phone: "555 0100" })).status).toBe(200);
    for (const path of paths) await expectWriteBack(w.client, path);
    // A real edit writes, and still keeps the name the document was made with.
    for (const path of paths) {
      const edited = await w.client.patch(path, { public_note: "Edited" });
      expect(edited.status, edited.text).toBe(200);
      expect(edited.body.public_note).toBe("Edited");
      expect(edited.body.customer_name ?? edited.body.supplier_name, path).toMatch(/^Orig /);
    }
    // Another customer: its current name.
    const other = await created(w.client.post("/customers", { name: "Other Customer" }));
    const invoice = (await w.client.get(paths[2]!)).body;
    const moved = await w.client.patch(paths[2]!, {
      customer_id: other.id,
      lines: invoice.lines.filter((l: Json) => l.line_type !== "discount").map((l: Json) => ({ id: l.id, item_id: l.item_id, quantity: l.quantity })),
    });
    expect(moved.status, moved.text).toBe(200);
    expect(moved.body.customer_name).toBe("Other Customer");
  });

  it("an open estimate whose unique item was sold since: the line goes back; a new line for it is refused", async () => {
    const w = await world();
    const unique = await created(w.client.post("/items", { name: "One of a kind", inventory_type: "unique", serial_number: "SN-77" }));
    expect((await w.client.post(`/items/${unique.id}/adjustments`, { location_id: w.location, quantity: 1 })).status).toBe(201);
    const estimate = await created(w.client.post("/estimates", { customer_id: w.customer.id, lines: [{ item_id: unique.id, quantity: 1 }] }));
    await created(w.client.post("/invoices", { customer_id: w.customer.id, lines: [{ item_id: unique.id, quantity: 1 }] }));
    await expectWriteBack(w.client, `/estimates/${estimate.id}`);
    const added = await w.client.patch(`/estimates/${estimate.id}`, {
      lines: [
        { id: estimate.lines[0].id, item_id: unique.id, quantity: 1 },
        { item_id: unique.id, quantity: 1 },
      ],
    });
    expect(added.status).toBe(422);
    expect(added.body.error.details).toEqual([{ param: "lines[1].item_id", code: "sold", message: "is a sold unique item." }]);
  });

  it("an open estimate on the last day it is valid (and one recorded after its expiry) takes its own expiry_date back", async () => {
    const w = await world();
    const today = new Intl.DateTimeFormat("en-CA", { timeZone: "UTC" }).format(new Date());
    const lastDay = await created(
      w.client.post("/estimates", { customer_id: w.customer.id, issue_date: "2026-01-01", expiry_date: today, lines: [{ name: "Survey", unit_price: "10" }] }),
    );
    const recorded = await created(
      w.client.post("/estimates", {
        customer_id: w.customer.id,
        issue_date: "2025-01-01",
        expiry_date: "2025-02-01",
        lines: [{ name: "Survey", unit_price: "10" }],
      }),
    );
    for (const estimate of [lastDay, recorded]) {
      expect(estimate.status_id).toBe(5);
      await expectWriteBack(w.client, `/estimates/${estimate.id}`);
    }
    // Moving the expiry to a past date is still refused.
    const moved = await w.client.patch(`/estimates/${recorded.id}`, { expiry_date: "2025-03-01" });
    expect(moved.status).toBe(422);
    expect(moved.body.error.details[0]).toMatchObject({ param: "expiry_date", code: "past_date" });
  });

  it("an estimate's change preview takes the GET body as its PATCH does (no errors; a changed service field still in errors)", async () => {
    const w = await world();
    const estimate = await created(
      w.client.post("/estimates", { customer_id: w.customer.id, discount_percent: 5, lines: [{ item_id: w.item.id, quantity: 2 }] }),
    );
    const read = await w.client.get(`/estimates/${estimate.id}`);
    const preview = await w.client.post(`/estimates/${estimate.id}/preview`, naiveWriteBack(read.body), { headers: { "if-match": read.headers.get("etag")! } });
    expect(preview.status, preview.text.slice(0, 600)).toBe(200);
    expect(preview.body.errors).toEqual([]);
    expect(preview.body.estimate.total).toBe(read.body.total);
    const changed = await w.client.post(
      `/estimates/${estimate.id}/preview`,
      { ...naiveWriteBack(read.body), customer_name: "Someone else" },
      { headers: { "if-match": read.headers.get("etag")! } },
    );
    expect(changed.status).toBe(200);
    expect(changed.body).toMatchObject({ estimate: null, errors: [{ code: "unsupported_estimate_field", param: "customer_name" }] });
    expect((await w.client.get(`/estimates/${estimate.id}`)).body).toEqual(read.body);
  });

  it("a write-back of a stale copy is the record's conflict (409 task_conflict, mobile_mutation_conflict), not 422 on a read-only field that moved on", async () => {
    const w = await world();
    const task = await newTask(w.client, { title: "Call back" });
    const copy = (await w.client.get(`/tasks/${task.id}`)).body;
    expect((await patchTask(w.client, task.id, { version: copy.version, title: "Renamed" })).status).toBe(200);
    // The copy's version (and so its `modified`) is older than the task's: 409, not 422 on `modified`.
    const { id: _id, created: _created, completed_at: _completed, status: _status, due_at: _due, overdue_at: _overdue, ...body } = copy;
    expectError(await patchTask(w.client, task.id, body), 409, "task_conflict");
    expect((await w.client.get(`/tasks/${task.id}`)).body).toMatchObject({ title: "Renamed", version: copy.version + 1 });

    const estimate = await created(w.client.post("/estimates", { customer_id: w.customer.id, lines: [{ item_id: w.item.id, quantity: 2 }] }));
    const read = await w.client.get(`/estimates/${estimate.id}`);
    expect((await w.client.patch(`/estimates/${estimate.id}`, { name: "Renamed" })).status).toBe(200);
    const after = (await w.client.get(`/estimates/${estimate.id}`)).body;
    // The copy names its revision (in the body, or If-Match): both are stale now.
    expectError(await w.client.patch(`/estimates/${estimate.id}`, naiveWriteBack(read.body)), 409, "mobile_mutation_conflict", "revision");
    const { revision: _revision, ...unnamed } = naiveWriteBack(read.body);
    expectError(
      await w.client.patch(`/estimates/${estimate.id}`, unnamed, { headers: { "if-match": read.headers.get("etag")! } }),
      409,
      "mobile_mutation_conflict",
      "If-Match",
    );
    expect((await w.client.get(`/estimates/${estimate.id}`)).body).toEqual(after);
  });

  it("a copy's revision sent back without If-Match conditions the write: a parallel change is never lost (the copy is 409 or comes first)", async () => {
    const w = await world();
    const outcomes = new Map<string, number>();
    for (let round = 0; round < 8; round++) {
      const estimate = await created(w.client.post("/estimates", { customer_id: w.customer.id, lines: [{ item_id: w.item.id, quantity: 1 }] }));
      const copy = naiveWriteBack((await w.client.get(`/estimates/${estimate.id}`)).body);
      const [fromCopy, other] = await Promise.all([
        w.client.patch(`/estimates/${estimate.id}`, { ...copy, name: "From the copy" }),
        w.client.patch(`/estimates/${estimate.id}`, { public_note: "From elsewhere" }),
      ]);
      expect(other.status, other.text).toBe(200);
      const outcome = `${fromCopy.status}`;
      outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
      const now = (await w.client.get(`/estimates/${estimate.id}`)).body;
      expect(now.public_note, "the other write was lost").toBe("From elsewhere");
      if (fromCopy.status === 200) expect(now.name).toBe("From the copy");
      else expectError(fromCopy, 409, "mobile_mutation_conflict", "revision"); // checked with the copy, or by the write
    }
    console.info(`copy vs parallel write: ${JSON.stringify(Object.fromEntries(outcomes))}`);
  });

  it("a copy written back: 404 once the record is deleted; 403 for a caller the write is refused; 428 on a preview without If-Match", async () => {
    const w = await world();
    const estimate = await created(w.client.post("/estimates", { customer_id: w.customer.id, lines: [{ item_id: w.item.id, quantity: 1 }] }));
    const copy = naiveWriteBack((await w.client.get(`/estimates/${estimate.id}`)).body);
    expect((await w.client.patch(`/estimates/${estimate.id}`, { name: "Moved on" })).status).toBe(200);
    // Stale, and no header: a preview still needs If-Match.
    expectError(await w.client.post(`/estimates/${estimate.id}/preview`, copy), 428, "estimate_revision_required");
    const reader = await newUser(w.account, { permissions: ["estimates.list", "records.view_all"] });
    expectError(await api().withKey(reader.key).patch(`/estimates/${estimate.id}`, copy), 403, "permission_denied");
    expect((await w.client.request("DELETE", `/estimates/${estimate.id}`)).status).toBe(200);
    expectError(await w.client.patch(`/estimates/${estimate.id}`, copy), 404, "resource_missing");
  });

  it("an identical retry of a write-back (same Idempotency-Key) replays its first answer, although that run moved the copy's updated_at, revision or version on, and after the record is deleted", async () => {
    const w = await world();
    const replays = async (path: string, body: Json, method: "PATCH" | "PUT" = "PATCH") => {
      const key = idempotencyKey();
      const first = await w.client.request(method, path, body, { idempotencyKey: key });
      expect(first.status, first.text).toBe(200);
      const retry = await w.client.request(method, path, body, { idempotencyKey: key });
      expect(retry.status, retry.text).toBe(200);
      expect(retry.headers.get("idempotent-replayed")).toBe("true");
      expect(retry.text).toBe(first.text);
      return { key, first };
    };
    // The whole GET body (its updated_at moves with the write) ...
    const customer = await created(w.client.post("/customers", { name: "Retry Ltd" }));
    const customerCopy = { ...(await w.client.get(`/customers/${customer.id}`)).body, billing_city: "Springfield" };
    const { key, first } = await replays(`/customers/${customer.id}`, customerCopy);
    await replays(`/customers/${customer.id}`, { ...(await w.client.get(`/customers/${customer.id}`)).body, billing_city: "Shelbyville" }, "PUT");
    // ... still replays once the record is gone; a new key is the record's answer (404).
    expect((await w.client.request("DELETE", `/customers/${customer.id}`)).status).toBe(200);
    const late = await w.client.patch(`/customers/${customer.id}`, customerCopy, { idempotencyKey: key });
    expect(late.status, late.text).toBe(200);
    expect(late.text).toBe(first.text);
    expectError(await w.client.patch(`/customers/${customer.id}`, customerCopy, { idempotencyKey: idempotencyKey() }), 404, "resource_missing");

    // A document copy's revision, and a task copy's version, are the retry's own first run.
    const invoice = await created(w.client.post("/invoices", { customer_id: w.customer.id, lines: [{ item_id: w.item.id, quantity: 1 }] }));
    const invoiceCopy = { ...naiveWriteBack((await w.client.get(`/invoices/${invoice.id}`)).body), public_note: "Retried" };
    const invoiceRun = await replays(`/invoices/${invoice.id}`, invoiceCopy);
    expectError(await w.client.patch(`/invoices/${invoice.id}`, invoiceCopy, { idempotencyKey: idempotencyKey() }), 409, "mobile_mutation_conflict");
    expect((await w.client.get(`/invoices/${invoice.id}`)).body.revision).toBe(invoiceRun.first.body.revision);
    const task = await newTask(w.client, { title: "Call back" });
    const {
      id: _id,
      created: _created,
      completed_at: _completed,
      status: _status,
      due_at: _due,
      overdue_at: _overdue,
      ...taskCopy
    } = (await w.client.get(`/tasks/${task.id}`)).body;
    await replays(`/tasks/${task.id}`, { ...taskCopy, title: "Renamed" });
    expect((await w.client.get(`/tasks/${task.id}`)).body).toMatchObject({ title: "Renamed", version: task.version + 1 });
  });

  it("a task whose linked record is gone takes back its GET body (record: {available: false}) and changes nothing", async () => {
    const w = await world();
    const lead = await created(w.client.post("/customers", { name: "Gone soon" }));
    const task = await newTask(w.client, { title: "Call the lead", record: { type: "customer", id: lead.id } });
    expect((await w.client.request("DELETE", `/customers/${lead.id}`)).status).toBe(200);
    const shown = (await w.client.get(`/tasks/${task.id}`)).body;
    expect(shown.record).toEqual({ available: false });
    const { id: _id, created: _created, modified: _modified, completed_at: _completed, status: _status, due_at: _due, overdue_at: _overdue, ...body } = shown;
    const written = await patchTask(w.client, task.id, body);
    expect(written.status, written.text).toBe(200);
    expect((await w.client.get(`/tasks/${task.id}`)).body).toEqual(shown);
  });

  it("a task's due date stays within year 9999 (its deadline ends the next day): 9999-12-30 is the last, and listed", async () => {
    const w = await world();
    const last = await createTask(w.client, { title: "Far away", due_date: "9999-12-30", time_zone: "America/New_York" });
    expect(last.status, last.text).toBe(201);
    expect(last.body.overdue_at).toBe("9999-12-31T05:00:00.000Z");
    const beyond = await createTask(w.client, { title: "Too far", due_date: "9999-12-31", time_zone: "UTC" });
    expect(beyond.status).toBe(422);
    expect(beyond.body.error.details[0]).toMatchObject({ param: "due_date" });
    expect((await w.client.get("/tasks", { due_from: "9999-01-01" })).body.data.map((t: Json) => t.id)).toEqual([last.body.id]);
  });

  it("documents converted from a prospect's estimate: a no-op PATCH writes nothing", async () => {
    const w = await world();
    for (const conversion of ["convert-to-invoice", "convert-to-sales-order"] as const) {
      const prospect = await created(w.client.post("/prospects", { name: `Lead for ${conversion}` }));
      const estimate = await created(w.client.post("/estimates", { customer_id: prospect.id, lines: [{ name: "Survey", unit_price: "10" }] }));
      const document = await created(
        w.client.post(`/estimates/${estimate.id}/${conversion}`, conversion === "convert-to-invoice" ? {} : undefined, { idempotencyKey: idempotencyKey() }),
      );
      const path = `/${conversion === "convert-to-invoice" ? "invoices" : "sales-orders"}/${document.id}`;
      const before = (await w.client.get(path)).body;
      const written = await w.client.patch(path, {});
      expect(written.status, written.text).toBe(200);
      expect(written.body.revision).toBe(before.revision);
      expect((await w.client.get(path)).body).toEqual(before);
      await expectWriteBack(w.client, path);
    }
  });

  it("a 500-line estimate with a discount, and the invoice converted from it, take back their 501 lines as read", { timeout: scaled(180_000) }, async () => {
    const w = await world();
    const lines = Array.from({ length: 500 }, (_, i) => ({ name: `Step ${i}`, unit_price: "10", quantity: 1 }));
    const estimate = await created(w.client.post("/estimates", { customer_id: w.customer.id, discount_percent: 1, lines }));
    expect(estimate.lines).toHaveLength(501);
    await expectWriteBack(w.client, `/estimates/${estimate.id}`);
    // 501 lines of the client's own are one too many (the generated line is not one of them).
    const tooMany = await w.client.patch(`/estimates/${estimate.id}`, { lines: [...lines, { name: "Extra", unit_price: "1" }] });
    expect(tooMany.status).toBe(422);
    expect(tooMany.body.error.details[0]).toMatchObject({ param: "lines", code: "too_many" });
    const invoice = await created(w.client.post(`/estimates/${estimate.id}/convert-to-invoice`, {}, { idempotencyKey: idempotencyKey() }));
    expect(invoice.lines).toHaveLength(501);
    await expectWriteBack(w.client, `/invoices/${invoice.id}`);
  });
});
