import { createApiHandler } from "../../lib/http/api-handler.js";
import { invoiceRoutes } from "../../lib/routes/invoices.js";
import { normalizePage } from "../../lib/core/pagination.js";
import { created, ok, withEtag } from "../../lib/http/responses.js";
import type { ApiRequest } from "../../lib/http/types.js";
import {
  cancelInvoice,
  createInvoice,
  deleteInvoice,
  getInvoice,
  listInvoices,
  sendInvoice,
  updateInvoice,
} from "../../lib/domain/documents/invoices/service.js";
import {
  createInvoicePayment,
  deleteInvoicePayment,
  listInvoiceFulfillments,
  listInvoicePayments,
  packInvoice,
  shipInvoiceFulfillment,
} from "../../lib/domain/documents/invoices/fulfillment.js";
import type { InvoiceCreateBody, InvoiceListQuery, InvoicePaymentBody, InvoiceUpdateBody } from "../../lib/schemas/invoices.js";
import type { PackBody, ShipBody } from "../../lib/schemas/sales-documents.js";

type InvoiceParams = { invoice_id: string };
type PageParams = { page?: string; limit?: string };

/** Endpoint group `invoices`. */
export const handler = createApiHandler(invoiceRoutes, {
  createInvoice: async (req: ApiRequest<{}, {}, InvoiceCreateBody>) => withEtag(await createInvoice(req.principal, req.body, req.completion(201)), 201),
  listInvoices: async (req: ApiRequest<{}, InvoiceListQuery>) => ok(await listInvoices(req.principal, req.path, normalizePage(req.query), req.query)),
  getInvoice: async (req: ApiRequest<InvoiceParams>) => withEtag(await getInvoice(req.principal, req.params.invoice_id)),
  updateInvoice: async (req: ApiRequest<InvoiceParams, {}, InvoiceUpdateBody>) =>
    withEtag(await updateInvoice(req.principal, req.params.invoice_id, req.body, req.headers["if-match"], req.completion(200))),
  deleteInvoice: async (req: ApiRequest<InvoiceParams>) =>
    ok(await deleteInvoice(req.principal, req.params.invoice_id, req.headers["if-match"], req.completion(200))),
  sendInvoice: async (req: ApiRequest<InvoiceParams, {}, { date_sent?: string }>) =>
    withEtag(await sendInvoice(req.principal, req.params.invoice_id, req.body, req.headers["if-match"], req.completion(200))),
  cancelInvoice: async (req: ApiRequest<InvoiceParams>) =>
    withEtag(await cancelInvoice(req.principal, req.params.invoice_id, req.headers["if-match"], req.completion(200))),
  listInvoicePayments: async (req: ApiRequest<InvoiceParams, PageParams>) =>
    ok(await listInvoicePayments(req.principal, req.params.invoice_id, req.path, normalizePage(req.query))),
  createInvoicePayment: async (req: ApiRequest<InvoiceParams, {}, InvoicePaymentBody>) =>
    created(await createInvoicePayment(req.principal, req.params.invoice_id, req.body, req.headers["if-match"], req.completion(201))),
  deleteInvoicePayment: async (req: ApiRequest<InvoiceParams & { payment_id: string }>) =>
    ok(await deleteInvoicePayment(req.principal, req.params.invoice_id, req.params.payment_id, req.headers["if-match"], req.completion(200))),
  listInvoiceFulfillments: async (req: ApiRequest<InvoiceParams, PageParams>) =>
    ok(await listInvoiceFulfillments(req.principal, req.params.invoice_id, req.path, normalizePage(req.query))),
  packInvoice: async (req: ApiRequest<InvoiceParams, {}, PackBody>) =>
    created(await packInvoice(req.principal, req.params.invoice_id, req.body, req.headers["if-match"], req.completion(201))),
  shipInvoiceFulfillment: async (req: ApiRequest<InvoiceParams & { fulfillment_id: string }, {}, ShipBody>) =>
    ok(await shipInvoiceFulfillment(req.principal, req.params.invoice_id, req.params.fulfillment_id, req.body, req.headers["if-match"], req.completion(200))),
});
