import { createApiHandler } from "../../lib/http/api-handler.js";
import { purchaseOrderRoutes } from "../../lib/routes/purchase-orders.js";
import { normalizePage } from "../../lib/core/pagination.js";
import { created, ok, withEtag } from "../../lib/http/responses.js";
import type { ApiRequest } from "../../lib/http/types.js";
import {
  createPurchaseOrder,
  createPurchaseOrderPayment,
  deletePurchaseOrderPayment,
  getPurchaseOrder,
  listPurchaseOrderPayments,
  listPurchaseOrders,
  updatePurchaseOrder,
} from "../../lib/domain/documents/purchase-orders/service.js";
import { receivePurchaseOrder, sendPurchaseOrder } from "../../lib/domain/documents/purchase-orders/receive.js";
import type { PaymentBody } from "../../lib/schemas/documents.js";
import type { PurchaseOrderCreateBody, PurchaseOrderListQuery, PurchaseOrderReceiveBody, PurchaseOrderUpdateBody } from "../../lib/schemas/purchase-orders.js";

type OrderParams = { purchase_order_id: string };

/** Endpoint group `purchase-orders`. */
export const handler = createApiHandler(purchaseOrderRoutes, {
  createPurchaseOrder: async (req: ApiRequest<{}, {}, PurchaseOrderCreateBody>) =>
    withEtag(await createPurchaseOrder(req.principal, req.body, req.completion(201)), 201),
  listPurchaseOrders: async (req: ApiRequest<{}, PurchaseOrderListQuery>) =>
    ok(await listPurchaseOrders(req.principal, req.path, normalizePage(req.query), req.query)),
  getPurchaseOrder: async (req: ApiRequest<OrderParams>) => withEtag(await getPurchaseOrder(req.principal, req.params.purchase_order_id)),
  updatePurchaseOrder: async (req: ApiRequest<OrderParams, {}, PurchaseOrderUpdateBody>) =>
    withEtag(await updatePurchaseOrder(req.principal, req.params.purchase_order_id, req.body, req.headers["if-match"], req.completion(200))),
  sendPurchaseOrder: async (req: ApiRequest<OrderParams, {}, { date_sent?: string }>) =>
    withEtag(await sendPurchaseOrder(req.principal, req.params.purchase_order_id, req.body, req.headers["if-match"], req.completion(200))),
  receivePurchaseOrder: async (req: ApiRequest<OrderParams, {}, PurchaseOrderReceiveBody>) =>
    withEtag(await receivePurchaseOrder(req.principal, req.params.purchase_order_id, req.body, req.headers["if-match"], req.completion(200))),
  listPurchaseOrderPayments: async (req: ApiRequest<OrderParams, { page?: string; limit?: string }>) =>
    ok(await listPurchaseOrderPayments(req.principal, req.params.purchase_order_id, req.path, normalizePage(req.query))),
  createPurchaseOrderPayment: async (req: ApiRequest<OrderParams, {}, PaymentBody>) =>
    created(await createPurchaseOrderPayment(req.principal, req.params.purchase_order_id, req.body, req.headers["if-match"], req.completion(201))),
  deletePurchaseOrderPayment: async (req: ApiRequest<OrderParams & { payment_id: string }>) =>
    ok(await deletePurchaseOrderPayment(req.principal, req.params.purchase_order_id, req.params.payment_id, req.headers["if-match"], req.completion(200))),
});
