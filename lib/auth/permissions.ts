import { errors } from "../core/errors.js";

/**
 * User permissions (architecture section 4). Owners hold every permission and see every
 * location; staff users hold the permissions granted to them.
 */
export const PERMISSIONS = [
  "records.view_all",
  "accounts.manage",
  "inventory.list",
  "inventory.manage",
  "inventory.modify",
  "costs.view",
  "prices.modify",
  "estimates.list",
  "estimates.modify",
  "invoices.list",
  "invoices.modify",
  "sales_orders.list",
  "sales_orders.modify",
  "purchase_orders.list",
  "purchase_orders.modify",
  "tasks.manage_all",
  "tasks.assign",
] as const;

export type Permission = (typeof PERMISSIONS)[number];

export function isPermission(value: string): value is Permission {
  return (PERMISSIONS as readonly string[]).includes(value);
}

/** Scopes an API key can carry (spec part 1, section 5, rule 7). */
export const SCOPES = [
  "items:read",
  "items:write",
  "customers:read",
  "customers:write",
  "customers:delete",
  "prospects:read",
  "prospects:write",
  "prospects:delete",
  "suppliers:read",
  "suppliers:write",
  "suppliers:delete",
  "contacts:read",
  "contacts:write",
  "estimates:read",
  "estimates:write",
  "estimates:convert",
  "estimates:convert_to_sales_order",
  "estimates:decline",
  "estimates:delete",
  "invoices:read",
  "invoices:write",
  "invoices:pack",
  "sales_orders:read",
  "sales_orders:write",
  "sales_orders:pack",
  "purchase_orders:read",
  "purchase_orders:write",
  "purchase_orders:send",
  "purchase_orders:receive",
  "stock_transfers:read",
  "stock_transfers:write",
  "stock_transfers:send",
  "stock_transfers:receive",
  "stock_transfers:delete",
  "tasks:read",
  "tasks:write",
  "kits:read",
  "kits:build",
  "kits:disassemble",
] as const;

export type Scope = (typeof SCOPES)[number];

export function isScope(value: string): value is Scope {
  return (SCOPES as readonly string[]).includes(value);
}

/** The caller of a request, as resolved from its API key and the key owner's live record. */
export interface Principal {
  accountId: string;
  userId: string;
  role: "owner" | "staff";
  permissions: ReadonlySet<Permission>;
  /** Null when the user may see every location. */
  assignedLocationId: string | null;
  timeZone: string | null;
  keyId: string;
  keyHash: string;
  /** Null when the key may do everything its user may do. */
  scopes: ReadonlySet<string> | null;
}

export function hasPermission(principal: Principal, permission: Permission): boolean {
  return principal.role === "owner" || principal.permissions.has(permission);
}

const PERMISSION_NAMES: Partial<Record<Permission, string>> = {
  "inventory.modify": "inventory-modify",
  "accounts.manage": "account-management",
};

/** Throws 403 `permission_denied` unless the caller's live user record grants `permission`. */
export function requirePermission(principal: Principal, permission: Permission): void {
  if (!hasPermission(principal, permission)) {
    throw errors.permissionDenied(`This action requires the ${PERMISSION_NAMES[permission] ?? permission} permission.`);
  }
}

export function hasScope(principal: Principal, scope: string): boolean {
  return principal.scopes === null || principal.scopes.has(scope);
}

/** The location a user is restricted to, or null (owners are never restricted). */
export function locationRestriction(principal: Principal): string | null {
  return principal.role === "owner" ? null : principal.assignedLocationId;
}
