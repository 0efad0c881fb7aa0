import { CustomerChangedError } from "../../../core/failures.js";
import { randomUUID } from "node:crypto";
import { Decimal } from "decimal.js";
import { hasPermission, locationRestriction, type Principal } from "../../../auth/permissions.js";
import { mayReachLocation, requireReachableLocation } from "../../common/location-access.js";
import { errors, type ValidationDetail } from "../../../core/errors.js";
import type { IdempotencyCompletion } from "../../../core/idempotency.js";
import type { ListEnvelope, PageRequest } from "../../../core/pagination.js";
import { DOCUMENT_LABEL, addDocumentDelete, addDocumentWrite, type DocumentTree } from "../../../db/documents.js";
import { readLocation } from "../../../db/locations.js";
import { addDocumentActivity } from "../../../db/parties.js";
import { checkReferences, referenceDetail, referenceDetails, type Reference } from "../../../db/references.js";
import { RETRY, retrying } from "../../../db/retry.js";
import type { AccountItem, DocumentItem, LocationItem } from "../../../db/service.js";
import type { Cancellation, TransactionBuilder } from "../../../db/transactions.js";
import type { PackBody, ShipBody } from "../../../schemas/sales-documents.js";
import type { SalesOrderCreateBody, SalesOrderListQuery, SalesOrderUpdateBody } from "../../../schemas/sales-orders.js";
import { customFieldWrite, presentCustomFieldValues } from "../../common/custom-field-values.js";
import { amountDue, amountPaid } from "../payments.js";
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
  withEtag,
  documentLock,
  visibleDocument,
  statusIdFilter,
  withStoredDiscountLine,
  changesNothing,
} from "../documents.js";
import { listFulfillments, packDocument, shipFulfillment, type FulfillmentPolicy, type SalesTree } from "./fulfillments.js";
import { mergeStockChanges } from "../../inventory/ledger-plan.js";
import { addQuantities } from "../../inventory/math.js";
import { money } from "../../common/money.js";
import { etagOf, assertRevision, newRevision, parseIfMatch } from "../../common/revisions.js";
import {
  blankHeader,
  buildSalesLines,
  deriveSalesHeader,
  draftLineSpecs,
  draftRequestFields,
  insertSalesDocument,
  lineChanges,
  lineSpecsOf,
  withCurrentValues,
  percentOf,
  priceSalesLines,
  progressOf,
  readCustomer,
  remainingToPack,
  requireShippingCostPermission,
  salesHeaderFields,
  withAccountSnapshot,
  withPercents,
  withRowIds,
  type DraftOptions,
  type LineSpec,
  type SalesContext,
  type SalesDraft,
  type SalesLine,
} from "../sales-documents.js";
import { partyOf } from "../party-details.js";
import { commitWithStock } from "../../inventory/stock-holds.js";
import { MAX_SALES_LINES } from "../../../schemas/sales-documents.js";

/**
 * Sales orders: spec part 2, sections 2.4, 3.4 and 4.4; architecture sections 4 (status ids,
 * money, revisions) and 8 (update, delete, invoicing, packing, shipping, stock effects).
 *
 * Statuses: 29 Open -> 30 Closed once every line is fully invoiced (31 Cancelled exists; no
 * operation leads to it yet). An open order reserves each inventory line's uninvoiced quantity
 * at the line's stock row (`quantity_reserved` of the item), through the ledger in the order's
 * own write; invoicing moves the invoiced quantity from reserved to sold.
 * Update and delete: only open orders with no activity (nothing invoiced, packed or shipped),
 * else 409 `sales_order_update_not_allowed`. Visibility: `records.view_all`, else the orders
 * whose salesperson (assigned user) is the caller; location restrictions govern the order's
 * location on writes and packing (`location_restricted`).
 */

export const SO_STATUS = {
  open: { id: 29, label: "Open" },
  closed: { id: 30, label: "Closed" },
  cancelled: { id: 31, label: "Cancelled" },
} as const;
type SoStatus = keyof typeof SO_STATUS;

/** Invoices one order can have (each pack and ship refreshes them all in its own transaction). */
export const MAX_ORDER_INVOICES = 50;

const WHAT = "sales order";

export interface SalesOrderResult {
  body: Record<string, unknown>;
  etag: string;
}

// ---------------------------------------------------------------------------------------------
// Presentation

/** Whether anything happened to the order beyond its creation (invoices, packing, shipping). */
export const activityStarted = (header: DocumentItem, lines: readonly SalesLine[]): boolean =>
  (header.invoiceCount ?? 0) > 0 || lines.some((line) => line.quantityInvoiced > 0 || line.quantityPacked > 0 || line.quantityShipped > 0);

function editBlockReason(principal: Principal, header: DocumentItem, lines: readonly SalesLine[]) {
  if (!hasPermission(principal, "sales_orders.modify")) return "permission_denied" as const;
  if (header.status !== "open") return "sales_order_not_open" as const;
  if (activityStarted(header, lines)) return "sales_order_activity_started" as const;
  return null;
}

/**
 * Whether a location-restricted caller may pack the order: its location, or (without one) every
 * line left to pack, is theirs. (The location rule already hides orders elsewhere; this keeps
 * the reason exact should a visible order ever hold such a line.)
 */
function hasLocationAccess(principal: Principal, header: DocumentItem, lines: readonly SalesLine[], serviceItems: boolean): boolean {
  if (header.locationId) return mayReachLocation(principal, header.locationId);
  return lines.every((line) => remainingToPack(line, serviceItems) === 0 || !line.locationId || mayReachLocation(principal, line.locationId));
}

function packBlockReason(principal: Principal, header: DocumentItem, lines: readonly SalesLine[]) {
  const serviceItems = header.packingServiceItems ?? false;
  if (!hasPermission(principal, "sales_orders.modify")) return "permission_denied" as const;
  if (header.packingListsEnabled === false) return "packing_lists_disabled" as const;
  if (header.status !== "open") return "sales_order_not_open" as const;
  if (!hasLocationAccess(principal, header, lines, serviceItems)) return "location_restricted" as const;
  if (!lines.some((line) => remainingToPack(line, serviceItems) > 0)) return "nothing_remaining_to_pack" as const;
  return null;
}

function presentLine(principal: Principal, line: SalesLine, position: number, serviceItems: boolean) {
  const out: Record<string, unknown> = {
    id: line.id,
    object: "sales_order_line",
    item_id: orNull(line.itemId),
    item_variation_location_id: orNull(line.ivlId),
    name: line.name,
    description: orNull(line.description),
    quantity: line.quantity,
    quantity_invoiced: line.quantityInvoiced,
    quantity_packed: line.quantityPacked,
    quantity_shipped: line.quantityShipped,
    quantity_remaining_to_pack: remainingToPack(line, serviceItems),
    unit_id: orNull(line.unitId),
    unit_price: line.unitPrice,
    discount_percent: line.discountPercent,
    discounted_unit_price: line.discountedUnitPrice,
    tax_rate: line.taxRate,
    tax_2_rate: line.tax2Rate,
    subtotal: line.subtotal,
    position,
    line_type: line.lineType,
    unit_name: line.lineType === "discount" ? "discount" : orNull(line.unitName),
    sku: orNull(line.sku),
    variation_values: line.variationValues ?? {},
    variation_number: orNull(line.variationNumber),
    location_name: line.lineType === "inventory" ? orNull(line.locationName) : null,
    thumbnail_url: orNull(line.thumbnailUrl),
  };
  if (hasPermission(principal, "costs.view")) Object.assign(out, lineCosts(line));
  return out;
}

/** `unit_cost` and `total_cost` of a line (null on discount lines). */
export function lineCosts(line: SalesLine): { unit_cost: string | null; total_cost: string | null } {
  if (line.lineType === "discount" || line.unitCost === null) return { unit_cost: null, total_cost: null };
  return { unit_cost: line.unitCost, total_cost: money(new Decimal(line.unitCost).times(line.quantity)) };
}

export const sourceEstimateOf = (header: DocumentItem) =>
  header.sourceEstimateId ? { id: header.sourceEstimateId, estimate_number: header.sourceEstimateNumber ?? 0 } : null;

/** The order as the API shows it: list entries without the detail-only fields, details with lines. */
export function presentSalesOrder(principal: Principal, header: DocumentItem, lines?: readonly SalesLine[]): Record<string, unknown> {
  const status = SO_STATUS[header.status as SoStatus];
  const out: Record<string, unknown> = {
    id: header.documentId,
    object: "sales_order",
    sales_order_number: header.number,
    name: orNull(header.name),
    customer_id: header.partyId,
    customer_name: orNull(header.partyName),
    salesperson_id: header.assignedUserId,
    location_id: orNull(header.locationId),
    status_id: status.id,
    status: status.label,
    issue_date: orNull(header.issueDate),
    expiry_date: orNull(header.expiryDate),
    purchase_order_number: orNull(header.purchaseOrderNumber),
    attention: orNull(header.attention),
    shipping_address: orNull(header.shippingAddress),
    public_note: orNull(header.publicNote),
    packing_list_note: orNull(header.packingListNote),
    payment_terms: orNull(header.paymentTerms),
    drop_shipped: header.dropShipped ?? false,
    drop_ship_customer_id: orNull(header.dropShipCustomerId),
    drop_ship_address: orNull(header.dropShipAddress),
    subtotal: header.subtotal,
    shipping_fee: header.shippingFee,
    tax: header.tax,
    tax_2: header.tax2,
    total: header.total,
    amount_paid: amountPaid(header),
    amount_due: amountDue(header),
  };
  if (hasPermission(principal, "costs.view")) out.shipping_cost = header.shippingCost;
  Object.assign(out, {
    invoiced_percent: orNull(header.invoicedPercent),
    paid_percent: percentOf(amountPaid(header), header.total),
    packed_percent: orNull(header.packedPercent),
    shipped_percent: orNull(header.shippedPercent),
    invoice_count: header.invoiceCount ?? 0,
    source_estimate: sourceEstimateOf(header),
  });
  if (lines) {
    const edit = editBlockReason(principal, header, lines);
    const pack = packBlockReason(principal, header, lines);
    Object.assign(out, {
      party: partyOf(header),
      discount_percent: header.discountPercent,
      pre_discount_total: header.preDiscountTotal,
      discount_total: header.discountTotal,
      tax_label: orNull(header.taxLabel),
      tax_2_label: orNull(header.tax2Label),
      can_edit: edit === null,
      edit_block_reason: edit,
      can_pack: pack === null,
      pack_block_reason: pack,
    });
  }
  Object.assign(out, {
    revision: header.revision,
    custom_field_values: presentCustomFieldValues(header.customFieldValues),
    created_at: header.createdAt,
    updated_at: header.updatedAt,
  });
  if (lines) out.lines = lines.map((line, position) => presentLine(principal, line, position, header.packingServiceItems ?? false));
  return out;
}

const result = (principal: Principal, header: DocumentItem, lines: readonly SalesLine[]): SalesOrderResult => ({
  body: presentSalesOrder(principal, header, lines),
  etag: etagOf(header.revision),
});

// ---------------------------------------------------------------------------------------------
// Reads

/** The order if the caller may see it (account, kind, salesperson boundary), else 404. */
export const visibleSalesOrder = (principal: Principal, id: string) => visibleDocument<SalesTree>(principal, "sales_order", id, WHAT);

const requireRead = (principal: Principal) => requireDocumentPermission(principal, "sales_orders.list", "reading sales orders");
const requireModify = (principal: Principal) => requireDocumentPermission(principal, "sales_orders.modify", "changing sales orders");

/** One order with its lines in stored order (authentication plus ONE Query). */
export async function getSalesOrder(principal: Principal, id: string): Promise<SalesOrderResult> {
  requireRead(principal);
  // The account in parallel with the document: tax labels and packing settings are current values.
  const [tree, account] = await Promise.all([visibleSalesOrder(principal, id), accountSettings(principal.accountId)]);
  const current = await withCurrentValues(tree.header, tree.lines, account, false);
  return result(principal, current.header, current.lines);
}

/** Orders newest number first, with every filter of spec 4.4 (and `ids`). */
export async function listSalesOrders(
  principal: Principal,
  url: string,
  page: PageRequest,
  query: SalesOrderListQuery,
): Promise<ListEnvelope<Record<string, unknown>>> {
  requireRead(principal);
  const needle = query.q?.trim().toLowerCase();
  return listDocuments({
    principal,
    kind: "sales_order",
    url,
    page,
    ids: query.ids,
    filter: {
      statusId: statusIdFilter(query.status_id, SO_STATUS),
      partyId: query.customer_id,
      locationId: query.location_id,
      assignedUserId: query.assigned_user_id,
      dates: [
        { attribute: "issueDate", from: query.issue_date_from, to: query.issue_date_to },
        { attribute: "expiryDate", from: query.expiry_date_from, to: query.expiry_date_to },
      ],
      text: needle ? { needle, number: /^\d{1,9}$/.test(needle) ? Number(needle) : undefined } : undefined,
    },
    present: (headers) => headers.map((header) => presentSalesOrder(principal, header)),
  });
}

// ---------------------------------------------------------------------------------------------
// Writes

const HEADER_MAP: readonly [string, keyof DocumentItem][] = [
  ["name", "name"],
  ["issue_date", "issueDate"],
  ["expiry_date", "expiryDate"],
  ["purchase_order_number", "purchaseOrderNumber"],
  ["attention", "attention"],
  ["shipping_address", "shippingAddress"],
  ["public_note", "publicNote"],
  ["packing_list_note", "packingListNote"],
  ["payment_terms", "paymentTerms"],
];

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
  const restriction = locationRestriction(principal);
  const wanted = locationId ?? (options.defaultLocation ? (restriction ?? undefined) : undefined);
  const [account, customer, location] = await Promise.all([
    accountSettings(principal.accountId),
    readCustomer(principal, customerId, { allowProspect: options.allowProspect, unchanged: options.customerUnchanged }),
    wanted ? readLocation(principal.accountId, wanted) : Promise.resolve(undefined),
  ]);
  if (wanted && !options.locationUnchanged) {
    if (!location?.active) throw errors.validationFailed([referenceDetail("location_id", "is not an active location of this account.")]);
    requireReachableLocation(principal, "location_id", wanted);
  }
  return { principal, account, customer, location: location as LocationItem | undefined };
}

function assertDates(header: DocumentItem): void {
  if (header.expiryDate && header.issueDate && header.expiryDate < header.issueDate) {
    throw errors.validationFailed([{ param: "expiry_date", code: "before_issue_date", message: "must not be before issue_date." }]);
  }
}

/** The header of lines and context: totals, percentages, snapshots. */
function deriveOrder(header: DocumentItem, context: SalesContext, lines: readonly SalesLine[]): { header: DocumentItem; lines: SalesLine[] } {
  const priced = priceSalesLines(lines, header.discountPercent, header.shippingFee);
  let next: DocumentItem = { ...header, ...priced.totals };
  if (context.location) {
    next.locationId = context.location.locationId;
    next.locationName = context.location.name;
  } else {
    delete next.locationId;
    delete next.locationName;
  }
  next = withPercents(next, progressOf(priced.lines, context.account.packingServiceItems));
  next = deriveSalesHeader(next, context, priced.lines, [next.customNumber, next.name, next.purchaseOrderNumber]);
  return { header: next, lines: priced.lines };
}

/** Reservation changes of lines (each line's uninvoiced quantity; `sign` -1 releases them). */
const reservations = (lines: readonly SalesLine[], sign: 1 | -1) =>
  lineChanges(lines, "reserve", (line) => sign * Math.max(0, addQuantities(line.quantity, -line.quantityInvoiced))).changes;

function mapCancellation(cancellation: Cancellation): never {
  const details = referenceDetails(cancellation);
  if (details.length > 0) throw errors.validationFailed(details);
  throw errors.internal(new Error(`sales order write failed: ${cancellation.labels.join(", ")}`));
}

interface CreateRequest {
  customerId: string;
  fields: Record<string, unknown>;
  specs: (context: SalesContext) => LineSpec[];
  salespersonId?: string;
  sourceEstimate?: { id: string; number: number };
}

async function createOrder(principal: Principal, request: CreateRequest, options: DraftOptions) {
  return retrying("create sales order", async () => {
    const context = await readOrderContext(principal, request.customerId, request.fields.location_id as string | undefined, {
      ...options,
      defaultLocation: true,
    });
    const built = await buildSalesLines(context, request.specs(context));
    const { cleared: _cleared, ...set } = salesHeaderFields(request.fields, HEADER_MAP);
    const customFields =
      request.fields.custom_field_values === undefined ? undefined : customFieldWrite(request.fields.custom_field_values as never, "sales_order");
    const documentId = randomUUID();
    const base: DocumentItem = {
      ...blankHeader({
        accountId: principal.accountId,
        documentId,
        kind: "sales_order",
        revision: newRevision("so"),
        status: "open",
        statusId: SO_STATUS.open.id,
        assignedUserId: request.salespersonId ?? principal.userId,
      }),
      issueDate: set.issueDate ?? localToday(principal, context.account),
      ...set,
      paymentTerms: set.paymentTerms ?? context.account.paymentTerms,
      customFieldValues: customFields?.values,
      invoiceCount: 0,
      ...(request.sourceEstimate ? { sourceEstimateId: request.sourceEstimate.id, sourceEstimateNumber: request.sourceEstimate.number } : {}),
    };
    if (!base.paymentTerms) delete base.paymentTerms;
    assertDates(base);
    const { header, lines } = deriveOrder(base, context, built);
    const references: Reference[] = [...(customFields?.references ?? [])];
    if (context.location) references.push({ param: "location_id", kind: "location", id: context.location.locationId });
    try {
      return await insertSalesDocument({
        principal,
        kind: "sales_order",
        header,
        lines,
        changes: reservations(lines, 1),
        source: { sourceType: "sales_order", sourceId: documentId, userId: principal.userId, reason: "Sales order created" },
        customer: context.customer,
        activity: {},
        references,
        completion: options.completion,
        present: (h, l) => presentSalesOrder(principal, h, l),
        extra: options.extra,
        customerActivity: options.customerActivity,
        ownerCounts: options.ownerCounts,
      });
    } catch (error) {
      if (error instanceof CustomerChangedError) return RETRY;
      throw error;
    }
  });
}

/** Creates an open sales order numbered from the account's sequence (spec 4.4 create). */
export async function createSalesOrder(
  principal: Principal,
  input: SalesOrderCreateBody,
  completion: IdempotencyCompletion | undefined,
): Promise<SalesOrderResult> {
  requireModify(principal);
  requireShippingCostPermission(principal, input);
  const written = await createOrder(
    principal,
    { customerId: input.customer_id, fields: input, specs: () => lineSpecsOf(principal, input.lines, [], "ignore") },
    { completion },
  );
  if (!written.ok) mapCancellation(written.cancellation);
  return { body: written.body, etag: etagOf(written.header.revision) };
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
export async function createSalesOrderFromDraft(
  principal: Principal,
  draft: SalesDraft,
  options: DraftOptions = {},
): Promise<{ ok: true; result: SalesOrderResult; header: DocumentItem } | { ok: false; cancellation: Cancellation }> {
  requireModify(principal);
  const written = await createOrder(
    principal,
    {
      customerId: draft.customerId,
      fields: draftRequestFields(draft),
      specs: () => draftLineSpecs(draft.lines),
      salespersonId: draft.salespersonId,
      sourceEstimate: draft.sourceEstimate,
    },
    options,
  );
  if (!written.ok) return written;
  return { ok: true, result: { body: written.body, etag: etagOf(written.header.revision) }, header: written.header };
}

/** 409 `sales_order_update_not_allowed` unless the order is open with no activity (architecture section 8). */
function assertEditable(tree: SalesTree, action: string): void {
  const { header, lines } = tree;
  if (header.status !== "open") {
    throw errors.stateConflict(
      "sales_order_update_not_allowed",
      `Only open sales orders can be ${action}; this one is ${SO_STATUS[header.status as SoStatus].label}.`,
    );
  }
  if (activityStarted(header, lines)) {
    throw errors.stateConflict("sales_order_update_not_allowed", `This sales order has invoices, packed or shipped quantities and can no longer be ${action}.`);
  }
}

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
  requireModify(principal);
  requireShippingCostPermission(principal, input);
  const ifMatch = parseIfMatch(ifMatchHeader);
  return retrying(
    "update sales order",
    async () => {
      const tree = await visibleSalesOrder(principal, id);
      const previous = tree.header;
      assertRevision(ifMatch, previous.revision);
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
      let lines = tree.lines;
      if (input.lines !== undefined) {
        const kept = matchReplacementLines(tree.lines, input.lines, MAX_SALES_LINES, (line) => line.lineType !== "discount");
        lines = withStoredDiscountLine(await buildSalesLines(context, lineSpecsOf(principal, input.lines, kept, "ignore")), tree.lines);
      }
      const { cleared, ...set } = salesHeaderFields(input, HEADER_MAP);
      const merged = { ...previous, ...set } as DocumentItem;
      for (const attribute of cleared) delete (merged as Record<string, unknown>)[attribute];
      if (!merged.issueDate) merged.issueDate = previous.issueDate;
      const customFields = input.custom_field_values === undefined ? undefined : customFieldWrite(input.custom_field_values, "sales_order");
      merged.customFieldValues = customFields ? customFields.values : previous.customFieldValues;
      merged.revision = newRevision("so");
      merged.updatedAt = nextTimestamp(previous.updatedAt);
      assertDates(merged);
      const { header: next, lines: priced } = deriveOrder(merged, context, lines);
      // Sent back as read: nothing to write (revision and updated_at stay).
      if (changesNothing(previous, next, tree.lines, priced)) return result(principal, previous, tree.lines);
      const changes = mergeStockChanges([...reservations(tree.lines, -1), ...reservations(priced, 1)]);
      const references: Reference[] = [...(customFields?.references ?? [])];
      if (context.location) references.push({ param: "location_id", kind: "location", id: context.location.locationId });
      let written: SalesOrderResult | undefined;
      const { cancellation } = await commitWithStock({
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
          written = result(principal, next, withRowIds(priced, rowIdOf));
          return { completion: withEtag(completion, next.revision), body: written.body };
        },
      });
      if (!cancellation) return written!;
      if (cancellation.failed(DOCUMENT_LABEL) || cancellation.failedUnder("party:").length > 0 || cancellation.failed("old customer")) return RETRY;
      return mapCancellation(cancellation);
    },
    undefined,
    [documentLock(principal.accountId, id)],
  );
}

/**
 * Deletes an open order with no activity (architecture section 8): its reservations are
 * released, the counts and the customer's document count move, in one write.
 */
export async function deleteSalesOrder(
  principal: Principal,
  id: string,
  completion: IdempotencyCompletion | undefined,
): Promise<{ id: string; object: "sales_order"; deleted: true }> {
  requireModify(principal);
  const resource = { id, object: "sales_order" as const, deleted: true as const };
  return retrying(
    "delete sales order",
    async () => {
      const tree = await visibleSalesOrder(principal, id);
      assertEditable(tree, "deleted");
      const header = tree.header;
      const { cancellation } = await commitWithStock({
        accountId: principal.accountId,
        source: { sourceType: "sales_order", sourceId: id, userId: principal.userId, reason: `Sales order ${header.number} deleted` },
        changes: mergeStockChanges(reservations(tree.lines, -1)),
        document: (tx) => {
          addDocumentDelete(tx, tree as unknown as DocumentTree);
          addKindCountDecrement(tx, tree.header);
          addAssigneeCount(tx, header, -1);
          tx.add("customer", tx.entities.party.patch({ accountId: principal.accountId, partyId: header.partyId! }).add({ documentCount: -1 }).commit());
        },
        outcome: () => ({ completion, body: resource }),
      });
      if (!cancellation) return resource;
      if (cancellation.failed(DOCUMENT_LABEL)) return RETRY;
      throw errors.internal(new Error(`sales order delete failed: ${cancellation.labels.join(", ")}`));
    },
    undefined,
    [documentLock(principal.accountId, id)],
  );
}

// ---------------------------------------------------------------------------------------------
// Packing and shipping (lib/domain/documents/sales-orders/fulfillments.ts)

/**
 * Refreshes the sales-order progress every linked invoice shows (its packed and shipped
 * percentages, and so its lines' packed and shipped quantities) in the order's own transaction.
 * Each invoice gets a new revision, so an invoice write that read it before fails its condition
 * and reads again (never overwriting the progress with an older value).
 */
export function addLinkedInvoiceProgress(tx: TransactionBuilder, order: DocumentItem): void {
  for (const invoiceId of order.linkedInvoiceIds ?? []) {
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

/** The order after a fulfilment write: percentages, settings snapshot, a new revision. */
function nextAfterFulfilment(previous: DocumentItem, lines: readonly SalesLine[], account: AccountItem | undefined): DocumentItem {
  const serviceItems = account?.packingServiceItems ?? previous.packingServiceItems ?? false;
  const next = withPercents({ ...previous, revision: newRevision("so"), updatedAt: nextTimestamp(previous.updatedAt) }, progressOf(lines, serviceItems));
  return account ? withAccountSnapshot(next, account) : next;
}

export const SALES_ORDER_FULFILLMENTS: FulfillmentPolicy = {
  kind: "sales_order",
  what: WHAT,
  permission: "sales_orders.modify",
  read: visibleSalesOrder,
  assertPackable(principal, tree, account) {
    if (!account.packingListsEnabled) throw errors.stateConflict("sales_order_pack_not_allowed", "Packing lists are disabled for this account.");
    if (tree.header.status !== "open") {
      throw errors.stateConflict(
        "sales_order_pack_not_allowed",
        `Only open sales orders can be packed; this one is ${SO_STATUS[tree.header.status as SoStatus].label}.`,
      );
    }
    if (!hasLocationAccess(principal, tree.header, tree.lines, account.packingServiceItems)) {
      throw errors.permissionDenied("Packing this sales order requires access to its location.");
    }
  },
  invalid: (details: ValidationDetail[]) => errors.validationFailed(details),
  alreadyPacked: (param) => errors.stateConflict("sales_order_line_already_packed", `${param}: the line is already fully packed.`, param),
  nothingLeft: () => errors.stateConflict("sales_order_pack_not_allowed", "Nothing is left to pack on this sales order."),
  next: nextAfterFulfilment,
  related: addLinkedInvoiceProgress,
};

export const listSalesOrderFulfillments = (principal: Principal, id: string, url: string, page: PageRequest) =>
  listFulfillments(principal, SALES_ORDER_FULFILLMENTS, id, url, page, "sales_orders.list");

/** Packs quantities of an open order (spec 4.4 pack); 201 with the new packing list. */
export async function packSalesOrder(principal: Principal, id: string, body: PackBody, completion: IdempotencyCompletion | undefined) {
  requireRead(principal);
  return packDocument(principal, SALES_ORDER_FULFILLMENTS, id, body, completion);
}

/** Marks a packing list of an order shipped (architecture section 8). */
export async function shipSalesOrderFulfillment(
  principal: Principal,
  id: string,
  fulfillmentId: string,
  body: ShipBody,
  completion: IdempotencyCompletion | undefined,
) {
  requireRead(principal);
  return shipFulfillment(principal, SALES_ORDER_FULFILLMENTS, id, fulfillmentId, body, completion);
}
