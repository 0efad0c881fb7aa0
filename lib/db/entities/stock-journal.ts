import { Entity } from "electrodb";

/**
 * A journal of stock changes too large for one transaction: written (pending) with its
 * document, then applied in chunks. `appliedChunks` makes each chunk apply exactly once.
 */
export const StockJournal = new Entity({
  model: { entity: "stockjournal", version: "1", service: "inv" },
  attributes: {
    accountId: { type: "string", required: true, readOnly: true },
    journalId: { type: "string", required: true, readOnly: true },
    status: { type: ["pending", "applied"] as const, required: true, default: "pending" },
    sourceType: { type: "string", required: true },
    sourceId: { type: "string" },
    userId: { type: "string" },
    reason: { type: "string" },
    /** The changes, as JSON (up to a few hundred rows: far below the 400 KB item limit). */
    changes: { type: "string", required: true },
    appliedChunks: { type: "set", items: "number" },
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
