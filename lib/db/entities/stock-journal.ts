import { Entity } from "electrodb";

/**
 * A journal of stock changes too large for one transaction, applied in chunks; `appliedChunks`
 * makes each chunk apply exactly once (and `revertedChunks` each reversal).
 *
 * - `post` journals are written (pending) with their document, then applied: pending -> applied.
 * - `hold` journals apply BEFORE their document commits, so that a rule (no stock below zero)
 *   can still refuse the document: pending -> held, then the document's transaction binds it
 *   (held -> bound), or it is reverted chunk by chunk (-> releasing -> released) when a chunk
 *   breaks a rule, the document cannot commit, or its writer died (`leaseUntil` passed: the
 *   sweeper finds open holds through the sparse `gsi2` index).
 */
export const stockJournalEntity = () => new Entity({
  model: { entity: "stockjournal", version: "1", service: "inv" },
  attributes: {
    accountId: { type: "string", required: true, readOnly: true },
    journalId: { type: "string", required: true, readOnly: true },
    status: { type: ["pending", "applied", "held", "bound", "releasing", "released"] as const, required: true, default: "pending" },
    mode: { type: ["post", "hold"] as const, required: true, default: "post" },
    /** Hold journals: epoch ms after which an unbound hold is released by the sweeper. */
    leaseUntil: { type: "number" },
    /**
     * The sparse index of open holds (written only while a hold is pending, held or releasing;
     * removed when it is bound or released): `openholds` / zero-padded lease expiry.
     */
    openHoldsPk: { type: "string", field: "gsi2pk" },
    openHoldsSk: { type: "string", field: "gsi2sk" },
    /** Hold journals that broke a rule: which change, and why (JSON). */
    failure: { type: "string" },
    sourceType: { type: "string", required: true },
    sourceId: { type: "string" },
    userId: { type: "string" },
    reason: { type: "string" },
    /** The changes, as JSON (up to a few hundred rows: far below the 400 KB item limit). */
    changes: { type: "string", required: true },
    appliedChunks: { type: "set", items: "number" },
    revertedChunks: { type: "set", items: "number" },
    createdAt: { type: "string", required: true, readOnly: true },
    updatedAt: { type: "string", required: true },
  },
  indexes: {
    primary: {
      pk: { field: "pk", composite: ["accountId", "journalId"] },
      sk: { field: "sk", composite: [] },
    },
  },
});
