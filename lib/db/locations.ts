import { db, type LocationItem, type ZoneItem } from "./service.js";
import { writeTransaction, type CancellationReason } from "./transactions.js";
import type { IdempotencyCompletion } from "../core/idempotency.js";

/** Every location of the account (one Query on the by-name index). */
export async function queryLocations(accountId: string): Promise<LocationItem[]> {
  const { data } = await db().entities.location.query.byName({ accountId }).go({ pages: "all" });
  return data;
}

export async function readLocation(accountId: string, locationId: string): Promise<LocationItem | undefined> {
  const { data } = await db().entities.location.get({ accountId, locationId }).go({ consistent: true });
  return data ?? undefined;
}

/** A location and all of its zones in ONE Query (they share a partition). */
export async function readLocationTree(
  accountId: string,
  locationId: string,
): Promise<{ location: LocationItem | undefined; zones: ZoneItem[] }> {
  const { data } = await db().collections.locationTree({ accountId, locationId }).go({ pages: "all", consistent: true });
  return { location: data.location[0], zones: data.zone };
}

type Outcome = { completion: IdempotencyCompletion | undefined; body: unknown };

export async function insertLocation(location: LocationItem, outcome: Outcome): Promise<void> {
  const failed = await writeTransaction(({ location: locations }) => [locations.create(location).commit()], outcome);
  if (failed) throw new Error(`Location insert rejected: ${JSON.stringify(failed)}`);
}

/**
 * Inserts a zone on condition that its location exists and is active. Returns the
 * cancellation reasons (index 0 = the location check) or null when written.
 */
export async function insertZone(zone: ZoneItem, outcome: Outcome): Promise<CancellationReason[] | null> {
  return writeTransaction(
    ({ location, zone: zones }) => [
      location
        .check({ accountId: zone.accountId, locationId: zone.locationId })
        .where(({ active }, { eq }) => eq(active, true))
        .commit(),
      zones.create(zone).commit(),
    ],
    outcome,
  );
}

/**
 * Replaces a zone's writable fields on condition that the location is active (index 0) and
 * the zone exists in that location (index 1).
 */
export async function replaceZone(
  key: { accountId: string; locationId: string; zoneId: string },
  fields: { name: string; shortName: string; description: string | undefined; updatedAt: string },
  outcome: Outcome,
): Promise<CancellationReason[] | null> {
  return writeTransaction(
    ({ location, zone }) => {
      const update = zone.patch(key).set({ name: fields.name, shortName: fields.shortName, updatedAt: fields.updatedAt });
      return [
        location
          .check({ accountId: key.accountId, locationId: key.locationId })
          .where(({ active }, { eq }) => eq(active, true))
          .commit(),
        (fields.description === undefined ? update.remove(["description"]) : update.set({ description: fields.description })).commit(),
      ];
    },
    outcome,
  );
}
