import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { inBatches } from "../support/batches.js";
import { readItemTree } from "../../lib/db/inventory.js";
import { writeTransaction } from "../../lib/db/transactions.js";
import { holdStock, readHold } from "../../lib/domain/inventory/stock-holds.js";
import { sweepExpiredHolds } from "../../lib/domain/inventory/service.js";
import { readSettledItems } from "../../lib/domain/inventory/reads.js";
import { foldHold, releaseHold } from "../../lib/domain/inventory/settling.js";
import { itemStock } from "../../lib/domain/inventory/stock-changes.js";
import { readItems } from "../../lib/db/items.js";
import { useApiServer, type ApiClient } from "../support/api.js";
import { idempotencyKey, newAccount, type TestAccount } from "../support/fixtures.js";
import { scaled } from "../support/timeouts.js";

/**
 * Long writes (more stock changes than one transaction holds) are atomic to readers (issue 19,
 * point 5; lib/domain/inventory/stock-holds.ts): a hold's deltas stay pending, invisible, until the
 * document's transaction binds it, and every reader folds a bound hold before answering. So a
 * reader never sees part of a write, whether the writer is slow, dies before its commit point
 * (nothing ever shows; the hold is released) or dies after it (the next reader rolls it forward).
 */
const api = useApiServer();
/**
 * The killed writer's lease (a request's is `HOLD_LEASE_MS`, 20 s): long enough for this test's
 * reads while it is live, short enough not to idle a test worker waiting for it to run out.
 */
const KILLED_WRITER_LEASE_MS = scaled(8_000);

interface World {
  account: TestAccount;
  client: ApiClient;
  location: string;
  supplier: string;
}

async function world(): Promise<World> {
  const account = await newAccount();
  const client = api().withKey(account.ownerKey);
  const location = (await client.post("/locations", { name: "Main", short_name: "MAIN" }, { idempotencyKey: idempotencyKey() })).body.id as string;
  const supplier = (await client.post("/suppliers", { name: `Supplier ${randomUUID().slice(0, 6)}` })).body.id as string;
  return { account, client, location, supplier };
}

async function items(w: World, count: number, stock: number): Promise<{ id: string; variationId: string }[]> {
  return inBatches(count, async (i) => {
    const created = await w.client.post("/items", { name: `Part ${i} ${randomUUID().slice(0, 4)}` });
    expect(created.status, created.text).toBe(201);
    const item = created.body;
    if (stock > 0) expect((await w.client.post(`/items/${item.id}/adjustments`, { location_id: w.location, quantity: stock })).status).toBe(201);
    const tree = await readItemTree(w.account.accountId, item.id);
    return { id: item.id as string, variationId: tree.variations[0]!.variationId };
  });
}

const quantityOf = async (w: World, itemId: string): Promise<number> => (await w.client.get(`/items/${itemId}`)).body.quantity;

describe("connected: long writes are atomic to readers", () => {
  it(
    "readers during a 100-line purchase-order receive see all of it or none of it, in every order they read",
    async () => {
      const w = await world();
      const parts = await items(w, 100, 0);
      const order = (
        await w.client.post("/purchase-orders", { supplier_id: w.supplier, location_id: w.location, lines: parts.map((p) => ({ item_id: p.id, quantity: 2 })) })
      ).body;
      expect((await w.client.post(`/purchase-orders/${order.id}/send`, {})).status).toBe(200);
      // Each reader reads the first item, the last, a middle one and the order, over and over.
      // Once any read has shown the receipt, no later read of the same reader may show it missing.
      let receiving = true;
      const reader = async () => {
        const seen: string[] = [];
        while (receiving) {
          for (const id of [parts[0]!.id, parts[99]!.id, parts[50]!.id]) seen.push((await quantityOf(w, id)) === 2 ? "after" : "before");
          seen.push((await w.client.get(`/purchase-orders/${order.id}`)).body.status === "Received" ? "after" : "before");
        }
        return seen;
      };
      const readers = Array.from({ length: 4 }, reader);
      const received = await w.client.post(`/purchase-orders/${order.id}/receive`, {
        lines: order.lines.map((line: any) => ({ line_id: line.id, quantity: 2 })),
      });
      receiving = false;
      expect(received.status, received.text).toBe(200);
      const observations = await Promise.all(readers);
      for (const seen of observations) {
        const firstAfter = seen.indexOf("after");
        if (firstAfter >= 0) expect(seen.slice(firstAfter), seen.join(",")).not.toContain("before");
      }
      expect(observations.flat().filter((s) => s === "before").length).toBeGreaterThan(0);
      for (const part of [parts[0]!, parts[50]!, parts[99]!]) expect(await quantityOf(w, part.id)).toBe(2);
    },
    scaled(180_000),
  );

  it(
    "a writer killed before its commit point leaves nothing visible; its reservation ends with its lease",
    async () => {
      const w = await world();
      const parts = await items(w, 60, 5);
      const changes = parts.map((p) => ({ itemId: p.id, variationId: p.variationId, locationId: w.location, deltas: { onHand: -4 } }));
      // The writer runs in a process of its own, killed (SIGKILL) once it has written part of its hold.
      const child = spawn(process.execPath, ["--import", "tsx", "test/support/hold-writer.ts"], {
        env: { ...process.env, HOLD_ACCOUNT: w.account.accountId, HOLD_CHANGES: JSON.stringify(changes), HOLD_LEASE_MS: String(KILLED_WRITER_LEASE_MS) },
        stdio: ["ignore", "pipe", "inherit"],
      });
      const journalId = await new Promise<string>((resolve, reject) => {
        let out = "";
        child.stdout.on("data", (chunk) => {
          out += String(chunk);
          const match = /journal (\S+)/.exec(out);
          if (match) resolve(match[1]!);
        });
        child.on("exit", (code) => reject(new Error(`hold writer exited (${code}) before starting its hold`)));
      });
      // (Bounded by the test's timeout.)
      while (((await readHold(w.account.accountId, journalId))?.appliedChunks?.length ?? 0) === 0) await new Promise((resolve) => setTimeout(resolve, 20));
      child.kill("SIGKILL");
      await new Promise((resolve) => child.once("exit", resolve));
      // Killed before its commit point (part or all of its hold written, never bound).
      expect(["pending", "held"]).toContain((await readHold(w.account.accountId, journalId))?.status);
      // Readers see none of it; the stock it wrote as pending is held from other writers until
      // its lease runs out: a writer that needs it waits, then settles the dead hold and goes on.
      for (const part of parts) expect(await quantityOf(w, part.id)).toBe(5);
      const first = parts[0]!;
      expect(Object.keys((await readItemTree(w.account.accountId, first.id)).rows[0]!.pending ?? {})).toEqual([journalId]);
      const adjusted = await w.client.post(`/items/${first.id}/adjustments`, { location_id: w.location, quantity: -2 });
      expect(adjusted.status, adjusted.text).toBe(201);
      expect(await quantityOf(w, first.id)).toBe(3);
      // Once its lease has run out, the sweeper (or the next writer that meets it) releases it.
      await sweepExpiredHolds(Date.now() + KILLED_WRITER_LEASE_MS + 1000);
      expect((await readHold(w.account.accountId, journalId))?.status).toBe("released");
      for (const part of parts.slice(1)) {
        const rows = (await readItemTree(w.account.accountId, part.id)).rows;
        expect(
          rows.every((row) => row.pending === undefined),
          part.id,
        ).toBe(true);
        expect(await quantityOf(w, part.id)).toBe(5);
      }
    },
    scaled(180_000),
  );

  it(
    "a writer that died after its commit point is rolled forward by the next reader",
    async () => {
      const w = await world();
      const parts = await items(w, 60, 5);
      const hold = await holdStock({
        accountId: w.account.accountId,
        source: { sourceType: "stock_transfer", reason: "test: dies after commit" },
        changes: parts.map((p) => ({ itemId: p.id, variationId: p.variationId, locationId: w.location, deltas: { onHand: -3 } })),
      });
      for (const part of [parts[0]!, parts[59]!]) expect(await quantityOf(w, part.id)).toBe(5);
      // The commit point, and no fold after it (the writer died).
      expect(await writeTransaction((tx) => hold.bind(tx))).toBeNull();
      expect((await readHold(w.account.accountId, hold.journalId))?.status).toBe("bound");
      // The first reader of any part sees the whole write: it folds the hold first.
      expect(await quantityOf(w, parts[59]!.id)).toBe(2);
      expect((await readHold(w.account.accountId, hold.journalId))?.status).toBe("applied");
      const listed = await w.client.get("/items", {
        ids: parts
          .slice(0, 50)
          .map((p) => p.id)
          .join(","),
      });
      expect(listed.body.data.map((item: any) => item.quantity)).toEqual(Array(50).fill(2));
      for (const part of parts) {
        const tree = await readItemTree(w.account.accountId, part.id);
        expect(tree.rows[0]!.onHand).toBe(2);
        expect(tree.rows[0]!.pending).toBeUndefined();
        expect(tree.item!.pendingJournals).toBeUndefined();
      }
    },
    scaled(180_000),
  );

  it("a hold reversing a unique unit judges it on the settled item: a sale committed but not folded yet is the unit's sale", async () => {
    const w = await world();
    const parts = await items(w, 21, 5);
    const created = await w.client.post("/items", { name: "Serial", inventory_type: "unique", serial_number: `SN-${randomUUID()}` });
    expect(created.status, created.text).toBe(201);
    expect((await w.client.post(`/items/${created.body.id}/adjustments`, { location_id: w.location, quantity: 1 })).status).toBe(201);
    const unit = { id: created.body.id as string, variationId: (await readItemTree(w.account.accountId, created.body.id)).variations[0]!.variationId };
    const source = { sourceType: "invoice", sourceId: `inv-${randomUUID()}`, reason: "test: a sale, then its reversal" };
    const changes = (sign: 1 | -1) => [
      { itemId: unit.id, variationId: unit.variationId, locationId: w.location, deltas: { onHand: -sign }, sold: sign === 1 },
      ...parts.map((p) => ({ itemId: p.id, variationId: p.variationId, locationId: w.location, deltas: { onHand: -sign } })),
    ];
    // The sale commits and is not folded (its writer died after the commit point).
    const sale = await holdStock({ accountId: w.account.accountId, source, changes: changes(1) });
    expect(await writeTransaction((tx) => sale.bind(tx))).toBeNull();
    // Its reversal reads the unit as the sale left it: sold by this document, so it comes back.
    const reversal = await holdStock({ accountId: w.account.accountId, source, changes: changes(-1) });
    expect(await writeTransaction((tx) => reversal.bind(tx))).toBeNull();
    await foldHold(w.account.accountId, reversal.journalId);
    const [item] = await readSettledItems(w.account.accountId, () => readItems(w.account.accountId, [unit.id]));
    expect({ onHand: itemStock(item!)[w.location]?.onHand, sold: item!.sold }).toEqual({ onHand: 1, sold: false });
    expect(await quantityOf(w, parts[20]!.id)).toBe(5);
  });

  it("a read that predates another reader's fold (or release) of a hold is read again, once per hold", async () => {
    const w = await world();
    const parts = await items(w, 2, 5);
    const ids = parts.map((p) => p.id);
    const hold = await holdStock({
      accountId: w.account.accountId,
      source: { sourceType: "stock_transfer", reason: "test: folded between a read and its settling" },
      changes: parts.map((p) => ({ itemId: p.id, variationId: p.variationId, locationId: w.location, deltas: { onHand: -3 } })),
    });
    expect(await writeTransaction((tx) => hold.bind(tx))).toBeNull();
    // A reader reads the items while the hold is bound, unfolded (their marks name it) ...
    const stale = await readItems(w.account.accountId, ids);
    expect(stale.every((item) => item.pendingJournals && hold.journalId in item.pendingJournals)).toBe(true);
    // ... and another reader folds it before the first one reads the hold's state: "applied".
    await foldHold(w.account.accountId, hold.journalId);
    expect((await readHold(w.account.accountId, hold.journalId))?.status).toBe("applied");
    const onHand = (item: { stock?: unknown }) => itemStock(item as never)[w.location]?.onHand;
    let reads = 0;
    const settled = await readSettledItems(w.account.accountId, async () => (reads++ === 0 ? stale : readItems(w.account.accountId, ids)));
    expect(reads).toBe(2);
    expect(settled.map(onHand)).toEqual([2, 2]);
    // A mark that stays on an applied hold is read past once, never spun on.
    reads = 0;
    const stuck = await readSettledItems(w.account.accountId, async () => {
      reads++;
      return stale;
    });
    expect(reads).toBe(2);
    expect(stuck.map(onHand)).toEqual([5, 5]);

    // The same for a hold released meanwhile: a read that still carries its marks is taken again.
    const released = await holdStock({
      accountId: w.account.accountId,
      source: { sourceType: "stock_transfer", reason: "test: released between a read and its settling" },
      changes: parts.map((p) => ({ itemId: p.id, variationId: p.variationId, locationId: w.location, deltas: { onHand: -1 } })),
    });
    const marked = await readItems(w.account.accountId, ids);
    expect(marked.every((item) => item.pendingJournals && released.journalId in item.pendingJournals)).toBe(true);
    await releaseHold(w.account.accountId, released.journalId);
    expect((await readHold(w.account.accountId, released.journalId))?.status).toBe("released");
    reads = 0;
    const after = await readSettledItems(w.account.accountId, async () => (reads++ === 0 ? marked : readItems(w.account.accountId, ids)));
    expect(reads).toBe(2);
    expect(after.map(onHand)).toEqual([2, 2]);
    expect(after.every((item) => item.pendingJournals === undefined)).toBe(true);
  });
});
