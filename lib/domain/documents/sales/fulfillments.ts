import { localToday, orNull, requireDocumentPermission } from "../rules.js";
import { referenceDetail } from "../../../core/errors.js";
import { randomUUID } from "node:crypto";
import { Decimal } from "../../../core/decimal.js";
import type { Permission, Principal } from "../../../auth/permissions.js";
import { errors, type ApiError, type ValidationDetail } from "../../../core/errors.js";
import type { IdempotencyCompletion } from "../../../core/idempotency.js";
import { pageOfAll, type ListEnvelope, type PageRequest } from "../../../core/pagination.js";
import { DOCUMENT_LABEL, addDocumentWrite } from "../../../db/documents.js";
import { FULFILLMENT_LABEL, queryFulfillments, readFulfillment } from "../../../db/fulfillments.js";
import { requestReceivedAt } from "../../../db/metrics.js";
import { RETRY } from "../../../db/retry.js";
import { allocateNumber } from "../../../db/sequences.js";
import type { AccountItem, DocumentItem, FulfillmentItem } from "../../../db/service.js";
import { writeTransaction, type TransactionBuilder } from "../../../db/transactions.js";
import type { PackBody, ShipBody } from "../../../schemas/sales-documents.js";
import { accountSettings, writeAtRevision } from "../documents.js";
import { addQuantities } from "../../inventory/math.js";
import { duplicateLineIds, type SalesKind, type SalesLine, type SalesTree } from "./model.js";
import { isPackable, remainingToPack } from "./progress.js";
import { requireSalesRead } from "./service.js";
import { withArticle } from "../../../core/text.js";

/**
 * Packing lists (fulfillments) of sales orders and standalone invoices (spec part 2, sections
 * 2.4, 4.4 and 4.5; architecture section 8, "mark shipped"), written once for both kinds.
 *
 * Pack: incremental quantities of packable lines (inventory lines; service lines only with the
 * account's packing-list service-item setting; discount lines never), never above a line's
 * unpacked quantity. The packing list (numbered from the account's `packing_list` sequence), the
 * lines' packed quantities and the document's packed percentage are written in ONE transaction
 * conditioned on the document's revision: a concurrent pack makes the loser read again and
 * recheck, so no line is ever overpacked. Packing never changes stock.
 * Ship: records the shipped date and carrier details of a packed list; its quantities become the
 * lines' shipped quantities (never above the packed ones, so `quantity_shipped <= quantity`).
 */

export interface FulfillmentPolicy {
  kind: "sales_order" | "invoice";
  what: string;
  permission: Permission;
  /** The visible document, or 404. */
  read(principal: Principal, id: string): Promise<SalesTree>;
  /** Throws when the document's state refuses packing (409) or the caller may not (403). */
  assertPackable(principal: Principal, tree: SalesTree, account: AccountItem): void;
  /** Throws when the document's state refuses shipping (e.g. a linked invoice). */
  assertShippable?(tree: SalesTree): void;
  /** Whether the document's packing lists are another's (a linked invoice's are its sales order's). */
  packedElsewhere?(tree: SalesTree): boolean;
  /** A pack body that breaks the rules: 422 with these details. */
  invalid(details: ValidationDetail[]): ApiError;
  /** A named line is fully packed already. */
  alreadyPacked(param: string): ApiError;
  /** Nothing is left to pack on the document (closed concurrently or fully packed). */
  nothingLeft(): ApiError;
  /** The header fields that follow the lines (percentages), the account settings it shows, and the new revision. */
  next(previous: DocumentItem, lines: readonly SalesLine[], account: AccountItem | undefined): DocumentItem;
  /** Other items of the same transaction (a sales order's linked invoices). */
  related?(tx: TransactionBuilder, header: DocumentItem): void;
}

const lineKey = (kind: FulfillmentPolicy["kind"]) => (kind === "sales_order" ? "sales_order_line_id" : "invoice_line_id");

/** A packing list as the API shows it (spec 2.4: only these fields; 4.5 for invoices). */
export function presentFulfillment(fulfillment: FulfillmentItem): Record<string, unknown> {
  const kind = fulfillment.documentKind;
  return {
    id: fulfillment.fulfillmentId,
    [kind === "sales_order" ? "sales_order_id" : "invoice_id"]: fulfillment.documentId,
    packing_list_number: fulfillment.number,
    status: fulfillment.status,
    units_packed: fulfillment.unitsPacked,
    shipped_date: orNull(fulfillment.shippedDate),
    carrier: orNull(fulfillment.carrier),
    tracking_number: orNull(fulfillment.trackingNumber),
    tracking_url: orNull(fulfillment.trackingUrl),
    tracking_status: orNull(fulfillment.trackingStatus),
    tracking_status_details: orNull(fulfillment.trackingStatusDetails),
    estimated_delivery_date: orNull(fulfillment.estimatedDeliveryDate),
    tracking_updated_at: orNull(fulfillment.trackingUpdatedAt),
    lines: fulfillment.lines.map((line) => ({ [lineKey(kind)]: line.lineId, quantity: line.quantity })),
    created_at: fulfillment.createdAt,
    updated_at: fulfillment.updatedAt,
  };
}

/** A document's packing lists, number newest first (same visibility as the document). */
export async function listFulfillments(
  principal: Principal,
  policy: FulfillmentPolicy,
  id: string,
  url: string,
  page: PageRequest,
  readPermission: Permission,
): Promise<ListEnvelope<Record<string, unknown>>> {
  requireDocumentPermission(principal, readPermission, `reading ${policy.what}s`);
  await policy.read(principal, id);
  return pageOfAll(url, page, (await queryFulfillments(principal.accountId, id)).map(presentFulfillment));
}

/** Whether a packing list of the document was made after `since` (epoch ms, on the domain's clock). */
async function packedSince(accountId: string, documentId: string, since: number): Promise<boolean> {
  return (await queryFulfillments(accountId, documentId)).some((fulfillment) => Date.parse(fulfillment.createdAt) > since);
}

/** Packs incremental quantities (see the module comment); 201 with the new packing list. */
export async function packDocument(
  principal: Principal,
  policy: FulfillmentPolicy,
  id: string,
  body: PackBody,
  ifMatchHeader: string | undefined,
  completion: IdempotencyCompletion | undefined,
): Promise<Record<string, unknown>> {
  requireDocumentPermission(principal, policy.permission, `packing ${policy.what}s`);
  const duplicates = duplicateLineIds(body.lines);
  if (duplicates.length > 0) throw policy.invalid(duplicates);
  const account = await accountSettings(principal.accountId);
  const receivedAt = requestReceivedAt();
  return writeAtRevision(
    { operation: `pack ${policy.what}`, accountId: principal.accountId, documentId: id, ifMatch: ifMatchHeader },
    () => policy.read(principal, id),
    async (tree, turns, attempt) => {
      policy.assertPackable(principal, tree, account);
      const serviceItems = account.packingServiceItems;
      // Spec 4.4: a line already fully packed "at first validation" is the line's own 409; an order
      // packed full by a concurrent request is the order's: one packed after this request was
      // received (it lost a race to it, or waited behind it). Waiting behind requests that packed
      // nothing, or behind other writes (a ship, a payment), is not that: the line's code, as when
      // sent alone. Only a full document pays the read of its packing lists.
      const full = !tree.lines.some((line) => remainingToPack(line, serviceItems) > 0);
      if (full && (attempt > 0 || (await packedSince(principal.accountId, id, receivedAt)))) throw policy.nothingLeft();
      const byId = new Map(tree.lines.map((line) => [line.id, line]));
      const details: ValidationDetail[] = [];
      const packed = new Map<string, number>();
      for (const [index, entry] of body.lines.entries()) {
        const line = byId.get(entry.id);
        if (!line) {
          details.push(referenceDetail(`lines[${index}].id`, `is not a line of this ${policy.what}.`));
          continue;
        }
        if (!isPackable(line, serviceItems)) {
          const why =
            line.lineType === "discount"
              ? "discount lines are never packed"
              : "service lines are packed only with the account's packing-list service-item setting";
          details.push({ param: `lines[${index}].id`, code: "not_packable", message: `is ${withArticle(line.lineType)} line: ${why}.` });
          continue;
        }
        const remaining = remainingToPack(line, serviceItems);
        if (remaining === 0) throw policy.alreadyPacked(`lines[${index}].id`);
        if (new Decimal(entry.quantity).gt(remaining)) {
          details.push({ param: `lines[${index}].quantity`, code: "too_large", message: `is more than the line's unpacked quantity (${remaining}).` });
          continue;
        }
        packed.set(line.id, entry.quantity);
      }
      if (details.length > 0) throw policy.invalid(details);
      const lines = tree.lines.map((line) =>
        packed.has(line.id) ? { ...line, quantityPacked: addQuantities(line.quantityPacked, packed.get(line.id)!) } : line,
      );
      const header = policy.next(tree.header, lines, account);
      const now = header.updatedAt;
      const fulfillmentId = randomUUID();
      const fulfillment = (number: number): FulfillmentItem => ({
        accountId: principal.accountId,
        documentId: id,
        fulfillmentId,
        documentKind: policy.kind,
        number,
        status: "packed",
        unitsPacked: addQuantities(...packed.values()),
        lines: body.lines.map((entry) => ({ lineId: entry.id, quantity: entry.quantity })),
        createdAt: now,
        updatedAt: now,
      });
      const { number, cancellation } = await allocateNumber(principal.accountId, "packing_list", (number, claim) =>
        writeTransaction(
          (tx) => {
            claim(tx);
            addDocumentWrite(tx, { header, lines, previous: tree.header });
            tx.add(FULFILLMENT_LABEL, tx.entities.fulfillment.create(fulfillment(number)).commit());
            policy.related?.(tx, header);
            turns.serveAllWithin(tx);
          },
          { completion, body: presentFulfillment(fulfillment(number)) },
        ),
      );
      if (!cancellation) {
        turns.servedWithin();
        return presentFulfillment(fulfillment(number));
      }
      if (cancellation.failed(DOCUMENT_LABEL)) return RETRY; // packed (or changed) meanwhile: read again and recheck
      throw errors.internal(new Error(`pack failed: ${cancellation.labels.join(", ")}`));
    },
  );
}

/** Marks a packed list shipped (architecture section 8); 200 with the packing list, now `shipped`. */
export async function shipFulfillment(
  principal: Principal,
  policy: FulfillmentPolicy,
  id: string,
  fulfillmentId: string,
  body: ShipBody,
  ifMatchHeader: string | undefined,
  completion: IdempotencyCompletion | undefined,
): Promise<Record<string, unknown>> {
  requireDocumentPermission(principal, policy.permission, `shipping ${policy.what}s`);
  const account = await accountSettings(principal.accountId);
  return writeAtRevision(
    { operation: `ship ${policy.what} fulfillment`, accountId: principal.accountId, documentId: id, ifMatch: ifMatchHeader },
    async () => {
      const [tree, fulfillment] = await Promise.all([policy.read(principal, id), readFulfillment(principal.accountId, id, fulfillmentId)]);
      // An unknown packing list is 404 whatever the If-Match (as an unknown payment is); one named
      // under a linked invoice is its sales order's, which the state answer says after the revision.
      if (!fulfillment && !policy.packedElsewhere?.(tree)) throw errors.resourceMissing("fulfillment", fulfillmentId);
      return { header: tree.header, tree, fulfillment };
    },
    async ({ tree, fulfillment }) => {
      // A linked invoice's packing lists are its sales order's: that answer first, whatever the id.
      policy.assertShippable?.(tree);
      if (!fulfillment) throw errors.resourceMissing("fulfillment", fulfillmentId);
      if (fulfillment.status === "shipped") {
        throw errors.stateConflict("fulfillment_already_shipped", `Packing list ${fulfillment.number} is already shipped (on ${fulfillment.shippedDate}).`);
      }
      const shipped = new Map<string, number>();
      for (const entry of fulfillment.lines) shipped.set(entry.lineId, addQuantities(shipped.get(entry.lineId) ?? 0, entry.quantity));
      const lines = tree.lines.map((line) =>
        shipped.has(line.id) ? { ...line, quantityShipped: Math.min(line.quantityPacked, addQuantities(line.quantityShipped, shipped.get(line.id)!)) } : line,
      );
      const header = policy.next(tree.header, lines, account);
      const next: FulfillmentItem = {
        ...fulfillment,
        status: "shipped",
        shippedDate: body.shipped_date ?? localToday(principal, account),
        updatedAt: header.updatedAt,
      };
      if (body.carrier) next.carrier = body.carrier;
      if (body.tracking_number) next.trackingNumber = body.tracking_number;
      if (body.tracking_url) next.trackingUrl = body.tracking_url;
      const resource = presentFulfillment(next);
      const cancellation = await writeTransaction(
        (tx) => {
          addDocumentWrite(tx, { header, lines, previous: tree.header });
          tx.add(
            FULFILLMENT_LABEL,
            tx.entities.fulfillment
              .put(next)
              .where(({ status }, { eq }) => eq(status, "packed"))
              .commit(),
          );
          policy.related?.(tx, header);
        },
        { completion, body: resource },
      );
      if (!cancellation) return resource;
      if (cancellation.failed(DOCUMENT_LABEL) || cancellation.failed(FULFILLMENT_LABEL)) return RETRY;
      throw errors.internal(new Error(`ship failed: ${cancellation.labels.join(", ")}`));
    },
  );
}

/**
 * A kind's fulfilment operations as its handlers call them: its packing lists (with its list
 * permission), pack and ship (reading the kind is required first, then `policy.permission`).
 */
export function fulfillmentOperations(kind: SalesKind, policy: FulfillmentPolicy) {
  return {
    list: (principal: Principal, id: string, url: string, page: PageRequest) => listFulfillments(principal, policy, id, url, page, kind.listPermission),
    pack: async (principal: Principal, id: string, body: PackBody, ifMatchHeader: string | undefined, completion: IdempotencyCompletion | undefined) => {
      requireSalesRead(principal, kind);
      return packDocument(principal, policy, id, body, ifMatchHeader, completion);
    },
    ship: async (
      principal: Principal,
      id: string,
      fulfillmentId: string,
      body: ShipBody,
      ifMatchHeader: string | undefined,
      completion: IdempotencyCompletion | undefined,
    ) => {
      requireSalesRead(principal, kind);
      return shipFulfillment(principal, policy, id, fulfillmentId, body, ifMatchHeader, completion);
    },
  };
}
