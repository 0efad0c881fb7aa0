import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { ContentionError } from "../../lib/core/errors.js";
import { takeTurns } from "../../lib/db/turns.js";
import { db } from "../../lib/db/service.js";

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

  it("queues only names of an account (`<kind>:<account uuid>[:id]`); others pass at once", async () => {
    const turns = await takeTurns(["no-account-here"], undefined, "test");
    await turns.release();
  });
});
