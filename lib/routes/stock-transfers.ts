import { API_PREFIX, route, type RouteDefinition } from "./define.js";
import {
  deletedStockTransfer,
  stockTransferCreateBody,
  stockTransferList,
  stockTransferListQuery,
  stockTransferPath,
  stockTransferReceiveBody,
  stockTransferResource,
  stockTransferSendBody,
  stockTransferUpdateBody,
} from "../schemas/stock-transfers.js";

const base = `${API_PREFIX}/stock-transfers`;
const one = `${base}/{stock_transfer_id}`;
const SAMPLE_ORIGIN = "00000000-0000-4000-8000-000000000001";
const SAMPLE_DESTINATION = "00000000-0000-4000-8000-000000000002";
const SAMPLE_ITEM = "00000000-0000-4000-8000-000000000021";
const visibility = "Visibility is account-wide: neither the assigned user nor a user's assigned location limits it (spec part 2, 4.2).";

/** Endpoint group `stock-transfers` (spec part 2, sections 2.2, 3.2 and 4.2). */
export const stockTransferRoutes: RouteDefinition[] = [
  route({
    operationId: "listStockTransfers",
    method: "GET",
    path: base,
    group: "stock-transfers",
    summary: "List stock transfers, newest number first",
    description: `Filters: q (the exact transfer number or part of the tracking code), assigned_user_id, origin_location_id, destination_location_id, status_id, issue_date_from, issue_date_to. ${visibility}`,
    scopes: ["stock_transfers:read"],
    permissions: ["inventory.manage"],
    idempotency: "none",
    request: { query: stockTransferListQuery },
    responses: { 200: stockTransferList },
  }),
  route({
    operationId: "getStockTransfer",
    method: "GET",
    path: one,
    group: "stock-transfers",
    summary: "Retrieve a stock transfer with its lines",
    description: visibility,
    scopes: ["stock_transfers:read"],
    permissions: ["inventory.manage"],
    idempotency: "none",
    request: { path: stockTransferPath },
    responses: { 200: stockTransferResource },
  }),
  route({
    operationId: "createStockTransfer",
    method: "POST",
    path: base,
    group: "stock-transfers",
    summary: "Create a pending stock transfer",
    description: `Lines (1-100) name items stocked at the origin (item_variation_location_id for variation items: a row of the item at the origin); unique items are stored as 1. The number and issue_date (the user's local date) are set by the service; the transfer is assigned to the key's user. ${visibility}`,
    scopes: ["stock_transfers:write"],
    permissions: ["inventory.manage", "inventory.modify"],
    idempotency: "optional",
    request: { body: stockTransferCreateBody },
    responses: { 201: stockTransferResource },
    example: {
      body: {
        origin_location_id: SAMPLE_ORIGIN,
        destination_location_id: SAMPLE_DESTINATION,
        estimated_arrival_date: "2026-11-28",
        shipping_provider: "UPS",
        lines: [{ item_id: SAMPLE_ITEM, quantity: 12 }],
      },
    },
  }),
  route({
    operationId: "updateStockTransfer",
    method: "PATCH",
    path: one,
    group: "stock-transfers",
    summary: "Update a pending or in-transit stock transfer",
    description:
      'issue_date, estimated_arrival_date ("" or null clears), shipping_provider, shipping_tracking_code and lines (the complete list: an existing id keeps that line, no id adds one, omitted lines are removed). An in-transit update moves the stock difference in the same write. Transferred transfers: 409 stock_transfer_update_not_allowed.',
    scopes: ["stock_transfers:write"],
    permissions: ["inventory.manage", "inventory.modify"],
    idempotency: "optional",
    request: { path: stockTransferPath, body: stockTransferUpdateBody },
    responses: { 200: stockTransferResource },
    errors: { 409: ["stock_transfer_update_not_allowed"] },
    example: { body: { shipping_tracking_code: "1Z999AA10123456784", estimated_arrival_date: "" } },
  }),
  route({
    operationId: "sendStockTransfer",
    method: "POST",
    path: `${one}/send`,
    group: "stock-transfers",
    summary: "Send a pending stock transfer",
    description:
      "Pending -> In Transit (27): each line's quantity leaves on-hand stock at the origin and is recorded as in transit at the destination, through the inventory ledger, with the transfer's change (422 naming the line when the origin lacks the stock; nothing changes). date_sent defaults to the user's local date. Any other state: 409 stock_transfer_send_not_allowed.",
    scopes: ["stock_transfers:send"],
    permissions: ["inventory.manage", "inventory.modify"],
    idempotency: "optional",
    request: { path: stockTransferPath, body: stockTransferSendBody },
    responses: { 200: stockTransferResource },
    errors: { 409: ["stock_transfer_send_not_allowed"] },
    example: { body: { date_sent: "2026-11-23", shipping_tracking_code: "1Z999AA10123456784" } },
  }),
  route({
    operationId: "receiveStockTransfer",
    method: "POST",
    path: `${one}/receive`,
    group: "stock-transfers",
    summary: "Receive an in-transit stock transfer",
    description:
      "In Transit -> Transferred (28): the in-transit quantities at the destination become on-hand stock there, through the inventory ledger. date_received defaults to the user's local date. Any other state: 409 stock_transfer_receive_not_allowed.",
    scopes: ["stock_transfers:receive"],
    permissions: ["inventory.manage", "inventory.modify"],
    idempotency: "optional",
    request: { path: stockTransferPath, body: stockTransferReceiveBody },
    responses: { 200: stockTransferResource },
    errors: { 409: ["stock_transfer_receive_not_allowed"] },
    example: { body: { date_received: "2026-11-27" } },
  }),
  route({
    operationId: "deleteStockTransfer",
    method: "DELETE",
    path: one,
    group: "stock-transfers",
    summary: "Delete a stock transfer, reversing its stock",
    description:
      "In transit: the origin's stock is restored and the destination's in-transit removed; transferred: the destination's stock is removed, then the origin's restored. When that reversal is unsafe (the destination no longer holds what arrived): 409 stock_transfer_delete_not_allowed and nothing changes. Cannot be undone.",
    scopes: ["stock_transfers:delete"],
    permissions: ["inventory.manage", "inventory.modify"],
    idempotency: "optional",
    request: { path: stockTransferPath },
    responses: { 200: deletedStockTransfer },
    errors: { 409: ["stock_transfer_delete_not_allowed"] },
  }),
];
