import { orNull } from "../rules.js";
import { Decimal } from "../../../core/decimal.js";
import { hasPermission, type Principal } from "../../../auth/permissions.js";
import type { DocumentItem } from "../../../db/service.js";
import { money } from "../../common/money.js";
import type { SalesLine } from "./model.js";

/** What the API shows of sales orders and invoices alike: their lines, money and source estimate. */

/** `unit_cost` and `total_cost` of a line (null on discount lines). */
export function lineCosts(line: SalesLine): { unit_cost: string | null; total_cost: string | null } {
  if (line.lineType === "discount" || line.unitCost === null) return { unit_cost: null, total_cost: null };
  return { unit_cost: line.unitCost, total_cost: money(new Decimal(line.unitCost).times(line.quantity)) };
}

export const sourceEstimateOf = (header: DocumentItem) =>
  header.sourceEstimateId ? { id: header.sourceEstimateId, estimate_number: header.sourceEstimateNumber ?? 0 } : null;

/**
 * A line as the API shows it: `quantities` are the kind's fulfilment quantities (after
 * `quantity`), `position` the sales order's; costs only with `costs.view`.
 */
export function presentSalesLine(
  principal: Principal,
  line: SalesLine,
  object: "invoice_line" | "sales_order_line",
  quantities: Record<string, number>,
  position: { position: number } | Record<string, never> = {},
): Record<string, unknown> {
  const out: Record<string, unknown> = {
    id: line.id,
    object,
    item_id: orNull(line.itemId),
    item_variation_location_id: orNull(line.ivlId),
    name: line.name,
    description: orNull(line.description),
    quantity: line.quantity,
    ...quantities,
    unit_id: orNull(line.unitId),
    unit_price: line.unitPrice,
    discount_percent: line.discountPercent,
    discounted_unit_price: line.discountedUnitPrice,
    tax_rate: line.taxRate,
    tax_2_rate: line.tax2Rate,
    subtotal: line.subtotal,
    ...position,
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
