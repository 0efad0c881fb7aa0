import type { LedgerSource, StockChange } from "../../inventory/stock-changes.js";
import { withEtag } from "../rules.js";
import { numberKeyOf } from "../../../core/document-scope.js";
import { CustomerChangedError, StockRuleError } from "../../../core/failures.js";
import type { Principal } from "../../../auth/permissions.js";
import { errors } from "../../../core/errors.js";
import type { IdempotencyCompletion } from "../../../core/idempotency.js";
import { addDocumentWrite } from "../../../db/documents.js";
import type { DocumentKind } from "../../../db/entities/document.js";
import { addDocumentActivity, type DocumentActivity } from "../../../db/parties.js";
import { checkReferences, referenceDetails, type Reference } from "../../../db/references.js";
import { allocateNumber } from "../../../db/sequences.js";
import type { DocumentItem, PartyItem } from "../../../db/service.js";
import type { Cancellation, TransactionBuilder } from "../../../db/transactions.js";
import { prepareStock, type RowIdOf } from "../../inventory/stock-holds.js";
import { addAssigneeCount } from "../documents.js";
import { laterDate } from "./header.js";
import { withRowIds, type SalesLine } from "./model.js";
import { stockRuleError } from "./progress.js";
import { stockRefusal, type PlanBasis } from "../stock/writes.js";

/**
 * The numbered create of sales orders and invoices (architecture sections 4 and 8): ONE
 * transaction writes the document, its stock, its counters and its customer's figures.
 */
export interface NewSalesDocument {
  principal: Principal;
  kind: Extract<DocumentKind, "sales_order" | "invoice">;
  /** The header without its number. */
  header: DocumentItem;
  lines: SalesLine[];
  /** The stock changes of the new document (row ids filled in once the rows exist). */
  changes: StockChange[];
  /** The document the changes were planned from (a sales order being invoiced): see `stockRefusal`. */
  basis?: PlanBasis;
  source: LedgerSource;
  customer: PartyItem;
  /** What the customer's figures move by. */
  activity: { revenueMinor?: number; invoiceDate?: string };
  references: Reference[];
  completion: IdempotencyCompletion | undefined;
  /** The response body of the written document. */
  present: (header: DocumentItem, lines: readonly SalesLine[]) => Record<string, unknown>;
  /** Items of the caller that commit in the same transaction (an estimate's close, a sales order's invoiced quantities). */
  extra?: (tx: TransactionBuilder, header: DocumentItem, lines: readonly SalesLine[], activity: CustomerActivity, customer: PartyItem) => void;
  /**
   * `caller`: the caller writes the customer's item itself in `extra` (e.g. converting a
   * prospect) and applies `activity` there; a transaction cannot touch one item twice.
   */
  customerActivity?: "caller";
  /**
   * Counts the caller moves on a user's owner-counters item in the same write (a prospect's
   * conversion moves its owner's customer and prospect counts): merged into the assignee's count
   * when it is the same user, since a transaction cannot touch one item twice.
   */
  ownerCounts?: (customer: PartyItem) => OwnerCountsMove | undefined;
  /**
   * The account's `record_limit` when it applies to this kind (invoices): the write also requires
   * the kind's record count to be under it; at the limit it is 409 `record_limit_reached`.
   */
  recordLimit?: number;
}

/** Counts moved on one user's owner-counters item. */
export interface OwnerCountsMove {
  userId: string;
  add: Record<string, number>;
}

/** What a new document moves on its customer: `documentCount`, `lifetimeRevenueMinor` (ADD) and `lastInvoiceDate` (the later date). */
export type CustomerActivity = DocumentActivity;

export type NewSalesResult =
  | { ok: true; header: DocumentItem; lines: SalesLine[]; body: Record<string, unknown> }
  /** Only the caller's own items (`extra`) failed their conditions: nothing was written. */
  | { ok: false; cancellation: Cancellation };

/**
 * Writes a new sales order or invoice numbered from its sequence, with its stock effects, in
 * ONE transaction: the number claim (a failed write consumes none), header and line pages, the
 * record and assignee counts, the customer's document count, revenue and last invoice date,
 * reference checks and the caller's `extra` items. Small stock effects ride in the same
 * transaction through the ledger; large ones are held first and bound by it (`prepareStock`),
 * and a lost race for the number retries the transaction, never the stock. A stock rule the
 * changes break is 422 naming the line; nothing is written.
 */
export async function insertSalesDocument(input: NewSalesDocument): Promise<NewSalesResult> {
  const { principal, kind, customer } = input;
  const refuse = (error: StockRuleError) => stockRuleError(error, input.changes, input.lines);
  let plan: Awaited<ReturnType<typeof prepareStock>>;
  try {
    plan = await prepareStock({ accountId: principal.accountId, source: input.source, changes: input.changes });
  } catch (error) {
    if (error instanceof StockRuleError) throw await stockRefusal(error, input.basis, refuse);
    throw error;
  }
  const activity: CustomerActivity = {
    documents: 1,
    revenueMinor: input.activity.revenueMinor,
    ...(input.activity.invoiceDate && laterDate(customer.lastInvoiceDate, input.activity.invoiceDate) !== customer.lastInvoiceDate
      ? { invoiceDate: input.activity.invoiceDate, invoiceDateWas: customer.lastInvoiceDate ?? null }
      : {}),
  };
  const numbered = (number: number, rowIdOf: RowIdOf) => ({
    header: { ...input.header, number, numberKey: numberKeyOf(number) },
    lines: withRowIds(input.lines, rowIdOf),
  });
  let written: { header: DocumentItem; lines: SalesLine[]; body: Record<string, unknown> } | undefined;
  try {
    const { cancellation } = await allocateNumber(
      principal.accountId,
      kind,
      (number, claim) =>
        plan.commit(
          (tx, rowIdOf) => {
            const { header, lines } = numbered(number, rowIdOf);
            claim(tx, { count: 1 });
            addDocumentWrite(tx, { header, lines });
            const owner = input.ownerCounts?.(customer);
            addAssigneeCount(tx, header, 1, owner?.userId === header.assignedUserId ? owner.add : {});
            if (owner && owner.userId !== header.assignedUserId) {
              tx.add("owner counts", tx.entities.ownerCounters.update({ accountId: principal.accountId, userId: owner.userId }).add(owner.add).commit());
            }
            if (input.customerActivity !== "caller") addDocumentActivity(tx, { accountId: principal.accountId, partyId: customer.partyId }, activity);
            checkReferences(tx, principal.accountId, input.references);
            input.extra?.(tx, header, lines, activity, customer);
          },
          (rowIdOf) => {
            const { header, lines } = numbered(number, rowIdOf);
            written = { header, lines, body: input.present(header, lines) };
            return { completion: withEtag(input.completion, header.revision), body: written.body };
          },
        ),
      { recordLimit: input.recordLimit },
    );
    if (!cancellation) return { ok: true, ...written! };
    await plan.release();
    const details = referenceDetails(cancellation);
    if (details.length > 0) throw errors.validationFailed(details);
    if (cancellation.failed(`party:${customer.partyId}`)) throw new CustomerChangedError();
    return { ok: false, cancellation };
  } catch (error) {
    await plan.release();
    if (error instanceof StockRuleError) throw await stockRefusal(error, input.basis, refuse);
    throw error;
  }
}
