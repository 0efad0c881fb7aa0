import { seesOwnedBy } from "../../common/ownership.js";
import { laterUpdatedAt } from "../../../core/clock.js";
import { encodeDocumentLines, type EncodedLines } from "../../../db/document-lines.js";
import {
  inventoryLineIds,
  inventoryLineName,
  itemSnapshot,
  keepsItem,
  keptUnitCost,
  sentOrKeptRow,
  sentOrKeptVariation,
  defaultUnitCost,
  defaultUnitPrice,
} from "../line-values.js";
import { accountToday, documentTextFields, localToday, matchReplacementLines } from "../rules.js";
import { ApiError, referenceDetail } from "../../../core/errors.js";
import { DocumentTooLargeError } from "../../../core/failures.js";
import { randomUUID } from "node:crypto";
import { defaultLocationOf, hasPermission, type Principal } from "../../../auth/permissions.js";
import type { DocumentTree } from "../../../db/documents.js";
import { queryLocations, readLocations } from "../../../db/locations.js";
import { readParty } from "../../../db/parties.js";
import { missingReferences, type Reference } from "../../../db/references.js";
import type { AccountItem, DocumentItem, PartyItem } from "../../../db/service.js";
import type { EstimateCreateBody, EstimateLineBody, EstimateUpdateBody } from "../../../schemas/estimates.js";
import { MAX_ESTIMATE_LINES } from "../../../schemas/estimates.js";
import { customFieldWrite } from "../../common/custom-field-values.js";
import { mayReachLocation, outsideLocationDetail } from "../../common/location-access.js";
import { money, rate } from "../../common/money.js";
import { newRevision } from "../../common/revisions.js";
import { accountSettings } from "../documents.js";
import { resolveLineItems, type ResolvedLineItem } from "../lines.js";
import { storedPartyName } from "../party-details.js";
import { freshHeader, setListFields } from "../stock/model.js";
import {
  ESTIMATE_STATUS,
  UNPRICED_AMOUNTS,
  addDays,
  effectiveStatus,
  expiryInstantAt,
  priceEstimate,
  stateLabel,
  type EstimateLine,
  type EstimateTotals,
} from "./model.js";
import {
  dateProblems,
  detailProblem,
  lineShapeProblems,
  needsLocationCount,
  placementWarnings,
  problemsOf,
  stockWarnings,
  tooLargeProblem,
  type Problem,
} from "./problems.js";

/**
 * A preview's warnings about lines (stock short, a line a conversion could not place), as the
 * caller's conversion would meet them.
 */
async function lineWarnings(principal: Principal, lines: readonly EstimateLine[], resolved: ReadonlyMap<number, ResolvedLineItem>): Promise<Problem[]> {
  const caller = defaultLocationOf(principal);
  // Counted only when a line's placement depends on it (an item never stocked, without a default).
  const activeLocations =
    caller === null && [...resolved.values()].some(needsLocationCount)
      ? (await queryLocations(principal.accountId)).filter((location) => location.active).length
      : undefined;
  return [...stockWarnings(lines, resolved, caller), ...placementWarnings(lines, resolved, caller, activeLocations)];
}

/**
 * A preview that keeps the stored lines (no `lines` sent) warns of them as one that sends them
 * back would: their items read again (an item gone since gives no warning; the write or the
 * conversion says so).
 */
async function storedLineWarnings(principal: Principal, lines: readonly EstimateLine[]): Promise<Problem[]> {
  const requests = lines.flatMap((line, index) =>
    line.lineType === "inventory" && line.itemId ? [{ index, itemId: line.itemId, ivlId: line.ivlId, variationId: line.variationId, keepsItem: true }] : [],
  );
  if (requests.length === 0) return [];
  const resolved = await resolveLineItems(principal.accountId, undefined, requests, { byVariation: true }).catch((error: unknown) => {
    if (error instanceof ApiError && error.statusCode < 500) return undefined;
    throw error;
  });
  return resolved ? lineWarnings(principal, lines, resolved) : [];
}

/**
 * Planning an estimate's create, update or preview (spec 4.3): reads what the estimate names,
 * collects every problem, and builds the priced lines and the next header. Nothing is written.
 */

export type EstimateTree = Omit<DocumentTree, "lines"> & { lines: EstimateLine[] };

export interface EstimatePlan {
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

export interface Planned {
  plan?: EstimatePlan;
  problems: Problem[];
  warnings: Problem[];
}

export type PlanRequest = { mode: "create"; input: EstimateCreateBody } | { mode: "update"; input: EstimateUpdateBody; tree: EstimateTree };

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

/**
 * The customer or prospect an estimate names: a customer or prospect of the account; `isNew` (a
 * create, or a changed `customer_id`) also needs it visible to the user and active. An unchanged
 * one stays as it is: a user who may edit the estimate keeps its customer, whoever owns it, as
 * invoices and sales orders do.
 */
function customerProblems(principal: Principal, party: PartyItem | undefined, isNew: boolean): Problem[] {
  const visible = party && (!isNew || seesOwnedBy(principal, party.ownerUserId));
  if (!party || !visible || party.kind === "supplier")
    return [detailProblem(referenceDetail("customer_id", "is not a visible customer or prospect of this account."))];
  if (isNew && party.archived) return [{ status: 422, param: "customer_id", code: "archived", message: `is an archived ${party.kind}.` }];
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
      ...UNPRICED_AMOUNTS,
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
      ...inventoryLineIds(item, variation, row),
      locationId: row?.locationId,
      locationName: row ? names.get(row.locationId) : undefined,
      // A refused name (reported as a problem) still shows the item's in a preview.
      name: nameOr(inventoryLineName(index, line.name, item, kept[index]), item.name),
      description: line.description === undefined ? item.description : line.description || undefined,
      quantity: item.inventoryType === "unique" ? 1 : (line.quantity ?? 1),
      unitPrice: money(line.unit_price ?? defaultUnitPrice(item, variation)),
      unitCost: keptUnitCost(item.itemId, variation.variationId, kept[index]) ?? money(defaultUnitCost(item, variation)),
      ...itemSnapshot(item, variation),
    };
  });
}

/**
 * Plans a create or an update of an estimate: reads the account, the customer and the items,
 * checks every rule of spec 4.3 and builds the priced lines and the next header. Nothing is
 * written. `preview` also checks the custom-field references by reading them (a write checks
 * them in its transaction) and computes warnings.
 */
export async function planEstimate(principal: Principal, request: PlanRequest, now: string, preview: boolean): Promise<Planned> {
  const { input } = request;
  const previous = request.mode === "update" ? request.tree.header : undefined;
  const problems: Problem[] = [];
  const warnings: Problem[] = [];

  const status = previous ? effectiveStatus(previous, now) : "open";
  // Warnings about a conversion concern an estimate that can still be converted (an Open one).
  const convertible = status === "open";
  if (previous) {
    if (status !== "open") {
      problems.push({
        status: 409,
        code: "estimate_update_not_allowed",
        message: `Only Open estimates can be updated; this one is ${stateLabel(previous, status)}.`,
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
    line.item_id === undefined
      ? []
      : [
          {
            index,
            itemId: line.item_id,
            ivlId: sentOrKeptRow(line.item_variation_location_id, kept[index], line.item_id, line.item_variation_id),
            variationId: sentOrKeptVariation(line.item_variation_id, line.item_variation_location_id, kept[index], line.item_id),
            keepsItem: keepsItem(kept[index], line.item_id),
          },
        ],
  );
  const [account, customer, resolved, referenceProblems] = await Promise.all([
    accountSettings(principal.accountId),
    readParty(principal.accountId, customerId),
    resolveLineItems(principal.accountId, undefined, itemRequests, { byVariation: true }).catch((error: unknown) => {
      problems.push(...problemsOf(error));
      return undefined;
    }),
    preview && customFields ? missingReferences(principal.accountId, customFields.references) : Promise.resolve([]),
  ]);
  problems.push(...referenceProblems.map(detailProblem));
  // A new customer must be visible and active; an unchanged one may have been archived or left the user's view since (the estimate stays editable).
  const customerIssues = customerProblems(principal, customer, previous === undefined || customerChanged);
  problems.push(...customerIssues);
  for (const [index, found] of resolved ?? []) {
    // A unique item sold since stays on the line that keeps it; a new line cannot offer it.
    if (found.item.sold && !keepsItem(kept[index], found.item.itemId))
      problems.push({ status: 422, param: `lines[${index}].item_id`, code: "sold", message: "is a sold unique item." });
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
    // The stored expiry date sent back unchanged is not a new one (what was read can be written back).
    expiryGiven: input.expiry_date !== undefined && input.expiry_date !== previous?.expiryDate,
  });
  problems.push(...dates.problems);
  warnings.push(...dates.warnings);

  if (!customer || customerIssues.some((p) => p.code === "invalid_reference") || (lineInput && !resolved)) return { problems, warnings };

  // Lines: the request's complete list, or (update without lines) the stored ones re-priced.
  let lines: EstimateLine[];
  if (lineInput) {
    const names = await locationNames(principal.accountId, resolved!.values());
    lines = buildLines(lineInput, kept, resolved!, customer, names);
    if (preview && convertible) warnings.push(...(await lineWarnings(principal, lines, resolved!)));
  } else {
    lines = request.mode === "update" ? request.tree.lines : [];
    if (preview && convertible) warnings.push(...(await storedLineWarnings(principal, lines)));
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
    problems.push(tooLargeProblem(error));
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
    ? { ...previous, ...set, revision: newRevision("est"), updatedAt: laterUpdatedAt(previous.updatedAt) }
    : ({
        ...freshHeader({
          accountId: principal.accountId,
          documentId: randomUUID(),
          kind: "estimate",
          revision: newRevision("est"),
          status: "open",
          statusId: ESTIMATE_STATUS.open.id,
          assignedUserId: principal.userId,
          now: options.now,
        }),
        ...set,
        // The account's terms when omitted (a blank account setting is none).
        paymentTerms: set.paymentTerms ?? (account.paymentTerms || undefined),
        shippingCost: set.shippingCost ?? "0.0000",
      } as DocumentItem);
  for (const attribute of options.cleared) delete (base as Record<string, unknown>)[attribute];
  const next: DocumentItem = {
    ...base,
    partyId: customer.partyId,
    partyName: storedPartyName(base, customer),
    partyKind: customer.kind,
    issueDate: options.issueDate,
    expiryDate: options.expiryDate,
    expiryInstant: expiryInstantAt(options.expiryDate, account.timeZone, options.now, previous),
    discountPercent: options.discountPercent,
    ...options.totals,
  };
  return setListFields(next, options.lines);
}

/** The name a line takes, or `fallback` when it was refused. */
function nameOr(named: { name: string } | { detail: unknown }, fallback: string): string {
  return "name" in named ? named.name : fallback;
}
