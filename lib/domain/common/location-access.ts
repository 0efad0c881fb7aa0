import { referenceDetail } from "../../core/errors.js";
import { locationScopeOf, NO_LOCATION, type LocationScoped } from "../../core/document-scope.js";
import { locationRestriction, reachesLocation, type Principal } from "../../auth/permissions.js";
import { errors, type ValidationDetail } from "../../core/errors.js";
import type { DocumentKind } from "../../db/entities/document.js";

/**
 * The location rule, written once (spec part 1, sections 1 and 7: "outside the user's ...
 * location boundary" is 404; part 2, 4.4 and 4.7; architecture section 8, "Location restriction
 * is one rule for every write"): a user with an assigned location sees and acts on documents and
 * stock at that location only.
 *
 * - A document is at the locations its header and lines name (`locationScopeOf`): a restricted
 *   user reaches it only when it is at their location or at none (a service-only invoice), else
 *   it is 404 `resource_missing` for reads and writes alike (`visibleDocument`, lists, `ids`,
 *   task previews all ask `mayReachDocument`).
 * - A location a request body names (`location_id`, a line's stock row) outside the restriction
 *   is 422 `validation_failed` naming the field (`requireReachableLocation`).
 * - Stock transfers are the exception the spec makes (part 2, 4.2: "Visibility is account-wide;
 *   assigned user and locations do not restrict access").
 * Owners are never restricted.
 */

/** Kinds whose access follows the location rule (stock transfers are account-wide). */
const LOCATION_BOUNDED: ReadonlySet<DocumentKind> = new Set(["purchase_order", "estimate", "sales_order", "invoice"]);

/** Whether the caller may act at `locationId` (every location for an unrestricted caller). */
export function mayReachLocation(principal: Principal, locationId: string | null | undefined): boolean {
  if (locationId === null || locationId === undefined) return locationRestriction(principal) === null;
  return reachesLocation(principal, locationId);
}

/** The detail of a body field naming a location (or a stock row at one) outside the caller's. */
export const outsideLocationDetail = (param: string): ValidationDetail => referenceDetail(param, "is outside your location.");

/** Throws 422 `validation_failed` naming `param` when the body's `locationId` is outside the caller's location. */
export function requireReachableLocation(principal: Principal, param: string, locationId: string | null | undefined): void {
  if (locationId !== null && locationId !== undefined && !mayReachLocation(principal, locationId)) {
    throw errors.validationFailed([outsideLocationDetail(param)]);
  }
}

/**
 * Whether the caller may see and act on a document: always for kinds the rule does not bound
 * and for unrestricted callers; else when the document is at the caller's location or at none.
 * `lines` (when the caller has them) are authoritative; a header alone answers from the scope
 * its last write stored.
 */
export function mayReachDocument(principal: Principal, header: LocationScoped & { kind: DocumentKind }, lines?: readonly Record<string, unknown>[]): boolean {
  if (!LOCATION_BOUNDED.has(header.kind)) return true;
  const scope = locationScopeOf(header, lines);
  return scope === NO_LOCATION || reachesLocation(principal, scope);
}

/** The location scopes a restricted caller's document lists keep (undefined: every document). */
export function reachableScopes(principal: Principal, kind: DocumentKind): string[] | undefined {
  const restriction = locationRestriction(principal);
  return restriction === null || !LOCATION_BOUNDED.has(kind) ? undefined : [NO_LOCATION, restriction];
}
