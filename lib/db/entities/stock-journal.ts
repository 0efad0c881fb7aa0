import { TIMESTAMP_ATTRIBUTES } from "./timestamps.js";
import { Entity } from "electrodb";

/**
 * A journal of stock changes too large for one transaction, applied in chunks; chunk marks
 * (`appliedChunks`, `foldedChunks`, `revertedChunks`) make each chunk's step happen once.
 *
 * - `post` journals are written (pending) with their document, then applied: pending -> applied.
 * - `hold` journals have ONE commit point, the document's transaction. Before it, each chunk
 *   writes its deltas as PENDING on the stock rows (`pending -> held` once all are written):
 *   readers never see them, other writers count negative ones as reserved. The document's
 *   transaction binds the journal (`held -> bound`): from then on the deltas are committed, and
 *   they are folded into the balances chunk by chunk (`bound -> applied`) by the writer, or by
 *   whichever reader or writer meets one first, or by the sweeper. A hold that breaks a rule,
 *   whose document cannot commit, or whose writer died (`leaseUntil` passed) is released
 *   (`-> releasing -> released`): its pending deltas are removed, and nothing ever moved.
 *   The sweeper finds journals not yet applied or released through the sparse `gsi2` index.
 */
export const stockJournalEntity = () =>
  new Entity({
    model: { entity: "stockjournal", version: "1", service: "inv" },
    attributes: {
      accountId: { type: "string", required: true, readOnly: true },
      journalId: { type: "string", required: true, readOnly: true },
      status: { type: ["pending", "applied", "held", "bound", "releasing", "released"] as const, required: true, default: "pending" },
      mode: { type: ["post", "hold"] as const, required: true, default: "post" },
      /** Hold journals: epoch ms after which an unbound hold is released by the sweeper. */
      leaseUntil: { type: "number" },
      /**
       * The sparse index of open holds (written while a hold is pending, held, bound or releasing;
       * removed when it is applied or released): `openholds` / zero-padded lease expiry.
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
      /** Hold journals: chunks whose pending deltas were folded into the balances (after binding). */
      foldedChunks: { type: "set", items: "number" },
      revertedChunks: { type: "set", items: "number" },
      ...TIMESTAMP_ATTRIBUTES,
    },
    indexes: {
      primary: {
        pk: { field: "pk", composite: ["accountId", "journalId"] },
        sk: { field: "sk", composite: [] },
      },
    },
  });
