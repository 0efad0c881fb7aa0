import { requireDocumentPermission } from "../rules.js";
import { nowIso } from "../../../core/clock.js";
import type { Principal } from "../../../auth/permissions.js";
import type { IdempotencyCompletion } from "../../../core/idempotency.js";
import { addDocumentActivity, addProspectConversion, PROSPECT_CONVERSION_COUNTS } from "../../../db/parties.js";
import { RETRY } from "../../../db/retry.js";
import type { DocumentItem, PartyItem } from "../../../db/service.js";
import type { Cancellation, TransactionBuilder } from "../../../db/transactions.js";
import { errors } from "../../../core/errors.js";
import { writeAtRevision } from "../documents.js";
import { addEstimateConversion, ESTIMATE_CONVERSION_LABEL, visibleEstimate } from "./service.js";
import { conversionSource, estimateDetails, unplacedLinesConflict, type ConversionKind, type EstimateConversionSource } from "./model.js";
import { createInvoiceFromDraft } from "../invoices/service.js";
import { createSalesOrderFromDraft } from "../sales-orders/service.js";
import type { DraftLine, DraftOptions, SalesDraft } from "../sales/drafts.js";
import type { CustomerActivity } from "../sales/insert.js";

/** The new document of a conversion: its body (201) and ETag. */
export interface ConversionResult {
  body: Record<string, unknown>;
  etag: string;
}

/**
 * Converts a visible Open, unconverted estimate into a new unpaid invoice (spec 3.3 and 4.3
 * "Convert to invoice"): the invoice copies the customer, salesperson, details, lines (names,
 * descriptions, prices, discounts, taxes), shipping and discount, so its totals are the
 * estimate's; `issue_date` defaults to today in the account's time zone ("the API user's account
 * timezone", as a purchase order's send date). In ONE transaction: the
 * invoice (number, lines, stock leaving on hand, counts), the estimate closed with
 * `converted_document`, and the customer's figures; a prospect becomes a customer in the same
 * write. A repeat, or any estimate that is not Open, is 409 `estimate_conversion_not_allowed`.
 * Needs estimates.modify and invoices.modify.
 */
export async function convertEstimateToInvoice(
  principal: Principal,
  estimateId: string,
  input: { issue_date?: string },
  ifMatchHeader: string | undefined,
  completion: IdempotencyCompletion | undefined,
): Promise<ConversionResult> {
  requireDocumentPermission(principal, "estimates.modify", "converting estimates");
  requireDocumentPermission(principal, "invoices.modify", "converting estimates into invoices");
  return convert(principal, estimateId, "invoice", ifMatchHeader, (source) =>
    createInvoiceFromDraft(principal, { ...draftOf(source), issueDate: input.issue_date, issueDateZone: "account" }, optionsFor(source, "invoice", completion)),
  );
}

/**
 * Converts a visible Open, unconverted estimate into a new open sales order (spec 3.3 and 4.3
 * "Convert to sales order"): the order copies the customer, salesperson, details, lines,
 * shipping and discount; the service assigns its number and today's issue date; its inventory
 * lines are reserved. In ONE transaction with the estimate's close; a prospect becomes a
 * customer in the same write (an order needs a customer). A repeat, or any estimate that is not
 * Open, is 409 `estimate_sales_order_conversion_not_allowed`. Needs estimates.modify,
 * sales_orders.list and sales_orders.modify.
 */
export async function convertEstimateToSalesOrder(
  principal: Principal,
  estimateId: string,
  ifMatchHeader: string | undefined,
  completion: IdempotencyCompletion | undefined,
): Promise<ConversionResult> {
  requireDocumentPermission(principal, "estimates.modify", "converting estimates");
  requireDocumentPermission(principal, "sales_orders.list", "converting estimates into sales orders");
  requireDocumentPermission(principal, "sales_orders.modify", "converting estimates into sales orders");
  return convert(principal, estimateId, "sales_order", ifMatchHeader, (source) =>
    createSalesOrderFromDraft(principal, draftOf(source), optionsFor(source, "sales_order", completion)),
  );
}

type Written = { ok: true; result: ConversionResult; header: DocumentItem } | { ok: false; cancellation: Cancellation };

/**
 * The conversion loop: read the estimate (409 when it is not convertible), write the new
 * document with the estimate's close in its transaction; when only the close failed (the
 * estimate changed meanwhile: updated, declined, or converted by a parallel request) read it
 * again, so exactly one of parallel conversions creates a document and the others answer 409.
 */
async function convert(
  principal: Principal,
  estimateId: string,
  kind: ConversionKind,
  ifMatchHeader: string | undefined,
  write: (source: EstimateConversionSource) => Promise<Written>,
): Promise<ConversionResult> {
  return writeAtRevision(
    { operation: `convert estimate to ${kind}`, accountId: principal.accountId, documentId: estimateId, ifMatch: ifMatchHeader },
    () => visibleEstimate(principal, estimateId),
    async (tree) => {
      const written = await write(conversionSource(tree.header, tree.lines, kind, nowIso())).catch((error: unknown) => {
        throw unplacedLinesConflict(error, kind);
      });
      if (written.ok) return written.result;
      if (written.cancellation.failed(ESTIMATE_CONVERSION_LABEL)) return RETRY;
      throw errors.internal(new Error(`estimate conversion failed: ${written.cancellation.labels.join(", ")}`));
    },
  );
}

/** The estimate's values as a draft of the new document (the issue date is the new document's own). */
function draftOf(source: EstimateConversionSource): SalesDraft {
  const h = source.header;
  return {
    customerId: h.partyId!,
    salespersonId: h.assignedUserId,
    ...estimateDetails(h),
    shippingFee: h.shippingFee,
    shippingCost: h.shippingCost,
    discountPercent: h.discountPercent,
    sourceEstimate: { id: source.estimate.documentId, number: source.estimate.number },
    lines: source.lines.map(
      (line): DraftLine => ({
        itemId: line.itemId,
        ivlId: line.ivlId,
        variationId: line.variationId,
        name: line.name,
        description: line.description ?? null,
        quantity: line.quantity,
        unitPrice: line.unitPrice,
        // Inventory lines take the item's cost now (the cost of this sale); service lines keep theirs.
        unitCost: line.lineType === "service" && line.unitCost !== null ? line.unitCost : undefined,
        discountPercent: line.discountPercent,
        taxRate: line.taxRate,
        tax2Rate: line.tax2Rate,
      }),
    ),
  };
}

/**
 * The new document's transaction items of the conversion: the estimate's close (conditioned on the
 * revision read) and, when the customer is (still) a prospect, its conversion into a customer
 * carrying the document's activity (one item, one operation), with its owner's counts merged into
 * the draft's write.
 */
function optionsFor(source: EstimateConversionSource, kind: ConversionKind, completion: IdempotencyCompletion | undefined): DraftOptions {
  return {
    completion,
    allowProspect: true,
    customerActivity: "caller",
    ownerCounts: (customer) => (customer.kind === "prospect" ? { userId: customer.ownerUserId, add: PROSPECT_CONVERSION_COUNTS } : undefined),
    extra: (tx: TransactionBuilder, header: DocumentItem, _lines, activity: CustomerActivity, customer: PartyItem) => {
      addEstimateConversion(tx, source.estimate, { kind, id: header.documentId, number: header.number });
      if (customer.kind === "prospect") addProspectConversion(tx, customer, activity, nowIso());
      else addDocumentActivity(tx, { accountId: customer.accountId, partyId: customer.partyId }, activity);
    },
  };
}
