import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { ContentionError } from "../../lib/core/errors.js";
import { RETRY, retrying } from "../../lib/db/retry.js";
import { takeTurns } from "../../lib/db/turns.js";
import { db } from "../../lib/db/service.js";
import { writeTransaction } from "../../lib/db/transactions.js";
import { waitFor } from "../support/local-stack.js";
import { scaled } from "../support/timeouts.js";

/**
 * Turns across processes (lib/db/turns.ts) against DynamoDB Local: the writers of one name are
 * served one at a time in the order they took their tickets, a turn whose holder never gives it
 * back is taken over after the lease, and a waiter whose deadline comes first gives up with
 * `ContentionError` (503 `resource_busy`) without stalling the queue for longer than the lease.
 */
const nameOf = () => `sequence:${randomUUID()}:invoice`;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("connected: turns", () => {
  it("serves 20 parallel writers of one name one at a time, each exactly once", async () => {
    const name = nameOf();
    let inside = 0;
    let most = 0;
    const served: number[] = [];
    await Promise.all(
      Array.from({ length: 20 }, async (_, i) => {
        const turns = await takeTurns([name], undefined, "test");
        inside++;
        most = Math.max(most, inside);
        served.push(i);
        await sleep(5);
        inside--;
        await turns.release();
      }),
    );
    expect(most).toBe(1);
    expect([...served].sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, i) => i));
  });

  it("hands on what a holder leaves to the next holder only (a hint the next write need not read)", async () => {
    const name = nameOf();
    const accountId = name.split(":")[1]!;
    const first = await takeTurns([name], undefined, "test");
    const second = takeTurns([name], undefined, "test");
    // The second writer waits in line (its ticket taken) before the first hands on and leaves.
    while (((await db().entities.turn.get({ accountId, name }).go({ consistent: true })).data?.next ?? 0) < 2) await sleep(5);
    first.handOn(name, 41);
    await first.release();
    const secondTurns = await second;
    expect(secondTurns.received.get(name)).toBe(41);
    await secondTurns.release(); // hands nothing on
    const third = await takeTurns([name], undefined, "test");
    expect(third.received.has(name)).toBe(false);
    await third.release();
  });

  it("serves the next holder inside the write it waited for; a cancelled write leaves that to release", async () => {
    const name = nameOf();
    const accountId = name.split(":")[1]!;
    const turnItem = async () => (await db().entities.turn.get({ accountId, name }).go({ consistent: true })).data;
    const first = await takeTurns([name], undefined, "test");
    const second = takeTurns([name], undefined, "test");
    while (((await turnItem())?.next ?? 0) < 2) await sleep(5);
    // A cancelled write (its other item's condition fails) serves nobody.
    const other = nameOf();
    const cancelled = await writeTransaction((tx) => {
      tx.add(
        "guard",
        tx.entities.turn
          .update({ accountId, name: other })
          .set({ serving: 0 })
          .where((a, { eq }) => eq(a.serving, 99))
          .commit(),
      );
      first.serveNextWithin(tx, name, 7);
    });
    expect(cancelled?.failed("guard")).toBe(true);
    expect((await turnItem())?.serving ?? 0).toBe(0);
    // The write that commits serves the next ticket and hands on in the same transaction.
    const committed = await writeTransaction((tx) => {
      tx.add("write", tx.entities.turn.update({ accountId, name: other }).set({ serving: 0 }).commit());
      first.serveNextWithin(tx, name, 42);
    });
    expect(committed).toBeNull();
    first.servedWithin();
    const secondTurns = await second;
    expect(secondTurns.received.get(name)).toBe(42);
    // Releasing afterwards leaves the queue where the write put it (the second writer's turn).
    await first.release();
    expect((await turnItem())?.serving).toBe(1);
    await secondTurns.release();
    expect((await turnItem())?.serving).toBe(2);
  });

  it("remembers a contended name: the process's next writer of it queues before its first attempt", async () => {
    const name = nameOf();
    const accountId = name.split(":")[1]!;
    const tickets = async () => (await db().entities.turn.get({ accountId, name }).go({ consistent: true })).data?.next ?? 0;
    // A writer that never lost a race takes no ticket.
    await retrying("test", async () => "done", undefined, [name]);
    expect(await tickets()).toBe(0);
    // One that lost a race queues (one ticket) ...
    await retrying("test", async (attempt) => (attempt === 0 ? RETRY : "done"), undefined, [name]);
    expect(await tickets()).toBe(1);
    // ... and the next writer of that name queues before its first attempt, knowing it waited.
    const seen: { attempt: number; afterWait: boolean; tickets: number }[] = [];
    await retrying(
      "test",
      async (attempt, context) => {
        seen.push({ attempt, afterWait: context.afterWait, tickets: await tickets() });
        return "done";
      },
      undefined,
      [name],
    );
    expect(seen).toEqual([{ attempt: 0, afterWait: true, tickets: 2 }]);
  });

  it("takes a turn over once its holder has not given it back for the lease", async () => {
    const name = nameOf();
    await takeTurns([name], undefined, "test"); // never released: its holder "died"
    const started = Date.now();
    const second = await takeTurns([name], undefined, "test", { leaseMs: 300 });
    expect(Date.now() - started).toBeGreaterThanOrEqual(300);
    await second.release();
    // The queue moves on normally after the takeover.
    const third = await takeTurns([name], undefined, "test", { leaseMs: 300 });
    await third.release();
  });

  it("gives up at the deadline with ContentionError, and the queue moves past the abandoned ticket", async () => {
    const name = nameOf();
    const holder = await takeTurns([name], undefined, "test");
    await expect(takeTurns([name], Date.now() + 100, "test")).rejects.toBeInstanceOf(ContentionError);
    await holder.release();
    // The abandoned ticket is served next with nobody to use it: the lease moves past it.
    const next = await takeTurns([name], undefined, "test", { leaseMs: 200 });
    await next.release();
  });

  it("serves writers of overlapping sets of names one at a time per name, and never lets two wait on each other", async () => {
    const accountId = randomUUID();
    const [a, b, c] = ["a", "b", "c"].map((suffix) => `item:${accountId}:${suffix}`) as [string, string, string];
    const sets = [[a, b, c], [b, c], [a, c], [c], [a, b], [c, b, a]];
    const holders = new Map<string, number>();
    let overlapped = false;
    // A wait on each other would stall until the deadline: ContentionError fails the test.
    const deadline = Date.now() + scaled(30_000);
    await Promise.all(
      Array.from({ length: 24 }, async (_, i) => {
        const names = sets[i % sets.length]!;
        const turns = await takeTurns(names, deadline, "test");
        for (const name of names) {
          if (holders.get(name)) overlapped = true;
          holders.set(name, (holders.get(name) ?? 0) + 1);
        }
        await sleep(3);
        for (const name of names) holders.set(name, holders.get(name)! - 1);
        await turns.release();
      }),
    );
    expect(overlapped).toBe(false);
  });

  it("takes the other names of a writer at once when their queues are free, and gives them back when one is not", async () => {
    const accountId = randomUUID();
    const [a, b, c] = ["a", "b", "c"].map((suffix) => `item:${accountId}:${suffix}`) as [string, string, string];
    const queue = async (name: string) => (await db().entities.turn.get({ accountId, name }).go({ consistent: true })).data;

    // All free: one ticket each, served on by the release.
    const free = await takeTurns([c, a, b], undefined, "test");
    expect((await Promise.all([a, b, c].map(queue))).map((turn) => turn?.next)).toEqual([1, 1, 1]);
    free.handOn(c, 42);
    await free.release();
    expect((await Promise.all([a, b, c].map(queue))).map((turn) => turn?.serving)).toEqual([1, 1, 1]);

    // `b` is held: a writer of all three gets `a`, gives `c` back at once and waits in line for `b`.
    const holderOfB = await takeTurns([b], undefined, "test");
    let gotAll = false;
    const writer = takeTurns([a, b, c], undefined, "test").then((turns) => {
      gotAll = true;
      return turns;
    });
    await waitFor("the writer's ticket on b", async () => (await queue(b))?.next === 3);
    // It took a ticket on `c` with its try for `b` and served it on at once, keeping what the
    // holder before left on it: `c` is free again.
    expect(await queue(c)).toMatchObject({ next: 2, serving: 2, handoff: 42 });
    // So a writer of `c` alone is served while the first still waits.
    const writerOfC = await takeTurns([c], Date.now() + scaled(10_000), "test");
    expect(gotAll).toBe(false);
    await writerOfC.release();
    await holderOfB.release();
    const all = await writer;
    expect(all.waited).toBe(true);
    await all.release();
    expect((await Promise.all([a, b, c].map(queue))).map((turn) => turn?.next === turn?.serving)).toEqual([true, true, true]);
  });

  it("queues only names of an account (`<kind>:<account uuid>[:id]`); others pass at once", async () => {
    const turns = await takeTurns(["no-account-here"], undefined, "test");
    await turns.release();
  });
});
