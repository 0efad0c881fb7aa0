import { describe, expect, it } from "vitest";
import { inBatches } from "../support/batches.js";
import { db } from "../../lib/db/service.js";
import { LINE_COUNTS, captureRequestSamples, lineCallsTable, rateWindowResets } from "../../scripts/bench/line-calls.js";
import { useApiServer, type ApiClient } from "../support/api.js";
import { expectValidation } from "../support/assertions.js";
import { newAccount } from "../support/fixtures.js";
import { scaled } from "../support/timeouts.js";

/**
 * Calls independent of line count (issue 19): every route that resolves document lines reads
 * the lines' items, variations and stock rows in a fixed number of batched reads, so a
 * 100-line request makes about as many DynamoDB calls as a 1-line one. Only a stock hold's
 * chunks grow with the document (a chunk per transaction's worth of lines, never per line).
 * Counted from each request's log line, as `npm run bench` counts them.
 */
const api = useApiServer();

/** Runs `fn` with the request log lines captured. */
async function captured<T>(fn: (samples: ReturnType<typeof captureRequestSamples>["samples"]) => Promise<T>): Promise<T> {
  const capture = captureRequestSamples();
  try {
    return await fn(capture.samples);
  } finally {
    capture.stop();
  }
}

async function ownerClient(): Promise<{ client: ApiClient; key: string; accountId: string }> {
  const account = await newAccount();
  return { client: api().withKey(account.ownerKey), key: account.ownerKey, accountId: account.accountId };
}

describe("connected: calls independent of line count", () => {
  it("creates, updates, conversions and receipts of 1, 10 and 100 lines make about as many calls (hold chunks aside)", {
    timeout: scaled(600_000),
  }, async () => {
    const { client, key } = await ownerClient();
    const { rows, table } = await captured((samples) =>
      lineCallsTable(`${client.baseUrl}/api/v3`, { authorization: `Bearer ${key}`, "content-type": "application/json" }, samples),
    );
    console.info(`DynamoDB calls per line count (calls (reads; hold chunks)):\n${table}`);
    const routes = rows.map((row) => row.route);
    for (const route of [
      "createInvoice",
      "updateInvoice",
      "createSalesOrder",
      "updateSalesOrder",
      "invoiceSalesOrder",
      "createEstimate",
      "updateEstimate",
      "convertEstimateToSalesOrder",
      "convertEstimateToInvoice",
      "createPurchaseOrder",
      "updatePurchaseOrder",
      "receivePurchaseOrder",
      "createStockTransfer",
      "updateStockTransfer",
    ]) {
      expect(routes).toContain(route);
    }
    for (const row of rows) {
      // What grows with lines is only the hold's chunks, each a transaction's worth of lines.
      expect(row.outsideChunks[100] - row.outsideChunks[1], `${row.route}: ${JSON.stringify(row.commands[100])}`).toBeLessThanOrEqual(4);
      expect(row.outsideChunks[10] - row.outsideChunks[1], row.route).toBeLessThanOrEqual(4);
      // A hold writes each chunk twice: as pending deltas, then folded once committed.
      expect(row.chunks[100], row.route).toBeLessThanOrEqual(16);
      for (const n of LINE_COUNTS) expect(row.commands[n].filter((c) => c === "Query").length, `${row.route} at ${n} lines`).toBeLessThanOrEqual(2);
    }
  });

  it("errors name their own line among 100: an unknown item, an archived one, another item's row", { timeout: scaled(120_000) }, async () => {
    const { client } = await ownerClient();
    const location = (await client.post("/locations", { name: "Lines", short_name: "L" }, { idempotencyKey: `lines-${Date.now()}` })).body;
    const customer = (await client.post("/customers", { name: "Lines customer" })).body;
    const ids = (await inBatches(100, (i) => client.post("/items", { name: `Line item ${i}`, price: "2", location_id: location.id }), 20)).map(
      (r) => r.body.id as string,
    );
    const stocked = ids[3]!;
    expect((await client.post(`/items/${stocked}/adjustments`, { location_id: location.id, quantity: 5 })).status).toBe(201);
    const otherRow = (await client.get(`/items/${stocked}/variations`, { include: "locations" })).body.data[0].locations[0].item_variation_location_id;
    expect((await client.patch(`/items/${ids[58]}`, { archived: true })).status).toBe(200);
    const lines = ids.map((item_id) => ({ item_id, quantity: 1 }));
    lines[57] = { item_id: "00000000-0000-4000-8000-000000000057", quantity: 1 };
    (lines[59] as Record<string, unknown>).item_variation_location_id = otherRow;
    const one = await captured(async (samples) => {
      await client.post("/invoices", { customer_id: customer.id, lines: [{ item_id: "00000000-0000-4000-8000-000000000001", quantity: 1 }] });
      const response = await client.post("/invoices", { customer_id: customer.id, lines });
      return { samples: [...samples], response };
    });
    expectValidation(one.response, "lines[57].item_id", "invalid_reference");
    expectValidation(one.response, "lines[58].item_id", "archived");
    expectValidation(one.response, "lines[59].item_variation_location_id", "invalid_reference");
    const [single, hundred] = one.samples.filter((s) => s.route === "createInvoice");
    // A minute's first request also resets its key's rate window: clock, not lines.
    const ownCalls = (sample: { calls: number; commands: string[] }) => sample.calls - rateWindowResets(sample.commands);
    expect(ownCalls(hundred!) - ownCalls(single!)).toBeLessThanOrEqual(2);
    expect(hundred!.commands.filter((c) => c === "Query")).toEqual([]);
  });

  it("items stored before line indexes are still resolved (read whole), and rows the ledger creates join the index", { timeout: scaled(120_000) }, async () => {
    const { client, accountId } = await ownerClient();
    const idem = () => `lines-${Math.random()}`;
    const main = (await client.post("/locations", { name: "Main", short_name: "M" }, { idempotencyKey: idem() })).body;
    const annex = (await client.post("/locations", { name: "Annex", short_name: "A" }, { idempotencyKey: idem() })).body;
    const customer = (await client.post("/customers", { name: "Index customer" })).body;
    const plain = (await client.post("/items", { name: "Plain", price: "3" })).body;
    const sized = (await client.post("/items", { name: "Sized", price: "4", variations: [{ values: { Size: "S" } }, { values: { Size: "M" } }] })).body;
    const legacy = (await client.post("/items", { name: "Legacy", price: "5", variations: [{ values: { Size: "S" } }, { values: { Size: "M" } }] })).body;
    const variations = async (itemId: string) => (await client.get(`/items/${itemId}/variations`, { include: "locations" })).body.data as any[];
    const [sizedS, sizedM] = await variations(sized.id);
    const [legacyS, legacyM] = await variations(legacy.id);
    // Rows created after the item: the ledger adds them to the item's index.
    for (const [itemId, variationId, locationId] of [
      [plain.id, undefined, main.id],
      [plain.id, undefined, annex.id],
      [sized.id, sizedS.id, main.id],
      [sized.id, sizedM.id, annex.id],
      [legacy.id, legacyS.id, main.id],
      [legacy.id, legacyM.id, annex.id],
    ]) {
      const adjusted = await client.post(`/items/${itemId}/adjustments`, {
        location_id: locationId,
        quantity: 10,
        ...(variationId ? { item_variation_id: variationId } : {}),
      });
      expect(adjusted.status, adjusted.text).toBe(201);
    }
    // An item as stored before line indexes existed: without them it is read whole.
    await db().entities.item.patch({ accountId, itemId: legacy.id }).remove(["variationIds", "rowIndex"]).go();
    const rowOf = (list: any[], variationId: string, locationId: string) =>
      list.find((v) => v.id === variationId).locations.find((l: any) => l.location_id === locationId).item_variation_location_id as number;
    const sizedNow = await variations(sized.id);
    const legacyNow = await variations(legacy.id);
    const created = await client.post("/sales-orders", {
      customer_id: customer.id,
      lines: [
        { item_id: sized.id, item_variation_location_id: rowOf(sizedNow, sizedM.id, annex.id), quantity: 1 },
        { item_id: legacy.id, item_variation_location_id: rowOf(legacyNow, legacyM.id, annex.id), quantity: 2 },
        { item_id: legacy.id, item_variation_location_id: rowOf(legacyNow, legacyS.id, main.id), quantity: 3 },
        { item_id: sized.id, item_variation_location_id: rowOf(sizedNow, sizedS.id, main.id), quantity: 4 },
      ],
    });
    expect(created.status, created.text).toBe(201);
    expect(created.body.lines.map((l: any) => [l.item_id, l.item_variation_location_id, l.variation_number, l.location_name, l.quantity])).toEqual([
      [sized.id, rowOf(sizedNow, sizedM.id, annex.id), 2, "Annex", 1],
      [legacy.id, rowOf(legacyNow, legacyM.id, annex.id), 2, "Annex", 2],
      [legacy.id, rowOf(legacyNow, legacyS.id, main.id), 1, "Main", 3],
      [sized.id, rowOf(sizedNow, sizedS.id, main.id), 1, "Main", 4],
    ]);
    // Without a row: a plain item stocked at two locations needs one; a variation item always does.
    const refused = await client.post("/invoices", {
      customer_id: customer.id,
      lines: [
        { item_id: sized.id, quantity: 1 },
        { item_id: legacy.id, quantity: 1 },
      ],
    });
    expectValidation(refused, "lines[0].item_variation_location_id", "required");
    expectValidation(refused, "lines[1].item_variation_location_id", "required");
    const unplaced = await client.post("/invoices", {
      customer_id: customer.id,
      lines: [
        { name: "Service", unit_price: "1" },
        { item_id: plain.id, quantity: 1 },
      ],
    });
    expectValidation(unplaced, "lines[1].item_variation_location_id", "required");
    // A row of another item, of the same item elsewhere, and a plain item's row at each location.
    const plainRows = (await variations(plain.id))[0].locations as any[];
    const transfer = await client.post("/stock-transfers", {
      origin_location_id: main.id,
      destination_location_id: annex.id,
      lines: [
        { item_id: plain.id, item_variation_location_id: plainRows.find((l) => l.location_id === main.id).item_variation_location_id, quantity: 1 },
        { item_id: sized.id, item_variation_location_id: rowOf(sizedNow, sizedM.id, annex.id), quantity: 1 },
        { item_id: legacy.id, item_variation_location_id: rowOf(sizedNow, sizedS.id, main.id), quantity: 1 },
      ],
    });
    expectValidation(transfer, "lines[1].item_variation_location_id", "invalid_reference");
    expectValidation(transfer, "lines[2].item_variation_location_id", "invalid_reference");
    expect(transfer.body.error.details.map((d: any) => d.param)).not.toContain("lines[0].item_variation_location_id");
  });
});
