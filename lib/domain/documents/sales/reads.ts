import { seesOwnedBy } from "../../common/ownership.js";
import { defaultUnitCost, defaultUnitPrice, inventoryLineIds, inventoryLineName, itemSnapshot, keepsItem, keptUnitCost } from "../line-values.js";
import { matchReplacementLines, withStoredDiscountLine } from "../rules.js";
import { referenceDetail } from "../../../core/errors.js";
import { randomUUID } from "node:crypto";
import { Decimal } from "../../../core/decimal.js";
import { defaultLocationOf, type Principal } from "../../../auth/permissions.js";
import { errors, type ValidationDetail } from "../../../core/errors.js";
import { readItems, readVariations } from "../../../db/items.js";
import { queryLocations, readLocations } from "../../../db/locations.js";
import { readParty } from "../../../db/parties.js";
import type { AccountItem, DocumentItem, PartyItem } from "../../../db/service.js";
import type { SalesLineBody } from "../../../schemas/sales-documents.js";
import { MAX_SALES_LINES } from "../../../schemas/sales-documents.js";
import { mayReachLocation, outsideLocationDetail } from "../../common/location-access.js";
import { rate, money } from "../../common/money.js";
import { resolveLineItems } from "../lines.js";
import { partyDetailsOf } from "../party-details.js";
import { withCurrentPacking } from "./progress.js";
import { lineSpecsOf, PLACEMENT_HINTS, type LineSpec, type SalesContext, type SalesLine } from "./model.js";

/**
 * What sales orders and invoices read to write (spec part 2, sections 2.4, 2.5, 4.4, 4.5): the
 * customer they name, their lines built from specs (item and customer defaults, the stock row
 * each inventory line sells from), and the current related values a detail shows.
 */

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
  const visible = party && seesOwnedBy(principal, party.ownerUserId);
  const kindOk = party && (party.kind === "customer" || (options.allowProspect === true && party.kind === "prospect"));
  // An update that keeps its customer does not re-judge it: archived or reassigned since, it stays.
  if (!party || (!options.unchanged && (!visible || !kindOk)))
    throw errors.validationFailed([referenceDetail(param, "is not a visible customer of this account.")]);
  if (party.archived && !options.unchanged) throw errors.validationFailed([{ param, code: "archived", message: "is an archived customer." }]);
  return party;
}

// ---------------------------------------------------------------------------------------------
// Lines

/** An item's base variation (a plain item's only one): it shows no values. */
const isBaseVariation = (variation: { values?: Record<string, string> }) => Object.keys(variation.values ?? {}).length === 0;

/**
 * Builds stored lines from specs. Each inventory line sells from one stock row: the given
 * `item_variation_location_id` (a kept line's own row when it names none; on an order moved to
 * another location, or a kept line naming another variation, that variation's row at the new or
 * the line's own location), else the item's row at the document's location, else at the user's
 * assigned location (a new row there if need be), else
 * at the item's default location, else its only row, else a new row at its default location,
 * else (an item never stocked, without a default) a new row at the account's only active
 * location (an item stocked at several locations, none its default, or never stocked in an
 * account of several locations, needs the row named). A location-restricted user may only name
 * rows at their location; the location must be active. A kept line keeps its id and its
 * fulfilment quantities: its item cannot change once it has any, nor its quantity drop below them.
 */
export async function buildSalesLines(context: SalesContext, specs: readonly LineSpec[]): Promise<SalesLine[]> {
  const { principal, customer } = context;
  // The user's location is a default only: the row a line then sells from is what the write reached.
  const restriction = defaultLocationOf(principal);
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
  // A row kept from the stored line (not named) follows a change of the order's location: the
  // line takes its variation's row at the new location.
  const moved = (spec: LineSpec) => spec.rowKept === true && context.location !== undefined && spec.kept?.locationId !== context.location.locationId;
  const resolved = await resolveLineItems(
    principal.accountId,
    context.location?.locationId,
    specs.flatMap((spec) =>
      spec.itemId === undefined
        ? []
        : [
            moved(spec)
              ? { index: spec.index, itemId: spec.itemId, variationId: spec.kept?.variationId, keepsItem: true }
              : { index: spec.index, itemId: spec.itemId, ivlId: spec.ivlId, variationId: spec.variationId, keepsItem: keepsItem(spec.kept, spec.itemId) },
          ],
    ),
    { locationLabel: "order's", byVariation: true },
  );
  // The row each inventory line sells from.
  const rows = new Map<number, { locationId: string; ivlId?: number }>();
  const hintKind = context.takesLocation ? "order" : "invoice";
  let onlyActive: Promise<string | null> | undefined;
  const onlyLocation = () => {
    onlyActive ??= queryLocations(principal.accountId).then((all) => {
      const active = all.filter((location) => location.active);
      return active.length === 1 ? active[0]!.locationId : null;
    });
    return onlyActive;
  };
  for (const spec of specs) {
    const found = resolved.get(spec.index);
    if (!found) continue;
    let row = found.row;
    // The document's or the user's location decides the row (a new one there if need be); else
    // the item's row at its default location, else its only row, else a new row at its default.
    // A kept line that names another variation stays where it is: that variation's row there.
    const keptLocation = spec.kept && spec.kept.itemId === spec.itemId && spec.ivlId === undefined ? spec.kept.locationId : undefined;
    let locationId: string | null | undefined = row?.locationId ?? context.location?.locationId ?? restriction ?? keptLocation;
    if (locationId) row ??= found.rows.find((r) => r.locationId === locationId);
    else {
      row = found.rows.find((r) => r.locationId === found.item.locationId) ?? (found.rows.length === 1 ? found.rows[0] : undefined);
      // An item never stocked and without a default location: the account's only active
      // location, when it has just one (a new row there), as there is nowhere else it could be.
      locationId = row?.locationId ?? found.item.locationId ?? (found.rows.length === 0 ? await onlyLocation() : null);
    }
    if (!locationId) {
      // No row at all: the item may have been deleted (with its rows) since it was read.
      if (found.rows.length === 0 && (await readItems(principal.accountId, [found.item.itemId])).length === 0) {
        details.push(referenceDetail(`lines[${spec.index}].item_id`, "is not an item of this account."));
        continue;
      }
      details.push({
        param: `lines[${spec.index}].item_variation_location_id`,
        code: "required",
        message:
          found.rows.length === 0
            ? `is required: ${isBaseVariation(found.variation) ? "the item has no stock location and no default location" : "the variation has no stock location and the item no default location"}${PLACEMENT_HINTS.unstocked[hintKind]}.`
            : `is required: the item is stocked at several locations${PLACEMENT_HINTS.several[hintKind]}.`,
      });
      continue;
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
      ...inventoryLineIds(item, variation, row),
      locationId: row.locationId,
      locationName: locations.get(row.locationId)?.name,
      ...(unique ? { unique: true } : {}),
      name: spec.name ?? (inventoryLineName(spec.index, spec.sentName, item, kept) as { name: string }).name,
      // null or blank ("") clears the description; omitting it takes the item's current one.
      description: spec.description === undefined ? item.description : spec.description || undefined,
      quantity: unique ? 1 : (spec.quantity ?? 1),
      unitPrice: spec.unitPrice ?? money(defaultUnitPrice(item, variation)),
      unitCost: spec.unitCost ?? keptUnitCost(item.itemId, variation.variationId, kept) ?? money(defaultUnitCost(item, variation)),
      ...itemSnapshot(item, variation),
    };
  });
}

/**
 * An update's lines (spec 4.4 and 4.5 update): `input` replaces every non-discount line (ids
 * keep identity, `matchReplacementLines`), built like a create's; the generated discount line
 * keeps its id. `check` sees the kept stored lines before anything is read (an invoice refuses
 * to drop a packed line).
 */
export async function replaceSalesLines(
  context: SalesContext,
  stored: readonly SalesLine[],
  input: readonly SalesLineBody[],
  inventoryPrice: "ignore" | "forbid",
  check?: (kept: readonly (SalesLine | undefined)[]) => void,
): Promise<SalesLine[]> {
  const kept = matchReplacementLines(stored, input, MAX_SALES_LINES, (line) => line.lineType !== "discount");
  check?.(kept);
  return withStoredDiscountLine(await buildSalesLines(context, lineSpecsOf(context.principal, input, kept, inventoryPrice)), stored);
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
  const next = withCurrentPacking(header, lines, account);
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
