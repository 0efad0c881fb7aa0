import { parseApiKey } from "../../lib/auth/api-keys.js";
import { randomUUID } from "node:crypto";
import { createAccount, createKey, createUser, updateUser } from "../../lib/domain/admin/service.js";
import type { Permission } from "../../lib/auth/permissions.js";
import { db } from "../../lib/db/service.js";
import { expect } from "vitest";
import type { ApiClient } from "./api.js";

/**
 * Fixture builders shared by every integration test: an account (with its owner key), users
 * with given permissions or location, keys with given scopes. Each call makes fresh ids, so
 * tests share one table safely.
 */
export interface TestAccount {
  accountId: string;
  ownerUserId: string;
  ownerKeyId: string;
  ownerKey: string;
}

export async function newAccount(name = `Test ${randomUUID().slice(0, 8)}`): Promise<TestAccount> {
  const created = await createAccount({ name });
  return { accountId: created.account_id, ownerUserId: created.user_id, ownerKeyId: created.key_id, ownerKey: created.api_key };
}

export interface TestUser {
  userId: string;
  key: string;
  keyId: string;
}

/** A staff user with exactly these permissions (and location), plus one key for it. */
export async function newUser(
  account: TestAccount,
  options: { permissions?: Permission[]; locationId?: string; role?: "owner" | "staff"; scopes?: string[] | "all"; timeZone?: string } = {},
): Promise<TestUser> {
  const { user_id } = await createUser({
    accountId: account.accountId,
    name: `User ${randomUUID().slice(0, 6)}`,
    role: options.role ?? "staff",
    permissions: options.permissions ?? [],
    locationId: options.locationId,
    timeZone: options.timeZone,
  });
  const key = await createKey({ userId: user_id, scopes: options.scopes ?? "all" });
  return { userId: user_id, key: key.api_key, keyId: key.key_id };
}

/** A key of the user; an `expiresAt` in the past (which the admin CLI refuses) is set on the stored key after its creation. */
export async function newKey(userId: string, options: { scopes?: string[] | "all"; expiresAt?: string } = {}) {
  const past = options.expiresAt !== undefined && Date.parse(options.expiresAt) <= Date.now();
  const key = await createKey({ userId, scopes: options.scopes ?? "all", expiresAt: past ? undefined : options.expiresAt });
  if (past) {
    const { accountId, keyHash } = parseApiKey(key.api_key)!;
    await db()
      .entities.apiKey.patch({ accountId, keyHash })
      .set({ expiresAt: new Date(options.expiresAt!).toISOString() })
      .go();
  }
  return { key: key.api_key, keyId: key.key_id };
}

export { updateUser };

/** Marks a location inactive (locations are deactivated outside the API). */
export async function deactivateLocation(accountId: string, locationId: string): Promise<void> {
  await db().entities.location.patch({ accountId, locationId }).set({ active: false }).go();
}

export const idempotencyKey = (): string => `test-${randomUUID()}`;

/** A location created through the API (its name doubles as its short name), 201 asserted; its id. */
export async function newLocation(client: { post: ApiClient["post"] }, name: string): Promise<string> {
  const created = await client.post("/locations", { name, short_name: name.slice(0, 25) }, { idempotencyKey: idempotencyKey() });
  expect(created.status, created.text).toBe(201);
  return created.body.id as string;
}

/** The account's stored locations, read straight from the table (to assert stored effects). */
export async function storedLocations(accountId: string) {
  const { data } = await db().entities.location.query.byName({ accountId }).go({ pages: "all" });
  return data;
}

/** A location's stored zones, read straight from the table. */
export async function storedZones(accountId: string, locationId: string) {
  const { data } = await db().entities.zone.query.primary({ accountId, locationId }).go({ pages: "all" });
  return data;
}
