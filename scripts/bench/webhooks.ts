import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { withFreshDynamoLocal } from "./fresh-dynamo.js";
import { PRICES, transactionWriteUnits } from "./cost-model.js";
import { percentile } from "./percentile.js";
import { runWhenInvoked } from "./run-when-invoked.js";

/**
 * `npm run bench:webhooks [-- --check]` (also part of `npm run bench`): webhooks on the local
 * stack as `npm start` runs it (the stream poller every 250 ms, delivery in-process).
 * - Write-to-delivery latency: each item create timed from its 201 to its `item.upsert` message
 *   arriving at a local receiver; after 20 warm-up writes, `WRITES` (default 100) one at a time
 *   (each after the previous one's message), then `WRITES` at `RATE` (default 10) per second
 *   spread over four accounts; p50 and p99 of each (budget: p99 <= 2 s for both; on a busy
 *   machine the steady run measures how fast one poller and DynamoDB Local drain a backlog).
 * - What one change costs: the fan-out of one marker and one delivery attempt, run with their
 *   DynamoDB usage counted, and the modelled AWS cost per million delivered messages.
 */

/** Accounts the writes are spread over. */
const ACCOUNTS = 4;
/** Writes made (and delivered) before anything is measured. */
const WARM_UP_WRITES = 20;

/** The write-to-delivery budget of issue 21 (locally). */
export const DELIVERY_P99_BUDGET_MS = 2_000;

export interface WebhookBench {
  writes: number;
  ratePerSecond: number;
  /** Write -> delivery when each write waits for the previous one's message. */
  oneAtATime: { p50Ms: number; p99Ms: number };
  /** Write -> delivery at a steady rate over four accounts. */
  steady: { p50Ms: number; p99Ms: number };
  /** DynamoDB usage of one fan-out of one marker to one endpoint (the stream processor's part). */
  fanOut: { calls: number; readUnits: number; writeUnits: number; ms: number };
  /** DynamoDB usage of one delivery attempt (the delivery function's part). */
  attempt: { calls: number; readUnits: number; writeUnits: number; ms: number };
}

/** A receiver that notes when each change message arrived (by record id) and answers 204. */
async function startReceiver(): Promise<{ server: Server; url: string; arrivals: Map<string, number> }> {
  const arrivals = new Map<string, number>();
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      const at = performance.now();
      const payload = JSON.parse(Buffer.concat(chunks).toString("utf8")) as { data?: { id?: string } };
      if (payload.data?.id && !arrivals.has(payload.data.id)) arrivals.set(payload.data.id, at);
      response.statusCode = 204;
      response.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`, arrivals };
}

/**
 * Runs the measurements against the DynamoDB Local at `DYNAMODB_ENDPOINT` (set up by the
 * caller: `applyLocalEnvironment`, table created) and an API server at `base` (…/api/v3).
 */
export async function benchWebhooks(base: string, options: { writes?: number; ratePerSecond?: number } = {}): Promise<WebhookBench> {
  const writes = options.writes ?? 100;
  const rate = options.ratePerSecond ?? 10;
  const { createAccount } = await import("../../lib/domain/admin/service.js");
  const { startStreamPoller } = await import("../local/stream-poller.js");
  const { handler } = await import("../../functions/stream-processor/handler.js");
  const { tableName } = await import("../../lib/db/table.js");
  const { newDbUsage, withDbUsage } = await import("../../lib/db/metrics.js");
  const { fanOutChanges } = await import("../../lib/domain/webhooks/fan-out.js");
  const { attemptDelivery } = await import("../../lib/domain/webhooks/delivery.js");
  const { localWebhookQueue } = await import("../../lib/domain/webhooks/queue.js");
  const receiver = await startReceiver();
  const poller = await startStreamPoller({ endpoint: process.env.DYNAMODB_ENDPOINT!, tableName: tableName(), handler });
  try {
    // Four accounts, each with an endpoint; the steady writes are spread over them (one
    // account's item numbers are one sequence: this measures delivery, not that contention).
    const accounts = await Promise.all(
      Array.from({ length: ACCOUNTS }, async (_, n) => {
        const account = await createAccount({ name: `Webhook bench ${n}` });
        const headers = { authorization: `Bearer ${account.api_key}`, "content-type": "application/json" };
        const post = async (path: string, body: unknown) => {
          const response = await fetch(`${base}${path}`, { method: "POST", headers, body: JSON.stringify(body) });
          if (response.status !== 201) throw new Error(`${path}: ${response.status} ${await response.text()}`);
          return (await response.json()) as { id: string };
        };
        const endpoint = await post("/webhook-endpoints", { url: receiver.url, resources: ["item"] });
        return { account, post, endpoint };
      }),
    );
    const arrived = async (ids: readonly string[]) => {
      const deadline = performance.now() + 60_000;
      while (ids.some((id) => !receiver.arrivals.has(id))) {
        if (performance.now() > deadline)
          throw new Error(`Timed out after 60 s: ${ids.filter((id) => !receiver.arrivals.has(id)).length} messages never arrived.`);
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    };
    /** Writes `count` items (at `perSecond`, or each after the previous one's delivery); returns each one's write -> delivery time. */
    const lagsOf = async (count: number, perSecond: number | "one at a time") => {
      const written = new Map<string, number>();
      const started = performance.now();
      const write = async (i: number) => {
        const item = await accounts[i % ACCOUNTS]!.post("/items", { name: `Webhook bench ${i}` });
        written.set(item.id, performance.now());
        return item.id;
      };
      if (perSecond === "one at a time") {
        for (let i = 0; i < count; i++) await arrived([await write(i)]);
      } else {
        await Promise.all(
          Array.from({ length: count }, async (_, i) => {
            await new Promise((resolve) => setTimeout(resolve, Math.max(0, started + (i * 1000) / perSecond - performance.now())));
            await write(i);
          }),
        );
        await arrived([...written.keys()]);
      }
      return [...written].map(([id, at]) => receiver.arrivals.get(id)! - at);
    };
    await lagsOf(WARM_UP_WRITES, "one at a time"); // code paths compiled, DynamoDB Local warm
    const oneAtATime = await lagsOf(writes, "one at a time");
    const steady = await lagsOf(writes, rate);
    const { account, endpoint } = accounts[0]!;

    // Cost: one fan-out of one marker, and delivery attempts, with their DynamoDB usage counted.
    const usage = async (fn: () => Promise<unknown>) => {
      const counted = newDbUsage();
      const begun = performance.now();
      await withDbUsage(counted, fn as () => Promise<void>);
      return { calls: counted.calls, readUnits: counted.readCapacity, writeUnits: counted.writeCapacity, ms: performance.now() - begun };
    };
    const at = Date.now();
    const fanOut = await usage(() =>
      fanOutChanges([{ accountId: account.account_id, seq: 1_000_000, resource: "item", recordId: "bench", operation: "upsert", at }]),
    );
    const attempts: Awaited<ReturnType<typeof usage>>[] = [];
    for (let i = 0; i < 20; i++) {
      const message = { accountId: account.account_id, endpointId: endpoint.id, messageId: `msg_bench_${i}`, type: "item.upsert", body: "{}" };
      attempts.push(await usage(() => attemptDelivery(message, 1)));
    }
    const mean = (pick: (a: (typeof attempts)[number]) => number) => attempts.reduce((sum, a) => sum + pick(a), 0) / attempts.length;
    await localWebhookQueue().stop();
    return {
      writes,
      ratePerSecond: rate,
      oneAtATime: { p50Ms: percentile(oneAtATime, 50), p99Ms: percentile(oneAtATime, 99) },
      steady: { p50Ms: percentile(steady, 50), p99Ms: percentile(steady, 99) },
      fanOut,
      attempt: { calls: mean((a) => a.calls), readUnits: mean((a) => a.readUnits), writeUnits: mean((a) => a.writeUnits), ms: mean((a) => a.ms) },
    };
  } finally {
    await poller.stop();
    receiver.server.closeAllConnections();
    receiver.server.close();
  }
}

/** The budget's failures (`--check`): p99 <= 2 s one write at a time and at the steady rate. */
export function webhookBudgetFailures(result: WebhookBench): string[] {
  return (["oneAtATime", "steady"] as const)
    .filter((run) => result[run].p99Ms > DELIVERY_P99_BUDGET_MS)
    .map(
      (run) =>
        `webhooks, write -> delivery (${run === "steady" ? `${result.ratePerSecond}/s` : "one at a time"}): p99 ${result[run].p99Ms.toFixed(0)} ms > ${DELIVERY_P99_BUDGET_MS} ms`,
    );
}

/** Memory of the delivery function and the stream processor (infra/stack.ts). */
const DELIVERY_MEMORY_MB = 512;
/**
 * SQS requests per message when each is sent, received and deleted on its own (the worst case:
 * low traffic; under load SendMessageBatch, the event source's batches and its batched deletes
 * take ten at a time, 0.3 per message).
 */
const SQS_REQUESTS_PER_MESSAGE = 3;
/** SQS standard queue, per million requests (us-east-1, first tier after the free tier), as of PRICES.asOf. */
const SQS_PER_MILLION_REQUESTS = 0.4;

/** A markdown report of a run, with the modelled AWS cost per million delivered messages. */
export function webhookReport(result: WebhookBench): string {
  const perMillion = (units: number, price: number) => units * price;
  const lambda = (ms: number) =>
    PRICES.lambdaPerMillionRequests + (DELIVERY_MEMORY_MB / 1024) * (Math.ceil(ms) / 1000) * 1_000_000 * PRICES.lambdaArmPerGbSecond;
  // DynamoDB Local reports a transaction's items at 1 WRU each; AWS bills 2 per KB per item.
  const attemptWrites = Math.max(result.attempt.writeUnits, transactionWriteUnits(2, 1));
  const dynamo =
    perMillion(result.fanOut.readUnits + result.attempt.readUnits, PRICES.dynamoReadPerMillionUnits) +
    perMillion(result.fanOut.writeUnits + attemptWrites, PRICES.dynamoWritePerMillionUnits);
  const sqs = SQS_REQUESTS_PER_MESSAGE * SQS_PER_MILLION_REQUESTS;
  const functions = lambda(result.attempt.ms) + lambda(result.fanOut.ms);
  const total = dynamo + sqs + functions;
  const fmt = (value: number) => value.toFixed(2);
  return [
    `Webhooks on the local stack (poller every 250 ms, delivery in-process); budget: write -> delivery p99 <= ${DELIVERY_P99_BUDGET_MS} ms`,
    "| measure | value |",
    "|---|---|",
    `| write -> delivery, ${result.writes} item creates one at a time | p50 ${result.oneAtATime.p50Ms.toFixed(0)} ms, p99 ${result.oneAtATime.p99Ms.toFixed(0)} ms |`,
    `| write -> delivery, ${result.writes} item creates at ${result.ratePerSecond}/s over ${ACCOUNTS} accounts | p50 ${result.steady.p50Ms.toFixed(0)} ms, p99 ${result.steady.p99Ms.toFixed(0)} ms |`,
    `| fan-out of one marker to one endpoint (stream processor) | ${result.fanOut.calls} DynamoDB calls, ${fmt(result.fanOut.readUnits)} RRU, ${fmt(result.fanOut.writeUnits)} WRU, ${result.fanOut.ms.toFixed(0)} ms |`,
    `| one delivery attempt (delivery function) | ${result.attempt.calls.toFixed(1)} DynamoDB calls, ${fmt(result.attempt.readUnits)} RRU, ${fmt(result.attempt.writeUnits)} WRU, ${result.attempt.ms.toFixed(0)} ms |`,
    "",
    `Modelled AWS cost per million delivered messages (${PRICES.region} list prices as of ${PRICES.asOf}; one endpoint, first attempt succeeds): ` +
      `DynamoDB $${fmt(dynamo)} (the attempt's transaction billed at ${attemptWrites} WRU), SQS $${fmt(sqs)} (${SQS_REQUESTS_PER_MESSAGE} requests each at $${SQS_PER_MILLION_REQUESTS}/M), ` +
      `Lambda $${fmt(functions)} (one stream-processor and one delivery invocation per message at ${DELIVERY_MEMORY_MB} MB and the durations above): **$${fmt(total)}**. ` +
      "Each retry adds one attempt's DynamoDB, Lambda and an SQS visibility change; batches (several markers per stream batch, ten messages per SQS call) make it cheaper under load.",
    "",
  ].join("\n");
}

async function main(): Promise<void> {
  const result = await withFreshDynamoLocal(
    async () => {
      const { startApiServer } = await import("../local/server.js");
      const api = await startApiServer(0);
      try {
        return await benchWebhooks(`${api.url}/api/v3`, {
          writes: Number.parseInt(process.env.WRITES ?? "100", 10),
          ratePerSecond: Number(process.env.RATE ?? "10"),
        });
      } finally {
        api.server.closeAllConnections();
        api.server.close();
      }
    },
    { RATE_LIMIT_PER_MINUTE: "1000000" },
  );
  console.log(webhookReport(result));
  const failures = webhookBudgetFailures(result);
  if (process.argv.includes("--check") && failures.length > 0) {
    for (const failure of failures) console.error(`over budget: ${failure}`);
    process.exit(1);
  }
}

runWhenInvoked(import.meta.url, main);
