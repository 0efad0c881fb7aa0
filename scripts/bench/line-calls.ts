/**
 * DynamoDB calls per line count (issue 19, "calls independent of line count"): the document
 * routes that resolve lines (creates, updates, conversions, receipts) run with 1, 10 and 100
 * inventory lines of different items, and each request's round trips are read from its log
 * line (`{"message":"request","dynamodb":{"calls","commands"}}`). Resolving lines is a fixed
 * number of batched reads, so the reads of a 100-line request are about those of a 1-line one;
 * only the writes of a document whose stock change exceeds one transaction grow, per chunk of
 * lines (a stock hold's chunks, lib/domain/inventory/stock-holds.ts), never per line.
 *
 * `npm run bench` calls `lineCallsTable` with the samples its stdout interceptor collects; a
 * caller without one (a test) wraps the requests in `captureRequestSamples`.
 */

/** What a request's log line says of its DynamoDB usage. */
export interface LineCallSample {
  route: string;
  calls: number;
  commands: string[];
}

export const LINE_COUNTS = [1, 10, 100] as const;
export type LineCount = (typeof LINE_COUNTS)[number];

/** One route's figures, by line count. */
export interface LineCallsRow {
  /** The route's operation id, e.g. `createInvoice`. */
  route: string;
  calls: Record<LineCount, number>;
  /** Calls that read (GetItem, BatchGetItem, Query, Scan, TransactGetItems). */
  reads: Record<LineCount, number>;
  /** Transactions of a stock hold's chunks (a document whose stock change exceeds one transaction). */
  chunks: Record<LineCount, number>;
  /** Calls without the hold's chunks (each chunk: its reads and its transaction): what must not grow with lines. */
  outsideChunks: Record<LineCount, number>;
  /** Commands in call order, per line count (for a closer look). */
  commands: Record<LineCount, string[]>;
}

const READ_COMMANDS = new Set(["GetItem", "BatchGetItem", "Query", "Scan", "TransactGetItems", "ExecuteStatement", "BatchExecuteStatement"]);
export const readCalls = (commands: readonly string[]) => commands.filter((c) => READ_COMMANDS.has(c)).length;

const WRITE_COMMANDS = new Set(["PutItem", "UpdateItem", "DeleteItem", "TransactWriteItems", "BatchWriteItem"]);

/**
 * Calls a request spends beyond its key's one rate-window UpdateItem (lib/db/auth-store.ts):
 * the first request of a minute resets the window with a second UpdateItem (and a lost race a
 * third). They come first, before the route's own calls (which start with reads), and depend
 * on the clock, not on the lines, so the line figures leave them out.
 */
export function rateWindowResets(commands: readonly string[]): number {
  let leading = 0;
  while (commands[leading] === "UpdateItem") leading += 1;
  return Math.max(0, leading - 1);
}

/**
 * Splits a request's calls into those of stock-hold chunks and the rest. A chunk is every
 * TransactWriteItems but the request's last (the document's own), with the reads since the
 * previous write (the reads that plan it).
 */
export function holdChunks(commands: readonly string[]): { chunks: number; chunkCalls: number } {
  const last = commands.lastIndexOf("TransactWriteItems");
  let chunks = 0;
  let chunkCalls = 0;
  let readsSinceWrite = 0;
  commands.forEach((command, index) => {
    if (command === "TransactWriteItems" && index !== last) {
      chunks += 1;
      chunkCalls += 1 + readsSinceWrite;
    }
    if (WRITE_COMMANDS.has(command)) readsSinceWrite = 0;
    else if (READ_COMMANDS.has(command)) readsSinceWrite += 1;
  });
  return { chunks, chunkCalls };
}

/**
 * Collects the request log lines written in this process (the API served in-process) until
 * `stop`: raises LOG_LEVEL to INFO meanwhile and keeps every other output as it was.
 */
export function captureRequestSamples(): { samples: LineCallSample[]; stop: () => void } {
  const samples: LineCallSample[] = [];
  const level = process.env.LOG_LEVEL;
  process.env.LOG_LEVEL = "INFO";
  const original = process.stdout.write;
  process.stdout.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
    const text = String(chunk);
    if (text.startsWith('{"level"') && text.includes('"message":"request"')) {
      const line = JSON.parse(text) as { route: string; dynamodb?: { calls: number; commands: string[] } };
      samples.push({ route: line.route, calls: line.dynamodb?.calls ?? 0, commands: line.dynamodb?.commands ?? [] });
      return true;
    }
    if (text.startsWith('{"level":"INFO"')) return true; // other INFO lines the raised level lets through
    return (original as (...args: unknown[]) => boolean).call(process.stdout, chunk, ...rest);
  }) as typeof process.stdout.write;
  return {
    samples,
    stop: () => {
      process.stdout.write = original;
      if (level === undefined) delete process.env.LOG_LEVEL;
      else process.env.LOG_LEVEL = level;
    },
  };
}

type Json = Record<string, any>;

/**
 * Runs every measured route at 1, 10 and 100 lines against the API at `base` (…/api/v3) with
 * `headers` (an owner key: authorization and content type), reading each request's usage from
 * `samples` (filled by the caller's log interceptor). Creates its own locations, customer,
 * supplier and 100 stocked items first. Returns the figures and a markdown table.
 */
export async function lineCallsTable(
  base: string,
  headers: Record<string, string>,
  samples: LineCallSample[],
): Promise<{ rows: LineCallsRow[]; table: string }> {
  let keys = 0;
  const call = async (method: string, path: string, body?: unknown, idempotent = false): Promise<Json> => {
    const response = await fetch(`${base}${path}`, {
      method,
      headers: idempotent ? { ...headers, "idempotency-key": `line-calls-${tag}-${keys++}` } : headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const json = (await response.json()) as Json;
    if (response.status >= 400) throw new Error(`${method} ${path}: ${response.status} ${JSON.stringify(json).slice(0, 500)}`);
    return json;
  };
  /** Runs one request and returns its log line's figures. */
  const tag = Math.random().toString(36).slice(2, 8);
  const measure = async (route: string, method: string, path: string, body?: unknown): Promise<{ result: Json; sample: LineCallSample }> => {
    const before = samples.length;
    const result = await call(method, path, body);
    const sample = samples.slice(before).findLast((s) => s.route === route);
    if (!sample) throw new Error(`no request log line for ${route} (is LOG_LEVEL at INFO?)`);
    return { result, sample };
  };

  const location = await call("POST", "/locations", { name: `Lines ${tag}`, short_name: "LN" }, true);
  const destination = await call("POST", "/locations", { name: `Lines destination ${tag}`, short_name: "LD" }, true);
  const customer = await call("POST", "/customers", { name: `Lines customer ${tag}` });
  const supplier = await call("POST", "/suppliers", { name: `Lines supplier ${tag}` });
  const items: string[] = [];
  const max = Math.max(...LINE_COUNTS);
  for (let i = 0; i < max; i += 10) {
    const batch = await Promise.all(
      Array.from({ length: Math.min(10, max - i) }, async (_, j) => {
        const item = await call("POST", "/items", { name: `Lines ${tag} ${i + j}`, price: "10", cost: "4", location_id: location.id });
        await call("POST", `/items/${item.id}/adjustments`, { location_id: location.id, quantity: 1_000_000 });
        return item.id as string;
      }),
    );
    items.push(...batch);
  }
  const linesOf = (n: number, quantity = 1) => items.slice(0, n).map((item_id) => ({ item_id, quantity }));

  const figures = new Map<string, LineCallsRow>();
  const record = (count: LineCount, sample: LineCallSample) => {
    const row = figures.get(sample.route) ?? ({ route: sample.route, calls: {}, reads: {}, chunks: {}, outsideChunks: {}, commands: {} } as LineCallsRow);
    const { chunks, chunkCalls } = holdChunks(sample.commands);
    const resets = rateWindowResets(sample.commands);
    row.calls[count] = sample.calls - resets;
    row.reads[count] = readCalls(sample.commands);
    row.chunks[count] = chunks;
    row.outsideChunks[count] = sample.calls - resets - chunkCalls;
    row.commands[count] = sample.commands;
    figures.set(sample.route, row);
  };
  const run = async (count: LineCount, route: string, method: string, path: string, body?: unknown) => {
    const { result, sample } = await measure(route, method, path, body);
    record(count, sample);
    return result;
  };

  for (const n of LINE_COUNTS) {
    const sales = { customer_id: customer.id, lines: linesOf(n) };
    const invoice = await run(n, "createInvoice", "POST", "/invoices", sales);
    await run(n, "updateInvoice", "PATCH", `/invoices/${invoice.id}`, { lines: linesOf(n, 2) });

    const order = await run(n, "createSalesOrder", "POST", "/sales-orders", sales);
    await run(n, "updateSalesOrder", "PATCH", `/sales-orders/${order.id}`, { lines: linesOf(n, 2) });
    await run(n, "invoiceSalesOrder", "POST", `/sales-orders/${order.id}/invoices`, {});

    const estimate = await run(n, "createEstimate", "POST", "/estimates", sales);
    await run(n, "updateEstimate", "PATCH", `/estimates/${estimate.id}`, { lines: linesOf(n, 2) });
    await run(n, "convertEstimateToSalesOrder", "POST", `/estimates/${estimate.id}/convert-to-sales-order`, {});
    const another = await call("POST", "/estimates", sales);
    await run(n, "convertEstimateToInvoice", "POST", `/estimates/${another.id}/convert-to-invoice`, {});

    const purchase = await run(n, "createPurchaseOrder", "POST", "/purchase-orders", { supplier_id: supplier.id, location_id: location.id, lines: linesOf(n) });
    const updated = await run(n, "updatePurchaseOrder", "PATCH", `/purchase-orders/${purchase.id}`, { lines: linesOf(n, 2) });
    await run(n, "sendPurchaseOrder", "POST", `/purchase-orders/${purchase.id}/send`, {});
    await run(n, "receivePurchaseOrder", "POST", `/purchase-orders/${purchase.id}/receive`, {
      lines: (updated.lines as Json[]).map((line) => ({ line_id: line.id, quantity: 2 })),
    });

    const transfer = await run(n, "createStockTransfer", "POST", "/stock-transfers", {
      origin_location_id: location.id,
      destination_location_id: destination.id,
      lines: linesOf(n),
    });
    await run(n, "updateStockTransfer", "PATCH", `/stock-transfers/${transfer.id}`, { lines: linesOf(n, 2) });
    await run(n, "sendStockTransfer", "POST", `/stock-transfers/${transfer.id}/send`, {});
    await run(n, "receiveStockTransfer", "POST", `/stock-transfers/${transfer.id}/receive`, {});
  }

  const rows = [...figures.values()];
  const cell = (row: LineCallsRow, n: LineCount) => `${row.calls[n]} (${row.reads[n]} reads${row.chunks[n] > 0 ? `; ${row.chunks[n]} hold chunks` : ""})`;
  const table =
    `| route | ${LINE_COUNTS.map((n) => `${n} line${n === 1 ? "" : "s"}`).join(" | ")} | 100 - 1, outside hold chunks |\n` +
    `|---|${LINE_COUNTS.map(() => "---|").join("")}---|\n` +
    rows.map((row) => `| ${row.route} | ${LINE_COUNTS.map((n) => cell(row, n)).join(" | ")} | ${row.outsideChunks[100] - row.outsideChunks[1]} |\n`).join("");
  return { rows, table };
}

/** Budgets of issue 19: lines cost calls only through a hold's chunks (each written twice: pending, folded). */
export const LINE_CALLS_BUDGET = { growth: 4, chunks: 16 };

/** Routes over budget (empty when within budget). */
export function lineCallsViolations(rows: readonly LineCallsRow[]): string[] {
  return rows.flatMap((row) => [
    ...(row.outsideChunks[100] - row.outsideChunks[1] > LINE_CALLS_BUDGET.growth
      ? [`line calls: ${row.route}: ${row.outsideChunks[1]} calls at 1 line, ${row.outsideChunks[100]} at 100 (more than ${LINE_CALLS_BUDGET.growth} more)`]
      : []),
    ...(row.chunks[100] > LINE_CALLS_BUDGET.chunks
      ? [`line calls: ${row.route}: ${row.chunks[100]} hold chunks at 100 lines (> ${LINE_CALLS_BUDGET.chunks})`]
      : []),
  ]);
}
