import { afterAll, beforeAll } from "vitest";
import { handler as streamHandler } from "../../functions/stream-processor/handler.js";
import { tableName } from "../../lib/db/table.js";
import { startStreamPoller, type StreamPoller } from "../../scripts/local/stream-poller.js";

/**
 * For one test file: the stream processor in-process, polling this worker's table (every
 * `intervalMs`; a long one means "only when a test drains it"), started before the file's tests
 * and stopped after them. `drain()` waits until everything written so far is processed.
 */
export function useStreamPoller(options: { intervalMs?: number } = {}): Pick<StreamPoller, "drain"> {
  let poller: StreamPoller | undefined;
  beforeAll(async () => {
    poller = await startStreamPoller({
      endpoint: process.env.DYNAMODB_ENDPOINT!,
      tableName: tableName(),
      handler: streamHandler,
      intervalMs: options.intervalMs ?? 50,
    });
  });
  afterAll(async () => {
    await poller?.stop();
  });
  return { drain: () => poller!.drain() };
}
