/**
 * Internal failures: thrown by storage and domain code, never sent as they are. Each is
 * turned into an API error (or, for the operator's CLI, a message) in one place: the error
 * handler (`lib/http/middlewares/error-handler.ts`) for the ones every route means the same by,
 * and the domain function that knows the request (which line, which kind) for the rest.
 */

/** Thrown when a write would put more items in one transaction than DynamoDB accepts. */
export class TransactionTooLargeError extends Error {
  constructor(
    readonly size: number,
    readonly limit: number,
  ) {
    super(`A transaction of ${size} items exceeds DynamoDB's limit of ${limit}.`);
    this.name = "TransactionTooLargeError";
  }
}

/** Thrown when DynamoDB cancelled a transaction for a reason no caller maps (a bug, or an outage). */
export class TransactionCanceledError extends Error {
  constructor(readonly reasons: readonly { label: string; code: string }[]) {
    super(`Transaction cancelled: ${reasons.map((r) => `${r.label}:${r.code}`).join(", ")}`);
    this.name = "TransactionCanceledError";
  }
}

/**
 * A write was planned from a document that changed (or went) before it committed, and its plan
 * broke a rule only because of that (a stock rule against a reservation another request already
 * took): `retrying` plans it again from what is there now, as after a lost race.
 */
export class StalePlanError extends Error {
  /** `what`: the record that changed (a document's id, or an item's). */
  constructor(readonly what: string) {
    super(`${what} changed while the write was planned from it.`);
    this.name = "StalePlanError";
  }
}

/**
 * A stock hold gave way to older holds (wait-die, `lib/domain/inventory/settling.ts`): a chunk
 * was refused only for what they reserve. The hold is released, its writer waits, holding
 * nothing, for `olderJournalIds` to end, and plans its write again.
 */
export class HoldYieldError extends Error {
  constructor(readonly olderJournalIds: readonly string[]) {
    super(`A stock hold gave way to ${olderJournalIds.length} older hold(s).`);
    this.name = "HoldYieldError";
  }
}

/**
 * A document write named an item that was deleted while the write was in flight (its touch of
 * the item failed): nothing was written; the error handler answers 422 on `lines`.
 */
export class ReferencedItemGoneError extends Error {
  constructor(readonly itemIds: readonly string[]) {
    super(`The lines name item(s) deleted meanwhile: ${itemIds.join(", ")}.`);
    this.name = "ReferencedItemGoneError";
  }
}

/** Lines over the storage limits: the writer answers 422 naming `lines`. */
export class DocumentTooLargeError extends Error {
  constructor(
    readonly bytes: number,
    readonly limit: number,
    /** `stored`: compressed bytes; `json`: JSON bytes; `response`: JSON bytes as a Lambda response carries them (escaped again). */
    readonly measure: "stored" | "json" | "response",
  ) {
    super(`The lines take ${bytes} bytes (${measure}); a document holds at most ${limit}.`);
    this.name = "DocumentTooLargeError";
  }

  /** The 422 detail's message (on `lines`): what the lines take, and what `holder` holds at most. */
  detailMessage(holder = "a document"): string {
    const measure =
      this.measure === "stored" ? "compressed" : this.measure === "json" ? "of JSON" : "as a response carries them (quotes and backslashes escaped again)";
    return `take ${Math.ceil(this.bytes / 1024)} KB ${measure}; ${holder} holds at most ${this.limit / 1024} KB (shorten descriptions).`;
  }
}

/** A sequence's record count reached the account's record limit (nothing was written). */
export class RecordLimitError extends Error {
  constructor(
    /** The sequence counted (`customer`, `invoice`, ...). */
    readonly sequence: string,
    readonly limit: number,
  ) {
    super(`The account holds its limit of ${limit} ${sequence} records.`);
    this.name = "RecordLimitError";
  }
}

/**
 * Operator actions behind `npm run admin` (architecture section 7): accounts, users and keys.
 * Each validates its input and throws `AdminError` with a message meant for the operator.
 */
export class AdminError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "AdminError";
  }
}

/** A rule of the ledger that a change would break (mapped to 422 by the caller). */
export class StockRuleError extends Error {
  constructor(
    readonly changeIndex: number,
    readonly rule: "negative_balance" | "unique_quantity" | "unknown_item" | "no_effect" | "too_large",
    message: string,
  ) {
    super(message);
    this.name = "StockRuleError";
  }
}

/** A definition the operator must correct (the CLI prints the message). */
export class KitDefinitionError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "KitDefinitionError";
  }
}

/** The customer changed (or went) between its read and the write: read it again. */
export class CustomerChangedError extends Error {
  constructor() {
    super("The customer changed during the write.");
    this.name = "CustomerChangedError";
  }
}
