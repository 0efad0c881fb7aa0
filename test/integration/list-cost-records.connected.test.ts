import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import type { Principal } from "../../lib/auth/permissions.js";
import { newDbUsage, withDbUsage } from "../../lib/db/metrics.js";
import { readToOffset } from "../../lib/db/offset-page.js";
import { readItem } from "../../lib/db/items.js";
import { readParty } from "../../lib/db/parties.js";
import { db } from "../../lib/db/service.js";
import { createItem, listItems } from "../../lib/domain/records/items.js";
import { createItemCategory } from "../../lib/domain/records/item-categories.js";
import { itemCategoryCreateBody } from "../../lib/schemas/item-categories.js";
import { createParty, listParties } from "../../lib/domain/records/parties.js";
import { nameSortKey } from "../../lib/core/name-keys.js";
import { newAccount } from "../support/fixtures.js";
import { principalOf } from "../support/tasks.js";
import { scaled } from "../support/timeouts.js";

/**
 * Name-ordered lists (customers, items) do not read the records before their page (README,
 * "Lists"): the last page skips over name entries and shows exactly the records at those
 * positions; a text search reads name entries, not records. Prints RCU at 60 and 600 records,
 * with what reading every record up to the page (the former path) costs.
 */
const LIMIT = 20;
const RARE = 5;

interface Fixture {
  owner: Principal;
  size: number;
  /** Every name, in list order. */
  names: string[];
}

const nameOf = (i: number) => (i < RARE ? `Rare ${String(i).padStart(4, "0")}` : `Record ${String(i).padStart(4, "0")}`);
/** Written in a shuffled order, so that name order is not write order. */
const shuffled = (size: number) => Array.from({ length: size }, (_, i) => i).sort((a, b) => ((a * 7919) % size) - ((b * 7919) % size));

/** An account with `size` customers and `size` items: one of each created through the domain, the rest cloned from it in bulk. */
async function fixture(size: number): Promise<Fixture> {
  const account = await newAccount();
  const owner = principalOf(account);
  const customer = await createParty(
    owner,
    "customer",
    { name: nameOf(0), office_email: "office@example.com", billing_address1: "1 Long Street", vat_number: "GB123456789" } as never,
    undefined,
  );
  const party = (await readParty(account.accountId, (customer as { id: string }).id))!;
  const created = await createItem(
    owner,
    { name: nameOf(0), sku: "RARE-0000", description: "A record of ordinary size, with a description." } as never,
    undefined,
  );
  const item = (await readItem(account.accountId, (created as { id: string }).id))!;
  const parties = [];
  const items = [];
  for (const i of shuffled(size)) {
    if (i === 0) continue;
    const name = nameOf(i);
    parties.push({ ...party, partyId: randomUUID(), number: party.number + i, name, nameKey: nameSortKey(name) });
    const sku = i < RARE ? `RARE-${i}` : `SKU-${i}`;
    items.push({ ...item, itemId: randomUUID(), number: item.number + i, name, nameKey: nameSortKey(name), sku, skuKey: sku.toLowerCase() });
  }
  for (let i = 0; i < parties.length; i += 500)
    await db()
      .entities.party.put(parties.slice(i, i + 500) as never)
      .go();
  for (let i = 0; i < items.length; i += 500)
    await db()
      .entities.item.put(items.slice(i, i + 500) as never)
      .go();
  await db()
    .entities.accountCounters.update({ accountId: account.accountId })
    .add({ customerCount: size - 1 })
    .go();
  await db()
    .entities.inventoryCounters.update({ accountId: account.accountId })
    .add({ items_00: size - 1 })
    .go();
  const names = Array.from({ length: size }, (_, i) => nameOf(i)).sort((a, b) => (nameSortKey(a) < nameSortKey(b) ? -1 : 1));
  return { owner, size, names };
}

async function measure<T>(run: () => Promise<T>): Promise<{ result: T; readCapacity: number; calls: number }> {
  const usage = newDbUsage();
  const result = await withDbUsage(usage, run);
  return { result, readCapacity: usage.readCapacity, calls: usage.calls };
}

interface Row {
  list: string;
  readCapacity: number[];
}

describe("name-ordered list cost by account size", () => {
  it("reads name entries, not records, before the last page of customers and items and for q", { timeout: scaled(240_000) }, async () => {
    const rows: Row[] = [
      { list: "customers, last page", readCapacity: [] },
      { list: "customers, last page, before (every record up to it)", readCapacity: [] },
      { list: "items, last page", readCapacity: [] },
      { list: "items, last page, before (every record up to it)", readCapacity: [] },
      { list: "customers, q (5 match)", readCapacity: [] },
      { list: "items, q (5 match)", readCapacity: [] },
      { list: "customers, every record of the scope (what q read before)", readCapacity: [] },
    ];
    for (const size of [60, 600]) {
      const { owner, names } = await fixture(size);
      const last = Math.ceil(size / LIMIT);
      const expected = names.slice((last - 1) * LIMIT, last * LIMIT);
      const accountId = owner.accountId;

      const customers = await measure(() => listParties(owner, "customer", "/api/v3/customers", { page: last, limit: LIMIT }, undefined));
      expect(customers.result.data.map((c) => c.name)).toEqual(expected);
      expect(customers.result.pagination.total_records).toBe(size);
      rows[0]!.readCapacity.push(customers.readCapacity);
      const partiesBefore = await measure(() =>
        readToOffset((last - 1) * LIMIT, LIMIT, (cursor, want) =>
          db().entities.party.query.byName({ accountId, kind: "customer" }).go({ cursor, limit: want }),
        ),
      );
      expect(partiesBefore.result.map((p) => p.name)).toEqual(expected);
      rows[1]!.readCapacity.push(partiesBefore.readCapacity);

      const items = await measure(() => listItems(owner, "/api/v3/items", { page: last, limit: LIMIT }, {}));
      expect(items.result.data.map((i) => i.name)).toEqual(expected);
      rows[2]!.readCapacity.push(items.readCapacity);
      const itemsBefore = await measure(() =>
        readToOffset((last - 1) * LIMIT, LIMIT, (cursor, want) =>
          db()
            .entities.item.query.byName({ accountId })
            .where(({ archived, sold }, { eq }) => `${eq(archived, false)} AND ${eq(sold, false)}`)
            .go({ cursor, limit: want }),
        ),
      );
      expect(itemsBefore.result.map((i) => i.name)).toEqual(expected);
      rows[3]!.readCapacity.push(itemsBefore.readCapacity);

      const rareNames = names.filter((n) => n.startsWith("Rare"));
      const customerSearch = await measure(() => listParties(owner, "customer", "/api/v3/customers", { page: 1, limit: LIMIT }, "rare"));
      expect(customerSearch.result.data.map((c) => c.name)).toEqual(rareNames);
      expect(customerSearch.result.pagination.total_records).toBe(RARE);
      rows[4]!.readCapacity.push(customerSearch.readCapacity);
      const itemSearch = await measure(() => listItems(owner, "/api/v3/items", { page: 1, limit: LIMIT }, { q: "rare" }));
      expect(itemSearch.result.data.map((i) => i.name)).toEqual(rareNames);
      expect(itemSearch.result.pagination.total_records).toBe(RARE);
      rows[5]!.readCapacity.push(itemSearch.readCapacity);
      const everyParty = await measure(() => db().entities.party.query.byName({ accountId, kind: "customer" }).go({ pages: "all" }));
      expect(everyParty.result.data).toHaveLength(size);
      rows[6]!.readCapacity.push(everyParty.readCapacity);
    }
    console.info(["RCU by account size (60 | 600 records, limit 20)", ...rows.map((r) => `${r.list}: ${r.readCapacity.join(" | ")}`)].join("\n"));
    // A deep page skips over name entries (about 200 bytes each, keys included), never records:
    // under 60% of what reading every record up to the page costs. (Not within 2x of the small
    // account: the skip still grows with the offset; see the README, "Lists".)
    for (const [after, before] of [
      [rows[0]!, rows[1]!],
      [rows[2]!, rows[3]!],
    ] as const) {
      expect(after.readCapacity[1], after.list).toBeLessThan(0.6 * before.readCapacity[1]!);
      expect(after.readCapacity[0], after.list).toBeLessThanOrEqual(before.readCapacity[0]! + 1);
    }
    // A search reads the scope's name entries (keys, ids, names, searched keys, number), not its records.
    for (const search of [rows[4]!, rows[5]!]) expect(search.readCapacity[1], search.list).toBeLessThan(0.6 * rows[6]!.readCapacity[1]!);
  });
  it("pages deep exactly as the full list orders: items under each status filter and a category, an owner's customers, q", {
    timeout: scaled(120_000),
  }, async () => {
    const account = await newAccount();
    const owner = principalOf(account);
    const staff: Principal = { ...owner, role: "staff", permissions: new Set() };
    const names = ["delta", "Alpha", "charlie", "Bravo", "echo", "alpha", "Foxtrot", "golf"];
    const category = await createItemCategory(owner, itemCategoryCreateBody().parse({ name: "Half", inventory_type: "quantity" }), undefined);
    const itemIds: string[] = [];
    for (const [i, name] of names.entries()) {
      await createParty(owner, "customer", { name: `${name} customer` } as never, undefined);
      const body = { name: `${name} item`, sku: `S-${name}`, ...(i % 2 === 0 ? { category_id: category.id } : {}) };
      itemIds.push(((await createItem(owner, body as never, undefined)) as { id: string }).id);
    }
    // Archived, sold, and both, interleaved in name order.
    await db().entities.item.patch({ accountId: account.accountId, itemId: itemIds[1]! }).set({ archived: true }).go();
    await db().entities.item.patch({ accountId: account.accountId, itemId: itemIds[2]! }).set({ sold: true }).go();
    await db().entities.item.patch({ accountId: account.accountId, itemId: itemIds[6]! }).set({ archived: true, sold: true }).go();
    const itemQueries = [
      {},
      { archived: "all" },
      { include_sold: "true" },
      { archived: "all", include_sold: "true" },
      { q: "a" },
      { q: "a", archived: "all" },
      { category_id: category.id },
      { category_id: category.id, archived: "all", include_sold: "true" },
    ];
    for (const query of itemQueries) {
      const full = (await listItems(owner, "/api/v3/items", { page: 1, limit: 100 }, query)).data.map((i) => i.id);
      expect(full.length, JSON.stringify(query)).toBeGreaterThanOrEqual(2);
      for (const limit of [1, 2, 3]) {
        for (let page = 1; page <= Math.ceil(full.length / limit) + 1; page++) {
          const listed = await listItems(owner, "/api/v3/items", { page, limit }, query);
          expect(
            listed.data.map((i) => i.id),
            `${JSON.stringify(query)} page ${page} of ${limit}`,
          ).toEqual(full.slice((page - 1) * limit, page * limit));
        }
      }
    }
    for (const [principal, q] of [
      [owner, undefined],
      [staff, undefined],
      [owner, "a"],
      [staff, "customer"],
    ] as const) {
      const full = (await listParties(principal, "customer", "/api/v3/customers", { page: 1, limit: 100 }, q)).data.map((c) => c.name);
      expect(full.length).toBeGreaterThan(2);
      for (const limit of [1, 3]) {
        for (let page = 1; page <= Math.ceil(full.length / limit) + 1; page++) {
          const listed = await listParties(principal, "customer", "/api/v3/customers", { page, limit }, q);
          expect(
            listed.data.map((c) => c.name),
            `${principal.role} ${q} page ${page} of ${limit}`,
          ).toEqual(full.slice((page - 1) * limit, page * limit));
          expect(listed.pagination.total_records).toBe(full.length);
        }
      }
    }
  });
});
