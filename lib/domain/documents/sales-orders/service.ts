import { mergeStockChanges } from "../../inventory/stock-changes.js";
import { changesNothing, statusIdFilter, withEtag } from "../rules.js";
import { referenceDetail } from "../../../core/errors.js";
import { defaultLocationOf, type Principal } from "../../../auth/permissions.js";
import { errors, type ValidationDetail } from "../../../core/errors.js";
import type { IdempotencyCompletion } from "../../../core/idempotency.js";
import { addDocumentWrite } from "../../../db/documents.js";
import { readLocation } from "../../../db/locations.js";
import { addDocumentActivity } from "../../../db/parties.js";
import { checkReferences, type Reference } from "../../../db/references.js";
import type { DocumentItem, LocationItem } from "../../../db/service.js";
import type { TransactionBuilder } from "../../../db/transactions.js";
import type { SalesOrderCreateBody, SalesOrderListQuery, SalesOrderUpdateBody } from "../../../schemas/sales-orders.js";
import { requireReachableLocation } from "../../common/location-access.js";
import { newRevision } from "../../common/revisions.js";
import { accountSettings } from "../documents.js";
import type { DraftOptions, SalesDraft } from "../sales/drafts.js";
import { fulfillmentOperations, type FulfillmentPolicy } from "../sales/fulfillments.js";
import { mergeSalesHeader, requireShippingCostPermission } from "../sales/header.js";
import { lineSpecsOf, withRowIds, type SalesContext } from "../sales/model.js";
import { afterFulfilment } from "../sales/progress.js";
import { readCustomer, replaceSalesLines } from "../sales/reads.js";
import {
  createdResult,
  createSalesDocument,
  deleteSalesDocument,
  createFromDraft,
  type DraftCreated,
  requireSalesModify,
  salesReadOperations,
  commitSalesStock,
  updateCancellation,
  type SalesCreatePolicy,
  updateSalesDocument,
} from "../sales/service.js";
import {
  SALES_ORDER_KIND,
  SO_HEADER_MAP,
  SO_STATUS,
  assertDates,
  assertEditable,
  assertOrderPackable,
  deriveOrder,
  hasLocationAccess,
  liveInvoiceIds,
  reservations,
  salesOrderResult,
  type SalesOrderResult,
} from "./model.js";

/**
 * Sales orders: reads and writes (spec part 2, sections 2.4, 3.4 and 4.4; architecture section
 * 8); statuses, rules and presentation are in `model.ts`, invoicing in `invoicing.ts`.
 */

// ---------------------------------------------------------------------------------------------
// Reads

const SALES_ORDER_READS = salesReadOperations<SalesOrderListQuery>(SALES_ORDER_KIND, (query) => ({
  statusId: statusIdFilter(query.status_id, SO_STATUS),
  partyId: query.customer_id,
  locationId: query.location_id,
  assignedUserId: query.assigned_user_id,
  dates: [
    { attribute: "issueDate", from: query.issue_date_from, to: query.issue_date_to },
    { attribute: "expiryDate", from: query.expiry_date_from, to: query.expiry_date_to },
  ],
}));

/** The order if the caller may see it (account, kind, salesperson boundary), else 404. */
export const visibleSalesOrder = SALES_ORDER_READS.visible;

/** One order with its lines in stored order (authentication plus ONE Query); tax labels and packing settings are current values. */
export const getSalesOrder = SALES_ORDER_READS.get;

/** Orders newest number first, with every filter of spec 4.4 (and `ids`). */
export const listSalesOrders = SALES_ORDER_READS.list;

// ---------------------------------------------------------------------------------------------
// Writes

/**
 * Reads what a write names: the account, the customer (visible, active) and the order's location
 * (active; a location-restricted user's own, which is also the default for them).
 */
async function readOrderContext(
  principal: Principal,
  customerId: string,
  locationId: string | undefined,
  options: { allowProspect?: boolean; defaultLocation?: boolean; customerUnchanged?: boolean; locationUnchanged?: boolean } = {},
): Promise<SalesContext> {
  // The user's location is a default only (not access the answer depends on): the location then reached is recorded.
  const wanted = locationId ?? (options.defaultLocation ? (defaultLocationOf(principal) ?? undefined) : undefined);
  const [account, customer, location] = await Promise.all([
    accountSettings(principal.accountId),
    readCustomer(principal, customerId, { allowProspect: options.allowProspect, unchanged: options.customerUnchanged }),
    wanted ? readLocation(principal.accountId, wanted) : Promise.resolve(undefined),
  ]);
  if (wanted && !options.locationUnchanged) {
    if (!location?.active) throw errors.validationFailed([referenceDetail("location_id", "is not an active location of this account.")]);
    requireReachableLocation(principal, "location_id", wanted);
  }
  return { principal, account, customer, location: location as LocationItem | undefined, takesLocation: true };
}

/** The order's location as a reference its write checks. */
const locationReference = (context: SalesContext): Reference[] =>
  context.location ? [{ param: "location_id", kind: "location", id: context.location.locationId }] : [];

const SALES_ORDER_CREATE: SalesCreatePolicy = {
  kind: SALES_ORDER_KIND,
  status: { status: "open", statusId: SO_STATUS.open.id },
  initial: { invoiceCount: 0 },
  map: SO_HEADER_MAP,
  context: (principal, request, options) =>
    readOrderContext(principal, request.customerId, request.fields.location_id as string | undefined, { ...options, defaultLocation: true }),
  check: assertDates,
  derive: deriveOrder,
  changes: (_header, lines) => reservations(lines, 1),
  activity: () => ({}),
  references: locationReference,
};

/** Creates an open sales order numbered from the account's sequence (spec 4.4 create). */
export async function createSalesOrder(
  principal: Principal,
  input: SalesOrderCreateBody,
  completion: IdempotencyCompletion | undefined,
): Promise<SalesOrderResult> {
  requireSalesModify(principal, SALES_ORDER_KIND);
  requireShippingCostPermission(principal, input);
  const request = { customerId: input.customer_id, fields: input, specs: () => lineSpecsOf(principal, input.lines, [], "ignore") };
  return createdResult(await createSalesDocument(principal, SALES_ORDER_CREATE, request, { completion }), SALES_ORDER_KIND);
}

/**
 * Builds a complete open sales order from a draft (an estimate converted into a sales order):
 * the same defaults, snapshots, reservations, counters and customer figures as the API create,
 * written in ONE transaction together with the caller's `options.extra` items (for example the
 * estimate's close, conditioned on its revision). Lines keep the draft's names, descriptions,
 * prices, discounts and tax rates. Returns the new order (body and ETag), or the cancellation
 * when only the caller's own items failed their conditions (nothing was written). Throws the
 * API's errors (422 for an invalid customer, item or row; 403 without `sales_orders.modify`).
 */
export const createSalesOrderFromDraft = (principal: Principal, draft: SalesDraft, options: DraftOptions = {}): Promise<DraftCreated> =>
  createFromDraft(principal, SALES_ORDER_CREATE, draft, options);

/**
 * Updates an open order with no activity (architecture section 8): partial; `lines` is the
 * complete desired list; changing the customer or the location needs `lines`; `If-Match`
 * makes it conditional. Reservations move by the difference in the same write.
 */
export async function updateSalesOrder(
  principal: Principal,
  id: string,
  input: SalesOrderUpdateBody,
  ifMatchHeader: string | undefined,
  completion: IdempotencyCompletion | undefined,
): Promise<SalesOrderResult> {
  return updateSalesDocument(principal, SALES_ORDER_KIND, id, input, ifMatchHeader, async (tree) => {
    const previous = tree.header;
    assertEditable(tree, "updated");
    const customerChanges = input.customer_id !== undefined && input.customer_id !== previous.partyId;
    // null: no location (as GET shows an order that has none).
    const locationId = input.location_id === undefined ? previous.locationId : (input.location_id ?? undefined);
    const locationChanges = locationId !== previous.locationId;
    if ((customerChanges || locationChanges) && input.lines === undefined) {
      throw errors.validationFailed([{ param: "lines", code: "required", message: "is required when customer_id or location_id changes." }]);
    }
    const context = await readOrderContext(principal, input.customer_id ?? previous.partyId!, locationId, {
      customerUnchanged: !customerChanges,
      locationUnchanged: !locationChanges,
    });
    const lines = input.lines === undefined ? tree.lines : await replaceSalesLines(context, tree.lines, input.lines, "ignore");
    const { merged, references: fieldReferences } = mergeSalesHeader(previous, input, SALES_ORDER_KIND, SO_HEADER_MAP);
    assertDates(merged);
    const { header: next, lines: priced } = deriveOrder(merged, context, lines);
    // Sent back as read: nothing to write (revision and updated_at stay).
    if (changesNothing(previous, next, tree.lines, priced)) return salesOrderResult(principal, previous, tree.lines);
    const changes = mergeStockChanges([...reservations(tree.lines, -1), ...reservations(priced, 1)]);
    const references: Reference[] = [...(fieldReferences ?? []), ...locationReference(context)];
    let written: SalesOrderResult | undefined;
    // Planned from `previous`: a parallel invoice that took the reservations meanwhile makes this read again.
    const { cancellation } = await commitSalesStock(
      {
        accountId: principal.accountId,
        source: { sourceType: "sales_order", sourceId: id, userId: principal.userId, reason: `Sales order ${previous.number} updated` },
        changes,
        document: (tx, rowIdOf) => {
          addDocumentWrite(tx, { header: next, lines: withRowIds(priced, rowIdOf), previous, condition: (a, op) => op.eq!(a.status, "open") });
          if (customerChanges) {
            addDocumentActivity(tx, { accountId: principal.accountId, partyId: context.customer.partyId }, { documents: 1 });
            tx.add("old customer", tx.entities.party.patch({ accountId: principal.accountId, partyId: previous.partyId! }).add({ documentCount: -1 }).commit());
          }
          checkReferences(tx, principal.accountId, references);
        },
        outcome: (rowIdOf) => {
          written = salesOrderResult(principal, next, withRowIds(priced, rowIdOf));
          return { completion: withEtag(completion, next.revision), body: written.body };
        },
      },
      priced,
      { accountId: principal.accountId, documentId: id, revision: previous.revision },
    );
    if (!cancellation) return written!;
    return updateCancellation(cancellation, SALES_ORDER_KIND);
  });
}

/**
 * Deletes an open order with no activity (architecture section 8): its reservations are
 * released, the counts and the customer's document count move, in one write.
 */
export const deleteSalesOrder = (principal: Principal, id: string, ifMatchHeader: string | undefined, completion: IdempotencyCompletion | undefined) =>
  deleteSalesDocument(principal, SALES_ORDER_KIND, id, ifMatchHeader, completion, (tree) => {
    assertEditable(tree, "deleted");
    return { changes: mergeStockChanges(reservations(tree.lines, -1)), customer: { documents: -1 } };
  });

// ---------------------------------------------------------------------------------------------
// Packing and shipping (lib/domain/documents/sales/fulfillments.ts)

/**
 * Refreshes the sales-order progress every linked invoice not cancelled shows (its packed and shipped
 * percentages, and so its lines' packed and shipped quantities) in the order's own transaction.
 * Each invoice gets a new revision, so an invoice write that read it before fails its condition
 * and reads again (never overwriting the progress with an older value).
 */
export function addLinkedInvoiceProgress(tx: TransactionBuilder, order: DocumentItem): void {
  for (const invoiceId of liveInvoiceIds(order)) {
    let update = tx.entities.document
      .patch({ accountId: order.accountId, documentId: invoiceId })
      .set({ revision: newRevision("inv"), updatedAt: order.updatedAt });
    const set: Partial<DocumentItem> = {};
    const remove: ("packedPercent" | "shippedPercent")[] = [];
    for (const key of ["packedPercent", "shippedPercent"] as const) {
      if (order[key] === undefined) remove.push(key);
      else set[key] = order[key];
    }
    update = update.set(set);
    tx.add("linked invoice", (remove.length > 0 ? update.remove(remove) : update).commit());
  }
}

export const SALES_ORDER_FULFILLMENTS: FulfillmentPolicy = {
  kind: "sales_order",
  what: SALES_ORDER_KIND.what,
  permission: "sales_orders.modify",
  read: visibleSalesOrder,
  assertPackable(principal, tree, account) {
    assertOrderPackable(tree.header, account.packingListsEnabled);
    if (!hasLocationAccess(principal, tree.header, tree.lines, account.packingServiceItems)) {
      throw errors.permissionDenied("Packing this sales order requires access to its location.");
    }
  },
  invalid: (details: ValidationDetail[]) => errors.validationFailed(details),
  alreadyPacked: (param) => errors.stateConflict("sales_order_line_already_packed", `${param}: the line is already fully packed.`, param),
  nothingLeft: () => errors.stateConflict("sales_order_pack_not_allowed", "Nothing is left to pack on this sales order."),
  next: (previous, lines, account) => afterFulfilment("sales_order", previous, lines, account),
  related: addLinkedInvoiceProgress,
};

const SALES_ORDER_FULFILLMENT_OPERATIONS = fulfillmentOperations(SALES_ORDER_KIND, SALES_ORDER_FULFILLMENTS);

/** The packing lists of an order, number newest first. */
export const listSalesOrderFulfillments = SALES_ORDER_FULFILLMENT_OPERATIONS.list;

/** Packs quantities of an open order (spec 4.4 pack); 201 with the new packing list. */
export const packSalesOrder = SALES_ORDER_FULFILLMENT_OPERATIONS.pack;

/** Marks a packing list of an order shipped (architecture section 8). */
export const shipSalesOrderFulfillment = SALES_ORDER_FULFILLMENT_OPERATIONS.ship;
