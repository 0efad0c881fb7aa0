import { randomUUID } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BatchWriteItemCommand, CreateTableCommand, PutItemCommand } from "@aws-sdk/client-dynamodb";
import type { DynamoDBStreamEvent } from "aws-lambda";
import { afterAll, describe, expect, it } from "vitest";
import { createDynamoClient } from "../../lib/db/client.js";
import { tableDefinition } from "../../lib/db/create-table.js";
import { startStreamPoller, type StreamPoller } from "../../scripts/local/stream-poller.js";

/**
 * The local stack's stream poller across restarts (architecture section 6: no change may ever be
 * skipped): with a checkpoint file (npm start keeps one in DATA_DIR) a restarted poller hands the
 * handler exactly what was written while it was stopped, nothing twice; a first start, or a file
 * of another stream (the table made anew), skips the history before it, as before.
 */
const client = createDynamoClient();
const scratch = mkdtempSync(join(tmpdir(), "stream-checkpoints-"));
// The tables stay (the suite's DynamoDB Local is in memory): deleting a table with a stream made
// every later stream read of the shared DynamoDB Local slower (the feed tests 9 s -> 30 s).
afterAll(() => {
  client.destroy();
  rmSync(scratch, { recursive: true, force: true });
});

async function newTable(): Promise<string> {
  const name = `poller-${randomUUID().slice(0, 8)}`;
  await client.send(new CreateTableCommand(tableDefinition(name, { indexes: [] })));
  return name;
}

const put = (table: string, key: string) => client.send(new PutItemCommand({ TableName: table, Item: { pk: { S: key }, sk: { S: "x" } } }));

/** A poller of `table` whose handler notes the partition key of every record it is handed. */
async function poller(table: string, checkpointFile: string | undefined): Promise<{ poller: StreamPoller; seen: string[] }> {
  const seen: string[] = [];
  const handler = async (event: DynamoDBStreamEvent) => {
    for (const record of event.Records) seen.push(record.dynamodb!.Keys!.pk!.S!);
    return undefined;
  };
  return { poller: await startStreamPoller({ endpoint: process.env.DYNAMODB_ENDPOINT!, tableName: table, handler, intervalMs: 60_000, checkpointFile }), seen };
}

describe("connected: the local stream poller across restarts", () => {
  it("resumes after the last record it handled: writes made while it was stopped are handled once, none twice", async () => {
    const table = await newTable();
    const file = join(scratch, `${table}.json`);
    await put(table, "before-first-start");
    const first = await poller(table, file);
    await put(table, "a");
    await first.poller.drain();
    await first.poller.stop();
    expect(first.seen).toEqual(["a"]);

    await put(table, "while-stopped-1");
    await put(table, "while-stopped-2");
    const second = await poller(table, file);
    await put(table, "b");
    await second.poller.drain();
    await second.poller.stop();
    expect(second.seen).toEqual(["while-stopped-1", "while-stopped-2", "b"]);

    // A run that handled nothing keeps the place it resumed from.
    const third = await poller(table, file);
    await third.poller.stop();
    await put(table, "while-stopped-3");
    const fourth = await poller(table, file);
    await fourth.poller.drain();
    await fourth.poller.stop();
    expect(third.seen).toEqual([]);
    expect(fourth.seen).toEqual(["while-stopped-3"]);
  });

  it("a first start on an empty stream saves its file: a restart hands over what was written meanwhile", async () => {
    const table = await newTable();
    const file = join(scratch, `${table}.json`);
    const empty = await poller(table, file);
    await empty.poller.stop();
    await put(table, "while-stopped");
    const next = await poller(table, file);
    await next.poller.drain();
    await next.poller.stop();
    expect(next.seen).toEqual(["while-stopped"]);
  });

  it("saves after every batch: a poller that dies in a catch-up hands its restart only the batch it was on", async () => {
    const table = await newTable();
    const file = join(scratch, `${table}.json`);
    const first = await poller(table, file);
    await first.poller.stop();
    const keys = Array.from({ length: 250 }, (_, i) => `w${String(i).padStart(3, "0")}`);
    // Written 25 to a request (a busy DynamoDB Local answers 250 single writes slowly).
    for (let i = 0; i < keys.length; i += 25) {
      const requests = keys.slice(i, i + 25).map((key) => ({ PutRequest: { Item: { pk: { S: key }, sk: { S: "x" } } } }));
      const { UnprocessedItems } = await client.send(new BatchWriteItemCommand({ RequestItems: { [table]: requests } }));
      expect(UnprocessedItems?.[table] ?? []).toEqual([]);
    }
    // Batches of 100: from the third on every one fails, as in a process that died there.
    const handled: string[] = [];
    let batches = 0;
    const dying = await startStreamPoller({
      endpoint: process.env.DYNAMODB_ENDPOINT!,
      tableName: table,
      intervalMs: 60_000,
      checkpointFile: file,
      handler: async (event: DynamoDBStreamEvent) => {
        batches += 1;
        if (batches >= 3) throw new Error("the process died here");
        for (const record of event.Records) handled.push(record.dynamodb!.Keys!.pk!.S!);
        return undefined;
      },
    });
    await dying.drain().catch(() => undefined);
    await dying.stop();
    expect(batches).toBeGreaterThanOrEqual(3);
    expect(handled).toHaveLength(200);
    const next = await poller(table, file);
    await next.poller.drain();
    await next.poller.stop();
    expect(next.seen).toHaveLength(50);
    expect([...handled, ...next.seen].sort()).toEqual(keys);
  });

  it("a first start on a table with history, and a file of another stream, skip what came before", async () => {
    const table = await newTable();
    const file = join(scratch, `${table}.json`);
    await put(table, "old-1");
    await put(table, "old-2");
    const first = await poller(table, file);
    await put(table, "new");
    await first.poller.drain();
    await first.poller.stop();
    expect(first.seen).toEqual(["new"]);
    // The first start noted where it began, so its restart does not go back to old-1.
    const saved = JSON.parse(readFileSync(file, "utf8")) as { streamArn: string; shards: Record<string, string> };
    expect(Object.keys(saved.shards).length).toBeGreaterThan(0);

    writeFileSync(file, JSON.stringify({ streamArn: `${saved.streamArn}-of-a-table-made-before`, shards: saved.shards }));
    await put(table, "while-stopped");
    const again = await poller(table, file);
    await put(table, "later");
    await again.poller.drain();
    await again.poller.stop();
    expect(again.seen).toEqual(["later"]);
  });
});
