import { randomUUID } from "node:crypto";
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import addFormatsModule from "ajv-formats";
import { beforeAll, describe, expect, it } from "vitest";
import { PERMISSIONS, type Permission } from "../../lib/auth/permissions.js";
import { createCustomField, createCustomerLabel, createKit, createPricingTier } from "../../lib/domain/admin/service.js";
import { buildOpenApiDocument } from "../../lib/openapi/document.js";
import { API_PREFIX, ROUTES, type RouteDefinition } from "../../lib/routes/index.js";
import { useApiServer, type ApiClient, type TestResponse } from "../support/api.js";
import { idempotencyKey, newAccount, newUser, type TestAccount } from "../support/fixtures.js";
import { scaled } from "../support/timeouts.js";

/**
 * The OpenAPI document is a contract: for EVERY route of the route table, its documented
 * example request is sent through HTTP (path ids and reference ids replaced by records of one
 * tenant), then requests that must fail (no key, a missing record, a bad body, a bad query,
 * no Idempotency-Key...), and each response must be one the document promises for that
 * operation: a documented status, every required documented header present (and valid), and
 * a body that validates against the documented schema (JSON Schema 2020-12, with formats).
 * Every operation is also called by restricted users: one lacking each permission the route
 * table says it always needs (403 `permission_denied`), one with no permission at all, and one
 * with every permission but restricted to another location (whatever they answer must be
 * documented); every operation with a body gets one over 1 MB
 * (413), and every one that honours `If-Match` a stale one (409).
 *
 * Derived from the route table: a new route is covered without touching this file, unless
 * its request names something this file cannot build; then the test fails and says what to
 * add to the tables below (PATH_IDS, BODY_REFERENCES, ROUTE_BODY_REFERENCES, PREPARE, HEADERS,
 * FRESH_RECORD).
 */
const api = useApiServer();
const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default;

type Json = Record<string, any>;
const doc = buildOpenApiDocument() as Json;

interface Tenant {
  account: TestAccount;
  client: ApiClient;
  ids: Record<string, string>;
}
let tenant: Tenant;

/** Path parameters: which of the tenant's records a `{param}` names (by the route's collection for `{id}`). */
const PATH_IDS: Record<string, (route: RouteDefinition, t: Tenant) => string | undefined> = {
  location_id: (_r, t) => t.ids.location,
  zone_id: (_r, t) => t.ids.zone,
  category_id: (_r, t) => t.ids.category,
  contact_id: (_r, t) => t.ids.contact,
  id: (route, t) => t.ids[collectionOf(route)],
  // Each transition needs an order (or transfer) in the state it starts from.
  // Payments go to an order of their own, its total far above the example payments (other routes change `order`).
  purchase_order_id: (route, t) =>
    route.operationId === "receivePurchaseOrder" ? t.ids.sentOrder : route.operationId.includes("PurchaseOrderPayment") ? t.ids.paidOrder : t.ids.order,
  payment_id: (route, t) => (route.group === "invoices" ? t.ids.invoicePayment : t.ids.payment),
  stock_transfer_id: (route, t) =>
    route.operationId === "receiveStockTransfer" ? t.ids.transitTransfer : route.operationId === "sendStockTransfer" ? t.ids.pendingTransfer : t.ids.transfer,
  kit_id: (_r, t) => t.ids.kit,
  build_id: (_r, t) => t.ids.build,
  operation: () => "snooze",
  // Estimates: Open ones; each transition that ends the Open state has one of its own.
  estimate_id: (route, t) => t.ids[ESTIMATE_FOR[route.operationId] ?? "estimate"],
  // Sales orders: updates need one with no activity; the others one with a packed, unshipped packing list.
  sales_order_id: (route, t) => (route.operationId === "updateSalesOrder" ? t.ids.openSalesOrder : t.ids.salesOrder),
  // Invoices: unpaid standalone for update and pack, one without payments to cancel, else one with a payment and a packing list.
  invoice_id: (route, t) =>
    route.operationId === "updateInvoice" || route.operationId === "packInvoice"
      ? t.ids.openInvoice
      : route.operationId === "cancelInvoice"
        ? t.ids.cancellableInvoice
        : t.ids.invoice,
  fulfillment_id: (route, t) => (route.group === "invoices" ? t.ids.invoiceFulfillment : t.ids.salesOrderFulfillment),
};

/** The estimate (a key of the tenant's ids) a route acts on, by operationId; others act on `estimate`. */
const ESTIMATE_FOR: Record<string, string> = {
  declineEstimate: "declinableEstimate",
  convertEstimateToInvoice: "convertibleEstimate",
  convertEstimateToSalesOrder: "convertibleEstimate2",
};

/** Body fields whose example value is an id (or ids): the tenant's record of that kind. */
const BODY_REFERENCES: Record<string, (t: Tenant) => string | undefined> = {
  location_id: (t) => t.ids.location,
  zone_id: (t) => t.ids.zone,
  category_id: (t) => t.ids.category,
  parent_id: (t) => t.ids.category,
  account_record_ids: (t) => t.ids.customers,
  customer_label_id: (t) => t.ids.label,
  pricing_tier_id: (t) => t.ids.tier,
  item_variation_id: (t) => t.ids.variation,
  custom_field_id: (t) => t.ids.customField,
  item_id: (t) => t.ids.items,
  contact_id: (t) => t.ids.contact,
  supplier_id: (t) => t.ids.suppliers,
  origin_location_id: (t) => t.ids.location,
  destination_location_id: (t) => t.ids.destination,
  line_id: (t) => t.ids.sentOrderLine,
  customer_id: (t) => t.ids.customers,
};

/** Body fields whose meaning depends on the route (`id` inside lines, records, known tasks). */
const ROUTE_BODY_REFERENCES: Record<string, Record<string, (t: Tenant) => string | undefined>> = {
  updatePurchaseOrder: { id: (t) => t.ids.orderLine },
  createTask: { id: (t) => t.ids.customers },
  updateTask: {},
  reconcileTasks: { id: (t) => t.ids.tasks },
  // `lines[].id`: a line of the document the route acts on (see PATH_IDS).
  updateEstimate: { id: (t) => t.ids.estimateLine },
  updateSalesOrder: { id: (t) => t.ids.openSalesOrderLine },
  packSalesOrder: { id: (t) => t.ids.salesOrderLine },
  invoiceSalesOrder: { id: (t) => t.ids.salesOrderLine },
  createInvoice: { item_id: (t) => t.ids.invoiceItem },
  updateInvoice: { id: (t) => t.ids.openInvoiceLine, item_id: (t) => t.ids.invoiceItem },
  packInvoice: { id: (t) => t.ids.openInvoiceLine },
};

/**
 * Request headers a route needs to get past its own preconditions, from the path the request
 * goes to: a preview of an estimate's changes needs If-Match with the estimate's current ETag.
 */
const HEADERS: Record<string, (t: Tenant, path: string) => Promise<Record<string, string>>> = {
  previewEstimateChanges: (t, path) => ifMatchOf(t, path.replace(/\/preview$/, "")),
};

/** If-Match with the record's current ETag (none when the record does not exist). */
async function ifMatchOf(t: Tenant, recordPath: string): Promise<Record<string, string>> {
  const etag = (await t.client.get(recordPath)).headers.get("etag");
  return etag ? { "if-match": etag } : {};
}

/**
 * Routes whose example needs state made just for it (a task at the example's version, a
 * reminder that is due): returns the path ids to use.
 */
const PREPARE: Record<string, (t: Tenant) => Promise<Record<string, string>>> = {
  updateTask: async (t) => ({ id: await newTask(t, {}) }),
  actOnTaskReminder: async (t) => {
    // The example snoozes with version 3: a task at version 3 whose reminder is due.
    const id = await newTask(t, { reminder_at: new Date(Date.now() + 1500).toISOString() });
    for (const version of [1, 2]) {
      const patched = await t.client.patch(`/tasks/${id}`, { version, title: `Contract task v${version + 1}` }, { idempotencyKey: idempotencyKey() });
      if (patched.status !== 200) throw new Error(`prepare actOnTaskReminder: ${patched.status} ${patched.text}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 1600));
    const task = (await t.client.get(`/tasks/${id}`)).body;
    return { id: task.reminder.id as string };
  },
};

async function newTask(t: Tenant, extra: Record<string, unknown>): Promise<string> {
  const created = await t.client.post("/tasks", { title: "Contract task", ...extra }, { idempotencyKey: idempotencyKey() });
  if (created.status !== 201) throw new Error(`newTask: ${created.status} ${created.text}`);
  return created.body.id as string;
}

/**
 * Routes whose example must act on a record of its own (it deletes or ends the record): the
 * record is made first by the POST route of the same collection. Every DELETE is one.
 */
const FRESH_RECORD = new Set<string>([]);

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** `customers` for `/api/v3/customers/{id}`: the collection a route's `{id}` belongs to. */
function collectionOf(route: RouteDefinition): string {
  const segments = route.path.slice(API_PREFIX.length + 1).split("/");
  const index = segments.indexOf("{id}");
  return index > 0 ? segments[index - 1]! : segments[0]!;
}

class CannotBuild extends Error {}

function pathOf(route: RouteDefinition, ids: Record<string, string> = {}): string {
  return route.path.slice(API_PREFIX.length).replace(/\{(\w+)\}/g, (_m, param: string) => {
    const id = ids[param] ?? PATH_IDS[param]?.(route, tenant);
    if (!id)
      throw new CannotBuild(
        `${route.operationId}: no record for path parameter {${param}}: teach PATH_IDS (test/integration/openapi-contract.connected.test.ts) which record it names.`,
      );
    return id;
  });
}

/** The example body with every id replaced by the tenant's record of that kind. */
function exampleBody(route: RouteDefinition): unknown {
  if (!route.request.body) return undefined;
  if (route.example?.body === undefined) throw new CannotBuild(`${route.operationId} has a body but no example: add \`example: { body }\` to its route.`);
  const replace = (value: unknown, field: string): unknown => {
    if (typeof value === "string" && UUID.test(value)) {
      const id = (ROUTE_BODY_REFERENCES[route.operationId]?.[field] ?? BODY_REFERENCES[field])?.(tenant);
      if (!id) throw new CannotBuild(`${route.operationId}: example field ${field} holds an id: teach BODY_REFERENCES which of the tenant's records it names.`);
      return id;
    }
    if (Array.isArray(value)) return value.map((v) => replace(v, field));
    if (value && typeof value === "object") return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, replace(v, k)]));
    return value;
  };
  return replace(structuredClone(route.example.body), "");
}

/** The POST route that creates a record of this route's collection (for FRESH_RECORD routes). */
function creatorOf(route: RouteDefinition): RouteDefinition {
  const collectionPath = route.path.replace(/\/\{\w+\}$/, "");
  const creator = ROUTES.find((r) => r.method === "POST" && r.path === collectionPath);
  if (!creator) throw new CannotBuild(`${route.operationId} acts on a record of its own, but no POST ${collectionPath} creates one: teach creatorOf.`);
  return creator;
}

interface Built {
  path: string;
  prepare?: () => Promise<Record<string, string>>;
  query?: Record<string, string>;
  body?: unknown;
  fresh?: RouteDefinition;
}

/** What the example request of a route needs (throws CannotBuild saying what is missing). */
function build(route: RouteDefinition): Built {
  const fresh = route.method === "DELETE" || FRESH_RECORD.has(route.operationId) ? creatorOf(route) : undefined;
  if (fresh) {
    exampleBody(fresh);
    pathOf(fresh);
  }
  const prepare = PREPARE[route.operationId];
  let prepared: Promise<Record<string, string>> | undefined;
  // Prepared once per built request: an identical retry must reach the same record.
  return {
    path: pathOf(route),
    query: route.example?.query,
    body: exampleBody(route),
    fresh,
    prepare: prepare ? () => (prepared ??= prepare(tenant)) : undefined,
  };
}

interface SendOptions {
  /** null: no API key; otherwise the tenant's owner unless `client` says who calls. */
  key?: string | null;
  client?: ApiClient;
  idempotencyKey?: string;
  raw?: string;
  method?: string;
  /** Request headers over the route's own (HEADERS); null leaves one out. */
  headers?: Record<string, string | null>;
}

async function send(route: RouteDefinition, built: Built, options: SendOptions = {}): Promise<TestResponse> {
  const client = options.key === null ? api() : (options.client ?? tenant.client);
  let path = built.path;
  if (built.prepare) path = pathOf(route, await built.prepare());
  if (built.fresh) {
    const created = await tenant.client.request("POST", pathOf(built.fresh), exampleBody(built.fresh), {
      idempotencyKey: built.fresh.idempotency === "none" ? undefined : idempotencyKey(),
    });
    if (created.status !== 201)
      throw new Error(`${route.operationId}: making its record with ${built.fresh.operationId} answered ${created.status} ${created.text}`);
    path = path.replace(/[^/]+$/, created.body.id as string);
  }
  const key = options.idempotencyKey ?? (route.idempotency === "none" ? undefined : idempotencyKey());
  const headers: Record<string, string> = { ...(await HEADERS[route.operationId]?.(tenant, path)) };
  for (const [name, value] of Object.entries(options.headers ?? {})) {
    if (value === null) delete headers[name];
    else headers[name] = value;
  }
  return client.request(options.method ?? route.method, path, options.raw === undefined ? built.body : undefined, {
    query: built.query,
    idempotencyKey: key,
    raw: options.raw,
    headers,
  });
}

// ---- validation against the document ----

const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats(ajv);
const toShared = (node: unknown): unknown => {
  if (Array.isArray(node)) return node.map(toShared);
  if (!node || typeof node !== "object") return node;
  return Object.fromEntries(
    Object.entries(node).map(([k, v]) => [k, k === "$ref" && typeof v === "string" ? v.replace("#/components/schemas/", "openapi.json#/$defs/") : toShared(v)]),
  );
};
ajv.addSchema({ $id: "openapi.json", $defs: toShared(doc.components.schemas) as Json });
const validators = new Map<string, ValidateFunction>();
function validatorOf(id: string, schema: unknown): ValidateFunction {
  let validate = validators.get(id);
  if (!validate) {
    validate = ajv.compile(toShared(schema) as Json);
    validators.set(id, validate);
  }
  return validate;
}

const resolve = (node: Json): Json =>
  typeof node.$ref === "string"
    ? (node.$ref
        .split("/")
        .slice(1)
        .reduce((n: Json, part: string) => n[part], doc) as Json)
    : node;

/** Checks one response against the documented responses of its operation (or a component response). */
function expectDocumented(label: string, response: TestResponse, responses: Record<string, Json>): void {
  const documented = responses[String(response.status)];
  expect(
    documented,
    `${label}: status ${response.status} is not documented (${Object.keys(responses).join(", ")}): ${response.text.slice(0, 300)}`,
  ).toBeDefined();
  const spec = resolve(documented!);
  for (const [name, headerRef] of Object.entries((spec.headers ?? {}) as Record<string, Json>)) {
    const header = resolve(headerRef);
    const value = response.headers.get(name);
    if (header.required) expect(value, `${label}: ${response.status} lacks required header ${name}`).not.toBeNull();
    if (value === null) continue;
    const schema = header.schema as Json;
    if (schema.type === "integer") {
      expect(value, `${label}: header ${name}`).toMatch(/^\d+$/);
      if (schema.minimum !== undefined) expect(Number(value), `${label}: header ${name}`).toBeGreaterThanOrEqual(schema.minimum);
      if (schema.maximum !== undefined) expect(Number(value), `${label}: header ${name}`).toBeLessThanOrEqual(schema.maximum);
    }
    if (schema.enum) expect(schema.enum, `${label}: header ${name}`).toContain(value);
  }
  const [mediaType, content] = Object.entries((spec.content ?? {}) as Record<string, Json>)[0] ?? [];
  if (!mediaType) return;
  expect(response.headers.get("content-type"), `${label}: content type`).toContain(mediaType.split(";")[0]!);
  if (mediaType.startsWith("application/json")) {
    expect(response.body, `${label}: body is not JSON: ${response.text.slice(0, 200)}`).toBeDefined();
    const validate = validatorOf(`${label} ${response.status}`, content!.schema);
    const valid = validate(response.body);
    expect(valid, `${label}: ${response.status} body does not match the document: ${ajv.errorsText(validate.errors)}\n${response.text.slice(0, 500)}`).toBe(
      true,
    );
  } else {
    expect(response.text.length, `${label}: empty ${mediaType} body`).toBeGreaterThan(0);
  }
}

const operationOf = (route: RouteDefinition): Json => doc.paths[route.path][route.method.toLowerCase()];
/** What the API answers for requests that match no operation (the document's `x-unmatched-responses`), by status. */
const UNMATCHED: Record<string, Json> = doc["x-unmatched-responses"];
function expectContract(route: RouteDefinition, label: string, response: TestResponse): void {
  expectDocumented(`${route.operationId} (${label})`, response, operationOf(route).responses);
}

// ---- the tenant ----

beforeAll(async () => {
  const account = await newAccount(`Contract ${randomUUID().slice(0, 8)}`);
  const client = api().withKey(account.ownerKey);
  const post = async (path: string, body: unknown) => {
    const response = await client.post(path, body, { idempotencyKey: idempotencyKey() });
    if (response.status !== 201) throw new Error(`${path}: ${response.status} ${response.text}`);
    return response.body.id as string;
  };
  const location = await post("/locations", { name: "Contract Warehouse", short_name: "CW" });
  const zone = await post(`/locations/${location}/zones`, { name: "Contract Zone", short_name: "CZ" });
  const category = await post("/item-categories", { name: "Contract Category", inventory_type: "quantity" });
  const customer = await post("/customers", { name: "Contract Customer" });
  const prospect = await post("/prospects", { name: "Contract Prospect" });
  const supplier = await post("/suppliers", { name: "Contract Supplier" });
  const contact = await post("/contacts", { first_name: "Contract", account_record_ids: [customer] });
  const item = await post("/items", { name: "Contract Item", category_id: category });
  const variation = (await client.get(`/items/${item}/variations`)).body.data[0].id as string;
  await post(`/items/${item}/adjustments`, { location_id: location, quantity: 100 });
  const customField = (await createCustomField({ accountId: account.accountId, kind: "customer", name: "Contract field" })).custom_field_id;
  const label = (await createCustomerLabel({ accountId: account.accountId, name: "Contract label" })).customer_label_id;
  const tier = (await createPricingTier({ accountId: account.accountId, name: "Contract tier" })).pricing_tier_id;
  // Documents and kits: an order in each state the transitions start from, transfers likewise.
  const destination = await post("/locations", { name: "Contract Destination", short_name: "CD" });
  const orderOf = () =>
    client.post("/purchase-orders", { supplier_id: supplier, location_id: location, lines: [{ item_id: item, quantity: 500, unit_cost: "100.0000" }] });
  const order = (await orderOf()).body;
  const sentOrder = (await orderOf()).body;
  const sent = await client.post(`/purchase-orders/${sentOrder.id}/send`, {});
  if (sent.status !== 200) throw new Error(`send: ${sent.status} ${sent.text}`);
  const paidOrder = (await orderOf()).body;
  const payment = await post(`/purchase-orders/${paidOrder.id}/payments`, { amount: "5" });
  const transferOf = async () =>
    post("/stock-transfers", { origin_location_id: location, destination_location_id: destination, lines: [{ item_id: item, quantity: 1 }] });
  const transfer = await transferOf();
  const pendingTransfer = await transferOf();
  const transitTransfer = await transferOf();
  const moving = await client.post(`/stock-transfers/${transitTransfer}/send`, {});
  if (moving.status !== 200) throw new Error(`send transfer: ${moving.status} ${moving.text}`);
  const component = await post("/items", { name: "Contract Component" });
  await post(`/items/${component}/adjustments`, { location_id: location, quantity: 1000 });
  const kitItem = await post("/items", { name: "Contract Kit" });
  const { kit_id: kit } = await createKit({ accountId: account.accountId, itemId: kitItem, components: [{ itemId: component, quantity: 2 }] });
  const build = await post(`/kits/${kit}/builds`, { location_id: location, quantity: 1 });
  const task = (await client.post("/tasks", { title: "Contract task" }, { idempotencyKey: idempotencyKey() })).body.id as string;
  // Sales documents, each in the state its transitions start from.
  const document = async (path: string, body: unknown) => {
    const response = await client.post(path, body, { idempotencyKey: idempotencyKey() });
    if (response.status !== 201) throw new Error(`${path}: ${response.status} ${response.text}`);
    return { id: response.body.id as string, line: response.body.lines[0].id as string };
  };
  // Invoices take stock from the item's row at its default location (the contract item is also
  // at the transfers' destination, so an invoice would have to name the row; and a sale by a user
  // of another location may make the invoice item a row there too).
  const invoiceItem = await post("/items", { name: "Contract Invoice Item", location_id: location });
  await post(`/items/${invoiceItem}/adjustments`, { location_id: location, quantity: 100 });
  const estimateOf = (lineItem: string) =>
    document("/estimates", {
      customer_id: customer,
      lines: [
        { item_id: lineItem, quantity: 1 },
        { name: "Contract service", unit_price: "10" },
      ],
    });
  // The last two: Open, unconverted, for the conversions (to an invoice, to a sales order); the invoice item's stock row is unambiguous.
  const [estimate, declinableEstimate, convertibleEstimate, convertibleEstimate2] = await Promise.all([
    estimateOf(item),
    estimateOf(item),
    estimateOf(invoiceItem),
    estimateOf(invoiceItem),
  ]);
  // Open, nothing packed or invoiced (update); and one with a packed, unshipped packing list (pack more, ship, invoice).
  const salesOrderOf = (quantity: number) => document("/sales-orders", { customer_id: customer, location_id: location, lines: [{ item_id: item, quantity }] });
  const [openSalesOrder, salesOrder] = await Promise.all([salesOrderOf(2), salesOrderOf(10)]);
  const salesOrderFulfillment = await post(`/sales-orders/${salesOrder.id}/fulfillments`, { lines: [{ id: salesOrder.line, quantity: 1 }] });
  // Unpaid standalone (update, pack); unpaid without payments (cancel); one with a payment and a packed,
  // unshipped packing list, its total far above the example payments (pay, delete a payment, ship).
  const [openInvoice, cancellableInvoice, invoice] = await Promise.all([
    document("/invoices", { customer_id: customer, lines: [{ item_id: invoiceItem, quantity: 2 }] }),
    document("/invoices", { customer_id: customer, lines: [{ item_id: invoiceItem, quantity: 1 }] }),
    document("/invoices", { customer_id: customer, lines: [{ item_id: invoiceItem, quantity: 2, unit_price: "1000" }] }),
  ]);
  const invoicePayment = await post(`/invoices/${invoice.id}/payments`, { amount: "1.0000" });
  // A webhook endpoint on a local port nothing listens on: the test route's message is refused at once.
  const webhookEndpoint = await post("/webhook-endpoints", { url: "http://127.0.0.1:9/contract", resources: ["item"] });
  const invoiceFulfillment = await post(`/invoices/${invoice.id}/fulfillments`, { lines: [{ id: invoice.line, quantity: 1 }] });
  tenant = {
    account,
    client,
    ids: {
      location,
      zone,
      category,
      contact,
      customers: customer,
      prospects: prospect,
      suppliers: supplier,
      items: item,
      variation,
      customField,
      label,
      tier,
      destination,
      order: order.id,
      paidOrder: paidOrder.id,
      orderLine: order.lines[0].id,
      sentOrder: sentOrder.id,
      sentOrderLine: sentOrder.lines[0].id,
      payment,
      transfer,
      pendingTransfer,
      transitTransfer,
      kits: kit,
      kit,
      build,
      tasks: task,
      // Reminder routes act on a reminder made by PREPARE; this only lets the path build.
      reminders: task,
      estimate: estimate.id,
      estimateLine: estimate.line,
      declinableEstimate: declinableEstimate.id,
      convertibleEstimate: convertibleEstimate.id,
      convertibleEstimate2: convertibleEstimate2.id,
      openSalesOrder: openSalesOrder.id,
      openSalesOrderLine: openSalesOrder.line,
      salesOrder: salesOrder.id,
      salesOrderLine: salesOrder.line,
      salesOrderFulfillment,
      invoiceItem,
      openInvoice: openInvoice.id,
      openInvoiceLine: openInvoice.line,
      cancellableInvoice: cancellableInvoice.id,
      invoice: invoice.id,
      invoicePayment,
      invoiceFulfillment,
      "webhook-endpoints": webhookEndpoint,
    },
  };
}, scaled(60_000));

// ---- the tests ----

describe("OpenAPI contract: every route answers what its document says", () => {
  it("can build a request for every route of the route table", () => {
    const problems: string[] = [];
    for (const route of ROUTES) {
      try {
        build(route);
      } catch (error) {
        if (!(error instanceof CannotBuild)) throw error;
        problems.push(error.message);
      }
    }
    expect(problems, problems.join("\n")).toEqual([]);
  });

  it.each(ROUTES.map((route) => [route.operationId, route] as const))("%s: its example succeeds, its failures are documented", async (_id, route) => {
    const built = build(route);
    let failures = 0;
    const failing = async (label: string, response: Promise<TestResponse>, status: number, code: string) => {
      const answered = await response;
      expect(answered.status, `${route.operationId} (${label}): ${answered.text.slice(0, 300)}`).toBe(status);
      expect(answered.body?.error?.code, `${route.operationId} (${label})`).toBe(code);
      expectContract(route, label, answered);
      failures += 1;
    };

    // If-Match, before the example changes the record's state: a stale revision changes nothing.
    if (route.ifMatch) {
      await failing("a stale If-Match", send(route, built, { headers: { "if-match": '"stale-revision"' } }), 409, "mobile_mutation_conflict");
      if (route.ifMatch === "required") {
        const code = route.errors?.[428]?.[0];
        expect(code, `${route.operationId} requires If-Match: its errors name the 428 code`).toBeDefined();
        await failing("no If-Match", send(route, built, { headers: { "if-match": null } }), 428, code!);
      }
    }

    // The documented example.
    const key = route.idempotency === "none" ? undefined : idempotencyKey();
    const example = await send(route, built, { idempotencyKey: key });
    expect(Object.keys(route.responses).map(Number), `${route.operationId} example answered ${example.status}: ${example.text.slice(0, 500)}`).toContain(
      example.status,
    );
    expectContract(route, "example", example);

    // An identical retry is replayed, and says so (not for routes that need a fresh record: the retry would make another).
    if (key && !built.fresh) {
      const replay = await send(route, built, { idempotencyKey: key });
      expect(replay.status, `${route.operationId} replay`).toBe(example.status);
      expect(replay.headers.get("idempotent-replayed"), `${route.operationId} replay`).toBe("true");
      expectContract(route, "replay", replay);
    }

    if (route.authenticated) await failing("no API key", send(route, built, { key: null }), 401, "authentication_required");
    if (route.idempotency === "required") {
      const headers = await HEADERS[route.operationId]?.(tenant, built.path);
      await failing(
        "no Idempotency-Key",
        tenant.client.request(route.method, built.path, built.body, { query: built.query, headers }),
        400,
        "idempotency_key_required",
      );
    }
    if (route.idempotency !== "none")
      await failing("malformed Idempotency-Key", send(route, built, { idempotencyKey: "x".repeat(256) }), 400, "invalid_idempotency_key");
    if (route.request.path) {
      const names = [...route.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!);
      // The last id in the path names no record (a fixed segment such as a reminder's operation keeps its value).
      const missing = names.filter((name) => name === "id" || name.endsWith("_id")).at(-1);
      const ids = Object.fromEntries(names.map((name) => [name, name === missing ? randomUUID() : PATH_IDS[name]!(route, tenant)!]));
      await failing(
        "a record that does not exist",
        send(route, { ...built, path: pathOf(route, ids), fresh: undefined, prepare: undefined }),
        404,
        "resource_missing",
      );
    }
    if (route.request.body && route.bodyProblems === "report") {
      // A route that reports its body's problems (an estimate preview) answers them in its 200.
      const reported = await send(route, { ...built, body: { ...(built.body as object), zz_not_a_field: 1 } });
      expect(reported.status, `${route.operationId} (an unknown body field): ${reported.text}`).toBe(200);
      expect(reported.body.errors, route.operationId).toEqual([expect.objectContaining({ param: "zz_not_a_field" })]);
    } else if (route.request.body) {
      // A route may name its own code for a body its schema refuses (e.g. invalid_invoice_pack); the document says which.
      await failing(
        "an unknown body field",
        send(route, { ...built, body: { ...(built.body as object), zz_not_a_field: 1 } }),
        422,
        route.protectedFields?.code ?? route.bodyErrorCode ?? "validation_failed",
      );
    }
    if (route.request.body) {
      await failing("a body that is not JSON", send(route, built, { raw: "{" }), 400, "invalid_json");
      await failing("a body over 1 MB", send(route, built, { raw: OVERSIZED_BODY }), 413, "request_too_large");
    }
    if (route.request.query) {
      const refused = refusedQuery(route);
      if (refused)
        await failing(
          `query ${Object.keys(refused)[0]} refused`,
          send(route, { ...built, query: { ...built.query, ...refused } }),
          422,
          "invalid_query_parameter",
        );
    }
    if (!route.authenticated) {
      // A public route has nothing to refuse; its path with another method is 404 with Allow.
      const other = route.method === "GET" ? "DELETE" : "GET";
      const response = await send(route, built, { method: other });
      expect(response.status, `${route.operationId} ${other}`).toBe(404);
      expect(response.headers.get("allow"), `${route.operationId} ${other}`).toContain(route.method);
      expectDocumented(`${route.operationId} (${other})`, response, UNMATCHED);
      failures += 1;
    }
    expect(failures, `${route.operationId}: no failing request tried`).toBeGreaterThan(0);
  });

  it("an unknown path answers the documented RouteNotFound response", async () => {
    const response = await tenant.client.get("/no-such-thing");
    expect(response.status).toBe(404);
    expectDocumented("unknown path", response, UNMATCHED);
  });
});

/** A JSON body just over the documented 1 MB limit. */
const OVERSIZED_BODY = JSON.stringify({ name: "x".repeat(1024 * 1024) });

/** Staff users of the tenant (every scope), made once each: one lacking exactly one permission, one with none. */
const restricted = new Map<string, Promise<ApiClient>>();
function userWithout(permissions: readonly Permission[] | "all"): Promise<ApiClient> {
  const key = permissions === "all" ? "none" : [...permissions].sort().join(",");
  let client = restricted.get(key);
  if (!client) {
    const granted = permissions === "all" ? [] : PERMISSIONS.filter((p) => !permissions.includes(p));
    client = newUser(tenant.account, { permissions: [...granted], scopes: "all" }).then((user) => api().withKey(user.key));
    restricted.set(key, client);
  }
  return client;
}

describe("OpenAPI contract: restricted users get what the document says", () => {
  const needing = ROUTES.flatMap((route) =>
    (route.permissions ?? []).map((permission) => [`${route.operationId} without ${permission}`, route, permission] as const),
  );

  it("the route table names the permissions of every operation that needs one (kits included)", () => {
    expect(needing.length).toBeGreaterThan(80);
    for (const id of ["listKits", "getKit", "listKitBuilds", "createKitBuild", "deleteKitBuild"])
      expect(ROUTES.find((r) => r.operationId === id)!.permissions?.length, id).toBe(1);
  });

  it.each(needing)("%s: 403 permission_denied, as documented", async (_label, route, permission) => {
    const response = await send(route, build(route), { client: await userWithout([permission]) });
    expect(response.status, `${route.operationId} as a user without ${permission}: ${response.text.slice(0, 300)}`).toBe(403);
    expect(response.body.error.code, `${route.operationId} as a user without ${permission}`).toBe("permission_denied");
    expectContract(route, `a user without ${permission}`, response);
  });

  it.each(ROUTES.filter((route) => route.authenticated).map((route) => [route.operationId, route] as const))(
    "%s as a user with no permission: a documented answer (403 permission_denied exactly when the route table says it needs one)",
    async (_id, route) => {
      const response = await send(route, build(route), { client: await userWithout("all") });
      expectContract(route, "a user with no permission", response);
      if (route.permissions?.length) {
        expect(response.status, `${route.operationId}: ${response.text.slice(0, 300)}`).toBe(403);
        expect(response.body.error.code, route.operationId).toBe("permission_denied");
      }
    },
  );
});

/** A staff user with every permission and scope, restricted to the tenant's second location (made once). */
let atOtherLocation: Promise<ApiClient> | undefined;
const userAtOtherLocation = () =>
  (atOtherLocation ??= newUser(tenant.account, { permissions: [...PERMISSIONS], scopes: "all", locationId: tenant.ids.destination }).then((user) =>
    api().withKey(user.key),
  ));

describe("OpenAPI contract: a user restricted to another location gets what the document says", () => {
  // The tenant's documents, stock and kit builds are at its first location: the location rule
  // answers 404 for them and 422 for bodies naming that location; each answer must be documented.
  it.each(ROUTES.filter((route) => route.authenticated).map((route) => [route.operationId, route] as const))("%s", async (_id, route) => {
    const response = await send(route, build(route), { client: await userAtOtherLocation() });
    expectContract(route, "a user restricted to another location", response);
  });
});

/** A query value the route's query schema refuses (422 invalid_query_parameter), if any. */
function refusedQuery(route: RouteDefinition): Record<string, string> | undefined {
  const schema = route.request.query!;
  for (const name of Object.keys(schema.shape)) {
    for (const probe of ["abc", "-", "1.5", "x".repeat(300)]) {
      if (!schema.safeParse({ [name]: probe }).success) return { [name]: probe };
    }
  }
  return undefined;
}
