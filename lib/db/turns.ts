import { ContentionError } from "../core/errors.js";
import { isConditionalFailure, isDynamoError } from "./dynamo-errors.js";
import { db } from "./service.js";
import type { TransactionBuilder } from "./transactions.js";

/**
 * Turns across processes: the writers of one contended record or sequence take turns instead of
 * colliding (issue 19; README, "Contention"). Lambda runs one request per process, so the
 * in-process queue of `retrying` spares nothing there: 100 simultaneous invoice creates of one
 * account would each resend their whole transaction after every lost race. A writer that lost a
 * race takes a ticket instead (one UpdateItem), waits until its ticket is served (consistent
 * GetItems, spaced by its place in the queue), writes, and serves the next ticket (one
 * UpdateItem). The queue is a FIFO ticket lock per name (`turn` entity):
 *
 * - correctness never rests on it: every write keeps its own conditions, so a writer that
 *   barges in (a first attempt takes no ticket) or a turn taken over is only a lost race;
 * - a turn not served on within `TURN_LEASE_MS` (its holder died, or gave up waiting at its
 *   deadline) is taken over by a waiter: the queue never stalls for longer than the lease;
 * - a writer holds turns for every name it races for, taken in sorted order, and never takes
 *   more while it holds some (no two writers wait on each other);
 * - the write a turn was taken for serves the next ticket itself, inside its own transaction
 *   (`serveNextWithin`): the next writer's turn starts the moment it commits, without waiting
 *   for a separate release call. A cancelled write leaves that to `release`.
 *
 * `retrying` takes turns after a lost race, and before the first attempt when the process saw
 * the name contended a moment ago (`CONTENTION_MEMORY_MS`): during a burst, no writer spends a
 * transaction on a race the queue already decides.
 */

/** How long a served ticket may go unreleased before a waiter moves the queue on. */
export const TURN_LEASE_MS = 5_000;
/** A first guess of one turn's duration (a read and a transaction), for spacing the polls. */
const TURN_ESTIMATE_MS = 20;
const MIN_POLL_MS = 10;
/** Far back in the queue a waiter polls rarely: polls cost the other writers capacity (and CPU). */
const MAX_POLL_MS = 500;
/** A turn estimate above this is the queue's writers being slow, not its length: poll on. */
const MAX_TURN_ESTIMATE_MS = 100;

/** The account of a contended name (`<kind>:<accountId>[:<id>]`): turns live in its keys. */
const NAME = /^[A-Za-z_]+:([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})(:.*)?$/;

interface Ticket {
  accountId: string;
  name: string;
  number: number;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Runs a single-item write of a turn item, again (after a short pause) while a holder's own
 * transaction is serving the next ticket on it (`serveNextWithin`): that conflict lasts one
 * transaction. Not `retrying`: this loop is the queue's own, beneath it.
 */
async function outsideTransactions<T>(write: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await write();
    } catch (error) {
      if (!isDynamoError(error, "TransactionConflictException")) throw error;
      if (attempt >= 20) throw new ContentionError("turn queue", attempt);
      await sleep(Math.random() * Math.min(100, 5 * 2 ** attempt));
    }
  }
}

/** The UpdateItem that takes the next ticket of `name` (the turn item lives a day past its last use). */
const ticketUpdate = (accountId: string, name: string) =>
  db()
    .entities.turn.update({ accountId, name })
    .add({ next: 1 })
    .set({ expiresAt: Math.floor(Date.now() / 1000) + 86_400 });

/** The ticket an UpdateItem of `ticketUpdate` took (its `next` before the increment). */
const ticketOf = (accountId: string, name: string, next: number | undefined): Ticket => ({ accountId, name, number: (next ?? 1) - 1 });

async function takeTicket(accountId: string, name: string): Promise<{ ticket: Ticket; serving: number }> {
  const { data } = await outsideTransactions(() => ticketUpdate(accountId, name).go({ response: "all_new" }));
  return { ticket: ticketOf(accountId, name, data.next), serving: data.serving ?? 0 };
}

/**
 * Takes a ticket on each of `names` at once when every one of their queues is free (nobody
 * served, nobody waiting): one parallel round of conditional UpdateItems instead of one ticket
 * after another. All or none: when some queue is taken, the tickets this got are served on at
 * once (as if released) and the caller takes its turns one by one, in order. It never waits
 * holding a turn out of order, so no two writers can wait on each other.
 */
async function takeFreeTickets(accountId: string, names: readonly string[]): Promise<Ticket[] | undefined> {
  const taken = await Promise.allSettled(
    names.map(async (name) => {
      try {
        const { data } = await outsideTransactions(() =>
          ticketUpdate(accountId, name)
            .where((attributes, { notExists, name: nameOf }) => `${notExists(attributes.next)} OR ${nameOf(attributes.next)} = ${nameOf(attributes.serving)}`)
            .go({ response: "all_new" }),
        );
        return { ticket: ticketOf(accountId, name, data.next), handoff: data.handoff as unknown };
      } catch (error) {
        if (isConditionalFailure(error)) return undefined;
        throw error;
      }
    }),
  );
  const got = taken.flatMap((outcome) => (outcome.status === "fulfilled" && outcome.value ? [outcome.value] : []));
  if (got.length === names.length) return got.map(({ ticket }) => ticket);
  // Give back what this got, with what the holder before left on it (the next holder's hint).
  await Promise.all(got.map(({ ticket, handoff }) => serveNext(accountId, ticket.name, ticket.number, handoff).catch(() => undefined)));
  const failure = taken.find((outcome) => outcome.status === "rejected");
  if (failure) throw failure.reason;
  return undefined;
}

async function readServing(accountId: string, name: string): Promise<{ serving: number; handoff?: unknown }> {
  const { data } = await db()
    .entities.turn.get({ accountId, name })
    .go({ consistent: true, attributes: ["serving", "handoff"] });
  return { serving: data?.serving ?? 0, handoff: data?.handoff };
}

/**
 * Moves the queue from ticket `from` to the next one, handing on `handoff` (or none); false
 * when it had moved already.
 */
async function serveNext(accountId: string, name: string, from: number, handoff?: unknown): Promise<{ moved: boolean; behind: boolean }> {
  try {
    let update = db()
      .entities.turn.update({ accountId, name })
      .set({ serving: from + 1, ...(handoff === undefined ? {} : { handoff }) });
    if (handoff === undefined) update = update.remove(["handoff"]) as never;
    const { data } = await outsideTransactions(() =>
      update
        .where((attributes, { eq, notExists }) =>
          from === 0 ? `(${notExists(attributes.serving)} OR ${eq(attributes.serving, 0)})` : eq(attributes.serving, from),
        )
        .go({ response: "all_new" }),
    );
    return { moved: true, behind: (data?.next ?? 0) > from + 1 };
  } catch (error) {
    if (isConditionalFailure(error)) return { moved: false, behind: false };
    throw error;
  }
}

/**
 * Waits until `ticket` is served (or passed over); gives up before `deadline`. Returns what
 * the holder before handed on, when it served this ticket itself.
 */
async function waitForTurn(ticket: Ticket, serving: number, deadline: number | undefined, operation: string, leaseMs: number): Promise<unknown> {
  let handoff: unknown;
  let seen = serving;
  let seenSince = Date.now();
  let perTurn = TURN_ESTIMATE_MS;
  while (seen < ticket.number) {
    const ahead = ticket.number - seen;
    // Further back: wake about halfway to when the turn before ours should start (turns may be
    // quicker than learnt), rarely far back. Next in line: not before the turn being served is
    // about half done, then every `MIN_POLL_MS`. Every poll is a read the writers in turn pay
    // for (in DynamoDB Local, CPU they share): polling the moment a turn might end slows them.
    const turn = Math.min(perTurn, MAX_TURN_ESTIMATE_MS);
    const wait = ahead === 1 ? turn * 0.5 - (Date.now() - seenSince) : (ahead - 1) * turn * 0.5;
    const delay = Math.min(MAX_POLL_MS, Math.max(MIN_POLL_MS, wait)) * (0.9 + Math.random() * 0.2);
    if (deadline !== undefined && Date.now() + delay > deadline) throw new ContentionError(`${operation} (waiting for its turn)`, 1);
    await sleep(delay);
    const now = Date.now();
    const read = await readServing(ticket.accountId, ticket.name);
    const current = read.serving;
    handoff = current === ticket.number ? read.handoff : undefined;
    if (current !== seen) {
      // Learn how long a turn takes here, to space the next polls.
      perTurn = Math.max(1, (now - seenSince) / Math.max(1, current - seen));
      seen = current;
      seenSince = now;
    } else if (now - seenSince > leaseMs) {
      // The served ticket's holder is gone (crashed, or gave up waiting): move the queue on.
      await serveNext(ticket.accountId, ticket.name, seen);
      seenSince = now;
    }
  }
  return handoff;
}

/**
 * Turns held by one writer: what the previous holders handed on (by name), and `release`,
 * which serves the next ticket of each, handing on what the writer left (`handOn`).
 */
export interface HeldTurns {
  readonly received: ReadonlyMap<string, unknown>;
  /** Some turn was not this writer's at once: others were in line (the names are contended). */
  readonly waited: boolean;
  handOn(name: string, value: unknown): void;
  /**
   * Serves the next ticket of `name` inside `tx`, the write the turn was taken for, handing on
   * `value`: the next writer sees its turn the moment this write commits, one call and one round
   * trip sooner than `release`. Unconditional, so it can never cancel the write (a turn taken
   * over meanwhile costs at most a lost race). Call `servedWithin` once `tx` committed.
   */
  serveNextWithin(tx: TransactionBuilder, name: string, value?: unknown): void;
  /** `serveNextWithin` for every turn held (handing on what `handOn` left). */
  serveAllWithin(tx: TransactionBuilder): void;
  /** The `tx` given to `serveNextWithin` / `serveAllWithin` committed: `release` leaves those queues alone. */
  servedWithin(): void;
  /** Serves the next tickets; true when some writer was in line behind this one. */
  release(): Promise<boolean>;
}

/**
 * Takes a turn on every name (sorted; names without an account are not queued across
 * processes) and resolves once each is this writer's. Throws `ContentionError` when the
 * request's deadline would pass first.
 */
export async function takeTurns(
  names: readonly string[],
  deadline: number | undefined,
  operation: string,
  options: { leaseMs?: number } = {},
): Promise<HeldTurns> {
  const held: Ticket[] = [];
  const received = new Map<string, unknown>();
  const handed = new Map<string, unknown>();
  let waited = false;
  const servedInTransaction = new Set<string>();
  const release = async () => {
    const served = await Promise.all(
      held
        .filter((ticket) => !servedInTransaction.has(ticket.name))
        .map((ticket) => serveNext(ticket.accountId, ticket.name, ticket.number, handed.get(ticket.name)).catch(() => ({ moved: false, behind: false }))),
    );
    return served.some((result) => result.behind);
  };
  try {
    const queued = [...new Set(names)].sort().flatMap((name) => {
      const accountId = NAME.exec(name)?.[1];
      return accountId ? [{ accountId, name }] : [];
    });
    let triedFree = false;
    for (const [index, { accountId, name }] of queued.entries()) {
      // Holding the first turn, a writer of several names most often finds the others free (the
      // writers before it served them as they committed): it takes them in one round.
      const rest = queued.slice(index);
      if (index > 0 && !triedFree && rest.length > 1 && rest.every((entry) => entry.accountId === accountId)) {
        triedFree = true;
        const free = await takeFreeTickets(
          accountId,
          rest.map((entry) => entry.name),
        );
        if (free) {
          // Like a ticket served at once (`waitForTurn`), these pass on no hint: with nobody in
          // line, a writer that took no turn may have written since the hint was left.
          held.push(...free);
          break;
        }
      }
      const { ticket, serving } = await takeTicket(accountId, name);
      held.push(ticket);
      if (serving !== ticket.number) waited = true;
      const handoff = await waitForTurn(ticket, serving, deadline, operation, options.leaseMs ?? TURN_LEASE_MS);
      if (handoff !== undefined) received.set(name, handoff);
    }
  } catch (error) {
    // Tickets taken and not yet served stay behind: the lease moves the queue past them.
    await release();
    throw error;
  }
  // Names served inside the latest transaction given; `servedWithin` confirms they committed.
  let servedInLatest = new Set<string>();
  let latest: TransactionBuilder | undefined;
  const serveNextWithin = (tx: TransactionBuilder, name: string, value: unknown = handed.get(name)) => {
    if (tx !== latest) {
      latest = tx;
      servedInLatest = new Set();
    }
    const ticket = held.find((t) => t.name === name);
    if (!ticket || servedInLatest.has(name) || tx.remaining <= 0) return;
    const update = tx.entities.turn.update({ accountId: ticket.accountId, name }).set({ serving: ticket.number + 1 });
    tx.add(`turn:${name}`, (value === undefined ? update.remove(["handoff"]) : update.set({ handoff: value })).commit());
    servedInLatest.add(name);
  };
  return {
    received,
    waited,
    handOn: (name, value) => handed.set(name, value),
    serveNextWithin,
    serveAllWithin: (tx) => {
      for (const ticket of held) serveNextWithin(tx, ticket.name);
    },
    servedWithin: () => {
      for (const name of servedInLatest) servedInTransaction.add(name);
    },
    release,
  };
}
