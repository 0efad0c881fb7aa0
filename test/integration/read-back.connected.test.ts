import { randomUUID } from "node:crypto";
import { afterAll, describe, expect, it } from "vitest";
import type * as z from "zod";
import { createCustomField, createCustomerLabel, createPricingTier, createUnit } from "../../lib/domain/admin/service.js";
import { API_PREFIX, ROUTES } from "../../lib/routes/index.js";
import { useApiServer, type ApiClient, type TestResponse } from "../support/api.js";
import { expectError } from "../support/assertions.js";
import { estimateWorld, type EstimateWorld } from "../support/estimates.js";
import { idempotencyKey } from "../support/fixtures.js";
import { newTask, taskUser } from "../support/tasks.js";
import { naiveWriteBack } from "../support/write-back.js";
import { scaled } from "../support/timeouts.js";

/**
 * "What you read you can write back" (architecture section 8): for every resource with a PATCH
 * (or PUT), the body of its GET with the read-only fields removed is accepted by that PATCH and
 * changes nothing; `null` where GET shows `null` is accepted for the same field; lines come back
 * with their ids. And a document converted from a 300-line estimate accepts its own lines back
 * (an update's `lines` may hold up to max(the kind's create limit, the document's line count)).
 * Dates are real calendar dates from 0001-01-01 (architecture section 8, "Dates").
 *
 * How the body is built (keep it reviewable): READ_BACK below lists, per resource, the fields of
 * its GET that are read-only (the record's own ids and numbers, totals, timestamps, statuses,
 * computed quantities, snapshots of other records, nested read-only parts, and fields the spec
 * gives no write path at all, neither create nor update). Everything else the GET shows is sent
 * back as it was read. The list cannot rot silently: a test checks it against the update body
 * schema of the route table (nothing declared read-only may be writable), and each resource
 * test names every GET field that is neither declared read-only nor known to that schema.
 *
 * What a no-op write may move: nothing. Not a line id, not a total, not stock, not a customer's
 * figures, and not the bookkeeping either (`updated_at`, `revision`, a task's `modified` and
 * `version`): a write that changes nothing writes nothing (so no change marker either).
 *
 * Every test makes its own account, so the file runs in parallel with the others.
 */
const api = useApiServer();

type Json = Record<string, any>;

/** Fields a no-op write may move: none (a write that changes nothing writes nothing). */
const MAY_MOVE: readonly string[] = [];
/** The bookkeeping fields a write would move, reported at the end. */
const BOOKKEEPING = ["updated_at", "revision", "modified", "version"];

interface NestedRule {
  /** Read-only keys of each entry (or of the object). */
  readOnly: readonly string[];
  /** Entries the service generates and the update must not carry (the discount line). */
  generated?: (entry: Json) => boolean;
}

interface ReadBackRule {
  /** The update route in the route table (method and path after /api/v3). */
  method: "PATCH" | "PUT";
  path: string;
  /** Top-level read-only keys of the GET body. */
  readOnly: readonly string[];
  /** Arrays or objects of the GET body whose entries have read-only parts of their own. */
  nested?: Record<string, NestedRule>;
}

const PARTY_READ_ONLY = ["id", "object", "customer_number", "document_count", "archived", "owner_user_id", "created_at", "updated_at"];

/** Generated lines (document-wide discount) are controlled by `discount_percent`, never sent. */
const discountLine = (line: Json) => line.line_type === "discount";

const DOCUMENT_LINE_DISPLAY = [
  "object",
  "line_type",
  "position",
  "unit_id",
  "unit_name",
  "sku",
  "variation_values",
  "variation_number",
  "location_name",
  "thumbnail_url",
];

/**
 * THE table: per resource, what its GET shows that a client cannot write. Reasons in comments
 * where the field is not obviously an id, number, total, timestamp, status or computed value.
 */
const READ_BACK: Record<string, ReadBackRule> = {
  zone: {
    method: "PATCH",
    path: "/locations/{location_id}/zones/{zone_id}",
    readOnly: ["id", "object", "location_id" /* spec 4.1: a zone's location cannot be changed */],
  },
  item_category: {
    method: "PATCH",
    path: "/item-categories/{category_id}",
    readOnly: ["id", "object"],
    nested: { custom_fields: { readOnly: ["display_order" /* the array order becomes display_order */] } },
  },
  contact: {
    method: "PATCH",
    path: "/contacts/{contact_id}",
    // account_records: the visible links as {id, object, name}; written as account_record_ids (omitted keeps them)
    readOnly: ["id", "object", "account_records", "created_at", "updated_at"],
  },
  customer: { method: "PATCH", path: "/customers/{id}", readOnly: [...PARTY_READ_ONLY, "last_invoice_date", "lifetime_revenue_total"] },
  prospect: { method: "PATCH", path: "/prospects/{id}", readOnly: PARTY_READ_ONLY },
  supplier: { method: "PATCH", path: "/suppliers/{id}", readOnly: PARTY_READ_ONLY },
  item: {
    method: "PATCH",
    path: "/items/{id}",
    readOnly: [
      "id",
      "object",
      "item_number",
      "category_name",
      "status_id",
      "unit_name",
      "quantity",
      "quantity_reserved",
      "quantity_incoming",
      "quantity_available",
      "in_transit",
      "variation_count",
      "sold",
      "location_inventory",
      "created_at",
      "updated_at",
    ],
  },
  purchase_order: {
    method: "PATCH",
    path: "/purchase-orders/{purchase_order_id}",
    readOnly: [
      "id",
      "object",
      "purchase_order_number",
      "supplier_name",
      "assigned_user_id",
      "status_id",
      "status",
      "date_sent",
      "date_received",
      "date_fully_paid",
      "party",
      "pre_discount_total",
      "discount_total",
      "tax_label",
      "tax_2_label",
      "can_edit",
      "edit_block_reason",
      "revision",
      "subtotal",
      "tax",
      "tax_2",
      "total",
      "amount_paid",
      "amount_due",
      "created_at",
      "updated_at",
    ],
    nested: {
      lines: {
        readOnly: [...DOCUMENT_LINE_DISPLAY, "quantity_received", "discount_percent" /* the order's, per line */, "discounted_unit_cost", "subtotal"],
        generated: discountLine,
      },
    },
  },
  stock_transfer: {
    method: "PATCH",
    path: "/stock-transfers/{stock_transfer_id}",
    readOnly: [
      "id",
      "object",
      "stock_transfer_number",
      "assigned_user_id",
      "status_id",
      "status",
      "origin_location" /* spec 4.2: origin and destination cannot be changed */,
      "destination_location",
      "date_sent",
      "date_received",
      "created_at",
      "updated_at",
    ],
    nested: { lines: { readOnly: ["object", "name", "variation", "unit_id"] } },
  },
  estimate: {
    method: "PATCH",
    path: "/estimates/{estimate_id}",
    readOnly: [
      "id",
      "object",
      "estimate_number",
      "customer_name",
      "customer_kind",
      "salesperson_id",
      "status_id",
      "status",
      "date_sent",
      "subtotal",
      "tax",
      "tax_2",
      "total",
      "pre_discount_subtotal",
      "discount",
      "can_edit",
      "edit_block_reason",
      "revision",
      "created_at",
      "updated_at",
      "converted_document",
    ],
    nested: {
      lines: {
        readOnly: [...DOCUMENT_LINE_DISPLAY, "unit_cost", "total_cost", "discount_percent", "discounted_unit_price", "subtotal", "tax", "tax_2", "total"],
        generated: discountLine,
      },
    },
  },
  sales_order: {
    method: "PATCH",
    path: "/sales-orders/{sales_order_id}",
    readOnly: [
      "id",
      "object",
      "sales_order_number",
      "customer_name",
      "salesperson_id",
      "status_id",
      "status",
      // drop-shipping: not writable on create either (spec 4.4 create table); no write path in the API
      "drop_shipped",
      "drop_ship_customer_id",
      "drop_ship_address",
      "subtotal",
      "tax",
      "tax_2",
      "total",
      "amount_paid",
      "amount_due",
      "invoiced_percent",
      "paid_percent",
      "packed_percent",
      "shipped_percent",
      "invoice_count",
      "source_estimate",
      "party",
      "pre_discount_total",
      "discount_total",
      "tax_label",
      "tax_2_label",
      "can_edit",
      "edit_block_reason",
      "can_pack",
      "pack_block_reason",
      "revision",
      "created_at",
      "updated_at",
    ],
    nested: {
      lines: {
        readOnly: [
          ...DOCUMENT_LINE_DISPLAY,
          "quantity_invoiced",
          "quantity_packed",
          "quantity_shipped",
          "quantity_remaining_to_pack",
          "discount_percent",
          "discounted_unit_price",
          "subtotal",
          "unit_cost",
          "total_cost",
        ],
        generated: discountLine,
      },
    },
  },
  invoice: {
    method: "PATCH",
    path: "/invoices/{invoice_id}",
    readOnly: [
      "id",
      "object",
      "invoice_number",
      "customer_name",
      "salesperson_id",
      "status_id",
      "status",
      "expiry_date" /* not writable on create either (spec 4.5 create table); copied from an estimate on conversion */,
      "date_sent",
      "date_fully_paid",
      "subtotal",
      "tax",
      "tax_2",
      "total",
      "amount_paid",
      "amount_due",
      "party",
      "pre_discount_total",
      "discount_total",
      "tax_label",
      "tax_2_label",
      "can_edit",
      "edit_block_reason",
      "revision",
      "source_estimate",
      "source_sales_order",
      "fulfillment_authority",
      "fulfillment_sales_order_id",
      "packed_percent",
      "shipped_percent",
      "can_pack",
      "pack_block_reason",
      "created_at",
      "updated_at",
    ],
    nested: {
      lines: {
        readOnly: [
          ...DOCUMENT_LINE_DISPLAY,
          "quantity_packed",
          "quantity_shipped",
          "discount_percent",
          "discounted_unit_price",
          "subtotal",
          "unit_cost",
          "total_cost",
        ],
        generated: discountLine,
      },
    },
  },
  task: {
    method: "PATCH",
    path: "/tasks/{id}",
    // assignee {id, name, photo_url, active} is written as assignee_user_id; reminder as reminder_at
    readOnly: ["id", "object", "due_at", "overdue_at", "created", "modified", "completed_at", "assignee", "reminder", "available_actions"],
    nested: { record: { readOnly: ["name", "number"] /* the preview; written as {type, id} */ } },
  },
};

// ---------------------------------------------------------------------------------------------
// The update schemas of the route table, as far as the table needs them (which keys they know)

interface ZodDef {
  type: string;
  shape?: Record<string, z.ZodType>;
  innerType?: z.ZodType;
  in?: z.ZodType;
  element?: z.ZodType;
  options?: z.ZodType[];
}
const defOf = (schema: z.ZodType): ZodDef => (schema as unknown as { _zod: { def: ZodDef } })._zod.def;

/** The object shape a schema accepts (through optional, nullable, default, pipes, arrays, unions). */
function shapeOf(schema: z.ZodType | undefined): Record<string, z.ZodType> | undefined {
  let current = schema;
  for (let depth = 0; current && depth < 20; depth++) {
    const def = defOf(current);
    if (def.type === "object") return def.shape;
    if (def.type === "array") current = def.element;
    else if (def.type === "pipe") current = def.in;
    else if (def.type === "union") current = def.options?.find((option) => shapeOf(option) !== undefined);
    else current = def.innerType;
  }
  return undefined;
}

function updateSchema(rule: ReadBackRule): z.ZodType {
  const route = ROUTES.find((r) => r.method === rule.method && r.path === `${API_PREFIX}${rule.path}`);
  if (!route?.request.body) throw new Error(`no ${rule.method} ${rule.path} with a body in the route table`);
  return route.request.body;
}

/** Keys the update body schema knows: at the top (`[]`) or inside a nested field (`["lines"]`). */
function writableKeys(rule: ReadBackRule, nestedField?: string): string[] {
  const top = shapeOf(updateSchema(rule));
  const shape = nestedField === undefined ? top : shapeOf(top?.[nestedField]);
  return Object.keys(shape ?? {});
}

// ---------------------------------------------------------------------------------------------
// Reading back

const omit = (value: Json, keys: readonly string[]): Json => Object.fromEntries(Object.entries(value).filter(([key]) => !keys.includes(key)));

/** The GET body with the read-only fields of READ_BACK removed: what a client writes back. */
function writeBackBody(resource: keyof typeof READ_BACK, got: Json): Json {
  const rule = READ_BACK[resource]!;
  const body = omit(got, rule.readOnly);
  for (const [field, nested] of Object.entries(rule.nested ?? {})) {
    const value = body[field];
    if (Array.isArray(value)) body[field] = value.filter((entry) => !nested.generated?.(entry)).map((entry) => omit(entry, nested.readOnly));
    else if (value !== null && typeof value === "object") body[field] = omit(value, nested.readOnly);
  }
  return body;
}

/**
 * GET fields that are neither declared read-only in READ_BACK nor known to the update schema:
 * each is a field the server should accept back (or a read-only field missing from the table).
 */
function unknownToSchema(resource: keyof typeof READ_BACK, got: Json): string[] {
  const rule = READ_BACK[resource]!;
  const sent = writeBackBody(resource, got);
  const known = writableKeys(rule);
  const problems = Object.keys(sent).filter((key) => !known.includes(key));
  for (const field of Object.keys(rule.nested ?? {})) {
    const value = sent[field];
    const entries: Json[] = Array.isArray(value) ? value : value !== null && typeof value === "object" ? [value] : [];
    const nestedKnown = writableKeys(rule, field);
    const nestedKeys = new Set(entries.flatMap((entry) => Object.keys(entry)));
    for (const key of nestedKeys) if (!nestedKnown.includes(key)) problems.push(`${field}[].${key}`);
  }
  return problems;
}

/** Every leaf that differs between two JSON values, as `path: before -> after` (readable failures). */
function differences(before: unknown, after: unknown, path = ""): string[] {
  if (before !== null && after !== null && typeof before === "object" && typeof after === "object") {
    const keys = new Set([...Object.keys(before), ...Object.keys(after)]);
    return [...keys].flatMap((key) =>
      differences((before as Json)[key], (after as Json)[key], Array.isArray(before) ? `${path}[${key}]` : path ? `${path}.${key}` : key),
    );
  }
  return JSON.stringify(before) === JSON.stringify(after) ? [] : [`${path}: ${JSON.stringify(before)} -> ${JSON.stringify(after)}`];
}

/** What moved among MAY_MOVE, per resource, for the summary at the end. */
const moved: { resource: string; fields: string[] }[] = [];
afterAll(() => {
  if (moved.length === 0) return;
  const lines = moved.map(({ resource, fields }) => `  ${resource}: ${fields.length === 0 ? "nothing moved" : `moved ${fields.join(", ")}`}`);
  console.info(`read-back: bookkeeping fields after a no-op write\n${lines.join("\n")}`);
});

interface ReadBackOptions {
  /** The path of the record (after /api/v3). */
  path: string;
  /** How to GET it again (zones have no GET of their own). */
  read?: () => Promise<Json>;
  /** Send If-Match with the GET's ETag (documents with revisions). */
  ifMatch?: boolean;
  /** PUT instead of the rule's method (parties accept both). */
  method?: "PATCH" | "PUT";
  /** A label for the summary. */
  label?: string;
}

/**
 * GET, write the body back, GET again: 200 and nothing changed but MAY_MOVE. Returns the PATCH
 * response. Soft assertions, so one run reports every problem of the resource.
 */
async function readBack(client: ApiClient, resource: keyof typeof READ_BACK, options: ReadBackOptions): Promise<TestResponse> {
  const get = async () => {
    const response = await client.get(options.path);
    expect(response.status, response.text).toBe(200);
    return response;
  };
  const read = options.read ?? (async () => (await get()).body as Json);
  const first = options.read ? undefined : await get();
  const before: Json = first ? first.body : await read();
  const body = writeBackBody(resource, before);
  const label = options.label ?? resource;

  expect.soft(unknownToSchema(resource, before), `${label}: GET fields neither read-only nor accepted by the update schema`).toEqual([]);

  const headers: Record<string, string> = {};
  if (options.ifMatch) {
    const etag = first?.headers.get("etag");
    expect(etag, `${label}: GET has an ETag`).toBeTruthy();
    headers["if-match"] = etag!;
  }
  const method = options.method ?? READ_BACK[resource]!.method;
  const written = await client.request(method, options.path, body, { idempotencyKey: idempotencyKey(), headers });
  expect.soft(written.status, `${label}: ${method} of its own GET body -> ${written.text}`).toBe(200);

  const after = await read();
  expect.soft(differences(omit(before, MAY_MOVE), omit(after, MAY_MOVE)), `${label}: a no-op write changed the record`).toEqual([]);
  if (written.status === 200) {
    expect
      .soft(differences(omit(after, MAY_MOVE), omit(written.body, MAY_MOVE)), `${label}: the ${method} response differs from the record as GET shows it`)
      .toEqual([]);
    moved.push({ resource: label, fields: BOOKKEEPING.filter((key) => key in before && JSON.stringify(before[key]) !== JSON.stringify(after[key])) });
  }
  return written;
}

// ---------------------------------------------------------------------------------------------
// The account of a test: reference data, parties, locations, items with stock

interface World extends EstimateWorld {
  /** Custom fields of each record kind, two each. */
  fields: Record<string, [string, string]>;
  pricingTier: string;
  customerLabel: string;
  unitId: number;
  /** A second location. */
  overflow: string;
  /** An item with two variations (Size M and L), 40 of each on hand at `location`. */
  tee: Json;
  /** The stock row of the tee's M variation at `location`. */
  teeRow: number;
  supplier: Json;
}

const CUSTOM_FIELD_KINDS = ["customer", "prospect", "supplier", "item", "estimate", "invoice", "sales_order", "purchase_order"] as const;

async function world(): Promise<World> {
  const base = await estimateWorld((key) => api().withKey(key), { item: { description: "2 m braided", barcode: "0012345678905" }, stock: 500 });
  const { account, client } = base;
  const fields: Record<string, [string, string]> = {};
  for (const kind of CUSTOM_FIELD_KINDS) {
    const a = await createCustomField({ accountId: account.accountId, kind, name: `Region ${kind}` });
    const b = await createCustomField({ accountId: account.accountId, kind, name: `Channel ${kind}` });
    fields[kind] = [a.custom_field_id, b.custom_field_id];
  }
  const { pricing_tier_id } = await createPricingTier({ accountId: account.accountId, name: "Gold" });
  const { customer_label_id } = await createCustomerLabel({ accountId: account.accountId, name: "Wholesale" });
  const { unit_id } = await createUnit({ accountId: account.accountId, name: "box" });
  const overflow = await client.post("/locations", { name: "Overflow Yard", short_name: "OVF" }, { idempotencyKey: idempotencyKey() });
  expect(overflow.status, overflow.text).toBe(201);
  const tee = await client.post("/items", {
    name: "T-shirt",
    sku: "TEE",
    price: "20",
    cost: "8",
    location_id: base.location,
    variations: [
      { values: { Size: "M" }, sku: "TEE-M", unit_price_override: "22" },
      { values: { Size: "L" }, sku: "TEE-L" },
    ],
  });
  expect(tee.status, tee.text).toBe(201);
  const variations = (await client.get(`/items/${tee.body.id}/variations`)).body.data as Json[];
  let teeRow = 0;
  for (const variation of variations) {
    const adjusted = await client.post(`/items/${tee.body.id}/adjustments`, { location_id: base.location, item_variation_id: variation.id, quantity: 40 });
    expect(adjusted.status, adjusted.text).toBe(201);
    if (variation.values.Size === "M") teeRow = adjusted.body.item_variation_location_id;
  }
  const supplier = await client.post("/suppliers", {
    name: "Cable Co",
    tax_rate1: 5,
    tax_rate2: 1,
    office_email: "sales@cable.test",
    billing_address_1: "2 Wire Way",
  });
  expect(supplier.status, supplier.text).toBe(201);
  return {
    ...base,
    fields,
    pricingTier: pricing_tier_id,
    customerLabel: customer_label_id,
    unitId: unit_id,
    overflow: overflow.body.id,
    tee: tee.body,
    teeRow,
    supplier: supplier.body,
  };
}

async function created(response: Promise<TestResponse>): Promise<Json> {
  const done = await response;
  expect(done.status, done.text).toBe(201);
  return done.body;
}

const today = () => new Date().toISOString().slice(0, 10);
const plusDays = (days: number) => new Date(Date.now() + days * 86_400_000).toISOString().slice(0, 10);
const values = (w: World, kind: string) => [
  { custom_field_id: w.fields[kind]![0], value: "North" },
  { custom_field_id: w.fields[kind]![1], value: "Retail" },
];

/** Every writable party field set (spec part 1, section 2.6). */
function fullParty(w: World, kind: "customer" | "prospect" | "supplier"): Json {
  const body: Json = {
    name: `Full ${kind} ${randomUUID().slice(0, 6)}`,
    office_email: "office@full.test",
    office_phone: "+1 555 0100",
    office_fax: "+1 555 0101",
    url: "https://full.test/about",
    billing_address_1: "1 Main St",
    billing_address_2: "Suite 4",
    billing_city: "Springfield",
    billing_region: "IL",
    billing_postal_code: "62701",
    billing_country: "US",
    shipping_address_1: "9 Dock Rd",
    shipping_address_2: "Gate B",
    shipping_city: "Shelbyville",
    shipping_region: "IL",
    shipping_postal_code: "62565",
    shipping_country: "US",
    billing_region_id: 14,
    billing_country_id: 840,
    shipping_region_id: 14,
    shipping_country_id: 840,
    tax_rate1: 8.25,
    tax_rate2: "1.5",
    customer_label_id: w.customerLabel,
    custom_field_values: values(w, kind),
  };
  if (kind !== "supplier") Object.assign(body, { vat_number: "GB123456789", pricing_tier_id: w.pricingTier });
  if (kind === "prospect") Object.assign(body, { sale_opportunity: "Fit-out of 3 stores", closing_percentage: 60, prospect_date: plusDays(20) });
  return body;
}

const PARTY_PATHS = { customer: "/customers", prospect: "/prospects", supplier: "/suppliers" } as const;

// ---------------------------------------------------------------------------------------------

describe("connected: what you read you can write back (architecture section 8)", () => {
  it("the read-only table agrees with the route table: nothing declared read-only is writable", () => {
    const rot: string[] = [];
    for (const [resource, rule] of Object.entries(READ_BACK)) {
      const top = writableKeys(rule);
      expect(top.length, `${resource}: update schema of ${rule.method} ${rule.path}`).toBeGreaterThan(0);
      for (const key of rule.readOnly) if (top.includes(key)) rot.push(`${resource}.${key}`);
      for (const [field, nested] of Object.entries(rule.nested ?? {})) {
        const inner = writableKeys(rule, field);
        for (const key of nested.readOnly) if (inner.includes(key)) rot.push(`${resource}.${field}[].${key}`);
      }
    }
    expect(rot, "declared read-only but accepted by the update schema: send them back instead").toEqual([]);
  });

  it("zones: PATCH /locations/{id}/zones/{zone_id} takes back what the zone list shows", async () => {
    const w = await world();
    const zones = async () => {
      const response = await w.client.get(`/locations/${w.location}/zones`);
      expect(response.status, response.text).toBe(200);
      return response.body.data as Json[];
    };
    const full = await created(
      w.client.post(
        `/locations/${w.location}/zones`,
        { name: "Aisle 7 - Cables", short_name: "A7", description: "Top shelves, left side" },
        { idempotencyKey: idempotencyKey() },
      ),
    );
    const bare = await created(w.client.post(`/locations/${w.location}/zones`, { name: "Dock", short_name: "DK" }, { idempotencyKey: idempotencyKey() }));
    expect(bare.description).toBeNull();
    for (const zone of [full, bare]) {
      const read = async () => (await zones()).find((z) => z.id === zone.id)!;
      await readBack(w.client, "zone", {
        path: `/locations/${w.location}/zones/${zone.id}`,
        read,
        label: `zone (${zone === full ? "description" : "description null"})`,
      });
    }
  });

  it("item categories: PATCH takes back the category with its custom fields (display_order dropped)", async () => {
    const w = await world();
    const parent = await created(w.client.post("/item-categories", { name: "Cables", inventory_type: "quantity" }));
    const full = await created(
      w.client.post("/item-categories", {
        name: "USB cables",
        inventory_type: "quantity",
        parent_id: parent.id,
        custom_fields: [
          { name: "Length", display_on_inventory_list: true },
          { name: "Connector", publish_on_documents: true },
          { name: "Batch", display_on_inventory_list: true, publish_on_documents: true },
        ],
      }),
    );
    const unique = await created(w.client.post("/item-categories", { name: "Phones", inventory_type: "unique" }));
    expect(unique).toMatchObject({ parent_id: null, custom_fields: [] });
    await readBack(w.client, "item_category", { path: `/item-categories/${full.id}`, label: "item category (child, 3 custom fields)" });
    await readBack(w.client, "item_category", { path: `/item-categories/${unique.id}`, label: "item category (root, unique, no fields)" });
  });

  it("contacts: PATCH takes back every field, and nulls", async () => {
    const w = await world();
    const full = await created(
      w.client.post("/contacts", {
        first_name: "Dana",
        last_name: "Scully",
        job_title: "Buyer",
        phone: "+1 555 0111",
        cell: "+1 555 0112",
        fax: "+1 555 0113",
        email_1: "dana@acme.test",
        email_2: "d.scully@acme.test",
        auto_add_email: true,
        account_record_ids: [w.customer.id, w.supplier.id],
      }),
    );
    expect(full.account_records).toHaveLength(2);
    const bare = await created(w.client.post("/contacts", { first_name: "Fox" }));
    await readBack(w.client, "contact", { path: `/contacts/${full.id}`, label: "contact (every field, 2 links)" });
    await readBack(w.client, "contact", { path: `/contacts/${bare.id}`, label: "contact (first name only)" });
  });

  for (const kind of ["customer", "prospect", "supplier"] as const) {
    it(`${kind}s: PATCH and PUT take back every field, and nulls`, async () => {
      const w = await world();
      const path = PARTY_PATHS[kind];
      const full = await created(w.client.post(path, fullParty(w, kind)));
      const bare = await created(w.client.post(path, { name: `Bare ${kind}` }));
      for (const method of ["PATCH", "PUT"] as const) {
        await readBack(w.client, kind, { path: `${path}/${full.id}`, method, label: `${kind} ${method} (every field)` });
        await readBack(w.client, kind, { path: `${path}/${bare.id}`, method, label: `${kind} ${method} (name only)` });
      }
    });
  }

  it("items: PATCH takes back every field (variations untouched), and nulls", async () => {
    const w = await world();
    const category = await created(w.client.post("/item-categories", { name: "Apparel", inventory_type: "quantity" }));
    const full = await created(
      w.client.post("/items", {
        name: "Hoodie",
        description: "Heavy cotton, embroidered logo",
        sku: "HOOD",
        barcode: "0098765432109",
        category_id: category.id,
        location_id: w.location,
        unit_id: w.unitId,
        price: "45.5000",
        cost: "18.2500",
        threshold: 5,
        published: true,
        custom_field_values: values(w, "item"),
        variations: [
          { values: { Size: "S", Colour: "Grey" }, sku: "HOOD-S", barcode: "0098765432116", unit_price_override: "44", unit_cost_override: "18" },
          { values: { Size: "XL", Colour: "Grey" }, sku: "HOOD-XL", unit_price_override: "49.9900" },
        ],
      }),
    );
    const unique = await created(
      w.client.post("/items", { name: "Phone", inventory_type: "unique", serial_number: "SN-0001", price: "300", cost: "200", location_id: w.location }),
    );
    const bare = await created(w.client.post("/items", { name: "Bare item" }));
    const variationsOf = async (id: string) => (await w.client.get(`/items/${id}/variations`, { include: "locations" })).body;
    const variationsBefore = await variationsOf(full.id);
    expect(variationsBefore.data).toHaveLength(2);
    await readBack(w.client, "item", { path: `/items/${full.id}`, label: "item (every field, 2 variations)" });
    expect.soft(differences(variationsBefore, await variationsOf(full.id)), "item: the variations changed").toEqual([]);
    await readBack(w.client, "item", { path: `/items/${w.tee.id}`, label: "item (variations with stock)" });
    await readBack(w.client, "item", { path: `/items/${unique.id}`, label: "item (unique, serial number)" });
    await readBack(w.client, "item", { path: `/items/${bare.id}`, label: "item (name only)" });
  });

  it("purchase orders: PATCH with If-Match takes back header and lines (inventory, variation, service; discount generated), and nulls", async () => {
    const w = await world();
    const full = await created(
      w.client.post("/purchase-orders", {
        supplier_id: w.supplier.id,
        location_id: w.location,
        name: "Spring restock",
        issue_date: today(),
        date_requested: plusDays(3),
        date_needed: plusDays(10),
        requested_from: "Sam at Cable Co",
        attention: "Receiving",
        shipping_address: "1 Main St\nSpringfield",
        public_note: "Call before delivery",
        payment_terms: "Net 30",
        shipping_provider: "UPS",
        shipping_tracking_code: "1Z999",
        custom_purchase_order_number: "PO-CUSTOM-7",
        shipping_fee: "15.5",
        discount_percent: 5,
        custom_field_values: values(w, "purchase_order"),
        lines: [
          { item_id: w.item.id, quantity: 20, unit_cost: "4.1000", description: "Bulk pack", tax_rate: 8, tax_2_rate: 1 },
          { item_id: w.tee.id, item_variation_location_id: w.teeRow, quantity: 12 },
          { name: "Freight handling", description: "Pallet fee", unit_cost: "25", quantity: 1, tax_rate: 0, tax_2_rate: 0 },
        ],
      }),
    );
    expect(full.lines.map((l: Json) => l.line_type)).toEqual(["inventory", "inventory", "service", "discount"]);
    const bare = await created(w.client.post("/purchase-orders", { supplier_id: w.supplier.id, location_id: w.location, lines: [{ item_id: w.item.id }] }));
    await readBack(w.client, "purchase_order", { path: `/purchase-orders/${full.id}`, ifMatch: true, label: "purchase order (every field)" });
    await readBack(w.client, "purchase_order", { path: `/purchase-orders/${bare.id}`, ifMatch: true, label: "purchase order (minimal, nulls)" });
  });

  it("stock transfers: PATCH takes back header and lines, pending and in transit (stock unchanged), and nulls", async () => {
    const w = await world();
    const full = await created(
      w.client.post("/stock-transfers", {
        origin_location_id: w.location,
        destination_location_id: w.overflow,
        estimated_arrival_date: plusDays(4),
        shipping_provider: "Own truck",
        shipping_tracking_code: "TRK-42",
        lines: [
          { item_id: w.item.id, quantity: 6, description: "Boxed" },
          { item_id: w.tee.id, item_variation_location_id: w.teeRow, quantity: 3 },
        ],
      }),
    );
    const bare = await created(
      w.client.post("/stock-transfers", { origin_location_id: w.location, destination_location_id: w.overflow, lines: [{ item_id: w.item.id, quantity: 2 }] }),
    );
    await readBack(w.client, "stock_transfer", { path: `/stock-transfers/${full.id}`, label: "stock transfer (pending, every field)" });
    await readBack(w.client, "stock_transfer", { path: `/stock-transfers/${bare.id}`, label: "stock transfer (pending, nulls)" });

    const sent = await w.client.post(`/stock-transfers/${full.id}/send`, {});
    expect(sent.status, sent.text).toBe(200);
    const stock = async () => ({
      item: omit((await w.client.get(`/items/${w.item.id}`)).body, ["updated_at"]),
      tee: (await w.client.get(`/items/${w.tee.id}/variations`, { include: "locations" })).body,
    });
    const stockBefore = await stock();
    await readBack(w.client, "stock_transfer", { path: `/stock-transfers/${full.id}`, label: "stock transfer (in transit)" });
    expect.soft(differences(stockBefore, await stock()), "stock transfer: a no-op write on an in-transit transfer moved stock").toEqual([]);
  });

  it("estimates: PATCH with If-Match takes back header and lines (inventory with null row, variation, service; discount generated), and nulls", async () => {
    const w = await world();
    const full = await created(
      w.client.post("/estimates", {
        customer_id: w.customer.id,
        name: "Store fit-out",
        issue_date: today(),
        expiry_date: plusDays(30),
        custom_estimate_number: "EST-CUSTOM-9",
        purchase_order_number: "CUST-PO-1",
        attention: "Purchasing",
        shipping_address: "9 Dock Rd\nShelbyville",
        public_note: "Valid for 30 days",
        payment_terms: "Net 15",
        shipping_fee: "12",
        shipping_cost: "3.5",
        discount_percent: 10,
        custom_field_values: values(w, "estimate"),
        lines: [
          { item_id: w.item.id, quantity: 10, unit_price: "11.5000", description: "2 m braided, black", tax_rate: 8.25, tax_2_rate: 1.5 },
          { item_id: w.tee.id, item_variation_location_id: w.teeRow, quantity: 4 },
          { name: "Installation", description: "On site, half a day", unit_price: "35", quantity: 2, tax_rate: 0, tax_2_rate: 0 },
        ],
      }),
    );
    expect(full.lines.map((l: Json) => l.line_type)).toEqual(["inventory", "inventory", "service", "discount"]);
    expect(full.lines[0].item_variation_location_id).toBeNull();
    const bare = await created(w.client.post("/estimates", { customer_id: w.customer.id, lines: [{ name: "Consulting", unit_price: "100" }] }));
    await readBack(w.client, "estimate", { path: `/estimates/${full.id}`, ifMatch: true, label: "estimate (every field)" });
    await readBack(w.client, "estimate", { path: `/estimates/${bare.id}`, ifMatch: true, label: "estimate (one service line, nulls)" });
  });

  it("sales orders: PATCH with If-Match takes back header and lines (inventory, variation, service; discount generated), and nulls", async () => {
    const w = await world();
    const full = await created(
      w.client.post("/sales-orders", {
        customer_id: w.customer.id,
        location_id: w.location,
        name: "Store opening",
        issue_date: today(),
        expiry_date: plusDays(14),
        purchase_order_number: "CUST-PO-2",
        attention: "Store manager",
        shipping_address: "9 Dock Rd\nShelbyville",
        public_note: "Deliver before 9am",
        packing_list_note: "Fragile",
        payment_terms: "Net 30",
        shipping_fee: "20",
        shipping_cost: "7.25",
        discount_percent: 2.5,
        custom_field_values: values(w, "sales_order"),
        lines: [
          { item_id: w.item.id, quantity: 5, unit_price: "12.5", description: "Retail pack", tax_rate: 8.25, tax_2_rate: 0 },
          { item_id: w.tee.id, item_variation_location_id: w.teeRow, quantity: 6 },
          { name: "Gift wrapping", description: "Per order", unit_price: "4.5", quantity: 1 },
        ],
      }),
    );
    expect(full.lines.map((l: Json) => l.line_type)).toEqual(["inventory", "inventory", "service", "discount"]);
    const bare = await created(w.client.post("/sales-orders", { customer_id: w.customer.id, lines: [{ name: "Consulting", unit_price: "100" }] }));
    await readBack(w.client, "sales_order", { path: `/sales-orders/${full.id}`, ifMatch: true, label: "sales order (every field)" });
    await readBack(w.client, "sales_order", { path: `/sales-orders/${bare.id}`, ifMatch: true, label: "sales order (one service line, nulls)" });
  });

  it("invoices: PATCH with If-Match takes back header and lines (inventory, variation, service; discount generated) with stock and customer figures unchanged, and nulls", async () => {
    const w = await world();
    const full = await created(
      w.client.post("/invoices", {
        customer_id: w.customer.id,
        name: "Counter sale",
        issue_date: today(),
        custom_invoice_number: "INV-CUSTOM-3",
        purchase_order_number: "CUST-PO-3",
        attention: "Accounts payable",
        shipping_address: "9 Dock Rd\nShelbyville",
        public_note: "Thank you for your business",
        payment_terms: "Due on receipt",
        shipping_fee: "9.95",
        shipping_cost: "4",
        discount_percent: 5,
        custom_field_values: values(w, "invoice"),
        lines: [
          { item_id: w.item.id, quantity: 3, unit_price: "12", description: "Loose", tax_rate: 8.25, tax_2_rate: 1.5 },
          { item_id: w.tee.id, item_variation_location_id: w.teeRow, quantity: 2 },
          { name: "Engraving", description: "Two lines of text", unit_price: "15", quantity: 1, tax_rate: 0, tax_2_rate: 0 },
        ],
      }),
    );
    expect(full.lines.map((l: Json) => l.line_type)).toEqual(["inventory", "inventory", "service", "discount"]);
    const bare = await created(w.client.post("/invoices", { customer_id: w.customer.id, lines: [{ name: "Consulting", unit_price: "100" }] }));
    const effects = async () => ({
      item: omit((await w.client.get(`/items/${w.item.id}`)).body, ["updated_at"]),
      tee: (await w.client.get(`/items/${w.tee.id}/variations`, { include: "locations" })).body,
      customer: omit((await w.client.get(`/customers/${w.customer.id}`)).body, ["updated_at"]),
    });
    const effectsBefore = await effects();
    await readBack(w.client, "invoice", { path: `/invoices/${full.id}`, ifMatch: true, label: "invoice (every field)" });
    await readBack(w.client, "invoice", { path: `/invoices/${bare.id}`, ifMatch: true, label: "invoice (one service line, nulls)" });
    expect.soft(differences(effectsBefore, await effects()), "invoice: a no-op write moved stock or the customer's figures").toEqual([]);
  });

  it("tasks: PATCH (version, Idempotency-Key) takes back a timed, linked, reminded task, and a bare one", async () => {
    const w = await world();
    const assignee = await taskUser(w.account, { timeZone: "Europe/Paris", name: "Ada Assignee" });
    const reminder = new Date(Date.now() + 2 * 86_400_000);
    reminder.setUTCSeconds(0, 0);
    const full = await newTask(w.client, {
      title: "Call Acme about the fit-out",
      description: "Confirm the delivery window and the installation crew.",
      assignee_user_id: assignee.userId,
      due_date: plusDays(5),
      due_time: "16:30",
      time_zone: "America/New_York",
      reminder_at: reminder.toISOString(),
      record: { type: "customer", id: w.customer.id },
    });
    expect(full.reminder).not.toBeNull();
    expect(full.record).toMatchObject({ type: "customer", id: w.customer.id });
    const dateOnly = await newTask(w.client, { title: "Stock count", due_date: plusDays(2) });
    const bare = await newTask(w.client, { title: "Someday" });
    await readBack(w.client, "task", { path: `/tasks/${full.id}`, label: "task (timed, linked, reminder)" });
    await readBack(w.client, "task", { path: `/tasks/${dateOnly.id}`, label: "task (date only)" });
    await readBack(w.client, "task", { path: `/tasks/${bare.id}`, label: "task (title only, nulls)" });
  });

  it("dates from 0001-01-01 read back unchanged (purchase order, prospect, stock transfer, task)", async () => {
    const w = await world();
    const order = await created(
      w.client.post("/purchase-orders", {
        supplier_id: w.supplier.id,
        location_id: w.location,
        issue_date: "0001-01-01",
        date_requested: "0099-12-31",
        date_needed: "0999-02-28",
        lines: [{ item_id: w.item.id }],
      }),
    );
    expect(order).toMatchObject({ issue_date: "0001-01-01", date_requested: "0099-12-31", date_needed: "0999-02-28" });
    await readBack(w.client, "purchase_order", { path: `/purchase-orders/${order.id}`, ifMatch: true, label: "purchase order (dates from year 1)" });

    const prospect = await created(w.client.post("/prospects", { name: "Ancient Ltd", prospect_date: "0001-01-01" }));
    expect(prospect.prospect_date).toBe("0001-01-01");
    await readBack(w.client, "prospect", { path: `/prospects/${prospect.id}`, label: "prospect (prospect_date 0001-01-01)" });

    const transfer = await created(
      w.client.post("/stock-transfers", {
        origin_location_id: w.location,
        destination_location_id: w.overflow,
        estimated_arrival_date: "0100-03-01",
        lines: [{ item_id: w.item.id, quantity: 1 }],
      }),
    );
    expect(transfer.estimated_arrival_date).toBe("0100-03-01");
    await readBack(w.client, "stock_transfer", { path: `/stock-transfers/${transfer.id}`, label: "stock transfer (estimated arrival 0100-03-01)" });

    const task = await newTask(w.client, { title: "Ancient deadline", due_date: "0001-01-01", time_zone: "UTC" });
    expect(task.due_date).toBe("0001-01-01");
    await readBack(w.client, "task", { path: `/tasks/${task.id}`, label: "task (due 0001-01-01)" });

    // ... and a year 0000 date is 422 naming the field, on create and on update alike.
    const refusedParam = (response: TestResponse) => [
      response.status,
      response.body?.error?.code,
      (response.body?.error?.details ?? []).map((d: Json) => d.param),
    ];
    const created0 = await w.client.post("/purchase-orders", {
      supplier_id: w.supplier.id,
      location_id: w.location,
      issue_date: "0000-12-31",
      lines: [{ item_id: w.item.id }],
    });
    expect
      .soft(refusedParam(created0), `purchase order issue_date 0000-12-31 -> ${created0.text.slice(0, 300)}`)
      .toEqual([422, "validation_failed", ["issue_date"]]);
    const patched0 = await w.client.patch(`/prospects/${prospect.id}`, { prospect_date: "0000-01-01" }, { idempotencyKey: idempotencyKey() });
    expect
      .soft(refusedParam(patched0), `prospect prospect_date 0000-01-01 -> ${patched0.text.slice(0, 300)}`)
      .toEqual([422, "validation_failed", ["prospect_date"]]);
  });

  it("a GET body with only ids, numbers, totals, timestamps, statuses and computed quantities removed: every other field repeats the record and is accepted; a changed one is still refused", async () => {
    const w = await world();
    // The architecture's read-only kinds, and nothing else: the service's other fields (a customer's
    // name, a line's SKU and position, can_edit, revision, a generated discount line) are sent back.
    const naive = naiveWriteBack;
    const lines = [{ item_id: w.item.id, quantity: 2 }];
    const documents = [
      [
        "/purchase-orders",
        await created(
          w.client.post("/purchase-orders", {
            supplier_id: w.supplier.id,
            location_id: w.location,
            discount_percent: 5,
            lines: [{ ...lines[0], unit_cost: "3" }],
          }),
        ),
      ],
      ["/stock-transfers", await created(w.client.post("/stock-transfers", { origin_location_id: w.location, destination_location_id: w.overflow, lines }))],
      ["/estimates", await created(w.client.post("/estimates", { customer_id: w.customer.id, discount_percent: 10, lines }))],
      ["/sales-orders", await created(w.client.post("/sales-orders", { customer_id: w.customer.id, discount_percent: 10, lines }))],
      ["/invoices", await created(w.client.post("/invoices", { customer_id: w.customer.id, discount_percent: 10, lines }))],
    ] as const;
    for (const [path, document] of documents) {
      const before = (await w.client.get(`${path}/${document.id}`)).body as Json;
      const written = await w.client.patch(`${path}/${document.id}`, naive(before));
      expect.soft(written.status, `${path}: ${written.text}`).toBe(200);
      expect.soft(differences(before, (await w.client.get(`${path}/${document.id}`)).body), `${path}: a no-op write changed the document`).toEqual([]);
      // Only the lines' writable fields (no line_type, nothing else to compare): the discount line is known by its id.
      const writable = ["id", "item_id", "item_variation_location_id", "name", "description", "quantity", "unit_price", "unit_cost", "tax_rate", "tax_2_rate"];
      const lines = (before.lines as Json[]).map((line) => Object.fromEntries(Object.entries(line).filter(([field]) => writable.includes(field))));
      const again = await w.client.patch(`${path}/${document.id}`, { lines });
      expect.soft(again.status, `${path} (lines without line_type): ${again.text}`).toBe(200);
      expect.soft(differences(before, (await w.client.get(`${path}/${document.id}`)).body), `${path}: a no-op write changed the document`).toEqual([]);
    }
    // A task with its linked record's preview {type, id, name, number}, its assignee and its reminder.
    const task = await newTask(w.client, {
      title: "Call Acme",
      record: { type: "customer", id: w.customer.id },
      reminder_at: new Date(Date.now() + 86_400_000).toISOString(),
    });
    const shown = (await w.client.get(`/tasks/${task.id}`)).body as Json;
    const {
      id: _id,
      created: _created,
      modified: _modified,
      completed_at: _completed,
      status: _status,
      due_at: _due,
      overdue_at: _overdue,
      ...taskBody
    } = shown;
    const taskWritten = await w.client.patch(`/tasks/${task.id}`, taskBody, { idempotencyKey: idempotencyKey() });
    expect.soft(taskWritten.status, `task: ${taskWritten.text}`).toBe(200);
    expect.soft(differences(shown, (await w.client.get(`/tasks/${task.id}`)).body), "task: a no-op write changed the task").toEqual([]);
    // A field the service controls, sent with another value, is refused as before.
    const [, invoice] = documents[4];
    expectError(await w.client.patch(`/invoices/${invoice.id}`, { customer_name: "Someone else" }), 422, "unsupported_invoice_field", "customer_name");
    const [, order] = documents[3];
    const line = (await w.client.get(`/sales-orders/${order.id}`)).body.lines[0] as Json;
    const moved = await w.client.patch(`/sales-orders/${order.id}`, { lines: [{ id: line.id, item_id: line.item_id, quantity: line.quantity, sku: "OTHER" }] });
    expect(moved.status).toBe(422);
    expect(moved.body.error.details).toEqual([{ param: "lines[0].sku", code: "unknown_field", message: "is not a recognized field." }]);
  });

  describe("a document converted from a 300-line estimate accepts its own lines back", () => {
    /** 300 lines: inventory (plain and variation) and service, plus the generated discount line. */
    async function bigEstimate(w: World): Promise<Json> {
      const lines = Array.from({ length: 300 }, (_, i) => {
        if (i % 3 === 0) return { item_id: w.item.id, quantity: 1, description: `Cable run ${i}` };
        if (i % 3 === 1) return { item_id: w.tee.id, item_variation_location_id: w.teeRow, quantity: 0.25 };
        return { name: `Labour step ${i}`, unit_price: "10", quantity: 1 };
      });
      const estimate = await created(w.client.post("/estimates", { customer_id: w.customer.id, name: "Campus rollout", discount_percent: 3, lines }));
      expect(estimate.lines).toHaveLength(301);
      return estimate;
    }

    it("convert-to-sales-order: the 300-line sales order takes back its GET body", { timeout: scaled(180_000) }, async () => {
      const w = await world();
      const estimate = await bigEstimate(w);
      const order = await created(w.client.post(`/estimates/${estimate.id}/convert-to-sales-order`, undefined, { idempotencyKey: idempotencyKey() }));
      expect(order.lines.filter((l: Json) => l.line_type !== "discount")).toHaveLength(300);
      await readBack(w.client, "sales_order", { path: `/sales-orders/${order.id}`, ifMatch: true, label: "sales order (converted, 300 lines)" });
    });

    it("convert-to-invoice: the 300-line invoice takes back its GET body", { timeout: scaled(180_000) }, async () => {
      const w = await world();
      const estimate = await bigEstimate(w);
      const invoice = await created(w.client.post(`/estimates/${estimate.id}/convert-to-invoice`, {}, { idempotencyKey: idempotencyKey() }));
      expect(invoice.lines.filter((l: Json) => l.line_type !== "discount")).toHaveLength(300);
      await readBack(w.client, "invoice", { path: `/invoices/${invoice.id}`, ifMatch: true, label: "invoice (converted, 300 lines)" });
    });
  });
});
