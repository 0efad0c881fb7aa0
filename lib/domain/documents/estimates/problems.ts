import { isKeptUnitPrice, serviceLineDetails } from "../line-values.js";
import { Decimal } from "../../../core/decimal.js";
import { hasPermission, type Principal } from "../../../auth/permissions.js";
import { ApiError, errors, type DetailCode, type ErrorCode, type ValidationDetail } from "../../../core/errors.js";
import type { DocumentTooLargeError } from "../../../core/failures.js";
import type { EstimateLineBody } from "../../../schemas/estimates.js";
import { money } from "../../common/money.js";
import { addQuantities } from "../../inventory/math.js";
import type { ResolvedLineItem } from "../lines.js";
import type { EstimateLine } from "./model.js";

/**
 * The problems of an estimate's plan (spec 4.3): the refusal and warning shapes, how the write
 * throws them, and the rules that need no read (line shapes, dates, stock warnings, size).
 */

/** A refusal the real write would answer: 409 (state), 403 (a permission), 422 (a field). */
/** A refusal (403, 409: its code is the error's) or a field's problem (422: a detail code). */
export type Problem =
  | { status: 403 | 409; code: ErrorCode; message: string; param?: string }
  | { status: 422; code: DetailCode; message: string; param?: string };

export const detailProblem = (detail: ValidationDetail): Problem => ({ status: 422, ...detail });

/** The problems of an `ApiError` a shared helper threw (validation details, or the error itself). */
export function problemsOf(error: unknown): Problem[] {
  if (!(error instanceof ApiError) || error.statusCode >= 500) throw error;
  if (error.details?.length) return error.details.map(detailProblem);
  const { code, message, param } = error;
  return [error.statusCode === 403 || error.statusCode === 409 ? { status: error.statusCode, code, message, param } : { status: 422, code, message, param }];
}

/** Throws the problems as the real write answers them: a state conflict first, then a permission, then every field. */
export function throwProblems(problems: readonly Problem[]): void {
  const conflict = problems.find((p): p is Extract<Problem, { status: 403 | 409 }> => p.status === 409);
  if (conflict) throw errors.stateConflict(conflict.code, conflict.message);
  const denied = problems.find((p) => p.status === 403);
  if (denied) throw errors.permissionDenied(denied.message, denied.param);
  const details = problems.filter((p) => p.status === 422).map(({ param, code, message }) => ({ param: param ?? "", code, message }));
  if (details.length > 0) throw errors.validationFailed(details);
}

/** Line rules that need no read: service lines name their own name and price; inventory lines take the item's name. */
export function lineShapeProblems(lines: readonly EstimateLineBody[], principal: Principal, kept: readonly (EstimateLine | undefined)[]): Problem[] {
  const problems: Problem[] = [];
  const mayPrice = hasPermission(principal, "prices.modify");
  lines.forEach((line, index) => {
    const at = (field: string) => `lines[${index}].${field}`;
    if (line.item_id === undefined) {
      problems.push(...serviceLineDetails(index, line, "unit_price", kept[index]).map(detailProblem));
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
          message: `${expiryDate} has passed (today is ${today} in the account's time zone): the estimate is created Open, as one recorded after the fact, and never expires.`,
        },
      ],
    };
  }
  return { problems: [], warnings: [] };
}

/** Whether a preview line needs the account's active locations counted to judge its placement (`placementWarnings`). */
export const needsLocationCount = (found: ResolvedLineItem): boolean => !found.row && found.rows.length === 0 && !found.item.locationId;

/**
 * Preview warnings: inventory lines a conversion could not place, for a caller without a location
 * of its own (`buildSalesLines` decides the row of a line that names none): no row named, the
 * item without a default location, and stocked at several locations, or at none in an account
 * of other than one active location (`activeLocations`). Converting needs the line's row, or
 * the item's default location, as `unplacedLinesConflict` says when it is tried.
 */
export function placementWarnings(
  lines: readonly EstimateLine[],
  resolved: ReadonlyMap<number, ResolvedLineItem>,
  callerLocation: string | null,
  activeLocations: number | undefined,
): Problem[] {
  if (callerLocation !== null) return [];
  const warnings: Problem[] = [];
  for (const [index, found] of resolved) {
    if (found.row || lines[index]?.ivlId !== undefined || found.item.locationId) continue;
    const unplaced = found.rows.length > 1 || (found.rows.length === 0 && activeLocations !== 1);
    if (!unplaced) continue;
    warnings.push({
      status: 409,
      param: `lines[${index}].item_variation_location_id`,
      code: "estimate_conversion_not_allowed",
      message:
        found.rows.length > 1
          ? "names no stock row, and the item is stocked at several locations, none its default: converting the estimate needs its row."
          : "names no stock row, and the item has none and no default location: converting the estimate needs the item's location_id (or stock).",
    });
  }
  return warnings;
}

/**
 * Preview warnings: inventory lines asking for more than is available (on hand less reserved) at
 * the row they name, else over the variation's rows the caller sees (a location-restricted
 * caller's conversion sells at its location: that row alone).
 */
export function stockWarnings(lines: readonly EstimateLine[], resolved: ReadonlyMap<number, ResolvedLineItem>, callerLocation: string | null): Problem[] {
  const wanted = new Map<string, number>();
  const keyOf = (found: ResolvedLineItem) => (found.row ? `row:${found.row.ivlId}` : `variation:${found.variation.variationId}`);
  lines.forEach((_line, index) => {
    const found = resolved.get(index);
    if (found) wanted.set(keyOf(found), addQuantities(wanted.get(keyOf(found)) ?? 0, lines[index]!.quantity));
  });
  const warnings: Problem[] = [];
  const warned = new Set<string>();
  lines.forEach((_line, index) => {
    const found = resolved.get(index);
    if (!found || warned.has(keyOf(found))) return;
    const rows = found.row ? [found.row] : callerLocation === null ? found.rows : found.rows.filter((row) => row.locationId === callerLocation);
    const available = rows.reduce((sum, row) => sum.plus(row.onHand).minus(row.reserved), new Decimal(0));
    const total = wanted.get(keyOf(found))!;
    if (available.lt(total)) {
      warned.add(keyOf(found));
      warnings.push({
        status: 422,
        param: `lines[${index}].quantity`,
        code: "insufficient_stock",
        message: `${total} requested of ${found.item.name}${found.row ? " at this stock row" : ""}, ${available.toString()} available (on hand less reserved): ${found.item.inventoryType === "unique" ? "a unique item sells only while it is on hand." : "an invoice of it sells beyond what is there."}`,
      });
    }
  });
  return warnings;
}

/** The problem of lines too large for one estimate (compressed or as JSON). */
export function tooLargeProblem(error: DocumentTooLargeError): Problem {
  return {
    status: 422,
    param: "lines",
    code: "too_large",
    message: error.detailMessage("an estimate"),
  };
}
