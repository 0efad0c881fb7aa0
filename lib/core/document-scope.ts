/** Where a document is (its location scope) and its number's sort key: pure, from the header. */
import type { DocumentItem } from "../db/service.js";

/** `locationScope` of a document that names no location (e.g. a service-only invoice). */
export const NO_LOCATION = "none";

/** `locationScope` of a document at more than one location. */
export const SEVERAL_LOCATIONS = "several";

export type LocationScoped = Pick<DocumentItem, "locationId" | "originLocationId" | "destinationLocationId" | "locationScope">;

/**
 * Where a document is: the one location its header (`locationId`, a transfer's origin and
 * destination) and its lines (`locationId` of each line's stock row) name, `none` or `several`.
 * Without `lines`, the scope its last write stored (or its header's, for a document written
 * before scopes were stored).
 */
export function locationScopeOf(header: LocationScoped, lines?: readonly Record<string, unknown>[]): string {
  if (lines === undefined && header.locationScope) return header.locationScope;
  const ids = new Set<string>();
  for (const id of [header.locationId, header.originLocationId, header.destinationLocationId]) if (id) ids.add(id);
  for (const line of lines ?? []) if (typeof line.locationId === "string" && line.locationId) ids.add(line.locationId);
  return ids.size === 0 ? NO_LOCATION : ids.size === 1 ? [...ids][0]! : SEVERAL_LOCATIONS;
}

/** The zero-padded sort key of a document number (lists sort by it). */
export const numberKeyOf = (number: number): string => String(number).padStart(10, "0");
