/** What an inventory line takes from its item (SKU, default cost and price, name) and what a line sent back keeps: pure. */
import type { ValidationDetail } from "../../core/errors.js";
import type { ItemRecord, ItemVariationItem } from "../../db/service.js";

/**
 * Lines read back (architecture section 8, "What you read you can write back"): a document's GET
 * body, sent back as it was read, is accepted and changes nothing. These decide what a line sent
 * back keeps. `kept` is the stored line the request's line keeps (same `id`), if any.
 */
interface KeptLine {
  itemId?: string;
  variationId?: string;
  name?: string;
  ivlId?: number;
}

/** Whether a request's line keeps the item of the stored line it keeps (only inventory lines name one). */
export const keepsItem = (kept: KeptLine | undefined, itemId: string | undefined): kept is KeptLine =>
  kept !== undefined && itemId !== undefined && kept.itemId === itemId;

/**
 * The stock row a request's line names: its `item_variation_location_id`, else, on a line that
 * keeps its stored line's item (and variation, when it names one), the row that line already
 * has. A line sent back by id without its row keeps it, on every document (the rule for a new
 * line could pick another row); one that names another variation takes that variation's row.
 */
export const sentOrKeptRow = (sent: number | undefined, kept: KeptLine | undefined, itemId: string | undefined, sentVariation?: string): number | undefined =>
  sent ?? (keepsItem(kept, itemId) && (sentVariation === undefined || sentVariation === kept.variationId) ? kept.ivlId : undefined);

/**
 * The variation a request's line names: its `item_variation_id`, else (when it names no row
 * either) the variation of the stored line whose item it keeps, so a line placed by variation
 * alone and sent back by id keeps its variation.
 */
export const sentOrKeptVariation = (
  sent: string | undefined,
  sentRow: number | undefined,
  kept: KeptLine | undefined,
  itemId: string | undefined,
): string | undefined => sent ?? (sentRow === undefined && keepsItem(kept, itemId) ? kept.variationId : undefined);

/**
 * The shape rules of a request's line without `item_id`, a service line (every kind that has
 * them): its name and its price field (`priceField`) are required, and it names no row or
 * variation. A line that keeps (by `id`) a stored inventory line is told it lacks its `item_id`
 * instead: without it a line is a service line, which is rarely what a client sending an
 * inventory line's id back meant.
 */
export function serviceLineDetails(
  index: number,
  line: { name?: unknown; item_variation_location_id?: unknown; item_variation_id?: unknown } & Record<string, unknown>,
  priceField: string,
  kept: { lineType?: string } | undefined,
): ValidationDetail[] {
  const at = (field: string) => `lines[${index}].${field}`;
  if (kept?.lineType === "inventory") {
    return [
      {
        param: at("item_id"),
        code: "required",
        message: "is required: the line it keeps (by id) is an inventory line; a line without item_id is a service line.",
      },
    ];
  }
  const details: ValidationDetail[] = [];
  if (line.name === undefined) details.push({ param: at("name"), code: "required", message: "is required on a service line." });
  if (line[priceField] === undefined) details.push({ param: at(priceField), code: "required", message: "is required on a service line." });
  for (const field of ["item_variation_location_id", "item_variation_id"] as const) {
    if (line[field] !== undefined) details.push({ param: at(field), code: "invalid", message: "belongs to inventory lines (with item_id)." });
  }
  return details;
}

/** The SKU a line shows: the variation's, else the item's. */
export const skuOf = (item: ItemRecord, variation: ItemVariationItem): string | undefined => variation.sku ?? item.sku;

/** An inventory line's item, variation and stock row (the row once it exists). */
export const inventoryLineIds = (item: ItemRecord, variation: ItemVariationItem, row: { ivlId?: number } | undefined) => ({
  lineType: "inventory" as const,
  itemId: item.itemId,
  variationId: variation.variationId,
  ivlId: row?.ivlId,
});

/** What an inventory line snapshots of its item: unit, SKU, variation values and number. */
export const itemSnapshot = (item: ItemRecord, variation: ItemVariationItem) => ({
  unitId: item.unitId,
  unitName: item.unitName,
  sku: skuOf(item, variation),
  variationValues: (variation.values ?? {}) as Record<string, string>,
  variationNumber: variation.variationNumber,
});

/** The unit cost an item line defaults to: the variation's override, else the item's cost, else its average cost. */
export const defaultUnitCost = (item: ItemRecord, variation: ItemVariationItem): string =>
  variation.unitCostOverride ?? item.cost ?? item.averageCost ?? "0.0000";

/** The selling price an item line defaults to: the variation's override, else the item's price. */
export const defaultUnitPrice = (item: ItemRecord, variation: ItemVariationItem): string => variation.unitPriceOverride ?? item.price ?? "0.0000";

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
