import { StockRuleError } from "../../../core/failures.js";
import { randomUUID } from "node:crypto";
import { Decimal } from "decimal.js";
import { hasPermission, type Principal } from "../../../auth/permissions.js";
import { errors, type ValidationDetail } from "../../../core/errors.js";
import type { IdempotencyCompletion } from "../../../core/idempotency.js";
import type { ListEnvelope, PageRequest } from "../../../core/pagination.js";
import { DOCUMENT_LABEL, addDocumentWrite, numberKeyOf, type DocumentTree, type StoredLine } from "../../../db/documents.js";
import { readLocation } from "../../../db/locations.js";
import { addDocumentActivity, readParty } from "../../../db/parties.js";
import { checkReferences, referenceDetail, referenceDetails, type Reference } from "../../../db/references.js";
import { RETRY, retrying } from "../../../db/retry.js";
import { allocateNumber } from "../../../db/sequences.js";
import type { AccountItem, DocumentItem, DocumentPaymentItem, LocationItem, PartyItem } from "../../../db/service.js";
import type { Cancellation } from "../../../db/transactions.js";
import { writeTransaction } from "../../../db/transactions.js";
import type {
  PurchaseOrderCreateBody,
  PurchaseOrderLineBody,
  PurchaseOrderListQuery,
  PurchaseOrderReceiveBody,
  PurchaseOrderUpdateBody,
} from "../../../schemas/purchase-orders.js";
import type { PaymentBody } from "../../../schemas/documents.js";
import { customFieldWrite, presentCustomFieldValues } from "../../common/custom-field-values.js";
import { computeTotals } from "../totals.js";
import { inventoryLineName, defaultUnitCost, resolveLineItems, skuOf, type ResolvedLineItem } from "../lines.js";
import { mayReachLocation, outsideLocationDetail } from "../../common/location-access.js";
import { amountDue, amountPaid, deletePayment, listPayments, recordPayment, type PaymentPolicy } from "../payments.js";
import {
  accountSettings,
  accountToday,
  addAssigneeCount,
  listDocuments,
  localToday,
  matchReplacementLines,
  nextTimestamp,
  orNull,
  requireDocumentPermission,
  withEtag,
  documentLock,
  visibleDocument,
  withStoredDiscountLine,
  changesNothing,
} from "../documents.js";
import type { StockChange } from "../../inventory/ledger-plan.js";
import { addQuantities } from "../../inventory/math.js";
import { money, rate } from "../../common/money.js";
import { partyDetailsOf, partyOf } from "../party-details.js";
import { assertRevision, etagOf, newRevision, parseIfMatch } from "../../common/revisions.js";
import { commitWithStock, type RowIdOf } from "../../inventory/stock-holds.js";
import { MAX_PO_LINES } from "../../../schemas/purchase-orders.js";
import { withArticle } from "../../../core/text.js";

/**
 * Purchase orders: spec part 2, sections 2.1, 3.1 and 4.1; architecture sections 4 (status ids,
 * money, revisions) and 8 (payments, stock effects).
 *
 * Statuses: 21 Not Sent -> (send) 22 Sent -> (receive) 23 Partially Received -> 24 Received.
 * Stock: sending adds each inventory line's unreceived quantity to `incoming` at the order's
 * location; receiving moves it from `incoming` to on hand (and into the item's moving average
 * cost), all through the ledger, in the order's own write.
 */

const STATUS = {
  not_sent: { id: 21, label: "Not Sent" },
  sent: { id: 22, label: "Sent" },
  partially_received: { id: 23, label: "Partially Received" },
  received: { id: 24, label: "Received" },
} as const;
type PoStatus = keyof typeof STATUS;

/** A stored purchase-order line (`lib/db/documents.ts` packs them into pages). */
export interface PoLine extends StoredLine {
  lineType: "inventory" | "service" | "discount";
  itemId?: string;
  variationId?: string;
  ivlId?: number;
  name: string;
  description?: string;
  quantity: number;
  quantityReceived: number;
  unitCost: string;
  discountPercent: string;
  taxRate: string;
  tax2Rate: string;
  unitId?: number;
  unitName?: string;
  sku?: string;
  variationValues: Record<string, string>;
  variationNumber?: number;
  discountedUnitCost: string | null;
  subtotal: string;
}

const WHAT = "purchase order";

export interface PurchaseOrderResult {
  body: Record<string, unknown>;
  etag: string;
}

// ---------------------------------------------------------------------------------------------
// Presentation

function presentLine(line: PoLine, position: number, locationName: string | undefined) {
  return {
    id: line.id,
    object: "purchase_order_line",
    item_id: orNull(line.itemId),
    item_variation_location_id: orNull(line.ivlId),
    line_type: line.lineType,
    position,
    unit_name: line.lineType === "discount" ? "discount" : orNull(line.unitName),
    sku: orNull(line.sku),
    location_name: line.lineType === "inventory" ? orNull(locationName) : null,
    name: line.name,
    description: orNull(line.description),
    variation_values: line.variationValues ?? {},
    variation_number: orNull(line.variationNumber),
    thumbnail_url: null,
    quantity: line.quantity,
    quantity_received: line.quantityReceived,
    unit_id: orNull(line.unitId),
    unit_cost: line.unitCost,
    discount_percent: line.discountPercent,
    tax_rate: line.taxRate,
    tax_2_rate: line.tax2Rate,
    discounted_unit_cost: line.discountedUnitCost,
    subtotal: line.subtotal,
  };
}

function editBlockReason(principal: Principal, header: DocumentItem): "permission_denied" | "purchase_order_not_not_sent" | null {
  if (!hasPermission(principal, "purchase_orders.modify")) return "permission_denied";
  if (header.status !== "not_sent") return "purchase_order_not_not_sent";
  return null;
}

/** The order as the API shows it: list entries without the detail-only fields, details with lines. */
export function presentPurchaseOrder(principal: Principal, header: DocumentItem, lines?: readonly PoLine[]): Record<string, unknown> {
  const status = STATUS[header.status as PoStatus];
  const out: Record<string, unknown> = {
    id: header.documentId,
    object: "purchase_order",
    purchase_order_number: header.number,
    custom_purchase_order_number: orNull(header.customNumber),
    name: orNull(header.name),
    supplier_id: header.partyId,
    supplier_name: header.partyName ?? "",
    assigned_user_id: header.assignedUserId,
    location_id: orNull(header.locationId),
    status_id: status.id,
    status: status.label,
    issue_date: orNull(header.issueDate),
    date_sent: orNull(header.dateSent),
    date_received: orNull(header.dateReceived),
    date_requested: orNull(header.dateRequested),
    date_needed: orNull(header.dateNeeded),
    date_fully_paid: orNull(header.dateFullyPaid),
    requested_from: orNull(header.requestedFrom),
    attention: orNull(header.attention),
    shipping_address: orNull(header.shippingAddress),
    public_note: orNull(header.publicNote),
    payment_terms: orNull(header.paymentTerms),
    shipping_provider: orNull(header.shippingProvider),
    shipping_tracking_code: orNull(header.shippingTrackingCode),
  };
  if (lines) {
    const reason = editBlockReason(principal, header);
    Object.assign(out, {
      party: partyOf(header),
      discount_percent: header.discountPercent,
      pre_discount_total: header.preDiscountTotal,
      discount_total: header.discountTotal,
      tax_label: orNull(header.taxLabel),
      tax_2_label: orNull(header.tax2Label),
      can_edit: reason === null,
      edit_block_reason: reason,
    });
  }
  Object.assign(out, {
    revision: header.revision,
    custom_field_values: presentCustomFieldValues(header.customFieldValues),
    subtotal: header.subtotal,
    shipping_fee: header.shippingFee,
    tax: header.tax,
    tax_2: header.tax2,
    total: header.total,
    amount_paid: amountPaid(header),
    amount_due: amountDue(header),
    created_at: header.createdAt,
    updated_at: header.updatedAt,
  });
  if (lines) out.lines = lines.map((line, position) => presentLine(line, position, header.locationName));
  return out;
}

const result = (principal: Principal, header: DocumentItem, lines: readonly PoLine[]): PurchaseOrderResult => ({
  body: presentPurchaseOrder(principal, header, lines),
  etag: etagOf(header.revision),
});

// ---------------------------------------------------------------------------------------------
// Reads

type PoTree = Omit<DocumentTree, "lines"> & { lines: PoLine[] };

const visibleOrder = (principal: Principal, id: string) => visibleDocument<PoTree>(principal, "purchase_order", id, WHAT);

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
  const needle = query.q?.trim().toLowerCase();
  return listDocuments({
    principal,
    kind: "purchase_order",
    url,
    page,
    ids: query.ids,
    filter: {
      statusId: query.status_id === undefined ? undefined : statusKeyOf(Number(query.status_id)),
      partyId: query.supplier_id,
      locationId: query.location_id,
      dates: [
        { attribute: "issueDate", from: query.issue_date_from, to: query.issue_date_to },
        { attribute: "dateRequested", from: query.requested_date_from, to: query.requested_date_to },
        { attribute: "dateNeeded", from: query.needed_date_from, to: query.needed_date_to },
        { attribute: "dateReceived", from: query.received_date_from, to: query.received_date_to },
      ],
      text: needle ? { needle, number: /^\d{1,9}$/.test(needle) ? Number(needle) : undefined } : undefined,
    },
    present: (headers) => headers.map((header) => presentPurchaseOrder(principal, header)),
  });
}

/** A status id filter; an id no order has matches nothing (-1). */
function statusKeyOf(id: number): number {
  return Object.values(STATUS).some((s) => s.id === id) ? id : -1;
}

// ---------------------------------------------------------------------------------------------
// Writes

interface WriteContext {
  principal: Principal;
  account: AccountItem;
  supplier: PartyItem;
  location: LocationItem;
}

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
  const ownsOrAll = supplier && (hasPermission(principal, "records.view_all") || supplier.ownerUserId === principal.userId);
  if (supplier?.kind !== "supplier" || (checks.supplier && !ownsOrAll))
    details.push(referenceDetail("supplier_id", "is not a visible supplier of this account."));
  else if (checks.supplier && supplier.archived) details.push({ param: "supplier_id", code: "archived", message: "is an archived supplier." });
  if (!location || (checks.location && !location.active)) details.push(referenceDetail("location_id", "is not an active location of this account."));
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
    if (line.item_id === undefined) {
      if (line.name === undefined) details.push({ param: `lines[${index}].name`, code: "required", message: "is required on a service line." });
      if (line.unit_cost === undefined) details.push({ param: `lines[${index}].unit_cost`, code: "required", message: "is required on a service line." });
      if (line.item_variation_location_id !== undefined) {
        details.push({ param: `lines[${index}].item_variation_location_id`, code: "invalid", message: "belongs to inventory lines (with item_id)." });
      }
    }
    const kept = previous[index];
    if (kept && kept.quantityReceived > 0 && (kept.itemId ?? null) !== (line.item_id ?? null)) {
      details.push({ param: `lines[${index}].item_id`, code: "invalid", message: "cannot change on a line with received quantities." });
    }
  });
  if (details.length > 0) throw errors.validationFailed(details);
  const resolved = await resolveLineItems(
    context.principal.accountId,
    context.location.locationId,
    input.flatMap((line, index) => (line.item_id === undefined ? [] : [{ index, itemId: line.item_id, ivlId: line.item_variation_location_id }])),
    { locationLabel: "order's" },
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
      lineType: "inventory" as const,
      itemId: item.itemId,
      variationId: variation.variationId,
      ivlId: row?.ivlId,
      name: names.get(index)!,
      // null or blank ("") clears the description; omitting it takes the item's current one.
      description: line.description === undefined ? item.description : line.description || undefined,
      quantity: item.inventoryType === "unique" ? 1 : (line.quantity ?? 1),
      unitCost: money(line.unit_cost ?? defaultUnitCost(item, variation)),
      unitId: item.unitId,
      unitName: item.unitName,
      sku: skuOf(item, variation),
      variationValues: (variation.values ?? {}) as Record<string, string>,
      variationNumber: variation.variationNumber,
    };
  });
}

/** Prices the lines and appends the generated discount line; returns the lines and the header totals. */
function priceLines(lines: readonly PoLine[], discountPercent: string, shippingFee: string) {
  const items = lines.filter((line) => line.lineType !== "discount");
  const totals = computeTotals(
    items.map((line) => ({
      quantity: line.quantity,
      unitPrice: line.unitCost,
      discountPercent: line.discountPercent,
      taxRate: line.taxRate,
      tax2Rate: line.tax2Rate,
    })),
    discountPercent,
    shippingFee,
  );
  const priced: PoLine[] = items.map((line, i) => ({ ...line, subtotal: totals.lines[i]!.subtotal, discountedUnitCost: totals.lines[i]!.discountedUnitPrice }));
  if (totals.discount !== null) {
    const existing = lines.find((line) => line.lineType === "discount");
    priced.push({
      id: existing?.id ?? randomUUID(),
      lineType: "discount",
      name: "Discount",
      quantity: 1,
      quantityReceived: 0,
      unitCost: totals.discount,
      discountPercent: "0.000",
      taxRate: "0.000",
      tax2Rate: "0.000",
      variationValues: {},
      discountedUnitCost: null,
      subtotal: totals.discount,
    });
  }
  return {
    lines: priced,
    totals: {
      subtotal: totals.subtotal,
      preDiscountTotal: totals.preDiscountTotal,
      discountTotal: totals.discountTotal,
      shippingFee: totals.shippingFee,
      tax: totals.tax,
      tax2: totals.tax2,
      total: totals.total,
    },
  };
}

/** The header fields a create or an update sets from the request (null or "" clears a field). */
function headerFields(input: PurchaseOrderCreateBody | PurchaseOrderUpdateBody): Partial<DocumentItem> & { cleared: (keyof DocumentItem)[] } {
  const set: Record<string, unknown> = {};
  const cleared: (keyof DocumentItem)[] = [];
  const map: [keyof typeof input, keyof DocumentItem][] = [
    ["name", "name"],
    ["issue_date", "issueDate"],
    ["date_requested", "dateRequested"],
    ["date_needed", "dateNeeded"],
    ["requested_from", "requestedFrom"],
    ["attention", "attention"],
    ["shipping_address", "shippingAddress"],
    ["public_note", "publicNote"],
    ["payment_terms", "paymentTerms"],
    ["shipping_provider", "shippingProvider"],
    ["shipping_tracking_code", "shippingTrackingCode"],
    ["custom_purchase_order_number", "customNumber"],
  ];
  for (const [field, attribute] of map) {
    const value = input[field] as string | null | undefined;
    if (value === undefined) continue;
    if (value === null || value === "") cleared.push(attribute);
    else set[attribute] = value;
  }
  if (input.shipping_fee !== undefined) set.shippingFee = money(input.shipping_fee);
  if (input.discount_percent !== undefined) set.discountPercent = rate(input.discount_percent);
  return { ...(set as Partial<DocumentItem>), cleared };
}

function searchTextOf(header: Pick<DocumentItem, "partyName" | "customNumber" | "name">): string {
  return [header.partyName, header.customNumber, header.name].filter(Boolean).join(" ").toLowerCase();
}

/** The derived header fields: snapshots of the supplier, location and tax labels, totals, item ids. */
function derive(header: DocumentItem, context: WriteContext, lines: readonly PoLine[]): DocumentItem {
  const next: DocumentItem = {
    ...header,
    partyId: context.supplier.partyId,
    partyName: context.supplier.name,
    partyKind: "supplier",
    partyDetails: partyDetailsOf(context.supplier),
    locationId: context.location.locationId,
    locationName: context.location.name,
    taxLabel: context.account.taxLabel,
    tax2Label: context.account.tax2Label,
  };
  const itemIds = [...new Set(lines.flatMap((line) => (line.itemId ? [line.itemId] : [])))];
  if (itemIds.length > 0) next.itemIds = itemIds;
  else delete next.itemIds;
  next.searchText = searchTextOf(next);
  return next;
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
  const documentId = randomUUID();
  const base = derive(
    {
      accountId: principal.accountId,
      documentId,
      kind: "purchase_order",
      number: 0,
      numberKey: "",
      revision: newRevision("po"),
      status: "not_sent",
      statusId: STATUS.not_sent.id,
      assignedUserId: principal.userId,
      issueDate: set.issueDate ?? localToday(principal, context.account),
      ...set,
      paymentTerms: set.paymentTerms ?? context.account.paymentTerms,
      discountPercent,
      ...priced.totals,
      amountPaidMinor: 0,
      paymentCount: 0,
      customFieldValues: customFields?.values,
      pageCount: 0,
      lineCount: 0,
      searchText: "",
      createdAt: now,
      updatedAt: now,
    } as DocumentItem,
    context,
    priced.lines,
  );
  const references: Reference[] = [...(customFields?.references ?? []), { param: "location_id", kind: "location", id: context.location.locationId }];
  const numbered = (number: number): DocumentItem => ({ ...base, number, numberKey: numberKeyOf(number) });
  const { number, cancellation } = await allocateNumber(principal.accountId, "purchase_order", (number, claim) =>
    writeTransaction(
      (tx) => {
        const header = numbered(number);
        claim(tx, { count: 1 });
        addDocumentWrite(tx, { header, lines: priced.lines });
        addAssigneeCount(tx, header, 1);
        addDocumentActivity(tx, { accountId: principal.accountId, partyId: context.supplier.partyId }, { documents: 1 });
        checkReferences(tx, principal.accountId, references);
      },
      { completion: withEtag(completion, numbered(number).revision), body: presentPurchaseOrder(principal, numbered(number), priced.lines) },
    ),
  );
  if (cancellation) mapReferenceFailures(cancellation);
  return result(principal, numbered(number), priced.lines);
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
  const ifMatch = parseIfMatch(ifMatchHeader);
  return retrying(
    "update purchase order",
    async () => {
      const tree = await visibleOrder(principal, id);
      const previous = tree.header;
      assertRevision(ifMatch, previous.revision);
      if (previous.status !== "not_sent") {
        throw errors.stateConflict(
          "purchase_order_update_not_allowed",
          `Only Not Sent purchase orders can be updated; this one is ${STATUS[previous.status as PoStatus].label}.`,
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
      const next = derive(
        {
          ...merged,
          ...priced.totals,
          customFieldValues: customFields ? customFields.values : previous.customFieldValues,
          revision: newRevision("po"),
          updatedAt: nextTimestamp(previous.updatedAt),
        },
        context,
        priced.lines,
      );
      if (!next.issueDate) next.issueDate = previous.issueDate;
      // Sent back as read: nothing to write (revision and updated_at stay).
      if (changesNothing(previous, next, tree.lines, priced.lines)) return result(principal, previous, tree.lines);
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
    undefined,
    [documentLock(principal.accountId, id)],
  );
}

/** The incoming (or received) quantity of each inventory line at the order's location. */
function stockChanges(header: DocumentItem, lines: readonly { line: PoLine; quantity: number }[], kind: "incoming" | "receive"): StockChange[] {
  return lines
    .filter(({ line, quantity }) => line.lineType === "inventory" && line.itemId && quantity > 0)
    .map(({ line, quantity }) => ({
      itemId: line.itemId!,
      variationId: line.variationId!,
      locationId: header.locationId!,
      deltas: kind === "incoming" ? { incoming: quantity } : { onHand: quantity, incoming: -quantity },
      ...(kind === "receive" ? { unitCost: line.discountedUnitCost ?? line.unitCost } : {}),
    }));
}

/** Lines with the ids of the stock rows the write created (rows appear with the first stock). */
const withRowIds = (header: DocumentItem, lines: readonly PoLine[], rowIdOf: RowIdOf): PoLine[] =>
  lines.map((line) =>
    line.lineType === "inventory" && line.ivlId === undefined && line.itemId
      ? { ...line, ivlId: rowIdOf(line.itemId, line.variationId!, header.locationId!) }
      : line,
  );

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
  completion: IdempotencyCompletion | undefined,
): Promise<PurchaseOrderResult> {
  requireDocumentPermission(principal, "purchase_orders.modify", "sending purchase orders");
  return retrying(
    "send purchase order",
    async () => {
      const tree = await visibleOrder(principal, id);
      const previous = tree.header;
      if (previous.status === "sent") return result(principal, previous, tree.lines);
      if (previous.status !== "not_sent") {
        throw errors.stateConflict("purchase_order_send_not_allowed", `A ${STATUS[previous.status as PoStatus].label} purchase order cannot be sent.`);
      }
      const account = await accountSettings(principal.accountId);
      const base: DocumentItem = {
        ...previous,
        status: "sent",
        statusId: STATUS.sent.id,
        dateSent: input.date_sent ?? accountToday(account),
        revision: newRevision("po"),
        updatedAt: nextTimestamp(previous.updatedAt),
      };
      const changes = stockChanges(
        previous,
        tree.lines.map((line) => ({ line, quantity: addQuantities(line.quantity, -line.quantityReceived) })),
        "incoming",
      );
      let written: PurchaseOrderResult | undefined;
      const { cancellation } = await commitWithStock({
        accountId: principal.accountId,
        source: { sourceType: "purchase_order", sourceId: id, userId: principal.userId, reason: `Purchase order ${previous.number} sent` },
        changes,
        document: (tx, rowIdOf) =>
          addDocumentWrite(tx, { header: base, lines: withRowIds(base, tree.lines, rowIdOf), previous, condition: (a, op) => op.eq!(a.status, "not_sent") }),
        outcome: (rowIdOf) => {
          written = result(principal, base, withRowIds(base, tree.lines, rowIdOf));
          return { completion: withEtag(completion, base.revision), body: written.body };
        },
      });
      if (!cancellation) return written!;
      return RETRY;
    },
    undefined,
    [documentLock(principal.accountId, id)],
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
  return retrying(
    "receive purchase order",
    async () => {
      const tree = await visibleOrder(principal, id);
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
      const complete = lines.every((line) => line.lineType !== "inventory" || line.quantityReceived >= line.quantity);
      const base: DocumentItem = {
        ...previous,
        status: complete ? "received" : "partially_received",
        statusId: complete ? STATUS.received.id : STATUS.partially_received.id,
        revision: newRevision("po"),
        updatedAt: nextTimestamp(previous.updatedAt),
      };
      if (complete) base.dateReceived = input.received_date ?? localToday(principal, account);
      const changes = stockChanges(
        previous,
        tree.lines.filter((line) => received.has(line.id)).map((line) => ({ line, quantity: received.get(line.id)! })),
        "receive",
      );
      let written: PurchaseOrderResult | undefined;
      try {
        const { cancellation } = await commitWithStock({
          accountId: principal.accountId,
          source: { sourceType: "purchase_order", sourceId: id, userId: principal.userId, reason: `Purchase order ${previous.number} received` },
          changes,
          document: (tx, rowIdOf) => addDocumentWrite(tx, { header: base, lines: withRowIds(base, lines, rowIdOf), previous }),
          outcome: (rowIdOf) => {
            written = result(principal, base, withRowIds(base, lines, rowIdOf));
            return { completion: withEtag(completion, base.revision), body: written.body };
          },
        });
        return cancellation ? RETRY : written!;
      } catch (error) {
        if (error instanceof StockRuleError) {
          // A unique item already on hand cannot be received again.
          throw errors.validationFailed([{ param: "lines", code: error.rule, message: error.message }]);
        }
        throw error;
      }
    },
    undefined,
    [documentLock(principal.accountId, id)],
  );
}

// ---------------------------------------------------------------------------------------------
// Payments (architecture section 8)

function presentPayment(payment: DocumentPaymentItem) {
  return {
    id: payment.paymentId,
    object: "payment",
    purchase_order_id: payment.documentId,
    amount: payment.amount,
    type: payment.amountMinor < 0 ? "refund" : "payment",
    reference: payment.reference ?? "",
    payment_date: orNull(payment.paymentDate),
    card: null,
  };
}

const PAYMENTS: PaymentPolicy = {
  kind: "purchase_order",
  what: WHAT,
  revisionPrefix: "po",
  readPermission: "purchase_orders.list",
  writePermission: "purchase_orders.modify",
  deleteNotAllowedCode: "purchase_order_payment_delete_not_allowed",
  present: presentPayment,
};

export const listPurchaseOrderPayments = (principal: Principal, id: string, url: string, page: PageRequest) => listPayments(principal, PAYMENTS, id, url, page);
export const createPurchaseOrderPayment = (principal: Principal, id: string, body: PaymentBody, completion: IdempotencyCompletion | undefined) =>
  recordPayment(principal, PAYMENTS, id, body, completion);
export const deletePurchaseOrderPayment = (principal: Principal, id: string, paymentId: string, completion: IdempotencyCompletion | undefined) =>
  deletePayment(principal, PAYMENTS, id, paymentId, completion);
