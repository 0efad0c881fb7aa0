import { Entity } from "electrodb";

/**
 * A manual payment (positive) or refund (negative) recorded on a purchase order or invoice,
 * in the document's partition. `amountMinor` is the exact integer of ten-thousandths that the
 * header's `amountPaidMinor` moved by in the same transaction.
 */
export const documentPaymentEntity = () =>
  new Entity({
    model: { entity: "documentpayment", version: "1", service: "inv" },
    attributes: {
      accountId: { type: "string", required: true, readOnly: true },
      documentId: { type: "string", required: true, readOnly: true },
      paymentId: { type: "string", required: true, readOnly: true },
      amount: { type: "string", required: true, readOnly: true },
      amountMinor: { type: "number", required: true, readOnly: true },
      reference: { type: "string" },
      paymentDate: { type: "string" },
      cardBrand: { type: "string" },
      cardLast4: { type: "string" },
      createdAt: { type: "string", required: true, readOnly: true },
    },
    indexes: {
      primary: {
        collection: "documentTree",
        pk: { field: "pk", composite: ["accountId", "documentId"] },
        sk: { field: "sk", composite: ["paymentId"] },
      },
    },
  });
