import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { db } from "../../lib/db/service.js";
import { readItem } from "../../lib/db/items.js";
import { writeTransaction } from "../../lib/db/transactions.js";
import { ReferencedItemGoneError } from "../../lib/core/failures.js";
import { sampleItem } from "../../lib/domain/inventory/test-fixtures.js";
import { inBatches } from "../support/batches.js";
import { scaled } from "../support/timeouts.js";
import { useStreamPoller } from "../support/stream-poller.js";
import { useApiServer, type ApiClient } from "../support/api.js";
import { expectError, expectValidation } from "../support/assertions.js";
import { estimateWorld, type EstimateWorld } from "../support/estimates.js";
import { idempotencyKey, newUser } from "../support/fixtures.js";

/**
 * `DELETE /items/{id}` against the documents that reference the item (architecture section 8:
 * "only while no document references it; else 422 validation_failed") and the location rule.
 * The item's `documentCount` is kept by the stream processor, behind the write by the stream's
 * delay; these tests delete the item the moment after the document write, before the processor
 * has run (it runs only when a test drains it), and again after.
 */
const api = useApiServer();
// Started, but it reads the stream only when a test drains it (a long interval).
const poller = useStreamPoller({ intervalMs: 3_600_000 });

const world = (): Promise<EstimateWorld> => estimateWorld((key) => api().withKey(key), { stock: 50 });

async function supplierOf(client: ApiClient): Promise<string> {
  const supplier = await client.post("/suppliers", { name: "Parts Ltd" });
  expect(supplier.status, supplier.text).toBe(201);
  return supplier.body.id;
}

/** Creates a document of `kind` with one line of `itemId`; returns its path. */
async function createDocument(w: EstimateWorld, kind: string, itemId: string): Promise<string> {
  const line = { item_id: itemId, quantity: 1 };
  const bodies: Record<string, Record<string, unknown>> = {
    estimates: { customer_id: w.customer.id, lines: [line] },
    "sales-orders": { customer_id: w.customer.id, location_id: w.location, lines: [line] },
    invoices: { customer_id: w.customer.id, lines: [line] },
    "purchase-orders": { supplier_id: await supplierOf(w.client), location_id: w.location, lines: [line] },
  };
  const created = await w.client.post(`/${kind}`, bodies[kind]);
  expect(created.status, created.text).toBe(201);
  return `/${kind}/${created.body.id}`;
}

async function newItem(w: EstimateWorld, name: string): Promise<string> {
  const item = await w.client.post("/items", { name });
  expect(item.status, item.text).toBe(201);
  return item.body.id;
}

const intentsOf = async (accountId: string) => (await db().entities.referenceIntent.query.primary({ accountId }).go({ pages: "all", consistent: true })).data;

describe("connected: deleting an item that documents reference", () => {
  it.each(["estimates", "sales-orders", "invoices", "purchase-orders"])(
    "refuses the deletion the moment after a %s write names the item, before the stream processor counted it",
    async (kind) => {
      const w = await world();
      const path = await createDocument(w, kind, w.item.id);
      const refused = await w.client.request("DELETE", `/items/${w.item.id}`);
      expectValidation(refused, "document_count");
      expect(refused.body.error.details[0]).toMatchObject({ code: "has_documents", message: "the item is referenced by 1 document(s) and cannot be deleted." });
      expect((await w.client.get(`/items/${w.item.id}`)).status).toBe(200);
      expect((await w.client.get(path)).status).toBe(200);
    },
  );

  it("allows the deletion once the only document was deleted, whether or not the processor caught up", async () => {
    const w = await world();
    // Deleted before the processor ran: the intent names a document that no longer exists.
    const first = await newItem(w, "Quickly released");
    const estimate = await createDocument(w, "estimates", first);
    expect((await w.client.request("DELETE", estimate)).status).toBe(200);
    const deleted = await w.client.request("DELETE", `/items/${first}`);
    expect(deleted.status, deleted.text).toBe(200);
    expectError(await w.client.get(`/items/${first}`), 404, "resource_missing");

    // Counted by the processor, then the document deleted and the item deleted before the
    // processor saw the deletion: the count is stale and the document's header says so.
    const second = await newItem(w, "Counted then released");
    const order = await createDocument(w, "sales-orders", second);
    await poller.drain();
    expect(await intentsOf(w.account.accountId)).toEqual([]);
    const { data: counted } = await db().entities.item.get({ accountId: w.account.accountId, itemId: second }).go({ consistent: true });
    expect(counted?.documentCount).toBe(1);
    expectValidation(await w.client.request("DELETE", `/items/${second}`), "document_count");
    expect((await w.client.request("DELETE", order)).status).toBe(200);
    const released = await w.client.request("DELETE", `/items/${second}`);
    expect(released.status, released.text).toBe(200);
    await poller.drain();
  });

  it("follows the lines: an update that drops the item releases it, one that adds it holds it", async () => {
    const w = await world();
    const other = await newItem(w, "Added later");
    const path = await createDocument(w, "estimates", w.item.id);
    // The item added by an update is held at once.
    const added = await w.client.patch(path, {
      lines: [
        { item_id: w.item.id, quantity: 1 },
        { item_id: other, quantity: 2 },
      ],
    });
    expect(added.status, added.text).toBe(200);
    expectValidation(await w.client.request("DELETE", `/items/${other}`), "document_count");
    // Dropping the first item releases it before the processor runs; the second stays held.
    const dropped = await w.client.patch(path, { lines: [{ item_id: other, quantity: 2 }] });
    expect(dropped.status, dropped.text).toBe(200);
    const deleted = await w.client.request("DELETE", `/items/${w.item.id}`);
    expect(deleted.status, deleted.text).toBe(200);
    expectValidation(await w.client.request("DELETE", `/items/${other}`), "document_count");
    // After the processor: the intents are gone and the count holds it alone.
    await poller.drain();
    expect(await intentsOf(w.account.accountId)).toEqual([]);
    expectValidation(await w.client.request("DELETE", `/items/${other}`), "document_count");
    expect((await w.client.get(`/items/${other}`)).status).toBe(200);
  });

  it("a deletion and a document write in flight together never both commit (each item ends deleted, or referenced and kept)", async () => {
    const w = await world();
    const supplier = await supplierOf(w.client);
    const outcomes = { deleted: 0, referenced: 0 };
    for (let round = 0; round < 12; round++) {
      const itemId = await newItem(w, `Race ${round}`);
      const line = { item_id: itemId, quantity: 1 };
      // Invoices take stock: the ledger meets the item too.
      if (round % 3 === 2) {
        const stocked = await w.client.post(`/items/${itemId}/adjustments`, { location_id: w.location, quantity: 5 });
        expect(stocked.status, stocked.text).toBe(201);
      }
      const write =
        round % 3 === 0
          ? w.client.post("/estimates", { customer_id: w.customer.id, lines: [line] })
          : round % 3 === 1
            ? w.client.post("/purchase-orders", { supplier_id: supplier, location_id: w.location, lines: [line] })
            : w.client.post("/invoices", { customer_id: w.customer.id, lines: [line] });
      const [document, deletion] = await Promise.all([write, w.client.request("DELETE", `/items/${itemId}`)]);
      if (deletion.status === 200) {
        expect(document.status, document.text).toBe(422);
        // A refusal about the lines (usually lines[0].item_id invalid_reference; the moment the
        // delete lands decides which check of the write sees it first).
        expectError(document, 422, "validation_failed");
        expect(document.body.error.details[0].param, document.text).toMatch(/^lines/);
        expectError(await w.client.get(`/items/${itemId}`), 404, "resource_missing");
        outcomes.deleted += 1;
      } else {
        expectValidation(deletion, "document_count");
        expect(document.status, document.text).toBe(201);
        expect((await w.client.get(`/items/${itemId}`)).status).toBe(200);
        outcomes.referenced += 1;
      }
    }
    console.info(`item deletion races: ${JSON.stringify(outcomes)}`);
    expect(outcomes.deleted + outcomes.referenced).toBe(12);
  });

  it("a document of more distinct items than its transaction can touch marks the rest before it commits; a deletion of a marked item waits for the write, then finds its reference", async () => {
    const w = await world();
    const ids = await inBatches(110, (index) => newItem(w, `Wide ${index}`));
    const estimate = await w.client.post("/estimates", { customer_id: w.customer.id, lines: ids.map((id) => ({ item_id: id, quantity: 1 })) });
    expect(estimate.status, estimate.text).toBe(201);
    const marked = (await Promise.all(ids.map((id) => readItem(w.account.accountId, id)))).filter((item) => (item?.referencingUntil ?? 0) > Date.now());
    // The transaction held the header, its line pages and intent, and touches for the rest of its room.
    expect(marked.length).toBeGreaterThan(0);
    expect(marked.length).toBeLessThan(ids.length);
    expectValidation(await w.client.request("DELETE", `/items/${marked[0]!.itemId}`), "document_count");

    // A mark with no write committed yet (the write is between its mark and its transaction):
    // the deletion waits, and the write that commits meanwhile holds the item.
    const itemId = await newItem(w, "Marked");
    await db()
      .entities.item.patch({ accountId: w.account.accountId, itemId })
      .set({ referencingUntil: Date.now() + scaled(3_000) })
      .go();
    const deletion = w.client.request("DELETE", `/items/${itemId}`);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const write = await w.client.post("/estimates", { customer_id: w.customer.id, lines: [{ item_id: itemId, quantity: 1 }] });
    expect(write.status, write.text).toBe(201);
    expectValidation(await deletion, "document_count");
    expect((await w.client.get(`/items/${itemId}`)).status).toBe(200);

    // A mark whose write never commits: the deletion goes through once the mark has run out.
    const lone = await newItem(w, "Lone");
    const markRunsOutAt = Date.now() + 1_000;
    await db().entities.item.patch({ accountId: w.account.accountId, itemId: lone }).set({ referencingUntil: markRunsOutAt }).go();
    const deleted = await w.client.request("DELETE", `/items/${lone}`);
    expect(deleted.status, deleted.text).toBe(200);
    // Answered only once the mark had run out (timed from the mark, not from the request sent a moment after it).
    expect(Date.now()).toBeGreaterThanOrEqual(markRunsOutAt);
  });

  it("a write whose transaction does not commit takes back the marks it set: a deletion of those items does not wait", async () => {
    const w = await world();
    const ids = await inBatches(110, (index) => newItem(w, `Doomed ${index}`));
    const accountId = w.account.accountId;
    const cancellation = await writeTransaction((tx) => {
      // A patch of an item that does not exist: its condition fails, so nothing of this transaction commits.
      tx.add("doomed", tx.entities.item.patch({ accountId, itemId: randomUUID() }).set({ name: "Nobody" }).commit());
      tx.touchItems(accountId, ids);
    });
    expect(cancellation?.failed("doomed")).toBe(true);
    const items = await Promise.all(ids.map((id) => readItem(accountId, id)));
    const markedOnce = items.filter((item) => item?.referenceTick === 1);
    // The items without room in the transaction were marked before it (their tick moved), then unmarked.
    expect(markedOnce.length).toBeGreaterThan(0);
    expect(items.filter((item) => item?.referencingUntil !== undefined)).toEqual([]);
    const startedAt = Date.now();
    expect((await w.client.request("DELETE", `/items/${markedOnce[0]!.itemId}`)).status).toBe(200);
    expect(Date.now() - startedAt).toBeLessThan(scaled(5_000));
  });

  it("a write whose later mark chunk finds an item gone takes back the marks of its earlier chunks", async () => {
    const w = await world();
    // Room in the transaction for about 99 touches, then marks in chunks of 100: the gone item is in the second chunk.
    // The items are stored directly (only their existence matters to a mark): 215 creates through the API take seconds.
    const accountId = w.account.accountId;
    const at = new Date().toISOString();
    const ids = Array.from({ length: 215 }, () => randomUUID());
    await db()
      .entities.item.put(ids.map((id, index) => sampleItem(accountId, id, at, { number: 1_000 + index })))
      .go();
    const gone = randomUUID();
    await expect(writeTransaction((tx) => tx.touchItems(accountId, [...ids, gone]))).rejects.toBeInstanceOf(ReferencedItemGoneError);
    const items = await Promise.all(ids.map((id) => readItem(accountId, id)));
    // Some items were marked by the first chunk (their tick moved), and none keeps a mark.
    expect(items.filter((item) => item?.referenceTick === 1).length).toBeGreaterThanOrEqual(100);
    expect(items.filter((item) => item?.referencingUntil !== undefined)).toEqual([]);
  });

  it("an adjustment that loses to the item's deletion is 404 resource_missing (as if sent after it), never a stock refusal", async () => {
    const w = await world();
    const answers = new Map<string, number>();
    for (let round = 0; round < 10; round++) {
      const itemId = await newItem(w, `Adjusted ${round}`);
      const [adjusted, deletion] = await Promise.all([
        w.client.post(`/items/${itemId}/adjustments`, { location_id: w.location, quantity: 5 }),
        w.client.request("DELETE", `/items/${itemId}`),
      ]);
      const answer = `${adjusted.status} ${adjusted.body.error?.code ?? ""} / ${deletion.status}`;
      answers.set(answer, (answers.get(answer) ?? 0) + 1);
      if (deletion.status === 200) {
        if (adjusted.status !== 201) expectError(adjusted, 404, "resource_missing");
        expectError(await w.client.get(`/items/${itemId}`), 404, "resource_missing");
      } else {
        // The adjustment came first: the item holds stock, so it stays.
        expect(adjusted.status, adjusted.text).toBe(201);
        expect((await w.client.get(`/items/${itemId}`)).body.quantity).toBe(5);
      }
    }
    console.info(`adjustment vs deletion: ${JSON.stringify(Object.fromEntries(answers))}`);
  });

  it("refuses a location-restricted user an item holding stock at another location (nothing deleted)", async () => {
    const w = await world();
    const branch = await w.client.post("/locations", { name: "Branch", short_name: "BR" }, { idempotencyKey: idempotencyKey() });
    expect(branch.status, branch.text).toBe(201);
    const user = await newUser(w.account, { permissions: ["inventory.list", "inventory.modify"], locationId: branch.body.id });
    const restricted = api().withKey(user.key);
    // w.item holds 50 at the main location.
    const refused = await restricted.request("DELETE", `/items/${w.item.id}`);
    expectValidation(refused, "locations");
    expect(refused.body.error.details[0].code).toBe("not_allowed");
    expect((await w.client.get(`/items/${w.item.id}`)).body.quantity).toBe(50);
    // An item whose stock is all at the user's own location (or that holds none) is theirs to delete.
    const local = await newItem(w, "Branch stock");
    expect((await w.client.post(`/items/${local}/adjustments`, { location_id: branch.body.id, quantity: 3 })).status).toBe(201);
    const deleted = await restricted.request("DELETE", `/items/${local}`);
    expect(deleted.status, deleted.text).toBe(200);
    // Emptied stock elsewhere no longer holds the item back.
    expect((await w.client.post(`/items/${w.item.id}/adjustments`, { location_id: w.location, quantity: -50 })).status).toBe(201);
    const emptied = await restricted.request("DELETE", `/items/${w.item.id}`);
    expect(emptied.status, emptied.text).toBe(200);
  });
});
