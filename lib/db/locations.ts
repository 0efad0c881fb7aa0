import { TransactionCanceledError } from "../core/failures.js";
import { batchGetAll } from "./batch-get.js";
import { db, type LocationItem, type ZoneItem } from "./service.js";
import { writeTransaction, type Cancellation, type TransactionBuilder } from "./transactions.js";
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
export async function readLocationTree(accountId: string, locationId: string): Promise<{ location: LocationItem | undefined; zones: ZoneItem[] }> {
  const { data } = await db().collections.locationTree({ accountId, locationId }).go({ pages: "all", consistent: true });
  return { location: data.location[0], zones: data.zone };
}

type Outcome = { completion: IdempotencyCompletion | undefined; body: unknown };

export async function insertLocation(location: LocationItem, outcome: Outcome): Promise<void> {
  const failed = await writeTransaction((tx) => tx.add("location", tx.entities.location.create(location).commit()), outcome);
  if (failed) throw new TransactionCanceledError(failed.reasons);
}

/** The label of the active-location check of a zone write. */
export const LOCATION_LABEL = "location";

function activeLocationCheck(tx: TransactionBuilder, accountId: string, locationId: string): void {
  tx.add(
    LOCATION_LABEL,
    tx.entities.location
      .check({ accountId, locationId })
      .where(({ active }, { eq }) => eq(active, true))
      .commit(),
  );
}

/** Inserts a zone on condition that its location exists and is active (`LOCATION_LABEL`). */
export async function insertZone(zone: ZoneItem, outcome: Outcome): Promise<Cancellation | null> {
  return writeTransaction((tx) => {
    activeLocationCheck(tx, zone.accountId, zone.locationId);
    tx.add("zone", tx.entities.zone.create(zone).commit());
  }, outcome);
}

/**
 * Replaces a zone's writable fields on condition that the location is active (`LOCATION_LABEL`)
 * and the zone exists in that location (`zone`).
 */
export async function replaceZone(
  key: { accountId: string; locationId: string; zoneId: string },
  fields: { name: string; shortName: string; description: string | undefined; updatedAt: string },
  outcome: Outcome,
): Promise<Cancellation | null> {
  return writeTransaction((tx) => {
    const update = tx.entities.zone.patch(key).set({ name: fields.name, shortName: fields.shortName, updatedAt: fields.updatedAt });
    activeLocationCheck(tx, key.accountId, key.locationId);
    tx.add("zone", (fields.description === undefined ? update.remove(["description"]) : update.set({ description: fields.description })).commit());
  }, outcome);
}

/** Locations by id (BatchGetItems of 100, all at once; missing ones are absent). */
export async function readLocations(accountId: string, locationIds: readonly string[], options: { consistent?: boolean } = {}): Promise<LocationItem[]> {
  const keys = [...new Set(locationIds)].map((locationId) => ({ accountId, locationId }));
  return batchGetAll("read locations", keys, (chunk) =>
    db()
      .entities.location.get(chunk)
      .go({ consistent: options.consistent ?? true }),
  );
}
