import { Entity } from "electrodb";

/**
 * A further chunk of a large stored outcome (`IdempotencyRecord.packed` holds the first): a
 * 500-line estimate's response is ~300 KB to ~2 MB of JSON, more than one item holds. Written
 * in the same transaction as the record, read only on replay, removed by TTL like the record.
 */
export const idempotencyPartEntity = () =>
  new Entity({
    model: { entity: "idempotencypart", version: "1", service: "inv" },
    attributes: {
      accountId: { type: "string", required: true, readOnly: true },
      scope: { type: "string", required: true, readOnly: true },
      /** 1, 2, ... (chunk 0 is on the record). */
      part: { type: "number", required: true, readOnly: true },
      packed: { type: "any", required: true },
      /** Epoch seconds: the record's end of window; the table's TTL attribute. */
      expiresAt: { type: "number", required: true, field: "expires_at" },
    },
    indexes: {
      primary: {
        pk: { field: "pk", composite: ["accountId", "scope"] },
        sk: { field: "sk", composite: ["part"] },
      },
    },
  });
