/**
 * The operator's input checks (admin CLI and `lib/domain/admin`): time zones, currencies,
 * permissions, scopes, names, locations and kit definitions. No database: each throws `AdminError`.
 */
import { AdminError, KitDefinitionError } from "../../core/failures.js";
import { canonicalTimeZone, isValidZone } from "../../core/time-zones.js";
import { locationCreateBody } from "../../schemas/locations.js";
import { itemCreateBody } from "../../schemas/items.js";
import { isPermission, isScope, PERMISSIONS, SCOPES } from "../../auth/permissions.js";
import { checkKitDefinitionInput } from "../kits/definitions.js";
import { CUSTOM_FIELD_KINDS } from "../../db/entities/custom-field.js";
import { isCalendarDate } from "../../schemas/common.js";
import { z } from "zod";

export function checkTimeZone(zone: string | undefined): void {
  if (zone !== undefined && !isValidZone(zone)) throw new AdminError(`Unknown time zone: ${zone}.`);
}

/** A time zone as stored: checked, with the zone database's casing (`europe/london` -> `Europe/London`), as the API stores one. */
export function storedTimeZone(zone: string | undefined): string | undefined {
  checkTimeZone(zone);
  return zone === undefined ? undefined : (canonicalTimeZone(zone) ?? zone);
}

/** ISO 4217 codes in use, as the runtime's Intl knows them. */
const CURRENCIES = new Set(Intl.supportedValuesOf("currency"));

export function checkCurrency(currency: string | undefined): void {
  if (currency !== undefined && !CURRENCIES.has(currency)) throw new AdminError(`Currency must be an ISO 4217 code in use (e.g. USD, EUR): ${currency}.`);
}

export function checkPermissions(permissions: readonly string[]): void {
  const unknown = permissions.filter((p) => !isPermission(p));
  if (unknown.length > 0) {
    throw new AdminError(`Unknown permission(s): ${unknown.join(", ")}. Known: ${PERMISSIONS.join(", ")}.`);
  }
}

/** Scopes for a key: known ones, or `all`; the error lists every valid scope. */
export function checkScopes(scopes: readonly string[]): void {
  const unknown = scopes.filter((scope) => scope !== "all" && !isScope(scope));
  if (unknown.length > 0) throw new AdminError(`Unknown scope(s): ${unknown.join(", ")}. Known: ${SCOPES.join(", ")}, or all (every scope).`);
  if (scopes.length === 0) throw new AdminError("--scopes must name at least one scope, or all.");
}

/** ISO 8601 as `--expires-at` takes it: a date, or a date and time with its offset (`Z` or `+02:00`). */
const EXPIRES_AT = /^(\d{4}-\d{2}-\d{2})(T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2}))?$/;

/** A key's `--expires-at`: a real ISO 8601 date or time (with its offset) in the future (a key expired at birth is a mistake), as stored. */
export function checkExpiresAt(value: string): string {
  const match = EXPIRES_AT.exec(value);
  const time = Date.parse(value);
  // Date.parse rolls an impossible day over (2030-02-30 is March 2nd): the date itself must exist.
  if (!match || !isCalendarDate(match[1]!) || Number.isNaN(time)) {
    throw new AdminError(`--expires-at must be an ISO 8601 date or time with its offset (e.g. 2030-01-31T00:00:00Z): ${value}.`);
  }
  if (time <= Date.now()) throw new AdminError(`--expires-at must be in the future: ${value}.`);
  return new Date(time).toISOString();
}

/** Most days an estimate's default expiry may be after its issue date (100 years). */
export const MAX_ESTIMATE_EXPIRY_DAYS = 36_500;
/** The largest record limit an account may have. */
export const MAX_RECORD_LIMIT = 1_000_000_000;

/** A user's `--email`: an email address, as the API's own email fields take them. */
export function checkEmail(email: string | undefined): void {
  if (email !== undefined && !z.email().max(255).safeParse(email).success) throw new AdminError(`--email must be an email address: ${email}.`);
}

export function requireName(name: string): string {
  const trimmed = name.trim();
  if (!trimmed) throw new AdminError("--name must not be blank.");
  if (trimmed.length > 255) throw new AdminError("--name must be at most 255 characters.");
  return trimmed;
}

export function locationBody(input: { name: string; shortName: string }) {
  const parsed = locationCreateBody().safeParse({ name: input.name, short_name: input.shortName });
  if (!parsed.success) {
    const flag = (path: PropertyKey[]) => (path[0] === "short_name" ? "--short-name" : `--${String(path[0] ?? "name")}`);
    throw new AdminError(parsed.error.issues.map((i) => `${flag(i.path)}: ${i.message}`).join("; "));
  }
  return parsed.data;
}

/** The admin CLI's flag of each `POST /items` field `item create` takes. */
const ITEM_FLAGS: Record<string, string> = {
  name: "--name",
  sku: "--sku",
  price: "--price",
  cost: "--cost",
  category_id: "--category",
  unit_id: "--unit",
  inventory_type: "--type",
};

/** The options of the admin CLI's `item create` (the account aside). */
export interface OperatorItemInput {
  name: string;
  sku?: string;
  price?: string;
  cost?: string;
  categoryId?: string;
  unitId?: number;
  inventoryType?: "quantity" | "unique";
}

/** `item create`'s options as a `POST /items` body, checked by the route's own schema (no database). */
export function itemBody(input: OperatorItemInput) {
  const parsed = itemCreateBody().safeParse({
    name: input.name,
    sku: input.sku,
    price: input.price,
    cost: input.cost,
    category_id: input.categoryId,
    unit_id: input.unitId,
    inventory_type: input.inventoryType,
  });
  if (!parsed.success) {
    throw new AdminError(parsed.error.issues.map((i) => `${ITEM_FLAGS[String(i.path[0])] ?? String(i.path[0])}: ${i.message}`).join("; "));
  }
  return parsed.data;
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
  expiresAt: (value: string): void => void checkExpiresAt(value),
  email: (email: string): void => checkEmail(email),
  customFieldKind: (kind: string): void => {
    if (!(CUSTOM_FIELD_KINDS as readonly string[]).includes(kind)) throw new AdminError(`--kind must be one of: ${CUSTOM_FIELD_KINDS.join(", ")}.`);
  },
  name: (name: string): void => void requireName(name),
  location: (input: { name: string; shortName: string }): void => void locationBody(input),
  item: (input: OperatorItemInput): void => void itemBody(input),
  kit: (input: { itemId: string; components: { itemId: string; quantity: number }[] }): void => {
    try {
      checkKitDefinitionInput(input);
    } catch (error) {
      if (error instanceof KitDefinitionError) throw new AdminError(error.message);
      throw error;
    }
  },
};
