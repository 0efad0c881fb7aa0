import { laterUpdatedAt } from "../../../core/clock.js";
import { accountToday, localToday, requireDocumentPermission, withEtag } from "../rules.js";
import { referenceDetail } from "../../../core/errors.js";
import { Decimal } from "../../../core/decimal.js";
import type { Principal } from "../../../auth/permissions.js";
import { errors, type ValidationDetail } from "../../../core/errors.js";
import type { IdempotencyCompletion } from "../../../core/idempotency.js";
import { withArticle } from "../../../core/text.js";
import { addDocumentWrite } from "../../../db/documents.js";
import { readLocation } from "../../../db/locations.js";
import { RETRY } from "../../../db/retry.js";
import type { DocumentItem } from "../../../db/service.js";
import type { PurchaseOrderReceiveBody } from "../../../schemas/purchase-orders.js";
import { newRevision } from "../../common/revisions.js";
import { addQuantities } from "../../inventory/math.js";
import type { StockChange } from "../../inventory/stock-changes.js";
import type { StockRuleError } from "../../../core/failures.js";
import { accountSettings, writeAtRevision } from "../documents.js";
import { commitStockWrite } from "../stock/writes.js";
import {
  PO_STATUS,
  fullyReceived,
  movesStock,
  purchaseOrderResult as result,
  stockChanges,
  withRowIds,
  type PoStatus,
  type PurchaseOrderResult,
} from "./model.js";
import { visibleOrder } from "./service.js";

/**
 * Sending and receiving purchase orders (spec part 2, section 3.1 and 4.1 send and receive):
 * the status steps that move stock. Sending adds each inventory line's unreceived quantity to
 * `incoming` at the order's location; receiving moves it from `incoming` to on hand (and into
 * the item's moving average cost), all through the ledger, in the order's own write.
 */

/**
 * Sends an order (spec 3.1): Not Sent -> Sent with `date_sent` (given, or today in the account's
 * time zone); each inventory line's unreceived quantity becomes incoming at the order's location
 * in the same write. Sending a Sent order again changes nothing (the original date stays);
 * Partially Received and Received orders cannot be sent (409 `purchase_order_send_not_allowed`).
 */
export async function sendPurchaseOrder(
  principal: Principal,
  id: string,
  input: { date_sent?: string },
  ifMatchHeader: string | undefined,
  completion: IdempotencyCompletion | undefined,
): Promise<PurchaseOrderResult> {
  requireDocumentPermission(principal, "purchase_orders.modify", "sending purchase orders");
  return writeAtRevision(
    { operation: "send purchase order", accountId: principal.accountId, documentId: id, ifMatch: ifMatchHeader },
    () => visibleOrder(principal, id),
    async (tree) => {
      const previous = tree.header;
      if (previous.status === "sent") return result(principal, previous, tree.lines);
      if (previous.status !== "not_sent") {
        throw errors.stateConflict("purchase_order_send_not_allowed", `A ${PO_STATUS[previous.status as PoStatus].label} purchase order cannot be sent.`);
      }
      const account = await accountSettings(principal.accountId);
      const base: DocumentItem = {
        ...previous,
        status: "sent",
        statusId: PO_STATUS.sent.id,
        dateSent: input.date_sent ?? accountToday(account),
        revision: newRevision("po"),
        updatedAt: laterUpdatedAt(previous.updatedAt),
      };
      const unreceived = tree.lines
        .map((line, position) => ({ line, position, quantity: addQuantities(line.quantity, -line.quantityReceived) }))
        .filter(movesStock);
      const changes = stockChanges(previous, unreceived, "incoming");
      // Incoming only grows here: the rules a current plan can break are a line for more than one
      // unit of an item made unique since the line was written, and an item's incoming stock
      // past the most it counts; each names the line.
      const refusal = (error: StockRuleError): Error => {
        const moved = unreceived[error.changeIndex];
        if (!moved) return error;
        return lineRefusal(
          error,
          `lines[${moved.position}].quantity`,
          moved.quantity > 1
            ? `is ${moved.quantity}, but its item is now a unique item, whose order line is for 1 unit: update the line's quantity to 1, then send the order.`
            : "orders a unit of a unique item that has one on hand, in transit or incoming already (on this order or another): a unique item is one unit.",
        );
      };
      return commitOrderStock(principal, { previous, next: base, lines: tree.lines, changes, action: "sent", completion }, refusal, "not_sent");
    },
  );
}

/**
 * Receives quantities (spec 3.1 and 4.1 receive): increments on inventory lines of a Sent or
 * Partially Received order, never above a line's remaining quantity; on-hand stock rises at the
 * order's location (and leaves `incoming`) through the ledger, the moving average cost takes the
 * line's unit cost, and the lines and status are saved in the same write or not at all.
 */
export async function receivePurchaseOrder(
  principal: Principal,
  id: string,
  input: PurchaseOrderReceiveBody,
  ifMatchHeader: string | undefined,
  completion: IdempotencyCompletion | undefined,
): Promise<PurchaseOrderResult> {
  requireDocumentPermission(principal, "purchase_orders.modify", "receiving purchase orders");
  const duplicates: ValidationDetail[] = [];
  const seen = new Set<string>();
  input.lines.forEach((line, index) => {
    if (seen.has(line.line_id)) duplicates.push({ param: `lines[${index}].line_id`, code: "duplicate", message: "appears more than once." });
    seen.add(line.line_id);
  });
  if (duplicates.length > 0) throw errors.validationFailed(duplicates);
  return writeAtRevision(
    { operation: "receive purchase order", accountId: principal.accountId, documentId: id, ifMatch: ifMatchHeader },
    () => visibleOrder(principal, id),
    async (tree) => {
      const previous = tree.header;
      if (previous.status !== "sent" && previous.status !== "partially_received") {
        throw errors.stateConflict(
          "purchase_order_receive_not_allowed",
          previous.status === "not_sent" ? "A Not Sent purchase order cannot be received; send it first." : "This purchase order is fully received.",
        );
      }
      const [account, location] = await Promise.all([accountSettings(principal.accountId), readLocation(principal.accountId, previous.locationId!)]);
      if (!location?.active) throw errors.stateConflict("purchase_order_receive_not_allowed", "The order's receiving location is no longer active.");
      const byId = new Map(tree.lines.map((line) => [line.id, line]));
      const details: ValidationDetail[] = [];
      const received = new Map<string, number>();
      input.lines.forEach((entry, index) => {
        const line = byId.get(entry.line_id);
        if (!line) details.push(referenceDetail(`lines[${index}].line_id`, "is not a line of this purchase order."));
        else if (line.lineType !== "inventory")
          details.push({
            param: `lines[${index}].line_id`,
            code: "not_inventory",
            message: `is ${withArticle(line.lineType)} line; only inventory lines are received.`,
          });
        else {
          const remaining = addQuantities(line.quantity, -line.quantityReceived);
          if (new Decimal(entry.quantity).gt(remaining)) {
            details.push({
              param: `lines[${index}].quantity`,
              code: "too_large",
              message: `is more than the line's remaining unreceived quantity (${remaining}).`,
            });
          } else received.set(line.id, entry.quantity);
        }
      });
      if (details.length > 0) throw errors.validationFailed(details);
      const lines = tree.lines.map((line) =>
        received.has(line.id) ? { ...line, quantityReceived: addQuantities(line.quantityReceived, received.get(line.id)!) } : line,
      );
      const complete = fullyReceived(lines);
      const base: DocumentItem = {
        ...previous,
        status: complete ? "received" : "partially_received",
        statusId: complete ? PO_STATUS.received.id : PO_STATUS.partially_received.id,
        revision: newRevision("po"),
        updatedAt: laterUpdatedAt(previous.updatedAt),
      };
      if (complete) base.dateReceived = input.received_date ?? localToday(principal, account);
      const receipts = tree.lines.filter((line) => received.has(line.id)).map((line) => ({ line, quantity: received.get(line.id)! }));
      const changes = stockChanges(previous, receipts, "receive");
      // A unique item already on hand cannot be received again; an item's stock has a maximum.
      // Each refusal names the body's entry of the line (one change per receipt, in order).
      return commitOrderStock(principal, { previous, next: base, lines, changes, action: "received", completion }, (error) => {
        const receipt = receipts[error.changeIndex];
        const entry = receipt ? input.lines.findIndex((line) => line.line_id === receipt.line.id) : -1;
        return lineRefusal(error, entry >= 0 ? `lines[${entry}].quantity` : "lines", error.message);
      });
    },
  );
}

/**
 * A stock rule an order's step breaks, as 422 naming the line's quantity (`param`): a unique
 * item's rule as `unique_item` (as an adjustment says it) with `uniqueMessage`, any other as its
 * rule (`too_large`: past the item's maximum).
 */
function lineRefusal(error: StockRuleError, param: string, uniqueMessage: string): Error {
  return errors.validationFailed([
    error.rule === "unique_quantity" ? { param, code: "unique_item", message: uniqueMessage } : { param, code: error.rule, message: error.message },
  ]);
}

/**
 * Writes an order's step (send, receive) with its stock changes in one commit, conditioned on
 * the order as read (and on `status` when given): the order as written, or RETRY when it changed
 * meanwhile (a stock rule a stale plan breaks reads it again too, `commitStockWrite`).
 */
async function commitOrderStock(
  principal: Principal,
  step: {
    previous: DocumentItem;
    next: DocumentItem;
    lines: Parameters<typeof withRowIds>[1];
    changes: StockChange[];
    action: "sent" | "received";
    completion: IdempotencyCompletion | undefined;
  },
  refusal: (error: StockRuleError) => Error,
  status?: PoStatus,
): Promise<PurchaseOrderResult | typeof RETRY> {
  const { previous, next, lines, changes, action, completion } = step;
  let written: PurchaseOrderResult | undefined;
  const { cancellation } = await commitStockWrite(
    {
      accountId: principal.accountId,
      source: { sourceType: "purchase_order", sourceId: previous.documentId, userId: principal.userId, reason: `Purchase order ${previous.number} ${action}` },
      changes,
      document: (tx, rowIdOf) =>
        addDocumentWrite(tx, {
          header: next,
          lines: withRowIds(next, lines, rowIdOf),
          previous,
          ...(status ? { condition: (a, op) => op.eq!(a.status, status) } : {}),
        }),
      outcome: (rowIdOf) => {
        written = result(principal, next, withRowIds(next, lines, rowIdOf));
        return { completion: withEtag(completion, next.revision), body: written.body };
      },
    },
    refusal,
    { accountId: principal.accountId, documentId: previous.documentId, revision: previous.revision },
  );
  return cancellation ? RETRY : written!;
}
