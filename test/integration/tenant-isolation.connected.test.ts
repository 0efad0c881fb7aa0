import { randomUUID } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { createCustomField, createCustomerLabel, createKit, createPricingTier } from "../../lib/domain/admin/service.js";
import { ROUTES, API_PREFIX, type RouteDefinition } from "../../lib/routes/index.js";
import { sampleBody } from "../../scripts/events.js";
import { useApiServer, type ApiClient, type TestResponse } from "../support/api.js";
import { idempotencyKey, newAccount, type TestAccount } from "../support/fixtures.js";
import { scaled } from "../support/timeouts.js";

/**
 * Tenant isolation matrix, generated from the route table: for EVERY authenticated route,
 * account B tries account A's ids in the path, in reference query parameters and in reference
 * body fields. Each attempt must answer 404 or 422 (lists: 200 without any of A's data), no
 * response may contain anything of A, and A's data must be unchanged afterwards.
 *
 * A new route is covered automatically; a new kind of path parameter or reference must be
 * taught to `victimIdFor` / `FOREIGN_REFERENCES`, or this test fails and says so.
 */
const api = useApiServer();

interface Tenant {
  account: TestAccount;
  client: ApiClient;
  ids: Record<string, string>;
  syncCursor: string;
  /** A next_cursor of the tenant's task list. */
  taskCursor: string;
}

/** A's records get names that must never show up in B's responses. */
const SECRET = `SECRET-${randomUUID().slice(0, 8)}`;

async function createTenant(label: string, secret: string): Promise<Tenant> {
  const account = await newAccount(`${label} ${secret}`);
  const client = api().withKey(account.ownerKey);
  const post = async (path: string, body: unknown) => {
    const response = await client.post(path, body, { idempotencyKey: idempotencyKey() });
    if (response.status !== 201) throw new Error(`${path}: ${response.status} ${response.text}`);
    return response.body.id as string;
  };
  const name = `${label} ${secret}`;
  const location = await post("/locations", { name, short_name: "SEC" });
  const zone = await post(`/locations/${location}/zones`, { name, short_name: "SZ" });
  const category = await post("/item-categories", { name, inventory_type: "quantity" });
  const customer = await post("/customers", { name, office_email: `${secret}@example.com` });
  const prospect = await post("/prospects", { name });
  const supplier = await post("/suppliers", { name });
  const contact = await post("/contacts", { first_name: name, account_record_ids: [customer, supplier] });
  const item = await post("/items", { name, sku: secret, category_id: category, location_id: location });
  const variation = (await client.get(`/items/${item}/variations`)).body.data[0].id as string;
  await post(`/items/${item}/adjustments`, { location_id: location, quantity: 5, reason: name });
  const kitItem = await post("/items", { name: `${name} kit`, sku: `${secret}-KIT` });
  const kit = (await createKit({ accountId: account.accountId, itemId: kitItem, components: [{ itemId: item, quantity: 1 }] })).kit_id;
  const build = await post(`/kits/${kit}/builds`, { location_id: location, quantity: 1 });
  const syncCursor = (await client.get("/sync", { start: "now", resources: "item" })).body.cursor as string;
  const destination = await post("/locations", { name: `${name} 2`, short_name: "SEC2" });
  const purchaseOrder = await post("/purchase-orders", {
    supplier_id: supplier,
    location_id: location,
    name,
    lines: [{ item_id: item, quantity: 2, unit_cost: "3.0000" }],
  });
  const sentPurchaseOrder = await post("/purchase-orders", { supplier_id: supplier, location_id: location, name, lines: [{ item_id: item, quantity: 2 }] });
  const sent = await client.post(`/purchase-orders/${sentPurchaseOrder}/send`, {});
  if (sent.status !== 200) throw new Error(`send: ${sent.status} ${sent.text}`);
  const poLine = sent.body.lines[0].id as string;
  const payment = await post(`/purchase-orders/${purchaseOrder}/payments`, { amount: "1.0000", reference: name });
  const stockTransfer = await post("/stock-transfers", {
    origin_location_id: location,
    destination_location_id: destination,
    shipping_tracking_code: secret,
    lines: [{ item_id: item, quantity: 1 }],
  });
  const transitTransfer = await post("/stock-transfers", {
    origin_location_id: location,
    destination_location_id: destination,
    lines: [{ item_id: item, quantity: 1 }],
  });
  const transit = await client.post(`/stock-transfers/${transitTransfer}/send`, {});
  if (transit.status !== 200) throw new Error(`send transfer: ${transit.status} ${transit.text}`);
  const estimate = await post("/estimates", {
    customer_id: customer,
    name,
    lines: [
      { item_id: item, quantity: 1 },
      { name, unit_price: "1" },
    ],
  });
  const salesOrder = (
    await client.post(
      "/sales-orders",
      { customer_id: customer, location_id: location, name, lines: [{ item_id: item, quantity: 2 }] },
      { idempotencyKey: idempotencyKey() },
    )
  ).body;
  if (!salesOrder?.id) throw new Error("sales order not created");
  const soLine = salesOrder.lines[0].id as string;
  const soFulfillment = await post(`/sales-orders/${salesOrder.id}/fulfillments`, { lines: [{ id: soLine, quantity: 1 }] });
  const invoice = (
    await client.post(
      "/invoices",
      { customer_id: customer, name, purchase_order_number: secret, lines: [{ item_id: item, quantity: 1, unit_price: "5" }] },
      { idempotencyKey: idempotencyKey() },
    )
  ).body;
  if (!invoice?.id) throw new Error("invoice not created");
  const invoiceLine = invoice.lines[0].id as string;
  const invoicePayment = await post(`/invoices/${invoice.id}/payments`, { amount: "1.0000", reference: name });
  const invoiceFulfillment = await post(`/invoices/${invoice.id}/fulfillments`, { lines: [{ id: invoiceLine, quantity: 1 }] });
  // Records in states that accept updates and packing (the matrix must reach their reference checks).
  const openSalesOrder = await post("/sales-orders", { customer_id: customer, location_id: location, lines: [{ name, unit_price: "1" }] });
  const openInvoice = (
    await client.post("/invoices", { customer_id: customer, lines: [{ item_id: item, quantity: 1, unit_price: "5" }] }, { idempotencyKey: idempotencyKey() })
  ).body;
  if (!openInvoice?.id) throw new Error("open invoice not created");
  const customField = (await createCustomField({ accountId: account.accountId, kind: "customer", name })).custom_field_id;
  const label_ = (await createCustomerLabel({ accountId: account.accountId, name })).customer_label_id;
  const tier = (await createPricingTier({ accountId: account.accountId, name })).pricing_tier_id;
  // Tasks: one linked to the customer with a reminder far ahead (so nothing changes by time), one more for a cursor.
  const task = await post("/tasks", {
    title: name,
    description: secret,
    due_date: "2099-01-01",
    reminder_at: "2099-01-01T09:00:00Z",
    record: { type: "customer", id: customer },
  });
  await post("/tasks", { title: `${name} 2`, due_date: "2099-01-02" });
  const taskList = await client.get("/tasks", { limit: 1 });
  const reminder = (await client.get(`/tasks/${task}`)).body.reminder.id as string;
  // A webhook endpoint on a port nothing listens on (this file runs no stream poller: nothing is delivered).
  const webhookEndpoint = await post("/webhook-endpoints", { url: "http://127.0.0.1:9/isolation", resources: ["item"], description: secret });
  return {
    account,
    client,
    ids: {
      location,
      zone,
      category,
      customer,
      prospect,
      supplier,
      contact,
      item,
      variation,
      customField,
      label: label_,
      tier,
      destination,
      purchaseOrder,
      sentPurchaseOrder,
      poLine,
      payment,
      stockTransfer,
      transitTransfer,
      kitItem,
      kit,
      build,
      task,
      reminder,
      owner: account.ownerUserId,
      estimate,
      salesOrder: salesOrder.id as string,
      soLine,
      soFulfillment,
      invoice: invoice.id as string,
      invoiceLine,
      invoicePayment,
      invoiceFulfillment,
      openSalesOrder,
      openInvoice: openInvoice.id as string,
      openInvoiceLine: openInvoice.lines[0].id as string,
      webhookEndpoint,
    },
    syncCursor,
    taskCursor: taskList.body.next_cursor as string,
  };
}

let victim: Tenant;
let attacker: Tenant;
let victimSnapshot: string[];

/** Everything A can read about itself, to prove nothing changed. */
async function snapshot(tenant: Tenant): Promise<string[]> {
  const paths = ROUTES.filter((r) => r.method === "GET" && r.authenticated).map((r) => pathWith(r, (param) => victimIdFor(r, param, tenant)));
  const texts: string[] = [];
  for (const path of paths) texts.push((await tenant.client.get(path, { limit: 100 })).text);
  return texts;
}

/** The id of the tenant's own record that a path parameter names. */
function victimIdFor(route: RouteDefinition, param: string, tenant: Tenant): string {
  switch (param) {
    case "location_id":
      return tenant.ids.location!;
    case "zone_id":
      return tenant.ids.zone!;
    case "category_id":
      return tenant.ids.category!;
    case "contact_id":
      return tenant.ids.contact!;
    case "purchase_order_id":
      return route.operationId === "receivePurchaseOrder" ? tenant.ids.sentPurchaseOrder! : tenant.ids.purchaseOrder!;
    case "payment_id":
      return route.group === "invoices" ? tenant.ids.invoicePayment! : tenant.ids.payment!;
    case "sales_order_id":
      return route.operationId === "updateSalesOrder" ? tenant.ids.openSalesOrder! : tenant.ids.salesOrder!;
    case "invoice_id":
      return route.operationId === "updateInvoice" || route.operationId === "packInvoice" ? tenant.ids.openInvoice! : tenant.ids.invoice!;
    case "fulfillment_id":
      return route.group === "invoices" ? tenant.ids.invoiceFulfillment! : tenant.ids.soFulfillment!;
    case "stock_transfer_id":
      return route.operationId === "receiveStockTransfer" ? tenant.ids.transitTransfer! : tenant.ids.stockTransfer!;
    case "kit_id":
      return tenant.ids.kit!;
    case "build_id":
      return tenant.ids.build!;
    case "operation":
      return "snooze"; // not an id: the operation of the route's example body
    case "estimate_id":
      return tenant.ids.estimate!;
    case "id": {
      if (route.path.includes("/tasks/reminders/")) return tenant.ids.reminder!;
      const collection = route.path.slice(API_PREFIX.length + 1).split("/")[0]!;
      if (collection === "tasks") return tenant.ids.task!;
      if (collection === "webhook-endpoints") return tenant.ids.webhookEndpoint!;
      const kind = { customers: "customer", prospects: "prospect", suppliers: "supplier", items: "item" }[collection];
      if (kind) return tenant.ids[kind]!;
      break;
    }
  }
  throw new Error(`The isolation matrix does not know path parameter {${param}} of ${route.operationId}: teach victimIdFor.`);
}

function pathWith(route: RouteDefinition, idFor: (param: string) => string): string {
  return route.path.slice(API_PREFIX.length).replace(/\{(\w+)\}/g, (_m, param: string) => idFor(param));
}

/** Query parameters and body fields that reference records, with A's id to try. */
const FOREIGN_QUERY: Record<string, (a: Tenant, route: RouteDefinition) => string> = {
  parent_id: (a) => a.ids.category!,
  account_record_id: (a) => a.ids.customer!,
  category_id: (a) => a.ids.category!,
  location_id: (a) => a.ids.location!,
  supplier_id: (a) => a.ids.supplier!,
  origin_location_id: (a) => a.ids.location!,
  destination_location_id: (a) => a.ids.destination!,
  // A's records of every kind an `ids` list fetches (each list ignores the others' ids).
  ids: (a) => [a.ids.item, a.ids.estimate, a.ids.purchaseOrder, a.ids.salesOrder, a.ids.invoice].join(","),
  cursor: (a, route) => (route.group === "tasks" ? a.taskCursor : a.syncCursor),
  assignee: (a) => a.ids.owner!,
  record_id: (a) => a.ids.customer!,
  customer_id: (a) => a.ids.customer!,
};

/** Path parameters that name no record (an operation), so no "B's parent with A's child" attempt. */
const NOT_IDS = new Set(["operation"]);

/** Query that makes a parameterless GET a valid request of its own (the plain attempt). */
const PLAIN_QUERY: Record<string, Record<string, string>> = {
  sync: { start: "now", resources: "item" },
};
const FOREIGN_REFERENCES: Record<string, (a: Tenant) => unknown> = {
  parent_id: (a) => a.ids.category,
  account_record_ids: (a) => [a.ids.customer],
  customer_label_id: (a) => a.ids.label,
  pricing_tier_id: (a) => a.ids.tier,
  custom_field_values: (a) => [{ custom_field_id: a.ids.customField, value: "x" }],
  category_id: (a) => a.ids.category,
  location_id: (a) => a.ids.location,
  item_variation_id: (a) => a.ids.variation,
  supplier_id: (a) => a.ids.supplier,
  origin_location_id: (a) => a.ids.location,
  destination_location_id: (a) => a.ids.destination,
  assignee_user_id: (a) => a.ids.owner,
  record: (a) => ({ type: "customer", id: a.ids.customer }),
  customer_id: (a) => a.ids.customer,
};

/** Headers a route needs to get past its own preconditions (previews of an estimate need If-Match). */
const HEADERS: Record<string, (b: Tenant) => Promise<Record<string, string>>> = {
  previewEstimateChanges: async (b) => ({ "if-match": (await b.client.get(`/estimates/${b.ids.estimate}`)).body.revision }),
};

/** Document lines with A's item (and A's line ids of the route's own kind) in place of the sample's. */
function foreignLines(route: RouteDefinition, sample: unknown, a: Tenant): unknown {
  const lineId = route.group === "sales-orders" ? a.ids.soLine : route.group === "invoices" ? a.ids.invoiceLine : a.ids.poLine;
  return (Array.isArray(sample) ? sample : []).map((line: Record<string, unknown>) => ({
    ...line,
    ...("item_id" in line ? { item_id: a.ids.item } : {}),
    ...("line_id" in line ? { line_id: lineId } : {}),
    ...("id" in line ? { id: lineId } : {}),
  }));
}

interface Attempt {
  name: string;
  run: () => Promise<TestResponse & { url?: string; sentBody?: unknown }>;
  /** Lists may answer 200, as long as nothing of A is in them. */
  allowOk: boolean;
  /** A rejected cursor may be 400 invalid_cursor (task lists) rather than 403 (sync). */
  cursor?: boolean;
}

function attemptsFor(route: RouteDefinition): Attempt[] {
  const attempts: Attempt[] = [];
  const send = (path: string, body?: unknown, query?: Record<string, string>) => async () => ({
    ...(await attacker.client.request(route.method, path, body, {
      query,
      idempotencyKey: route.idempotency === "none" ? undefined : idempotencyKey(),
      headers: await HEADERS[route.operationId]?.(attacker),
    })),
    url: `${path}?${new URLSearchParams(query ?? {}).toString()}`,
    sentBody: body,
  });
  const params = [...route.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!);
  const body = route.request.body ? sampleBody(route.operationId) : undefined;
  if (route.request.body && body === undefined) throw new Error(`${route.operationId} has no sample body in scripts/events.ts.`);

  if (params.length > 0) {
    // Every path parameter A's; then, for nested paths, B's own parent with A's child.
    attempts.push({
      name: "A's ids in the path",
      run: send(
        pathWith(route, (p) => victimIdFor(route, p, victim)),
        body,
      ),
      allowOk: false,
    });
    const ids = params.filter((p) => !NOT_IDS.has(p));
    if (ids.length > 1) {
      const last = ids[ids.length - 1]!;
      attempts.push({
        name: "B's parent with A's child in the path",
        run: send(
          pathWith(route, (p) => (p === last ? victimIdFor(route, p, victim) : victimIdFor(route, p, attacker))),
          body,
        ),
        allowOk: false,
      });
    }
  }
  for (const name of Object.keys(route.request.query?.shape ?? {})) {
    const foreign = FOREIGN_QUERY[name];
    if (!foreign) continue;
    attempts.push({
      name: `A's id in query ${name}`,
      run: send(
        pathWith(route, (p) => victimIdFor(route, p, attacker)),
        undefined,
        { [name]: foreign(victim, route) },
      ),
      allowOk: true,
      cursor: name === "cursor",
    });
  }
  if (route.request.body) {
    const shape = (route.request.body as unknown as { shape?: Record<string, unknown> }).shape ?? {};
    for (const field of Object.keys(shape)) {
      const foreign = field === "lines" ? (a: Tenant) => foreignLines(route, (body as Record<string, unknown>).lines, a) : FOREIGN_REFERENCES[field];
      if (!foreign) continue;
      attempts.push({
        name: `A's id in body ${field}`,
        run: send(
          pathWith(route, (p) => victimIdFor(route, p, attacker)),
          { ...(body as object), [field]: foreign(victim) },
        ),
        allowOk: false,
      });
    }
  }
  if (params.length === 0 && route.method === "GET") {
    attempts.push({
      name: "plain list",
      run: send(
        pathWith(route, () => ""),
        undefined,
        PLAIN_QUERY[route.operationId] ?? { limit: "100" },
      ),
      allowOk: true,
    });
  }
  return attempts;
}

beforeAll(async () => {
  [victim, attacker] = await Promise.all([createTenant("Victim", SECRET), createTenant("Attacker", "own")]);
  victimSnapshot = await snapshot(victim);
}, scaled(60_000));

const authenticatedRoutes = ROUTES.filter((route) => route.authenticated);

describe("tenant isolation matrix", () => {
  it("knows how to attack every authenticated route", () => {
    for (const route of authenticatedRoutes) expect(() => attemptsFor(route)).not.toThrow();
  });

  it.each(authenticatedRoutes.map((route) => [route.operationId, route] as const))("%s never reaches another account", async (_name, route) => {
    const attempts = attemptsFor(route);
    for (const attempt of attempts) {
      const response = await attempt.run();
      const allowed = attempt.allowOk ? [200, 403, 404, 422, ...(attempt.cursor ? [400] : [])] : [404, 422];
      // A preview answers 200 and lists what the write would refuse in `errors` (its refusal).
      const previewRefused = response.status === 200 && response.body?.object === "estimate_preview" && response.body.errors.length > 0;
      if (!previewRefused) expect(allowed, `${route.operationId}: ${attempt.name} answered ${response.status} ${response.text}`).toContain(response.status);
      if (response.status >= 400) {
        // invalid_invoice_pack: a pack body's validation error (spec 4.5), e.g. a line id that is not the invoice's.
        expect([
          "resource_missing",
          "validation_failed",
          "invalid_query_parameter",
          "sync_cursor_owner_mismatch",
          "invalid_cursor",
          "invalid_invoice_pack",
        ]).toContain(response.body.error.code);
      }
      expect(response.text, `${route.operationId}: ${attempt.name} leaked account A`).not.toContain(SECRET);
      // An error may echo the id the caller sent ("No such customer: <id>"); any other id of A is a leak.
      const sent = decodeURIComponent(response.url ?? "") + JSON.stringify(response.sentBody ?? null);
      for (const id of Object.values(victim.ids)) {
        if (!sent.includes(id)) expect(response.text, `${route.operationId}: ${attempt.name} leaked ${id}`).not.toContain(id);
      }
    }
  });

  it("left every record of the other account unchanged", async () => {
    expect(await snapshot(victim)).toEqual(victimSnapshot);
  });
});
