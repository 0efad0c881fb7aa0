import { errors } from "../../../core/errors.js";
import { newRevision } from "../../common/revisions.js";
import { paymentOperations, type PaymentPolicy } from "../payments.js";
import { fulfillmentOperations, type FulfillmentPolicy } from "../sales/fulfillments.js";
import { afterFulfilment } from "../sales/progress.js";
import { visibleSales } from "../sales/service.js";
import { INVOICE_KIND, isLinked, managedBySalesOrder, paymentStatus, presentPayment } from "./model.js";

/**
 * Payments of invoices and packing and shipping of standalone invoices (architecture section 8):
 * the invoice's policies for the shared payment (`../payments.ts`) and fulfilment
 * (`../sales/fulfillments.ts`) operations, and the operations themselves.
 */

const WHAT = "invoice";

// ---------------------------------------------------------------------------------------------
// Payments (architecture section 8)

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

const INVOICE_PAYMENT_OPERATIONS = paymentOperations(INVOICE_PAYMENTS);

/** An invoice's payments, payment date newest first. */
export const listInvoicePayments = INVOICE_PAYMENT_OPERATIONS.list;

/** Records a payment or refund of an invoice; 201 with the payment. */
export const createInvoicePayment = INVOICE_PAYMENT_OPERATIONS.record;

/** Deletes a payment of an invoice. */
export const deleteInvoicePayment = INVOICE_PAYMENT_OPERATIONS.remove;

// ---------------------------------------------------------------------------------------------
// Packing and shipping of standalone invoices (lib/domain/documents/sales/fulfillments.ts)

export const INVOICE_FULFILLMENTS: FulfillmentPolicy = {
  kind: "invoice",
  what: WHAT,
  permission: "invoices.modify",
  read: (principal, id) => visibleSales(principal, INVOICE_KIND, id),
  assertPackable(_principal, tree, account) {
    if (isLinked(tree.header)) throw managedBySalesOrder(tree.header);
    if (tree.header.status === "cancelled") throw errors.stateConflict("invoice_pack_not_allowed", "A cancelled invoice cannot be packed.");
    if (!account.packingListsEnabled) throw errors.stateConflict("invoice_pack_not_allowed", "Packing lists are disabled for this account.");
  },
  packedElsewhere: (tree) => isLinked(tree.header),
  assertShippable(tree) {
    if (isLinked(tree.header)) throw managedBySalesOrder(tree.header);
    // Its stock came back with the cancel: nothing of it leaves any more.
    if (tree.header.status === "cancelled") throw errors.stateConflict("invoice_pack_not_allowed", "A cancelled invoice's packing lists cannot be shipped.");
  },
  invalid: (details) => errors.invalidBody("invalid_invoice_pack", details),
  alreadyPacked: (param) => errors.invalidBody("invalid_invoice_pack", [{ param, code: "already_packed", message: "is a line that is already fully packed." }]),
  nothingLeft: () => errors.stateConflict("invoice_pack_not_allowed", "Nothing is left to pack on this invoice."),
  next: (previous, lines, account) => afterFulfilment("invoice", previous, lines, account),
};

const INVOICE_FULFILLMENT_OPERATIONS = fulfillmentOperations(INVOICE_KIND, INVOICE_FULFILLMENTS);

/** The packing lists of a standalone invoice, number newest first. */
export const listInvoiceFulfillments = INVOICE_FULFILLMENT_OPERATIONS.list;

/** Packs quantities of a standalone invoice (spec 4.5 pack); 201 with the new packing list. */
export const packInvoice = INVOICE_FULFILLMENT_OPERATIONS.pack;

/** Marks a packing list of a standalone invoice shipped (architecture section 8). */
export const shipInvoiceFulfillment = INVOICE_FULFILLMENT_OPERATIONS.ship;
