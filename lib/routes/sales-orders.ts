import { API_PREFIX, route, type RouteDefinition } from "./define.js";
import { pageQuery } from "../schemas/common.js";
import { invoiceList, invoiceResource } from "../schemas/invoices.js";
import { packBody, salesOrderFulfillment, shipBody } from "../schemas/sales-documents.js";
import {
  deletedSalesOrder,
  salesOrderCreateBody,
  salesOrderFulfillmentList,
  salesOrderFulfillmentPath,
  salesOrderInvoiceBody,
  salesOrderList,
  salesOrderListQuery,
  salesOrderPath,
  salesOrderResource,
  salesOrderUpdateBody,
} from "../schemas/sales-orders.js";

const base = `${API_PREFIX}/sales-orders`;
const one = `${base}/{sales_order_id}`;
const SAMPLE_CUSTOMER = "00000000-0000-4000-8000-000000000012";
const SAMPLE_LOCATION = "00000000-0000-4000-8000-000000000001";
const SAMPLE_ITEM = "00000000-0000-4000-8000-000000000021";
const SAMPLE_LINE = "00000000-0000-4000-8000-000000000031";
const visibility =
  "Users without records.view_all see only the sales orders whose salesperson they are; others are 404 resource_missing. A user assigned to a location sees only those at that location (or at none): others are 404 resource_missing, for reads and writes alike.";

/** Endpoint group `sales-orders` (spec part 2, sections 2.4, 3.4 and 4.4; architecture section 8). */
export const salesOrderRoutes: RouteDefinition[] = [
  route({
    operationId: "createSalesOrder",
    method: "POST",
    path: base,
    group: "sales-orders",
    summary: "Create a sales order (Open)",
    description:
      "The number comes from the account's sales-order sequence, saved with the order (a failed request consumes none); the key's user is the salesperson. Lines (1-100): inventory lines take name, description, unit, SKU, cost and the item's current selling price (a unit_price on an inventory line applies only when the user holds prices.modify; without it the item's price applies), service lines need name and unit_price; tax rates default to the customer's. discount_percent adds one generated discount line; shipping_cost needs costs.view (else 403). A location-restricted user's orders are at their location. Each inventory line's quantity is reserved at its stock row (the item's quantity_reserved) in the same write. Returns the order with ETag.",
    scopes: ["sales_orders:write"],
    permissions: ["sales_orders.modify"],
    idempotency: "optional",
    request: { body: salesOrderCreateBody },
    responses: { 201: salesOrderResource },
    headers: ["ETag"],
    example: {
      body: {
        customer_id: SAMPLE_CUSTOMER,
        location_id: SAMPLE_LOCATION,
        issue_date: "2026-11-23",
        purchase_order_number: "CUST-PO-881",
        lines: [
          { item_id: SAMPLE_ITEM, quantity: 4 },
          { name: "Installation", unit_price: "85.0000" },
        ],
        shipping_fee: "12.0000",
        discount_percent: 5,
      },
    },
  }),
  route({
    operationId: "listSalesOrders",
    method: "GET",
    path: base,
    group: "sales-orders",
    summary: "List sales orders, newest number first",
    description: `Filters: q (customer name, customer purchase-order number, order name; a number also matches the exact order number), customer_id, status_id, location_id, assigned_user_id (never widens visibility) and inclusive issue and expiry date ranges. ids (at most 50) fetches exact orders in one response. ${visibility}`,
    scopes: ["sales_orders:read"],
    permissions: ["sales_orders.list"],
    idempotency: "none",
    request: { query: salesOrderListQuery },
    responses: { 200: salesOrderList },
  }),
  route({
    operationId: "getSalesOrder",
    method: "GET",
    path: one,
    group: "sales-orders",
    summary: "Retrieve a sales order with its lines in stored order",
    description: `One Query reads the order and its lines, in parallel with the account's settings: tax labels, can_pack / pack_block_reason and quantity_remaining_to_pack follow the current settings; related display values (customer contact, SKU, unit, location names) are those of the order's last write. ${visibility}`,
    scopes: ["sales_orders:read"],
    permissions: ["sales_orders.list"],
    idempotency: "none",
    request: { path: salesOrderPath },
    responses: { 200: salesOrderResource },
    headers: ["ETag"],
  }),
  route({
    operationId: "updateSalesOrder",
    method: "PATCH",
    path: one,
    group: "sales-orders",
    summary: "Update an open sales order with no activity",
    description:
      "Partial: omitted fields keep their values. `lines`, when sent, is the complete desired list of non-discount lines (an existing id keeps that line, no id adds one, omitted lines are removed). Changing customer_id or location_id requires lines. Reservations move by the difference in the same write. Optional If-Match (revision or ETag): stale is 409 mobile_mutation_conflict. Only open orders with nothing invoiced, packed or shipped: else 409 sales_order_update_not_allowed.",
    scopes: ["sales_orders:write"],
    permissions: ["sales_orders.modify"],
    ifMatch: "optional",
    idempotency: "optional",
    request: { path: salesOrderPath, body: salesOrderUpdateBody },
    responses: { 200: salesOrderResource },
    headers: ["ETag"],
    errors: { 409: ["sales_order_update_not_allowed"] },
    example: { body: { attention: "Loading bay 2", lines: [{ id: SAMPLE_LINE, item_id: SAMPLE_ITEM, quantity: 6 }] } },
  }),
  route({
    operationId: "deleteSalesOrder",
    method: "DELETE",
    path: one,
    group: "sales-orders",
    summary: "Delete an open sales order with no activity",
    description:
      'Same rule as update (open, nothing invoiced, packed or shipped; else 409 sales_order_update_not_allowed). Its reservations are released in the same write. Returns {id, object: "sales_order", deleted: true}.',
    scopes: ["sales_orders:write"],
    permissions: ["sales_orders.modify"],
    ifMatch: "optional",
    idempotency: "optional",
    request: { path: salesOrderPath },
    responses: { 200: deletedSalesOrder },
    errors: { 409: ["sales_order_update_not_allowed"] },
  }),
  route({
    operationId: "listSalesOrderFulfillments",
    method: "GET",
    path: `${one}/fulfillments`,
    group: "sales-orders",
    summary: "List a sales order's packing lists, number newest first",
    description: `Each entry's lines are a snapshot of what was packed. Same visibility as the order. ${visibility}`,
    scopes: ["sales_orders:read"],
    permissions: ["sales_orders.list"],
    idempotency: "none",
    request: { path: salesOrderPath, query: pageQuery },
    responses: { 200: salesOrderFulfillmentList },
  }),
  route({
    operationId: "packSalesOrder",
    method: "POST",
    path: `${one}/fulfillments`,
    group: "sales-orders",
    summary: "Pack quantities of a sales order (creates a packing list)",
    description:
      "Body: only lines (1-100, each line once: {id, quantity}, a positive increment not above the line's unpacked quantity). Inventory lines are packable; service lines only with the account's packing-list service-item setting; discount lines never. Requires packing lists enabled, an open order and access to the order's location (403). A closed, or concurrently fully packed, order is 409 sales_order_pack_not_allowed; a line already fully packed is 409 sales_order_line_already_packed. The packing list (numbered from the account's packing-list sequence), the line quantities and the packed percentage are saved in one transaction and rechecked under concurrency, so nothing is ever overpacked. Stock does not change. Returns the packing list, 201.",
    scopes: ["sales_orders:pack"],
    permissions: ["sales_orders.list", "sales_orders.modify"],
    ifMatch: "optional",
    idempotency: "optional",
    request: { path: salesOrderPath, body: () => packBody("sales order") },
    responses: { 201: salesOrderFulfillment },
    errors: { 409: ["sales_order_pack_not_allowed", "sales_order_line_already_packed"] },
    example: { body: { lines: [{ id: SAMPLE_LINE, quantity: 2 }] } },
  }),
  route({
    operationId: "shipSalesOrderFulfillment",
    method: "POST",
    path: `${one}/fulfillments/{fulfillment_id}/ship`,
    group: "sales-orders",
    summary: "Mark a packing list shipped",
    description:
      "Records the shipped date (default today in the user's time zone) and the optional carrier, tracking number and tracking URL; the packing list becomes `shipped` and its quantities become the lines' shipped quantities (never above the packed ones), with the shipped percentage, in one write. A shipped list is 409 fulfillment_already_shipped.",
    scopes: ["sales_orders:pack"],
    permissions: ["sales_orders.list", "sales_orders.modify"],
    ifMatch: "optional",
    idempotency: "optional",
    request: { path: salesOrderFulfillmentPath, body: shipBody },
    responses: { 200: salesOrderFulfillment },
    errors: { 409: ["fulfillment_already_shipped"] },
    example: {
      body: {
        shipped_date: "2026-11-24",
        carrier: "UPS",
        tracking_number: "1Z999AA10123456784",
        tracking_url: "https://www.ups.com/track?tracknum=1Z999AA10123456784",
      },
    },
  }),
  route({
    operationId: "listSalesOrderInvoices",
    method: "GET",
    path: `${one}/invoices`,
    group: "sales-orders",
    summary: "List the invoices of a sales order, number newest first",
    description: "Applies both visibility boundaries: the order must be visible (else 404) and only visible invoices are listed.",
    scopes: ["sales_orders:read", "invoices:read"],
    permissions: ["sales_orders.list", "invoices.list"],
    idempotency: "none",
    request: { path: salesOrderPath, query: pageQuery },
    responses: { 200: invoiceList },
  }),
  route({
    operationId: "invoiceSalesOrder",
    method: "POST",
    path: `${one}/invoices`,
    group: "sales-orders",
    summary: "Invoice remaining quantities of a sales order",
    description:
      "Body: optional lines [{id, quantity}] (each at most the line's remaining uninvoiced quantity); omitted: every remaining quantity. Creates an unpaid invoice linked to the order (fulfillment_authority sales_order) with the order's customer, salesperson, details, prices, discounts and taxes (its shipping fee and cost on the first invoice). Each invoice rounds its own line amounts, but the one taking a line's last quantity takes the exact rest of its subtotal and taxes, and the one taking the last quantities the rest of the discount (no part takes more than is left): the live invoices add up to the order. The invoice, the order's invoiced quantities and the stock (each quantity leaves the reservation and on hand) are saved in one transaction conditioned on the order, so a quantity is never invoiced twice. The order closes (status 30) once fully invoiced. Not open, nothing left or 50 invoices already: 409 sales_order_invoice_not_allowed. At the account's record limit: 409 record_limit_reached. Returns the invoice, 201, with ETag.",
    scopes: ["sales_orders:write", "invoices:write"],
    permissions: ["sales_orders.modify", "invoices.modify"],
    ifMatch: "optional",
    idempotency: "optional",
    request: { path: salesOrderPath, body: salesOrderInvoiceBody },
    responses: { 201: invoiceResource },
    headers: ["ETag"],
    errors: { 409: ["sales_order_invoice_not_allowed", "record_limit_reached"] },
    example: { body: { lines: [{ id: SAMPLE_LINE, quantity: 2 }] } },
  }),
];
