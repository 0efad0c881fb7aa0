import { nowIso } from "../../core/clock.js";
import { randomUUID } from "node:crypto";
import { requirePermission, locationRestriction, type Principal } from "../../auth/permissions.js";
import { mayReachLocation } from "../common/location-access.js";
import { LOCATION_LABEL, insertLocation, insertZone, queryLocations, readLocation, readLocationTree, replaceZone } from "../../db/locations.js";
import type { LocationItem, ZoneItem } from "../../db/service.js";
import { errors } from "../../core/errors.js";
import type { IdempotencyCompletion } from "../../core/idempotency.js";
import { pageOfAll, type ListEnvelope, type PageRequest } from "../../core/pagination.js";
import type { LocationCreateBody, ZoneWriteBody } from "../../schemas/locations.js";
import { compareByName } from "../common/ordering.js";
import { nameSortKey } from "../../core/name-keys.js";

/** Locations and zones: spec part 1, sections 2.2, 2.3 and 4.1. */

export interface LocationResource {
  id: string;
  object: "location";
  name: string;
  short_name: string;
}

export interface ZoneResource {
  id: string;
  object: "zone";
  location_id: string;
  name: string;
  short_name: string;
  description: string | null;
}

export function presentLocation(location: LocationItem): LocationResource {
  return { id: location.locationId, object: "location", name: location.name, short_name: location.shortName };
}

export function presentZone(zone: ZoneItem): ZoneResource {
  return {
    id: zone.zoneId,
    object: "zone",
    location_id: zone.locationId,
    name: zone.name,
    short_name: zone.shortName,
    description: zone.description ?? null,
  };
}

/** A location the caller may see: active, in the account, inside the caller's location boundary. */
function isAccessible(principal: Principal, location: LocationItem | undefined): location is LocationItem {
  return location?.active === true && mayReachLocation(principal, location.locationId);
}

/** Active locations ordered by name; a restricted user sees only its own location (rule 4.1). */
export async function listLocations(principal: Principal, url: string, page: PageRequest): Promise<ListEnvelope<LocationResource>> {
  const restriction = locationRestriction(principal);
  const candidates = restriction ? [await readLocation(principal.accountId, restriction)] : await queryLocations(principal.accountId);
  const visible = candidates
    .filter((location): location is LocationItem => isAccessible(principal, location))
    .map(presentLocation)
    .sort(compareByName);
  return pageOfAll(url, page, visible);
}

/** Creates a location (rule 4.1.1: inventory-modify, and not restricted to one location). */
export async function createLocation(
  principal: Principal,
  input: LocationCreateBody,
  completion: IdempotencyCompletion | undefined,
): Promise<LocationResource> {
  requirePermission(principal, "inventory.modify");
  if (locationRestriction(principal) !== null) {
    throw errors.permissionDenied("Users restricted to one location cannot create locations.");
  }
  const now = nowIso();
  const location: LocationItem = {
    accountId: principal.accountId,
    locationId: randomUUID(),
    name: input.name,
    nameKey: nameSortKey(input.name),
    shortName: input.short_name,
    address1: input.address_1 ?? undefined,
    address2: input.address_2 ?? undefined,
    city: input.city ?? undefined,
    region: input.region ?? undefined,
    country: input.country ?? undefined,
    postalCode: input.postal_code ?? undefined,
    manager: input.manager ?? undefined,
    phone: input.phone ?? undefined,
    fax: input.fax ?? undefined,
    email: input.email ?? undefined,
    active: true,
    createdAt: now,
    updatedAt: now,
  };
  const resource = presentLocation(location);
  await insertLocation(location, { completion, body: resource });
  return resource;
}

function assertWithinBoundary(principal: Principal, locationId: string): void {
  if (!mayReachLocation(principal, locationId)) throw errors.resourceMissing("location", locationId);
}

/** Zones of one active, accessible location ordered by name, read with the location in ONE Query. */
export async function listZones(principal: Principal, locationId: string, url: string, page: PageRequest): Promise<ListEnvelope<ZoneResource>> {
  assertWithinBoundary(principal, locationId);
  const { location, zones } = await readLocationTree(principal.accountId, locationId);
  if (!isAccessible(principal, location)) throw errors.resourceMissing("location", locationId);
  return pageOfAll(url, page, zones.map(presentZone).sort(compareByName));
}

/** One zone of an active, accessible location, as the zone list shows it (rule 4.1.3: else 404). */
export async function getZone(principal: Principal, locationId: string, zoneId: string): Promise<ZoneResource> {
  assertWithinBoundary(principal, locationId);
  const { location, zones } = await readLocationTree(principal.accountId, locationId);
  if (!isAccessible(principal, location)) throw errors.resourceMissing("location", locationId);
  const zone = zones.find((candidate) => candidate.zoneId === zoneId);
  if (!zone) throw errors.resourceMissing("zone", zoneId);
  return presentZone(zone);
}

/** Creates a zone in an active, accessible location (rules 4.1.2 and 4.1.3). */
export async function createZone(
  principal: Principal,
  locationId: string,
  input: ZoneWriteBody,
  completion: IdempotencyCompletion | undefined,
): Promise<ZoneResource> {
  requirePermission(principal, "inventory.modify");
  assertWithinBoundary(principal, locationId);
  const now = nowIso();
  const zone: ZoneItem = {
    accountId: principal.accountId,
    locationId,
    zoneId: randomUUID(),
    name: input.name,
    shortName: input.short_name,
    description: input.description ?? undefined,
    createdAt: now,
    updatedAt: now,
  };
  const resource = presentZone(zone);
  const failed = await insertZone(zone, { completion, body: resource });
  if (failed) throw errors.resourceMissing("location", locationId);
  return resource;
}

/**
 * Replaces a zone's name, short name and description (rule 4.1.2). The zone must belong to
 * the location in the path, which must be active and accessible; the location never changes.
 */
export async function updateZone(
  principal: Principal,
  locationId: string,
  zoneId: string,
  input: ZoneWriteBody,
  completion: IdempotencyCompletion | undefined,
): Promise<ZoneResource> {
  requirePermission(principal, "inventory.modify");
  assertWithinBoundary(principal, locationId);
  const updatedAt = nowIso();
  const resource: ZoneResource = {
    id: zoneId,
    object: "zone",
    location_id: locationId,
    name: input.name,
    short_name: input.short_name,
    description: input.description ?? null,
  };
  const failed = await replaceZone(
    { accountId: principal.accountId, locationId, zoneId },
    { name: input.name, shortName: input.short_name, description: input.description ?? undefined, updatedAt },
    { completion, body: resource },
  );
  if (failed?.failed(LOCATION_LABEL)) throw errors.resourceMissing("location", locationId);
  if (failed) throw errors.resourceMissing("zone", zoneId);
  return resource;
}
