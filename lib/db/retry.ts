import { AsyncLocalStorage } from "node:async_hooks";
import { ContentionError } from "../core/errors.js";
import { StalePlanError } from "../core/failures.js";
import { currentDbUsage } from "./metrics.js";
import type { TransactionBuilder } from "./transactions.js";
import { takeTurns, type HeldTurns } from "./turns.js";

/**
 * THE retry policy of every optimistic write (sequences, conditioned updates, the ledger, the
 * sync head, transaction conflicts): jittered exponential backoff ("full jitter": a random
 * delay up to `min(capMs, baseMs * 2^attempt)`) over a bounded number of attempts. When the
 * attempts run out the write gives up with `ContentionError`, which the API answers with
 * 503 `resource_busy` and `Retry-After` (the request changed nothing, so a retry is safe).
 */
export interface RetryPolicy {
  /** Attempts in all, the first included. */
  attempts: number;
  baseMs: number;
  capMs: number;
}

/** Read-modify-write loops: many writers may race for one record or one sequence. */
export const CONTENTION_POLICY: RetryPolicy = { attempts: 60, baseMs: 10, capMs: 4000 };

/** A transaction that DynamoDB cancelled for a concurrent transaction on the same items. */
export const CONFLICT_POLICY: RetryPolicy = { attempts: 8, baseMs: 10, capMs: 200 };

/** Returned by an attempt that lost a race and must run again. */
export const RETRY: unique symbol = Symbol("retry");
export type Attempt<T> = T | typeof RETRY;

/** The pause before attempt `attempt` (1-based retries; 0 for the first attempt). */
export function backoffDelay(attempt: number, policy: RetryPolicy, random: () => number = Math.random): number {
  if (attempt <= 0) return 0;
  return random() * Math.min(policy.capMs, policy.baseMs * 2 ** attempt);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Runs `attempt` until it returns something other than `RETRY`, pausing between attempts.
 * `operation` names the write in the `ContentionError` (and so in the request's log line). Inside
 * an API request it also stops before the request's deadline (`DbUsage.deadline`).
 *
 * `contended` names what the attempt races for (a record, a sequence's counter item). Attempts
 * of one process on the same names run one at a time: a process serving many requests (the
 * local stack, a container) then queues its own writers instead of letting them collide in
 * DynamoDB, where every lost race costs a transaction. Between processes (Lambda runs one
 * request per container) a writer that lost a race takes its turns (`lib/db/turns.ts`): it
 * waits in line for the record or sequence instead of resending its transaction after a
 * backoff, and its next attempt (`afterWait`) knows that what it learnt before is stale. The
 * write's own conditions decide correctness either way.
 */
/** What an attempt may want to know of the ones before it. */
export interface AttemptContext {
  /** This attempt is the first after waiting for turns: what earlier attempts learnt is stale. */
  afterWait: boolean;
  /** After waiting: what the previous holder of the turn on `name` handed on (a hint), if anything. */
  received(name: string): unknown;
  /** Hands `value` on to the next holder of the turn on `name` (when this writer holds one). */
  handOn(name: string, value: unknown): void;
  /**
   * Hands `value` on and serves the next holder of the turn on `name` inside `tx` (when this
   * writer holds one), so the next writer's turn starts when `tx` commits; then `servedWithin`.
   */
  serveNextWithin(tx: TransactionBuilder, name: string, value: unknown): void;
  /** `serveNextWithin` for every turn this writer holds: the write that ends its turns. */
  serveAllWithin(tx: TransactionBuilder): void;
  /** The `tx` given to `serveNextWithin` / `serveAllWithin` committed. */
  servedWithin(): void;
}

export async function retrying<T>(
  operation: string,
  attempt: (attemptNumber: number, context: AttemptContext) => Promise<Attempt<T>>,
  policy: RetryPolicy = CONTENTION_POLICY,
  contended: readonly string[] = [],
  options: {
    /**
     * The names whose turns a writer takes across processes (default: all of `contended`): a
     * writer of several names whose writers all share one of them (every kit build claims the
     * account's build number) queues on that one alone, one ticket and one served item a turn.
     */
    queueOn?: readonly string[];
  } = {},
): Promise<T> {
  const queueOn = options.queueOn ?? contended;
  const deadline = currentDbUsage()?.deadline;
  // Turns across processes (lib/db/turns.ts), taken after a lost race: from then on this writer
  // waits in line instead of colliding, and a lost race means one that barged in (short pause).
  let turns: HeldTurns | undefined;
  let afterWait = false;
  try {
    // A name this process saw contended a moment ago is most likely contended still: queue at
    // once rather than spend a transaction (the costliest call) on a race a queue already wins.
    // Writers of several names too, now that their other turns mostly come in one round
    // (`takeTurns`): 100 kit builds through 8 processes measured p99 11.7 s queued first against
    // 13.7 s not (means of three cold runs each; before that round, queueing first lost). Not
    // while another writer of this process is in its line for a name (`oneAtATime`): it is the
    // cheaper line in a process serving many writers (the one-process local stack). Taken
    // before this process's own line, as after a lost race: a writer never waits for a turn
    // while it holds its place in the process's line, so the two lines cannot wait on each other.
    if (queueOn.length > 0 && !holdingTurns.getStore() && !contended.some((name) => tails.has(name)) && recentlyContended(queueOn)) {
      turns = await takeTurns(queueOn, deadline, operation);
      afterWait = true;
    }
    for (let n = 0; n < policy.attempts; n++) {
      if (n > 0 && !afterWait) {
        const delay = turns ? backoffDelay(1, IN_TURN_POLICY) : backoffDelay(n, policy);
        // Never outlive the request: give up (nothing was written) while there is time to say so.
        if (deadline !== undefined && Date.now() + delay > deadline) throw new ContentionError(operation, n);
        await sleep(delay);
      }
      const held = turns;
      const fresh = afterWait;
      const context: AttemptContext = {
        afterWait,
        received: (name) => (fresh ? held?.received.get(name) : undefined),
        handOn: (name, value) => held?.handOn(name, value),
        serveNextWithin: (tx, name, value) => held?.serveNextWithin(tx, name, value),
        serveAllWithin: (tx) => held?.serveAllWithin(tx),
        servedWithin: () => held?.servedWithin(),
      };
      afterWait = false;
      // A plan made from a document that changed meanwhile is a lost race too: plan again.
      const guarded = () => attempt(n, context).catch((error: unknown) => (error instanceof StalePlanError ? RETRY : Promise.reject(error)));
      const run = () => (turns ? holdingTurns.run(true, guarded) : guarded());
      const result =
        contended.length === 0
          ? await run()
          : await oneAtATime(contended, () => {
              if (deadline !== undefined && Date.now() > deadline) throw new ContentionError(operation, n);
              return run();
            });
      if (result !== RETRY) return result as T;
      if (queueOn.length > 0 && !turns && !holdingTurns.getStore()) {
        noteContended(queueOn);
        turns = await takeTurns(queueOn, deadline, operation);
        afterWait = true;
      }
    }
    throw new ContentionError(operation, policy.attempts);
  } finally {
    // Others were in line before or behind this writer: the next writer of these names queues too.
    const behind = turns ? await turns.release() : false;
    if (turns?.waited || behind) noteContended(queueOn);
  }
}

/**
 * How long a lost race (or a wait in line) on a name makes this process's next writers of it
 * queue before their first attempt. Lambda reuses a warm process for the next request, so the
 * memory outlives the request that learnt it; once the name goes quiet it expires.
 */
export const CONTENTION_MEMORY_MS = 2_000;
const contendedAt = new Map<string, number>();

function noteContended(names: readonly string[]): void {
  const now = Date.now();
  for (const name of names) contendedAt.set(name, now);
  if (contendedAt.size > 1_000) {
    for (const [name, at] of contendedAt) if (now - at > CONTENTION_MEMORY_MS) contendedAt.delete(name);
  }
}

function recentlyContended(names: readonly string[]): boolean {
  const now = Date.now();
  return names.some((name) => now - (contendedAt.get(name) ?? 0) <= CONTENTION_MEMORY_MS);
}

/** A writer holding its turns lost a race only to one that barged in: it tries again at once. */
const IN_TURN_POLICY: RetryPolicy = { attempts: 60, baseMs: 2, capMs: 10 };

/** Set while an attempt runs with turns held: a nested write then takes no turns of its own. */
const holdingTurns = new AsyncLocalStorage<true>();

const tails = new Map<string, Promise<void>>();

/** Waits for the previous holder of `name` in this process (FIFO); resolves to the release. */
function acquire(name: string): Promise<() => void> {
  const previous = tails.get(name) ?? Promise.resolve();
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  const tail = previous.then(() => held);
  tails.set(name, tail);
  return previous.then(() => () => {
    release();
    if (tails.get(name) === tail) tails.delete(name);
  });
}

const holding = new AsyncLocalStorage<true>();

/**
 * Runs `fn` holding every name, taken at once in sorted order. A holder never takes more names
 * later: a nested call runs without queueing (the names only spare DynamoDB lost races;
 * correctness rests on the write's conditions), so two holders can never wait on each other.
 */
export async function oneAtATime<T>(names: readonly string[], fn: () => Promise<T>): Promise<T> {
  if (holding.getStore()) return fn();
  const releases: (() => void)[] = [];
  try {
    for (const name of [...new Set(names)].sort()) releases.push(await acquire(name));
    return await holding.run(true, fn);
  } finally {
    for (const release of releases.reverse()) release();
  }
}
