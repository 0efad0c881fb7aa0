import { Entity } from "electrodb";

/**
 * The stored outcome of a request sent with an `Idempotency-Key`, written in the same
 * transaction as the request's own effect. `scope` hashes account, API key, method, path
 * and the key; `fingerprint` hashes the request itself.
 */
export const idempotencyRecordEntity = () =>
  new Entity({
    model: { entity: "idempotency", version: "1", service: "inv" },
    attributes: {
      accountId: { type: "string", required: true, readOnly: true },
      scope: { type: "string", required: true, readOnly: true },
      fingerprint: { type: "string", required: true },
      /** The response status; 0 while the request runs (an in-progress claim). */
      statusCode: { type: "number", required: true },
      /** An in-progress claim's token (absent once the outcome is stored). */
      claim: { type: "string" },
      /** The response body exactly as first sent (JSON text); absent when it is stored `packed`. */
      body: { type: "string" },
      /**
       * A large body (over `MAX_PLAIN_OUTCOME_BYTES`): the first chunk of its compressed JSON text
       * (binary); `parts` more chunks are `IdempotencyPart` items of the same scope.
       */
      packed: { type: "any" },
      parts: { type: "number" },
      /** Response headers that belong to the stored outcome (e.g. `ETag`). */
      headers: { type: "any" },
      /** The access the request ran with (`accessText`): a replay needs at least as much. */
      access: { type: "string" },
      createdAt: { type: "string", required: true },
      /** Epoch seconds: end of the replay window; also the table's TTL attribute. */
      expiresAt: { type: "number", required: true, field: "expires_at" },
    },
    indexes: {
      primary: {
        pk: { field: "pk", composite: ["accountId", "scope"] },
        sk: { field: "sk", composite: [] },
      },
    },
  });
