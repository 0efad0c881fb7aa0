import { describe, expect, it } from "vitest";
import { startApiServer } from "../../scripts/local/server.js";
import { scaled, waitFor } from "../support/timeouts.js";

/**
 * The local stack's API worker processes (`API_PROCESSES`, scripts/local/worker-pool.ts) when
 * workers die as Lambda containers may: a `kill -9` fails only a request that worker had taken
 * (one handed to it a moment before goes to another), the server keeps serving every other request (it once crashed on a send to a worker
 * killed a moment before), and the pool grows back to its size, also when a replacement is
 * killed while it starts (the pool once stayed one worker short for good).
 */
const statusOf = (url: string) =>
  fetch(`${url}/api/v3/items`).then(
    (response) => response.status,
    () => -1,
  );

describe("connected: API worker processes", () => {
  it("a killed worker fails only a request it took; the server keeps serving and the pool grows back, also past a replacement killed while it starts", async () => {
    const stack = await startApiServer(0, { processes: 2 });
    try {
      // Through a worker: no key is 401, answered by the handler.
      expect(await statusOf(stack.url)).toBe(401);
      const pids = () => stack.workers().map((worker) => worker.pid);
      const first = pids();
      expect(first).toHaveLength(2);

      // Killed while idle, with requests sent before its death is reported: none crashes the server.
      process.kill(first[0]!, "SIGKILL");
      const during = Promise.all(Array.from({ length: 6 }, () => statusOf(stack.url)));

      // Its replacement is killed while it starts (looked for every 10 ms: it starts in about a second): another one follows.
      let replacement: number | undefined;
      const deadline = Date.now() + scaled(10_000);
      while (replacement === undefined) {
        if (Date.now() > deadline) throw new Error(`Timed out after ${scaled(10_000)} ms waiting for a replacement worker to start.`);
        replacement = stack.workers().find((worker) => !first.includes(worker.pid) && !worker.ready)?.pid;
        if (replacement === undefined) await new Promise((resolve) => setTimeout(resolve, 10));
      }
      process.kill(replacement, "SIGKILL");
      // The dead worker took none of them (it acknowledges a request before running it): another served each.
      expect(await during).toEqual(Array.from({ length: 6 }, () => 401));
      await waitFor(
        "the pool to grow back to 2 started workers",
        () => {
          const workers = stack.workers();
          return workers.length === 2 && workers.every((worker) => worker.ready && worker.pid !== first[0] && worker.pid !== replacement);
        },
        scaled(20_000),
      );
      const after = await Promise.all(Array.from({ length: 8 }, () => statusOf(stack.url)));
      expect(after).toEqual(Array.from({ length: 8 }, () => 401));
    } finally {
      await new Promise((resolve) => stack.server.close(resolve));
    }
  });
});
