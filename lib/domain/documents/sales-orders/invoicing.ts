import { canSeeDocument, localToday, requireDocumentPermission } from "../rules.js";
import { randomUUID } from "node:crypto";
import type { Principal } from "../../../auth/permissions.js";
import { errors } from "../../../core/errors.js";
import { CustomerChangedError } from "../../../core/failures.js";
import type { IdempotencyCompletion } from "../../../core/idempotency.js";
import { pageOfAll, type ListEnvelope, type PageRequest } from "../../../core/pagination.js";
import { DOCUMENT_LABEL, addDocumentWrite, readDocumentHeaders } from "../../../db/documents.js";
import { readParty } from "../../../db/parties.js";
import { RETRY } from "../../../db/retry.js";
import type { DocumentItem } from "../../../db/service.js";
import type { SalesOrderInvoiceBody } from "../../../schemas/sales-orders.js";
import { accountSettings, writeAtRevision } from "../documents.js";
import { INVOICE_STATUS, deriveInvoice, invoiceStock, presentInvoice, type InvoiceResult } from "../invoices/model.js";
import { minorOf } from "../../common/money.js";
import { etagOf, newRevision } from "../../common/revisions.js";
import { blankHeader } from "../sales/header.js";
import { insertSalesDocument } from "../sales/insert.js";
import { duplicateLineIds } from "../sales/model.js";
import { withPercents } from "../sales/progress.js";
import { invoiceLinesOf } from "./invoiced-money.js";
import { assertInvoiceable, orderAfterInvoice, quantitiesToInvoice, shippingToInvoice } from "./model.js";
import { visibleSalesOrder } from "./service.js";

/**
 * Invoicing a sales order's remaining quantities (architecture section 8:
 * `POST /sales-orders/{id}/invoices`) and the nested invoice list (spec 4.4).
 *
 * The new invoice (unpaid, linked to the order: `fulfillment_authority: "sales_order"`) copies
 * the order's customer, salesperson, details, prices, discounts and taxes for the quantities
 * invoiced (every remaining quantity when no lines are named); the order's shipping fee and cost
 * go on its first invoice. In ONE transaction: the invoice (numbered), the order's invoiced
 * quantities and percentage (conditioned on its revision: two requests for the same remaining
 * quantity never both succeed; the loser reads again and finds less, or nothing, left), the stock
 * (each quantity leaves the order's reservation and on hand), counts and the customer's figures.
 * The order closes (30) once every line is fully invoiced.
 */

/** Invoices the order's remaining quantities (all, or the given ones); 201 with the new invoice. */
export async function invoiceSalesOrder(
  principal: Principal,
  id: string,
  body: SalesOrderInvoiceBody,
  ifMatchHeader: string | undefined,
  completion: IdempotencyCompletion | undefined,
): Promise<InvoiceResult> {
  requireDocumentPermission(principal, "sales_orders.modify", "invoicing sales orders");
  requireDocumentPermission(principal, "invoices.modify", "creating invoices");
  const duplicates = duplicateLineIds(body.lines);
  if (duplicates.length > 0) throw errors.validationFailed(duplicates);
  return writeAtRevision(
    { operation: "invoice sales order", accountId: principal.accountId, documentId: id, ifMatch: ifMatchHeader },
    () => visibleSalesOrder(principal, id),
    async (order) => {
      const previous = order.header;
      assertInvoiceable(previous);
      const quantities = quantitiesToInvoice(order.lines, body.lines);

      const [account, customer] = await Promise.all([accountSettings(principal.accountId), readParty(principal.accountId, previous.partyId!)]);
      if (!customer) throw errors.internal(new Error(`sales order ${id} names a missing customer`));
      const first = shippingToInvoice(previous);
      const invoiceId = randomUUID();
      const parts = invoiceLinesOf(previous, order.lines, quantities, randomUUID);
      const base: DocumentItem = {
        ...blankHeader({
          accountId: principal.accountId,
          documentId: invoiceId,
          kind: "invoice",
          revision: newRevision("inv"),
          status: "sent",
          statusId: INVOICE_STATUS.sent.id,
          assignedUserId: previous.assignedUserId,
        }),
        issueDate: localToday(principal, account),
        discountPercent: previous.discountPercent,
        shippingFee: first ? previous.shippingFee : "0.0000",
        shippingCost: first ? previous.shippingCost : "0.0000",
        sourceSalesOrderId: previous.documentId,
        sourceSalesOrderNumber: previous.number,
      };
      for (const field of ["name", "purchaseOrderNumber", "attention", "shippingAddress", "publicNote", "paymentTerms"] as const) {
        if (previous[field] !== undefined) base[field] = previous[field];
      }
      const invoice = deriveInvoice(
        withPercents(base, { packedPercent: previous.packedPercent, shippedPercent: previous.shippedPercent }),
        { account, customer },
        parts.lines,
        parts.fixedDiscount,
      );

      const nextOrder = orderAfterInvoice(previous, order.lines, {
        id: invoiceId,
        lines: invoice.lines,
        money: invoice.money,
        discountTotal: invoice.header.discountTotal,
      });
      try {
        const written = await insertSalesDocument({
          principal,
          kind: "invoice",
          header: invoice.header,
          lines: invoice.lines,
          changes: invoiceStock(invoice.header, invoice.lines, 1),
          basis: { accountId: principal.accountId, documentId: id, revision: previous.revision },
          source: { sourceType: "invoice", sourceId: invoiceId, userId: principal.userId, reason: `Invoice of sales order ${previous.number}` },
          customer,
          activity: { revenueMinor: minorOf(invoice.header.total), invoiceDate: invoice.header.issueDate },
          references: [],
          completion,
          present: (h, l) => presentInvoice(principal, h, l),
          extra: (tx) => addDocumentWrite(tx, { header: nextOrder.header, lines: nextOrder.lines, previous, condition: (a, op) => op.eq!(a.status, "open") }),
          // The account's cap on invoices counts these too (`POST /invoices` and conversions check it alike).
          recordLimit: account.recordLimit ?? undefined,
        });
        if (!written.ok) {
          if (written.cancellation.failed(DOCUMENT_LABEL)) return RETRY; // the order changed meanwhile: read again
          throw errors.internal(new Error(`sales order invoicing failed: ${written.cancellation.labels.join(", ")}`));
        }
        return { body: written.body, etag: etagOf(written.header.revision) };
      } catch (error) {
        if (error instanceof CustomerChangedError) return RETRY;
        throw error;
      }
    },
  );
}

/**
 * The invoices of a sales order, number newest first: the order must be visible (sales-order
 * visibility) and each invoice too (invoice visibility); both read permissions are required.
 */
export async function listSalesOrderInvoices(principal: Principal, id: string, url: string, page: PageRequest): Promise<ListEnvelope<Record<string, unknown>>> {
  requireDocumentPermission(principal, "sales_orders.list", "reading sales orders");
  requireDocumentPermission(principal, "invoices.list", "reading invoices");
  const order = await visibleSalesOrder(principal, id);
  const headers = (await readDocumentHeaders(principal.accountId, order.header.linkedInvoiceIds ?? []))
    .filter((header) => header.kind === "invoice" && header.sourceSalesOrderId === id && canSeeDocument(principal, header))
    .sort((a, b) => b.number - a.number);
  return pageOfAll(
    url,
    page,
    headers.map((header) => presentInvoice(principal, header)),
  );
}
