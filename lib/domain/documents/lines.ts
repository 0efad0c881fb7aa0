import { referenceDetail } from "../../core/errors.js";
import { errors, type ValidationDetail } from "../../core/errors.js";
import { readLineTrees } from "../../db/inventory.js";
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
  /**
   * The line's `item_variation_id`: the variation, whose row at the document's location the line
   * uses (prepared by the write when the variation has none there yet). With `ivlId`, it must be
   * that row's variation.
   */
  variationId?: string;
  /**
   * The line keeps the item its stored line has: an item archived since stays on it (what was
   * read can be written back); only lines that newly name an item need an active one.
   */
  keepsItem?: boolean;
}

export interface ResolvedLineItem {
  item: ItemRecord;
  variation: ItemVariationItem;
  /** The variation's stock row at the document's location, when it exists. */
  row?: StockRowItem;
  /** Every stock row of the variation (documents without a location choose among them). */
  rows: StockRowItem[];
}

export interface ResolveOptions {
  /** The location's name in messages ("order's", "origin"). */
  locationLabel?: string;
  /** The lines may name a variation instead (`item_variation_id`): the refusal of a row elsewhere says so. */
  byVariation?: boolean;
}

/**
 * Resolves inventory lines at `locationId`: every item must exist in the account and not be
 * archived (unless the line keeps it, `keepsItem`); a given `item_variation_location_id` must be a row of that item at the location;
 * without one, an `item_variation_id` names the variation (its row at the location, when it has
 * one), else the item must have a single variation. Throws 422 `validation_failed` naming every
 * offending `lines[i]` field.
 */
export async function resolveLineItems(
  accountId: string,
  locationId: string | undefined,
  requests: readonly LineItemRequest[],
  options: ResolveOptions = {},
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
    if (item.archived && !request.keepsItem) {
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
        details.push(
          referenceDetail(
            `lines[${request.index}].item_variation_location_id`,
            `is not at the ${options.locationLabel ?? "document's"} location${options.byVariation ? " (item_variation_id names the variation, for its row there)" : ""}.`,
          ),
        );
        continue;
      }
      if (request.variationId !== undefined && request.variationId !== row.variationId) {
        details.push(referenceDetail(`lines[${request.index}].item_variation_id`, "does not match item_variation_location_id."));
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
    const variation =
      request.variationId !== undefined
        ? tree.variations.find((v) => v.variationId === request.variationId)
        : tree.variationCount === 1
          ? tree.variations[0]
          : undefined;
    if (!variation) {
      details.push(
        request.variationId !== undefined
          ? referenceDetail(`lines[${request.index}].item_variation_id`, "is not a variation of this item.")
          : {
              param: `lines[${request.index}].item_variation_location_id`,
              code: "required",
              message: options.byVariation
                ? "is required for an item with several variations (or its item_variation_id, for the variation's row at the line's location)."
                : "is required for an item with several variations.",
            },
      );
      continue;
    }
    const rows = tree.rows.filter((r) => r.variationId === variation.variationId);
    const row = locationId === undefined ? undefined : rows.find((r) => r.locationId === locationId);
    resolved.set(request.index, { item, variation, row, rows });
  }
  if (details.length > 0) throw errors.validationFailed(details);
  return resolved;
}
