import { describe, expect, it } from "vitest";
import type { Principal } from "../../lib/auth/permissions.js";
import { newDbUsage, withDbUsage } from "../../lib/db/metrics.js";
import { createParty } from "../../lib/domain/records/parties.js";
import { createInvoice, deleteInvoice, listInvoices } from "../../lib/domain/documents/invoices/service.js";
import { listCost, listCostViolations, LIST_COST_RATIO } from "../../scripts/bench/list-cost.js";
import { newAccount } from "../support/fixtures.js";
import { principalOf } from "../support/tasks.js";
import { scaled } from "../support/timeouts.js";

/**
 * Lists that do not read the account (README, "Lists"): every filter the spec lists for
 * document lists, and the last page, read as much at 600 invoices as at 60 (within 2x) when the
 * filter matches a bounded number of them; deep pages through deleted numbers and an assignee's
 * pages list exactly what the full list shows at those positions.
 */
describe("list cost by account size", () => {
  it("reads as much for every bounded filter and the last page at 600 invoices as at 60 (within 2x)", { timeout: scaled(240_000) }, async () => {
    let table = "";
    const result = await listCost({ sizes: [60, 600], print: (text) => (table += text) });
    console.info(table);
    expect(listCostViolations(result)).toEqual([]);
    for (const row of result.rows.filter((r) => r.bounded)) {
      expect(row.readCapacity[1], row.list).toBeLessThanOrEqual(LIST_COST_RATIO * Math.max(1, row.readCapacity[0]!));
      expect(row.calls[1], row.list).toBeLessThanOrEqual(row.calls[0]! + 1);
    }
    // A filter matching half the account reads its keys and facts, never its documents:
    // far below the 600 headers (~1.2 KB each, ~90 RCU) a read of the account costs.
    const half = result.rows.find((r) => r.list.startsWith("status_id (half match), page 1"))!;
    expect(half.readCapacity[1]).toBeLessThan(40);
    // A text search reads the names entries of the kind (keys, number, searchable text, dates).
    const names = result.rows.find((r) => r.list.startsWith("q name"))!;
    expect(names.readCapacity[1]).toBeLessThan(40);
  });

  it("pages deep through deleted numbers and an assignee's documents exactly as the full list orders them", { timeout: scaled(120_000) }, async () => {
    const account = await newAccount();
    const owner = principalOf(account);
    const staff: Principal = { ...owner, userId: account.ownerUserId, role: "staff", permissions: new Set(["invoices.list", "invoices.modify"]) };
    const customer = await createParty(owner, "customer", { name: "Deep Pages" } as never, undefined);
    const ids: string[] = [];
    for (let i = 0; i < 9; i++) {
      const created = await createInvoice(
        owner,
        { customer_id: customer.id, lines: [{ name: `Service ${i}`, unit_price: "10", quantity: 1 }] } as never,
        undefined,
      );
      ids.push((created.body as { id: string }).id);
    }
    // Delete numbers 9 (the newest), 5 and 2.
    for (const index of [8, 4, 1]) await deleteInvoice(owner, ids[index]!, undefined, undefined);
    for (const principal of [owner, staff]) {
      const full = await listInvoices(principal, "/api/v3/invoices", { page: 1, limit: 100 }, {} as never);
      expect(full.data.map((d) => d.invoice_number)).toEqual([8, 7, 6, 4, 3, 1]);
      for (const limit of [1, 2, 4]) {
        for (let page = 1; page <= Math.ceil(6 / limit) + 1; page++) {
          const usage = newDbUsage();
          const listed = await withDbUsage(usage, () => listInvoices(principal, "/api/v3/invoices", { page, limit }, {} as never));
          expect(listed.data).toEqual(full.data.slice((page - 1) * limit, page * limit));
          expect(listed.pagination).toEqual({ page, per_page: limit, total_pages: Math.ceil(6 / limit), total_records: 6 });
          expect(listed.has_more).toBe(page * limit < 6);
          expect(usage.calls).toBeLessThanOrEqual(3);
        }
      }
    }
    // A filter's deep pages too: the customer's invoices, two at a time.
    const filtered = await listInvoices(owner, "/api/v3/invoices", { page: 2, limit: 2 }, { customer_id: customer.id } as never);
    expect(filtered.data.map((d) => d.invoice_number)).toEqual([6, 4]);
    expect(filtered.pagination.total_records).toBe(6);
  });
});
