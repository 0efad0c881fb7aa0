import { ContentionError } from "../core/errors.js";
import { isConditionalFailure } from "./idempotency.js";
import { db } from "./service.js";

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
 *   more while it holds some (no two writers wait on each other).
 */

/** How long a served ticket may go unreleased before a waiter moves the queue on. */
export const TURN_LEASE_MS = 5_000;
/** A first guess of one turn's duration (a read and a transaction), for spacing the polls. */
const TURN_ESTIMATE_MS = 20;
const MIN_POLL_MS = 5;
/** Far back in the queue a waiter polls rarely: polls cost the other writers capacity (and CPU). */
const MAX_POLL_MS = 500;
/** A turn estimate above this is the queue's writers being slow, not its length: poll on. */
const MAX_TURN_ESTIMATE_MS = 60;

/** The account of a contended name (`<kind>:<accountId>[:<id>]`): turns live in its keys. */
const NAME = /^[A-Za-z_]+:([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})(:.*)?$/;

interface Ticket {
  accountId: string;
  name: string;
  number: number;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function takeTicket(accountId: string, name: string): Promise<{ ticket: Ticket; serving: number }> {
  const expiresAt = Math.floor(Date.now() / 1000) + 86_400;
  const { data } = await db().entities.turn.update({ accountId, name }).add({ next: 1 }).set({ expiresAt }).go({ response: "all_new" });
  return { ticket: { accountId, name, number: (data.next ?? 1) - 1 }, serving: data.serving ?? 0 };
}

async function readServing(accountId: string, name: string): Promise<{ serving: number; handoff?: unknown }> {
  const { data } = await db().entities.turn.get({ accountId, name }).go({ consistent: true, attributes: ["serving", "handoff"] });
  return { serving: data?.serving ?? 0, handoff: data?.handoff };
}

/**
 * Moves the queue from ticket `from` to the next one, handing on `handoff` (or none); false
 * when it had moved already.
 */
async function serveNext(accountId: string, name: string, from: number, handoff?: unknown): Promise<boolean> {
  try {
    let update = db()
      .entities.turn.update({ accountId, name })
      .set({ serving: from + 1, ...(handoff === undefined ? {} : { handoff }) });
    if (handoff === undefined) update = update.remove(["handoff"]) as never;
    await update
      .where((attributes, { eq, notExists }) => (from === 0 ? `(${notExists(attributes.serving)} OR ${eq(attributes.serving, 0)})` : eq(attributes.serving, from)))
      .go({ response: "none" });
    return true;
  } catch (error) {
    if (isConditionalFailure(error)) return false;
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
    // Next in line: poll often (a turn ends any moment). Further back: wake about when the turn
    // before ours should start, rarely far back (polls cost the writers capacity and CPU).
    const delay = ahead === 1 ? MIN_POLL_MS : Math.min(MAX_POLL_MS, Math.max(MIN_POLL_MS, (ahead - 1) * Math.min(perTurn, MAX_TURN_ESTIMATE_MS) * 0.5)) * (0.9 + Math.random() * 0.2);
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
  handOn(name: string, value: unknown): void;
  release(): Promise<void>;
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
  const release = async () => {
    await Promise.all(held.map((ticket) => serveNext(ticket.accountId, ticket.name, ticket.number, handed.get(ticket.name)).catch(() => false)));
  };
  try {
    for (const name of [...new Set(names)].sort()) {
      const accountId = NAME.exec(name)?.[1];
      if (!accountId) continue;
      const { ticket, serving } = await takeTicket(accountId, name);
      held.push(ticket);
      const handoff = await waitForTurn(ticket, serving, deadline, operation, options.leaseMs ?? TURN_LEASE_MS);
      if (handoff !== undefined) received.set(name, handoff);
    }
  } catch (error) {
    // Tickets taken and not yet served stay behind: the lease moves the queue past them.
    await release();
    throw error;
  }
  return { received, handOn: (name, value) => handed.set(name, value), release };
}
