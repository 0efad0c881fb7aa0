import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import type { Principal } from "../../lib/auth/permissions.js";
import type { TransactionBuilder } from "../../lib/db/transactions.js";
import { addDocumentActivity } from "../../lib/db/parties.js";
import { createInvoiceFromDraft } from "../../lib/domain/documents/invoices/service.js";
import { createSalesOrderFromDraft } from "../../lib/domain/documents/sales-orders/service.js";
import { useApiServer } from "../support/api.js";
import { figuresOf, salesWorld, stockOf, type SalesWorld } from "../support/sales.js";

/**
 * The domain entry points other features build documents with (estimate conversions):
 * `createInvoiceFromDraft` and `createSalesOrderFromDraft` write a complete document of their
 * kind from given lines and header values in ONE transaction together with the caller's own
 * items. When the caller's items fail their conditions, nothing is written at all: no number,
 * no stock, no customer figures.
 */
const api = useApiServer();
const world = () => salesWorld((key) => api().withKey(key));

const ownerOf = (w: SalesWorld): Principal => ({
  accountId: w.account.accountId,
  userId: w.account.ownerUserId,
  role: "owner",
  permissions: new Set(),
  assignedLocationId: null,
  timeZone: null,
  keyId: w.account.ownerKeyId,
  keyHash: "test",
  scopes: null,
});

/** A caller's item whose condition holds only if `documentId` exists (an estimate's revision check, say). */
const documentCheck = (accountId: string, documentId: string) => (tx: TransactionBuilder) =>
  tx.add(
    "estimate",
    tx.entities.document
      .check({ accountId, documentId })
      .where(({ documentId: id }, { exists }) => exists(id))
      .commit(),
  );

describe("connected: documents built from drafts", () => {
  it("an invoice from a draft keeps the draft's lines and writes with the caller's items, or not at all", async () => {
    const w = await world();
    const owner = ownerOf(w);
    const draft = {
      customerId: w.customer.id,
      name: "From estimate 7",
      purchaseOrderNumber: "EST-7",
      shippingFee: "5",
      discountPercent: "10",
      sourceEstimate: { id: randomUUID(), number: 7 },
      lines: [
        { itemId: w.item.id, name: "Widget (quoted)", description: "As quoted", quantity: 2, unitPrice: "11.5000", taxRate: "0", tax2Rate: "0" },
        { name: "Survey", quantity: 1, unitPrice: "30", taxRate: "5", tax2Rate: "0" },
      ],
    };
    // The caller's item fails: nothing is written, no number taken.
    const refused = await createInvoiceFromDraft(owner, draft, { extra: documentCheck(w.account.accountId, randomUUID()) });
    expect(refused.ok).toBe(false);
    if (!refused.ok) expect(refused.cancellation.labels).toEqual(["estimate"]);
    expect(await stockOf(w.client, w.item.id)).toMatchObject({ quantity: 50 });
    expect(await figuresOf(w.client, w.customer.id)).toMatchObject({ document_count: 0, lifetime_revenue_total: "0.0000" });
    expect((await w.client.get("/invoices")).body.pagination.total_records).toBe(0);

    const anchor = (await w.client.post("/sales-orders", { customer_id: w.customer.id, lines: [{ name: "Anchor", unit_price: 1 }] })).body;
    let seen: string | undefined;
    const written = await createInvoiceFromDraft(owner, draft, {
      extra: (tx, header) => {
        seen = header.documentId;
        documentCheck(w.account.accountId, anchor.id)(tx);
      },
    });
    expect(written.ok).toBe(true);
    if (!written.ok) return;
    const invoice = written.result.body as Record<string, any>;
    expect(seen).toBe(invoice.id);
    expect(written.result.etag).toBe(`"${invoice.revision}"`);
    expect(invoice).toMatchObject({
      invoice_number: 1,
      status_id: 9,
      name: "From estimate 7",
      purchase_order_number: "EST-7",
      source_estimate: { id: draft.sourceEstimate.id, estimate_number: 7 },
      // 23 + 30 = 53, -10% = 47.7; tax 5% of 27 = 1.35; shipping 5
      subtotal: "47.7000",
      tax: "1.3500",
      total: "54.0500",
    });
    expect(invoice.lines.map((l: any) => [l.name, l.description, l.unit_price])).toEqual([
      ["Widget (quoted)", "As quoted", "11.5000"],
      ["Survey", null, "30.0000"],
      ["Discount", null, "-5.3000"],
    ]);
    expect((await w.client.get(`/invoices/${invoice.id}`)).body).toEqual(invoice);
    expect(await stockOf(w.client, w.item.id)).toMatchObject({ quantity: 48 });
    expect(await figuresOf(w.client, w.customer.id)).toMatchObject({ document_count: 2, lifetime_revenue_total: "54.0500" });

    // A caller that writes the customer itself (a prospect's conversion) applies the activity there.
    const own = await createInvoiceFromDraft(
      owner,
      { ...draft, lines: [draft.lines[1]!] },
      {
        customerActivity: "caller",
        extra: (tx, _header, _lines, activity) => {
          expect(activity).toMatchObject({ documents: 1, revenueMinor: expect.any(Number) });
          addDocumentActivity(tx, { accountId: w.account.accountId, partyId: w.customer.id }, activity);
        },
      },
    );
    expect(own.ok).toBe(true);
    expect((await figuresOf(w.client, w.customer.id)).document_count).toBe(3);
  });

  it("a sales order from a draft reserves its quantities in the caller's transaction", async () => {
    const w = await world();
    const owner = ownerOf(w);
    const draft = {
      customerId: w.customer.id,
      locationId: w.location,
      sourceEstimate: { id: randomUUID(), number: 3 },
      lines: [{ itemId: w.item.id, quantity: 6, unitPrice: "10" }],
    };
    const refused = await createSalesOrderFromDraft(owner, draft, { extra: documentCheck(w.account.accountId, randomUUID()) });
    expect(refused.ok).toBe(false);
    expect(await stockOf(w.client, w.item.id)).toMatchObject({ reserved: 0 });
    const written = await createSalesOrderFromDraft(owner, draft);
    expect(written.ok).toBe(true);
    if (!written.ok) return;
    expect(written.result.body).toMatchObject({
      sales_order_number: 1,
      status_id: 29,
      source_estimate: { id: draft.sourceEstimate.id, estimate_number: 3 },
      location_id: w.location,
    });
    expect(await stockOf(w.client, w.item.id)).toMatchObject({ reserved: 6 });
  });
});
