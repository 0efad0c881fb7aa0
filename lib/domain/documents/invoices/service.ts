import { laterUpdatedAt } from "../../../core/clock.js";
import { mergeStockChanges } from "../../inventory/stock-changes.js";
import { accountToday, changesNothing, statusIdFilter, withEtag } from "../rules.js";
import type { Principal } from "../../../auth/permissions.js";
import { Decimal } from "../../../core/decimal.js";
import { errors } from "../../../core/errors.js";
import type { IdempotencyCompletion } from "../../../core/idempotency.js";
import { DOCUMENT_LABEL, addDocumentWrite, readDocumentHeader, readDocumentTree } from "../../../db/documents.js";
import { latestIssueDate } from "../../../db/document-lists.js";
import { addDocumentActivity, readParty } from "../../../db/parties.js";
import { checkReferences } from "../../../db/references.js";
import { RETRY } from "../../../db/retry.js";
import type { DocumentItem, PartyItem } from "../../../db/service.js";
import { writeTransaction, type TransactionBuilder } from "../../../db/transactions.js";
import type { InvoiceCreateBody, InvoiceListQuery, InvoiceUpdateBody } from "../../../schemas/invoices.js";
import { minorOf } from "../../common/money.js";
import { newRevision } from "../../common/revisions.js";
import { accountSettings, writeAtRevision } from "../documents.js";
import type { DraftOptions, SalesDraft } from "../sales/drafts.js";
import { laterDate, mergeSalesHeader, requireShippingCostPermission, withAccountSnapshot } from "../sales/header.js";
import { lineSpecsOf, priceSalesLines, type SalesContext, type SalesLine } from "../sales/model.js";
import { progressOf, withPercents } from "../sales/progress.js";
import { readCustomer, replaceSalesLines } from "../sales/reads.js";
import {
  commitSalesStock,
  createdResult,
  createSalesDocument,
  deleteSalesDocument,
  createFromDraft,
  type DraftCreated,
  requireSalesModify,
  salesReadOperations,
  updateCancellation,
  type SalesCreatePolicy,
  updateSalesDocument,
} from "../sales/service.js";
import { withInvoiceOf } from "../sales-orders/invoiced-money.js";
import { SO_STATUS } from "../sales-orders/model.js";
import {
  INVOICE_HEADER_MAP,
  INVOICE_KIND,
  INVOICE_STATUS,
  assertCancellable,
  assertDeletable,
  assertPackedLinesKept,
  assertUpdatable,
  deriveInvoice,
  invoiceResult,
  invoiceStock,
  isLinked,
  type InvoiceResult,
} from "./model.js";

/**
 * Invoices: reads and writes (spec part 2, sections 2.5, 3.5 and 4.5; architecture sections 4
 * and 8); statuses, rules and presentation are in `model.ts`, payments and packing in
 * `fulfillment.ts`.
 *
 * Customer figures, in the same writes: `document_count` (+1 create, -1 delete);
 * `lifetime_revenue_total` = the sum of the totals of the customer's invoices that are not
 * cancelled (accrual reading: revenue counts when invoiced, at create, moves with updates, leaves
 * at cancel or delete; payments do not move it); `last_invoice_date` = the latest issue date of
 * the customer's invoices (it never moves back).
 */

// ---------------------------------------------------------------------------------------------
// Reads

const INVOICE_READS = salesReadOperations<InvoiceListQuery>(INVOICE_KIND, (query) => ({
  statusId: statusIdFilter(query.status_id, INVOICE_STATUS),
  partyId: query.customer_id,
  dates: [{ attribute: "issueDate", from: query.issue_date_from, to: query.issue_date_to }],
}));

/** The invoice if the caller may see it (account, kind, salesperson boundary), else 404. */
export const visibleInvoice = INVOICE_READS.visible;

/**
 * One invoice with every detail field and its lines in stored order: the document (ONE Query) and
 * the account in parallel, then the current related values of the snapshot rule (customer,
 * items, locations) in one parallel round.
 */
export const getInvoice = INVOICE_READS.get;

/** Invoices newest number first, with the filters of spec 4.5 (and `ids`). */
export const listInvoices = INVOICE_READS.list;

// ---------------------------------------------------------------------------------------------
// Writes

const INVOICE_CREATE: SalesCreatePolicy = {
  kind: INVOICE_KIND,
  status: { status: "sent", statusId: INVOICE_STATUS.sent.id },
  map: INVOICE_HEADER_MAP,
  context: async (principal, request, options) => {
    const [account, customer] = await Promise.all([accountSettings(principal.accountId), readCustomer(principal, request.customerId, options)]);
    return { principal, account, customer };
  },
  derive: deriveInvoice,
  changes: (header, lines) => invoiceStock(header, lines, 1),
  activity: (header) => ({ revenueMinor: minorOf(header.total), invoiceDate: header.issueDate }),
  references: () => [],
  // The account's record limit counts invoices (architecture: record_limit, null = none).
  recordLimit: (account) => account.recordLimit ?? undefined,
};

/**
 * Creates an unpaid invoice (status 9 Sent) numbered from the account's sequence (spec 4.5
 * create): the number is saved with the invoice (a failed request consumes none); its inventory
 * lines take their quantities from on hand (422 naming the line when stock is short); the
 * customer's document count, revenue and last invoice date move in the same write.
 */
export async function createInvoice(principal: Principal, input: InvoiceCreateBody, completion: IdempotencyCompletion | undefined): Promise<InvoiceResult> {
  requireSalesModify(principal, INVOICE_KIND);
  requireShippingCostPermission(principal, input);
  const specs = lineSpecsOf(principal, input.lines, [], "forbid");
  const written = await createSalesDocument(principal, INVOICE_CREATE, { customerId: input.customer_id, fields: input, specs: () => specs }, { completion });
  return createdResult(written, INVOICE_KIND);
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
export const createInvoiceFromDraft = (principal: Principal, draft: SalesDraft, options: DraftOptions = {}): Promise<DraftCreated> =>
  createFromDraft(principal, INVOICE_CREATE, draft, options);

/**
 * A customer's last invoice date once `invoice` stops being its latest: deleted (`stays`
 * undefined), moved to another customer (likewise) or dated earlier (`stays`: its new date).
 * The latest of the customer's other invoices (and `stays`), null when none; undefined when the
 * stored date does not move (the invoice was not the latest, or another shares its date).
 */
async function fallbackInvoiceDate(customer: PartyItem, invoice: DocumentItem, stays?: string): Promise<string | null | undefined> {
  const was = customer.lastInvoiceDate;
  if (!invoice.issueDate || was !== invoice.issueDate || (stays !== undefined && stays >= was)) return undefined;
  const others = await latestIssueDate(customer.accountId, "invoice", customer.partyId, invoice.number);
  const latest = laterDate(others, stays);
  return latest === was ? undefined : (latest ?? null);
}

/** The `DocumentActivity` date fields that move a customer's last invoice date to `date` (nothing when undefined). */
const invoiceDateMove = (customer: PartyItem, date: string | null | undefined) =>
  date === undefined ? {} : { invoiceDate: date, invoiceDateWas: customer.lastInvoiceDate ?? null };

/**
 * The customer figures an invoice moves when its total, customer or issue date change; the
 * customers' last invoice dates are read first (`readRevenueMoves`), so each op is conditioned
 * on the date it read.
 */
function addRevenueMoves(tx: TransactionBuilder, previous: DocumentItem, next: DocumentItem, context: SalesContext, moves: RevenueDateMoves): void {
  const accountId = previous.accountId;
  const customer = context.customer;
  if (previous.partyId !== next.partyId) {
    const old = moves.oldCustomer!;
    addDocumentActivity(
      tx,
      { accountId, partyId: old.party.partyId },
      { documents: -1, revenueMinor: -minorOf(previous.total), ...invoiceDateMove(old.party, old.date) },
    );
    addDocumentActivity(
      tx,
      { accountId, partyId: customer.partyId },
      { documents: 1, revenueMinor: minorOf(next.total), ...invoiceDateMove(customer, moves.date) },
    );
    return;
  }
  const delta = minorOf(next.total) - minorOf(previous.total);
  if (delta !== 0 || moves.date !== undefined) {
    addDocumentActivity(tx, { accountId, partyId: customer.partyId }, { documents: 0, revenueMinor: delta, ...invoiceDateMove(customer, moves.date) });
  }
}

/** Where an invoice update moves its customers' last invoice dates (undefined: unchanged). */
interface RevenueDateMoves {
  date: string | null | undefined;
  oldCustomer?: { party: PartyItem; date: string | null | undefined };
}

/** Reads what `addRevenueMoves` conditions on: the previous customer (when it changes) and the dates each customer falls back to. */
async function readRevenueMoves(previous: DocumentItem, next: DocumentItem, customer: PartyItem): Promise<RevenueDateMoves> {
  const later = laterDate(customer.lastInvoiceDate, next.issueDate) !== customer.lastInvoiceDate ? next.issueDate : undefined;
  if (previous.partyId !== next.partyId) {
    const party = await readParty(previous.accountId, previous.partyId!);
    if (!party) return { date: later };
    return { date: later, oldCustomer: { party, date: await fallbackInvoiceDate(party, previous) } };
  }
  return { date: later ?? (await fallbackInvoiceDate(customer, previous, next.issueDate)) };
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
  return updateSalesDocument(principal, INVOICE_KIND, id, input, ifMatchHeader, async (tree) => {
    const previous = tree.header;
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
      lines = await replaceSalesLines(context, tree.lines, input.lines, "forbid", (kept) => assertPackedLinesKept(tree.lines, kept));
    }
    const { merged, references } = mergeSalesHeader(previous, input, INVOICE_KIND, INVOICE_HEADER_MAP);
    const { header: next, lines: priced } = deriveInvoice(merged, context, lines);
    // Sent back as read: nothing to write (revision and updated_at stay).
    if (changesNothing(previous, next, tree.lines, priced)) return invoiceResult(principal, previous, tree.lines);
    const changes = input.lines === undefined ? [] : mergeStockChanges([...invoiceStock(previous, tree.lines, -1), ...invoiceStock(next, priced, 1)]);
    const dateMoves = await readRevenueMoves(previous, next, customer);
    let written: InvoiceResult | undefined;
    const { cancellation } = await commitSalesStock(
      {
        accountId: principal.accountId,
        source: { sourceType: "invoice", sourceId: id, userId: principal.userId, reason: `Invoice ${previous.number} updated` },
        changes,
        document: (tx) => {
          addDocumentWrite(tx, { header: next, lines: priced, previous, condition: (a, op) => op.eq!(a.status, "sent") });
          addRevenueMoves(tx, previous, next, context, dateMoves);
          checkReferences(tx, principal.accountId, references ?? []);
        },
        outcome: () => {
          written = invoiceResult(principal, next, priced);
          return { completion: withEtag(completion, next.revision), body: written.body };
        },
      },
      priced,
      { accountId: principal.accountId, documentId: id, revision: previous.revision },
    );
    if (!cancellation) return written!;
    return updateCancellation(cancellation, INVOICE_KIND);
  });
}

/**
 * The sales order of a linked invoice after the invoice's quantities leave it (a cancelled
 * invoice): its lines' invoiced quantities and money drop, the order reopens (its reservations come back
 * with the same write) and its percentages follow.
 */
async function orderAfterCancel(principal: Principal, invoice: DocumentItem, lines: readonly SalesLine[]) {
  const tree = await readDocumentTree(principal.accountId, invoice.sourceSalesOrderId!);
  if (!tree) return undefined;
  const priced = priceSalesLines(lines, invoice.discountPercent, invoice.shippingFee, invoice.discountTotal);
  const orderLines = withInvoiceOf(tree.lines as SalesLine[], { lines: priced.lines, money: priced.money, discountTotal: invoice.discountTotal }, -1);
  const previous = tree.header;
  // The invoice that carried the order's shipping gives it back: the order's next invoice takes it.
  const carriedShipping = !new Decimal(invoice.shippingFee ?? 0).isZero() || !new Decimal(invoice.shippingCost ?? 0).isZero();
  const next = withPercents(
    {
      ...previous,
      ...(carriedShipping ? { shippingInvoiced: false } : {}),
      cancelledInvoiceIds: [...(previous.cancelledInvoiceIds ?? []), invoice.documentId],
      status: "open",
      statusId: SO_STATUS.open.id,
      revision: newRevision("so"),
      updatedAt: laterUpdatedAt(previous.updatedAt),
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
export async function cancelInvoice(
  principal: Principal,
  id: string,
  ifMatchHeader: string | undefined,
  completion: IdempotencyCompletion | undefined,
): Promise<InvoiceResult> {
  requireSalesModify(principal, INVOICE_KIND);
  return writeAtRevision(
    { operation: "cancel invoice", accountId: principal.accountId, documentId: id, ifMatch: ifMatchHeader },
    () => visibleInvoice(principal, id),
    async (tree) => {
      const previous = tree.header;
      assertCancellable(previous);
      const order = isLinked(previous) ? await orderAfterCancel(principal, previous, tree.lines) : undefined;
      const next: DocumentItem = {
        ...previous,
        status: "cancelled",
        statusId: INVOICE_STATUS.cancelled.id,
        revision: newRevision("inv"),
        updatedAt: laterUpdatedAt(previous.updatedAt),
      };
      const changes = mergeStockChanges(invoiceStock(previous, tree.lines, -1));
      const written = invoiceResult(principal, next, tree.lines);
      const { cancellation } = await commitSalesStock(
        {
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
        },
        tree.lines,
        { accountId: principal.accountId, documentId: id, revision: previous.revision },
      );
      if (!cancellation) return written;
      if (cancellation.failed(DOCUMENT_LABEL)) return RETRY;
      throw errors.internal(new Error(`invoice cancel failed: ${cancellation.labels.join(", ")}`));
    },
  );
}

/**
 * Deletes an invoice (architecture section 8): standalone, unpaid (or cancelled), without payment
 * records or packing lists; an unpaid invoice's stock comes back and its total leaves the
 * customer's revenue; counts move in the same write. Else 409 `invoice_delete_not_allowed`.
 */
export const deleteInvoice = (principal: Principal, id: string, ifMatchHeader: string | undefined, completion: IdempotencyCompletion | undefined) =>
  deleteSalesDocument(principal, INVOICE_KIND, id, ifMatchHeader, completion, async (tree) => {
    const header = tree.header;
    // A deleted order never comes back: once gone, its cancelled invoices may go (one read, only for them).
    const orderGone = isLinked(header) && header.status === "cancelled" && !(await readDocumentHeader(header.accountId, header.sourceSalesOrderId!));
    assertDeletable(tree, orderGone);
    const live = header.status === "sent";
    const customer = await readParty(header.accountId, header.partyId!);
    return {
      changes: live ? mergeStockChanges(invoiceStock(header, tree.lines, -1)) : [],
      customer: {
        documents: -1,
        revenueMinor: live ? -minorOf(header.total) : 0,
        ...(customer ? invoiceDateMove(customer, await fallbackInvoiceDate(customer, header)) : {}),
      },
      stockLines: tree.lines,
    };
  });

/**
 * Dispatches an invoice (architecture section 8): records `date_sent` (given, or today in the
 * account's time zone); a repeat keeps the first date and changes nothing. Cancelled invoices:
 * 409 `invoice_send_not_allowed`.
 */
export async function sendInvoice(
  principal: Principal,
  id: string,
  input: { date_sent?: string },
  ifMatchHeader: string | undefined,
  completion: IdempotencyCompletion | undefined,
): Promise<InvoiceResult> {
  requireSalesModify(principal, INVOICE_KIND);
  return writeAtRevision(
    { operation: "send invoice", accountId: principal.accountId, documentId: id, ifMatch: ifMatchHeader },
    () => visibleInvoice(principal, id),
    async (tree) => {
      const previous = tree.header;
      if (previous.status === "cancelled") throw errors.stateConflict("invoice_send_not_allowed", "A cancelled invoice cannot be sent.");
      if (previous.dateSent) return invoiceResult(principal, previous, tree.lines);
      const account = await accountSettings(principal.accountId);
      const next: DocumentItem = withAccountSnapshot(
        { ...previous, dateSent: input.date_sent ?? accountToday(account), revision: newRevision("inv"), updatedAt: laterUpdatedAt(previous.updatedAt) },
        account,
      );
      const written = invoiceResult(principal, next, tree.lines);
      const cancellation = await writeTransaction((tx) => addDocumentWrite(tx, { header: next, previous }), {
        completion: withEtag(completion, next.revision),
        body: written.body,
      });
      return cancellation ? RETRY : written;
    },
  );
}
