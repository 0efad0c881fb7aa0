import { errors, type ValidationDetail } from "../../core/errors.js";
import { readLineTrees } from "../../db/inventory.js";
import { referenceDetail } from "../../db/references.js";
import type { ItemRecord, ItemVariationItem, StockRowItem } from "../../db/service.js";

/**
 * Inventory lines of documents, resolved against the items they name (spec part 2: "active
 * item", `item_variation_location_id` "required for variation items", a row that "must belong
 * to the item, account and" the document's location). Written once for every document kind.
 */
export interface LineItemRequest {
  /** Position in the request's `lines` (for error paths). */
  index: number;
  itemId: string;
  ivlId?: number;
}

export interface ResolvedLineItem {
  item: ItemRecord;
  variation: ItemVariationItem;
  /** The variation's stock row at the document's location, when it exists. */
  row?: StockRowItem;
  /** Every stock row of the variation (documents without a location choose among them). */
  rows: StockRowItem[];
}

/**
 * Resolves inventory lines at `locationId`: every item must exist in the account and not be
 * archived; a given `item_variation_location_id` must be a row of that item at the location;
 * without one the item must have a single variation. Throws 422 `validation_failed` naming
 * every offending `lines[i]` field.
 */
export async function resolveLineItems(
  accountId: string,
  locationId: string | undefined,
  requests: readonly LineItemRequest[],
  options: { locationLabel?: string } = {},
): Promise<Map<number, ResolvedLineItem>> {
  // Every line's item, variation and rows in a fixed number of batched reads (not one per line).
  const trees = await readLineTrees(accountId, requests);
  const details: ValidationDetail[] = [];
  const resolved = new Map<number, ResolvedLineItem>();
  for (const request of requests) {
    const tree = trees.get(request.itemId);
    const item = tree?.item;
    if (!tree || !item) {
      details.push(referenceDetail(`lines[${request.index}].item_id`, "is not an item of this account."));
      continue;
    }
    if (item.archived) {
      details.push({ param: `lines[${request.index}].item_id`, code: "archived", message: "is an archived item." });
      continue;
    }
    if (request.ivlId !== undefined) {
      const row = tree.rows.find((r) => r.ivlId === request.ivlId);
      if (!row) {
        details.push(referenceDetail(`lines[${request.index}].item_variation_location_id`, "is not a stock row of this item."));
        continue;
      }
      if (locationId !== undefined && row.locationId !== locationId) {
        details.push(referenceDetail(`lines[${request.index}].item_variation_location_id`, `is not at the ${options.locationLabel ?? "document's"} location.`));
        continue;
      }
      resolved.set(request.index, {
        item,
        variation: tree.variations.find((v) => v.variationId === row.variationId)!,
        row,
        rows: tree.rows.filter((r) => r.variationId === row.variationId),
      });
      continue;
    }
    if (tree.variationCount !== 1) {
      details.push({
        param: `lines[${request.index}].item_variation_location_id`,
        code: "required",
        message: "is required for an item with several variations.",
      });
      continue;
    }
    const variation = tree.variations[0]!;
    const rows = tree.rows.filter((r) => r.variationId === variation.variationId);
    const row = locationId === undefined ? undefined : rows.find((r) => r.locationId === locationId);
    resolved.set(request.index, { item, variation, row, rows });
  }
  if (details.length > 0) throw errors.validationFailed(details);
  return resolved;
}

/** The SKU a line shows: the variation's, else the item's. */
export const skuOf = (item: ItemRecord, variation: ItemVariationItem): string | undefined => variation.sku ?? item.sku;

/** The unit cost an item line defaults to: the variation's override, else the item's cost, else its average cost. */
export const defaultUnitCost = (item: ItemRecord, variation: ItemVariationItem): string =>
  variation.unitCostOverride ?? item.cost ?? item.averageCost ?? "0.0000";

/** The selling price an item line defaults to: the variation's override, else the item's price. */
export const defaultUnitPrice = (item: ItemRecord, variation: ItemVariationItem): string => variation.unitPriceOverride ?? item.price ?? "0.0000";

/**
 * Lines read back (architecture section 8, "What you read you can write back"): a document's GET
 * body, sent back as it was read, is accepted and changes nothing. These decide what a line sent
 * back keeps. `kept` is the stored line the request's line keeps (same `id`), if any.
 */
interface KeptLine {
  itemId?: string;
  variationId?: string;
  lineType?: string;
  name?: string;
}

const keepsItem = (kept: KeptLine | undefined, itemId: string | undefined): kept is KeptLine =>
  kept !== undefined && kept.lineType === "inventory" && itemId !== undefined && kept.itemId === itemId;

/**
 * The name of an inventory line: the item's. A request may send one back as GET showed it: the
 * kept line's own name (same item; kept even if the item was renamed since) or the item's
 * current name; any other name is 422 on `lines[i].name` (inventory names come from the item).
 */
export function inventoryLineName(
  index: number,
  sent: string | undefined,
  item: ItemRecord,
  kept: KeptLine | undefined,
): { name: string } | { detail: ValidationDetail } {
  if (sent === undefined) return { name: item.name };
  if (keepsItem(kept, item.itemId) && kept.name === sent) return { name: sent };
  if (sent === item.name) return { name: item.name };
  return {
    detail: {
      param: `lines[${index}].name`,
      code: "invalid",
      message: "comes from the item on inventory lines: omit it, or send the item's name or the line's current one.",
    },
  };
}

/** Whether a selling price sent on an inventory line is the kept line's own (read back unchanged: no prices.modify needed). */
export const isKeptUnitPrice = (sent: string | undefined, itemId: string | undefined, kept: (KeptLine & { unitPrice?: string }) | undefined): boolean =>
  sent !== undefined && keepsItem(kept, itemId) && kept.unitPrice === sent;

/** A kept inventory line of the same item and variation keeps its unit-cost snapshot; otherwise undefined (the item's current cost applies). */
export const keptUnitCost = (itemId: string, variationId: string, kept: (KeptLine & { unitCost?: string | null }) | undefined): string | undefined =>
  keepsItem(kept, itemId) && kept.variationId === variationId && kept.unitCost ? kept.unitCost : undefined;
