/**
 * Test support, imported only by the offline unit tests beside it (never by the application):
 * a sample stored sales line (an inventory line of item `item`, variation `v`, at `loc`, 10.0000
 * each, nothing invoiced, packed or shipped) that a test adjusts with `overrides`.
 */
import type { SalesLine } from "./sales/model.js";

export const sampleSalesLine = (overrides: Partial<SalesLine> = {}): SalesLine => ({
  id: "l1",
  lineType: "inventory",
  itemId: "item",
  variationId: "v",
  locationId: "loc",
  name: "Item",
  quantity: 1,
  quantityInvoiced: 0,
  quantityPacked: 0,
  quantityShipped: 0,
  unitPrice: "10.0000",
  unitCost: "4.0000",
  discountPercent: "0.000",
  taxRate: "0.000",
  tax2Rate: "0.000",
  variationValues: {},
  discountedUnitPrice: null,
  subtotal: "10.0000",
  ...overrides,
});
