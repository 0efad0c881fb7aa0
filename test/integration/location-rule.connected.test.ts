import { randomUUID } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { PERMISSIONS } from "../../lib/auth/permissions.js";
import { createKit } from "../../lib/domain/admin/service.js";
import { useApiServer, type ApiClient } from "../support/api.js";
import { expectError, expectValidation } from "../support/assertions.js";
import { idempotencyKey, newAccount, newUser, type TestAccount } from "../support/fixtures.js";
import { newItem, stockOf } from "../support/sales.js";

/**
 * The location rule (architecture section 8, "Location restriction is one rule for every
 * write"; spec part 1, section 7: "outside the user's ... location boundary" is 404): a user
 * restricted to the Branch, with every permission and every scope, can neither read nor change
 * the owner's documents at Main (404 `resource_missing`, nothing stored), cannot name Main in a
 * body (422 naming the field), and still works freely on documents at the Branch. Stock
 * transfers are account-wide (spec part 2, 4.2).
 */
const api = useApiServer();

interface World {
  account: TestAccount;
  owner: ApiClient;
  restricted: ApiClient;
  main: string;
  branch: string;
  supplier: string;
  customer: string;
  /** Stocked at Main only (40 on hand). */
  item: Record<string, any>;
  /** Stocked at the Branch only (40 on hand). */
  branchItem: Record<string, any>;
}

let w: World;

async function ok(response: Promise<{ status: number; text: string; body: any }>, status = 200): Promise<any> {
  const answer = await response;
  expect(answer.status, answer.text).toBe(status);
  return answer.body;
}

beforeAll(async () => {
  const account = await newAccount();
  const owner = api().withKey(account.ownerKey);
  const [main, branch] = await Promise.all(
    ["Main", "Branch"].map((name) => ok(owner.post("/locations", { name, short_name: name.toUpperCase() }, { idempotencyKey: idempotencyKey() }), 201)),
  );
  const [supplier, customer, item, branchItem] = await Promise.all([
    ok(owner.post("/suppliers", { name: "Initech Supply" }), 201),
    ok(owner.post("/customers", { name: "Acme Retail" }), 201),
    newItem(owner, main.id, { stock: 40 }),
    newItem(owner, branch.id, { stock: 40 }),
  ]);
  const user = await newUser(account, { permissions: [...PERMISSIONS], locationId: branch.id });
  w = { account, owner, restricted: api().withKey(user.key), main: main.id, branch: branch.id, supplier: supplier.id, customer: customer.id, item, branchItem };
});

const poBody = (location: string, item: Record<string, any>) => ({
  supplier_id: w.supplier,
  location_id: location,
  lines: [{ item_id: item.id, quantity: 5, unit_cost: "2.0000" }],
});
const salesLines = (item: Record<string, any>) => [{ item_id: item.id, quantity: 2 }];

describe("connected: the location rule", () => {
  it("hides the owner's purchase orders at Main from every route and changes nothing", async () => {
    const draft = await ok(w.owner.post("/purchase-orders", poBody(w.main, w.item)), 201);
    const sent = await ok(w.owner.post("/purchase-orders", poBody(w.main, w.item)), 201);
    await ok(w.owner.post(`/purchase-orders/${sent.id}/send`, {}));
    const paid = await ok(w.owner.post(`/purchase-orders/${sent.id}/payments`, { amount: "1.0000" }), 201);
    const before = await stockOf(w.owner, w.item.id);
    const r = w.restricted;

    for (const response of [
      r.get(`/purchase-orders/${draft.id}`),
      r.get(`/purchase-orders/${sent.id}/payments`),
      r.patch(`/purchase-orders/${draft.id}`, { name: "Mine now" }),
      r.post(`/purchase-orders/${draft.id}/send`, {}),
      r.post(`/purchase-orders/${sent.id}/receive`, { lines: [{ line_id: sent.lines[0].id, quantity: 5 }] }),
      r.post(`/purchase-orders/${sent.id}/payments`, { amount: "1.0000" }),
      r.request("DELETE", `/purchase-orders/${sent.id}/payments/${paid.id}`),
    ]) {
      expectError(await response, 404, "resource_missing");
    }
    // Nothing moved: the order is still Not Sent, the other unreceived with one payment, stock as it was.
    expect((await w.owner.get(`/purchase-orders/${draft.id}`)).body).toMatchObject({ status_id: 21, name: null });
    expect((await w.owner.get(`/purchase-orders/${sent.id}`)).body).toMatchObject({ status_id: 22, amount_paid: "1.0000" });
    expect(await stockOf(w.owner, w.item.id)).toEqual(before);

    // Lists and `ids` leave them out.
    const listed = (await ok(r.get("/purchase-orders"))).data.map((o: any) => o.id);
    expect(listed).not.toContain(draft.id);
    const fetched = await ok(r.get("/purchase-orders", { ids: `${draft.id},${sent.id}` }));
    expect(fetched.data).toEqual([]);
  });

  it("hides the owner's sales orders, invoices and estimates at Main from every route and changes nothing", async () => {
    const order = await ok(w.owner.post("/sales-orders", { customer_id: w.customer, location_id: w.main, lines: salesLines(w.item) }), 201);
    const open = await ok(w.owner.post("/sales-orders", { customer_id: w.customer, location_id: w.main, lines: salesLines(w.item) }), 201);
    const invoice = await ok(
      w.owner.post("/invoices", {
        customer_id: w.customer,
        lines: [{ item_id: w.item.id, item_variation_location_id: order.lines[0].item_variation_location_id, quantity: 1 }],
      }),
      201,
    );
    const paidInvoice = await ok(w.owner.post("/invoices", { customer_id: w.customer, lines: [{ item_id: w.item.id, quantity: 1 }] }), 201);
    const payment = await ok(w.owner.post(`/invoices/${paidInvoice.id}/payments`, { amount: "1.0000" }), 201);
    const estimate = await ok(
      w.owner.post("/estimates", {
        customer_id: w.customer,
        lines: [{ item_id: w.item.id, item_variation_location_id: order.lines[0].item_variation_location_id, quantity: 3 }],
      }),
      201,
    );
    const before = await stockOf(w.owner, w.item.id);
    const r = w.restricted;

    for (const response of [
      r.get(`/sales-orders/${order.id}`),
      r.get(`/sales-orders/${order.id}/fulfillments`),
      r.get(`/sales-orders/${order.id}/invoices`),
      r.patch(`/sales-orders/${open.id}`, { name: "Mine now" }),
      r.post(`/sales-orders/${order.id}/invoices`, {}),
      r.post(`/sales-orders/${order.id}/fulfillments`, { lines: [{ id: order.lines[0].id, quantity: 1 }] }),
      r.request("DELETE", `/sales-orders/${open.id}`),
      r.get(`/invoices/${invoice.id}`),
      r.get(`/invoices/${invoice.id}/payments`),
      r.get(`/invoices/${invoice.id}/fulfillments`),
      r.patch(`/invoices/${invoice.id}`, { name: "Mine now" }),
      r.post(`/invoices/${invoice.id}/fulfillments`, { lines: [{ id: invoice.lines[0].id, quantity: 1 }] }),
      r.post(`/invoices/${invoice.id}/send`, {}),
      r.post(`/invoices/${invoice.id}/payments`, { amount: "1.0000" }),
      r.request("DELETE", `/invoices/${paidInvoice.id}/payments/${payment.id}`),
      r.post(`/invoices/${invoice.id}/cancel`, {}),
      r.request("DELETE", `/invoices/${invoice.id}`),
      r.get(`/estimates/${estimate.id}`),
      r.patch(`/estimates/${estimate.id}`, { name: "Mine now" }),
      r.post(`/estimates/${estimate.id}/preview`, { name: "Mine now" }, { headers: { "if-match": estimate.revision } }),
      r.post(`/estimates/${estimate.id}/decline`, {}),
      r.post(`/estimates/${estimate.id}/convert-to-invoice`, {}),
      r.post(`/estimates/${estimate.id}/convert-to-sales-order`),
      r.request("DELETE", `/estimates/${estimate.id}`),
    ]) {
      expectError(await response, 404, "resource_missing");
    }
    // Nothing moved.
    expect(await stockOf(w.owner, w.item.id)).toEqual(before);
    expect((await w.owner.get(`/sales-orders/${order.id}`)).body).toMatchObject({ status_id: 29, invoice_count: 0, packed_percent: 0 });
    expect((await w.owner.get(`/sales-orders/${open.id}`)).body).toMatchObject({ name: null });
    expect((await w.owner.get(`/invoices/${invoice.id}`)).body).toMatchObject({ status_id: 9, name: null, date_sent: null, amount_paid: "0.0000" });
    expect((await w.owner.get(`/invoices/${paidInvoice.id}`)).body).toMatchObject({ amount_paid: "1.0000" });
    expect((await w.owner.get(`/estimates/${estimate.id}`)).body).toMatchObject({ status_id: 5, name: null });

    for (const [path, ids] of [
      ["/sales-orders", [order.id, open.id]],
      ["/invoices", [invoice.id, paidInvoice.id]],
      ["/estimates", [estimate.id]],
    ] as const) {
      expect(
        (await ok(r.get(path))).data.map((d: any) => d.id),
        path,
      ).not.toEqual(expect.arrayContaining([ids[0]]));
      expect((await ok(r.get(path, { ids: ids.join(",") }))).data, path).toEqual([]);
      // A filtered list applies the rule too.
      expect((await ok(r.get(path, { customer_id: w.customer }))).data, path).toEqual([]);
    }
  });

  it("lets the restricted user work on documents at their own location, and a PATCH of name alone never fails on location_id", async () => {
    const r = w.restricted;
    const po = await ok(r.post("/purchase-orders", poBody(w.branch, w.branchItem)), 201);
    expect((await ok(r.patch(`/purchase-orders/${po.id}`, { name: "Branch restock" }))).name).toBe("Branch restock");
    await ok(r.post(`/purchase-orders/${po.id}/send`, {}));
    await ok(r.post(`/purchase-orders/${po.id}/receive`, { lines: [{ line_id: po.lines[0].id, quantity: 5 }] }));
    await ok(r.post(`/purchase-orders/${po.id}/payments`, { amount: "1.0000" }), 201);

    const order = await ok(r.post("/sales-orders", { customer_id: w.customer, lines: salesLines(w.branchItem) }), 201);
    expect(order.location_id).toBe(w.branch);
    expect((await ok(r.patch(`/sales-orders/${order.id}`, { name: "Branch order" }))).name).toBe("Branch order");
    const fromOrder = await ok(r.post(`/sales-orders/${order.id}/invoices`, {}), 201);
    expect(fromOrder.lines[0].location_name).toBe("Branch");

    const invoice = await ok(r.post("/invoices", { customer_id: w.customer, lines: salesLines(w.branchItem) }), 201);
    expect((await ok(r.patch(`/invoices/${invoice.id}`, { name: "Branch sale" }))).name).toBe("Branch sale");
    await ok(r.post(`/invoices/${invoice.id}/fulfillments`, { lines: [{ id: invoice.lines[0].id, quantity: 1 }] }), 201);

    const estimate = await ok(r.post("/estimates", { customer_id: w.customer, lines: salesLines(w.branchItem) }), 201);
    expect((await ok(r.patch(`/estimates/${estimate.id}`, { name: "Branch quote" }))).name).toBe("Branch quote");

    // The owner's documents at the Branch are the restricted user's to see too.
    const ownerAtBranch = await ok(w.owner.post("/purchase-orders", poBody(w.branch, w.branchItem)), 201);
    expect((await ok(r.get(`/purchase-orders/${ownerAtBranch.id}`))).id).toBe(ownerAtBranch.id);
    expect((await ok(r.get("/purchase-orders", { ids: ownerAtBranch.id }))).data.map((o: any) => o.id)).toEqual([ownerAtBranch.id]);
    expect((await ok(r.get("/purchase-orders"))).data.map((o: any) => o.id)).toEqual(expect.arrayContaining([ownerAtBranch.id, po.id]));
  });

  it("sees a document that names no location (a service-only invoice)", async () => {
    const service = await ok(w.owner.post("/invoices", { customer_id: w.customer, lines: [{ name: "Consulting", unit_price: "50.0000" }] }), 201);
    expect((await ok(w.restricted.get(`/invoices/${service.id}`))).id).toBe(service.id);
    expect((await ok(w.restricted.get("/invoices", { ids: service.id }))).data).toHaveLength(1);
  });

  it("refuses a body naming Main with 422 on the field, on every document and stock route, storing nothing", async () => {
    const r = w.restricted;
    const before = await stockOf(w.owner, w.item.id);
    expectValidation(await r.post("/purchase-orders", poBody(w.main, w.item)), "location_id", "invalid_reference");
    const po = await ok(r.post("/purchase-orders", poBody(w.branch, w.branchItem)), 201);
    expectValidation(
      await r.patch(`/purchase-orders/${po.id}`, { location_id: w.main, lines: [{ item_id: w.item.id, quantity: 1, unit_cost: "1.0000" }] }),
      "location_id",
      "invalid_reference",
    );
    expectValidation(
      await r.post("/sales-orders", { customer_id: w.customer, location_id: w.main, lines: salesLines(w.item) }),
      "location_id",
      "invalid_reference",
    );
    const mainRow = (await ok(w.owner.get(`/items/${w.item.id}/variations`, { include: "locations" }))).data[0].locations[0].item_variation_location_id;
    expectValidation(
      await r.post("/invoices", { customer_id: w.customer, lines: [{ item_id: w.item.id, item_variation_location_id: mainRow, quantity: 1 }] }),
      "lines[0].item_variation_location_id",
      "invalid_reference",
    );
    expectValidation(
      await r.post("/estimates", { customer_id: w.customer, lines: [{ item_id: w.item.id, item_variation_location_id: mainRow, quantity: 1 }] }),
      "lines[0].item_variation_location_id",
      "invalid_reference",
    );
    expectValidation(await r.post(`/items/${w.item.id}/adjustments`, { location_id: w.main, quantity: 1 }), "location_id", "invalid_reference");
    expect(await stockOf(w.owner, w.item.id)).toEqual(before);
    expect((await ok(r.get("/purchase-orders"))).data.every((o: any) => o.location_id === w.branch)).toBe(true);
  });

  it("applies the rule to kit builds and their disassembly", async () => {
    const component = await newItem(w.owner, w.main, { stock: 10 });
    const assembled = await newItem(w.owner, w.main);
    const { kit_id } = await createKit({ accountId: w.account.accountId, itemId: assembled.id, components: [{ itemId: component.id, quantity: 1 }] });
    expectValidation(await w.restricted.post(`/kits/${kit_id}/builds`, { location_id: w.main, quantity: 1 }), "location_id", "invalid_reference");
    const build = await ok(w.owner.post(`/kits/${kit_id}/builds`, { location_id: w.main, quantity: 1 }), 201);
    expectError(await w.restricted.request("DELETE", `/kits/${kit_id}/builds/${build.id}`), 404, "resource_missing");
    expect((await stockOf(w.owner, assembled.id)).quantity).toBe(1);
  });

  it("leaves stock transfers account-wide (spec part 2, 4.2) and shows a task's link to a hidden document as unavailable", async () => {
    const transfer = await ok(
      w.owner.post("/stock-transfers", { origin_location_id: w.main, destination_location_id: w.branch, lines: [{ item_id: w.item.id, quantity: 1 }] }),
      201,
    );
    expect((await ok(w.restricted.get(`/stock-transfers/${transfer.id}`))).id).toBe(transfer.id);

    const invoice = await ok(w.owner.post("/invoices", { customer_id: w.customer, lines: salesLines(w.item) }), 201);
    const task = await ok(
      w.owner.post("/tasks", { title: `Chase ${randomUUID().slice(0, 4)}`, record: { type: "invoice", id: invoice.id } }, { idempotencyKey: idempotencyKey() }),
      201,
    );
    expect(task.record).toMatchObject({ type: "invoice", id: invoice.id });
    expect((await ok(w.restricted.get(`/tasks/${task.id}`))).record).toEqual({ available: false });
  });
});

describe("connected: the row a line sells from", () => {
  /** A fresh account's owner with locations Main and Annex and a customer. */
  async function twoLocations() {
    const account = await newAccount();
    const owner = api().withKey(account.ownerKey);
    const [main, annex] = await Promise.all(
      ["Main", "Annex"].map((name) => ok(owner.post("/locations", { name, short_name: name.toUpperCase() }, { idempotencyKey: idempotencyKey() }), 201)),
    );
    return { owner, main, annex, customer: await ok(owner.post("/customers", { name: "Acme" }), 201) };
  }

  async function rows(client: ApiClient, itemId: string): Promise<Map<string, { row: number; quantity: number; reserved: number }>> {
    const locations = (await ok(client.get(`/items/${itemId}/variations`, { include: "locations" }))).data[0].locations as any[];
    return new Map(locations.map((l) => [l.location_id, { row: l.item_variation_location_id, quantity: l.quantity, reserved: l.quantity_reserved }]));
  }

  it("without a row named: the item's only row when its default location has none (not a new, empty row there)", async () => {
    const { owner, main, annex, customer } = await twoLocations();
    const item = await newItem(owner, main.id, { body: { location_id: main.id } });
    await ok(owner.post(`/items/${item.id}/adjustments`, { location_id: annex.id, quantity: 10 }), 201);
    const annexRow = (await rows(owner, item.id)).get(annex.id)!.row;

    const invoice = await ok(owner.post("/invoices", { customer_id: customer.id, lines: [{ item_id: item.id, quantity: 1 }] }), 201);
    expect(invoice.lines[0]).toMatchObject({ item_variation_location_id: annexRow, location_name: "Annex" });
    const order = await ok(owner.post("/sales-orders", { customer_id: customer.id, lines: [{ item_id: item.id, quantity: 2 }] }), 201);
    expect(order.lines[0]).toMatchObject({ item_variation_location_id: annexRow, location_name: "Annex" });
    const after = await rows(owner, item.id);
    expect([...after.keys()]).toEqual([annex.id]);
    expect(after.get(annex.id)).toMatchObject({ quantity: 9, reserved: 2 });
  });

  it("a line sent back by its id without item_variation_location_id keeps its row on sales orders, invoices and estimates", async () => {
    const { owner, main, annex, customer } = await twoLocations();
    const item = await newItem(owner, main.id, { stock: 10 });
    await ok(owner.post(`/items/${item.id}/adjustments`, { location_id: annex.id, quantity: 10 }), 201);
    const annexRow = (await rows(owner, item.id)).get(annex.id)!.row;
    const line = (quantity: number) => ({ item_id: item.id, item_variation_location_id: annexRow, quantity });

    const order = await ok(owner.post("/sales-orders", { customer_id: customer.id, lines: [line(2)] }), 201);
    const editedOrder = await ok(owner.patch(`/sales-orders/${order.id}`, { lines: [{ id: order.lines[0].id, item_id: item.id, quantity: 3 }] }));
    expect(editedOrder.lines[0]).toMatchObject({ item_variation_location_id: annexRow, location_name: "Annex", quantity: 3 });
    expect((await rows(owner, item.id)).get(annex.id)).toMatchObject({ reserved: 3 });
    expect((await rows(owner, item.id)).get(main.id)).toMatchObject({ reserved: 0 });

    const invoice = await ok(owner.post("/invoices", { customer_id: customer.id, lines: [line(1)] }), 201);
    const editedInvoice = await ok(owner.patch(`/invoices/${invoice.id}`, { lines: [{ id: invoice.lines[0].id, item_id: item.id, quantity: 2 }] }));
    expect(editedInvoice.lines[0]).toMatchObject({ item_variation_location_id: annexRow, quantity: 2 });
    expect((await rows(owner, item.id)).get(annex.id)).toMatchObject({ quantity: 8 });
    expect((await rows(owner, item.id)).get(main.id)).toMatchObject({ quantity: 10 });

    const estimate = await ok(owner.post("/estimates", { customer_id: customer.id, lines: [line(1)] }), 201);
    const editedEstimate = await ok(owner.patch(`/estimates/${estimate.id}`, { lines: [{ id: estimate.lines[0].id, item_id: item.id, quantity: 2 }] }));
    expect(editedEstimate.lines[0]).toMatchObject({ item_variation_location_id: annexRow, quantity: 2 });
  });
});
