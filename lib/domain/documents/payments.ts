import { laterUpdatedAt } from "../../core/clock.js";
import { amountDue, amountPaid, deletionCompletesPayment, latestPaymentDate, withAmountPaid } from "./amounts.js";
import { localToday, requireDocumentPermission } from "./rules.js";
import { randomUUID } from "node:crypto";
import type { Permission, Principal } from "../../auth/permissions.js";
import { errors, type ErrorCode } from "../../core/errors.js";
import type { IdempotencyCompletion } from "../../core/idempotency.js";
import { pageOfAll, type ListEnvelope, type PageRequest } from "../../core/pagination.js";
import { DOCUMENT_LABEL, addDocumentWrite, readDocumentPayment, readDocumentPayments } from "../../db/documents.js";
import type { DocumentKind } from "../../db/entities/document.js";
import { RETRY, type AttemptContext } from "../../db/retry.js";
import type { DocumentItem, DocumentPaymentItem } from "../../db/service.js";
import { writeTransaction, type TransactionBuilder } from "../../db/transactions.js";
import type { PaymentBody } from "../../schemas/documents.js";
import { accountSettings, visibleDocument, visibleDocumentHeader, writeAtRevision } from "./documents.js";
import { minorOf, money } from "../common/money.js";
import { newRevision, type RevisionPrefix } from "../common/revisions.js";

/**
 * Manual payments and refunds of purchase orders and invoices (architecture section 8): a signed
 * four-decimal amount (negative = refund), optional reference and payment date. The payment and
 * the document's `amount_paid` (an exact integer of ten-thousandths), `amount_due` and
 * `date_fully_paid` move in ONE transaction, conditioned on the document's revision.
 */
export interface PaymentPolicy {
  kind: DocumentKind;
  what: string;
  revisionPrefix: RevisionPrefix;
  readPermission: Permission;
  writePermission: Permission;
  /** Throws when the document's state refuses payments (e.g. a cancelled invoice). */
  assertPayable?: (header: DocumentItem) => void;
  /** Other header fields that follow the amount paid (e.g. the invoice status). */
  afterPayment?: (header: DocumentItem) => Partial<DocumentItem>;
  /** The 409 code of a payment deletion that would take the amount paid outside 0 to the total. */
  deleteNotAllowedCode: ErrorCode;
  /** Other items the same transaction writes (e.g. the amount paid of an invoice's sales order). */
  addRelated?: (tx: TransactionBuilder, previous: DocumentItem, next: DocumentItem, deltaMinor: number) => void;
  /** The kind's payment resource. */
  present: (payment: DocumentPaymentItem) => Record<string, unknown>;
}

/**
 * The bounds of the amount paid (architecture section 8): it stays from 0 to the document's
 * total. A payment beyond what is due is 422 `exceeds_amount_due`, a refund beyond what was paid
 * 422 `exceeds_amount_paid` (both on `amount`); a deletion that would leave the bounds is 409
 * with the kind's code. Checked on the header the write is conditioned on, so parallel payments
 * can never overshoot together.
 */
function assertWithinBounds(policy: PaymentPolicy, header: DocumentItem, deltaMinor: number, action: "record" | "delete"): void {
  const after = header.amountPaidMinor + deltaMinor;
  const total = minorOf(header.total);
  if (after <= total && after >= 0) return;
  if (action === "delete") {
    throw errors.stateConflict(policy.deleteNotAllowedCode, `Deleting this payment would take the amount paid outside 0 to the ${policy.what} total.`);
  }
  const detail: { param: string; code: ErrorCode; message: string } =
    after > total
      ? { param: "amount", code: "exceeds_amount_due", message: `is more than the amount due (${amountDue(header)}).` }
      : { param: "amount", code: "exceeds_amount_paid", message: `refunds more than the amount paid (${amountPaid(header)}).` };
  throw errors.invalidBody(detail.code, [detail]);
}

/**
 * Writes a payment change in ONE transaction conditioned on the header it read: the header
 * after the amount paid moved by `deltaMinor` (`withAmountPaid`, the new payment count, a new
 * revision, the policy's `afterPayment` fields), the payment item itself (`payment`), the
 * policy's related items, and the turns of the writers queued behind this one. Null when it
 * committed (the turns are then served), else the cancellation.
 */
async function writePaymentChange(
  policy: PaymentPolicy,
  header: DocumentItem,
  change: { deltaMinor: number; paymentDate: string; paymentCount: number; payment: (tx: TransactionBuilder) => void },
  turns: AttemptContext,
  outcome: { completion: IdempotencyCompletion | undefined; body: unknown },
) {
  let next = withAmountPaid({ ...header, paymentCount: change.paymentCount }, header.amountPaidMinor + change.deltaMinor, change.paymentDate);
  next = { ...next, revision: newRevision(policy.revisionPrefix), updatedAt: laterUpdatedAt(header.updatedAt) };
  next = { ...next, ...policy.afterPayment?.(next) };
  const cancellation = await writeTransaction((tx) => {
    addDocumentWrite(tx, { header: next, previous: header });
    change.payment(tx);
    policy.addRelated?.(tx, header, next, change.deltaMinor);
    turns.serveAllWithin(tx);
  }, outcome);
  if (!cancellation) turns.servedWithin();
  return cancellation;
}

const visibleTree = (principal: Principal, policy: PaymentPolicy, documentId: string) => visibleDocument(principal, policy.kind, documentId, policy.what);

/** Payments of a document, payment date newest first (undated last), then newest recorded first. */
export async function listPayments(
  principal: Principal,
  policy: PaymentPolicy,
  documentId: string,
  url: string,
  page: PageRequest,
): Promise<ListEnvelope<Record<string, unknown>>> {
  requireDocumentPermission(principal, policy.readPermission, `reading ${policy.what}s`);
  const tree = await visibleTree(principal, policy, documentId);
  const ordered = [...tree.payments].sort((a, b) => {
    const byDate = (b.paymentDate ?? "").localeCompare(a.paymentDate ?? "");
    return byDate !== 0 ? byDate : b.createdAt.localeCompare(a.createdAt);
  });
  return pageOfAll(url, page, ordered.map(policy.present));
}

/** Records a payment (positive) or refund (negative); 201 with the payment. */
export async function recordPayment(
  principal: Principal,
  policy: PaymentPolicy,
  documentId: string,
  body: PaymentBody & { card?: { brand?: string | null; last4?: string | null } | null },
  ifMatchHeader: string | undefined,
  completion: IdempotencyCompletion | undefined,
): Promise<Record<string, unknown>> {
  requireDocumentPermission(principal, policy.writePermission, `recording ${policy.what} payments`);
  const account = await accountSettings(principal.accountId);
  const amount = money(body.amount);
  const amountMinor = minorOf(amount);
  const paymentDate = body.payment_date ?? localToday(principal, account);
  const payment: DocumentPaymentItem = {
    accountId: principal.accountId,
    documentId,
    paymentId: randomUUID(),
    amount,
    amountMinor,
    reference: body.reference ?? undefined,
    paymentDate,
    cardBrand: body.card?.brand ?? undefined,
    cardLast4: body.card?.last4 ?? undefined,
    createdAt: new Date().toISOString(),
  };
  const resource = policy.present(payment);
  return writeAtRevision(
    { operation: `record ${policy.what} payment`, accountId: principal.accountId, documentId, ifMatch: ifMatchHeader },
    // The header alone (one GetItem): a document's payments and lines can be many.
    async () => ({ header: await visibleDocumentHeader(principal, policy.kind, documentId, policy.what) }),
    async ({ header }, turns) => {
      policy.assertPayable?.(header);
      assertWithinBounds(policy, header, amountMinor, "record");
      const cancellation = await writePaymentChange(
        policy,
        header,
        {
          deltaMinor: amountMinor,
          paymentDate,
          paymentCount: header.paymentCount + 1,
          payment: (tx) => tx.add("payment", tx.entities.documentPayment.create(payment).commit()),
        },
        turns,
        { completion, body: resource },
      );
      if (!cancellation) return resource;
      if (cancellation.failed(DOCUMENT_LABEL)) return RETRY;
      throw errors.internal(new Error(`payment write failed: ${cancellation.labels.join(", ")}`));
    },
  );
}

/** Deletes a payment (its amount leaves `amount_paid`); `{id, object: "payment", deleted: true}`. */
export async function deletePayment(
  principal: Principal,
  policy: PaymentPolicy,
  documentId: string,
  paymentId: string,
  ifMatchHeader: string | undefined,
  completion: IdempotencyCompletion | undefined,
): Promise<{ id: string; object: "payment"; deleted: true }> {
  requireDocumentPermission(principal, policy.writePermission, `deleting ${policy.what} payments`);
  const resource = { id: paymentId, object: "payment" as const, deleted: true as const };
  return writeAtRevision(
    { operation: `delete ${policy.what} payment`, accountId: principal.accountId, documentId, ifMatch: ifMatchHeader },
    async () => {
      const [header, payment] = await Promise.all([
        visibleDocumentHeader(principal, policy.kind, documentId, policy.what),
        readDocumentPayment(principal.accountId, documentId, paymentId),
      ]);
      // An unknown payment is 404 whatever the If-Match.
      if (!payment) throw errors.resourceMissing("payment", paymentId);
      // A refund's deletion that leaves nothing due: fully paid as of the payments that remain
      // (one more Query, only then; the write is conditioned on the header read above).
      const remaining = deletionCompletesPayment(header, payment.amountMinor)
        ? (await readDocumentPayments(principal.accountId, documentId)).filter((other) => other.paymentId !== paymentId)
        : [];
      return { header, payment, fullyPaidOn: latestPaymentDate(remaining) ?? payment.paymentDate ?? header.dateFullyPaid ?? "" };
    },
    async ({ header, payment, fullyPaidOn }, turns) => {
      assertWithinBounds(policy, header, -payment.amountMinor, "delete");
      const cancellation = await writePaymentChange(
        policy,
        header,
        {
          deltaMinor: -payment.amountMinor,
          paymentDate: fullyPaidOn,
          paymentCount: Math.max(0, header.paymentCount - 1),
          payment: (tx) =>
            tx.add(
              "payment",
              tx.entities.documentPayment
                .delete({ accountId: principal.accountId, documentId, paymentId })
                .where(({ paymentId: id }, { exists }) => exists(id))
                .commit(),
            ),
        },
        turns,
        { completion, body: resource },
      );
      if (!cancellation) return resource;
      if (cancellation.failed("payment")) throw errors.resourceMissing("payment", paymentId);
      return RETRY;
    },
  );
}

/**
 * A kind's payment operations as its handlers call them (list, record, delete), bound to its
 * policy: the one place the kinds' payment routes meet the shared operations above.
 */
export function paymentOperations(policy: PaymentPolicy) {
  return {
    list: (principal: Principal, id: string, url: string, page: PageRequest) => listPayments(principal, policy, id, url, page),
    record: (
      principal: Principal,
      id: string,
      body: Parameters<typeof recordPayment>[3],
      ifMatchHeader: string | undefined,
      completion: IdempotencyCompletion | undefined,
    ) => recordPayment(principal, policy, id, body, ifMatchHeader, completion),
    remove: (principal: Principal, id: string, paymentId: string, ifMatchHeader: string | undefined, completion: IdempotencyCompletion | undefined) =>
      deletePayment(principal, policy, id, paymentId, ifMatchHeader, completion),
  };
}
