import { seesOwnedBy } from "../../common/ownership.js";
import { laterUpdatedAt } from "../../../core/clock.js";
import { inventoryLineIds, inventoryLineName, itemSnapshot, defaultUnitCost, keepsItem, sentOrKeptVariation, serviceLineDetails } from "../line-values.js";
import { accountToday, matchReplacementLines, requireDocumentPermission, statusIdFilter, withEtag, withStoredDiscountLine, changesNothing } from "../rules.js";
import { referenceDetail } from "../../../core/errors.js";
import { randomUUID } from "node:crypto";
import type { Principal } from "../../../auth/permissions.js";
import { errors, type ValidationDetail } from "../../../core/errors.js";
import type { IdempotencyCompletion } from "../../../core/idempotency.js";
import type { ListEnvelope, PageRequest } from "../../../core/pagination.js";
import { DOCUMENT_LABEL, addDocumentWrite, type DocumentTree } from "../../../db/documents.js";
import { readLocation } from "../../../db/locations.js";
import { addDocumentActivity, readParty } from "../../../db/parties.js";
import { checkReferences, referenceDetails, type Reference } from "../../../db/references.js";
import { RETRY } from "../../../db/retry.js";
import type { DocumentItem } from "../../../db/service.js";
import type { Cancellation } from "../../../db/transactions.js";
import { writeTransaction } from "../../../db/transactions.js";
import type { PurchaseOrderCreateBody, PurchaseOrderLineBody, PurchaseOrderListQuery, PurchaseOrderUpdateBody } from "../../../schemas/purchase-orders.js";
import { customFieldWrite } from "../../common/custom-field-values.js";
import { resolveLineItems, type ResolvedLineItem } from "../lines.js";
import { mayReachLocation, outsideLocationDetail } from "../../common/location-access.js";
import { paymentOperations, type PaymentPolicy } from "../payments.js";
import { accountSettings, listDocuments, visibleDocument, writeAtRevision } from "../documents.js";
import { money, rate } from "../../common/money.js";
import { withTotalCoveringPaid } from "../amounts.js";
import { newRevision } from "../../common/revisions.js";
import { MAX_PO_LINES } from "../../../schemas/purchase-orders.js";
import { freshHeader, textFilter } from "../stock/model.js";
import { createNumbered, inactiveLocationDetail } from "../stock/writes.js";
import {
  PO_STATUS,
  derive,
  headerFields,
  presentPayment,
  presentPurchaseOrder,
  priceLines,
  purchaseOrderResult as result,
  type PoLine,
  type PoStatus,
  type PurchaseOrderResult,
  type WriteContext,
} from "./model.js";

/**
 * Purchase orders: spec part 2, sections 2.1, 3.1 and 4.1; architecture sections 4 (status ids,
 * money, revisions) and 8 (payments, stock effects): reads, creates, updates and payments. The
 * order's own model (statuses, pricing, header fields, presentation) is `model.ts`; sending and
 * receiving (the stock effects) are `receive.ts`.
 *
 * Statuses: 21 Not Sent -> (send) 22 Sent -> (receive) 23 Partially Received -> 24 Received.
 * Stock: sending adds each inventory line's unreceived quantity to `incoming` at the order's
 * location; receiving moves it from `incoming` to on hand (and into the item's moving average
 * cost), all through the ledger, in the order's own write.
 */

const WHAT = "purchase order";

// ---------------------------------------------------------------------------------------------
// Reads

type PoTree = Omit<DocumentTree, "lines"> & { lines: PoLine[] };

export const visibleOrder = (principal: Principal, id: string) => visibleDocument<PoTree>(principal, "purchase_order", id, WHAT);

/** One order with its lines in stored order (authentication plus ONE Query). */
export async function getPurchaseOrder(principal: Principal, id: string): Promise<PurchaseOrderResult> {
  requireDocumentPermission(principal, "purchase_orders.list", "reading purchase orders");
  const tree = await visibleOrder(principal, id);
  return result(principal, tree.header, tree.lines);
}

/** Orders newest number first, with every filter of spec 4.1 (and `ids`). */
export async function listPurchaseOrders(
  principal: Principal,
  url: string,
  page: PageRequest,
  query: PurchaseOrderListQuery,
): Promise<ListEnvelope<Record<string, unknown>>> {
  requireDocumentPermission(principal, "purchase_orders.list", "reading purchase orders");
  return listDocuments({
    principal,
    kind: "purchase_order",
    url,
    page,
    ids: query.ids,
    filter: {
      statusId: statusIdFilter(query.status_id, PO_STATUS),
      partyId: query.supplier_id,
      locationId: query.location_id,
      dates: [
        { attribute: "issueDate", from: query.issue_date_from, to: query.issue_date_to },
        { attribute: "dateRequested", from: query.requested_date_from, to: query.requested_date_to },
        { attribute: "dateNeeded", from: query.needed_date_from, to: query.needed_date_to },
        { attribute: "dateReceived", from: query.received_date_from, to: query.received_date_to },
      ],
      text: textFilter(query.q),
    },
    present: (headers) => headers.map((header) => presentPurchaseOrder(principal, header)),
  });
}

// ---------------------------------------------------------------------------------------------
// Writes

/**
 * Reads and checks what a write names: the supplier (visible, a supplier, not archived) and the
 * location (active, reachable under the location rule). An update checks only what it changes
 * (`checks`): a PATCH that sends only `name` never fails on the stored supplier or location.
 */
async function readContext(
  principal: Principal,
  supplierId: string,
  locationId: string,
  checks: { supplier: boolean; location: boolean } = { supplier: true, location: true },
): Promise<WriteContext> {
  const [account, supplier, location] = await Promise.all([
    accountSettings(principal.accountId),
    readParty(principal.accountId, supplierId),
    readLocation(principal.accountId, locationId),
  ]);
  const details: ValidationDetail[] = [];
  const ownsOrAll = supplier && seesOwnedBy(principal, supplier.ownerUserId);
  if (supplier?.kind !== "supplier" || (checks.supplier && !ownsOrAll))
    details.push(referenceDetail("supplier_id", "is not a visible supplier of this account."));
  else if (checks.supplier && supplier.archived) details.push({ param: "supplier_id", code: "archived", message: "is an archived supplier." });
  if (!location || (checks.location && !location.active)) details.push(inactiveLocationDetail("location_id"));
  else if (checks.location && !mayReachLocation(principal, locationId)) details.push(outsideLocationDetail("location_id"));
  if (details.length > 0) throw errors.validationFailed(details);
  return { principal, account, supplier: supplier!, location: location! };
}

/**
 * Builds the stored lines from the request's complete list: inventory lines take the item's
 * name, description, unit, SKU, variation and unit cost (overridable), service lines need a
 * name and a unit cost; tax rates default to the supplier's. `previous[i]` is the stored line
 * the request's line i keeps (its id and received quantity).
 */
async function buildLines(context: WriteContext, input: readonly PurchaseOrderLineBody[], previous: readonly (PoLine | undefined)[]): Promise<PoLine[]> {
  const details: ValidationDetail[] = [];
  input.forEach((line, index) => {
    if (line.item_id === undefined) details.push(...serviceLineDetails(index, line, "unit_cost", previous[index]));
    const kept = previous[index];
    if (kept && kept.quantityReceived > 0 && (kept.itemId ?? null) !== (line.item_id ?? null)) {
      details.push({ param: `lines[${index}].item_id`, code: "invalid", message: "cannot change on a line with received quantities." });
    }
  });
  if (details.length > 0) throw errors.validationFailed(details);
  const resolved = await resolveLineItems(
    context.principal.accountId,
    context.location.locationId,
    input.flatMap((line, index) =>
      line.item_id === undefined
        ? []
        : [
            {
              index,
              itemId: line.item_id,
              ivlId: line.item_variation_location_id,
              variationId: sentOrKeptVariation(line.item_variation_id, line.item_variation_location_id, previous[index], line.item_id),
              keepsItem: keepsItem(previous[index], line.item_id),
            },
          ],
    ),
    { locationLabel: "order's", byVariation: true },
  );
  const names = new Map<number, string>();
  for (const [index, found] of resolved) {
    const named = inventoryLineName(index, input[index]!.name, found.item, previous[index]);
    if ("detail" in named) details.push(named.detail);
    else names.set(index, named.name);
  }
  if (details.length > 0) throw errors.validationFailed(details);
  return input.map((line, index) => {
    const kept = previous[index];
    const taxRate = rate(line.tax_rate ?? context.supplier.taxRate1 ?? 0);
    const tax2Rate = rate(line.tax_2_rate ?? context.supplier.taxRate2 ?? 0);
    const base = {
      id: kept?.id ?? randomUUID(),
      quantityReceived: kept?.quantityReceived ?? 0,
      discountPercent: "0.000",
      taxRate,
      tax2Rate,
      discountedUnitCost: null,
      subtotal: "0.0000",
    };
    const found: ResolvedLineItem | undefined = resolved.get(index);
    if (!found) {
      return {
        ...base,
        lineType: "service" as const,
        name: line.name!,
        description: line.description ?? undefined,
        quantity: line.quantity ?? 1,
        unitCost: money(line.unit_cost!),
        variationValues: {},
      };
    }
    const { item, variation, row } = found;
    return {
      ...base,
      ...inventoryLineIds(item, variation, row),
      name: names.get(index)!,
      // null or blank ("") clears the description; omitting it takes the item's current one.
      description: line.description === undefined ? item.description : line.description || undefined,
      quantity: item.inventoryType === "unique" ? 1 : (line.quantity ?? 1),
      unitCost: money(line.unit_cost ?? defaultUnitCost(item, variation)),
      ...itemSnapshot(item, variation),
    };
  });
}

function mapReferenceFailures(cancellation: Cancellation): never {
  const details = referenceDetails(cancellation);
  if (cancellation.failedUnder("party:").length > 0) details.push(referenceDetail("supplier_id", "is not a supplier of this account."));
  if (details.length > 0) throw errors.validationFailed(details);
  throw errors.internal(new Error(`purchase order write failed: ${cancellation.labels.join(", ")}`));
}

/** Creates a Not Sent order numbered from the account's sequence (spec 4.1 create). */
export async function createPurchaseOrder(
  principal: Principal,
  input: PurchaseOrderCreateBody,
  completion: IdempotencyCompletion | undefined,
): Promise<PurchaseOrderResult> {
  requireDocumentPermission(principal, "purchase_orders.modify", "creating purchase orders");
  const context = await readContext(principal, input.supplier_id, input.location_id);
  const built = await buildLines(context, input.lines, []);
  const fields = headerFields(input);
  const { cleared: _cleared, ...set } = fields;
  const discountPercent = set.discountPercent ?? "0.000";
  const priced = priceLines(built, discountPercent, set.shippingFee ?? "0.0000");
  const customFields = input.custom_field_values === undefined ? undefined : customFieldWrite(input.custom_field_values, "purchase_order");
  const now = new Date().toISOString();
  const fresh = freshHeader({
    accountId: principal.accountId,
    documentId: randomUUID(),
    kind: "purchase_order",
    revision: newRevision("po"),
    status: "not_sent",
    statusId: PO_STATUS.not_sent.id,
    assignedUserId: principal.userId,
    now,
  });
  const base = derive(
    {
      ...fresh,
      // Spec 4.1: "today in the user's account timezone", the zone its send date takes too.
      issueDate: set.issueDate ?? accountToday(context.account),
      ...set,
      paymentTerms: set.paymentTerms ?? context.account.paymentTerms,
      discountPercent,
      ...priced.totals,
      customFieldValues: customFields?.values,
    } as DocumentItem,
    context,
    priced.lines,
  );
  const references: Reference[] = [...(customFields?.references ?? []), { param: "location_id", kind: "location", id: context.location.locationId }];
  const { header, cancellation } = await createNumbered({
    sequence: "purchase_order",
    base,
    lines: priced.lines,
    completion: withEtag(completion, base.revision),
    present: (numbered) => presentPurchaseOrder(principal, numbered, priced.lines),
    add: (tx) => {
      addDocumentActivity(tx, { accountId: principal.accountId, partyId: context.supplier.partyId }, { documents: 1 });
      checkReferences(tx, principal.accountId, references);
    },
  });
  if (cancellation) mapReferenceFailures(cancellation);
  return result(principal, header, priced.lines);
}

/**
 * Updates a Not Sent order (spec 4.1 update): partial; `lines` is the complete desired list;
 * changing the supplier or the location needs `lines`; `If-Match` (revision or ETag) makes the
 * update conditional (stale: 409 `mobile_mutation_conflict`).
 */
export async function updatePurchaseOrder(
  principal: Principal,
  id: string,
  input: PurchaseOrderUpdateBody,
  ifMatchHeader: string | undefined,
  completion: IdempotencyCompletion | undefined,
): Promise<PurchaseOrderResult> {
  requireDocumentPermission(principal, "purchase_orders.modify", "changing purchase orders");
  return writeAtRevision(
    { operation: "update purchase order", accountId: principal.accountId, documentId: id, ifMatch: ifMatchHeader },
    () => visibleOrder(principal, id),
    async (tree) => {
      const previous = tree.header;
      if (previous.status !== "not_sent") {
        throw errors.stateConflict(
          "purchase_order_update_not_allowed",
          `Only Not Sent purchase orders can be updated; this one is ${PO_STATUS[previous.status as PoStatus].label}.`,
        );
      }
      const supplierChanges = input.supplier_id !== undefined && input.supplier_id !== previous.partyId;
      const locationChanges = input.location_id !== undefined && input.location_id !== previous.locationId;
      if ((supplierChanges || locationChanges) && input.lines === undefined) {
        throw errors.validationFailed([{ param: "lines", code: "required", message: "is required when supplier_id or location_id changes." }]);
      }
      const context = await readContext(principal, input.supplier_id ?? previous.partyId!, input.location_id ?? previous.locationId!, {
        supplier: supplierChanges,
        location: locationChanges,
      });
      let lines: PoLine[];
      if (input.lines === undefined) {
        lines = tree.lines;
      } else {
        const kept = matchReplacementLines(tree.lines, input.lines, MAX_PO_LINES, (line) => line.lineType !== "discount");
        lines = withStoredDiscountLine(await buildLines(context, input.lines, kept), tree.lines);
      }
      const fields = headerFields(input);
      const { cleared, ...set } = fields;
      const merged = { ...previous, ...set } as DocumentItem;
      for (const attribute of cleared) delete (merged as Record<string, unknown>)[attribute];
      const priced = priceLines(lines, merged.discountPercent, merged.shippingFee);
      const customFields = input.custom_field_values === undefined ? undefined : customFieldWrite(input.custom_field_values, "purchase_order");
      let next = derive(
        {
          ...merged,
          ...priced.totals,
          customFieldValues: customFields ? customFields.values : previous.customFieldValues,
          revision: newRevision("po"),
          updatedAt: laterUpdatedAt(previous.updatedAt),
        },
        context,
        priced.lines,
      );
      if (!next.issueDate) next.issueDate = previous.issueDate;
      // Sent back as read: nothing to write (revision and updated_at stay).
      if (changesNothing(previous, next, tree.lines, priced.lines)) return result(principal, previous, tree.lines);
      // Paid already (a Not Sent order takes payments): the total stays at or above the amount paid.
      const totalParam = input.lines !== undefined ? "lines" : input.shipping_fee !== undefined ? "shipping_fee" : "discount_percent";
      next = withTotalCoveringPaid(next, totalParam, accountToday(context.account));
      const response = result(principal, next, priced.lines);
      const cancellation = await writeTransaction(
        (tx) => {
          addDocumentWrite(tx, { header: next, lines: priced.lines, previous, condition: (a, op) => op.eq!(a.status, "not_sent") });
          if (supplierChanges) {
            addDocumentActivity(tx, { accountId: principal.accountId, partyId: context.supplier.partyId }, { documents: 1 });
            tx.add("old supplier", tx.entities.party.patch({ accountId: principal.accountId, partyId: previous.partyId! }).add({ documentCount: -1 }).commit());
          }
          checkReferences(tx, principal.accountId, [
            ...(customFields?.references ?? []),
            { param: "location_id", kind: "location", id: context.location.locationId },
          ]);
        },
        { completion: withEtag(completion, next.revision), body: response.body },
      );
      if (!cancellation) return response;
      if (cancellation.failed(DOCUMENT_LABEL)) return RETRY; // changed meanwhile: read again (If-Match then decides)
      return mapReferenceFailures(cancellation);
    },
  );
}

// ---------------------------------------------------------------------------------------------
// Payments (architecture section 8)

const PAYMENTS: PaymentPolicy = {
  kind: "purchase_order",
  what: WHAT,
  revisionPrefix: "po",
  readPermission: "purchase_orders.list",
  writePermission: "purchase_orders.modify",
  deleteNotAllowedCode: "purchase_order_payment_delete_not_allowed",
  present: presentPayment,
};

const PAYMENT_OPERATIONS = paymentOperations(PAYMENTS);

/** A purchase order's payments, payment date newest first. */
export const listPurchaseOrderPayments = PAYMENT_OPERATIONS.list;

/** Records a payment or refund of a purchase order; 201 with the payment. */
export const createPurchaseOrderPayment = PAYMENT_OPERATIONS.record;

/** Deletes a payment of a purchase order. */
export const deletePurchaseOrderPayment = PAYMENT_OPERATIONS.remove;
