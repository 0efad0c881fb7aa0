import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";

/**
 * The local queue (lib/domain/webhooks/queue.ts) with its attempts replaced: what it does with
 * a retry plan and with an attempt that cannot run. Timers are fake: no waiting.
 */
const attempts: { messageId: string; attempt: number }[] = [];
let behaviour: (attempt: number) => Promise<unknown> = async () => ({ kind: "delivered" });
vi.mock("./delivery.js", () => ({
  attemptDelivery: async (message: { messageId: string }, attempt: number) => {
    attempts.push({ messageId: message.messageId, attempt });
    return behaviour(attempt);
  },
}));
vi.mock("../../core/log.js", () => ({ log: () => undefined, errorFields: () => ({}) }));

const { enqueueWebhookMessages, localWebhookQueue } = await import("./queue.js");
const message = (id: string) => ({ accountId: "a", endpointId: "e", messageId: id, type: "item.upsert", body: "{}" });

describe("offline: the local webhook queue", () => {
  beforeEach(() => {
    vi.useFakeTimers();
    attempts.length = 0;
    delete process.env.WEBHOOK_QUEUE_URL;
  });
  afterEach(async () => {
    await localWebhookQueue().stop();
    vi.useRealTimers();
  });

  it("makes the next attempt after the plan's delay, with the next attempt number", async () => {
    behaviour = async (attempt) => (attempt < 3 ? { kind: "retry", delaySeconds: 5 } : { kind: "delivered" });
    await enqueueWebhookMessages([message("m1")]);
    await vi.advanceTimersByTimeAsync(0);
    expect(attempts.map((a) => a.attempt)).toEqual([1]);
    await vi.advanceTimersByTimeAsync(4_999);
    expect(attempts).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    await vi.advanceTimersByTimeAsync(5_000);
    expect(attempts.map((a) => a.attempt)).toEqual([1, 2, 3]);
    expect(localWebhookQueue().waiting).toBe(0);
  });

  it("runs an attempt that could not run again after a second, the same attempt, at most ten times", async () => {
    behaviour = async () => {
      throw new Error("storage down");
    };
    await enqueueWebhookMessages([message("m2")]);
    await vi.advanceTimersByTimeAsync(60_000);
    expect(attempts.map((a) => a.attempt)).toEqual(Array(11).fill(1));
    expect(localWebhookQueue().waiting).toBe(0);
  });

  it("stop() drops the retries still waiting", async () => {
    behaviour = async () => ({ kind: "retry", delaySeconds: 60 });
    await enqueueWebhookMessages([message("m3"), message("m4")]);
    await vi.advanceTimersByTimeAsync(0);
    expect(localWebhookQueue().waiting).toBe(2);
    await localWebhookQueue().stop();
    await vi.advanceTimersByTimeAsync(120_000);
    expect(attempts).toHaveLength(2);
  });
});
