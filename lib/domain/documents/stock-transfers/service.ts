import { laterUpdatedAt } from "../../../core/clock.js";
import { mergeStockChanges, type StockChange } from "../../inventory/stock-changes.js";
import { localToday, matchReplacementLines, requireDocumentPermission, statusIdFilter, changesNothing, NO_MONEY } from "../rules.js";
import { randomUUID } from "node:crypto";
import { keepsItem, sentOrKeptRow } from "../line-values.js";
import type { Principal } from "../../../auth/permissions.js";
import { errors, type ValidationDetail } from "../../../core/errors.js";
import type { IdempotencyCompletion } from "../../../core/idempotency.js";
import type { ListEnvelope, PageRequest } from "../../../core/pagination.js";
import { DOCUMENT_LABEL, addDocumentDelete, addDocumentWrite, type DocumentTree } from "../../../db/documents.js";
import { readLocation } from "../../../db/locations.js";
import { checkReferences } from "../../../db/references.js";
import { RETRY, retrying } from "../../../db/retry.js";
import type { DocumentItem, LocationItem } from "../../../db/service.js";
import type {
  StockTransferCreateBody,
  StockTransferLineBody,
  StockTransferListQuery,
  StockTransferReceiveBody,
  StockTransferSendBody,
  StockTransferUpdateBody,
} from "../../../schemas/stock-transfers.js";
import { resolveLineItems } from "../lines.js";
import { accountSettings, addAssigneeCount, addKindCountDecrement, listDocuments, documentLock, visibleDocument } from "../documents.js";
import { newRevision } from "../../common/revisions.js";
import { MAX_TRANSFER_LINES } from "../../../schemas/stock-transfers.js";
import { freshHeader, textFilter } from "../stock/model.js";
import { commitStockWrite, createNumbered, inactiveLocationDetail } from "../stock/writes.js";
import {
  TRANSFER_STATUS,
  TRANSFER_STEPS,
  changesOf,
  derive,
  presentStockTransfer,
  reversalOf,
  shippingChanges,
  stockError,
  variationLabel,
  withNames,
  type TransferLine,
  type TransferStatus,
  type TransferStep,
} from "./model.js";

/**
 * Stock transfers: spec part 2, sections 2.2, 3.2 and 4.2; architecture sections 4 (status ids)
 * and 5 (the ledger). The transfer's own model (statuses, steps, stock effects, presentation) is
 * `model.ts`.
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
  return listDocuments({
    principal,
    kind: "stock_transfer",
    url,
    page,
    ids: query.ids,
    filter: {
      statusId: statusIdFilter(query.status_id, TRANSFER_STATUS),
      assignedUserId: query.assigned_user_id,
      originLocationId: query.origin_location_id,
      destinationLocationId: query.destination_location_id,
      dates: [{ attribute: "issueDate", from: query.issue_date_from, to: query.issue_date_to }],
      text: textFilter(query.q),
    },
    present: (headers) => headers.map((header) => presentStockTransfer(header)),
  });
}

// ---------------------------------------------------------------------------------------------
// Writes

async function readLocations(principal: Principal, originId: string, destinationId: string): Promise<{ origin: LocationItem; destination: LocationItem }> {
  const [origin, destination] = await Promise.all([readLocation(principal.accountId, originId), readLocation(principal.accountId, destinationId)]);
  const details: ValidationDetail[] = [];
  if (!origin?.active) details.push(inactiveLocationDetail("origin_location_id"));
  if (!destination?.active) details.push(inactiveLocationDetail("destination_location_id"));
  if (details.length === 0 && originId === destinationId) {
    details.push({ param: "destination_location_id", code: "invalid", message: "must differ from origin_location_id." });
  }
  if (details.length > 0) throw errors.validationFailed(details);
  return { origin: origin!, destination: destination! };
}

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
    // A line sent back by id without its row keeps it, as on every document.
    input.map((line, index) => ({
      index,
      itemId: line.item_id,
      ivlId: sentOrKeptRow(line.item_variation_location_id, kept[index], line.item_id),
      keepsItem: keepsItem(kept[index], line.item_id),
    })),
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

/** Net changes of moving from `before` to `after` lines while in transit (merged per row). */
function inTransitDifference(header: DocumentItem, before: readonly TransferLine[], after: readonly TransferLine[]): StockChange[] {
  return mergeStockChanges([...changesOf(header, before, "send", -1), ...changesOf(header, after, "send")]);
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
  const fresh = freshHeader({
    accountId: principal.accountId,
    documentId: randomUUID(),
    kind: "stock_transfer",
    revision: newRevision("st"),
    status: "pending",
    statusId: TRANSFER_STATUS.pending.id,
    assignedUserId: principal.userId,
    now,
  });
  const header = {
    ...fresh,
    originLocationId: origin.locationId,
    destinationLocationId: destination.locationId,
    issueDate: localToday(principal, account),
    ...NO_MONEY,
  } as DocumentItem;
  const base = derive(shippingChanges(withNames(header, origin, destination), input), lines);
  const { header: written, cancellation } = await createNumbered({
    sequence: "stock_transfer",
    base,
    lines,
    completion,
    present: (numbered) => presentStockTransfer(numbered, lines),
    add: (tx) =>
      checkReferences(tx, principal.accountId, [
        { param: "origin_location_id", kind: "location", id: origin.locationId },
        { param: "destination_location_id", kind: "location", id: destination.locationId },
      ]),
  });
  if (cancellation) throw errors.validationFailed([inactiveLocationDetail("origin_location_id")]);
  return presentStockTransfer(written, lines);
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
      let next = shippingChanges({ ...previous, revision: newRevision("st"), updatedAt: laterUpdatedAt(previous.updatedAt) }, input);
      if (input.issue_date !== undefined) next.issueDate = input.issue_date;
      next = derive(next, lines);
      // Sent back as read: nothing to write (updated_at stays).
      if (changesNothing(previous, next, tree.lines, lines)) return presentStockTransfer(previous, tree.lines);
      const changes = previous.status === "in_transit" && input.lines !== undefined ? inTransitDifference(previous, tree.lines, lines) : [];
      const { cancellation } = await commitStockWrite(
        {
          accountId: principal.accountId,
          source: { sourceType: "stock_transfer", sourceId: id, userId: principal.userId, reason: `Stock transfer ${previous.number} updated in transit` },
          changes,
          document: (tx) => addDocumentWrite(tx, { header: next, lines: input.lines === undefined ? undefined : lines, previous }),
          outcome: () => ({ completion, body: presentStockTransfer(next, lines) }),
        },
        (error) => stockError(error, changes, lines, "The update"),
        { accountId: principal.accountId, documentId: id, revision: previous.revision },
      );
      return cancellation ? RETRY : presentStockTransfer(next, lines);
    },
    undefined,
    [documentLock(principal.accountId, id)],
  );
}

/** Pending -> In Transit (spec 3.2 send): origin on hand -> destination in transit. */
export const sendStockTransfer = (principal: Principal, id: string, input: StockTransferSendBody, completion: IdempotencyCompletion | undefined) =>
  step(principal, id, TRANSFER_STEPS.send, "send stock transfer", input.date_sent, input, completion);

/** In Transit -> Transferred (spec 3.2 receive): destination in transit -> on hand. */
export const receiveStockTransfer = (principal: Principal, id: string, input: StockTransferReceiveBody, completion: IdempotencyCompletion | undefined) =>
  step(principal, id, TRANSFER_STEPS.receive, "receive stock transfer", input.date_received, input, completion);

/**
 * Takes a transfer one status step (send or receive): refused with the step's 409 from any
 * other state; the step's date (given, or the user's today), the shipping fields and the stock
 * effect are written together.
 */
async function step(
  principal: Principal,
  id: string,
  move: TransferStep,
  operation: string,
  date: string | undefined,
  input: Parameters<typeof shippingChanges>[1],
  completion: IdempotencyCompletion | undefined,
): Promise<Record<string, unknown>> {
  requireWrite(principal);
  return retrying(
    operation,
    async () => {
      const tree = await readTransfer(principal, id);
      const previous = tree.header;
      if (previous.status !== move.from) {
        throw errors.stateConflict(move.code, `${move.only}; this one is ${TRANSFER_STATUS[previous.status as TransferStatus].label}.`);
      }
      const account = await accountSettings(principal.accountId);
      const next = shippingChanges(
        {
          ...previous,
          status: move.to,
          statusId: TRANSFER_STATUS[move.to].id,
          [move.date]: date ?? localToday(principal, account),
          revision: newRevision("st"),
          updatedAt: laterUpdatedAt(previous.updatedAt),
        },
        input,
      );
      const changes = changesOf(previous, tree.lines, move.effect);
      return transition(
        principal,
        id,
        previous,
        derive(next, tree.lines),
        tree.lines,
        changes,
        completion,
        move.when,
        `Stock transfer ${previous.number} ${move.done}`,
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
  const body = presentStockTransfer(next, lines);
  const { cancellation } = await commitStockWrite(
    {
      accountId: principal.accountId,
      source: { sourceType: "stock_transfer", sourceId: id, userId: principal.userId, reason },
      changes,
      document: (tx) => addDocumentWrite(tx, { header: next, previous }),
      outcome: () => ({ completion, body }),
    },
    (error) => stockError(error, changes, lines, when),
    { accountId: principal.accountId, documentId: id, revision: previous.revision },
  );
  return cancellation ? RETRY : body;
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
      const changes = mergeStockChanges(reversalOf(header, tree.lines));
      const { cancellation } = await commitStockWrite(
        {
          accountId: principal.accountId,
          source: { sourceType: "stock_transfer", sourceId: id, userId: principal.userId, reason: `Stock transfer ${header.number} deleted` },
          changes,
          document: (tx) => {
            addDocumentDelete(tx, tree as unknown as DocumentTree);
            addKindCountDecrement(tx, tree.header);
            addAssigneeCount(tx, header, -1);
          },
          outcome: () => ({ completion, body: resource }),
        },
        (error) =>
          error.rule === "negative_balance"
            ? errors.stateConflict(
                "stock_transfer_delete_not_allowed",
                "The transfer's stock can no longer be reversed (the destination no longer holds what arrived); nothing was changed.",
              )
            : stockError(error, changes, tree.lines, "The deletion"),
        { accountId: principal.accountId, documentId: id, revision: header.revision },
      );
      if (!cancellation) return resource;
      if (cancellation.failed(DOCUMENT_LABEL)) return RETRY;
      throw errors.internal(new Error(`stock transfer delete failed: ${cancellation.labels.join(", ")}`));
    },
    undefined,
    [documentLock(principal.accountId, id)],
  );
}
