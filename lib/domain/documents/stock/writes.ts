import type { EncodedLines, StoredLine } from "../../../db/document-lines.js";
import { referenceDetail } from "../../../core/errors.js";
import { numberKeyOf } from "../../../core/document-scope.js";
import { StalePlanError, StockRuleError } from "../../../core/failures.js";
import type { ValidationDetail } from "../../../core/errors.js";
import type { IdempotencyCompletion } from "../../../core/idempotency.js";
import { addDocumentWrite, documentChangedSince } from "../../../db/documents.js";
import { allocateNumber, type SequenceName } from "../../../db/sequences.js";
import type { DocumentItem } from "../../../db/service.js";
import { writeTransaction, type Cancellation, type TransactionBuilder } from "../../../db/transactions.js";
import { commitWithStock, type StockCommitResult } from "../../inventory/stock-holds.js";
import { addAssigneeCount } from "../documents.js";

/**
 * Writes that purchase orders and stock transfers share (estimates use the numbered create
 * too): a new document numbered in its own transaction, a stock-moving write whose broken
 * stock rule becomes the kind's own refusal, and the inactive-location detail.
 */

/** The detail of a location a document names that is not (or no longer) active. */
export const inactiveLocationDetail = (param: string): ValidationDetail => referenceDetail(param, "is not an active location of this account.");

/**
 * Writes a new document numbered from the account's `kind` sequence in the same transaction as
 * its header, its lines and the assignee's count (a refused or failed write consumes no
 * number); `add` adds the kind's own items (party activity, references). The stored outcome is
 * `present` of the numbered header. Returns the numbered header and the cancellation, if any.
 */
export async function createNumbered(options: {
  sequence: SequenceName;
  base: DocumentItem;
  lines: readonly StoredLine[] | EncodedLines;
  completion: IdempotencyCompletion | undefined;
  present: (header: DocumentItem) => unknown;
  add: (tx: TransactionBuilder, header: DocumentItem) => void;
}): Promise<{ header: DocumentItem; cancellation: Cancellation | null }> {
  const { base, lines } = options;
  const numbered = (number: number): DocumentItem => ({ ...base, number, numberKey: numberKeyOf(number) });
  const { number, cancellation } = await allocateNumber(base.accountId, options.sequence, (number, claim) =>
    writeTransaction(
      (tx) => {
        const header = numbered(number);
        claim(tx, { count: 1 });
        addDocumentWrite(tx, { header, lines });
        addAssigneeCount(tx, header, 1);
        options.add(tx, header);
      },
      { completion: options.completion, body: options.present(numbered(number)) },
    ),
  );
  return { header: numbered(number), cancellation };
}

/** The document a write was planned from, at the revision read. */
export interface PlanBasis {
  accountId: string;
  documentId: string;
  revision: string;
}

/**
 * What a stock rule broken by a plan answers: when the document the plan was made from changed
 * meanwhile (a parallel request invoiced, received or deleted it), the rule broke on a stale
 * plan, and `StalePlanError` has `retrying` plan again (the next read answers 404 or 409 as a
 * repeat would), as when an item of the lines is gone; else `refusal` of it (422 naming the line).
 */
export async function stockRefusal(error: StockRuleError, basis: PlanBasis | undefined, refusal: (error: StockRuleError) => Error): Promise<Error> {
  // An item the lines named was deleted since they were resolved: planning again answers 422 on its item_id.
  if (error.rule === "unknown_item") return new StalePlanError(`An item of change ${error.changeIndex}`);
  if (basis && (await documentChangedSince(basis.accountId, basis.documentId, basis.revision))) return new StalePlanError(`Document ${basis.documentId}`);
  return refusal(error);
}

/** `commitWithStock`, with a stock rule the move breaks answered as `stockRefusal` of it. */
export async function commitStockWrite(
  options: Parameters<typeof commitWithStock>[0],
  refusal: (error: StockRuleError) => Error,
  basis?: PlanBasis,
): Promise<StockCommitResult> {
  try {
    return await commitWithStock(options);
  } catch (error) {
    if (error instanceof StockRuleError) throw await stockRefusal(error, basis, refusal);
    throw error;
  }
}
