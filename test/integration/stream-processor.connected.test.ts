import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { handler } from "../../functions/stream-processor/handler.js";
import { insertJournal, readJournal } from "../../lib/db/inventory.js";
import { journalRecord } from "../../lib/domain/inventory/service.js";
import { tableName } from "../../lib/db/table.js";
import { startStreamPoller, type StreamPoller } from "../../scripts/local/stream-poller.js";
import { useApiServer } from "../support/api.js";
import { idempotencyKey, newAccount } from "../support/fixtures.js";

/**
 * The stream processor, driven by the local poller exactly as Lambda's event source mapping
 * drives it: a stock journal left pending (its writer was interrupted) is finished from the
 * stream.
 */
const api = useApiServer();
let poller: StreamPoller;

beforeAll(async () => {
  poller = await startStreamPoller({ endpoint: process.env.DYNAMODB_ENDPOINT!, tableName: tableName(), handler, intervalMs: 50 });
});
afterAll(async () => {
  await poller.stop();
});

describe("stream processor", () => {
  it("applies a stock journal that its writer left pending", async () => {
    const account = await newAccount();
    const client = api().withKey(account.ownerKey);
    const location = (await client.post("/locations", { name: "Stream", short_name: "S" }, { idempotencyKey: idempotencyKey() })).body.id;
    const items = [];
    for (let i = 0; i < 3; i++) {
      const item = (await client.post("/items", { name: `Streamed ${i}` })).body;
      const variation = (await client.get(`/items/${item.id}/variations`)).body.data[0].id;
      items.push({ itemId: item.id as string, variationId: variation as string });
    }
    const journalId = randomUUID();
    const changes = items.map((item, i) => ({ ...item, locationId: location, deltas: { onHand: 10 + i } }));
    await insertJournal(journalRecord(account.accountId, journalId, { sourceType: "purchase_order", sourceId: "po-1" }, changes));

    for (let attempt = 0; attempt < 20 && (await readJournal(account.accountId, journalId))?.status !== "applied"; attempt++) {
      await poller.drain();
    }
    expect((await readJournal(account.accountId, journalId))?.status).toBe("applied");
    const listed = await client.get("/items", { ids: items.map((i) => i.itemId).join(",") });
    expect(listed.body.data.map((item: { name: string; quantity: number }) => [item.name, item.quantity])).toEqual([
      ["Streamed 0", 10],
      ["Streamed 1", 11],
      ["Streamed 2", 12],
    ]);
  });
});
