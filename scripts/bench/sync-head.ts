import { fork, type ChildProcess } from "node:child_process";
import { randomUUID } from "node:crypto";
import { fileURLToPath } from "node:url";
import { dirname, join } from "node:path";
import { withFreshDynamoLocal } from "./fresh-dynamo.js";
import { percentile } from "./percentile.js";
import { runWhenInvoked } from "./run-when-invoked.js";

/**
 * `npm run bench:sync-head [-- --check]` (also part of `npm run bench`): how many changes per
 * second one account's change feed takes (issue 22). Every marker write of an account goes
 * through ONE head item (`writeMarkers` in lib/db/sync.ts: read the head and the records'
 * pointers, then one TransactWriteItems per up to 25 changes, conditioned on the head's
 * sequence; a lost race reads again and retries, taking turns across processes), so the
 * account's feed has a ceiling whatever the table's capacity.
 *
 * Each writer is its own process, as each stream shard's batches run in their own Lambda
 * container (the in-process writer queue of `retrying` spares nothing between them). For each
 * number of changes per `writeMarkers` call (`SYNC_HEAD_PER_CALL`, default `1,5,25,100`; the
 * stream processor calls it once per account per batch of up to 100 records),
 * `SYNC_HEAD_CHANGES` (default 500)
 * new records (resource `item`, `upsert`) are written by 1, 2 and 4 writers on ONE account, and
 * by 4 writers on 4 accounts (one each) for contrast. Per run: changes per second, calls,
 * transactions sent, conflicts (head moved under a writer), and p50 / p99 per call.
 * `--check` fails only when a run is wrong (a writer failed, or the head's sequence or the
 * markers are not exactly one per change), never on speed. `SYNC_HEAD_TIME_LIMIT_S` (default
 * 900) bounds the whole run. Figures of DynamoDB Local on one machine (docs/operations.md has
 * what they mean in AWS).
 */

/** One run: `writers` processes, each writing its share of `changes` in calls of `perCall`. */
export interface SyncHeadRow {
  /** Writers on one account, or each on its own account. */
  accounts: "one" | "one each";
  writers: number;
  perCall: number;
  changes: number;
  ms: number;
  changesPerSecond: number;
  calls: number;
  /** TransactWriteItems sent (a cancelled one included). */
  transactions: number;
  /** Attempts that found the head moved (a stale read or a cancelled transaction) and read again. */
  conflicts: number;
  p50Ms: number;
  p99Ms: number;
  /** What the sanity check found wrong (empty when every change became exactly one marker). */
  problems: string[];
}

export interface SyncHeadBench {
  changes: number;
  rows: SyncHeadRow[];
}

/** Writers of the widest run (one process each). */
const MAX_WRITERS = 4;
const SCRIPT = fileURLToPath(import.meta.url);
const REPOSITORY = join(dirname(SCRIPT), "..", "..");

/** A writer's job: `count` changes of new records `${prefix}-<n>` on `accountId`, `perCall` per call. */
interface Job {
  id: number;
  accountId: string;
  prefix: string;
  count: number;
  perCall: number;
}

interface JobResult {
  callMs: number[];
  transactions: number;
  conflicts: number;
  markers: number;
}

type WriterMessage = { ready: true } | { id: number; result: JobResult } | { id: number; error: string };

/** The writer process (`--writer`): runs jobs sent over IPC, one at a time, as a shard's container does. */
async function writerMain(): Promise<void> {
  // The parent going away (done, timed out, crashed) ends the writer too.
  process.on("disconnect", () => process.exit(0));
  const { writeMarkers } = await import("../../lib/db/sync.js");
  const run = async (job: Omit<Job, "id">): Promise<JobResult> => {
    const result: JobResult = { callMs: [], transactions: 0, conflicts: 0, markers: 0 };
    for (let start = 0; start < job.count; start += job.perCall) {
      const changes = Array.from({ length: Math.min(job.perCall, job.count - start) }, (_, i) => ({
        accountId: job.accountId,
        resource: "item" as const,
        recordId: `${job.prefix}-${start + i}`,
        operation: "upsert" as const,
      }));
      const began = performance.now();
      const stats = await writeMarkers(job.accountId, changes);
      result.callMs.push(performance.now() - began);
      result.transactions += stats.transactions;
      result.conflicts += stats.conflicts;
      result.markers += stats.markers;
    }
    return result;
  };
  process.on("message", (job: Job) => {
    run(job).then(
      (result) => process.send?.({ id: job.id, result } satisfies WriterMessage),
      (error: unknown) => process.send?.({ id: job.id, error: (error as Error)?.stack ?? String(error) } satisfies WriterMessage),
    );
  });
  // Warm up (modules loaded, connections open) on an account of its own, then say so.
  await run({ accountId: randomUUID(), prefix: "warm-up", count: 30, perCall: 10 });
  process.send?.({ ready: true } satisfies WriterMessage);
}

interface Writer {
  child: ChildProcess;
  run(job: Omit<Job, "id">): Promise<JobResult>;
}

/** Forks a writer process (noted in `children` at once, to stop it whatever happens); resolves once it has warmed up. */
function startWriter(children: Set<ChildProcess>): Promise<Writer> {
  return new Promise((resolve, reject) => {
    const child = fork(SCRIPT, ["--writer"], {
      cwd: REPOSITORY,
      execArgv: ["--import", "tsx"],
      env: { ...process.env, LOG_LEVEL: "ERROR" },
      stdio: ["ignore", "inherit", "inherit", "ipc"],
    });
    children.add(child);
    const pending = new Map<number, { resolve: (result: JobResult) => void; reject: (error: Error) => void }>();
    let nextId = 1;
    let ready = false;
    child.on("message", (message: WriterMessage) => {
      if ("ready" in message) {
        ready = true;
        resolve({
          child,
          run: (job) =>
            new Promise<JobResult>((done, fail) => {
              const id = nextId++;
              pending.set(id, { resolve: done, reject: fail });
              child.send({ ...job, id } satisfies Job);
            }),
        });
        return;
      }
      const waiting = pending.get(message.id);
      pending.delete(message.id);
      if ("error" in message) waiting?.reject(new Error(`sync-head writer ${child.pid}: ${message.error}`));
      else waiting?.resolve(message.result);
    });
    child.on("exit", (code, signal) => {
      const reason = new Error(`sync-head writer ${child.pid} exited (${signal ?? `code ${code}`})`);
      for (const waiting of pending.values()) waiting.reject(reason);
      pending.clear();
      if (!ready) reject(reason);
    });
  });
}

async function stopWriter(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  await new Promise<void>((resolve) => {
    child.once("exit", () => resolve());
    child.kill("SIGTERM");
  });
}

/**
 * What is wrong with an account's feed after `expected` new records were written to it: its
 * head must stand at `expected` and its markers must be 1..`expected`, each record once.
 */
async function feedProblems(accountId: string, expected: ReadonlySet<string>, label: string): Promise<string[]> {
  const { readHead, queryMarkers } = await import("../../lib/db/sync.js");
  const problems: string[] = [];
  const head = await readHead(accountId);
  if (head.seq !== expected.size) problems.push(`${label}: head at ${head.seq}, ${expected.size} changes written`);
  const seen = new Map<string, number>();
  let after = 0;
  let next = 1;
  for (;;) {
    const page = await queryMarkers(accountId, after, head.seq, 1000);
    if (page.length === 0) break;
    for (const marker of page) {
      if (marker.seq !== next) problems.push(`${label}: marker ${marker.seq} where ${next} was due`);
      next = marker.seq + 1;
      seen.set(marker.recordId, (seen.get(marker.recordId) ?? 0) + 1);
    }
    after = page[page.length - 1]!.seq;
  }
  const twice = [...seen].filter(([, n]) => n > 1).length;
  const missing = [...expected].filter((id) => !seen.has(id)).length;
  const stray = [...seen.keys()].filter((id) => !expected.has(id)).length;
  if (twice > 0) problems.push(`${label}: ${twice} records have more than one marker`);
  if (missing > 0) problems.push(`${label}: ${missing} records have no marker`);
  if (stray > 0) problems.push(`${label}: ${stray} markers of records never written`);
  return problems;
}

/** One run: `writers` writers (the first `writers` of `pool`), on one account or one account each. */
async function runOnce(pool: readonly Writer[], writers: number, perCall: number, changes: number, accounts: SyncHeadRow["accounts"]): Promise<SyncHeadRow> {
  const shared = randomUUID();
  const jobs = Array.from({ length: writers }, (_, w) => {
    const count = Math.floor(changes / writers) + (w < changes % writers ? 1 : 0);
    return { accountId: accounts === "one" ? shared : randomUUID(), prefix: `w${w}-${randomUUID().slice(0, 8)}`, count, perCall };
  });
  const began = performance.now();
  const settled = await Promise.allSettled(jobs.map((job, w) => pool[w]!.run(job)));
  const ms = performance.now() - began;
  const results = settled.flatMap((s) => (s.status === "fulfilled" ? [s.value] : []));
  const problems = settled.flatMap((s) => (s.status === "rejected" ? [String((s.reason as Error)?.message ?? s.reason).split("\n")[0]!] : []));
  const label = `${writers} writer(s), ${accounts === "one" ? "one account" : "one account each"}, ${perCall} per call`;
  if (problems.length === 0) {
    const markers = results.reduce((sum, r) => sum + r.markers, 0);
    if (markers !== changes) problems.push(`${label}: writeMarkers reported ${markers} markers for ${changes} changes`);
    const byAccount = new Map<string, Set<string>>();
    for (const job of jobs) {
      const ids = byAccount.get(job.accountId) ?? new Set<string>();
      for (let i = 0; i < job.count; i++) ids.add(`${job.prefix}-${i}`);
      byAccount.set(job.accountId, ids);
    }
    for (const [accountId, ids] of byAccount) problems.push(...(await feedProblems(accountId, ids, label)));
  } else problems.unshift(`${label}: a writer failed`);
  const callMs = results.flatMap((r) => r.callMs);
  return {
    accounts,
    writers,
    perCall,
    changes,
    ms,
    changesPerSecond: (changes * 1000) / ms,
    calls: callMs.length,
    transactions: results.reduce((sum, r) => sum + r.transactions, 0),
    conflicts: results.reduce((sum, r) => sum + r.conflicts, 0),
    p50Ms: percentile(callMs, 50),
    p99Ms: percentile(callMs, 99),
    problems,
  };
}

/**
 * Runs every measurement against the DynamoDB Local at `DYNAMODB_ENDPOINT` (set up by the
 * caller: `applyLocalEnvironment`, table created). Gives up with a message after `timeLimitMs`.
 */
export async function benchSyncHead(options: { changes?: number; perCall?: readonly number[]; timeLimitMs?: number } = {}): Promise<SyncHeadBench> {
  const changes = options.changes ?? Number.parseInt(process.env.SYNC_HEAD_CHANGES ?? "500", 10);
  const perCalls = options.perCall ?? (process.env.SYNC_HEAD_PER_CALL ?? "1,5,25,100").split(",").map((n) => Number.parseInt(n, 10));
  const timeLimitMs = options.timeLimitMs ?? Number(process.env.SYNC_HEAD_TIME_LIMIT_S ?? "900") * 1000;
  if (!Number.isInteger(changes) || changes < MAX_WRITERS)
    throw new Error(`SYNC_HEAD_CHANGES must be a whole number of at least ${MAX_WRITERS}, not ${changes}.`);
  if (perCalls.some((n) => !Number.isInteger(n) || n < 1))
    throw new Error(`SYNC_HEAD_PER_CALL must be whole numbers of at least 1, not ${perCalls.join(",")}.`);
  const children = new Set<ChildProcess>();
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () =>
        reject(
          new Error(
            `bench:sync-head timed out after ${timeLimitMs / 1000} s (SYNC_HEAD_TIME_LIMIT_S); DynamoDB Local or a writer is stuck, or the machine is too busy.`,
          ),
        ),
      timeLimitMs,
    );
  });
  const measure = async (): Promise<SyncHeadRow[]> => {
    const started = await Promise.allSettled(Array.from({ length: MAX_WRITERS }, () => startWriter(children)));
    const pool = started.flatMap((s) => (s.status === "fulfilled" ? [s.value] : []));
    const failed = started.find((s) => s.status === "rejected");
    if (failed) throw (failed as PromiseRejectedResult).reason;
    const rows: SyncHeadRow[] = [];
    for (const perCall of perCalls) {
      for (const writers of [1, 2, MAX_WRITERS]) rows.push(await runOnce(pool, writers, perCall, changes, "one"));
      rows.push(await runOnce(pool, MAX_WRITERS, perCall, changes, "one each"));
    }
    return rows;
  };
  try {
    return { changes, rows: await Promise.race([measure(), timedOut]) };
  } finally {
    clearTimeout(timer);
    await Promise.all([...children].map(stopWriter));
  }
}

/** The sanity failures (`--check`): runs where a writer failed or a change did not become exactly one marker. */
export function syncHeadFailures(result: SyncHeadBench): string[] {
  return result.rows.flatMap((row) => row.problems.map((problem) => `sync head: ${problem}`));
}

/** A markdown table of a run. */
export function syncHeadReport(result: SyncHeadBench): string {
  return [
    `Change feed head of one account (scripts/bench/sync-head.ts): ${result.changes} new records per run, written by writer processes (one per stream shard) with writeMarkers, DynamoDB Local`,
    "| accounts | writers | changes per call | changes/s | s | calls | transactions | conflicts | p50 ms per call | p99 ms per call | check |",
    "|---|---|---|---|---|---|---|---|---|---|---|",
    ...result.rows.map(
      (row) =>
        `| ${row.accounts} | ${row.writers} | ${row.perCall} | ${row.changesPerSecond.toFixed(0)} | ${(row.ms / 1000).toFixed(1)} | ${row.calls} | ${row.transactions} | ${row.conflicts} | ${row.p50Ms.toFixed(1)} | ${row.p99Ms.toFixed(1)} | ${row.problems.length === 0 ? "ok" : "FAILED"} |`,
    ),
    "",
  ].join("\n");
}

async function main(): Promise<void> {
  const result = await withFreshDynamoLocal(() => benchSyncHead());
  console.log(syncHeadReport(result));
  console.log(
    JSON.stringify(
      {
        changes: result.changes,
        rows: result.rows.map((row) => ({
          ...row,
          ms: Math.round(row.ms),
          changesPerSecond: Math.round(row.changesPerSecond),
          p50Ms: Number(row.p50Ms.toFixed(1)),
          p99Ms: Number(row.p99Ms.toFixed(1)),
        })),
      },
      null,
      2,
    ),
  );
  const failures = syncHeadFailures(result);
  for (const failure of failures) console.error(failure);
  if (process.argv.includes("--check") && failures.length > 0) process.exit(1);
}

// A writer process stays after its set-up, serving its parent's calls.
const writer = process.argv.includes("--writer");
runWhenInvoked(import.meta.url, writer ? writerMain : main, !writer);
