import { API_PREFIX, route, type RouteDefinition } from "./define.js";
import { pageQuery } from "../schemas/common.js";
import { paymentBody } from "../schemas/documents.js";
import {
  deletedPayment,
  purchaseOrderCreateBody,
  purchaseOrderList,
  purchaseOrderListQuery,
  purchaseOrderPath,
  purchaseOrderPaymentList,
  purchaseOrderPayment,
  purchaseOrderPaymentPath,
  purchaseOrderReceiveBody,
  purchaseOrderResource,
  purchaseOrderSendBody,
  purchaseOrderUpdateBody,
} from "../schemas/purchase-orders.js";

const base = `${API_PREFIX}/purchase-orders`;
const one = `${base}/{purchase_order_id}`;
const SAMPLE_SUPPLIER = "00000000-0000-4000-8000-000000000011";
const SAMPLE_LOCATION = "00000000-0000-4000-8000-000000000001";
const SAMPLE_ITEM = "00000000-0000-4000-8000-000000000021";
const SAMPLE_LINE = "00000000-0000-4000-8000-000000000031";
const visibility =
  "Users without records.view_all see only the purchase orders assigned to them; others are 404. A user assigned to a location sees only those at that location (or at none): others are 404 resource_missing, for reads and writes alike.";

/** Endpoint group `purchase-orders` (spec part 2, sections 2.1, 3.1 and 4.1; architecture section 8 for payments). */
export const purchaseOrderRoutes: RouteDefinition[] = [
  route({
    operationId: "createPurchaseOrder",
    method: "POST",
    path: base,
    group: "purchase-orders",
    summary: "Create a purchase order (Not Sent)",
    description:
      "The number comes from the account's purchase-order sequence, saved with the order (a failed request consumes none). Lines (1-100): inventory lines take name, description, unit, SKU and unit cost from the item (unit_cost overridable), service lines need name and unit_cost; tax rates default to the supplier's. discount_percent adds one generated discount line. Returns the order with ETag.",
    scopes: ["purchase_orders:write"],
    permissions: ["purchase_orders.modify"],
    idempotency: "optional",
    request: { body: purchaseOrderCreateBody },
    responses: { 201: purchaseOrderResource },
    headers: ["ETag"],
    example: {
      body: {
        supplier_id: SAMPLE_SUPPLIER,
        location_id: SAMPLE_LOCATION,
        issue_date: "2026-11-23",
        lines: [
          { item_id: SAMPLE_ITEM, quantity: 24, unit_cost: "4.2500" },
          { name: "Freight", unit_cost: "35.0000" },
        ],
        shipping_fee: "12.0000",
        discount_percent: 5,
      },
    },
  }),
  route({
    operationId: "listPurchaseOrders",
    method: "GET",
    path: base,
    group: "purchase-orders",
    summary: "List purchase orders, newest number first",
    description: `Filters: q (supplier name, custom number, name; a number also matches the exact order number), supplier_id, status_id, location_id and inclusive date ranges. ids (at most 50) fetches exact orders in one response. ${visibility}`,
    scopes: ["purchase_orders:read"],
    permissions: ["purchase_orders.list"],
    idempotency: "none",
    request: { query: purchaseOrderListQuery },
    responses: { 200: purchaseOrderList },
  }),
  route({
    operationId: "getPurchaseOrder",
    method: "GET",
    path: one,
    group: "purchase-orders",
    summary: "Retrieve a purchase order with its lines in stored order",
    description: `One Query reads the order, its lines and payments. ${visibility}`,
    scopes: ["purchase_orders:read"],
    permissions: ["purchase_orders.list"],
    idempotency: "none",
    request: { path: purchaseOrderPath },
    responses: { 200: purchaseOrderResource },
    headers: ["ETag"],
  }),
  route({
    operationId: "updatePurchaseOrder",
    method: "PATCH",
    path: one,
    group: "purchase-orders",
    summary: "Update a Not Sent purchase order",
    description:
      'Partial: omitted fields keep their values. `lines`, when sent, is the complete desired list of non-discount lines (an existing id keeps that line, no id adds one, omitted lines are removed; "" clears a line description, omitting it restores the item\'s). Changing supplier_id or location_id requires lines. Optional If-Match (revision or ETag, quoted or bare): stale is 409 mobile_mutation_conflict. Only Not Sent orders: else 409 purchase_order_update_not_allowed.',
    scopes: ["purchase_orders:write"],
    permissions: ["purchase_orders.modify"],
    ifMatch: "optional",
    idempotency: "optional",
    request: { path: purchaseOrderPath, body: purchaseOrderUpdateBody },
    responses: { 200: purchaseOrderResource },
    headers: ["ETag"],
    errors: { 409: ["purchase_order_update_not_allowed"] },
    example: { body: { attention: "Receiving dock", lines: [{ id: SAMPLE_LINE, item_id: SAMPLE_ITEM, quantity: 30 }] } },
  }),
  route({
    operationId: "sendPurchaseOrder",
    method: "POST",
    path: `${one}/send`,
    group: "purchase-orders",
    summary: "Send a purchase order",
    description:
      "Not Sent -> Sent; date_sent defaults to today in the account's time zone. Each inventory line's unreceived quantity becomes incoming stock at the order's location in the same write. Sending a Sent order again keeps the original date_sent and changes nothing; Partially Received and Received orders cannot be sent (409 purchase_order_send_not_allowed).",
    scopes: ["purchase_orders:send"],
    permissions: ["purchase_orders.modify"],
    idempotency: "optional",
    request: { path: purchaseOrderPath, body: purchaseOrderSendBody },
    responses: { 200: purchaseOrderResource },
    headers: ["ETag"],
    errors: { 409: ["purchase_order_send_not_allowed"] },
    example: { body: { date_sent: "2026-11-23" } },
  }),
  route({
    operationId: "receivePurchaseOrder",
    method: "POST",
    path: `${one}/receive`,
    group: "purchase-orders",
    summary: "Receive quantities of a purchase order",
    description:
      "Incremental quantities on inventory lines (1-100, each line once), never above a line's remaining quantity. Sent or Partially Received orders only (else 409 purchase_order_receive_not_allowed, also when the receiving location is inactive). On-hand stock rises at the order's location through the inventory ledger and the moving average cost takes the line's unit cost; lines, status and stock are saved together or not at all. received_date is stored only when the order becomes fully received.",
    scopes: ["purchase_orders:receive"],
    permissions: ["purchase_orders.modify"],
    idempotency: "optional",
    request: { path: purchaseOrderPath, body: purchaseOrderReceiveBody },
    responses: { 200: purchaseOrderResource },
    headers: ["ETag"],
    errors: { 409: ["purchase_order_receive_not_allowed"] },
    example: { body: { lines: [{ line_id: SAMPLE_LINE, quantity: 12 }], received_date: "2026-11-24" } },
  }),
  route({
    operationId: "listPurchaseOrderPayments",
    method: "GET",
    path: `${one}/payments`,
    group: "purchase-orders",
    summary: "List a purchase order's payments and refunds, payment date newest first",
    scopes: ["purchase_orders:read"],
    permissions: ["purchase_orders.list"],
    idempotency: "none",
    request: { path: purchaseOrderPath, query: pageQuery },
    responses: { 200: purchaseOrderPaymentList },
  }),
  route({
    operationId: "createPurchaseOrderPayment",
    method: "POST",
    path: `${one}/payments`,
    group: "purchase-orders",
    summary: "Record a manual payment (positive amount) or refund (negative amount)",
    description:
      "Moves amount_paid, amount_due and date_fully_paid (set when nothing is due) in the same write. The amount paid stays between 0 and the total, under concurrency too: a payment above the amount due is 422 exceeds_amount_due, a refund above the amount paid 422 exceeds_amount_paid (both on amount). payment_date defaults to today in the user's time zone.",
    scopes: ["purchase_orders:write"],
    permissions: ["purchase_orders.modify"],
    idempotency: "optional",
    request: { path: purchaseOrderPath, body: paymentBody },
    responses: { 201: purchaseOrderPayment },
    errors: { 422: ["exceeds_amount_due", "exceeds_amount_paid"] },
    example: { body: { amount: "250.0000", reference: "Wire 2026-114", payment_date: "2026-11-23" } },
  }),
  route({
    operationId: "deletePurchaseOrderPayment",
    method: "DELETE",
    path: `${one}/payments/{payment_id}`,
    group: "purchase-orders",
    summary: "Delete a manual payment or refund",
    scopes: ["purchase_orders:write"],
    permissions: ["purchase_orders.modify"],
    idempotency: "optional",
    request: { path: purchaseOrderPaymentPath },
    responses: { 200: deletedPayment },
    errors: { 409: ["purchase_order_payment_delete_not_allowed"] },
  }),
];
