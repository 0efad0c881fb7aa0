import { afterEach, describe, expect, it } from "vitest";
import { handler as streamHandler } from "../../functions/stream-processor/handler.js";
import { tableName } from "../../lib/db/table.js";
import { startStreamPoller, type StreamPoller } from "../../scripts/local/stream-poller.js";
import { useApiServer, type ApiClient } from "../support/api.js";
import { idempotencyKey, newAccount } from "../support/fixtures.js";
import { scaled } from "../support/timeouts.js";

/**
 * Proof that the feed has no gaps (issue 5, docs/sync.md): concurrent writers create, update,
 * delete and adjust items while a follower runs the documented client procedure (start=now,
 * full download through the list, then the feed from the saved cursor, fetching upserts with
 * ?ids= and removing deletes). After the writers stop and the feed drains, the follower's
 * copy must equal the server's state exactly. The stream poller delivers batches split by key
 * and processed concurrently (like a parallelization factor) with random delays, so an
 * ordering bug between marker writers cannot hide.
 */
const api = useApiServer();
let poller: StreamPoller | undefined;
afterEach(async () => {
  await poller?.stop();
  poller = undefined;
});

interface ItemCopy {
  name: string;
  quantity: number;
  price: string | null;
  archived: boolean;
}

const snapshotOf = (item: { name: string; quantity: number; price: string | null; archived: boolean }): ItemCopy => ({
  name: item.name,
  quantity: item.quantity,
  price: item.price,
  archived: item.archived,
});

async function serverState(client: ApiClient): Promise<Map<string, ItemCopy>> {
  const state = new Map<string, ItemCopy>();
  for (let page = 1; ; page++) {
    const response = await client.get("/items", { archived: "all", include_sold: "true", limit: 100, page });
    for (const item of response.body.data) state.set(item.id, snapshotOf(item));
    if (!response.body.has_more) return state;
  }
}

/** The documented client: applies one page of changes to its copy, returns the next cursor. */
async function follow(client: ApiClient, copy: Map<string, ItemCopy>, cursor: string): Promise<{ cursor: string; more: boolean; seen: number }> {
  const page = await client.get("/sync", { cursor, limit: 50 });
  expect(page.status, page.text).toBe(200);
  const upserts = page.body.changes.filter((c: { operation: string }) => c.operation === "upsert").map((c: { id: string }) => c.id);
  for (const change of page.body.changes) if (change.operation === "delete") copy.delete(change.id);
  for (let i = 0; i < upserts.length; i += 50) {
    const ids = upserts.slice(i, i + 50);
    const fetched = await client.get("/items", { ids: ids.join(",") });
    expect(fetched.status, fetched.text).toBe(200);
    const present = new Set<string>();
    for (const item of fetched.body.data) {
      copy.set(item.id, snapshotOf(item));
      present.add(item.id);
    }
    // An id absent from a successful ids fetch no longer exists (spec 4.6).
    for (const id of ids) if (!present.has(id)) copy.delete(id);
  }
  return { cursor: page.body.next_cursor, more: page.body.has_more, seen: page.body.changes.length };
}

async function runScenario(options: { writers: number; operationsPerWriter: number; parallelism: number; maxDelayMs: number }) {
  poller = await startStreamPoller({
    endpoint: process.env.DYNAMODB_ENDPOINT!,
    tableName: tableName(),
    handler: streamHandler,
    intervalMs: 20,
    parallelism: options.parallelism,
    maxDelayMs: options.maxDelayMs,
  });
  const account = await newAccount();
  const client = api().withKey(account.ownerKey);
  const location = (await client.post("/locations", { name: "Feed", short_name: "F" }, { idempotencyKey: idempotencyKey() })).body.id as string;
  // Items that exist before the follower starts (the full download must bring them).
  for (let i = 0; i < 10; i++) await client.post("/items", { name: `Existing ${i}`, price: i });

  let writing = true;
  const writer = async (w: number) => {
    const mine: string[] = [];
    for (let op = 0; op < options.operationsPerWriter; op++) {
      const roll = (w * 7 + op * 13) % 10;
      if (mine.length === 0 || roll < 3) {
        const created = await client.post("/items", { name: `W${w}-${op}`, price: op });
        if (created.status === 201) mine.push(created.body.id);
      } else if (roll < 6) {
        const id = mine[op % mine.length]!;
        await client.post(`/items/${id}/adjustments`, { location_id: location, quantity: (op % 5) + 1 });
      } else if (roll < 8) {
        const id = mine[(op * 3) % mine.length]!;
        await client.patch(`/items/${id}`, { name: `W${w}-${op}-renamed`, archived: op % 4 === 0 });
      } else {
        const id = mine.splice(op % mine.length, 1)[0]!;
        await client.request("DELETE", `/items/${id}`);
      }
    }
  };

  // The follower: checkpoint, full download, then the feed, while the writers run.
  const started = await client.get("/sync", { start: "now", resources: "item" });
  expect(started.status, started.text).toBe(200);
  const writers = Promise.all(Array.from({ length: options.writers }, (_, w) => writer(w))).finally(() => {
    writing = false;
  });
  const copy = await serverState(client);
  let cursor = started.body.cursor as string;
  while (writing) {
    const step = await follow(client, copy, cursor);
    cursor = step.cursor;
    if (!step.more) await new Promise((r) => setTimeout(r, 30));
  }
  await writers;

  // Drain: the stream must be fully processed, then the feed read to its end.
  for (let i = 0; i < 3; i++) await poller.drain();
  for (let rounds = 0; rounds < 200; rounds++) {
    const step = await follow(client, copy, cursor);
    cursor = step.cursor;
    if (!step.more) break;
  }
  const server = await serverState(client);
  expect(Object.fromEntries([...copy].sort())).toEqual(Object.fromEntries([...server].sort()));
  return server.size;
}

describe("sync has no gaps", () => {
  it(
    "a follower's copy equals the server after concurrent creates, updates, deletes and adjustments",
    async () => {
      const size = await runScenario({ writers: 4, operationsPerWriter: 25, parallelism: 1, maxDelayMs: 0 });
      expect(size).toBeGreaterThan(10);
    },
    scaled(120_000),
  );

  it(
    "holds with batches processed concurrently by key and random delivery delays",
    async () => {
      const size = await runScenario({ writers: 4, operationsPerWriter: 25, parallelism: 4, maxDelayMs: 40 });
      expect(size).toBeGreaterThan(10);
    },
    scaled(120_000),
  );
});
