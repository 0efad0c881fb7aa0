import { MAX_DOCUMENT_LINE_BYTES } from "../../lib/db/document-lines.js";
import { randomBytes, randomUUID } from "node:crypto";
import { QueryCommand } from "@aws-sdk/lib-dynamodb";
import { describe, expect, it } from "vitest";
import type { Principal } from "../../lib/auth/permissions.js";
import { getDocumentClient } from "../../lib/db/client.js";
import { newDbUsage, withDbUsage } from "../../lib/db/metrics.js";
import { db } from "../../lib/db/service.js";
import { tableName } from "../../lib/db/table.js";
import { writeTransaction } from "../../lib/db/transactions.js";
import {
  ESTIMATE_CONVERSION_LABEL,
  addEstimateConversion,
  createEstimate,
  getEstimate,
  updateEstimate,
  visibleEstimate,
} from "../../lib/domain/documents/estimates/service.js";
import { conversionSource, type ConversionKind } from "../../lib/domain/documents/estimates/model.js";
import { nowIso } from "../../lib/core/clock.js";

/** What a conversion reads: the visible estimate's values in the new document's shape. */
const readEstimateForConversion = async (principal: Principal, id: string, kind: ConversionKind) => {
  const tree = await visibleEstimate(principal, id);
  return conversionSource(tree.header, tree.lines, kind, nowIso());
};
import { useApiServer, type ApiClient } from "../support/api.js";
import { expectError, expectValidation } from "../support/assertions.js";
import { idempotencyKey, newAccount, type TestAccount } from "../support/fixtures.js";
import { scaled } from "../support/timeouts.js";

/**
 * Large estimates, concurrency and conversion (spec part 2, sections 3.3 and 4.3; architecture
 * sections 5 and 8): a 500-line estimate is ONE transaction and ONE Query request even with
 * 4,000-character descriptions; lines beyond the document limits are refused with nothing
 * stored; parallel writers never see a 5xx; conversion closes the estimate in the new
 * document's transaction.
 */
const api = useApiServer();

const WORDS =
  "the of and to in is you that it he was for on are as with his they at be this have from or one had by word but not what all were we when your can said there use an each which she do how their if will up other about out many then them these so some her would make like him into time has look two more write go see number no way could people my than first water been call who its now find long down day did get come made may part cable steel brass fitting valve panel".split(
    " ",
  );
/** Natural-language-like text: words drawn at random (compresses like prose, not like a repeated phrase). */
function prose(length: number): string {
  let out = "";
  while (out.length < length) out += `${WORDS[Math.floor(Math.random() * WORDS.length)]}${Math.random() < 0.1 ? ". " : " "}`;
  return `${out.slice(0, length - 1)}.`; // ends in a letter: texts are trimmed
}

function ownerPrincipal(account: TestAccount): Principal {
  return {
    accountId: account.accountId,
    userId: account.ownerUserId,
    role: "owner",
    permissions: new Set(),
    assignedLocationId: null,
    timeZone: null,
    keyId: account.ownerKeyId,
    keyHash: "test",
    scopes: null,
  };
}

/** Runs `fn` counting its DynamoDB requests and consumed capacity. */
async function measured<T>(fn: () => Promise<T>) {
  const usage = newDbUsage();
  const started = performance.now();
  const value = await withDbUsage(usage, fn);
  return { value, usage, ms: performance.now() - started };
}

/** Creates items in parallel batches (the HTTP API, like any client). */
async function createItems(client: ApiClient, bodies: Record<string, unknown>[]): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < bodies.length; i += 10) {
    const batch = await Promise.all(bodies.slice(i, i + 10).map((body) => client.post("/items", body)));
    for (const response of batch) {
      expect(response.status, response.text).toBe(201);
      ids.push(response.body.id);
    }
  }
  return ids;
}

async function world() {
  const account = await newAccount();
  const client = api().withKey(account.ownerKey);
  const customer = (await client.post("/customers", { name: "Big Buyer", tax_rate1: 5 })).body;
  return { account, client, customer };
}

const sequenceOf = async (accountId: string) => (await db().entities.sequence.get({ accountId, name: "estimate" }).go({ consistent: true })).data ?? null;

describe("connected: large estimates, concurrency and conversion", () => {
  it("writes a 500-line estimate with 4,000-character descriptions in one transaction and reads it back with one Query", {
    timeout: scaled(120_000),
  }, async () => {
    const w = await world();
    // 50 items, each on every 50th line: repeats are ~220 KB apart, beyond what compression can
    // match (32 KB), so the lines weigh what 500 different descriptions weigh (setup stays fast).
    const items = await createItems(
      w.client,
      Array.from({ length: 50 }, (_, i) => ({ name: `Part ${i}`, sku: `P-${i}`, description: prose(4000), price: "2.5", cost: "1.25" })),
    );
    const itemIds = Array.from({ length: 500 }, (_, i) => items[i % 50]!);
    const body = { customer_id: w.customer.id, name: "Fit-out", lines: itemIds.map((id, i) => ({ item_id: id, quantity: (i % 7) + 1 })) };
    const key = idempotencyKey();
    const started = performance.now();
    const created = await w.client.post("/estimates", body, { idempotencyKey: key });
    const createMs = performance.now() - started;
    expect(created.status, created.text.slice(0, 500)).toBe(201);
    const estimate = created.body;
    expect(estimate.lines).toHaveLength(500);
    expect(estimate.lines.map((l: any) => l.item_id)).toEqual(itemIds);
    expect(estimate.lines.map((l: any) => l.position)).toEqual(itemIds.map((_, i) => i));
    expect(estimate.lines[499].description).toHaveLength(4000);
    expect(Buffer.byteLength(created.text)).toBeGreaterThan(2_000_000);

    // Header and pages: one partition, read whole by ONE Query request (no LastEvaluatedKey).
    const header = (await db().entities.document.get({ accountId: w.account.accountId, documentId: estimate.id }).go({ consistent: true })).data!;
    const raw = await getDocumentClient().send(
      new QueryCommand({
        TableName: tableName(),
        KeyConditionExpression: "pk = :pk",
        ExpressionAttributeValues: { ":pk": `$inv#accountid_${w.account.accountId}#documentid_${estimate.id}` },
        ConsistentRead: true,
      }),
    );
    expect(raw.LastEvaluatedKey).toBeUndefined();
    expect(raw.Count).toBe(1 + header.pageCount);
    expect(header.pageCount).toBeLessThanOrEqual(3);
    const retrieve = await measured(() => getEstimate(ownerPrincipal(w.account), estimate.id));
    expect(retrieve.usage.commands).toEqual(["Query"]);
    expect(retrieve.value.body).toEqual(estimate);
    console.info(
      `500-line estimate (4,000-character descriptions): create ${createMs.toFixed(0)} ms over HTTP, response ${(Buffer.byteLength(created.text) / 1024).toFixed(0)} KB, ` +
        `stored in ${header.pageCount} page(s); retrieve ${retrieve.usage.commands.join("+")} ${retrieve.usage.readCapacity} RCU ${retrieve.ms.toFixed(0)} ms`,
    );

    // The stored outcome (compressed, in parts) replays the very same response.
    const replay = await w.client.post("/estimates", body, { idempotencyKey: key });
    expect(replay.status).toBe(201);
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    expect(replay.headers.get("etag")).toBe(`"${estimate.revision}"`);
    expect(replay.text).toBe(created.text);
    expect((await sequenceOf(w.account.accountId))?.value).toBe(1);

    // The same create through the domain, to read its write units (the request's log line reports the same).
    const write = await measured(() => createEstimate(ownerPrincipal(w.account), { ...body, lines: body.lines.map((l) => ({ ...l })) } as never, undefined));
    const transactions = write.usage.commands.filter((c) => c === "TransactWriteItems").length;
    expect(transactions).toBe(1);
    console.info(
      `500-line estimate create (domain): ${write.usage.calls} DynamoDB calls, ${transactions} transaction, ${write.usage.writeCapacity} WCU, ${write.usage.readCapacity} RCU, ${write.ms.toFixed(0)} ms`,
    );

    // A header-only update rewrites it atomically and keeps every line.
    const renamed = await w.client.patch(`/estimates/${estimate.id}`, { name: "Fit-out v2" }, { headers: { "if-match": estimate.revision } });
    expect(renamed.status, renamed.text.slice(0, 300)).toBe(200);
    expect(renamed.body.lines.map((l: any) => l.id)).toEqual(estimate.lines.map((l: any) => l.id));
    // Neither the lines nor their pricing change: the pages stay, only the header is written.
    const headerOnly = await measured(() => updateEstimate(ownerPrincipal(w.account), estimate.id, { attention: "Site office" }, undefined, undefined));
    expect(headerOnly.usage.writeCapacity).toBeLessThan(30);
    expect(headerOnly.value.body.lines).toEqual(renamed.body.lines);

    // A decline repeated with a new key writes nothing: its large response is stored on its own, then replayed.
    expect((await w.client.post(`/estimates/${estimate.id}/decline`, {})).status).toBe(200);
    const repeatKey = idempotencyKey();
    const repeat = await w.client.post(`/estimates/${estimate.id}/decline`, {}, { idempotencyKey: repeatKey });
    expect(repeat.status).toBe(200);
    const replayedRepeat = await w.client.post(`/estimates/${estimate.id}/decline`, {}, { idempotencyKey: repeatKey });
    expect(replayedRepeat.headers.get("idempotent-replayed")).toBe("true");
    expect(replayedRepeat.text).toBe(repeat.text);
    const { data: parts } = await db()
      .entities.idempotencyPart.scan.where(({ accountId }, { eq }) => eq(accountId, w.account.accountId))
      .go({ pages: "all" });
    expect(parts.length).toBeGreaterThanOrEqual(2);
  });

  it("refuses lines over the document limits (422 too_large on lines), storing nothing and consuming no number", { timeout: scaled(60_000) }, async () => {
    const w = await world();
    // Incompressible descriptions: 150 lines of 10,000 random characters are ~1.1 MB compressed.
    const noise = await createItems(
      w.client,
      Array.from({ length: 150 }, (_, i) => ({ name: `Noise ${i}`, description: randomBytes(7500).toString("base64") })),
    );
    const stored = await w.client.post("/estimates", { customer_id: w.customer.id, lines: noise.map((id) => ({ item_id: id })) });
    expectValidation(stored, "lines", "too_large");
    expect(stored.body.error.message).toContain(`at most ${MAX_DOCUMENT_LINE_BYTES / 1024} KB`);
    // 500 lines of one item with a 10,000-character description of 3-byte characters: 15 MB of JSON.
    const [wide] = await createItems(w.client, [{ name: "Wide", description: "€".repeat(10_000) }]);
    const json = await w.client.post("/estimates", { customer_id: w.customer.id, lines: Array.from({ length: 500 }, () => ({ item_id: wide })) });
    expectValidation(json, "lines", "too_large");
    const preview = await w.client.post("/estimates/preview", { customer_id: w.customer.id, lines: Array.from({ length: 500 }, () => ({ item_id: wide })) });
    expect(preview.body.errors).toEqual([{ code: "too_large", param: "lines", message: expect.any(String) }]);
    expect(await sequenceOf(w.account.accountId)).toBeNull();
    expect((await w.client.get("/estimates")).body.pagination.total_records).toBe(0);
    expect((await w.client.get(`/customers/${w.customer.id}`)).body.document_count).toBe(0);
  });

  it("numbers parallel creates without gaps and serves 100 parallel updates of one estimate without a 5xx", { timeout: scaled(90_000) }, async () => {
    const w = await world();
    const body = { customer_id: w.customer.id, lines: [{ name: "Consulting", unit_price: "100" }] };
    const creates = await Promise.all(Array.from({ length: 20 }, () => w.client.post("/estimates", body)));
    expect(creates.map((r) => r.status)).toEqual(Array(20).fill(201));
    expect(creates.map((r) => r.body.estimate_number).sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    expect(await sequenceOf(w.account.accountId)).toMatchObject({ value: 20, count: 20 });
    expect((await w.client.get(`/customers/${w.customer.id}`)).body.document_count).toBe(20);

    const target = creates[0]!.body;
    const updates = await Promise.all(
      Array.from({ length: 100 }, (_, i) =>
        w.client.patch(`/estimates/${target.id}`, { attention: `A${i}`, lines: [{ name: "Consulting", unit_price: String(i + 1) }] }),
      ),
    );
    expect(updates.map((r) => r.status)).toEqual(Array(100).fill(200));
    const final = (await w.client.get(`/estimates/${target.id}`)).body;
    expect(updates.some((r) => r.body.revision === final.revision)).toBe(true);
    expect(final.lines).toHaveLength(1);

    const guarded = await Promise.all(
      Array.from({ length: 10 }, (_, i) => w.client.patch(`/estimates/${target.id}`, { name: `N${i}` }, { headers: { "if-match": final.revision } })),
    );
    expect(guarded.filter((r) => r.status === 200)).toHaveLength(1);
    for (const refused of guarded.filter((r) => r.status !== 200)) expectError(refused, 409, "mobile_mutation_conflict");
    const declines = await Promise.all(Array.from({ length: 10 }, () => w.client.post(`/estimates/${target.id}/decline`, {})));
    expect(declines.map((r) => r.status)).toEqual(Array(10).fill(200));
    expect(new Set(declines.map((r) => r.body.revision)).size).toBe(1);
  });

  it("closes an estimate as converted in the converting document's transaction, once", async () => {
    const w = await world();
    const estimate = (
      await w.client.post("/estimates", { customer_id: w.customer.id, discount_percent: 10, shipping_fee: 5, lines: [{ name: "Design", unit_price: "200" }] })
    ).body;
    const principal = ownerPrincipal(w.account);
    const source = await readEstimateForConversion(principal, estimate.id, "invoice");
    expect(source.header).toMatchObject({
      partyId: w.customer.id,
      partyName: "Big Buyer",
      partyKind: "customer",
      assignedUserId: w.account.ownerUserId,
      discountPercent: "10.000",
      shippingFee: "5.0000",
      subtotal: "180.0000",
      total: estimate.total,
    });
    expect(source.lines).toHaveLength(1);
    expect(source.lines[0]).toMatchObject({ lineType: "service", name: "Design", unitPrice: "200.0000", sourceLineId: estimate.lines[0].id });
    expect(source.lines[0]!.id).not.toBe(estimate.lines[0].id);

    // A change after the read makes the close fail (the converter reads again).
    await w.client.patch(`/estimates/${estimate.id}`, { attention: "changed" });
    const stale = await writeTransaction((tx) => {
      addEstimateConversion(tx, source.estimate, { kind: "invoice", id: randomUUID(), number: 1 });
    });
    expect(stale?.failed(ESTIMATE_CONVERSION_LABEL)).toBe(true);

    const fresh = await readEstimateForConversion(principal, estimate.id, "invoice");
    const invoiceId = randomUUID();
    let closed: Record<string, unknown> | undefined;
    const committed = await writeTransaction((tx) => {
      closed = addEstimateConversion(tx, fresh.estimate, { kind: "invoice", id: invoiceId, number: 41 });
    });
    expect(committed).toBeNull();
    expect(closed).toMatchObject({ status: "closed", statusId: 6 });
    const shown = (await w.client.get(`/estimates/${estimate.id}`)).body;
    expect(shown).toMatchObject({
      status_id: 6,
      status: "Closed",
      can_edit: false,
      edit_block_reason: "estimate_not_open",
      converted_document: { id: invoiceId, kind: "invoice", number: 41 },
    });
    expect(shown.lines).toEqual(estimate.lines);
    expect((await w.client.get("/estimates", { status_id: 6 })).body.data.map((e: any) => e.id)).toEqual([estimate.id]);
    expectError(await w.client.patch(`/estimates/${estimate.id}`, { name: "x" }), 409, "estimate_update_not_allowed");
    expectError(await w.client.post(`/estimates/${estimate.id}/decline`, {}), 409, "estimate_decline_not_allowed");
    expectError(await w.client.request("DELETE", `/estimates/${estimate.id}`), 409, "estimate_delete_not_allowed");
    await expect(readEstimateForConversion(principal, estimate.id, "invoice")).rejects.toMatchObject({
      statusCode: 409,
      code: "estimate_conversion_not_allowed",
    });
    await expect(readEstimateForConversion(principal, estimate.id, "sales_order")).rejects.toMatchObject({
      statusCode: 409,
      code: "estimate_sales_order_conversion_not_allowed",
    });
    // A second close of the same read (a concurrent converter) fails its condition: converted once.
    const twice = await writeTransaction((tx) => {
      addEstimateConversion(tx, fresh.estimate, { kind: "sales_order", id: randomUUID(), number: 1 });
    });
    expect(twice?.failed(ESTIMATE_CONVERSION_LABEL)).toBe(true);
  });
});
