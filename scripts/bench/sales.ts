/**
 * `npm run bench` scenarios of sales orders and invoices (spec part 2, sections 4.4 and 4.5):
 * the retrieve budget (authentication + one Query, at 100 lines), packing (one transaction),
 * invoicing an order, payments, and the 100-line invoice of 100 different items (the stock
 * hold path). Each scenario is `[name, run, iterations?]`.
 */
export type Call = (method: string, path: string, body?: unknown, idempotent?: boolean) => Promise<Record<string, any>>;
export type Scenario = [string, () => Promise<unknown>, number?];

export async function salesScenarios(call: Call, context: { locationId: string; customerId: string }): Promise<Scenario[]> {
  const { locationId, customerId } = context;
  const items: string[] = [];
  for (let i = 0; i < 100; i++) {
    const item = await call("POST", "/items", { name: `Sales bench ${i}`, price: "10", cost: "4", location_id: locationId });
    await call("POST", `/items/${item.id}/adjustments`, { location_id: locationId, quantity: 1_000_000 });
    items.push(item.id!);
  }
  const hundredLines = items.map((itemId) => ({ item_id: itemId, quantity: 1 }));
  const bigOrder = await call("POST", "/sales-orders", { customer_id: customerId, lines: hundredLines });
  const bigInvoice = await call("POST", "/invoices", { customer_id: customerId, lines: hundredLines });
  const packOrder = await call("POST", "/sales-orders", { customer_id: customerId, lines: [{ item_id: items[0], quantity: 100_000 }] });
  const invoiceOrder = await call("POST", "/sales-orders", { customer_id: customerId, lines: [{ item_id: items[1], quantity: 100_000 }] });
  const payable = await call("POST", "/invoices", {
    customer_id: customerId,
    lines: [{ name: "Retainer", unit_price: "1000000000", tax_rate: 0, tax_2_rate: 0 }],
  });
  return [
    [
      "createSalesOrder (2 lines)",
      () =>
        call("POST", "/sales-orders", {
          customer_id: customerId,
          lines: [
            { item_id: items[2], quantity: 1 },
            { name: "Labour", unit_price: "5" },
          ],
        }),
    ],
    ["getSalesOrder (100 lines)", () => call("GET", `/sales-orders/${bigOrder.id}`)],
    ["listSalesOrders (page of 20)", () => call("GET", "/sales-orders")],
    ["packSalesOrder (1 line)", () => call("POST", `/sales-orders/${packOrder.id}/fulfillments`, { lines: [{ id: packOrder.lines[0].id, quantity: 1 }] })],
    // At most 50 invoices per order: 3 warm-up requests + 20.
    [
      "invoiceSalesOrder (1 line)",
      () => call("POST", `/sales-orders/${invoiceOrder.id}/invoices`, { lines: [{ id: invoiceOrder.lines[0].id, quantity: 1 }] }),
      20,
    ],
    ["createInvoice (1 inventory line)", () => call("POST", "/invoices", { customer_id: customerId, lines: [{ item_id: items[3], quantity: 1 }] })],
    ["createInvoice (100 inventory lines)", () => call("POST", "/invoices", { customer_id: customerId, lines: hundredLines }), 10],
    ["getInvoice (100 lines)", () => call("GET", `/invoices/${bigInvoice.id}`)],
    ["createInvoicePayment", () => call("POST", `/invoices/${payable.id}/payments`, { amount: "1" })],
  ];
}

/**
 * How long after a 100-line invoice is answered its stock shows: the hold applies the stock
 * before the invoice's own write, so an items read right after the response already shows it.
 */
export async function stockVisibility(call: Call, context: { locationId: string; customerId: string }): Promise<string> {
  const items: string[] = [];
  for (let i = 0; i < 100; i++) {
    const item = await call("POST", "/items", { name: `Visibility ${i}`, location_id: context.locationId });
    await call("POST", `/items/${item.id}/adjustments`, { location_id: context.locationId, quantity: 10 });
    items.push(item.id!);
  }
  const started = performance.now();
  await call("POST", "/invoices", { customer_id: context.customerId, lines: items.map((item_id) => ({ item_id, quantity: 1 })) });
  const answered = performance.now();
  let visibleAfter = Number.NaN;
  for (;;) {
    const halves = await Promise.all([items.slice(0, 50), items.slice(50)].map((ids) => call("GET", `/items?ids=${ids.join(",")}`)));
    const all = halves.flatMap((page) => page.data as { quantity: number }[]);
    if (all.length === 100 && all.every((item) => item.quantity === 9)) {
      visibleAfter = performance.now() - answered;
      break;
    }
  }
  return `| 100-line invoice, 100 items | answered after ${(answered - started).toFixed(0)} ms | every item's on-hand shows it on the first read after the response (${visibleAfter.toFixed(0)} ms for that read) |\n`;
}
