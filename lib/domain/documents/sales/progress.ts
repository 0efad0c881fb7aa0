import { lineBehindStockRule } from "../rules.js";
import { laterUpdatedAt } from "../../../core/clock.js";
import type { StockChange } from "../../inventory/stock-changes.js";
import { Decimal } from "../../../core/decimal.js";
import { errors } from "../../../core/errors.js";
import type { StockRuleError } from "../../../core/failures.js";
import type { AccountItem, DocumentItem } from "../../../db/service.js";
import { addQuantities } from "../../inventory/math.js";
import { newRevision } from "../../common/revisions.js";
import { withAccountSnapshot } from "./header.js";
import type { SalesDocumentKind, SalesLine } from "./model.js";

/**
 * Fulfilment progress and stock effects of sales orders and invoices, without storage
 * (architecture section 8): which lines packing applies to, the packed, shipped and invoiced
 * percentages, the stock change of each line and a broken stock rule as the API says it.
 */

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

/**
 * A header as read with the account's current settings (`withAccountSnapshot`: tax labels,
 * packing settings). When the packing-list service-item setting changed since the document's
 * last write, its packed and shipped percentages follow the current setting, as its lines'
 * `quantity_remaining_to_pack` and its `can_pack` do. A linked invoice shows its order's
 * percentages, which the order's next write brings along.
 */
export function withCurrentPacking(header: DocumentItem, lines: readonly SalesLine[], account: AccountItem): DocumentItem {
  const next = withAccountSnapshot(header, account);
  if ((header.packingServiceItems ?? false) === account.packingServiceItems || header.sourceSalesOrderId) return next;
  const { packedPercent, shippedPercent } = progressOf(lines, account.packingServiceItems);
  return withPercents(next, { packedPercent, shippedPercent });
}

/**
 * A sales order's header with what its list entry needs of its lines (the detail reads them),
 * under either packing-list service-item setting: `packingStarted` (a line packed or shipped),
 * `unpackedLocationIds` (the locations of inventory lines left to pack, each once) and
 * `unpackedServiceLines` (a service line left to pack, should the setting pack them). Set at
 * every write of the lines or their packing.
 */
export function withPackingFacts(header: DocumentItem, lines: readonly SalesLine[]): DocumentItem {
  // Left to pack under a setting that packs service lines (inventory lines always pack).
  const unpacked = (line: SalesLine) => remainingToPack(line, true) > 0;
  return {
    ...header,
    packingStarted: lines.some((line) => line.quantityPacked > 0 || line.quantityShipped > 0),
    unpackedLocationIds: [...new Set(lines.flatMap((line) => (line.lineType === "inventory" && line.locationId && unpacked(line) ? [line.locationId] : [])))],
    unpackedServiceLines: lines.some((line) => line.lineType === "service" && unpacked(line)),
  };
}

/**
 * A sales order's edit and pack block reasons from its header alone (a list entry), as the
 * detail says them from its lines; undefined for an order last written before its packing
 * facts were kept.
 */
export function listBlockFacts(
  header: DocumentItem,
  serviceItems: boolean,
): { started: boolean; unpackedLocationIds: readonly string[]; nothingToPack: boolean } | undefined {
  if (header.unpackedLocationIds === undefined) return undefined;
  return {
    started: header.packingStarted === true,
    unpackedLocationIds: header.unpackedLocationIds,
    nothingToPack: header.unpackedLocationIds.length === 0 && !(serviceItems && header.unpackedServiceLines === true),
  };
}

/** The unpacked quantity of a line (0 when packing does not apply to it). */
export const remainingToPack = (line: SalesLine, serviceItems: boolean): number =>
  isPackable(line, serviceItems) ? Math.max(0, addQuantities(line.quantity, -line.quantityPacked)) : 0;

/**
 * The header after a fulfilment write (pack or ship): the percentages that follow the lines
 * (packed and shipped; a sales order's invoiced one too), the account settings it shows (when
 * read), a new revision and a later `updated_at`.
 */
export function afterFulfilment(kind: SalesDocumentKind, previous: DocumentItem, lines: readonly SalesLine[], account: AccountItem | undefined): DocumentItem {
  const serviceItems = account?.packingServiceItems ?? previous.packingServiceItems ?? false;
  const { packedPercent, shippedPercent, invoicedPercent } = progressOf(lines, serviceItems);
  const touched = { ...previous, revision: newRevision(kind === "sales_order" ? "so" : "inv"), updatedAt: laterUpdatedAt(previous.updatedAt) };
  const next =
    kind === "sales_order"
      ? withPackingFacts(withPercents(touched, { packedPercent, shippedPercent, invoicedPercent }), lines)
      : withPercents(touched, { packedPercent, shippedPercent });
  return account ? withAccountSnapshot(next, account) : next;
}

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
  if (effect !== "reserve" && quantity > 0) change.oversell = true;
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
 * A stock rule a sales document's change breaks, as the API says it: 422 naming the line that
 * sells most from the row (`lines[i].quantity`, `insufficient_stock`): on-hand stock never goes
 * below zero.
 */
export function stockRuleError(error: StockRuleError, changes: readonly StockChange[], lines: readonly SalesLine[], param = "lines") {
  const change = changes[error.changeIndex];
  const index = change
    ? lineBehindStockRule(lines, (line) => line.itemId === change.itemId && line.variationId === change.variationId && line.locationId === change.locationId)
    : -1;
  const code = error.rule === "negative_balance" ? "insufficient_stock" : error.rule;
  const message =
    error.rule === "negative_balance"
      ? `${change && lines[index] ? `${lines[index]!.name}: ` : ""}not enough stock on hand at the line's location.`
      : error.message;
  return errors.validationFailed([{ param: index >= 0 ? `${param}[${index}].quantity` : param, code, message }]);
}
