import { CustomerChangedError, StockRuleError } from "../../../core/failures.js";
import { randomUUID } from "node:crypto";
import { hasPermission, type Principal } from "../../../auth/permissions.js";
import { errors } from "../../../core/errors.js";
import type { IdempotencyCompletion } from "../../../core/idempotency.js";
import type { ListEnvelope, PageRequest } from "../../../core/pagination.js";
import { DOCUMENT_LABEL, addDocumentDelete, addDocumentWrite, readDocumentTree, type DocumentTree } from "../../../db/documents.js";
import { addDocumentActivity } from "../../../db/parties.js";
import { checkReferences, referenceDetails, type Reference } from "../../../db/references.js";
import { RETRY, retrying } from "../../../db/retry.js";
import type { DocumentItem, DocumentPaymentItem } from "../../../db/service.js";
import { writeTransaction, type Cancellation, type TransactionBuilder } from "../../../db/transactions.js";
import type { InvoiceCreateBody, InvoiceListQuery, InvoicePaymentBody, InvoiceUpdateBody } from "../../../schemas/invoices.js";
import type { PackBody, ShipBody } from "../../../schemas/sales-documents.js";
import { customFieldWrite, presentCustomFieldValues } from "../../common/custom-field-values.js";
import { amountDue, amountPaid, deletePayment, listPayments, recordPayment, type PaymentPolicy } from "../payments.js";
import {
  accountSettings,
  accountToday,
  addAssigneeCount,
  addKindCountDecrement,
  listDocuments,
  localToday,
  matchReplacementLines,
  nextTimestamp,
  orNull,
  requireDocumentPermission,
  withEtag,
  documentLock,
  visibleDocument,
  statusIdFilter,
  withStoredDiscountLine,
  changesNothing,
} from "../documents.js";
import { listFulfillments, packDocument, shipFulfillment, type FulfillmentPolicy, type SalesTree } from "../sales-orders/fulfillments.js";
import { mergeStockChanges, type StockChange } from "../../inventory/ledger-plan.js";
import { addQuantities } from "../../inventory/math.js";
import { etagOf, assertRevision, newRevision, parseIfMatch } from "../../common/revisions.js";
import {
  blankHeader,
  buildSalesLines,
  deriveSalesHeader,
  draftLineSpecs,
  draftRequestFields,
  insertSalesDocument,
  isPackable,
  laterDate,
  lineChanges,
  lineSpecsOf,
  withCurrentValues,
  priceSalesLines,
  progressOf,
  readCustomer,
  remainingToPack,
  requireShippingCostPermission,
  salesHeaderFields,
  stockRuleError,
  withAccountSnapshot,
  withPercents,
  type DraftOptions,
  type LineSpec,
  type SalesContext,
  type SalesDraft,
  type SalesLine,
} from "../sales-documents.js";
import { minorOf } from "../../common/money.js";
import { partyOf } from "../party-details.js";
import { SO_STATUS, lineCosts, sourceEstimateOf } from "../sales-orders/service.js";
import { commitWithStock } from "../../inventory/stock-holds.js";
import { MAX_SALES_LINES } from "../../../schemas/sales-documents.js";

/**
 * Invoices: spec part 2, sections 2.5, 3.5 and 4.5; architecture sections 4 and 8.
 *
 * Statuses: 9 Sent (unpaid) -> 10 Partially Paid -> 11 Paid, following the amount paid (and back
 * when payments are refunded or deleted); 12 Cancelled (cancel: unpaid invoices without payment
 * records). Only unpaid (9) standalone invoices can be updated.
 * Stock: an invoice takes its inventory lines' quantities from on hand at each line's row when
 * created (a unique item becomes sold), through the ledger in the invoice's own write; an update
 * moves the difference, cancel and delete give it back. An invoice created from a sales order
 * takes the quantities out of the order's reservation too.
 * Customer figures, in the same writes: `document_count` (+1 create, -1 delete);
 * `lifetime_revenue_total` = the sum of the totals of the customer's invoices that are not
 * cancelled (accrual reading: revenue counts when invoiced, at create, moves with updates, leaves
 * at cancel or delete; payments do not move it); `last_invoice_date` = the latest issue date of
 * the customer's invoices (it never moves back).
 * Fulfilment: a standalone invoice is packed and shipped itself; an invoice created from a sales
 * order shows its order's progress (`fulfillment_authority: "sales_order"`).
 */

export const INVOICE_STATUS = {
  sent: { id: 9, label: "Sent" },
  partially_paid: { id: 10, label: "Partially Paid" },
  paid: { id: 11, label: "Paid" },
  cancelled: { id: 12, label: "Cancelled" },
} as const;
type InvoiceStatus = keyof typeof INVOICE_STATUS;

const WHAT = "invoice";

export interface InvoiceResult {
  body: Record<string, unknown>;
  etag: string;
}

// ---------------------------------------------------------------------------------------------
// Presentation

const isLinked = (header: DocumentItem): boolean => Boolean(header.sourceSalesOrderId);

function editBlockReason(principal: Principal, header: DocumentItem) {
  if (!hasPermission(principal, "invoices.modify")) return "permission_denied" as const;
  if (isLinked(header)) return "invoice_sales_order_linked" as const;
  if (header.status !== "sent") return "invoice_not_unpaid" as const;
  return null;
}

function packBlockReason(principal: Principal, header: DocumentItem, lines: readonly SalesLine[]) {
  if (!hasPermission(principal, "invoices.modify")) return "permission_denied" as const;
  if (isLinked(header)) return "packing_managed_by_sales_order" as const;
  if (header.packingListsEnabled === false) return "packing_lists_disabled" as const;
  if (header.status === "cancelled") return "invoice_cancelled" as const;
  if (!lines.some((line) => remainingToPack(line, header.packingServiceItems ?? false) > 0)) return "nothing_remaining_to_pack" as const;
  return null;
}

/** `shipped_percent` of an invoice: a whole number (rounded down), or null when nothing is packable. */
const wholePercent = (value: number | undefined): number | null => (value === undefined ? null : Math.floor(value));

function presentLine(principal: Principal, header: DocumentItem, line: SalesLine) {
  let packed = line.quantityPacked;
  let shipped = line.quantityShipped;
  if (isLinked(header)) {
    // Linked invoices: progress comes from the sales order, never allocated partially.
    const counts = line.lineType !== "discount" && isPackable(line, header.packingServiceItems ?? false);
    packed = counts && header.packedPercent === 100 ? line.quantity : 0;
    shipped = counts && header.shippedPercent === 100 ? line.quantity : 0;
  }
  const out: Record<string, unknown> = {
    id: line.id,
    object: "invoice_line",
    item_id: orNull(line.itemId),
    item_variation_location_id: orNull(line.ivlId),
    name: line.name,
    description: orNull(line.description),
    quantity: line.quantity,
    quantity_packed: packed,
    quantity_shipped: shipped,
    unit_id: orNull(line.unitId),
    unit_price: line.unitPrice,
    discount_percent: line.discountPercent,
    discounted_unit_price: line.discountedUnitPrice,
    tax_rate: line.taxRate,
    tax_2_rate: line.tax2Rate,
    subtotal: line.subtotal,
    line_type: line.lineType,
    unit_name: line.lineType === "discount" ? "discount" : orNull(line.unitName),
    sku: orNull(line.sku),
    variation_values: line.variationValues ?? {},
    variation_number: orNull(line.variationNumber),
    location_name: line.lineType === "inventory" ? orNull(line.locationName) : null,
    thumbnail_url: orNull(line.thumbnailUrl),
  };
  if (hasPermission(principal, "costs.view")) Object.assign(out, lineCosts(line));
  return out;
}

/** The invoice's `party`: the customer's contact and billing lines; its stored shipping address when present. */
function invoiceParty(header: DocumentItem) {
  const party = partyOf(header);
  const stored = header.shippingAddress
    ?.split(/\r?\n/)
    .map((part) => part.trim())
    .filter((part) => part !== "");
  return { ...party, shipping_address: stored && stored.length > 0 ? stored : party.shipping_address };
}

/** The invoice as the API shows it: list entries without the detail-only fields, details with lines. */
export function presentInvoice(principal: Principal, header: DocumentItem, lines?: readonly SalesLine[]): Record<string, unknown> {
  const status = INVOICE_STATUS[header.status as InvoiceStatus];
  const out: Record<string, unknown> = {
    id: header.documentId,
    object: "invoice",
    invoice_number: header.number,
    custom_invoice_number: orNull(header.customNumber),
    name: orNull(header.name),
    customer_id: header.partyId,
    customer_name: header.partyName ?? "",
    salesperson_id: header.assignedUserId,
    status_id: status.id,
    status: status.label,
    issue_date: orNull(header.issueDate),
    expiry_date: orNull(header.expiryDate),
    date_sent: orNull(header.dateSent),
    date_fully_paid: orNull(header.dateFullyPaid),
    purchase_order_number: header.purchaseOrderNumber ?? "",
    attention: orNull(header.attention),
    shipping_address: orNull(header.shippingAddress),
    public_note: orNull(header.publicNote),
    payment_terms: orNull(header.paymentTerms),
    subtotal: header.subtotal,
    shipping_fee: header.shippingFee,
    tax: header.tax,
    tax_2: header.tax2,
    total: header.total,
    amount_paid: amountPaid(header),
    amount_due: amountDue(header),
  };
  if (hasPermission(principal, "costs.view")) out.shipping_cost = header.shippingCost;
  if (lines) {
    const edit = editBlockReason(principal, header);
    Object.assign(out, {
      party: invoiceParty(header),
      pre_discount_total: header.preDiscountTotal,
      discount_total: header.discountTotal,
      tax_label: orNull(header.taxLabel),
      tax_2_label: orNull(header.tax2Label),
      can_edit: edit === null,
      edit_block_reason: edit,
      revision: header.revision,
    });
  }
  out.custom_field_values = presentCustomFieldValues(header.customFieldValues);
  out.source_estimate = sourceEstimateOf(header);
  if (lines) {
    const linked = isLinked(header);
    Object.assign(out, {
      source_sales_order: linked
        ? {
            id: header.sourceSalesOrderId,
            sales_order_number: header.sourceSalesOrderNumber ?? 0,
            packed_percent: orNull(header.packedPercent),
            shipped_percent: orNull(header.shippedPercent),
          }
        : null,
      fulfillment_authority: linked ? "sales_order" : "invoice",
      fulfillment_sales_order_id: linked ? header.sourceSalesOrderId : null,
      packed_percent: header.packedPercent ?? 0,
    });
  }
  out.shipped_percent = wholePercent(header.shippedPercent);
  if (lines) {
    const pack = packBlockReason(principal, header, lines);
    Object.assign(out, { can_pack: pack === null, pack_block_reason: pack });
  }
  out.created_at = header.createdAt;
  out.updated_at = header.updatedAt;
  if (lines) out.lines = lines.map((line) => presentLine(principal, header, line));
  return out;
}

export const invoiceResult = (principal: Principal, header: DocumentItem, lines: readonly SalesLine[]): InvoiceResult => ({
  body: presentInvoice(principal, header, lines),
  etag: etagOf(header.revision),
});

// ---------------------------------------------------------------------------------------------
// Reads

/** The invoice if the caller may see it (account, kind, salesperson boundary), else 404. */
export const visibleInvoice = (principal: Principal, id: string) => visibleDocument<SalesTree>(principal, "invoice", id, WHAT);

const requireRead = (principal: Principal) => requireDocumentPermission(principal, "invoices.list", "reading invoices");
const requireModify = (principal: Principal) => requireDocumentPermission(principal, "invoices.modify", "changing invoices");

/**
 * One invoice with every detail field and its lines in stored order: the document (ONE Query) and
 * the account in parallel, then the current related values of the snapshot rule (customer,
 * items, locations) in one parallel round.
 */
export async function getInvoice(principal: Principal, id: string): Promise<InvoiceResult> {
  requireRead(principal);
  const [tree, account] = await Promise.all([visibleInvoice(principal, id), accountSettings(principal.accountId)]);
  const current = await withCurrentValues(tree.header, tree.lines, account, true);
  return invoiceResult(principal, current.header, current.lines);
}

/** Invoices newest number first, with the filters of spec 4.5 (and `ids`). */
export async function listInvoices(
  principal: Principal,
  url: string,
  page: PageRequest,
  query: InvoiceListQuery,
): Promise<ListEnvelope<Record<string, unknown>>> {
  requireRead(principal);
  const needle = query.q?.trim().toLowerCase();
  return listDocuments({
    principal,
    kind: "invoice",
    url,
    page,
    ids: query.ids,
    filter: {
      statusId: statusIdFilter(query.status_id, INVOICE_STATUS),
      partyId: query.customer_id,
      dates: [{ attribute: "issueDate", from: query.issue_date_from, to: query.issue_date_to }],
      text: needle ? { needle, number: /^\d{1,9}$/.test(needle) ? Number(needle) : undefined } : undefined,
    },
    present: (headers) => headers.map((header) => presentInvoice(principal, header)),
  });
}

// ---------------------------------------------------------------------------------------------
// Writes

const HEADER_MAP: readonly [string, keyof DocumentItem][] = [
  ["name", "name"],
  ["issue_date", "issueDate"],
  ["expiry_date", "expiryDate"],
  ["custom_invoice_number", "customNumber"],
  ["purchase_order_number", "purchaseOrderNumber"],
  ["attention", "attention"],
  ["shipping_address", "shippingAddress"],
  ["public_note", "publicNote"],
  ["payment_terms", "paymentTerms"],
];

/** The status that follows the amount paid (architecture section 8): 9 -> 10 -> 11 and back. */
export function paymentStatus(header: Pick<DocumentItem, "status" | "amountPaidMinor" | "total">): { status: InvoiceStatus; statusId: number } {
  if (header.status === "cancelled") return { status: "cancelled", statusId: INVOICE_STATUS.cancelled.id };
  const paid = header.amountPaidMinor;
  const status: InvoiceStatus = paid <= 0 ? "sent" : paid >= minorOf(header.total) ? "paid" : "partially_paid";
  return { status, statusId: INVOICE_STATUS[status].id };
}

/** Totals, percentages and snapshots of an invoice's header. */
export function deriveInvoice(
  header: DocumentItem,
  context: Pick<SalesContext, "account" | "customer">,
  lines: readonly SalesLine[],
): { header: DocumentItem; lines: SalesLine[] } {
  const priced = priceSalesLines(lines, header.discountPercent, header.shippingFee);
  let next: DocumentItem = { ...header, ...priced.totals };
  if (!isLinked(next)) {
    const { packedPercent, shippedPercent } = progressOf(priced.lines, context.account.packingServiceItems);
    next = withPercents(next, { packedPercent, shippedPercent });
  }
  next = { ...next, ...paymentStatus(next) };
  next = deriveSalesHeader(next, context, priced.lines, [next.customNumber, next.name]);
  return { header: next, lines: priced.lines };
}

/** The stock an invoice's lines take (`sign` -1 gives it back): on hand, and for linked invoices the order's reservation too. */
export function invoiceStock(header: DocumentItem, lines: readonly SalesLine[], sign: 1 | -1): StockChange[] {
  return lineChanges(lines, isLinked(header) ? "sell_reserved" : "sell", (line) => sign * line.quantity).changes;
}

function mapCancellation(cancellation: Cancellation): never {
  const details = referenceDetails(cancellation);
  if (details.length > 0) throw errors.validationFailed(details);
  throw errors.internal(new Error(`invoice write failed: ${cancellation.labels.join(", ")}`));
}

interface CreateRequest {
  customerId: string;
  fields: Record<string, unknown>;
  specs: LineSpec[];
  salespersonId?: string;
  sourceEstimate?: { id: string; number: number };
}

async function createInvoiceDocument(principal: Principal, request: CreateRequest, options: DraftOptions) {
  return retrying("create invoice", async () => {
    const [account, customer] = await Promise.all([accountSettings(principal.accountId), readCustomer(principal, request.customerId, options)]);
    const context: SalesContext = { principal, account, customer };
    const built = await buildSalesLines(context, request.specs);
    const { cleared: _cleared, ...set } = salesHeaderFields(request.fields, HEADER_MAP);
    const customFields =
      request.fields.custom_field_values === undefined ? undefined : customFieldWrite(request.fields.custom_field_values as never, "invoice");
    const documentId = randomUUID();
    const base: DocumentItem = {
      ...blankHeader({
        accountId: principal.accountId,
        documentId,
        kind: "invoice",
        revision: newRevision("inv"),
        status: "sent",
        statusId: INVOICE_STATUS.sent.id,
        assignedUserId: request.salespersonId ?? principal.userId,
      }),
      issueDate: set.issueDate ?? localToday(principal, account),
      ...set,
      paymentTerms: set.paymentTerms ?? account.paymentTerms,
      customFieldValues: customFields?.values,
      ...(request.sourceEstimate ? { sourceEstimateId: request.sourceEstimate.id, sourceEstimateNumber: request.sourceEstimate.number } : {}),
    };
    if (!base.paymentTerms) delete base.paymentTerms;
    const { header, lines } = deriveInvoice(base, context, built);
    const references: Reference[] = [...(customFields?.references ?? [])];
    try {
      return await insertSalesDocument({
        principal,
        kind: "invoice",
        header,
        lines,
        changes: invoiceStock(header, lines, 1),
        source: { sourceType: "invoice", sourceId: documentId, userId: principal.userId, reason: "Invoice created" },
        customer,
        activity: { revenueMinor: minorOf(header.total), invoiceDate: header.issueDate },
        references,
        completion: options.completion,
        present: (h, l) => presentInvoice(principal, h, l),
        extra: options.extra,
        customerActivity: options.customerActivity,
        ownerCounts: options.ownerCounts,
        // The account's record limit counts invoices (architecture: record_limit, null = none).
        recordLimit: account.recordLimit ?? undefined,
      });
    } catch (error) {
      if (error instanceof CustomerChangedError) return RETRY;
      throw error;
    }
  });
}

/**
 * Creates an unpaid invoice (status 9 Sent) numbered from the account's sequence (spec 4.5
 * create): the number is saved with the invoice (a failed request consumes none); its inventory
 * lines take their quantities from on hand (422 naming the line when stock is short); the
 * customer's document count, revenue and last invoice date move in the same write.
 */
export async function createInvoice(principal: Principal, input: InvoiceCreateBody, completion: IdempotencyCompletion | undefined): Promise<InvoiceResult> {
  requireModify(principal);
  requireShippingCostPermission(principal, input);
  const specs = lineSpecsOf(principal, input.lines, [], "forbid");
  const written = await createInvoiceDocument(principal, { customerId: input.customer_id, fields: input, specs }, { completion });
  if (!written.ok) mapCancellation(written.cancellation);
  return { body: written.body, etag: etagOf(written.header.revision) };
}

/**
 * Builds a complete unpaid invoice from a draft (an estimate converted into an invoice): the
 * same defaults, snapshots, stock effects, counters and customer figures as the API create,
 * written in ONE transaction together with the caller's `options.extra` items (for example the
 * estimate's close, conditioned on its revision, and a prospect's conversion). Lines keep the
 * draft's names, descriptions, prices, discounts and tax rates. Returns the new invoice (body
 * and ETag), or the cancellation when only the caller's own items failed their conditions
 * (nothing was written). Throws the API's errors (422 for an invalid customer, item, row or
 * short stock; 403 without `invoices.modify`).
 */
export async function createInvoiceFromDraft(
  principal: Principal,
  draft: SalesDraft,
  options: DraftOptions = {},
): Promise<{ ok: true; result: InvoiceResult; header: DocumentItem } | { ok: false; cancellation: Cancellation }> {
  requireModify(principal);
  const written = await createInvoiceDocument(
    principal,
    {
      customerId: draft.customerId,
      fields: draftRequestFields(draft),
      specs: draftLineSpecs(draft.lines),
      salespersonId: draft.salespersonId,
      sourceEstimate: draft.sourceEstimate,
    },
    options,
  );
  if (!written.ok) return written;
  return { ok: true, result: { body: written.body, etag: etagOf(written.header.revision) }, header: written.header };
}

/** The customer figures an invoice moves when its total, customer or issue date change. */
function addRevenueMoves(tx: TransactionBuilder, previous: DocumentItem, next: DocumentItem, context: SalesContext): void {
  const accountId = previous.accountId;
  const customer = context.customer;
  const date = laterDate(customer.lastInvoiceDate, next.issueDate) !== customer.lastInvoiceDate ? next.issueDate : undefined;
  if (previous.partyId !== next.partyId) {
    tx.add(
      "old customer",
      tx.entities.party
        .patch({ accountId, partyId: previous.partyId! })
        .add({ documentCount: -1, lifetimeRevenueMinor: -minorOf(previous.total) })
        .commit(),
    );
    addDocumentActivity(
      tx,
      { accountId, partyId: customer.partyId },
      { documents: 1, revenueMinor: minorOf(next.total), ...(date ? { invoiceDate: date, invoiceDateWas: customer.lastInvoiceDate ?? null } : {}) },
    );
    return;
  }
  const delta = minorOf(next.total) - minorOf(previous.total);
  if (delta !== 0 || date) {
    addDocumentActivity(
      tx,
      { accountId, partyId: customer.partyId },
      { documents: 0, revenueMinor: delta, ...(date ? { invoiceDate: date, invoiceDateWas: customer.lastInvoiceDate ?? null } : {}) },
    );
  }
}

/** 409 `invoice_update_not_allowed` unless the invoice is unpaid and standalone. */
function assertUpdatable(header: DocumentItem): void {
  if (isLinked(header)) {
    throw errors.stateConflict("invoice_update_not_allowed", "This invoice was created from a sales order; it is changed through its sales order.");
  }
  if (header.status !== "sent") {
    throw errors.stateConflict(
      "invoice_update_not_allowed",
      `Only unpaid invoices can be updated; this one is ${INVOICE_STATUS[header.status as InvoiceStatus].label}.`,
    );
  }
}

/**
 * Updates an unpaid standalone invoice (spec 4.5 update): partial; `lines` replaces every
 * active non-discount line (ids keep identity); changing the customer needs `lines`; totals,
 * taxes, discounts, stock (the difference, through the ledger) and the customers' figures are
 * recalculated in one write. Lines with packed quantities keep their item and cannot shrink
 * below them or be removed. `If-Match` makes it conditional.
 */
export async function updateInvoice(
  principal: Principal,
  id: string,
  input: InvoiceUpdateBody,
  ifMatchHeader: string | undefined,
  completion: IdempotencyCompletion | undefined,
): Promise<InvoiceResult> {
  requireModify(principal);
  requireShippingCostPermission(principal, input);
  const ifMatch = parseIfMatch(ifMatchHeader);
  return retrying(
    "update invoice",
    async () => {
      const tree = await visibleInvoice(principal, id);
      const previous = tree.header;
      assertRevision(ifMatch, previous.revision);
      assertUpdatable(previous);
      const customerChanges = input.customer_id !== undefined && input.customer_id !== previous.partyId;
      if (customerChanges && input.lines === undefined) {
        throw errors.validationFailed([{ param: "lines", code: "required", message: "is required when customer_id changes." }]);
      }
      const [account, customer] = await Promise.all([
        accountSettings(principal.accountId),
        readCustomer(principal, input.customer_id ?? previous.partyId!, { unchanged: !customerChanges }),
      ]);
      const context: SalesContext = { principal, account, customer };
      let lines = tree.lines;
      if (input.lines !== undefined) {
        const kept = matchReplacementLines(tree.lines, input.lines, MAX_SALES_LINES, (line) => line.lineType !== "discount");
        const keptIds = new Set(kept.flatMap((line) => (line ? [line.id] : [])));
        const dropped = tree.lines.find((line) => line.quantityPacked > 0 && !keptIds.has(line.id));
        if (dropped) {
          throw errors.validationFailed([
            { param: "lines", code: "packed_line_removed", message: `the line ${dropped.id} has packed quantities and cannot be removed.` },
          ]);
        }
        lines = withStoredDiscountLine(await buildSalesLines(context, lineSpecsOf(principal, input.lines, kept, "forbid")), tree.lines);
      }
      const { cleared, ...set } = salesHeaderFields(input, HEADER_MAP);
      const merged = { ...previous, ...set } as DocumentItem;
      for (const attribute of cleared) delete (merged as Record<string, unknown>)[attribute];
      if (!merged.issueDate) merged.issueDate = previous.issueDate;
      const customFields = input.custom_field_values === undefined ? undefined : customFieldWrite(input.custom_field_values, "invoice");
      merged.customFieldValues = customFields ? customFields.values : previous.customFieldValues;
      merged.revision = newRevision("inv");
      merged.updatedAt = nextTimestamp(previous.updatedAt);
      const { header: next, lines: priced } = deriveInvoice(merged, context, lines);
      // Sent back as read: nothing to write (revision and updated_at stay).
      if (changesNothing(previous, next, tree.lines, priced)) return invoiceResult(principal, previous, tree.lines);
      const changes = input.lines === undefined ? [] : mergeStockChanges([...invoiceStock(previous, tree.lines, -1), ...invoiceStock(next, priced, 1)]);
      let written: InvoiceResult | undefined;
      try {
        const { cancellation } = await commitWithStock({
          accountId: principal.accountId,
          source: { sourceType: "invoice", sourceId: id, userId: principal.userId, reason: `Invoice ${previous.number} updated` },
          changes,
          document: (tx) => {
            addDocumentWrite(tx, { header: next, lines: priced, previous, condition: (a, op) => op.eq!(a.status, "sent") });
            addRevenueMoves(tx, previous, next, context);
            checkReferences(tx, principal.accountId, customFields?.references ?? []);
          },
          outcome: () => {
            written = invoiceResult(principal, next, priced);
            return { completion: withEtag(completion, next.revision), body: written.body };
          },
        });
        if (!cancellation) return written!;
        if (cancellation.failed(DOCUMENT_LABEL) || cancellation.failedUnder("party:").length > 0 || cancellation.failed("old customer")) return RETRY;
        return mapCancellation(cancellation);
      } catch (error) {
        if (error instanceof StockRuleError) throw stockRuleError(error, changes, priced);
        throw error;
      }
    },
    undefined,
    [documentLock(principal.accountId, id)],
  );
}

/**
 * The sales order of a linked invoice after the invoice's quantities leave it (a cancelled
 * invoice): its lines' invoiced quantities drop, the order reopens (its reservations come back
 * with the same write) and its percentages follow.
 */
async function orderAfterCancel(principal: Principal, invoice: DocumentItem, lines: readonly SalesLine[]) {
  const tree = await readDocumentTree(principal.accountId, invoice.sourceSalesOrderId!);
  if (!tree) return undefined;
  const back = new Map<string, number>();
  for (const line of lines) if (line.salesOrderLineId) back.set(line.salesOrderLineId, addQuantities(back.get(line.salesOrderLineId) ?? 0, line.quantity));
  const orderLines = (tree.lines as SalesLine[]).map((line) =>
    back.has(line.id) ? { ...line, quantityInvoiced: Math.max(0, addQuantities(line.quantityInvoiced, -back.get(line.id)!)) } : line,
  );
  const previous = tree.header;
  const next = withPercents(
    {
      ...previous,
      status: "open",
      statusId: SO_STATUS.open.id,
      revision: newRevision("so"),
      updatedAt: nextTimestamp(previous.updatedAt),
    },
    { invoicedPercent: progressOf(orderLines, previous.packingServiceItems ?? false).invoicedPercent },
  );
  return { previous, next, lines: orderLines };
}

/**
 * Cancels an unpaid invoice without payment records (architecture section 8): status 12; its
 * stock comes back (a unique item is no longer sold); a linked invoice's quantities go back to
 * its sales order (reserved again, the order reopened); the customer's revenue drops by its
 * total. 409 `invoice_cancel_not_allowed` for cancelled invoices and invoices with payments.
 */
export async function cancelInvoice(principal: Principal, id: string, completion: IdempotencyCompletion | undefined): Promise<InvoiceResult> {
  requireModify(principal);
  return retrying(
    "cancel invoice",
    async () => {
      const tree = await visibleInvoice(principal, id);
      const previous = tree.header;
      if (previous.status === "cancelled") throw errors.stateConflict("invoice_cancel_not_allowed", "This invoice is already cancelled.");
      if (previous.paymentCount > 0 || previous.amountPaidMinor !== 0) {
        throw errors.stateConflict("invoice_cancel_not_allowed", "An invoice with payments or refunds cannot be cancelled; delete them first.");
      }
      const order = isLinked(previous) ? await orderAfterCancel(principal, previous, tree.lines) : undefined;
      const next: DocumentItem = {
        ...previous,
        status: "cancelled",
        statusId: INVOICE_STATUS.cancelled.id,
        revision: newRevision("inv"),
        updatedAt: nextTimestamp(previous.updatedAt),
      };
      const changes = mergeStockChanges(invoiceStock(previous, tree.lines, -1));
      const written = invoiceResult(principal, next, tree.lines);
      try {
        const { cancellation } = await commitWithStock({
          accountId: principal.accountId,
          source: { sourceType: "invoice", sourceId: id, userId: principal.userId, reason: `Invoice ${previous.number} cancelled` },
          changes,
          document: (tx) => {
            addDocumentWrite(tx, { header: next, previous, condition: (a, op) => `${op.eq!(a.status, "sent")} AND ${op.eq!(a.paymentCount, 0)}` });
            if (order) addDocumentWrite(tx, { header: order.next, lines: order.lines, previous: order.previous });
            tx.add(
              "customer",
              tx.entities.party
                .patch({ accountId: principal.accountId, partyId: previous.partyId! })
                .add({ lifetimeRevenueMinor: -minorOf(previous.total) })
                .commit(),
            );
          },
          outcome: () => ({ completion: withEtag(completion, next.revision), body: written.body }),
        });
        if (!cancellation) return written;
        if (cancellation.failed(DOCUMENT_LABEL)) return RETRY;
        throw errors.internal(new Error(`invoice cancel failed: ${cancellation.labels.join(", ")}`));
      } catch (error) {
        if (error instanceof StockRuleError) throw stockRuleError(error, changes, tree.lines);
        throw error;
      }
    },
    undefined,
    [documentLock(principal.accountId, id)],
  );
}

/**
 * Deletes an invoice (architecture section 8): standalone, unpaid (or cancelled), without payment
 * records or packing lists; an unpaid invoice's stock comes back and its total leaves the
 * customer's revenue; counts move in the same write. Else 409 `invoice_delete_not_allowed`.
 */
export async function deleteInvoice(
  principal: Principal,
  id: string,
  completion: IdempotencyCompletion | undefined,
): Promise<{ id: string; object: "invoice"; deleted: true }> {
  requireModify(principal);
  const resource = { id, object: "invoice" as const, deleted: true as const };
  return retrying(
    "delete invoice",
    async () => {
      const tree = await visibleInvoice(principal, id);
      const header = tree.header;
      if (isLinked(header))
        throw errors.stateConflict("invoice_delete_not_allowed", "An invoice created from a sales order cannot be deleted; cancel it instead.");
      if (header.status !== "sent" && header.status !== "cancelled") {
        throw errors.stateConflict(
          "invoice_delete_not_allowed",
          `Only unpaid invoices can be deleted; this one is ${INVOICE_STATUS[header.status as InvoiceStatus].label}.`,
        );
      }
      if (header.paymentCount > 0)
        throw errors.stateConflict("invoice_delete_not_allowed", "An invoice with payment records cannot be deleted; delete them first.");
      if (tree.lines.some((line) => line.quantityPacked > 0))
        throw errors.stateConflict("invoice_delete_not_allowed", "An invoice with packing lists cannot be deleted; cancel it instead.");
      const live = header.status === "sent";
      const changes = live ? mergeStockChanges(invoiceStock(header, tree.lines, -1)) : [];
      try {
        const { cancellation } = await commitWithStock({
          accountId: principal.accountId,
          source: { sourceType: "invoice", sourceId: id, userId: principal.userId, reason: `Invoice ${header.number} deleted` },
          changes,
          document: (tx) => {
            addDocumentDelete(tx, tree as unknown as DocumentTree);
            addKindCountDecrement(tx, tree.header);
            addAssigneeCount(tx, header, -1);
            tx.add(
              "customer",
              tx.entities.party
                .patch({ accountId: principal.accountId, partyId: header.partyId! })
                .add({ documentCount: -1, lifetimeRevenueMinor: live ? -minorOf(header.total) : 0 })
                .commit(),
            );
          },
          outcome: () => ({ completion, body: resource }),
        });
        if (!cancellation) return resource;
        if (cancellation.failed(DOCUMENT_LABEL)) return RETRY;
        throw errors.internal(new Error(`invoice delete failed: ${cancellation.labels.join(", ")}`));
      } catch (error) {
        if (error instanceof StockRuleError) throw stockRuleError(error, changes, tree.lines);
        throw error;
      }
    },
    undefined,
    [documentLock(principal.accountId, id)],
  );
}

/**
 * Dispatches an invoice (architecture section 8): records `date_sent` (given, or today in the
 * account's time zone); a repeat keeps the first date and changes nothing. Cancelled invoices:
 * 409 `invoice_send_not_allowed`.
 */
export async function sendInvoice(
  principal: Principal,
  id: string,
  input: { date_sent?: string },
  completion: IdempotencyCompletion | undefined,
): Promise<InvoiceResult> {
  requireModify(principal);
  return retrying(
    "send invoice",
    async () => {
      const tree = await visibleInvoice(principal, id);
      const previous = tree.header;
      if (previous.status === "cancelled") throw errors.stateConflict("invoice_send_not_allowed", "A cancelled invoice cannot be sent.");
      if (previous.dateSent) return invoiceResult(principal, previous, tree.lines);
      const account = await accountSettings(principal.accountId);
      const next: DocumentItem = withAccountSnapshot(
        { ...previous, dateSent: input.date_sent ?? accountToday(account), revision: newRevision("inv"), updatedAt: nextTimestamp(previous.updatedAt) },
        account,
      );
      const written = invoiceResult(principal, next, tree.lines);
      const cancellation = await writeTransaction((tx) => addDocumentWrite(tx, { header: next, previous }), {
        completion: withEtag(completion, next.revision),
        body: written.body,
      });
      return cancellation ? RETRY : written;
    },
    undefined,
    [documentLock(principal.accountId, id)],
  );
}

// ---------------------------------------------------------------------------------------------
// Payments (architecture section 8)

function presentPayment(payment: DocumentPaymentItem) {
  const card =
    payment.cardBrand !== undefined || payment.cardLast4 !== undefined ? { brand: orNull(payment.cardBrand), last4: orNull(payment.cardLast4) } : null;
  return {
    id: payment.paymentId,
    object: "payment",
    invoice_id: payment.documentId,
    amount: payment.amount,
    type: payment.amountMinor < 0 ? "refund" : "payment",
    reference: orNull(payment.reference),
    payment_date: orNull(payment.paymentDate),
    card,
  };
}

export const INVOICE_PAYMENTS: PaymentPolicy = {
  kind: "invoice",
  what: WHAT,
  revisionPrefix: "inv",
  readPermission: "invoices.list",
  writePermission: "invoices.modify",
  assertPayable(header) {
    if (header.status === "cancelled") throw errors.stateConflict("invoice_payment_not_allowed", "A cancelled invoice takes no payments.");
  },
  deleteNotAllowedCode: "invoice_payment_delete_not_allowed",
  afterPayment: (header) => paymentStatus(header),
  addRelated(tx, previous, next, deltaMinor) {
    // A linked invoice's payments are its sales order's too (`amount_paid`, `paid_percent`).
    if (!previous.sourceSalesOrderId) return;
    tx.add(
      "sales order",
      tx.entities.document
        .patch({ accountId: previous.accountId, documentId: previous.sourceSalesOrderId })
        .add({ amountPaidMinor: deltaMinor })
        .set({ revision: newRevision("so"), updatedAt: next.updatedAt })
        .commit(),
    );
  },
  present: presentPayment,
};

export const listInvoicePayments = (principal: Principal, id: string, url: string, page: PageRequest) =>
  listPayments(principal, INVOICE_PAYMENTS, id, url, page);
export const createInvoicePayment = (principal: Principal, id: string, body: InvoicePaymentBody, completion: IdempotencyCompletion | undefined) =>
  recordPayment(principal, INVOICE_PAYMENTS, id, body, completion);
export const deleteInvoicePayment = (principal: Principal, id: string, paymentId: string, completion: IdempotencyCompletion | undefined) =>
  deletePayment(principal, INVOICE_PAYMENTS, id, paymentId, completion);

// ---------------------------------------------------------------------------------------------
// Packing and shipping of standalone invoices (lib/domain/documents/sales-orders/fulfillments.ts)

const managedBySalesOrder = (header: DocumentItem) =>
  errors.stateConflict(
    "invoice_fulfillment_managed_by_sales_order",
    `This invoice was created from a sales order: pack and ship it through sales order ${header.sourceSalesOrderId} (fulfillment_sales_order_id).`,
  );

export const INVOICE_FULFILLMENTS: FulfillmentPolicy = {
  kind: "invoice",
  what: WHAT,
  permission: "invoices.modify",
  read: visibleInvoice,
  assertPackable(_principal, tree, account) {
    if (isLinked(tree.header)) throw managedBySalesOrder(tree.header);
    if (tree.header.status === "cancelled") throw errors.stateConflict("invoice_pack_not_allowed", "A cancelled invoice cannot be packed.");
    if (!account.packingListsEnabled) throw errors.stateConflict("invoice_pack_not_allowed", "Packing lists are disabled for this account.");
  },
  assertShippable(tree) {
    if (isLinked(tree.header)) throw managedBySalesOrder(tree.header);
  },
  invalid: (details) => errors.invalidBody("invalid_invoice_pack", details),
  alreadyPacked: (param) => errors.invalidBody("invalid_invoice_pack", [{ param, code: "already_packed", message: "is a line that is already fully packed." }]),
  nothingLeft: () => errors.stateConflict("invoice_pack_not_allowed", "Nothing is left to pack on this invoice."),
  next(previous, lines, account) {
    const serviceItems = account?.packingServiceItems ?? previous.packingServiceItems ?? false;
    const { packedPercent, shippedPercent } = progressOf(lines, serviceItems);
    const next = withPercents({ ...previous, revision: newRevision("inv"), updatedAt: nextTimestamp(previous.updatedAt) }, { packedPercent, shippedPercent });
    return account ? withAccountSnapshot(next, account) : next;
  },
};

export const listInvoiceFulfillments = (principal: Principal, id: string, url: string, page: PageRequest) =>
  listFulfillments(principal, INVOICE_FULFILLMENTS, id, url, page, "invoices.list");

/** Packs quantities of a standalone invoice (spec 4.5 pack); 201 with the new packing list. */
export async function packInvoice(principal: Principal, id: string, body: PackBody, completion: IdempotencyCompletion | undefined) {
  requireRead(principal);
  return packDocument(principal, INVOICE_FULFILLMENTS, id, body, completion);
}

/** Marks a packing list of a standalone invoice shipped (architecture section 8). */
export async function shipInvoiceFulfillment(
  principal: Principal,
  id: string,
  fulfillmentId: string,
  body: ShipBody,
  completion: IdempotencyCompletion | undefined,
) {
  requireRead(principal);
  return shipFulfillment(principal, INVOICE_FULFILLMENTS, id, fulfillmentId, body, completion);
}
