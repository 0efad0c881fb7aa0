import { StockRuleError } from "../../../core/failures.js";
import { randomUUID } from "node:crypto";
import type { Principal } from "../../../auth/permissions.js";
import { errors, type ValidationDetail } from "../../../core/errors.js";
import type { IdempotencyCompletion } from "../../../core/idempotency.js";
import type { ListEnvelope, PageRequest } from "../../../core/pagination.js";
import { DOCUMENT_LABEL, addDocumentDelete, addDocumentWrite, numberKeyOf, type DocumentTree, type StoredLine } from "../../../db/documents.js";
import { readLocation } from "../../../db/locations.js";
import { checkReferences, referenceDetail } from "../../../db/references.js";
import { RETRY, retrying } from "../../../db/retry.js";
import { allocateNumber } from "../../../db/sequences.js";
import type { DocumentItem, LocationItem } from "../../../db/service.js";
import { writeTransaction } from "../../../db/transactions.js";
import type {
  StockTransferCreateBody,
  StockTransferLineBody,
  StockTransferListQuery,
  StockTransferReceiveBody,
  StockTransferSendBody,
  StockTransferUpdateBody,
} from "../../../schemas/stock-transfers.js";
import { resolveLineItems } from "../lines.js";
import {
  accountSettings,
  addAssigneeCount,
  addKindCountDecrement,
  listDocuments,
  localToday,
  matchReplacementLines,
  nextTimestamp,
  orNull,
  requireDocumentPermission,
  documentLock,
  visibleDocument,
  statusIdFilter,
  changesNothing,
} from "../documents.js";
import { mergeStockChanges, type StockChange } from "../../inventory/ledger-plan.js";
import { newRevision } from "../../common/revisions.js";
import { commitWithStock } from "../../inventory/stock-holds.js";
import { MAX_TRANSFER_LINES } from "../../../schemas/stock-transfers.js";

/**
 * Stock transfers: spec part 2, sections 2.2, 3.2 and 4.2; architecture sections 4 (status ids)
 * and 5 (the ledger).
 *
 * Statuses: 26 Pending -> (send) 27 In Transit -> (receive) 28 Transferred. Sending moves each
 * line's quantity from on hand at the origin to in transit at the destination; receiving moves
 * it from in transit to on hand at the destination; updating an in-transit transfer moves the
 * difference; deleting reverses whatever the transfer did (refused with 409
 * `stock_transfer_delete_not_allowed` when the destination no longer holds what arrived).
 * Every stock effect goes through the ledger in the transfer's own write (a hold when the
 * transfer is larger than one transaction), so no location's stock ever goes below zero.
 * Visibility is account-wide; reads need `inventory.manage`, changes also `inventory.modify`.
 */

const STATUS = {
  pending: { id: 26, label: "Pending" },
  in_transit: { id: 27, label: "In Transit" },
  transferred: { id: 28, label: "Transferred" },
} as const;
type TransferStatus = keyof typeof STATUS;

export interface TransferLine extends StoredLine {
  itemId: string;
  variationId: string;
  /** The row at the origin. */
  ivlId: number;
  name: string;
  description?: string;
  variation?: string;
  quantity: number;
  unitId?: number;
}

type TransferTree = Omit<DocumentTree, "lines"> & { lines: TransferLine[] };

const WHAT = "stock transfer";

function requireRead(principal: Principal): void {
  requireDocumentPermission(principal, "inventory.manage", "reading stock transfers");
}

function requireWrite(principal: Principal): void {
  requireRead(principal);
  requireDocumentPermission(principal, "inventory.modify", "changing stock transfers");
}

// ---------------------------------------------------------------------------------------------
// Presentation

export function presentStockTransfer(header: DocumentItem, lines?: readonly TransferLine[]): Record<string, unknown> {
  const status = STATUS[header.status as TransferStatus];
  const names = (header.partyDetails ?? {}) as { origin?: string; destination?: string };
  const out: Record<string, unknown> = {
    id: header.documentId,
    object: "stock_transfer",
    stock_transfer_number: header.number,
    assigned_user_id: header.assignedUserId,
    status_id: status.id,
    status: status.label,
    origin_location: { id: header.originLocationId, name: orNull(names.origin) },
    destination_location: { id: header.destinationLocationId, name: orNull(names.destination) },
    issue_date: orNull(header.issueDate),
    estimated_arrival_date: orNull(header.estimatedArrivalDate),
    date_sent: orNull(header.dateSent),
    date_received: orNull(header.dateReceived),
    shipping_provider: orNull(header.shippingProvider),
    shipping_tracking_code: orNull(header.shippingTrackingCode),
    created_at: header.createdAt,
    updated_at: header.updatedAt,
  };
  if (lines) {
    out.lines = lines.map((line) => ({
      id: line.id,
      object: "stock_transfer_line",
      item_id: line.itemId,
      item_variation_location_id: line.ivlId,
      name: line.name,
      description: orNull(line.description),
      variation: orNull(line.variation),
      quantity: line.quantity,
      unit_id: orNull(line.unitId),
    }));
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Reads

// Stock transfers are account-wide (no assignee boundary): `visibleDocument` lets every caller see them.
const readTransfer = (principal: Principal, id: string) => visibleDocument<TransferTree>(principal, "stock_transfer", id, WHAT);

/** One transfer with its lines (authentication plus ONE Query). */
export async function getStockTransfer(principal: Principal, id: string): Promise<Record<string, unknown>> {
  requireRead(principal);
  const tree = await readTransfer(principal, id);
  return presentStockTransfer(tree.header, tree.lines);
}

/** Transfers newest number first (account-wide), with the filters of spec 4.2. */
export async function listStockTransfers(
  principal: Principal,
  url: string,
  page: PageRequest,
  query: StockTransferListQuery,
): Promise<ListEnvelope<Record<string, unknown>>> {
  requireRead(principal);
  const needle = query.q?.trim().toLowerCase();
  return listDocuments({
    principal,
    kind: "stock_transfer",
    url,
    page,
    ids: query.ids,
    filter: {
      statusId: statusIdFilter(query.status_id, STATUS),
      assignedUserId: query.assigned_user_id,
      originLocationId: query.origin_location_id,
      destinationLocationId: query.destination_location_id,
      dates: [{ attribute: "issueDate", from: query.issue_date_from, to: query.issue_date_to }],
      text: needle ? { needle, number: /^\d{1,9}$/.test(needle) ? Number(needle) : undefined } : undefined,
    },
    present: (headers) => headers.map((header) => presentStockTransfer(header)),
  });
}

// ---------------------------------------------------------------------------------------------
// Writes

async function readLocations(principal: Principal, originId: string, destinationId: string): Promise<{ origin: LocationItem; destination: LocationItem }> {
  const [origin, destination] = await Promise.all([readLocation(principal.accountId, originId), readLocation(principal.accountId, destinationId)]);
  const details: ValidationDetail[] = [];
  if (!origin?.active) details.push(referenceDetail("origin_location_id", "is not an active location of this account."));
  if (!destination?.active) details.push(referenceDetail("destination_location_id", "is not an active location of this account."));
  if (details.length === 0 && originId === destinationId) {
    details.push({ param: "destination_location_id", code: "invalid", message: "must differ from origin_location_id." });
  }
  if (details.length > 0) throw errors.validationFailed(details);
  return { origin: origin!, destination: destination! };
}

const variationLabel = (values: Record<string, string> | undefined) => {
  const entries = Object.entries(values ?? {});
  return entries.length === 0 ? undefined : entries.map(([label, value]) => `${label}: ${value}`).join(", ");
};

/** Builds stored lines from the complete requested list: each line a row of its item at the origin. */
async function buildLines(
  principal: Principal,
  originId: string,
  input: readonly StockTransferLineBody[],
  kept: readonly (TransferLine | undefined)[],
): Promise<TransferLine[]> {
  const resolved = await resolveLineItems(
    principal.accountId,
    originId,
    input.map((line, index) => ({ index, itemId: line.item_id, ivlId: line.item_variation_location_id })),
    { locationLabel: "origin" },
  );
  const details: ValidationDetail[] = [];
  const lines = input.map((line, index): TransferLine | undefined => {
    const { item, variation, row } = resolved.get(index)!;
    if (!row) {
      details.push({ param: `lines[${index}].item_id`, code: "not_at_origin", message: "has no stock row at the origin location." });
      return undefined;
    }
    return {
      id: kept[index]?.id ?? randomUUID(),
      itemId: item.itemId,
      variationId: variation.variationId,
      ivlId: row.ivlId,
      name: item.name,
      description: line.description === undefined ? item.description : line.description || undefined,
      variation: variationLabel(variation.values as Record<string, string>),
      quantity: item.inventoryType === "unique" ? 1 : line.quantity,
      unitId: item.unitId,
    };
  });
  if (details.length > 0) throw errors.validationFailed(details);
  return lines as TransferLine[];
}

/** The stock effect of lines in a state: in transit, or transferred (negative = undo). */
type Effect = "send" | "receive";
function changesOf(header: DocumentItem, lines: readonly TransferLine[], effect: Effect, sign: 1 | -1 = 1): StockChange[] {
  const out: StockChange[] = [];
  for (const line of lines) {
    const q = sign * line.quantity;
    if (q === 0) continue;
    if (effect === "send") {
      out.push({ itemId: line.itemId, variationId: line.variationId, locationId: header.originLocationId!, deltas: { onHand: -q } });
      out.push({ itemId: line.itemId, variationId: line.variationId, locationId: header.destinationLocationId!, deltas: { inTransit: q } });
    } else {
      out.push({ itemId: line.itemId, variationId: line.variationId, locationId: header.destinationLocationId!, deltas: { inTransit: -q, onHand: q } });
    }
  }
  return out;
}

/** Net changes of moving from `before` to `after` lines while in transit (merged per row). */
function inTransitDifference(header: DocumentItem, before: readonly TransferLine[], after: readonly TransferLine[]): StockChange[] {
  return mergeStockChanges([...changesOf(header, before, "send", -1), ...changesOf(header, after, "send")]);
}

/** A stock rule a transfer's move breaks: which of its lines, in the API's error shape. */
function stockError(error: StockRuleError, changes: readonly StockChange[], lines: readonly TransferLine[], when: string) {
  const change = changes[error.changeIndex];
  const index = change ? lines.findIndex((line) => line.itemId === change.itemId && line.variationId === change.variationId) : -1;
  return errors.validationFailed([
    {
      param: index >= 0 ? `lines[${index}].quantity` : "lines",
      code: error.rule === "negative_balance" ? "insufficient_stock" : error.rule,
      message: error.rule === "negative_balance" ? `${when} would take stock below zero at a location.` : error.message,
    },
  ]);
}

const withNames = (header: DocumentItem, origin: LocationItem, destination: LocationItem): DocumentItem => ({
  ...header,
  partyDetails: { origin: origin.name, destination: destination.name },
});

function derive(header: DocumentItem, lines: readonly TransferLine[]): DocumentItem {
  return { ...header, itemIds: [...new Set(lines.map((line) => line.itemId))], searchText: (header.shippingTrackingCode ?? "").toLowerCase() };
}

/** Shipping fields of a request (null or "" clears; omitted keeps). */
function shippingChanges(
  header: DocumentItem,
  input: { estimated_arrival_date?: string | null; shipping_provider?: string | null; shipping_tracking_code?: string | null },
): DocumentItem {
  const next = { ...header };
  const apply = (value: string | null | undefined, attribute: "estimatedArrivalDate" | "shippingProvider" | "shippingTrackingCode") => {
    if (value === undefined) return;
    if (value === null || value === "") delete next[attribute];
    else next[attribute] = value;
  };
  apply(input.estimated_arrival_date, "estimatedArrivalDate");
  apply(input.shipping_provider, "shippingProvider");
  apply(input.shipping_tracking_code, "shippingTrackingCode");
  return next;
}

/** Creates a pending transfer (spec 4.2 create): number and `issue_date` set by the service. */
export async function createStockTransfer(
  principal: Principal,
  input: StockTransferCreateBody,
  completion: IdempotencyCompletion | undefined,
): Promise<Record<string, unknown>> {
  requireWrite(principal);
  const [{ origin, destination }, account] = await Promise.all([
    readLocations(principal, input.origin_location_id, input.destination_location_id),
    accountSettings(principal.accountId),
  ]);
  const lines = await buildLines(principal, origin.locationId, input.lines, []);
  const now = new Date().toISOString();
  const base = derive(
    shippingChanges(
      withNames(
        {
          accountId: principal.accountId,
          documentId: randomUUID(),
          kind: "stock_transfer",
          number: 0,
          numberKey: "",
          revision: newRevision("st"),
          status: "pending",
          statusId: STATUS.pending.id,
          assignedUserId: principal.userId,
          originLocationId: origin.locationId,
          destinationLocationId: destination.locationId,
          issueDate: localToday(principal, account),
          discountPercent: "0.000",
          subtotal: "0.0000",
          preDiscountTotal: "0.0000",
          discountTotal: "0.0000",
          shippingFee: "0.0000",
          shippingCost: "0.0000",
          tax: "0.0000",
          tax2: "0.0000",
          total: "0.0000",
          amountPaidMinor: 0,
          paymentCount: 0,
          pageCount: 0,
          lineCount: 0,
          searchText: "",
          createdAt: now,
          updatedAt: now,
        } as DocumentItem,
        origin,
        destination,
      ),
      input,
    ),
    lines,
  );
  const numbered = (number: number): DocumentItem => ({ ...base, number, numberKey: numberKeyOf(number) });
  const { number, cancellation } = await allocateNumber(principal.accountId, "stock_transfer", (number, claim) =>
    writeTransaction(
      (tx) => {
        const header = numbered(number);
        claim(tx, { count: 1 });
        addDocumentWrite(tx, { header, lines });
        addAssigneeCount(tx, header, 1);
        checkReferences(tx, principal.accountId, [
          { param: "origin_location_id", kind: "location", id: origin.locationId },
          { param: "destination_location_id", kind: "location", id: destination.locationId },
        ]);
      },
      { completion, body: presentStockTransfer(numbered(number), lines) },
    ),
  );
  if (cancellation) throw errors.validationFailed([referenceDetail("origin_location_id", "is not an active location of this account.")]);
  return presentStockTransfer(numbered(number), lines);
}

/**
 * Updates a pending or in-transit transfer (spec 4.2 update): `issue_date`, shipping fields and
 * the complete line list; an in-transit update moves the stock difference in the same write.
 * A transferred transfer is 409 `stock_transfer_update_not_allowed`.
 */
export async function updateStockTransfer(
  principal: Principal,
  id: string,
  input: StockTransferUpdateBody,
  completion: IdempotencyCompletion | undefined,
): Promise<Record<string, unknown>> {
  requireWrite(principal);
  return retrying(
    "update stock transfer",
    async () => {
      const tree = await readTransfer(principal, id);
      const previous = tree.header;
      if (previous.status === "transferred") throw errors.stateConflict("stock_transfer_update_not_allowed", "A transferred stock transfer cannot be updated.");
      let lines = tree.lines;
      if (input.lines !== undefined) {
        const kept = matchReplacementLines(tree.lines, input.lines, MAX_TRANSFER_LINES);
        lines = await buildLines(principal, previous.originLocationId!, input.lines, kept);
      }
      let next = shippingChanges({ ...previous, revision: newRevision("st"), updatedAt: nextTimestamp(previous.updatedAt) }, input);
      if (input.issue_date !== undefined) next.issueDate = input.issue_date;
      next = derive(next, lines);
      // Sent back as read: nothing to write (updated_at stays).
      if (changesNothing(previous, next, tree.lines, lines)) return presentStockTransfer(previous, tree.lines);
      const changes = previous.status === "in_transit" && input.lines !== undefined ? inTransitDifference(previous, tree.lines, lines) : [];
      try {
        const { cancellation } = await commitWithStock({
          accountId: principal.accountId,
          source: { sourceType: "stock_transfer", sourceId: id, userId: principal.userId, reason: `Stock transfer ${previous.number} updated in transit` },
          changes,
          document: (tx) => addDocumentWrite(tx, { header: next, lines: input.lines === undefined ? undefined : lines, previous }),
          outcome: () => ({ completion, body: presentStockTransfer(next, lines) }),
        });
        return cancellation ? RETRY : presentStockTransfer(next, lines);
      } catch (error) {
        if (error instanceof StockRuleError) throw stockError(error, changes, lines, "The update");
        throw error;
      }
    },
    undefined,
    [documentLock(principal.accountId, id)],
  );
}

/** Pending -> In Transit (spec 3.2 send): origin on hand -> destination in transit. */
export async function sendStockTransfer(
  principal: Principal,
  id: string,
  input: StockTransferSendBody,
  completion: IdempotencyCompletion | undefined,
): Promise<Record<string, unknown>> {
  requireWrite(principal);
  return retrying(
    "send stock transfer",
    async () => {
      const tree = await readTransfer(principal, id);
      const previous = tree.header;
      if (previous.status !== "pending") {
        throw errors.stateConflict(
          "stock_transfer_send_not_allowed",
          `Only pending stock transfers can be sent; this one is ${STATUS[previous.status as TransferStatus].label}.`,
        );
      }
      const account = await accountSettings(principal.accountId);
      const next = shippingChanges(
        {
          ...previous,
          status: "in_transit",
          statusId: STATUS.in_transit.id,
          dateSent: input.date_sent ?? localToday(principal, account),
          revision: newRevision("st"),
          updatedAt: nextTimestamp(previous.updatedAt),
        },
        input,
      );
      const changes = changesOf(previous, tree.lines, "send");
      return transition(
        principal,
        id,
        previous,
        derive(next, tree.lines),
        tree.lines,
        changes,
        completion,
        "Sending the transfer",
        `Stock transfer ${previous.number} sent`,
      );
    },
    undefined,
    [documentLock(principal.accountId, id)],
  );
}

/** In Transit -> Transferred (spec 3.2 receive): destination in transit -> on hand. */
export async function receiveStockTransfer(
  principal: Principal,
  id: string,
  input: StockTransferReceiveBody,
  completion: IdempotencyCompletion | undefined,
): Promise<Record<string, unknown>> {
  requireWrite(principal);
  return retrying(
    "receive stock transfer",
    async () => {
      const tree = await readTransfer(principal, id);
      const previous = tree.header;
      if (previous.status !== "in_transit") {
        throw errors.stateConflict(
          "stock_transfer_receive_not_allowed",
          `Only in-transit stock transfers can be received; this one is ${STATUS[previous.status as TransferStatus].label}.`,
        );
      }
      const account = await accountSettings(principal.accountId);
      const next = shippingChanges(
        {
          ...previous,
          status: "transferred",
          statusId: STATUS.transferred.id,
          dateReceived: input.date_received ?? localToday(principal, account),
          revision: newRevision("st"),
          updatedAt: nextTimestamp(previous.updatedAt),
        },
        input,
      );
      const changes = changesOf(previous, tree.lines, "receive");
      return transition(
        principal,
        id,
        previous,
        derive(next, tree.lines),
        tree.lines,
        changes,
        completion,
        "Receiving the transfer",
        `Stock transfer ${previous.number} received`,
      );
    },
    undefined,
    [documentLock(principal.accountId, id)],
  );
}

async function transition(
  principal: Principal,
  id: string,
  previous: DocumentItem,
  next: DocumentItem,
  lines: readonly TransferLine[],
  changes: StockChange[],
  completion: IdempotencyCompletion | undefined,
  when: string,
  reason: string,
): Promise<Record<string, unknown> | typeof RETRY> {
  try {
    const body = presentStockTransfer(next, lines);
    const { cancellation } = await commitWithStock({
      accountId: principal.accountId,
      source: { sourceType: "stock_transfer", sourceId: id, userId: principal.userId, reason },
      changes,
      document: (tx) => addDocumentWrite(tx, { header: next, previous }),
      outcome: () => ({ completion, body }),
    });
    return cancellation ? RETRY : body;
  } catch (error) {
    if (error instanceof StockRuleError) throw stockError(error, changes, lines, when);
    throw error;
  }
}

/**
 * Deletes a transfer, reversing its stock (spec 3.2): pending transfers moved nothing; in
 * transit: the origin gets its stock back and the destination's in-transit goes; transferred:
 * the destination's stock is removed, then the origin's restored. When the destination no
 * longer holds what arrived, the reversal is unsafe: 409 `stock_transfer_delete_not_allowed`,
 * nothing changed.
 */
export async function deleteStockTransfer(
  principal: Principal,
  id: string,
  completion: IdempotencyCompletion | undefined,
): Promise<{ id: string; object: "stock_transfer"; deleted: true }> {
  requireWrite(principal);
  const resource = { id, object: "stock_transfer" as const, deleted: true as const };
  return retrying(
    "delete stock transfer",
    async () => {
      const tree = await readTransfer(principal, id);
      const header = tree.header;
      const changes =
        header.status === "pending"
          ? []
          : header.status === "in_transit"
            ? changesOf(header, tree.lines, "send", -1)
            : [...changesOf(header, tree.lines, "receive", -1), ...changesOf(header, tree.lines, "send", -1)];
      try {
        const { cancellation } = await commitWithStock({
          accountId: principal.accountId,
          source: { sourceType: "stock_transfer", sourceId: id, userId: principal.userId, reason: `Stock transfer ${header.number} deleted` },
          changes: mergeStockChanges(changes),
          document: (tx) => {
            addDocumentDelete(tx, tree as unknown as DocumentTree);
            addKindCountDecrement(tx, tree.header);
            addAssigneeCount(tx, header, -1);
          },
          outcome: () => ({ completion, body: resource }),
        });
        if (!cancellation) return resource;
        if (cancellation.failed(DOCUMENT_LABEL)) return RETRY;
        throw errors.internal(new Error(`stock transfer delete failed: ${cancellation.labels.join(", ")}`));
      } catch (error) {
        if (error instanceof StockRuleError) {
          throw errors.stateConflict(
            "stock_transfer_delete_not_allowed",
            "The transfer's stock can no longer be reversed (the destination no longer holds what arrived); nothing was changed.",
          );
        }
        throw error;
      }
    },
    undefined,
    [documentLock(principal.accountId, id)],
  );
}
