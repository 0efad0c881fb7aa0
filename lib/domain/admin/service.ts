import { AdminError, KitDefinitionError } from "../../core/failures.js";
import { randomUUID } from "node:crypto";
import { isValidZone } from "../../core/time-zones.js";
import { findApiKeysOfUser, readUsersOfAccount, scanAccounts } from "../../db/admin-store.js";
import { locationCreateBody } from "../../schemas/locations.js";
import { mintApiKey } from "../../auth/api-keys.js";
import { isPermission, isScope, PERMISSIONS, SCOPES } from "../../auth/permissions.js";
import {
  findApiKeyById,
  insertReferenceData,
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
import { insertUnit } from "../../db/items.js";
import { checkKitDefinitionInput } from "../kits/definitions.js";
import { nowIso } from "../../db/keys.js";
import type { AccountItem, ApiKeyItem, UserItem } from "../../db/service.js";
import { CUSTOM_FIELD_KINDS, type CustomFieldKind } from "../../db/entities/custom-field.js";

function checkTimeZone(zone: string | undefined): void {
  if (zone !== undefined && !isValidZone(zone)) throw new AdminError(`Unknown time zone: ${zone}.`);
}

function checkCurrency(currency: string | undefined): void {
  if (currency !== undefined && !/^[A-Z]{3}$/.test(currency)) throw new AdminError(`Currency must be a 3-letter ISO code: ${currency}.`);
}

function checkPermissions(permissions: readonly string[]): void {
  const unknown = permissions.filter((p) => !isPermission(p));
  if (unknown.length > 0) {
    throw new AdminError(`Unknown permission(s): ${unknown.join(", ")}. Known: ${PERMISSIONS.join(", ")}.`);
  }
}

/** Scopes for a key: known ones, or `all`; the error lists every valid scope. */
function checkScopes(scopes: readonly string[]): void {
  const unknown = scopes.filter((scope) => scope !== "all" && !isScope(scope));
  if (unknown.length > 0) throw new AdminError(`Unknown scope(s): ${unknown.join(", ")}. Known: ${SCOPES.join(", ")}, or all (every scope).`);
  if (scopes.length === 0) throw new AdminError("--scopes must name at least one scope, or all.");
}

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
  checkTimeZone(input.timeZone);
  checkCurrency(input.currency);
  const now = nowIso();
  const account: AccountItem = {
    accountId: randomUUID(),
    name: input.name.trim(),
    timeZone: input.timeZone ?? "UTC",
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

export async function updateAccount(accountId: string, input: AccountSettingsInput): Promise<AccountItem> {
  checkTimeZone(input.timeZone);
  if (input.estimateExpiryDays !== undefined && (!Number.isInteger(input.estimateExpiryDays) || input.estimateExpiryDays < 0)) {
    throw new AdminError("--estimate-expiry-days must be a whole number of days.");
  }
  if (input.recordLimit !== undefined && input.recordLimit !== null && (!Number.isInteger(input.recordLimit) || input.recordLimit < 0)) {
    throw new AdminError("--record-limit must be a whole number or none.");
  }
  if (!(await readAccount(accountId))) throw new AdminError(`No such account: ${accountId}.`);
  const { recordLimit, ...rest } = input;
  const changes: Partial<AccountItem> = { ...rest, updatedAt: nowIso() };
  for (const key of Object.keys(changes) as (keyof AccountItem)[]) if (changes[key] === undefined) delete changes[key];
  if (typeof recordLimit === "number") changes.recordLimit = recordLimit;
  return patchAccount(accountId, changes, recordLimit === null ? ["recordLimit"] : []);
}

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
  checkPermissions(input.permissions ?? []);
  checkTimeZone(input.timeZone);
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
    timeZone: input.timeZone,
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
  let expiresAt: string | undefined;
  if (input.expiresAt !== undefined) {
    const time = Date.parse(input.expiresAt);
    if (Number.isNaN(time) || !/^\d{4}-\d{2}-\d{2}/.test(input.expiresAt)) {
      throw new AdminError(`--expires-at must be an ISO 8601 time: ${input.expiresAt}.`);
    }
    expiresAt = new Date(time).toISOString();
  }
  const user = await requireUser(input.userId);
  const { apiKey, record } = newKeyRecord(user, input.name, scopes.includes("all") ? ["all"] : scopes, expiresAt);
  await insertApiKey(record);
  return { key_id: record.keyId, api_key: apiKey };
}

export async function revokeKey(keyId: string): Promise<{ key_id: string; revoked: true }> {
  const key = await findApiKeyById(keyId);
  if (!key) throw new AdminError(`No such key: ${keyId}.`);
  if (!key.revokedAt) await markApiKeyRevoked(key, nowIso());
  return { key_id: keyId, revoked: true };
}

function requireName(name: string): string {
  const trimmed = name.trim();
  if (!trimmed) throw new AdminError("--name is required.");
  if (trimmed.length > 255) throw new AdminError("--name must be at most 255 characters.");
  return trimmed;
}

/** Creates a custom-field definition for one record kind. */
export async function createCustomField(input: { accountId: string; kind: string; name: string }): Promise<{ custom_field_id: string }> {
  if (!(CUSTOM_FIELD_KINDS as readonly string[]).includes(input.kind)) {
    throw new AdminError(`--kind must be one of: ${CUSTOM_FIELD_KINDS.join(", ")}.`);
  }
  const name = requireName(input.name);
  const customFieldId = randomUUID();
  const created = await insertReferenceData(input.accountId, (e) =>
    e.customField.create({ accountId: input.accountId, kind: input.kind as CustomFieldKind, customFieldId, name, createdAt: nowIso() }).commit(),
  );
  if (!created) throw new AdminError(`No such account: ${input.accountId}.`);
  return { custom_field_id: customFieldId };
}

/** Creates a customer label (`customer_label_id` of customers, prospects and suppliers). */
export async function createCustomerLabel(input: { accountId: string; name: string }): Promise<{ customer_label_id: string }> {
  const name = requireName(input.name);
  const labelId = randomUUID();
  const created = await insertReferenceData(input.accountId, (e) =>
    e.customerLabel.create({ accountId: input.accountId, labelId, name, createdAt: nowIso() }).commit(),
  );
  if (!created) throw new AdminError(`No such account: ${input.accountId}.`);
  return { customer_label_id: labelId };
}

/** Creates a pricing tier (`pricing_tier_id` of customers and prospects). */
export async function createPricingTier(input: { accountId: string; name: string }): Promise<{ pricing_tier_id: string }> {
  const name = requireName(input.name);
  const pricingTierId = randomUUID();
  const created = await insertReferenceData(input.accountId, (e) =>
    e.pricingTier.create({ accountId: input.accountId, pricingTierId, name, createdAt: nowIso() }).commit(),
  );
  if (!created) throw new AdminError(`No such account: ${input.accountId}.`);
  return { pricing_tier_id: pricingTierId };
}

/** A principal acting as the account's owner, for operator actions that run domain code. */
async function ownerPrincipal(accountId: string): Promise<import("../../auth/permissions.js").Principal> {
  if (!(await readAccount(accountId))) throw new AdminError(`No such account: ${accountId}.`);
  return {
    accountId,
    userId: "operator",
    role: "owner",
    permissions: new Set(),
    assignedLocationId: null,
    timeZone: null,
    keyId: "operator",
    keyHash: "",
    scopes: null,
  };
}

/** Adds a unit of measure; `unit_id` comes from the account's unit sequence. */
export async function createUnit(input: { accountId: string; name: string }): Promise<{ unit_id: number }> {
  const name = requireName(input.name);
  if (!(await readAccount(input.accountId))) throw new AdminError(`No such account: ${input.accountId}.`);
  return { unit_id: await insertUnit(input.accountId, name) };
}

/** Creates an item through the same domain code as `POST /items`. */
export async function createItemAsOperator(input: {
  accountId: string;
  name: string;
  sku?: string;
  price?: string;
  cost?: string;
  categoryId?: string;
  unitId?: number;
  inventoryType?: "quantity" | "unique";
}): Promise<{ item_id: string }> {
  const principal = await ownerPrincipal(input.accountId);
  const { createItem } = await import("../records/items.js");
  const { itemCreateBody } = await import("../../schemas/items.js");
  const parsed = itemCreateBody().safeParse({
    name: input.name,
    sku: input.sku,
    price: input.price,
    cost: input.cost,
    category_id: input.categoryId,
    unit_id: input.unitId,
    inventory_type: input.inventoryType,
  });
  if (!parsed.success) throw new AdminError(parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; "));
  try {
    const item = await createItem(principal, parsed.data, undefined);
    return { item_id: item.id as string };
  } catch (error) {
    const details = (error as { details?: { param: string; message: string }[] }).details;
    throw new AdminError(details ? details.map((d) => `${d.param} ${d.message}`).join("; ") : (error as Error).message, { cause: error });
  }
}

/**
 * Stores a kit definition (`lib/domain/kits/definitions.ts`): an assembled item and its
 * components (active items of the same account, not the kit item itself, positive quantities,
 * each component once, at most 25, the variation named or the item's only one, no cycle),
 * numbered from the account's kit sequence.
 */
export async function createKit(input: {
  accountId: string;
  itemId: string;
  components: { itemId: string; quantity: number; variationId?: string }[];
  method?: "manual" | "automatic";
}): Promise<{ kit_id: string }> {
  const { createKitDefinition } = await import("../kits/definitions.js");
  try {
    checkKitDefinitionInput(input);
    if (!(await readAccount(input.accountId))) throw new AdminError(`No such account: ${input.accountId}.`);
    const { kitId } = await createKitDefinition(input);
    return { kit_id: kitId };
  } catch (error) {
    if (error instanceof KitDefinitionError) throw new AdminError(error.message, { cause: error });
    throw error;
  }
}

/**
 * Input checks that need no database, for the admin CLI to run before it connects (argument
 * errors are reported before any database is started). Each throws `AdminError`.
 */
export const operatorInputChecks = {
  timeZone: (zone: string): void => checkTimeZone(zone),
  currency: (currency: string): void => checkCurrency(currency),
  permissions: (permissions: readonly string[]): void => checkPermissions(permissions),
  scopes: (scopes: readonly string[]): void => checkScopes(scopes),
  expiresAt: (value: string): void => {
    if (Number.isNaN(Date.parse(value)) || !/^\d{4}-\d{2}-\d{2}/.test(value)) throw new AdminError(`--expires-at must be an ISO 8601 time: ${value}.`);
  },
  customFieldKind: (kind: string): void => {
    if (!(CUSTOM_FIELD_KINDS as readonly string[]).includes(kind)) throw new AdminError(`--kind must be one of: ${CUSTOM_FIELD_KINDS.join(", ")}.`);
  },
  name: (name: string): void => void requireName(name),
  location: (input: { name: string; shortName: string }): void => void locationBody(input),
  kit: (input: { itemId: string; components: { itemId: string; quantity: number }[] }): void => {
    try {
      checkKitDefinitionInput(input);
    } catch (error) {
      if (error instanceof KitDefinitionError) throw new AdminError(error.message);
      throw error;
    }
  },
};

export interface AccountSummary {
  account_id: string;
  name: string;
  time_zone: string;
  currency: string;
  created_at: string;
}

/** Every account, oldest first. */
export async function listAccounts(): Promise<AccountSummary[]> {
  const accounts = await scanAccounts();
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

function locationBody(input: { name: string; shortName: string }) {
  const parsed = locationCreateBody().safeParse({ name: input.name, short_name: input.shortName });
  if (!parsed.success) {
    const flag = (path: PropertyKey[]) => (path[0] === "short_name" ? "--short-name" : `--${String(path[0] ?? "name")}`);
    throw new AdminError(parsed.error.issues.map((i) => `${flag(i.path)}: ${i.message}`).join("; "));
  }
  return parsed.data;
}

/** Creates a location through the same domain code as `POST /locations`. */
export async function createLocationAsOperator(input: { accountId: string; name: string; shortName: string }): Promise<{ location_id: string }> {
  const body = locationBody(input);
  const principal = await ownerPrincipal(input.accountId);
  const { createLocation } = await import("../records/locations.js");
  try {
    const location = await createLocation(principal, body, undefined);
    return { location_id: location.id };
  } catch (error) {
    const details = (error as { details?: { param: string; message: string }[] }).details;
    throw new AdminError(details ? details.map((d) => `${d.param} ${d.message}`).join("; ") : (error as Error).message, { cause: error });
  }
}
