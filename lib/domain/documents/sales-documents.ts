import { CustomerChangedError, RecordLimitError, StockRuleError } from "../../core/failures.js";
import { randomUUID } from "node:crypto";
import { Decimal } from "decimal.js";
import { hasPermission, locationRestriction, type Principal } from "../../auth/permissions.js";
import { mayReachLocation, outsideLocationDetail } from "../common/location-access.js";
import { errors, type ValidationDetail } from "../../core/errors.js";
import type { IdempotencyCompletion } from "../../core/idempotency.js";
import { addDocumentWrite, numberKeyOf, type StoredLine } from "../../db/documents.js";
import type { DocumentKind } from "../../db/entities/document.js";
import { readItems, readVariations } from "../../db/items.js";
import { readLocations } from "../../db/locations.js";
import { addDocumentActivity, readParty, type DocumentActivity } from "../../db/parties.js";
import { checkReferences, referenceDetail, referenceDetails, type Reference } from "../../db/references.js";
import { allocateNumber } from "../../db/sequences.js";
import type { AccountItem, DocumentItem, LocationItem, PartyItem } from "../../db/service.js";
import type { Cancellation, TransactionBuilder } from "../../db/transactions.js";
import type { SalesLineBody } from "../../schemas/sales-documents.js";
import { computeTotals } from "./totals.js";
import { inventoryLineName, isKeptUnitPrice, keptUnitCost, defaultUnitCost, defaultUnitPrice, resolveLineItems, skuOf } from "./lines.js";
import { addAssigneeCount, withEtag } from "./documents.js";
import type { LedgerSource, StockChange } from "../inventory/ledger-plan.js";
import { addQuantities } from "../inventory/math.js";
import { money, rate } from "../common/money.js";
import { partyDetailsOf } from "./party-details.js";
import { prepareStock, type RowIdOf } from "../inventory/stock-holds.js";

/**
 * What sales orders and invoices share (spec part 2, sections 2.4, 2.5, 4.4, 4.5; architecture
 * sections 4, 5 and 8): the customer they name, their lines (item and customer defaults, the
 * stock row each inventory line sells from, prices, the generated discount line), their totals
 * and fulfilment percentages, their stock effects, and the numbered create that writes a
 * document, its stock, its counters and its customer's figures in ONE transaction.
 */

/** A stored line of a sales order or an invoice (`lib/db/documents.ts` packs them into pages). */
export interface SalesLine extends StoredLine {
  lineType: "inventory" | "service" | "discount";
  itemId?: string;
  variationId?: string;
  /** The stock row the line sells from (set once the row exists). */
  ivlId?: number;
  locationId?: string;
  /** The location's name when the line was last written (a current related value, refreshed on writes). */
  locationName?: string;
  /** A unique (serialised) item: quantity 1, sold by an invoice. */
  unique?: boolean;
  name: string;
  description?: string;
  quantity: number;
  /** Sales orders: the quantity invoiced so far (0 on invoices). */
  quantityInvoiced: number;
  quantityPacked: number;
  quantityShipped: number;
  /** Invoices created from a sales order: the order's line. */
  salesOrderLineId?: string;
  unitPrice: string;
  /** The unit cost snapshot (null on discount lines). */
  unitCost: string | null;
  discountPercent: string;
  taxRate: string;
  tax2Rate: string;
  unitId?: number;
  unitName?: string;
  sku?: string;
  variationValues: Record<string, string>;
  variationNumber?: number;
  thumbnailUrl?: string;
  discountedUnitPrice: string | null;
  subtotal: string;
}

export interface SalesContext {
  principal: Principal;
  account: AccountItem;
  customer: PartyItem;
  /** The document's own location (sales orders), when it has one. */
  location?: LocationItem;
}

// ---------------------------------------------------------------------------------------------
// Customer

/**
 * The customer a document names: an active (not archived) customer of the account that the
 * caller may see (`records.view_all`, else one they own). Prospects only when `allowProspect`
 * (estimate conversions). 422 naming `param` otherwise.
 */
export async function readCustomer(
  principal: Principal,
  customerId: string,
  options: { param?: string; allowProspect?: boolean; unchanged?: boolean } = {},
): Promise<PartyItem> {
  const param = options.param ?? "customer_id";
  const party = await readParty(principal.accountId, customerId);
  const visible = party && (hasPermission(principal, "records.view_all") || party.ownerUserId === principal.userId);
  const kindOk = party && (party.kind === "customer" || (options.allowProspect === true && party.kind === "prospect"));
  // An update that keeps its customer does not re-judge it: archived or reassigned since, it stays.
  if (!party || (!options.unchanged && (!visible || !kindOk)))
    throw errors.validationFailed([referenceDetail(param, "is not a visible customer of this account.")]);
  if (party.archived && !options.unchanged) throw errors.validationFailed([{ param, code: "archived", message: "is an archived customer." }]);
  return party;
}

// ---------------------------------------------------------------------------------------------
// Lines

/**
 * One requested line, from an API request or a conversion draft. Absent values take the
 * defaults: the item's name, description, selling price and unit cost; the customer's tax rates.
 */
export interface LineSpec {
  /** Position in the request's `lines` (error paths). */
  index: number;
  /** The stored line this one keeps (its id and fulfilment quantities). */
  kept?: SalesLine;
  itemId?: string;
  ivlId?: number;
  name?: string;
  /** A request's `name` on an inventory line: accepted only as read (`inventoryLineName`). */
  sentName?: string;
  /** undefined: the item's description; null or "": none. */
  description?: string | null;
  quantity?: number;
  unitPrice?: string;
  unitCost?: string;
  discountPercent?: string;
  taxRate?: string;
  tax2Rate?: string;
}

/**
 * Request lines as specs (spec 4.4 and 4.5 lines): service lines need `name` and `unit_price`
 * and take no `item_variation_location_id`; inventory lines take their name from the item.
 * `unit_price` on an inventory line needs `prices.modify`: `inventoryPrice` says what happens
 * without it: `ignore` (sales orders: "the item's current selling price applies unless
 * unit_price is given and the user may modify selling prices") or `forbid` (invoices, which
 * follow the estimate rule "allowed only when the user may modify selling prices": 403
 * `permission_denied`).
 */
export function lineSpecsOf(
  principal: Principal,
  input: readonly SalesLineBody[],
  kept: readonly (SalesLine | undefined)[],
  inventoryPrice: "ignore" | "forbid",
): LineSpec[] {
  const details: ValidationDetail[] = [];
  const mayPrice = hasPermission(principal, "prices.modify");
  input.forEach((line, index) => {
    if (line.item_id === undefined) {
      if (line.name === undefined) details.push({ param: `lines[${index}].name`, code: "required", message: "is required on a service line." });
      if (line.unit_price === undefined) details.push({ param: `lines[${index}].unit_price`, code: "required", message: "is required on a service line." });
      if (line.item_variation_location_id !== undefined) {
        details.push({ param: `lines[${index}].item_variation_location_id`, code: "invalid", message: "belongs to inventory lines (with item_id)." });
      }
    }
  });
  if (details.length > 0) throw errors.validationFailed(details);
  // An inventory line's own price sent back as read needs no permission (it changes nothing).
  const keepsPrice = (line: SalesLineBody, index: number) =>
    line.item_id !== undefined && line.unit_price !== undefined && isKeptUnitPrice(money(line.unit_price), line.item_id, kept[index]);
  if (inventoryPrice === "forbid" && !mayPrice) {
    const index = input.findIndex((line, i) => line.item_id !== undefined && line.unit_price !== undefined && !keepsPrice(line, i));
    if (index >= 0)
      throw errors.permissionDenied(`lines[${index}].unit_price: setting the selling price of an inventory line requires the prices.modify permission.`);
  }
  return input.map((line, index) => ({
    index,
    kept: kept[index],
    itemId: line.item_id,
    ivlId: line.item_variation_location_id,
    name: line.item_id === undefined ? line.name : undefined,
    sentName: line.item_id === undefined ? undefined : line.name,
    description: line.description,
    quantity: line.quantity,
    unitPrice: line.unit_price === undefined || (line.item_id !== undefined && !mayPrice && !keepsPrice(line, index)) ? undefined : money(line.unit_price),
    taxRate: line.tax_rate === undefined ? undefined : rate(line.tax_rate),
    tax2Rate: line.tax_2_rate === undefined ? undefined : rate(line.tax_2_rate),
  }));
}

/**
 * Builds stored lines from specs. Each inventory line sells from one stock row: the given
 * `item_variation_location_id`, else the item's row at the document's location, else at the
 * user's assigned location, else at the item's default location, else its only row (an item
 * stocked at several locations needs the row named). A location-restricted user may only name
 * rows at their location; the location must be active. A kept line keeps its id and its
 * fulfilment quantities: its item cannot change once it has any, nor its quantity drop below them.
 */
export async function buildSalesLines(context: SalesContext, specs: readonly LineSpec[]): Promise<SalesLine[]> {
  const { principal, customer } = context;
  const restriction = locationRestriction(principal);
  const details: ValidationDetail[] = [];
  for (const spec of specs) {
    const kept = spec.kept;
    if (!kept) continue;
    const floor = Math.max(kept.quantityPacked, kept.quantityInvoiced);
    if (floor > 0 && (kept.itemId ?? null) !== (spec.itemId ?? null)) {
      details.push({ param: `lines[${spec.index}].item_id`, code: "invalid", message: "cannot change on a line that has packed or invoiced quantities." });
    } else if (floor > 0 && new Decimal(spec.quantity ?? 1).lt(floor)) {
      details.push({
        param: `lines[${spec.index}].quantity`,
        code: "too_small",
        message: `cannot be below the line's packed or invoiced quantity (${floor}).`,
      });
    }
  }
  if (details.length > 0) throw errors.validationFailed(details);
  const resolved = await resolveLineItems(
    principal.accountId,
    context.location?.locationId,
    specs.flatMap((spec) => (spec.itemId === undefined ? [] : [{ index: spec.index, itemId: spec.itemId, ivlId: spec.ivlId }])),
    { locationLabel: "order's" },
  );
  // The row each inventory line sells from.
  const rows = new Map<number, { locationId: string; ivlId?: number }>();
  for (const spec of specs) {
    const found = resolved.get(spec.index);
    if (!found) continue;
    let row = found.row;
    let locationId = row?.locationId ?? context.location?.locationId ?? restriction ?? found.item.locationId;
    if (!row && locationId) row = found.rows.find((r) => r.locationId === locationId);
    if (!locationId) {
      if (found.rows.length !== 1) {
        details.push({
          param: `lines[${spec.index}].item_variation_location_id`,
          code: "required",
          message:
            found.rows.length === 0
              ? "is required: the item has no stock location and no default location."
              : "is required: the item is stocked at several locations.",
        });
        continue;
      }
      row = found.rows[0]!;
      locationId = row.locationId;
    }
    if (!mayReachLocation(principal, locationId)) {
      details.push(outsideLocationDetail(`lines[${spec.index}].${spec.ivlId === undefined ? "item_id" : "item_variation_location_id"}`));
      continue;
    }
    rows.set(spec.index, { locationId, ivlId: row?.ivlId });
  }
  if (details.length > 0) throw errors.validationFailed(details);
  const locationIds = [...new Set([...rows.values()].map((row) => row.locationId))];
  // Every location the lines sell from, in one BatchGetItem (the document's own is known).
  const known = context.location ? [context.location] : [];
  const read = await readLocations(
    principal.accountId,
    locationIds.filter((id) => id !== context.location?.locationId),
  );
  const locations = new Map([...known, ...read].map((l) => [l.locationId, l] as const));
  for (const spec of specs) {
    const found = resolved.get(spec.index);
    if (found && spec.sentName !== undefined) {
      const named = inventoryLineName(spec.index, spec.sentName, found.item, spec.kept);
      if ("detail" in named) details.push(named.detail);
    }
    const row = rows.get(spec.index);
    if (row && !locations.get(row.locationId)?.active) {
      details.push(
        referenceDetail(
          `lines[${spec.index}].${spec.ivlId === undefined ? "item_id" : "item_variation_location_id"}`,
          "is stocked at a location that is not active.",
        ),
      );
    }
  }
  if (details.length > 0) throw errors.validationFailed(details);

  return specs.map((spec): SalesLine => {
    const kept = spec.kept;
    const base = {
      id: kept?.id ?? randomUUID(),
      quantityInvoiced: kept?.quantityInvoiced ?? 0,
      quantityPacked: kept?.quantityPacked ?? 0,
      quantityShipped: kept?.quantityShipped ?? 0,
      ...(kept?.salesOrderLineId ? { salesOrderLineId: kept.salesOrderLineId } : {}),
      discountPercent: spec.discountPercent ?? "0.000",
      taxRate: spec.taxRate ?? rate(customer.taxRate1 ?? 0),
      tax2Rate: spec.tax2Rate ?? rate(customer.taxRate2 ?? 0),
      discountedUnitPrice: null,
      subtotal: "0.0000",
    };
    const found = resolved.get(spec.index);
    if (!found) {
      return {
        ...base,
        lineType: "service",
        name: spec.name!,
        description: spec.description || undefined,
        quantity: spec.quantity ?? 1,
        unitPrice: spec.unitPrice ?? "0.0000",
        unitCost: spec.unitCost ?? "0.0000",
        variationValues: {},
      };
    }
    const { item, variation } = found;
    const row = rows.get(spec.index)!;
    const unique = item.inventoryType === "unique";
    return {
      ...base,
      lineType: "inventory",
      itemId: item.itemId,
      variationId: variation.variationId,
      ivlId: row.ivlId,
      locationId: row.locationId,
      locationName: locations.get(row.locationId)?.name,
      ...(unique ? { unique: true } : {}),
      name: spec.name ?? (inventoryLineName(spec.index, spec.sentName, item, kept) as { name: string }).name,
      // null or blank ("") clears the description; omitting it takes the item's current one.
      description: spec.description === undefined ? item.description : spec.description || undefined,
      quantity: unique ? 1 : (spec.quantity ?? 1),
      unitPrice: spec.unitPrice ?? money(defaultUnitPrice(item, variation)),
      unitCost: spec.unitCost ?? keptUnitCost(item.itemId, variation.variationId, kept) ?? money(defaultUnitCost(item, variation)),
      unitId: item.unitId,
      unitName: item.unitName,
      sku: skuOf(item, variation),
      variationValues: (variation.values ?? {}) as Record<string, string>,
      variationNumber: variation.variationNumber,
    };
  });
}

/** The totals a header stores (spec part 2; architecture section 4, money). */
export interface SalesTotals {
  subtotal: string;
  preDiscountTotal: string;
  discountTotal: string;
  shippingFee: string;
  tax: string;
  tax2: string;
  total: string;
}

/** Prices the lines and appends the generated discount line (keeping its id); returns lines and totals. */
export function priceSalesLines(lines: readonly SalesLine[], discountPercent: string, shippingFee: string): { lines: SalesLine[]; totals: SalesTotals } {
  const items = lines.filter((line) => line.lineType !== "discount");
  const totals = computeTotals(
    items.map((line) => ({
      quantity: line.quantity,
      unitPrice: line.unitPrice,
      discountPercent: line.discountPercent,
      taxRate: line.taxRate,
      tax2Rate: line.tax2Rate,
    })),
    discountPercent,
    shippingFee,
  );
  const priced: SalesLine[] = items.map((line, i) => ({
    ...line,
    subtotal: totals.lines[i]!.subtotal,
    discountedUnitPrice: totals.lines[i]!.discountedUnitPrice,
  }));
  if (totals.discount !== null) {
    const existing = lines.find((line) => line.lineType === "discount");
    priced.push({
      id: existing?.id ?? randomUUID(),
      lineType: "discount",
      name: "Discount",
      quantity: 1,
      quantityInvoiced: 0,
      quantityPacked: 0,
      quantityShipped: 0,
      unitPrice: totals.discount,
      unitCost: null,
      discountPercent: "0.000",
      taxRate: "0.000",
      tax2Rate: "0.000",
      variationValues: {},
      discountedUnitPrice: null,
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

/** Lines with the ids of the stock rows the write created (rows appear with the first stock). */
export const withRowIds = (lines: readonly SalesLine[], rowIdOf: RowIdOf): SalesLine[] =>
  lines.map((line) =>
    line.lineType === "inventory" && line.ivlId === undefined && line.itemId
      ? { ...line, ivlId: rowIdOf(line.itemId, line.variationId!, line.locationId!) }
      : line,
  );

// ---------------------------------------------------------------------------------------------
// Fulfilment progress

/** Lines packing applies to: inventory lines, and service lines with the account's packing-list service-item setting. */
export const isPackable = (line: Pick<SalesLine, "lineType">, serviceItems: boolean): boolean =>
  line.lineType === "inventory" || (line.lineType === "service" && serviceItems);

/** `done` of `of` in percent, two decimals rounded down (so 100 means complete), or null when `of` is 0. */
export function percentOf(done: Decimal.Value, of: Decimal.Value): number | null {
  const whole = new Decimal(of);
  if (whole.isZero()) return null;
  return new Decimal(done).div(whole).times(100).toDecimalPlaces(2, Decimal.ROUND_DOWN).toNumber();
}

const sum = (values: readonly number[]) => addQuantities(...values);

/** Packed, shipped and invoiced percentages of lines (units of packable lines; invoiced over non-discount lines). */
export function progressOf(lines: readonly SalesLine[], serviceItems: boolean) {
  const packable = lines.filter((line) => isPackable(line, serviceItems));
  const sold = lines.filter((line) => line.lineType !== "discount");
  const units = sum(packable.map((line) => line.quantity));
  return {
    packedPercent: percentOf(sum(packable.map((line) => line.quantityPacked)), units),
    shippedPercent: percentOf(sum(packable.map((line) => line.quantityShipped)), units),
    invoicedPercent: percentOf(sum(sold.map((line) => line.quantityInvoiced)), sum(sold.map((line) => line.quantity))),
  };
}

/** A header with its stored percentages (absent = null). */
export function withPercents<T extends Partial<DocumentItem>>(
  header: T,
  percents: { packedPercent?: number | null; shippedPercent?: number | null; invoicedPercent?: number | null },
): T {
  const next = { ...header } as Record<string, unknown>;
  for (const [key, value] of Object.entries(percents)) {
    if (value === null || value === undefined) delete next[key];
    else next[key] = value;
  }
  return next as T;
}

/** The unpacked quantity of a line (0 when packing does not apply to it). */
export const remainingToPack = (line: SalesLine, serviceItems: boolean): number =>
  isPackable(line, serviceItems) ? Math.max(0, addQuantities(line.quantity, -line.quantityPacked)) : 0;

// ---------------------------------------------------------------------------------------------
// Stock effects (architecture section 8): an open sales order reserves its uninvoiced
// inventory quantities at each line's row; an invoice takes its inventory quantities from on
// hand there (a unique item becomes sold); reversals are the same changes with opposite signs.

export type SalesEffect = "reserve" | "sell" | "sell_reserved";

/** The stock change of `quantity` of a line (negative quantity = reversal). */
export function stockChangeOf(line: SalesLine, quantity: number, effect: SalesEffect): StockChange {
  const deltas = effect === "reserve" ? { reserved: quantity } : effect === "sell" ? { onHand: -quantity } : { onHand: -quantity, reserved: -quantity };
  const change: StockChange = { itemId: line.itemId!, variationId: line.variationId!, locationId: line.locationId!, deltas };
  if (line.unique && effect !== "reserve") change.sold = quantity > 0;
  return change;
}

/** Changes of inventory lines (`quantityOf` each; zero quantities skipped), one per line in line order. */
export function lineChanges(
  lines: readonly SalesLine[],
  effect: SalesEffect,
  quantityOf: (line: SalesLine) => number,
): { changes: StockChange[]; lineIndexes: number[] } {
  const changes: StockChange[] = [];
  const lineIndexes: number[] = [];
  lines.forEach((line, index) => {
    if (line.lineType !== "inventory" || !line.itemId) return;
    const quantity = quantityOf(line);
    if (quantity === 0) return;
    changes.push(stockChangeOf(line, quantity, effect));
    lineIndexes.push(index);
  });
  return { changes, lineIndexes };
}

/**
 * A stock rule a sales document's change breaks, as the API says it: 422 naming the first line
 * that sells from the row (`lines[i].quantity`, `insufficient_stock`): on-hand stock never goes
 * below zero.
 */
export function stockRuleError(error: StockRuleError, changes: readonly StockChange[], lines: readonly SalesLine[], param = "lines") {
  const change = changes[error.changeIndex];
  const index = change
    ? lines.findIndex((line) => line.itemId === change.itemId && line.variationId === change.variationId && line.locationId === change.locationId)
    : -1;
  const code = error.rule === "negative_balance" ? "insufficient_stock" : error.rule;
  const message =
    error.rule === "negative_balance"
      ? `${change && lines[index] ? `${lines[index]!.name}: ` : ""}not enough stock on hand at the line's location.`
      : error.message;
  return errors.validationFailed([{ param: index >= 0 ? `${param}[${index}].quantity` : param, code, message }]);
}

// ---------------------------------------------------------------------------------------------
// Header

/** The header fields a create or an update sets from the request (null or "" clears a field). */
export function salesHeaderFields(
  input: Record<string, unknown>,
  map: readonly [string, keyof DocumentItem][],
): Partial<DocumentItem> & { cleared: (keyof DocumentItem)[] } {
  const set: Record<string, unknown> = {};
  const cleared: (keyof DocumentItem)[] = [];
  for (const [field, attribute] of map) {
    const value = input[field] as string | null | undefined;
    if (value === undefined) continue;
    if (value === null || value === "") cleared.push(attribute);
    else set[attribute] = value;
  }
  if (input.shipping_fee !== undefined) set.shippingFee = money(input.shipping_fee as string);
  if (input.shipping_cost !== undefined) set.shippingCost = money(input.shipping_cost as string);
  if (input.discount_percent !== undefined) set.discountPercent = rate(input.discount_percent as string);
  return { ...(set as Partial<DocumentItem>), cleared };
}

/** `shipping_cost` needs the unit-cost permission (spec 4.4 and 4.5): 403 without it. */
export function requireShippingCostPermission(principal: Principal, input: { shipping_cost?: unknown }): void {
  if (input.shipping_cost !== undefined && !hasPermission(principal, "costs.view")) {
    throw errors.permissionDenied("shipping_cost: setting the shipping cost requires the unit-cost permission (costs.view).");
  }
}

/** Snapshots of the customer, the account settings and the items a header carries. */
export function deriveSalesHeader(
  header: DocumentItem,
  context: Pick<SalesContext, "account" | "customer">,
  lines: readonly SalesLine[],
  searchParts: readonly (string | undefined)[],
): DocumentItem {
  const next: DocumentItem = withAccountSnapshot(
    {
      ...header,
      partyId: context.customer.partyId,
      partyName: context.customer.name,
      partyKind: context.customer.kind,
      partyDetails: partyDetailsOf(context.customer),
    },
    context.account,
  );
  const itemIds = [...new Set(lines.flatMap((line) => (line.itemId ? [line.itemId] : [])))];
  if (itemIds.length > 0) next.itemIds = itemIds;
  else delete next.itemIds;
  next.searchText = [next.partyName, ...searchParts].filter(Boolean).join(" ").toLowerCase();
  return next;
}

/** A header with the account settings it shows (tax labels, packing settings) refreshed. */
export function withAccountSnapshot(header: DocumentItem, account: AccountItem): DocumentItem {
  const next: DocumentItem = { ...header, packingListsEnabled: account.packingListsEnabled, packingServiceItems: account.packingServiceItems };
  if (account.taxLabel) next.taxLabel = account.taxLabel;
  else delete next.taxLabel;
  if (account.tax2Label) next.tax2Label = account.tax2Label;
  else delete next.tax2Label;
  return next;
}

/**
 * A sales document as its detail shows it (spec part 2, section 2.5 snapshot rule): identity,
 * addresses, names, prices and taxes are the stored values, while the account's tax labels and
 * packing settings and, with `related`, the customer's contact and billing details, the items'
 * SKU and unit label and the locations' names are current values, read here in ONE parallel
 * round (a record that is gone keeps the stored value). `account` is read by the caller in
 * parallel with the document.
 */
export async function withCurrentValues<L extends SalesLine>(
  header: DocumentItem,
  lines: readonly L[],
  account: AccountItem,
  related: boolean,
): Promise<{ header: DocumentItem; lines: L[] }> {
  const accountId = header.accountId;
  const itemLines = related ? lines.filter((line) => line.itemId) : [];
  const variationKeys = [
    ...new Map(
      itemLines.filter((l) => l.variationId).map((l) => [`${l.itemId}/${l.variationId}`, { itemId: l.itemId!, variationId: l.variationId! }]),
    ).values(),
  ];
  const [customer, items, variations, locations] = await Promise.all([
    related && header.partyId ? readParty(accountId, header.partyId) : Promise.resolve(undefined),
    // Display values: eventually consistent reads (half the read units; a change shows within a second).
    readItems(accountId, [...new Set(itemLines.map((l) => l.itemId!))], { consistent: false }),
    readVariations(accountId, variationKeys, { consistent: false }),
    readLocations(accountId, [...new Set(itemLines.flatMap((l) => (l.locationId ? [l.locationId] : [])))], { consistent: false }),
  ]);
  const next = withAccountSnapshot(header, account);
  if (customer) next.partyDetails = partyDetailsOf(customer);
  if (!related) return { header: next, lines: [...lines] };
  const itemById = new Map(items.map((item) => [item.itemId, item]));
  const variationByKey = new Map(variations.map((v) => [`${v.itemId}/${v.variationId}`, v]));
  const locationById = new Map(locations.map((location) => [location.locationId, location]));
  return {
    header: next,
    lines: lines.map((line) => {
      const item = line.itemId ? itemById.get(line.itemId) : undefined;
      if (!item) return line;
      const variation = variationByKey.get(`${line.itemId}/${line.variationId}`);
      const location = line.locationId ? locationById.get(line.locationId) : undefined;
      return { ...line, sku: variation?.sku ?? item.sku, unitName: item.unitName, locationName: location?.name ?? line.locationName };
    }),
  };
}

/** Money of a header as exact ten-thousandths (customer revenue moves by it). */

/** A new header's defaults (money zero, counters zero). */
export function blankHeader(
  fields: Pick<DocumentItem, "accountId" | "documentId" | "kind" | "revision" | "status" | "statusId" | "assignedUserId">,
): DocumentItem {
  const now = new Date().toISOString();
  return {
    ...fields,
    number: 0,
    numberKey: "",
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
  } as DocumentItem;
}

/** The later of two `YYYY-MM-DD` dates (either may be absent). */
export const laterDate = (a: string | undefined, b: string | undefined): string | undefined => (!a ? b : !b ? a : a > b ? a : b);

// ---------------------------------------------------------------------------------------------
// The numbered create

export interface NewSalesDocument {
  principal: Principal;
  kind: Extract<DocumentKind, "sales_order" | "invoice">;
  /** The header without its number. */
  header: DocumentItem;
  lines: SalesLine[];
  /** The stock changes of the new document (row ids filled in once the rows exist). */
  changes: StockChange[];
  source: LedgerSource;
  customer: PartyItem;
  /** What the customer's figures move by. */
  activity: { revenueMinor?: number; invoiceDate?: string };
  references: Reference[];
  completion: IdempotencyCompletion | undefined;
  /** The response body of the written document. */
  present: (header: DocumentItem, lines: readonly SalesLine[]) => Record<string, unknown>;
  /** Items of the caller that commit in the same transaction (an estimate's close, a sales order's invoiced quantities). */
  extra?: (tx: TransactionBuilder, header: DocumentItem, lines: readonly SalesLine[], activity: CustomerActivity, customer: PartyItem) => void;
  /**
   * `caller`: the caller writes the customer's item itself in `extra` (e.g. converting a
   * prospect) and applies `activity` there; a transaction cannot touch one item twice.
   */
  customerActivity?: "caller";
  /**
   * Counts the caller moves on a user's owner-counters item in the same write (a prospect's
   * conversion moves its owner's customer and prospect counts): merged into the assignee's count
   * when it is the same user, since a transaction cannot touch one item twice.
   */
  ownerCounts?: (customer: PartyItem) => OwnerCountsMove | undefined;
  /**
   * The account's `record_limit` when it applies to this kind (invoices): the write also requires
   * the kind's record count to be under it; at the limit it is 409 `record_limit_reached`.
   */
  recordLimit?: number;
}

/** Counts moved on one user's owner-counters item. */
export interface OwnerCountsMove {
  userId: string;
  add: Record<string, number>;
}

/** What a new document moves on its customer: `documentCount`, `lifetimeRevenueMinor` (ADD) and `lastInvoiceDate` (the later date). */
export type CustomerActivity = DocumentActivity;

export type NewSalesResult =
  | { ok: true; header: DocumentItem; lines: SalesLine[]; body: Record<string, unknown> }
  /** Only the caller's own items (`extra`) failed their conditions: nothing was written. */
  | { ok: false; cancellation: Cancellation };

/**
 * Writes a new sales order or invoice numbered from its sequence, with its stock effects, in
 * ONE transaction: the number claim (a failed write consumes none), header and line pages, the
 * record and assignee counts, the customer's document count, revenue and last invoice date,
 * reference checks and the caller's `extra` items. Small stock effects ride in the same
 * transaction through the ledger; large ones are held first and bound by it (`prepareStock`),
 * and a lost race for the number retries the transaction, never the stock. A stock rule the
 * changes break is 422 naming the line; nothing is written.
 */
export async function insertSalesDocument(input: NewSalesDocument): Promise<NewSalesResult> {
  const { principal, kind, customer } = input;
  let plan: Awaited<ReturnType<typeof prepareStock>>;
  try {
    plan = await prepareStock({ accountId: principal.accountId, source: input.source, changes: input.changes });
  } catch (error) {
    if (error instanceof StockRuleError) throw stockRuleError(error, input.changes, input.lines);
    throw error;
  }
  const activity: CustomerActivity = {
    documents: 1,
    revenueMinor: input.activity.revenueMinor,
    ...(input.activity.invoiceDate && laterDate(customer.lastInvoiceDate, input.activity.invoiceDate) !== customer.lastInvoiceDate
      ? { invoiceDate: input.activity.invoiceDate, invoiceDateWas: customer.lastInvoiceDate ?? null }
      : {}),
  };
  const numbered = (number: number, rowIdOf: RowIdOf) => ({
    header: { ...input.header, number, numberKey: numberKeyOf(number) },
    lines: withRowIds(input.lines, rowIdOf),
  });
  let written: { header: DocumentItem; lines: SalesLine[]; body: Record<string, unknown> } | undefined;
  try {
    const { cancellation } = await allocateNumber(
      principal.accountId,
      kind,
      (number, claim) =>
        plan.commit(
          (tx, rowIdOf) => {
            const { header, lines } = numbered(number, rowIdOf);
            claim(tx, { count: 1 });
            addDocumentWrite(tx, { header, lines });
            const owner = input.ownerCounts?.(customer);
            addAssigneeCount(tx, header, 1, owner?.userId === header.assignedUserId ? owner.add : {});
            if (owner && owner.userId !== header.assignedUserId) {
              tx.add("owner counts", tx.entities.ownerCounters.update({ accountId: principal.accountId, userId: owner.userId }).add(owner.add).commit());
            }
            if (input.customerActivity !== "caller") addDocumentActivity(tx, { accountId: principal.accountId, partyId: customer.partyId }, activity);
            checkReferences(tx, principal.accountId, input.references);
            input.extra?.(tx, header, lines, activity, customer);
          },
          (rowIdOf) => {
            const { header, lines } = numbered(number, rowIdOf);
            written = { header, lines, body: input.present(header, lines) };
            return { completion: withEtag(input.completion, header.revision), body: written.body };
          },
        ),
      { recordLimit: input.recordLimit },
    );
    if (!cancellation) return { ok: true, ...written! };
    await plan.release();
    const details = referenceDetails(cancellation);
    if (details.length > 0) throw errors.validationFailed(details);
    if (cancellation.failed(`party:${customer.partyId}`)) throw new CustomerChangedError();
    return { ok: false, cancellation };
  } catch (error) {
    await plan.release();
    if (error instanceof StockRuleError) throw stockRuleError(error, input.changes, input.lines);
    if (error instanceof RecordLimitError) throw errors.recordLimitReached(`${kind.replace("_", " ")}s`, error.limit);
    throw error;
  }
}

// ---------------------------------------------------------------------------------------------
// Drafts: documents built by other features (estimate conversions) from given values

/** A line of a draft: values as the source document stores them (prices, taxes, names). */
export interface DraftLine {
  /** Inventory lines: the item (and optionally its stock row); absent for service lines. */
  itemId?: string;
  ivlId?: number;
  /** The line's stored name (inventory lines default to the item's). */
  name?: string;
  /** The line's stored description (absent or null: none). */
  description?: string | null;
  quantity: number;
  /** Four-decimal selling price. */
  unitPrice: string;
  /** Four-decimal cost snapshot (inventory lines default to the item's). */
  unitCost?: string;
  /** Three-decimal percentages (tax rates default to the customer's). */
  discountPercent?: string;
  taxRate?: string;
  tax2Rate?: string;
}

/**
 * Header values and lines of a document another feature asks this one to build (an estimate
 * converted into an invoice or a sales order). Absent values take the same defaults as the API
 * create (issue date today in the caller's time zone, the account's payment terms, ...).
 */
export interface SalesDraft {
  customerId: string;
  /** Default: the caller. */
  salespersonId?: string;
  name?: string;
  issueDate?: string;
  expiryDate?: string;
  purchaseOrderNumber?: string;
  attention?: string;
  shippingAddress?: string;
  publicNote?: string;
  paymentTerms?: string;
  /** Four-decimal strings; discount three decimals. */
  shippingFee?: string;
  shippingCost?: string;
  discountPercent?: string;
  /** Values of custom fields of the new document's own kind (checked like an API create). */
  customFieldValues?: { custom_field_id: string; value: string }[];
  /** The estimate converted (shown as `source_estimate`). */
  sourceEstimate?: { id: string; number: number };
  /** Sales orders: the order's location (default as for the API create) and packing-list note. */
  locationId?: string;
  packingListNote?: string;
  /** Invoices: the custom invoice number. */
  customNumber?: string;
  lines: DraftLine[];
}

/** Options of a draft create: the caller's transaction items and idempotent outcome. */
export interface DraftOptions {
  /** The stored outcome of the caller's request (its response is the new document, 201). */
  completion?: IdempotencyCompletion;
  /**
   * Items of the caller written in the SAME transaction (e.g. the estimate's close, conditioned on
   * its revision). `activity` is what the new document moves on its customer.
   */
  extra?: (tx: TransactionBuilder, header: DocumentItem, lines: readonly SalesLine[], activity: CustomerActivity, customer: PartyItem) => void;
  /** Accept a prospect as the customer (the caller converts it in `extra`). */
  allowProspect?: boolean;
  /**
   * `caller`: the caller writes the customer's item in `extra` (a prospect's conversion) and
   * must apply `activity` there (`addDocumentActivity` shows how); otherwise this function does.
   */
  customerActivity?: "caller";
  /** See `NewSalesDocument.ownerCounts`. */
  ownerCounts?: (customer: PartyItem) => OwnerCountsMove | undefined;
}

/** A draft's lines as line specs (its prices are taken as given: the source already checked them). */
export const draftLineSpecs = (lines: readonly DraftLine[]): LineSpec[] =>
  lines.map((line, index) => ({
    index,
    itemId: line.itemId,
    ivlId: line.ivlId,
    name: line.name,
    description: line.description ?? null,
    quantity: line.quantity,
    unitPrice: money(line.unitPrice),
    unitCost: line.unitCost === undefined ? undefined : money(line.unitCost),
    discountPercent: line.discountPercent === undefined ? undefined : rate(line.discountPercent),
    taxRate: line.taxRate === undefined ? undefined : rate(line.taxRate),
    tax2Rate: line.tax2Rate === undefined ? undefined : rate(line.tax2Rate),
  }));

/** A draft's header values in request form (so a draft create and an API create share one path). */
export const draftRequestFields = (draft: SalesDraft): Record<string, unknown> => ({
  name: draft.name,
  issue_date: draft.issueDate,
  expiry_date: draft.expiryDate,
  purchase_order_number: draft.purchaseOrderNumber,
  attention: draft.attention,
  shipping_address: draft.shippingAddress,
  public_note: draft.publicNote,
  payment_terms: draft.paymentTerms,
  shipping_fee: draft.shippingFee,
  shipping_cost: draft.shippingCost,
  discount_percent: draft.discountPercent,
  custom_field_values: draft.customFieldValues,
  location_id: draft.locationId,
  packing_list_note: draft.packingListNote,
  custom_invoice_number: draft.customNumber,
});
