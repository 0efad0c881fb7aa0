import { DocumentTooLargeError } from "../../../core/failures.js";
import { randomUUID } from "node:crypto";
import { Decimal } from "decimal.js";
import { hasPermission, type Principal } from "../../../auth/permissions.js";
import { ApiError, errors, type DetailCode, type ErrorCode, type ValidationDetail } from "../../../core/errors.js";
import type { IdempotencyCompletion } from "../../../core/idempotency.js";
import type { ListEnvelope, PageRequest } from "../../../core/pagination.js";
import {
  DOCUMENT_LABEL,
  addDocumentDelete,
  documentListing,
  addDocumentWrite,
  encodeDocumentLines,
  numberKeyOf,
  type DocumentTree,
  type EncodedLines,
} from "../../../db/documents.js";
import { readLocations } from "../../../db/locations.js";
import { addDocumentActivity, readParty } from "../../../db/parties.js";
import { checkReferences, missingReferences, referenceDetail, referenceDetails, type Reference } from "../../../db/references.js";
import { RETRY, retrying } from "../../../db/retry.js";
import { allocateNumber } from "../../../db/sequences.js";
import type { AccountItem, DocumentItem, PartyItem } from "../../../db/service.js";
import { writeTransaction, type Cancellation, type TransactionBuilder } from "../../../db/transactions.js";
import type { EstimateCreateBody, EstimateLineBody, EstimateListQuery, EstimateUpdateBody } from "../../../schemas/estimates.js";
import { customFieldWrite } from "../../common/custom-field-values.js";
import { mayReachLocation, outsideLocationDetail } from "../../common/location-access.js";
import {
  inventoryLineName,
  isKeptUnitPrice,
  keptUnitCost,
  defaultUnitCost,
  defaultUnitPrice,
  resolveLineItems,
  skuOf,
  type ResolvedLineItem,
} from "../lines.js";
import {
  accountSettings,
  accountToday,
  addAssigneeCount,
  addKindCountDecrement,
  documentTextFields,
  listDocuments,
  localToday,
  matchReplacementLines,
  nextTimestamp,
  requireDocumentPermission,
  withEtag,
  documentLock,
  visibleDocument,
  changesNothing,
} from "../documents.js";
import {
  ESTIMATE_STATUS,
  addDays,
  effectiveStatus,
  expiryInstantOf,
  presentEstimate,
  priceEstimate,
  statusFilter,
  type EstimateLine,
  type EstimateTotals,
} from "./model.js";
import { addQuantities } from "../../inventory/math.js";
import { money, rate } from "../../common/money.js";
import { assertRevision, etagOf, newRevision, parseIfMatch } from "../../common/revisions.js";
import { MAX_ESTIMATE_LINES } from "../../../schemas/estimates.js";

/**
 * Estimates: spec part 2, sections 2.3, 3.3 and 4.3; architecture sections 4 (status ids, money,
 * revisions) and 8 (delete response). Storage, numbering, counts and lists are the document
 * machinery's (`lib/db/documents.ts`, `lib/domain/documents/documents.ts`); the estimate's own model
 * (statuses, expiry, pricing, presentation) is `model.ts`.
 *
 * Every write is planned by `planEstimate`, which reads what the estimate names and collects
 * every problem: a create or update throws them (409 state, then 403 permission, then 422 with
 * every detail), a preview returns them in `errors` (and writes nothing). Estimates never move
 * stock.
 *
 * Conversion (into an invoice or a sales order) is ONE transaction of the new document's writer:
 * `readEstimateForConversion` gives the estimate's values in the new document's shape and
 * `addEstimateConversion` adds "close this estimate as converted" to that transaction.
 */

const WHAT = "estimate";
const nowIso = () => new Date().toISOString();

export interface EstimateResult {
  body: Record<string, unknown>;
  etag: string;
}

type EstimateTree = Omit<DocumentTree, "lines"> & { lines: EstimateLine[] };

// ---------------------------------------------------------------------------------------------
// Reads

const visibleEstimate = (principal: Principal, id: string) => visibleDocument<EstimateTree>(principal, "estimate", id, WHAT);

const result = (principal: Principal, header: DocumentItem, lines: readonly EstimateLine[], now?: string): EstimateResult => ({
  body: presentEstimate(principal, header, lines, { now }),
  etag: etagOf(header.revision),
});

/** One estimate with its lines in stored order (authentication plus ONE Query). */
export async function getEstimate(principal: Principal, id: string): Promise<EstimateResult> {
  requireDocumentPermission(principal, "estimates.list", "reading estimates");
  const tree = await visibleEstimate(principal, id);
  return result(principal, tree.header, tree.lines);
}

/** Estimates newest number first, with the filters of spec 4.3 (and `ids`). */
export async function listEstimates(
  principal: Principal,
  url: string,
  page: PageRequest,
  query: EstimateListQuery,
): Promise<ListEnvelope<Record<string, unknown>>> {
  requireDocumentPermission(principal, "estimates.list", "reading estimates");
  const now = nowIso();
  const needle = query.q?.trim().toLowerCase();
  const status = query.status_id === undefined ? {} : statusFilter(Number(query.status_id), now);
  return listDocuments({
    principal,
    kind: "estimate",
    url,
    page,
    ids: query.ids,
    filter: {
      statusId: status.statusId,
      partyId: query.customer_id,
      dates: [
        { attribute: "issueDate", from: query.issue_date_from, to: query.issue_date_to },
        { attribute: "expiryDate", from: query.expiry_date_from, to: query.expiry_date_to },
        ...(status.dates ?? []),
      ],
      text: needle ? { needle, number: /^\d{1,9}$/.test(needle) ? Number(needle) : undefined } : undefined,
    },
    present: (headers) => headers.map((header) => presentEstimate(principal, header, undefined, { now })),
  });
}

// ---------------------------------------------------------------------------------------------
// Planning: what a create, an update or a preview would write, and every problem with it

/** A refusal the real write would answer: 409 (state), 403 (a permission), 422 (a field). */
/** A refusal (403, 409: its code is the error's) or a field's problem (422: a detail code). */
export type Problem =
  | { status: 403 | 409; code: ErrorCode; message: string; param?: string }
  | { status: 422; code: DetailCode; message: string; param?: string };

const detailProblem = (detail: ValidationDetail): Problem => ({ status: 422, ...detail });

/** The problems of an `ApiError` a shared helper threw (validation details, or the error itself). */
function problemsOf(error: unknown): Problem[] {
  if (!(error instanceof ApiError) || error.statusCode >= 500) throw error;
  if (error.details?.length) return error.details.map(detailProblem);
  const { code, message, param } = error;
  return [error.statusCode === 403 || error.statusCode === 409 ? { status: error.statusCode, code, message, param } : { status: 422, code, message, param }];
}

/** Throws the problems as the real write answers them: a state conflict first, then a permission, then every field. */
function throwProblems(problems: readonly Problem[]): void {
  const conflict = problems.find((p): p is Extract<Problem, { status: 403 | 409 }> => p.status === 409);
  if (conflict) throw errors.stateConflict(conflict.code, conflict.message);
  const denied = problems.find((p) => p.status === 403);
  if (denied) throw errors.permissionDenied(denied.message, denied.param);
  const details = problems.filter((p) => p.status === 422).map(({ param, code, message }) => ({ param: param ?? "", code, message }));
  if (details.length > 0) throw errors.validationFailed(details);
}

interface EstimatePlan {
  header: DocumentItem;
  lines: EstimateLine[];
  /**
   * The pages to write; undefined when the stored pages stay (an update that changes neither the
   * lines nor their pricing) or when the lines are over the document limits (a problem says so).
   */
  encoded?: EncodedLines;
  customer: PartyItem;
  customerChanged: boolean;
  references: Reference[];
}

interface Planned {
  plan?: EstimatePlan;
  problems: Problem[];
  warnings: Problem[];
}

type PlanRequest = { mode: "create"; input: EstimateCreateBody } | { mode: "update"; input: EstimateUpdateBody; tree: EstimateTree };

/** The header fields a create or an update sets from the request (null or "" clears a text field). */
function headerFields(input: EstimateCreateBody | EstimateUpdateBody): { set: Partial<DocumentItem>; cleared: (keyof DocumentItem)[] } {
  const { set, cleared } = documentTextFields(input, [
    ["name", "name"],
    ["custom_estimate_number", "customNumber"],
    ["purchase_order_number", "purchaseOrderNumber"],
    ["attention", "attention"],
    ["shipping_address", "shippingAddress"],
    ["public_note", "publicNote"],
    ["payment_terms", "paymentTerms"],
  ]);
  if (input.issue_date !== undefined) set.issueDate = input.issue_date;
  if (input.expiry_date !== undefined) set.expiryDate = input.expiry_date;
  if (input.shipping_fee !== undefined) set.shippingFee = money(input.shipping_fee);
  if (input.shipping_cost !== undefined) set.shippingCost = money(input.shipping_cost);
  if (input.discount_percent !== undefined) set.discountPercent = rate(input.discount_percent);
  return { set, cleared };
}

/** Line rules that need no read: service lines name their own name and price; inventory lines take the item's name. */
function lineShapeProblems(lines: readonly EstimateLineBody[], principal: Principal, kept: readonly (EstimateLine | undefined)[]): Problem[] {
  const problems: Problem[] = [];
  const mayPrice = hasPermission(principal, "prices.modify");
  lines.forEach((line, index) => {
    const at = (field: string) => `lines[${index}].${field}`;
    if (line.item_id === undefined) {
      if (line.name === undefined) problems.push({ status: 422, param: at("name"), code: "required", message: "is required on a service line." });
      if (line.unit_price === undefined) problems.push({ status: 422, param: at("unit_price"), code: "required", message: "is required on a service line." });
      if (line.item_variation_location_id !== undefined) {
        problems.push({ status: 422, param: at("item_variation_location_id"), code: "invalid", message: "belongs to inventory lines (with item_id)." });
      }
      return;
    }
    // An inventory line's own price sent back as read needs no permission (it changes nothing).
    if (line.unit_price !== undefined && !mayPrice && !isKeptUnitPrice(money(line.unit_price), line.item_id, kept[index])) {
      problems.push({
        status: 403,
        param: at("unit_price"),
        code: "permission_denied",
        message: "Setting the price of an inventory line requires the prices.modify permission.",
      });
    }
  });
  return problems;
}

/** The customer or prospect an estimate names: visible to the user, not a supplier; `requireActive` also refuses archived ones. */
function customerProblems(principal: Principal, party: PartyItem | undefined, requireActive: boolean): Problem[] {
  const visible = party && (hasPermission(principal, "records.view_all") || party.ownerUserId === principal.userId);
  if (!party || !visible || party.kind === "supplier")
    return [detailProblem(referenceDetail("customer_id", "is not a visible customer or prospect of this account."))];
  if (requireActive && party.archived) return [{ status: 422, param: "customer_id", code: "archived", message: `is an archived ${party.kind}.` }];
  return [];
}

/** Names of the locations of the lines' stock rows (one BatchGetItem for every distinct location). */
async function locationNames(accountId: string, resolved: Iterable<ResolvedLineItem>): Promise<Map<string, string>> {
  const ids = [...new Set([...resolved].flatMap((r) => (r.row ? [r.row.locationId] : [])))];
  const locations = await readLocations(accountId, ids);
  return new Map(locations.map((location) => [location.locationId, location.name] as const));
}

/**
 * The stored lines of a request's complete line list: inventory lines take the item's name,
 * description (overridable; "" clears it), unit, SKU, variation, unit cost and selling price
 * (`unit_price` overrides it, permission permitting); service lines their own name, description
 * and price; tax rates default to the customer's. `kept[i]` is the stored line request line i
 * keeps (its id).
 */
function buildLines(
  input: readonly EstimateLineBody[],
  kept: readonly (EstimateLine | undefined)[],
  resolved: ReadonlyMap<number, ResolvedLineItem>,
  customer: PartyItem,
  names: ReadonlyMap<string, string>,
): EstimateLine[] {
  return input.map((line, index) => {
    const base = {
      id: kept[index]?.id ?? randomUUID(),
      discountPercent: "0.000",
      taxRate: rate(line.tax_rate ?? customer.taxRate1 ?? 0),
      tax2Rate: rate(line.tax_2_rate ?? customer.taxRate2 ?? 0),
      discountedUnitPrice: null,
      subtotal: "0.0000",
      tax: "0.0000",
      tax2: "0.0000",
      total: "0.0000",
      totalCost: null,
    };
    const found = resolved.get(index);
    if (!found) {
      // A service line without name or price is refused; a preview still prices it ("" and 0).
      return {
        ...base,
        lineType: "service" as const,
        name: line.name ?? "",
        description: line.description || undefined,
        quantity: line.quantity ?? 1,
        unitPrice: money(line.unit_price ?? 0),
        unitCost: "0.0000",
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
      locationId: row?.locationId,
      locationName: row ? names.get(row.locationId) : undefined,
      name: (inventoryLineName(index, line.name, item, kept[index]) as { name: string }).name,
      description: line.description === undefined ? item.description : line.description || undefined,
      quantity: item.inventoryType === "unique" ? 1 : (line.quantity ?? 1),
      unitPrice: money(line.unit_price ?? defaultUnitPrice(item, variation)),
      unitCost: keptUnitCost(item.itemId, variation.variationId, kept[index]) ?? money(defaultUnitCost(item, variation)),
      unitId: item.unitId,
      unitName: item.unitName,
      sku: skuOf(item, variation),
      variationValues: (variation.values ?? {}) as Record<string, string>,
      variationNumber: variation.variationNumber,
    };
  });
}

/**
 * The date rules (spec 4.3): `expiry_date` not before `issue_date` (named on the field the
 * request gave); an update's new `expiry_date` after today in the account's time zone (spec 4.3:
 * "future date"); a create may record a past expiry
 * (the estimate is then Expired at once), which a preview warns about.
 */
export function dateProblems(dates: { issueDate: string; expiryDate: string; today: string; isUpdate: boolean; expiryGiven: boolean }): {
  problems: Problem[];
  warnings: Problem[];
} {
  const { issueDate, expiryDate, today } = dates;
  if (expiryDate < issueDate) {
    const param = dates.expiryGiven ? "expiry_date" : "issue_date";
    return {
      problems: [{ status: 422, param, code: "before_issue_date", message: `expiry_date ${expiryDate} is before issue_date ${issueDate}.` }],
      warnings: [],
    };
  }
  if (dates.isUpdate && dates.expiryGiven && expiryDate <= today) {
    return {
      problems: [
        { status: 422, param: "expiry_date", code: "past_date", message: `must be a future date (after ${today}, today in the account's time zone).` },
      ],
      warnings: [],
    };
  }
  if (!dates.isUpdate && expiryDate < today) {
    return {
      problems: [],
      warnings: [
        {
          status: 422,
          param: "expiry_date",
          code: "expiry_date_passed",
          message: `${expiryDate} has passed (today is ${today} in the account's time zone): the estimate is created Expired.`,
        },
      ],
    };
  }
  return { problems: [], warnings: [] };
}

/** Preview warnings: inventory lines asking for more than is available (on hand less reserved). */
function stockWarnings(input: readonly EstimateLineBody[], lines: readonly EstimateLine[], resolved: ReadonlyMap<number, ResolvedLineItem>): Problem[] {
  const wanted = new Map<string, number>();
  const keyOf = (found: ResolvedLineItem) => (found.row ? `row:${found.row.ivlId}` : `variation:${found.variation.variationId}`);
  input.forEach((_line, index) => {
    const found = resolved.get(index);
    if (found) wanted.set(keyOf(found), addQuantities(wanted.get(keyOf(found)) ?? 0, lines[index]!.quantity));
  });
  const warnings: Problem[] = [];
  const warned = new Set<string>();
  input.forEach((_line, index) => {
    const found = resolved.get(index);
    if (!found || warned.has(keyOf(found))) return;
    const rows = found.row ? [found.row] : found.rows;
    const available = rows.reduce((sum, row) => sum.plus(row.onHand).minus(row.reserved), new Decimal(0));
    const total = wanted.get(keyOf(found))!;
    if (available.lt(total)) {
      warned.add(keyOf(found));
      warnings.push({
        status: 422,
        param: `lines[${index}].quantity`,
        code: "insufficient_stock",
        message: `${total} requested of ${found.item.name}${found.row ? " at this stock row" : ""}, ${available.toString()} available (on hand less reserved).`,
      });
    }
  });
  return warnings;
}

/**
 * Plans a create or an update of an estimate: reads the account, the customer and the items,
 * checks every rule of spec 4.3 and builds the priced lines and the next header. Nothing is
 * written. `preview` also checks the custom-field references by reading them (a write checks
 * them in its transaction) and computes warnings.
 */
async function planEstimate(principal: Principal, request: PlanRequest, now: string, preview: boolean): Promise<Planned> {
  const { input } = request;
  const previous = request.mode === "update" ? request.tree.header : undefined;
  const problems: Problem[] = [];
  const warnings: Problem[] = [];

  if (previous) {
    const status = effectiveStatus(previous, now);
    if (status !== "open") {
      problems.push({
        status: 409,
        code: "estimate_update_not_allowed",
        message: `Only Open estimates can be updated; this one is ${ESTIMATE_STATUS[status].label}${previous.convertedTo ? " (converted)" : ""}.`,
      });
    }
  }
  const customerId = input.customer_id ?? previous!.partyId!;
  const customerChanged = previous !== undefined && input.customer_id !== undefined && input.customer_id !== previous.partyId;
  if (customerChanged && input.lines === undefined) {
    problems.push({ status: 422, param: "lines", code: "required", message: "is required when customer_id changes (the complete set of lines)." });
  }
  if (input.shipping_cost !== undefined && !hasPermission(principal, "costs.view")) {
    problems.push({ status: 403, param: "shipping_cost", code: "permission_denied", message: "Setting shipping_cost requires the costs.view permission." });
  }

  // The request's lines (update: the stored ones when omitted) and the stored lines they keep.
  const lineInput: readonly EstimateLineBody[] | undefined = input.lines;
  let kept: (EstimateLine | undefined)[] = [];
  if (lineInput) {
    if (request.mode === "update") {
      try {
        kept = matchReplacementLines(request.tree.lines, lineInput, MAX_ESTIMATE_LINES, (line) => line.lineType !== "discount");
      } catch (error) {
        problems.push(...problemsOf(error));
      }
    }
    problems.push(...lineShapeProblems(lineInput, principal, kept));
  }
  let customFields: ReturnType<typeof customFieldWrite> | undefined;
  try {
    customFields = input.custom_field_values === undefined ? undefined : customFieldWrite(input.custom_field_values, "estimate");
  } catch (error) {
    problems.push(...problemsOf(error));
  }

  const itemRequests = (lineInput ?? []).flatMap((line, index) =>
    line.item_id === undefined ? [] : [{ index, itemId: line.item_id, ivlId: line.item_variation_location_id }],
  );
  const [account, customer, resolved, referenceProblems] = await Promise.all([
    accountSettings(principal.accountId),
    readParty(principal.accountId, customerId),
    resolveLineItems(principal.accountId, undefined, itemRequests).catch((error: unknown) => {
      problems.push(...problemsOf(error));
      return undefined;
    }),
    preview && customFields ? missingReferences(principal.accountId, customFields.references) : Promise.resolve([]),
  ]);
  problems.push(...referenceProblems.map(detailProblem));
  // A new customer must be active; an unchanged one may have been archived since (the estimate stays editable).
  const customerIssues = customerProblems(principal, customer, previous === undefined || customerChanged);
  problems.push(...customerIssues);
  for (const [index, found] of resolved ?? []) {
    if (found.item.sold) problems.push({ status: 422, param: `lines[${index}].item_id`, code: "sold", message: "is a sold unique item." });
    if (found.row && !mayReachLocation(principal, found.row.locationId))
      problems.push(detailProblem(outsideLocationDetail(`lines[${index}].item_variation_location_id`)));
    const named = inventoryLineName(index, lineInput?.[index]?.name, found.item, kept[index]);
    if ("detail" in named) problems.push(detailProblem(named.detail));
  }

  // Dates: issue_date defaults to the user's today; expiry_date to issue_date + the account's setting.
  const { set, cleared } = headerFields(input);
  const issueDate = set.issueDate ?? previous?.issueDate ?? localToday(principal, account);
  const expiryDate = set.expiryDate ?? previous?.expiryDate ?? addDays(issueDate, account.estimateExpiryDays ?? 30);
  const dates = dateProblems({
    issueDate,
    expiryDate,
    today: accountToday(account, new Date(now)),
    isUpdate: previous !== undefined,
    expiryGiven: input.expiry_date !== undefined,
  });
  problems.push(...dates.problems);
  warnings.push(...dates.warnings);

  if (!customer || customerIssues.some((p) => p.code === "invalid_reference") || (lineInput && !resolved)) return { problems, warnings };

  // Lines: the request's complete list, or (update without lines) the stored ones re-priced.
  let lines: EstimateLine[];
  if (lineInput) {
    const names = await locationNames(principal.accountId, resolved!.values());
    lines = buildLines(lineInput, kept, resolved!, customer, names);
    if (preview) warnings.push(...stockWarnings(lineInput, lines, resolved!));
  } else {
    lines = request.mode === "update" ? request.tree.lines : [];
  }
  const discountPercent = set.discountPercent ?? previous?.discountPercent ?? "0.000";
  const shippingFee = set.shippingFee ?? previous?.shippingFee ?? "0.0000";
  const storedDiscount = request.mode === "update" ? request.tree.lines.find((line) => line.lineType === "discount")?.id : undefined;
  const priced = priceEstimate(lines, discountPercent, shippingFee, storedDiscount);
  // Stored lines re-priced with the same discount are the stored lines: their pages stay.
  const keepsPages = request.mode === "update" && !lineInput && discountPercent === request.tree.header.discountPercent;
  let encoded: EncodedLines | undefined;
  try {
    if (!keepsPages) encoded = encodeDocumentLines(priced.lines);
  } catch (error) {
    if (!(error instanceof DocumentTooLargeError)) throw error;
    problems.push({
      status: 422,
      param: "lines",
      code: "too_large",
      message:
        error.measure === "stored"
          ? `take ${Math.ceil(error.bytes / 1024)} KB compressed; an estimate holds at most ${error.limit / 1024} KB (shorten descriptions).`
          : `take ${Math.ceil(error.bytes / 1024)} KB of JSON; an estimate holds at most ${error.limit / 1024} KB (shorten descriptions).`,
    });
  }

  const header = nextHeader({
    principal,
    account,
    previous,
    set,
    cleared,
    issueDate,
    expiryDate,
    customer,
    totals: priced.totals,
    discountPercent,
    lines: priced.lines,
    now,
  });
  if (customFields) header.customFieldValues = customFields.values;
  return {
    plan: { header, lines: priced.lines, encoded, customer, customerChanged, references: customFields?.references ?? [] },
    problems,
    warnings,
  };
}

/** The header a create or an update writes: request fields over the stored ones, snapshots, totals, expiry instant. */
function nextHeader(options: {
  principal: Principal;
  account: AccountItem;
  previous: DocumentItem | undefined;
  set: Partial<DocumentItem>;
  cleared: readonly (keyof DocumentItem)[];
  issueDate: string;
  expiryDate: string;
  customer: PartyItem;
  totals: EstimateTotals;
  discountPercent: string;
  lines: readonly EstimateLine[];
  now: string;
}): DocumentItem {
  const { principal, account, previous, set, customer } = options;
  const base: DocumentItem = previous
    ? { ...previous, ...set, revision: newRevision("est"), updatedAt: nextTimestamp(previous.updatedAt) }
    : ({
        accountId: principal.accountId,
        documentId: randomUUID(),
        kind: "estimate",
        number: 0,
        numberKey: "",
        revision: newRevision("est"),
        status: "open",
        statusId: ESTIMATE_STATUS.open.id,
        assignedUserId: principal.userId,
        ...set,
        paymentTerms: set.paymentTerms ?? account.paymentTerms,
        shippingCost: set.shippingCost ?? "0.0000",
        amountPaidMinor: 0,
        paymentCount: 0,
        pageCount: 0,
        lineCount: 0,
        searchText: "",
        createdAt: options.now,
        updatedAt: options.now,
      } as DocumentItem);
  for (const attribute of options.cleared) delete (base as Record<string, unknown>)[attribute];
  const next: DocumentItem = {
    ...base,
    partyId: customer.partyId,
    partyName: customer.name,
    partyKind: customer.kind,
    issueDate: options.issueDate,
    expiryDate: options.expiryDate,
    expiryInstant: expiryInstantOf(options.expiryDate, account.timeZone),
    discountPercent: options.discountPercent,
    ...options.totals,
  };
  const itemIds = [...new Set(options.lines.flatMap((line) => (line.itemId ? [line.itemId] : [])))];
  if (itemIds.length > 0) next.itemIds = itemIds;
  else delete next.itemIds;
  next.searchText = [next.partyName, next.customNumber, next.name].filter(Boolean).join(" ").toLowerCase();
  return next;
}

/** Maps a cancelled estimate write: the customer archived or deleted meanwhile, or a reference. */
function mapWriteFailures(cancellation: Cancellation, customerId: string): never {
  const details = referenceDetails(cancellation);
  if (cancellation.failed(`party:${customerId}`)) details.push(referenceDetail("customer_id", "is no longer an active customer or prospect of this account."));
  if (details.length > 0) throw errors.validationFailed(details);
  throw errors.internal(new Error(`estimate write failed: ${cancellation.labels.join(", ")}`));
}

/** The write's condition: still Open and not yet expired at `now`. */
const stillOpen = (now: string) => (a: Record<string, unknown>, op: Record<string, (...args: unknown[]) => string>) =>
  `${op.eq!(a.status, "open")} AND ${op.gt!(a.expiryInstant, now)}`;

// ---------------------------------------------------------------------------------------------
// Writes

/**
 * Creates an Open estimate assigned to the caller (spec 4.3 create): the number comes from the
 * account's estimate sequence in the same transaction as the estimate, its lines, the counts
 * and the customer's `document_count`, so a refused or failed request consumes no number.
 */
export async function createEstimate(principal: Principal, input: EstimateCreateBody, completion: IdempotencyCompletion | undefined): Promise<EstimateResult> {
  requireDocumentPermission(principal, "estimates.modify", "creating estimates");
  const now = nowIso();
  const { plan, problems } = await planEstimate(principal, { mode: "create", input }, now, false);
  throwProblems(problems);
  const { header: base, lines, encoded, customer, references } = plan!;
  const numbered = (number: number): DocumentItem => ({ ...base, number, numberKey: numberKeyOf(number) });
  const { number, cancellation } = await allocateNumber(principal.accountId, "estimate", (number, claim) =>
    writeTransaction(
      (tx) => {
        const header = numbered(number);
        claim(tx, { count: 1 });
        addDocumentWrite(tx, { header, lines: encoded! });
        addAssigneeCount(tx, header, 1);
        addDocumentActivity(tx, { accountId: principal.accountId, partyId: customer.partyId }, { documents: 1 }, { requireActive: true });
        checkReferences(tx, principal.accountId, references);
      },
      { completion: withEtag(completion, base.revision), body: presentEstimate(principal, numbered(number), lines, { now }) },
    ),
  );
  if (cancellation) mapWriteFailures(cancellation, customer.partyId);
  return result(principal, numbered(number), lines, now);
}

/**
 * Updates an Open estimate (spec 4.3 update): partial; `lines` is the complete set of non-discount
 * lines; changing the customer needs `lines`; optional `If-Match` (stale: 409
 * `mobile_mutation_conflict`, nothing changes). Declined, expired and closed (converted)
 * estimates are 409 `estimate_update_not_allowed`.
 */
export async function updateEstimate(
  principal: Principal,
  id: string,
  input: EstimateUpdateBody,
  ifMatchHeader: string | undefined,
  completion: IdempotencyCompletion | undefined,
): Promise<EstimateResult> {
  requireDocumentPermission(principal, "estimates.modify", "changing estimates");
  const ifMatch = parseIfMatch(ifMatchHeader);
  return retrying(
    "update estimate",
    async () => {
      const tree = await visibleEstimate(principal, id);
      const previous = tree.header;
      assertRevision(ifMatch, previous.revision);
      const now = nowIso();
      const { plan, problems } = await planEstimate(principal, { mode: "update", input, tree }, now, false);
      throwProblems(problems);
      const { header: next, lines, encoded, customer, customerChanged, references } = plan!;
      // Sent back as read: nothing to write (revision and updated_at stay).
      if (changesNothing(previous, next, tree.lines, lines)) return result(principal, previous, tree.lines, now);
      const response = result(principal, next, lines, now);
      const cancellation = await writeTransaction(
        (tx) => {
          addDocumentWrite(tx, { header: next, lines: encoded, previous, condition: stillOpen(now) });
          if (customerChanged) {
            addDocumentActivity(tx, { accountId: principal.accountId, partyId: customer.partyId }, { documents: 1 }, { requireActive: true });
            tx.add("old customer", tx.entities.party.patch({ accountId: principal.accountId, partyId: previous.partyId! }).add({ documentCount: -1 }).commit());
          }
          checkReferences(tx, principal.accountId, references);
        },
        { completion: withEtag(completion, next.revision), body: response.body },
      );
      if (!cancellation) return response;
      if (cancellation.failed(DOCUMENT_LABEL)) return RETRY; // changed meanwhile: read again (state and If-Match decide)
      return mapWriteFailures(cancellation, customer.partyId);
    },
    undefined,
    [documentLock(principal.accountId, id)],
  );
}

/**
 * Previews a create (`existing` absent) or an update: the same plan as the write, nothing
 * written, no number taken, no change marker. Answers 200 with the canonical estimate (null
 * when the customer or an item cannot be resolved), `errors` (every refusal the write would
 * answer, with its code and param) and `warnings`. An existing estimate's preview needs
 * `If-Match` with its current revision: missing 428 `estimate_revision_required`, stale 409
 * `mobile_mutation_conflict`.
 */
export async function previewEstimate(
  principal: Principal,
  input: EstimateCreateBody | EstimateUpdateBody,
  existing?: { id: string; ifMatch: string | undefined },
): Promise<Record<string, unknown>> {
  requireDocumentPermission(principal, "estimates.modify", "previewing estimates");
  const now = nowIso();
  let planned: Planned;
  let storedLineIds = new Set<string>();
  let storedUpdatedAt: string | undefined;
  if (existing) {
    const tree = await visibleEstimate(principal, existing.id);
    const expected = parseIfMatch(existing.ifMatch);
    if (expected === undefined) {
      throw errors.revisionRequired("estimate_revision_required", "Previewing changes to an estimate requires If-Match with its current revision (ETag).");
    }
    assertRevision(expected, tree.header.revision);
    storedLineIds = new Set(tree.lines.map((line) => line.id));
    storedUpdatedAt = tree.header.updatedAt;
    planned = await planEstimate(principal, { mode: "update", input: input as EstimateUpdateBody, tree }, now, true);
  } else {
    planned = await planEstimate(principal, { mode: "create", input: input as EstimateCreateBody }, now, true);
  }
  const { plan, problems, warnings } = planned;
  const problem = ({ code, message, param }: Problem) => ({ code, message, param: param ?? null });
  return {
    object: "estimate_preview",
    // Nothing is stored: an existing estimate keeps its updated_at.
    estimate: plan
      ? presentEstimate(principal, storedUpdatedAt ? { ...plan.header, updatedAt: storedUpdatedAt } : plan.header, plan.lines, {
          now,
          preview: { storedLineIds, isNew: !existing },
        })
      : null,
    errors: problems.map(problem),
    warnings: warnings.map(problem),
  };
}

/**
 * Declines an Open, unconverted estimate (spec 3.3 and 4.3 decline): status 7, lines kept; a
 * Declined estimate is returned unchanged (a safe repeat); any other state is 409
 * `estimate_decline_not_allowed`. Needs estimates.list and estimates.modify.
 */
export async function declineEstimate(
  principal: Principal,
  id: string,
  ifMatchHeader: string | undefined,
  completion: IdempotencyCompletion | undefined,
): Promise<EstimateResult> {
  requireDocumentPermission(principal, "estimates.list", "declining estimates");
  requireDocumentPermission(principal, "estimates.modify", "declining estimates");
  const ifMatch = parseIfMatch(ifMatchHeader);
  return retrying(
    "decline estimate",
    async () => {
      const tree = await visibleEstimate(principal, id);
      const previous = tree.header;
      const now = nowIso();
      const status = effectiveStatus(previous, now);
      if (status === "declined") return result(principal, previous, tree.lines, now);
      assertRevision(ifMatch, previous.revision);
      if (status !== "open") {
        throw errors.stateConflict(
          "estimate_decline_not_allowed",
          `Only Open estimates can be declined; this one is ${ESTIMATE_STATUS[status].label}${previous.convertedTo ? " (converted)" : ""}.`,
        );
      }
      const next: DocumentItem = {
        ...previous,
        status: "declined",
        statusId: ESTIMATE_STATUS.declined.id,
        revision: newRevision("est"),
        updatedAt: nextTimestamp(previous.updatedAt),
      };
      const response = result(principal, next, tree.lines, now);
      const cancellation = await writeTransaction((tx) => addDocumentWrite(tx, { header: next, previous, condition: stillOpen(now) }), {
        completion: withEtag(completion, next.revision),
        body: response.body,
      });
      return cancellation ? RETRY : response;
    },
    undefined,
    [documentLock(principal.accountId, id)],
  );
}

/**
 * Deletes an Open, unconverted estimate with its lines (spec 4.3 delete; architecture section 8
 * response `{id, object: "estimate", deleted: true}`), with the counts and the customer's
 * `document_count`. Any other state is 409 `estimate_delete_not_allowed`.
 */
export async function deleteEstimate(
  principal: Principal,
  id: string,
  ifMatchHeader: string | undefined,
  completion: IdempotencyCompletion | undefined,
): Promise<{ id: string; object: "estimate"; deleted: true }> {
  requireDocumentPermission(principal, "estimates.modify", "deleting estimates");
  const ifMatch = parseIfMatch(ifMatchHeader);
  const body = { id, object: "estimate" as const, deleted: true as const };
  return retrying(
    "delete estimate",
    async () => {
      const tree = await visibleEstimate(principal, id);
      const header = tree.header;
      assertRevision(ifMatch, header.revision);
      const now = nowIso();
      const status = effectiveStatus(header, now);
      if (status !== "open") {
        throw errors.stateConflict(
          "estimate_delete_not_allowed",
          `Only Open estimates that were not converted can be deleted; this one is ${ESTIMATE_STATUS[status].label}${header.convertedTo ? " (converted)" : ""}.`,
        );
      }
      const cancellation = await writeTransaction(
        (tx) => {
          addDocumentDelete(tx, tree as unknown as DocumentTree, stillOpen(now));
          addKindCountDecrement(tx, tree.header);
          addAssigneeCount(tx, header, -1);
          addDocumentActivity(tx, { accountId: principal.accountId, partyId: header.partyId! }, { documents: -1 });
        },
        { completion, body },
      );
      if (!cancellation) return body;
      if (cancellation.failed(DOCUMENT_LABEL)) return RETRY;
      throw errors.internal(new Error(`estimate delete failed: ${cancellation.labels.join(", ")}`));
    },
    undefined,
    [documentLock(principal.accountId, id)],
  );
}

// ---------------------------------------------------------------------------------------------
// Conversion (used by the invoice and sales-order writers: ONE transaction with the new document)

export type ConversionKind = "invoice" | "sales_order";

/** The document an estimate was converted into (`converted_document`). */
export interface ConvertedDocument {
  kind: ConversionKind;
  id: string;
  number: number;
}

/** A line of the estimate in the shape a new document's line takes (a fresh `id`; amounts as priced on the estimate). */
export type ConvertibleLine = EstimateLine & { lineType: "inventory" | "service"; sourceLineId: string };

export interface EstimateConversionSource {
  /** The estimate as read: `addEstimateConversion` is conditioned on this revision. */
  estimate: DocumentItem;
  /**
   * Header values a new sales document copies (DocumentItem attribute names: spread them into
   * the new header): customer, salesperson, details, shipping, discount, totals, item ids.
   * Custom-field values are not copied (custom fields belong to one record kind).
   */
  header: Pick<
    DocumentItem,
    | "partyId"
    | "partyName"
    | "partyKind"
    | "assignedUserId"
    | "name"
    | "purchaseOrderNumber"
    | "attention"
    | "shippingAddress"
    | "publicNote"
    | "paymentTerms"
    | "issueDate"
    | "expiryDate"
    | "shippingFee"
    | "shippingCost"
    | "discountPercent"
    | "subtotal"
    | "preDiscountTotal"
    | "discountTotal"
    | "tax"
    | "tax2"
    | "total"
    | "itemIds"
  >;
  /** The non-discount lines in stored order; re-pricing them with `discountPercent` regenerates the discount line and the same totals. */
  lines: ConvertibleLine[];
}

const conversionCode: Record<ConversionKind, ErrorCode> = {
  invoice: "estimate_conversion_not_allowed",
  sales_order: "estimate_sales_order_conversion_not_allowed",
};

/**
 * Reads a visible estimate for conversion into `kind` and returns its values in a new
 * document's shape. Only an Open (unexpired), unconverted estimate converts: otherwise 409
 * `estimate_conversion_not_allowed` (invoice) or `estimate_sales_order_conversion_not_allowed`.
 * Needs estimates.modify (the caller checks the target kind's permissions).
 */
export async function readEstimateForConversion(
  principal: Principal,
  estimateId: string,
  kind: ConversionKind,
  now: string = nowIso(),
): Promise<EstimateConversionSource> {
  requireDocumentPermission(principal, "estimates.modify", "converting estimates");
  const tree = await visibleEstimate(principal, estimateId);
  return conversionSource(tree.header, tree.lines, kind, now);
}

/** `readEstimateForConversion` without the read (pure). */
export function conversionSource(header: DocumentItem, lines: readonly EstimateLine[], kind: ConversionKind, now: string): EstimateConversionSource {
  const status = effectiveStatus(header, now);
  if (status !== "open" || header.convertedTo) {
    throw errors.stateConflict(
      conversionCode[kind],
      `Only an Open estimate that was not converted can be converted; this one is ${ESTIMATE_STATUS[status].label}${header.convertedTo ? " (converted)" : ""}.`,
    );
  }
  const h = header;
  return {
    estimate: header,
    header: {
      partyId: h.partyId,
      partyName: h.partyName,
      partyKind: h.partyKind,
      assignedUserId: h.assignedUserId,
      name: h.name,
      purchaseOrderNumber: h.purchaseOrderNumber,
      attention: h.attention,
      shippingAddress: h.shippingAddress,
      publicNote: h.publicNote,
      paymentTerms: h.paymentTerms,
      issueDate: h.issueDate,
      expiryDate: h.expiryDate,
      shippingFee: h.shippingFee,
      shippingCost: h.shippingCost,
      discountPercent: h.discountPercent,
      subtotal: h.subtotal,
      preDiscountTotal: h.preDiscountTotal,
      discountTotal: h.discountTotal,
      tax: h.tax,
      tax2: h.tax2,
      total: h.total,
      itemIds: h.itemIds,
    },
    lines: lines
      .filter((line): line is EstimateLine & { lineType: "inventory" | "service" } => line.lineType !== "discount")
      .map((line) => ({ ...line, id: randomUUID(), sourceLineId: line.id })),
  };
}

/** The label of the estimate's close in the conversion's transaction (failed: the estimate changed; read again). */
export const ESTIMATE_CONVERSION_LABEL = "estimate conversion";

/**
 * Adds "close this estimate as converted to `target`" to the caller's transaction (the one that
 * creates the invoice or sales order): status Closed (6), `converted_document`, a new revision,
 * on condition that the estimate is still at the revision read, Open, unexpired and unconverted.
 * Lines stay as they are. Returns the closed header.
 */
export function addEstimateConversion(tx: TransactionBuilder, estimate: DocumentItem, target: ConvertedDocument, now: string = nowIso()): DocumentItem {
  const closed: DocumentItem = {
    ...estimate,
    status: "closed",
    statusId: ESTIMATE_STATUS.closed.id,
    convertedTo: { kind: target.kind, id: target.id, number: target.number },
    revision: newRevision("est"),
    updatedAt: nextTimestamp(estimate.updatedAt),
  };
  const listing = documentListing(closed);
  tx.add(
    ESTIMATE_CONVERSION_LABEL,
    tx.entities.document
      .patch({ accountId: estimate.accountId, documentId: estimate.documentId })
      .set({
        status: closed.status,
        statusId: closed.statusId,
        convertedTo: closed.convertedTo,
        revision: closed.revision,
        updatedAt: closed.updatedAt,
        // Its list entries move with the status (lib/db/listing.ts).
        lx2pk: listing.lx2pk,
        lxf: listing.lxf,
      })
      .where(
        (a, op) =>
          `${op.eq(a.revision, estimate.revision)} AND ${op.eq(a.status, "open")} AND ${op.gt(a.expiryInstant, now)} AND ${op.notExists(a.convertedTo)}`,
      )
      .commit(),
  );
  return closed;
}
