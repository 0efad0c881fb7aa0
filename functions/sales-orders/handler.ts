import { createApiHandler } from "../../lib/http/api-handler.js";
import { salesOrderRoutes } from "../../lib/routes/sales-orders.js";
import { normalizePage } from "../../lib/core/pagination.js";
import { created, ok, withEtag } from "../../lib/http/responses.js";
import type { ApiRequest } from "../../lib/http/types.js";
import {
  createSalesOrder,
  deleteSalesOrder,
  getSalesOrder,
  listSalesOrderFulfillments,
  listSalesOrders,
  packSalesOrder,
  shipSalesOrderFulfillment,
  updateSalesOrder,
} from "../../lib/domain/documents/sales-orders/service.js";
import { invoiceSalesOrder, listSalesOrderInvoices } from "../../lib/domain/documents/sales-orders/invoicing.js";
import type { PackBody, ShipBody } from "../../lib/schemas/sales-documents.js";
import type { SalesOrderCreateBody, SalesOrderInvoiceBody, SalesOrderListQuery, SalesOrderUpdateBody } from "../../lib/schemas/sales-orders.js";

type OrderParams = { sales_order_id: string };
type PageParams = { page?: string; limit?: string };

/** Endpoint group `sales-orders`. */
export const handler = createApiHandler(salesOrderRoutes, {
  createSalesOrder: async (req: ApiRequest<{}, {}, SalesOrderCreateBody>) =>
    withEtag(await createSalesOrder(req.principal, req.body, req.completion(201)), 201),
  listSalesOrders: async (req: ApiRequest<{}, SalesOrderListQuery>) => ok(await listSalesOrders(req.principal, req.path, normalizePage(req.query), req.query)),
  getSalesOrder: async (req: ApiRequest<OrderParams>) => withEtag(await getSalesOrder(req.principal, req.params.sales_order_id)),
  updateSalesOrder: async (req: ApiRequest<OrderParams, {}, SalesOrderUpdateBody>) =>
    withEtag(await updateSalesOrder(req.principal, req.params.sales_order_id, req.body, req.headers["if-match"], req.completion(200))),
  deleteSalesOrder: async (req: ApiRequest<OrderParams>) =>
    ok(await deleteSalesOrder(req.principal, req.params.sales_order_id, req.headers["if-match"], req.completion(200))),
  listSalesOrderFulfillments: async (req: ApiRequest<OrderParams, PageParams>) =>
    ok(await listSalesOrderFulfillments(req.principal, req.params.sales_order_id, req.path, normalizePage(req.query))),
  packSalesOrder: async (req: ApiRequest<OrderParams, {}, PackBody>) =>
    created(await packSalesOrder(req.principal, req.params.sales_order_id, req.body, req.headers["if-match"], req.completion(201))),
  shipSalesOrderFulfillment: async (req: ApiRequest<OrderParams & { fulfillment_id: string }, {}, ShipBody>) =>
    ok(
      await shipSalesOrderFulfillment(
        req.principal,
        req.params.sales_order_id,
        req.params.fulfillment_id,
        req.body,
        req.headers["if-match"],
        req.completion(200),
      ),
    ),
  listSalesOrderInvoices: async (req: ApiRequest<OrderParams, PageParams>) =>
    ok(await listSalesOrderInvoices(req.principal, req.params.sales_order_id, req.path, normalizePage(req.query))),
  invoiceSalesOrder: async (req: ApiRequest<OrderParams, {}, SalesOrderInvoiceBody>) =>
    withEtag(await invoiceSalesOrder(req.principal, req.params.sales_order_id, req.body, req.headers["if-match"], req.completion(201)), 201),
});
