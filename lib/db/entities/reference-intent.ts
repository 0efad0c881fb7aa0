import { Entity } from "electrodb";

/**
 * A document write's new item references that the stream processor has not counted yet, in
 * the account's own partition. `addDocumentWrite` puts one in the document's transaction
 * whenever the lines start referencing items (`itemIds`: those items); the processor deletes
 * it once it has counted them on the items (`documentCount`). An item deletion reads these
 * first, so a document written a moment before is never missed (the count lags the write by
 * the stream's delay). `expiresAt` only bounds a leak if the processor never ran.
 */
export const referenceIntentEntity = () =>
  new Entity({
    model: { entity: "referenceintent", version: "1", service: "inv" },
    attributes: {
      accountId: { type: "string", required: true, readOnly: true },
      documentId: { type: "string", required: true, readOnly: true },
      /** The document revision that started referencing the items. */
      revision: { type: "string", required: true, readOnly: true },
      itemIds: { type: "set", items: "string", required: true },
      expiresAt: { type: "number", required: true, field: "expires_at" },
    },
    indexes: {
      primary: {
        pk: { field: "pk", composite: ["accountId"] },
        sk: { field: "sk", composite: ["documentId", "revision"] },
      },
    },
  });
