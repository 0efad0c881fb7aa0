import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { applyLocalEnvironment } from "../local/env.js";
import { freePort, startDynamoLocal } from "../local/dynamodb.js";
import { API_FUNCTION_MEMORY_MB, PLATFORM_AND_ACCESS_LOG_BYTES, costTable, transactionWriteUnits, type RequestProfile } from "./cost-model.js";
import { salesScenarios, stockVisibility, type Scenario } from "./sales.js";
import { listCost, listCostViolations } from "./list-cost.js";
import { percentile } from "./percentile.js";
import type { ContentionRow } from "./contention.js";

/**
 * `npm run bench`: measures, per route, the DynamoDB round trips (from the request log line
 * every request writes), consumed capacity and latency against DynamoDB Local, then the size
 * and cold import time of each bundled Lambda handler (scripts/bench/bundles.ts).
 * Latencies against DynamoDB Local on one machine are relative figures, not AWS figures.
 * Then webhooks: write -> delivery latency and the cost of a delivered message
 * (scripts/bench/webhooks.ts), and the change feed's per-account ceiling: changes per second
 * through one account's sync head (scripts/bench/sync-head.ts). Last, a modelled AWS cost per
 * million requests of a read, a write, a 100-line document write and a sync page
 * (scripts/bench/cost-model.ts).
 */
const ITERATIONS = Number.parseInt(process.env.BENCH_ITERATIONS ?? "50", 10);

interface Sample {
  route: string;
  status: number;
  calls: number;
  commands: string[];
  readCapacity: number;
  writeCapacity: number;
  /** Bytes of the request's log line. */
  logBytes: number;
}

/** Mean figures of a route's measured requests, for the cost model. */
interface Measured {
  meanMs: number;
  readUnits: number;
  writeUnits: number;
  logBytes: number;
}
const measured = new Map<string, Measured>();
const mean = (values: number[]) => values.reduce((sum, v) => sum + v, 0) / Math.max(1, values.length);
const measure = (latencies: number[], requests: Sample[]): Measured => ({
  meanMs: mean(latencies),
  readUnits: mean(requests.map((r) => r.readCapacity)),
  writeUnits: mean(requests.map((r) => r.writeCapacity)),
  logBytes: mean(requests.map((r) => r.logBytes)),
});

const samples: Sample[] = [];
const streamBatches: { changes: number; markerTransactions: number; headConflicts: number }[] = [];
const originalWrite = process.stdout.write.bind(process.stdout);
process.stdout.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
  const text = String(chunk);
  if (text.startsWith('{"level"') && text.includes('"message":"stream batch"')) {
    streamBatches.push(JSON.parse(text));
    return true;
  }
  if (text.startsWith('{"level"') && text.includes('"message":"request"')) {
    const line = JSON.parse(text) as { route: string; status: number; dynamodb: Omit<Sample, "route" | "status"> };
    samples.push({ route: line.route, status: line.status, ...line.dynamodb, logBytes: Buffer.byteLength(text) });
    return true;
  }
  return originalWrite(chunk as never, ...(rest as []));
}) as typeof process.stdout.write;

async function main(): Promise<void> {
  const dynamo = await startDynamoLocal({ port: await freePort(), dataDir: "memory" });
  applyLocalEnvironment(dynamo.endpoint);
  process.env.RATE_LIMIT_PER_MINUTE = "1000000";
  process.env.LOG_LEVEL = "INFO";
  try {
    const { ensureTable } = await import("../../lib/db/create-table.js");
    const { createDynamoClient } = await import("../../lib/db/client.js");
    const { tableName } = await import("../../lib/db/table.js");
    await ensureTable(createDynamoClient(), tableName());
    const { createAccount } = await import("../../lib/domain/admin/service.js");
    const { startApiServer } = await import("../local/server.js");
    const account = await createAccount({ name: "Bench" });
    const api = await startApiServer(0);
    const base = `${api.url}/api/v3`;
    const headers = { authorization: `Bearer ${account.api_key}`, "content-type": "application/json" };
    let counter = 0;
    const call = async (method: string, path: string, body?: unknown, idempotent = false) => {
      const response = await fetch(`${base}${path}`, {
        method,
        headers: idempotent ? { ...headers, "idempotency-key": `bench-${counter++}` } : headers,
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const json = (await response.json()) as { id?: string };
      if (response.status >= 400) throw new Error(`${method} ${path}: ${response.status} ${JSON.stringify(json)}`);
      return json;
    };

    const location = await call("POST", "/locations", { name: "Bench Location", short_name: "BL" }, true);
    for (let i = 0; i < 10; i++) await call("POST", `/locations/${location.id}/zones`, { name: `Zone ${i}`, short_name: `Z${i}` }, true);
    const parent = await call("POST", "/item-categories", { name: "Parent", inventory_type: "quantity" });
    for (let i = 0; i < 10; i++) await call("POST", "/item-categories", { name: `Child ${i}`, inventory_type: "quantity", parent_id: parent.id });
    const zone = await call("POST", `/locations/${location.id}/zones`, { name: "Bench zone", short_name: "BZ" }, true);
    const customer = await call("POST", "/customers", { name: "Bench customer" });
    const contact = await call("POST", "/contacts", { first_name: "Bench", account_record_ids: [customer.id] });
    const itemIds: string[] = [];
    for (let i = 0; i < 50; i++) itemIds.push((await call("POST", "/items", { name: `Bench item ${i}`, sku: `B-${i}` })).id!);
    const stocked = itemIds[0]!;
    await call("POST", `/items/${stocked}/adjustments`, { location_id: location.id, quantity: 1_000_000 });

    const supplier = await call("POST", "/suppliers", { name: "Bench supplier", tax_rate1: 5 });
    const destination = await call("POST", "/locations", { name: "Bench Destination", short_name: "BD" }, true);
    const orderBody = {
      supplier_id: supplier.id,
      location_id: location.id,
      lines: [0, 1, 2].map((i) => ({ item_id: itemIds[i], quantity: 5, unit_cost: "100" })),
    };
    const order = (await call("POST", "/purchase-orders", orderBody)) as { id: string };
    const transfer = (await call("POST", "/stock-transfers", {
      origin_location_id: location.id,
      destination_location_id: destination.id,
      lines: [{ item_id: stocked, quantity: 1 }],
    })) as { id: string };
    // Kits: a kit of 10 components, one of them the item of an automatic kit of 3 components
    // that is never in stock, so every build also assembles one nested build (11 + 4 changes).
    const { createKit } = await import("../../lib/domain/admin/service.js");
    const kitParts: string[] = [];
    for (let i = 0; i < 12; i++) {
      const part = await call("POST", "/items", { name: `Kit part ${i}`, cost: "1.2500" });
      await call("POST", `/items/${part.id}/adjustments`, { location_id: location.id, quantity: 1_000_000 });
      kitParts.push(part.id!);
    }
    const subItem = await call("POST", "/items", { name: "Nested kit item" });
    await createKit({
      accountId: account.account_id,
      itemId: subItem.id!,
      method: "automatic",
      components: kitParts.slice(9, 12).map((itemId) => ({ itemId, quantity: 1 })),
    });
    const kitItem = await call("POST", "/items", { name: "Bench kit" });
    const { kit_id: kitId } = await createKit({
      accountId: account.account_id,
      itemId: kitItem.id!,
      components: [...kitParts.slice(0, 9), subItem.id!].map((itemId) => ({ itemId, quantity: 1 })),
    });
    const builtForRemoval: string[] = [];
    for (let i = 0; i < ITERATIONS + 3; i++) builtForRemoval.push((await call("POST", `/kits/${kitId}/builds`, { location_id: location.id, quantity: 1 })).id!);
    // Tasks: 60 open tasks of the caller (some overdue, some due this week, some with reminders already due).
    const taskIds: string[] = [];
    let lastReminder = Date.now();
    for (let i = 0; i < 60; i++) {
      const due = i % 3 === 0 ? { due_date: "2020-01-01" } : i % 3 === 1 ? { due_date: new Date().toISOString().slice(0, 10), due_time: "12:00" } : {};
      lastReminder = Date.now() + 2000;
      const reminder = i < 45 ? { reminder_at: new Date(lastReminder).toISOString() } : {};
      taskIds.push((await call("POST", "/tasks", { title: `Bench task ${i}`, time_zone: "Europe/London", ...due, ...reminder }, true)).id!);
    }
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, lastReminder - Date.now()) + 50));
    const estimateBody = { customer_id: customer.id, lines: [0, 1, 2].map((i) => ({ item_id: itemIds[i], quantity: 5 })) };
    const estimate = (await call("POST", "/estimates", estimateBody)) as { id: string };
    // Conversions: each request consumes an Open estimate (one stocked item line and one service line).
    const convertBody = {
      customer_id: customer.id,
      lines: [
        { item_id: stocked, quantity: 1 },
        { name: "Service", unit_price: "10" },
      ],
    };
    const toInvoice: string[] = [];
    const toOrder: string[] = [];
    for (let i = 0; i < ITERATIONS + 3; i++) {
      toInvoice.push((await call("POST", "/estimates", convertBody)).id!);
      toOrder.push((await call("POST", "/estimates", convertBody)).id!);
    }

    const scenarios: Scenario[] = [
      ["listLocations", () => call("GET", "/locations")],
      ["createLocation", () => call("POST", "/locations", { name: `L${counter}`, short_name: "L" }, true)],
      ["listZones", () => call("GET", `/locations/${location.id}/zones`)],
      ["createZone", () => call("POST", `/locations/${location.id}/zones`, { name: `Z${counter}`, short_name: "Z" }, true)],
      ["updateZone", () => call("PATCH", `/locations/${location.id}/zones/${zone.id}`, { name: `Z${counter}`, short_name: "Z" }, true)],
      ["listItemCategories", () => call("GET", "/item-categories?limit=5")],
      ["getItemCategory", () => call("GET", `/item-categories/${parent.id}`)],
      ["createItemCategory", () => call("POST", "/item-categories", { name: `C${counter}`, inventory_type: "quantity" })],
      ["createItemCategory (with parent)", () => call("POST", "/item-categories", { name: `C${counter}`, inventory_type: "quantity", parent_id: parent.id })],
      ["updateItemCategory", () => call("PATCH", `/item-categories/${parent.id}`, { name: `P${counter}` })],
      ["createCustomer (with key)", () => call("POST", "/customers", { name: `Customer ${counter}` }, true)],
      ["getCustomer", () => call("GET", `/customers/${customer.id}`)],
      ["updateCustomer", () => call("PATCH", `/customers/${customer.id}`, { office_phone: `555-${counter}` })],
      ["deleteCustomer (no contacts)", async () => call("DELETE", `/customers/${(await call("POST", "/customers", { name: "Temp" })).id}`)],
      ["createContact (1 link)", () => call("POST", "/contacts", { first_name: `C${counter}`, account_record_ids: [customer.id] })],
      ["getContact (1 link)", () => call("GET", `/contacts/${contact.id}`)],
      ["updateContact", () => call("PATCH", `/contacts/${contact.id}`, { job_title: `T${counter}` })],
      ["listContacts", () => call("GET", "/contacts")],
      ["createItem", () => call("POST", "/items", { name: `Item ${counter}`, price: "9.5" })],
      ["getItem", () => call("GET", `/items/${stocked}`)],
      ["listItems (page of 20)", () => call("GET", "/items")],
      ["listItems ids=50", () => call("GET", `/items?ids=${itemIds.join(",")}`)],
      ["listItemVariations include=locations", () => call("GET", `/items/${stocked}/variations?include=locations`)],
      ["createItemAdjustment (existing row)", () => call("POST", `/items/${stocked}/adjustments`, { location_id: location.id, quantity: -1 })],
      ["createItemAdjustment (with key)", () => call("POST", `/items/${stocked}/adjustments`, { location_id: location.id, quantity: 1 }, true)],
      ["createPurchaseOrder (3 lines)", () => call("POST", "/purchase-orders", orderBody)],
      ["getPurchaseOrder (3 lines)", () => call("GET", `/purchase-orders/${order.id}`)],
      ["listPurchaseOrders (page of 20)", () => call("GET", "/purchase-orders")],
      ["updatePurchaseOrder (header only)", () => call("PATCH", `/purchase-orders/${order.id}`, { attention: `A${counter}` })],
      ["createPurchaseOrderPayment", () => call("POST", `/purchase-orders/${order.id}/payments`, { amount: "1" })],
      [
        "createStockTransfer (1 line)",
        () =>
          call("POST", "/stock-transfers", {
            origin_location_id: location.id,
            destination_location_id: destination.id,
            lines: [{ item_id: stocked, quantity: 1 }],
          }),
      ],
      ["getStockTransfer", () => call("GET", `/stock-transfers/${transfer.id}`)],
      ["listStockTransfers (page of 20)", () => call("GET", "/stock-transfers")],
      ["listKits", () => call("GET", "/kits")],
      ["getKit (10 components)", () => call("GET", `/kits/${kitId}`)],
      ["listKitBuilds (page of 20)", () => call("GET", `/kits/${kitId}/builds`)],
      [
        "createKitBuild (10 components + nested automatic kit, with key)",
        () => call("POST", `/kits/${kitId}/builds`, { location_id: location.id, quantity: 1 }, true),
      ],
      ["deleteKitBuild (10 components)", () => call("DELETE", `/kits/${kitId}/builds/${builtForRemoval.pop()}`)],
      ["createTask", () => call("POST", "/tasks", { title: `T${counter}`, due_date: "2030-01-01" }, true)],
      ["getTask", () => call("GET", `/tasks/${taskIds[0]}`)],
      ["listTasks (page of 40)", () => call("GET", "/tasks")],
      ["listTasks q= (filtered page)", () => call("GET", "/tasks?q=task%205")],
      ["getTaskStats (scope mine)", () => call("GET", "/tasks/stats")],
      ["getTaskStats (scope all)", () => call("GET", "/tasks/stats?scope=all")],
      ["listTaskReminders (inbox page of 40)", () => call("GET", "/tasks/reminders")],
      ["createEstimate (3 lines)", () => call("POST", "/estimates", estimateBody)],
      ["previewEstimate (3 lines)", () => call("POST", "/estimates/preview", estimateBody)],
      ["getEstimate (3 lines)", () => call("GET", `/estimates/${estimate.id}`)],
      ["listEstimates (page of 20)", () => call("GET", "/estimates")],
      ["updateEstimate (header only)", () => call("PATCH", `/estimates/${estimate.id}`, { attention: `A${counter++}` })],
      ["convertEstimateToInvoice (2 lines)", () => call("POST", `/estimates/${toInvoice.pop()}/convert-to-invoice`, {})],
      ["convertEstimateToSalesOrder (2 lines)", () => call("POST", `/estimates/${toOrder.pop()}/convert-to-sales-order`, {})],
      ...(await salesScenarios(call, { locationId: location.id!, customerId: customer.id! })),
    ];

    originalWrite(`\nDynamoDB round trips and latency per route (${ITERATIONS} requests each, DynamoDB Local)\n`);
    originalWrite("| route | calls | commands | RCU | WCU | p50 ms | p95 ms |\n|---|---|---|---|---|---|---|\n");
    for (const [name, run, iterations] of scenarios) {
      for (let i = 0; i < 3; i++) await run();
      samples.length = 0;
      const latencies: number[] = [];
      for (let i = 0; i < Math.min(ITERATIONS, iterations ?? ITERATIONS); i++) {
        const started = performance.now();
        await run();
        latencies.push(performance.now() - started);
      }
      const last = samples[samples.length - 1]!;
      measured.set(name, measure(latencies, samples));
      const maxCalls = Math.max(...samples.map((s) => s.calls));
      originalWrite(
        `| ${name} | ${maxCalls} | ${last.commands.join(" + ")} | ${last.readCapacity} | ${last.writeCapacity} | ${percentile(latencies, 50).toFixed(1)} | ${percentile(latencies, 95).toFixed(1)} |\n`,
      );
    }
    await largeDocuments(call, location.id as string, destination.id as string, supplier.id as string);
    const { lineCallsTable, lineCallsViolations } = await import("./line-calls.js");
    originalWrite("\nDynamoDB calls per line count: calls (reads; stock-hold chunks), DynamoDB Local (scripts/bench/line-calls.ts)\n");
    const lineCalls = await lineCallsTable(base, headers, samples);
    originalWrite(lineCalls.table);
    overBudget.push(...lineCallsViolations(lineCalls.rows));
    await largeEstimates(call, customer.id as string, itemIds);
    originalWrite("\nTime until an invoice's stock shows (DynamoDB Local)\n");
    originalWrite(await stockVisibility(call, { locationId: location.id!, customerId: customer.id! }));
    await listScaling(base);
    overBudget.push(...listCostViolations(await listCost({ print: originalWrite })));
    await syncCosts(base);
    await syncPage(base);
    const { benchWebhooks, webhookReport, webhookBudgetFailures } = await import("./webhooks.js");
    const webhooks = await benchWebhooks(base);
    originalWrite(`\n${webhookReport(webhooks)}`);
    overBudget.push(...webhookBudgetFailures(webhooks));
    const { benchSyncHead, syncHeadReport, syncHeadFailures } = await import("./sync-head.js");
    const syncHead = await benchSyncHead();
    originalWrite(`\n${syncHeadReport(syncHead)}`);
    overBudget.push(...syncHeadFailures(syncHead));
    costs();
    api.server.closeAllConnections();
    api.server.close();
  } finally {
    await dynamo.stop();
  }
  await contention();
  await coldImports();
  // --check: the budgets of issue 19 (calls per line, list cost, contention, cold imports) and 21 (webhook latency),
  // and the sync head's sanity check of issue 22 (every change exactly one marker).
  if (overBudget.length > 0) originalWrite(`\nOver budget:\n${overBudget.map((v) => `- ${v}`).join("\n")}\n`);
  else originalWrite("\nEvery budget met.\n");
  if (process.argv.includes("--check") && overBudget.length > 0) process.exitCode = 1;
}

/** Budget violations found by the sections above (`--check` fails on any). */
const overBudget: string[] = [];

/**
 * The 100-line documents of issue 9: a purchase order of 100 different items sent and received,
 * and a transfer of 100 different items sent and received. Each change is atomic; stock moves
 * before the response (a hold of ~5 exactly-once chunks, bound by the document's transaction),
 * so the stock levels show it as soon as the request answers.
 */
async function largeDocuments(
  call: (method: string, path: string, body?: unknown) => Promise<any>,
  locationId: string,
  destinationId: string,
  supplierId: string,
): Promise<void> {
  const items: string[] = [];
  for (let i = 0; i < 100; i++) items.push((await call("POST", "/items", { name: `Large ${i}`, cost: "1" })).id);
  for (const id of items) await call("POST", `/items/${id}/adjustments`, { location_id: locationId, quantity: 10 });
  originalWrite("\n100-line documents of 100 different items (one request each; DynamoDB Local)\n");
  originalWrite("| request | calls | transactions | WCU | ms | stock visible |\n|---|---|---|---|---|---|\n");
  const run = async (name: string, method: string, path: string, body?: unknown) => {
    samples.length = 0;
    const started = performance.now();
    const result = await call(method, path, body);
    const ms = performance.now() - started;
    const sample = samples[samples.length - 1]!;
    const transactions = sample.commands.filter((c) => c === "TransactWriteItems").length;
    originalWrite(`| ${name} | ${sample.calls} | ${transactions} | ${sample.writeCapacity} | ${ms.toFixed(0)} | at the response |\n`);
    return result;
  };
  const order = await run("create purchase order", "POST", "/purchase-orders", {
    supplier_id: supplierId,
    location_id: locationId,
    lines: items.map((id) => ({ item_id: id, quantity: 3 })),
  });
  await run("retrieve purchase order", "GET", `/purchase-orders/${order.id}`);
  await run("send purchase order (incoming +)", "POST", `/purchase-orders/${order.id}/send`, {});
  await run("receive purchase order", "POST", `/purchase-orders/${order.id}/receive`, { lines: order.lines.map((l: any) => ({ line_id: l.id, quantity: 3 })) });
  const transfer = await run("create stock transfer", "POST", "/stock-transfers", {
    origin_location_id: locationId,
    destination_location_id: destinationId,
    lines: items.map((id) => ({ item_id: id, quantity: 2 })),
  });
  await run("send stock transfer (200 row changes)", "POST", `/stock-transfers/${transfer.id}/send`, {});
  await run("receive stock transfer", "POST", `/stock-transfers/${transfer.id}/receive`, {});
}

/**
 * 500-line estimates (issue 11): ONE transaction for the create (number, header, compressed line
 * pages, counts, the customer's document_count, and with a key the stored response in parts),
 * ONE Query for the retrieve. Lines of 50 different items (each on every 50th line), with short
 * descriptions and with 4,000-character ones (~2.2 MB of JSON).
 */
async function largeEstimates(
  call: (method: string, path: string, body?: unknown, idempotent?: boolean) => Promise<any>,
  customerId: string,
  itemIds: string[],
): Promise<void> {
  const words = "steel brass cable valve panel fitting the of and to in for with on at by from".split(" ");
  const prose = (length: number) => {
    let out = "";
    while (out.length < length) out += `${words[Math.floor(Math.random() * words.length)]} `;
    return out.slice(0, length);
  };
  const long: string[] = [];
  for (let i = 0; i < 50; i++) long.push((await call("POST", "/items", { name: `Described ${i}`, description: prose(4000), price: "2.5", cost: "1" })).id);
  originalWrite("\n500-line estimates (one request each; DynamoDB Local)\n");
  originalWrite("| request | calls | commands | RCU | WCU | ms | response KB |\n|---|---|---|---|---|---|---|\n");
  const run = async (name: string, method: string, path: string, body?: unknown, idempotent = false) => {
    samples.length = 0;
    const started = performance.now();
    const result = await call(method, path, body, idempotent);
    const ms = performance.now() - started;
    const sample = samples[samples.length - 1]!;
    const counts = new Map<string, number>();
    for (const c of sample.commands) counts.set(c, (counts.get(c) ?? 0) + 1);
    const commands = [...counts].map(([c, n]) => (n > 1 ? `${n} ${c}` : c)).join(" + ");
    originalWrite(
      `| ${name} | ${sample.calls} | ${commands} | ${sample.readCapacity} | ${sample.writeCapacity} | ${ms.toFixed(0)} | ${(Buffer.byteLength(JSON.stringify(result)) / 1024).toFixed(0)} |\n`,
    );
    return result;
  };
  for (const [label, items] of [
    ["short descriptions", itemIds],
    ["4,000-character descriptions", long],
  ] as const) {
    const lines = Array.from({ length: 500 }, (_, i) => ({ item_id: items[i % 50], quantity: (i % 7) + 1 }));
    const created = await run(`create, ${label}`, "POST", "/estimates", { customer_id: customerId, lines });
    await run(`create with Idempotency-Key, ${label}`, "POST", "/estimates", { customer_id: customerId, lines }, true);
    await run(`preview, ${label}`, "POST", "/estimates/preview", { customer_id: customerId, lines });
    await run(`retrieve, ${label}`, "GET", `/estimates/${created.id}`);
    await run(`update header, ${label}`, "PATCH", `/estimates/${created.id}`, { attention: "Bench" });
  }
}

/**
 * Read cost of GET /customers as the account grows: the same requests at 100 and at 10,000
 * customers (written directly in batches, with their counters, to keep the setup fast).
 */
async function listScaling(base: string): Promise<void> {
  const { createAccount } = await import("../../lib/domain/admin/service.js");
  const { db } = await import("../../lib/db/service.js");
  const { randomUUID } = await import("node:crypto");
  originalWrite("\nGET /customers read cost by account size (calls and RCU of the whole request, auth included)\n");
  originalWrite("| customers | request | calls | commands | RCU | ms |\n|---|---|---|---|---|---|\n");
  for (const size of [100, 10_000]) {
    const account = await createAccount({ name: `Scale ${size}` });
    const { user_id: ownerUserId, account_id: accountId } = account;
    const now = new Date().toISOString();
    const items = Array.from({ length: size }, (_, i) => {
      const name = `Customer ${String(i).padStart(5, "0")} ${randomUUID().slice(0, 4)}`;
      return {
        accountId,
        partyId: randomUUID(),
        kind: "customer" as const,
        number: i + 1,
        ownerUserId,
        name,
        nameKey: `${name.toLowerCase()}\u0001`,
        emailKey: `buyer${i}@example.com`,
        officeEmail: `buyer${i}@example.com`,
        billingCity: "Springfield",
        createdAt: now,
        updatedAt: now,
      };
    });
    for (let i = 0; i < items.length; i += 500)
      await db()
        .entities.party.put(items.slice(i, i + 500))
        .go();
    await db().entities.accountCounters.update({ accountId }).set({ customerSeq: size, customerCount: size }).go();
    await db().entities.ownerCounters.update({ accountId, userId: ownerUserId }).set({ customerCount: size }).go();
    const headers = { authorization: `Bearer ${account.api_key}` };
    const requests: [string, string][] = [
      ["page 1, limit 20", "/customers"],
      ["page 1, limit 100", "/customers?limit=100"],
      ["page 5, limit 20", "/customers?page=5"],
      ["q=buyer7 (search)", "/customers?q=buyer7"],
    ];
    for (const [label, path] of requests) {
      await fetch(`${base}${path}`, { headers }); // warm
      samples.length = 0;
      const started = performance.now();
      const response = await fetch(`${base}${path}`, { headers });
      await response.arrayBuffer();
      const elapsed = performance.now() - started;
      const sample = samples[samples.length - 1]!;
      originalWrite(`| ${size} | ${label} | ${sample.calls} | ${sample.commands.join(" + ")} | ${sample.readCapacity} | ${elapsed.toFixed(0)} |\n`);
    }
  }
}

/**
 * The change feed: lag from a write to its marker being readable (local stack, poller every
 * 20 ms, 4 parallel partitions), write units per changed record, and the head's conflict rate
 * when four writers burst in parallel.
 */
async function syncCosts(base: string): Promise<void> {
  const { createAccount } = await import("../../lib/domain/admin/service.js");
  const { startStreamPoller } = await import("../local/stream-poller.js");
  const { handler } = await import("../../functions/stream-processor/handler.js");
  const { tableName } = await import("../../lib/db/table.js");
  const poller = await startStreamPoller({
    endpoint: process.env.DYNAMODB_ENDPOINT!,
    tableName: tableName(),
    intervalMs: 20,
    parallelism: 4,
    handler,
  });
  try {
    const account = await createAccount({ name: "Sync bench" });
    const headers = { authorization: `Bearer ${account.api_key}`, "content-type": "application/json" };
    const get = async (path: string) => (await fetch(`${base}${path}`, { headers })).json() as Promise<Record<string, any>>;
    let cursor = (await get("/sync?start=now&resources=item")).cursor as string;
    const lags: number[] = [];
    for (let i = 0; i < 40; i++) {
      const created = (await (await fetch(`${base}/items`, { method: "POST", headers, body: JSON.stringify({ name: `Lag ${i}` }) })).json()) as { id: string };
      const wrote = performance.now();
      for (;;) {
        const page = await get(`/sync?cursor=${encodeURIComponent(cursor)}`);
        cursor = page.next_cursor;
        if ((page.changes as { id: string }[]).some((c) => c.id === created.id)) break;
        await new Promise((r) => setTimeout(r, 5));
      }
      lags.push(performance.now() - wrote);
    }
    await poller.drain();
    streamBatches.length = 0;
    const burst = await Promise.all(
      Array.from({ length: 4 }, (_, w) =>
        (async () => {
          for (let i = 0; i < 25; i++) {
            await fetch(`${base}/items`, { method: "POST", headers, body: JSON.stringify({ name: `Burst ${w}-${i}` }) });
          }
        })(),
      ),
    );
    void burst;
    for (let i = 0; i < 3; i++) await poller.drain();
    const changes = streamBatches.reduce((n, b) => n + b.changes, 0);
    const transactions = streamBatches.reduce((n, b) => n + b.markerTransactions, 0);
    const conflicts = streamBatches.reduce((n, b) => n + b.headConflicts, 0);
    originalWrite("\nChange feed (local stack: poller every 20 ms, 4 parallel partitions)\n");
    originalWrite(`| write -> marker readable | median ${percentile(lags, 50).toFixed(0)} ms | p99 ${percentile(lags, 99).toFixed(0)} ms |\n`);
    originalWrite(
      `| burst of 100 creates by 4 writers | ${changes} changed table items, ${transactions} marker transactions, ${conflicts} head conflicts (${((100 * conflicts) / Math.max(1, transactions)).toFixed(1)}% of transactions retried) |\n`,
    );
  } finally {
    await poller.stop();
  }
}

/**
 * One sync page of 100 changes (a follower catching up): the same cursor read repeatedly, so
 * every request examines the same 100 markers.
 */
async function syncPage(base: string): Promise<void> {
  const { createAccount } = await import("../../lib/domain/admin/service.js");
  const { startStreamPoller } = await import("../local/stream-poller.js");
  const { handler } = await import("../../functions/stream-processor/handler.js");
  const { tableName } = await import("../../lib/db/table.js");
  const poller = await startStreamPoller({ endpoint: process.env.DYNAMODB_ENDPOINT!, tableName: tableName(), intervalMs: 20, handler });
  try {
    const account = await createAccount({ name: "Sync page bench" });
    const headers = { authorization: `Bearer ${account.api_key}`, "content-type": "application/json" };
    const get = async (path: string) => (await fetch(`${base}${path}`, { headers })).json() as Promise<Record<string, any>>;
    const cursor = (await get("/sync?start=now&resources=item")).cursor as string;
    for (let i = 0; i < 100; i++) await fetch(`${base}/items`, { method: "POST", headers, body: JSON.stringify({ name: `Page ${i}` }) });
    for (let i = 0; i < 3; i++) await poller.drain();
    const path = `/sync?cursor=${encodeURIComponent(cursor)}&limit=100`;
    const first = await get(path);
    if ((first.changes as unknown[]).length !== 100) throw new Error(`sync page: expected 100 changes, got ${(first.changes as unknown[]).length}`);
    samples.length = 0;
    const latencies: number[] = [];
    for (let i = 0; i < ITERATIONS; i++) {
      const started = performance.now();
      await get(path);
      latencies.push(performance.now() - started);
    }
    measured.set("sync page", measure(latencies, samples));
  } finally {
    await poller.stop();
  }
}

/** The cost model's table: measured routes, and the modelled 100-line document write. */
function costs(): void {
  const profile = (name: string, key: string): RequestProfile => {
    const m = measured.get(key)!;
    return {
      name,
      durationMs: m.meanMs,
      memoryMb: API_FUNCTION_MEMORY_MB,
      readUnits: m.readUnits,
      writeUnits: m.writeUnits,
      logBytes: m.logBytes + PLATFORM_AND_ACCESS_LOG_BYTES,
    };
  };
  const read = profile("read: GET /items/{id}", "getItem");
  const write = profile("write: POST /items", "createItem");
  const lines = 100;
  const document: RequestProfile = {
    ...write,
    name: `document write, ${lines} lines`,
    readUnits: write.readUnits + lines, // plus one strongly consistent read (<= 4 KB) of each line's item
    writeUnits: read.writeUnits + transactionWriteUnits(lines, 1), // the auth rate window + the transaction
    modelled: `document routes are coming: ${lines} ~1 KB items in one TransactWriteItems (2 WRU per KB per item = ${transactionWriteUnits(lines, 1)} WRU) plus the auth rate-window write; reads of POST /items plus 1 RRU per line's item; duration of POST /items (one transaction round trip either way).`,
  };
  const measuredDocument = measured.has("createInvoice (100 inventory lines)")
    ? profile(`document write: POST /invoices, ${lines} inventory lines of ${lines} items`, "createInvoice (100 inventory lines)")
    : undefined;
  const sync = profile("sync page (100 changes)", "sync page");
  originalWrite(`\n${costTable([read, write, measuredDocument ?? document, sync])}`);
  originalWrite(
    `Durations are the mean latency measured here against DynamoDB Local (AWS round trips differ), billed at ${API_FUNCTION_MEMORY_MB} MB; ` +
      `log bytes are the measured request log line plus ${PLATFORM_AND_ACCESS_LOG_BYTES} B estimated for Lambda's platform lines and the access log line. ` +
      "Not included: cold starts (init is billed), the stream processor's marker writes per changed item, data transfer out, storage.\n",
  );
}

/**
 * Contention as Lambda runs it, exactly as `npm run bench:contention` measures it: in a child
 * process with its own DynamoDB Local (not this run's, which holds the 5,000-document accounts
 * by now and answers more slowly for it: DynamoDB's own latency does not grow with a table),
 * through 1, 4 and 8 worker processes; the budget applies to 8 (`contentionFailures`).
 */
async function contention(): Promise<void> {
  const { contentionTable, contentionFailures } = await import("./contention.js");
  const child = spawnSync(process.execPath, [...process.execArgv, fileURLToPath(new URL("./contention.ts", import.meta.url)), "--json"], {
    encoding: "utf8",
    env: { ...process.env, PROCESSES: "1,4,8", REQUESTS: "100", SCENARIOS: "" },
    stdio: ["ignore", "pipe", "inherit"],
  });
  if (child.status !== 0) throw new Error(`the contention bench failed (exit ${child.status})`);
  const rows = JSON.parse(child.stdout.trim().split("\n").at(-1)!) as ContentionRow[];
  originalWrite(
    "\nContention as Lambda runs it: 100 simultaneous requests per scenario, each worker process serving one at a time (scripts/bench/contention.ts)\n",
  );
  originalWrite(`${contentionTable(rows)}\n`);
  overBudget.push(...contentionFailures(rows));
}

/** Size and cold import CPU time of each bundled handler against the stack floor (scripts/bench/bundles.ts). */
async function coldImports(): Promise<void> {
  const { coldImportReport } = await import("./bundles.js");
  const report = await coldImportReport();
  originalWrite(`\n${report.table}`);
  overBudget.push(...report.over.map((group) => `cold import: ${group} over ${report.maxRatio}x the stack floor`));
}

await main();
