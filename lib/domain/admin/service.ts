import { nowIso } from "../../core/clock.js";
import { AdminError } from "../../core/failures.js";
import { randomUUID } from "node:crypto";
import { findApiKeysOfUser, readUsersOfAccount, readAllAccounts, rebuildOperatorDirectory } from "../../db/admin-store.js";
import { indexOpenEstimateExpiries } from "../../db/estimate-expiries.js";
import { createDynamoClient } from "../../db/client.js";
import { prepareRestoredTable as prepareTable, type PreparedTable, UnsuitableTableError } from "../../db/restored-table.js";
import { isLocalStack } from "../../core/config.js";
import { mintApiKey } from "../../auth/api-keys.js";
import { isPermission, PERMISSIONS } from "../../auth/permissions.js";
import {
  findApiKeyById,
  findUserById,
  insertAccountWithOwner,
  insertApiKey,
  insertUser,
  markApiKeyRevoked,
  moveUser,
  patchAccount,
  readAccount,
  removeUser,
  writeUser,
} from "../../db/admin-store.js";
import { readLocation } from "../../db/locations.js";
import type { AccountItem, ApiKeyItem, UserItem } from "../../db/service.js";
import {
  MAX_ESTIMATE_EXPIRY_DAYS,
  MAX_RECORD_LIMIT,
  checkCurrency,
  checkEmail,
  checkExpiresAt,
  checkPermissions,
  checkScopes,
  storedTimeZone,
  requireName,
} from "./checks.js";

/**
 * The operator's actions (admin CLI, seeding, tests): accounts, users and keys here; reference
 * data and records in `reference-data.ts`, input checks in `checks.ts` (both re-exported).
 */

export { MAX_ESTIMATE_EXPIRY_DAYS, MAX_RECORD_LIMIT, operatorInputChecks } from "./checks.js";
export {
  createCustomField,
  createCustomerLabel,
  createItemAsOperator,
  createKit,
  createLocationAsOperator,
  createPricingTier,
  createUnit,
} from "./reference-data.js";

function newKeyRecord(user: UserItem, name: string | undefined, scopes: string[], expiresAt: string | undefined) {
  const { apiKey, keyHash, keyId } = mintApiKey(user.accountId);
  const record: ApiKeyItem = {
    accountId: user.accountId,
    keyHash,
    keyId,
    userId: user.userId,
    name,
    scopes,
    expiresAt,
    createdAt: nowIso(),
  };
  return { apiKey, record };
}

export interface CreatedAccount {
  account_id: string;
  user_id: string;
  key_id: string;
  api_key: string;
}

/** Creates an account with an owner user and an all-scopes key for that owner. */
export async function createAccount(input: { name: string; timeZone?: string; currency?: string }): Promise<CreatedAccount> {
  if (!input.name.trim()) throw new AdminError("--name is required.");
  const timeZone = storedTimeZone(input.timeZone);
  checkCurrency(input.currency);
  const now = nowIso();
  const account: AccountItem = {
    accountId: randomUUID(),
    name: input.name.trim(),
    timeZone: timeZone ?? "UTC",
    currency: input.currency ?? "USD",
    estimateExpiryDays: 30,
    packingListsEnabled: true,
    packingServiceItems: false,
    createdAt: now,
    updatedAt: now,
  };
  const owner: UserItem = {
    accountId: account.accountId,
    userId: randomUUID(),
    name: "Owner",
    role: "owner",
    status: "active",
    createdAt: now,
    updatedAt: now,
  };
  const { apiKey, record } = newKeyRecord(owner, "Owner key", ["all"], undefined);
  await insertAccountWithOwner(account, owner, record);
  return { account_id: account.accountId, user_id: owner.userId, key_id: record.keyId, api_key: apiKey };
}

export interface AccountSettingsInput {
  timeZone?: string;
  packingListsEnabled?: boolean;
  packingServiceItems?: boolean;
  estimateExpiryDays?: number;
  paymentTerms?: string;
  taxLabel?: string;
  tax2Label?: string;
  /** null removes the limit. */
  recordLimit?: number | null;
}

export async function updateAccount(accountId: string, settings: AccountSettingsInput): Promise<AccountItem> {
  const input = { ...settings, timeZone: storedTimeZone(settings.timeZone) };
  if (
    input.estimateExpiryDays !== undefined &&
    (!Number.isInteger(input.estimateExpiryDays) || input.estimateExpiryDays < 0 || input.estimateExpiryDays > MAX_ESTIMATE_EXPIRY_DAYS)
  ) {
    throw new AdminError(`--estimate-expiry-days must be a whole number of days, at most ${MAX_ESTIMATE_EXPIRY_DAYS}.`);
  }
  if (
    input.recordLimit !== undefined &&
    input.recordLimit !== null &&
    (!Number.isInteger(input.recordLimit) || input.recordLimit < 0 || input.recordLimit > MAX_RECORD_LIMIT)
  ) {
    throw new AdminError(`--record-limit must be a whole number, at most ${MAX_RECORD_LIMIT}, or none.`);
  }
  // Texts documents copy as their defaults: trimmed, at most what a document takes; a blank one
  // removes the setting (documents then show null, as for an account that never had one).
  const removed: (keyof AccountItem)[] = input.recordLimit === null ? ["recordLimit"] : [];
  const texts: Partial<AccountItem> = {};
  for (const [key, option] of ACCOUNT_TEXTS) {
    const value = input[key]?.trim();
    if (value === undefined) continue;
    if (value.length > MAX_ACCOUNT_TEXT) throw new AdminError(`--${option} is at most ${MAX_ACCOUNT_TEXT} characters.`);
    if (value === "") removed.push(key);
    else texts[key] = value;
  }
  if (!(await readAccount(accountId))) throw new AdminError(`No such account: ${accountId}.`);
  const { recordLimit: limit, paymentTerms: _terms, taxLabel: _label, tax2Label: _label2, ...rest } = input;
  const changes: Partial<AccountItem> = { ...rest, ...texts, updatedAt: nowIso() };
  for (const key of Object.keys(changes) as (keyof AccountItem)[]) if (changes[key] === undefined) delete changes[key];
  if (typeof limit === "number") changes.recordLimit = limit;
  return patchAccount(accountId, changes, removed);
}

/** The account's text settings and their CLI options. */
const ACCOUNT_TEXTS = [
  ["paymentTerms", "payment-terms"],
  ["taxLabel", "tax-label"],
  ["tax2Label", "tax-2-label"],
] as const;
/** A document's `payment_terms` (and a label) holds at most this many characters. */
const MAX_ACCOUNT_TEXT = 255;

export interface UserInput {
  accountId: string;
  name: string;
  email?: string;
  role?: "owner" | "staff";
  permissions?: string[];
  locationId?: string;
  timeZone?: string;
}

async function checkLocation(accountId: string, locationId: string | undefined): Promise<void> {
  if (locationId === undefined) return;
  if (!(await readLocation(accountId, locationId))) throw new AdminError(`No such location in account ${accountId}: ${locationId}.`);
}

export async function createUser(input: UserInput): Promise<{ user_id: string }> {
  if (!input.name.trim()) throw new AdminError("--name is required.");
  checkEmail(input.email);
  checkPermissions(input.permissions ?? []);
  const timeZone = storedTimeZone(input.timeZone);
  await checkLocation(input.accountId, input.locationId);
  const now = nowIso();
  const user: UserItem = {
    accountId: input.accountId,
    userId: randomUUID(),
    name: input.name.trim(),
    email: input.email,
    role: input.role ?? "staff",
    permissions: input.permissions && input.permissions.length > 0 ? input.permissions : undefined,
    assignedLocationId: input.locationId,
    status: "active",
    timeZone,
    createdAt: now,
    updatedAt: now,
  };
  if (!(await insertUser(user))) throw new AdminError(`No such account: ${input.accountId}.`);
  return { user_id: user.userId };
}

async function requireUser(userId: string): Promise<UserItem> {
  const user = await findUserById(userId);
  if (!user) throw new AdminError(`No such user: ${userId}.`);
  return user;
}

export interface UserUpdateInput {
  permissions?: string[];
  status?: "active" | "inactive";
  /** null removes the location restriction. */
  locationId?: string | null;
  /** Moving to another account voids the user's existing keys. */
  accountId?: string;
}

export async function updateUser(userId: string, input: UserUpdateInput): Promise<{ user_id: string; account_id: string }> {
  if (input.permissions) checkPermissions(input.permissions);
  const user = await requireUser(userId);
  const now = nowIso();
  const next: UserItem = { ...user, updatedAt: now };
  if (input.permissions) next.permissions = input.permissions.length > 0 ? input.permissions : undefined;
  if (input.status) next.status = input.status;
  const targetAccount = input.accountId ?? user.accountId;
  if (input.locationId !== undefined) {
    if (input.locationId !== null) await checkLocation(targetAccount, input.locationId);
    next.assignedLocationId = input.locationId ?? undefined;
  }
  if (targetAccount !== user.accountId) {
    next.accountId = targetAccount;
    next.keysNotBefore = now;
    // A location of the old account means nothing in the new one.
    if (input.locationId === undefined) next.assignedLocationId = undefined;
    if (!(await moveUser(user, next))) throw new AdminError(`No such account: ${targetAccount}.`);
  } else {
    await writeUser(next);
  }
  return { user_id: userId, account_id: next.accountId };
}

export async function deleteUser(userId: string): Promise<{ user_id: string; deleted: true }> {
  await removeUser(await requireUser(userId));
  return { user_id: userId, deleted: true };
}

export async function createKey(input: {
  userId: string;
  name?: string;
  scopes?: string[] | "all";
  expiresAt?: string;
}): Promise<{ key_id: string; api_key: string }> {
  const scopes = input.scopes === undefined || input.scopes === "all" ? ["all"] : input.scopes;
  checkScopes(scopes);
  const name = input.name === undefined ? undefined : requireName(input.name);
  const expiresAt = input.expiresAt === undefined ? undefined : checkExpiresAt(input.expiresAt);
  const user = await requireUser(input.userId);
  const { apiKey, record } = newKeyRecord(user, name, scopes.includes("all") ? ["all"] : scopes, expiresAt);
  await insertApiKey(record);
  return { key_id: record.keyId, api_key: apiKey };
}

export async function revokeKey(keyId: string): Promise<{ key_id: string; revoked: true }> {
  const key = await findApiKeyById(keyId);
  if (!key) throw new AdminError(`No such key: ${keyId}.`);
  if (!key.revokedAt) await markApiKeyRevoked(key, nowIso());
  return { key_id: keyId, revoked: true };
}

export interface AccountSummary {
  account_id: string;
  name: string;
  time_zone: string;
  currency: string;
  created_at: string;
}

/** Every account, oldest first. */
export async function listAccounts(): Promise<AccountSummary[]> {
  const accounts = await readAllAccounts();
  return accounts
    .sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.accountId.localeCompare(b.accountId))
    .map((a) => ({ account_id: a.accountId, name: a.name, time_zone: a.timeZone, currency: a.currency, created_at: a.createdAt }));
}

/**
 * A user as the operator sees them: `permissions` and `location_id` are what the user
 * effectively holds (an owner holds every permission and no location restriction, whatever is
 * stored), as authentication decides them.
 */
export interface UserSummary {
  user_id: string;
  name: string;
  email: string | null;
  role: "owner" | "staff";
  status: "active" | "inactive";
  permissions: string[];
  location_id: string | null;
  created_at: string;
}

/** The users of an account, oldest first, with their effective permissions and location. */
export async function listUsers(accountId: string): Promise<UserSummary[]> {
  if (!(await readAccount(accountId))) throw new AdminError(`No such account: ${accountId}.`);
  const users = await readUsersOfAccount(accountId);
  return users
    .sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.userId.localeCompare(b.userId))
    .map((u) => ({
      user_id: u.userId,
      name: u.name,
      email: u.email ?? null,
      role: u.role,
      status: u.status,
      permissions: u.role === "owner" ? [...PERMISSIONS].sort() : [...(u.permissions ?? [])].filter(isPermission).sort(),
      location_id: u.role === "owner" ? null : (u.assignedLocationId ?? null),
      created_at: u.createdAt,
    }));
}

/**
 * A key as the operator sees it: never the key or its hash. `status` is what authentication
 * would decide about the key itself: `revoked`, `expired`, `void` (minted before its user
 * moved to another account) or `active` (the user's own status is in `user list`).
 */
export interface KeySummary {
  key_id: string;
  name: string | null;
  scopes: string[];
  status: "active" | "revoked" | "expired" | "void";
  created_at: string;
  expires_at: string | null;
  revoked_at: string | null;
}

/** The keys of a user, oldest first. */
export async function listKeys(userId: string): Promise<KeySummary[]> {
  const user = await requireUser(userId);
  const keys = await findApiKeysOfUser(userId);
  const now = Date.now();
  return keys
    .sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.keyId.localeCompare(b.keyId))
    .map((k) => {
      const moved = k.accountId !== user.accountId || (user.keysNotBefore !== undefined && k.createdAt < user.keysNotBefore);
      const status = k.revokedAt ? "revoked" : k.expiresAt && Date.parse(k.expiresAt) <= now ? "expired" : moved ? "void" : "active";
      return {
        key_id: k.keyId,
        name: k.name ?? null,
        scopes: [...(k.scopes ?? [])].sort(),
        status,
        created_at: k.createdAt,
        expires_at: k.expiresAt ?? null,
        revoked_at: k.revokedAt ?? null,
      };
    });
}

/**
 * Writes the operator directory's entries for every account, user and key (a one-time Scan:
 * a table written before the directory existed). Safe to repeat.
 */
export async function rebuildDirectory(): Promise<{ accounts: number; users: number; keys: number }> {
  return rebuildOperatorDirectory();
}

/**
 * Puts the open estimates whose expiry is still ahead into the expiry index when they were
 * written before it existed (a one-time Scan, after the deploy that adds the index), so the
 * change feed marks them when they turn Expired. Safe to repeat.
 */
export async function indexEstimateExpiries(): Promise<{ indexed: number }> {
  return { indexed: await indexOpenEstimateExpiries() };
}

/**
 * Makes a table restored from a point-in-time backup ready to be the stack's table (stream,
 * TTL, point-in-time recovery, deletion protection; lib/db/restored-table.ts). Waits up to 30
 * minutes for the table to settle after each change.
 */
export async function prepareRestoredTable(tableName: string): Promise<PreparedTable> {
  const client = createDynamoClient();
  try {
    return await prepareTable(client, tableName, { timeoutMs: 30 * 60_000, intervalMs: isLocalStack() ? 100 : 5_000 });
  } catch (error) {
    if (error instanceof UnsuitableTableError) throw new AdminError(error.message, { cause: error });
    if ((error as Error).name === "ResourceNotFoundException") throw new AdminError(`No such table: ${tableName}.`, { cause: error });
    throw error;
  } finally {
    client.destroy();
  }
}
