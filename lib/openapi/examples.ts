import type { ErrorCode } from "../core/error-codes.js";
import { errorTypeOf, meaningOf } from "./errors.js";

/**
 * Examples for the OpenAPI document, built from its JSON schemas: a schema's own `example`
 * (from the zod `.meta`) wins; otherwise a value is made from the schema (its `const`, first
 * `enum` value, `default`, format, bounds) and, for plain texts and numbers, from the
 * property's name (`billing_city` is a city, `invoice_number` a document number), so that a
 * response example reads like a real record instead of `"string"` and `0`. Every example must
 * validate against its own schema (test/unit/openapi.offline.test.ts checks each one).
 */
// biome-ignore lint/suspicious/noExplicitAny: a JSON Schema walked by keyword, any shape
type JsonSchema = Record<string, any>;

/** Texts by property name (nullable ones show the text, not null). */
const TEXTS: Record<string, string> = {
  name: "Acme Retail",
  short_name: "MAIN",
  first_name: "Ann",
  last_name: "Lee",
  title: "Call Acme about the spring order",
  description: "Returns awaiting inspection",
  sku: "CAB-USBC-2M",
  barcode: "0012345678905",
  serial_number: "SN-2026-00042",
  category_name: "Cables",
  unit_name: "Each",
  location_name: "Main Warehouse",
  customer_name: "Acme Retail",
  supplier_name: "Initech Supply",
  variation: "Size: M",
  job_title: "Purchasing manager",
  email: "orders@acme.example",
  email_1: "ann@acme.example",
  email_2: "ann.lee@acme.example",
  office_email: "orders@acme.example",
  phone: "+1 555 0100",
  office_phone: "+1 555 0100",
  office_fax: "+1 555 0199",
  cell: "+1 555 0142",
  fax: "+1 555 0199",
  account_number: "ACME-0042",
  vat_number: "GB123456789",
  url: "https://acme.example",
  photo_url: "https://acme.example/photos/ann.png",
  thumbnail_url: "https://acme.example/items/cab-usbc-2m.png",
  tracking_url: "https://www.fedex.com/fedextrack/?trknbr=449044304137821",
  billing_address_1: "12 Main Street",
  shipping_address_1: "12 Main Street",
  billing_address_2: "Suite 400",
  shipping_address_2: "Suite 400",
  billing_city: "Springfield",
  shipping_city: "Springfield",
  billing_region: "IL",
  shipping_region: "IL",
  billing_postal_code: "62701",
  shipping_postal_code: "62701",
  billing_country: "US",
  billing_address: "12 Main Street, Springfield IL 62701",
  shipping_country: "US",
  shipping_address: "Acme Retail, 12 Main Street, Springfield IL 62701",
  drop_ship_address: "Globex, 9 Harbour Road, Portland OR 97201",
  attention: "Purchasing",
  public_note: "Thank you for your business.",
  packing_list_note: "Fragile: keep upright",
  payment_terms: "Net 30",
  tax_label: "VAT",
  tax_2_label: "Levy",
  requested_from: "Initech Supply",
  purchase_order_number: "PO-7781",
  custom_estimate_number: "Q-2026-118",
  custom_invoice_number: "INV-2026-118",
  custom_purchase_order_number: "P-2026-118",
  reference: "Visa 4242",
  brand: "visa",
  last4: "4242",
  carrier: "FedEx",
  tracking_number: "449044304137821",
  tracking_status: "in_transit",
  tracking_status_details: "Departed FedEx hub",
  shipping_provider: "UPS",
  shipping_tracking_code: "1Z999AA10123456784",
  sale_opportunity: "Fleet renewal",
  reason: "Cycle count",
  value: "24 months",
  revision: "inv_0mf3k2q1a9c4e1b2d3f4a5b6",
  time_zone: "Europe/London",
  due_time: "16:30",
  code: "insufficient_stock",
  message: "Only 12 on hand at Main Warehouse.",
  param: "lines[0].quantity",
  cursor: "v1.eyJwIjoiMjAyNi0xMS0yM1QwOTozMDowMFoifQ.3q2-7w",
  next_cursor: "v1.eyJwIjoiMjAyNi0xMS0yM1QwOTozMDowMFoifQ.3q2-7w",
  variation_name: "Size: M",
  user_name: "Ann Lee",
  due_date: "2030-11-27",
  created_at: "2026-11-23T09:30:00.000Z",
  updated_at: "2026-11-23T09:30:00.000Z",
  last_built_at: "2026-11-23T09:30:00.000Z",
  changed_fields: "title",
};

/** Money amounts by property name (four decimals, as responses show money). */
const MONEY: Record<string, string> = {
  price: "39.0000",
  cost: "18.5000",
  unit_price: "39.0000",
  unit_cost: "18.5000",
  discounted_unit_price: "37.0500",
  unit_price_override: "42.0000",
  unit_cost_override: "19.2500",
  subtotal: "888.0000",
  pre_discount_subtotal: "936.0000",
  pre_discount_total: "936.0000",
  discount: "-46.8000",
  discount_total: "-46.8000",
  shipping_fee: "12.0000",
  shipping_cost: "9.5000",
  tax: "71.0400",
  tax_2: "0.0000",
  total: "971.0400",
  total_cost: "444.0000",
  amount: "250.0000",
  amount_paid: "250.0000",
  amount_due: "721.0400",
  lifetime_revenue_total: "18240.5000",
};

/** Texts by property name within a kind of record (the innermost component's name ends with the key). */
const TEXTS_IN: Record<string, Record<string, string>> = {
  Line: { name: "USB-C Cable 2m", description: "USB-C to USB-C, 2 m, braided" },
  Item: { name: "USB-C Cable 2m", description: "USB-C to USB-C, 2 m, braided" },
  Kit: { name: "Cable Starter Kit", description: "Two cables and a charger" },
  KitDetail: { name: "Cable Starter Kit", description: "Two cables and a charger" },
  Location: { name: "Main Warehouse" },
  LocationReference: { name: "Main Warehouse" },
  Zone: { name: "Aisle 1", short_name: "A1", description: "Fast movers" },
  ItemCategory: { name: "Cables" },
  CustomFieldDefinition: { name: "Warranty" },
  Supplier: { name: "Initech Supply", url: "https://initech.example" },
  Prospect: { name: "Globex" },
  Unit: { name: "Each" },
  TaskAssignee: { name: "Ann Lee" },
  TaskRecordPreview: { name: "Acme Retail" },
  KitBuild: { name: "Main Warehouse" },
  // Each kind's revision prefix (architecture section 4, "Revisions").
  Estimate: { revision: "est_0mf3k2q1a9c4e1b2d3f4a5b6" },
  EstimateListEntry: { revision: "est_0mf3k2q1a9c4e1b2d3f4a5b6" },
  SalesOrder: { revision: "so_0mf3k2q1a9c4e1b2d3f4a5b6" },
  SalesOrderListEntry: { revision: "so_0mf3k2q1a9c4e1b2d3f4a5b6" },
  PurchaseOrder: { revision: "po_0mf3k2q1a9c4e1b2d3f4a5b6" },
  PurchaseOrderListEntry: { revision: "po_0mf3k2q1a9c4e1b2d3f4a5b6" },
};

/**
 * Nullable properties whose example is null, so an example document is one state (an open,
 * editable document: nothing blocks it, it was not converted or sent yet).
 */
const NULL_EXAMPLES = new Set(["edit_block_reason", "pack_block_reason", "converted_document", "date_sent"]);

const allowsNull = (schema: JsonSchema): boolean =>
  (Array.isArray(schema.anyOf) && schema.anyOf.some((branch: JsonSchema) => branch.type === "null")) ||
  (Array.isArray(schema.type) && schema.type.includes("null"));

/** Numbers by property name. */
const NUMBERS: Record<string, number> = {
  customer_number: 1042,
  item_number: 215,
  kit_number: 7,
  estimate_number: 118,
  invoice_number: 2087,
  purchase_order_number: 351,
  sales_order_number: 964,
  stock_transfer_number: 42,
  packing_list_number: 311,
  build_number: 19,
  number: 2087,
  variation_number: 1,
  item_variation_location_id: 1207,
  unit_id: 1,
  status_id: 1,
  position: 0,
  display_order: 1,
  version: 3,
  generation: 1,
  next_before_version: 3,
  closing_percentage: 40,
  document_count: 3,
  invoice_count: 1,
  variation_count: 1,
  location_count: 1,
  pieces: 2,
  build_count: 5,
  quantity: 24,
  quantity_after: 64,
  quantity_available: 20,
  quantity_reserved: 4,
  quantity_incoming: 12,
  quantity_received: 12,
  quantity_invoiced: 4,
  quantity_packed: 4,
  quantity_shipped: 4,
  quantity_remaining_to_pack: 0,
  in_transit: 0,
  threshold: 5,
  units_packed: 4,
  open: 12,
  completed: 30,
  overdue: 2,
  current_week: 5,
  task_badge_count: 3,
  unread_count: 1,
  page: 1,
  per_page: 20,
  total_pages: 1,
  total_records: 1,
  packed_percent: 100,
  shipped_percent: 100,
  invoiced_percent: 100,
  paid_percent: 50,
};

const FORMATS: Record<string, unknown> = {
  uuid: "3f0c8f9e-6a53-4f0a-9a57-0b5e1b1c2d3e",
  date: "2026-11-23",
  "date-time": "2026-11-23T09:30:00.000Z",
  email: "orders@acme.example",
  uri: "https://acme.example",
};

interface Context {
  components: Record<string, JsonSchema>;
  /** The component whose example this is (the outermost name of `open`). */
  /** Component names being expanded (a recursive schema stops at its second visit). */
  open: string[];
  /** The request path of the operation, for a list's `url`. */
  path?: string;
}

const nonNull = (branches: JsonSchema[]) => branches.find((branch) => branch.type !== "null") ?? branches[0]!;

/** The text a property has by its name, within the innermost record being built. */
function namedText(property: string | undefined, context: Context): string | undefined {
  if (property === undefined) return undefined;
  const record = context.open[context.open.length - 1];
  if (record) {
    for (const [suffix, texts] of Object.entries(TEXTS_IN)) if (record.endsWith(suffix) && texts[property] !== undefined) return texts[property];
  }
  if (MONEY[property] !== undefined) return MONEY[property];
  if (/(^|_)id$/.test(property)) return FORMATS.uuid as string;
  return TEXTS[property];
}

/** Whether a text fits a string schema (its pattern and lengths). */
function fits(schema: JsonSchema, text: string): boolean {
  if (schema.type !== undefined && schema.type !== "string") return false;
  if (Array.isArray(schema.enum) || schema.const !== undefined) return false;
  const pattern = typeof schema.pattern === "string" ? new RegExp(schema.pattern, "u") : undefined;
  return (pattern === undefined || pattern.test(text)) && text.length >= (schema.minLength ?? 0) && text.length <= (schema.maxLength ?? Infinity);
}

function exampleValueOf(schema: JsonSchema, context: Context, property?: string): unknown {
  if (typeof schema.$ref === "string") {
    const name = schema.$ref.replace("#/components/schemas/", "");
    const target = context.components[name];
    if (!target) return undefined;
    const named = target.type === "object" ? undefined : namedText(property, context);
    if (named !== undefined && fits(target, named)) return named;
    if (target.example !== undefined) return target.example;
    if (context.open.filter((open) => open === name).length > 1) return undefined;
    context.open.push(name);
    try {
      return exampleValueOf(target, context, property);
    } finally {
      context.open.pop();
    }
  }
  if (schema.example !== undefined) return schema.example;
  if (Array.isArray(schema.examples) && schema.examples.length > 0) return schema.examples[0];
  if (property !== undefined && NULL_EXAMPLES.has(property) && allowsNull(schema)) return null;
  if (schema.const !== undefined) return schema.const;
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0];
  if (schema.default !== undefined) return schema.default;
  if (Array.isArray(schema.anyOf)) return exampleValueOf(nonNull(schema.anyOf), context, property);
  if (Array.isArray(schema.oneOf)) return exampleValueOf(nonNull(schema.oneOf), context, property);
  if (Array.isArray(schema.allOf)) {
    const parts = schema.allOf.map((part: JsonSchema) => exampleValueOf(part, context, property));
    return parts.every((part: unknown) => part && typeof part === "object" && !Array.isArray(part)) ? Object.assign({}, ...parts) : parts[0];
  }
  const type = Array.isArray(schema.type) ? (schema.type.find((t: string) => t !== "null") ?? "null") : schema.type;
  switch (type) {
    case "object":
      return objectOf(schema, context);
    case "array": {
      const item = schema.items ? exampleValueOf(schema.items, context, property) : undefined;
      if (item === undefined) return [];
      return Array.from({ length: Math.max(1, schema.minItems ?? 1) }, () => item);
    }
    case "string":
      return textOf(schema, property, context);
    case "integer":
    case "number":
      return numberOf(schema, property, type);
    case "boolean":
      return (
        property === "active" || property === "available" || property === "display_on_inventory_list" || property === "can_edit" || property === "can_pack"
      );
    case "null":
      return null;
    default:
      return undefined;
  }
}

function objectOf(schema: JsonSchema, context: Context): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, property] of Object.entries((schema.properties ?? {}) as Record<string, JsonSchema>)) {
    const value =
      name === "url" && context.path && context.open.length <= 1 && isPlainString(property) ? context.path : exampleValueOf(property, context, name);
    if (value !== undefined) out[name] = value;
  }
  if (Object.keys(out).length === 0 && schema.additionalProperties && typeof schema.additionalProperties === "object") {
    const value = exampleValueOf(schema.additionalProperties, context);
    // Keys constrained by a format or pattern (ids) get an example of their own; free keys are a label.
    const names = schema.propertyNames as JsonSchema | undefined;
    const key = names && (names.format !== undefined || names.pattern !== undefined || names.$ref !== undefined) ? exampleValueOf(names, context) : undefined;
    // A free label maps to a value ("Size": "M"); an id to a name (a user's id to "Ann Lee").
    if (value !== undefined)
      out[typeof key === "string" ? key : "Size"] = typeof value === "string" ? (typeof key === "string" ? TEXTS.user_name : "M") : value;
  }
  return out;
}

const isPlainString = (schema: JsonSchema) => schema.type === "string" && schema.format === undefined;

function textOf(schema: JsonSchema, property: string | undefined, context: Context): string {
  if (typeof schema.format === "string" && FORMATS[schema.format] !== undefined) return FORMATS[schema.format] as string;
  const candidates = [namedText(property, context), property && humanize(property), "Example"].filter((text): text is string => typeof text === "string");
  return candidates.find((text) => fits(schema, text)) ?? candidates[0]!;
}

/** `packing_list_note` -> `Packing list note`. */
const humanize = (name: string) => name.charAt(0).toUpperCase() + name.slice(1).replaceAll("_", " ");

function numberOf(schema: JsonSchema, property: string | undefined, type: "integer" | "number"): number {
  const lowest = Math.max(
    schema.minimum ?? -Infinity,
    schema.exclusiveMinimum !== undefined ? schema.exclusiveMinimum + (type === "integer" ? 1 : 0.5) : -Infinity,
  );
  const highest = Math.min(
    schema.maximum ?? Infinity,
    schema.exclusiveMaximum !== undefined ? schema.exclusiveMaximum - (type === "integer" ? 1 : 0.5) : Infinity,
  );
  const named = property === undefined ? undefined : NUMBERS[property];
  const wanted = named ?? (Number.isFinite(lowest) && lowest > 1 ? lowest : 1);
  return Math.min(Math.max(wanted, lowest), highest);
}

/**
 * An example of a schema (resolving `$ref`s against `components`); `name` is the component's
 * own name when the schema is one, `path` fills a list's `url`.
 */
export function exampleOf(schema: JsonSchema, components: Record<string, JsonSchema>, options: { name?: string; path?: string } = {}): unknown {
  return exampleValueOf(schema, { components, open: options.name ? [options.name] : [], path: options.path });
}

/**
 * A parameter's example: the route's example value (query values are texts; typed here as
 * the parameter's schema has them: a comma-separated list as an array, a number as a number),
 * else one made from the schema.
 */
export function parameterExample(schema: JsonSchema, given: string | undefined, commaSeparated: boolean): unknown {
  if (given === undefined) return schema.example ?? (Array.isArray(schema.examples) ? schema.examples[0] : undefined);
  if (commaSeparated) return given.split(",");
  if (schema.type === "integer" || schema.type === "number") return Number(given);
  if (schema.type === "boolean") return given === "true";
  return given;
}

/** The example body of an error response: its first code, with that code's meaning as the message. */
export function errorExample(status: number, codes: readonly ErrorCode[]): Record<string, unknown> {
  const code = codes[0]!;
  const meaning = meaningOf(status, code) ?? code.replaceAll("_", " ");
  const error: Record<string, unknown> = { type: errorTypeOf(status), code, message: `${meaning.charAt(0).toUpperCase()}${meaning.slice(1)}.` };
  if (code === "validation_failed") {
    error.param = "name";
    error.details = [{ param: "name", code: "too_small", message: "name must be at least 1 character." }];
  } else if (code === "insufficient_scope") error.param = "items:write";
  else if (code === "invalid_query_parameter") error.param = "limit";
  else if (code === "idempotency_key_required") error.param = "Idempotency-Key";
  return { error };
}
