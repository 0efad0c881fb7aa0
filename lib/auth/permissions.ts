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

/**
 * What each permission grants, as operators read it (`npm run admin -- permissions`, the README
 * table, which a test keeps identical). Derived from the checks in lib/domain; keep in step.
 */
export const PERMISSION_DESCRIPTIONS: Readonly<Record<Permission, string>> = {
  "records.view_all":
    "See and change every customer, prospect, supplier and contact, and every purchase order, estimate, sales order and invoice of the account. Without it a user sees only the customers, prospects and suppliers they created, the contacts linked to those, and the documents assigned to them (anything else is 404, and a document can name only a customer or supplier they see). Stock transfers are account-wide either way. Needed to sync estimates, invoices, purchase orders and sales orders.",
  "accounts.manage": "List contacts (`GET /contacts`). Reading, creating and changing one contact needs no permission.",
  "inventory.list":
    "Read items, their variations and adjustments, units, kits and kit builds; sync items; see items and kits linked to tasks. Locations, zones and item categories need no permission to read.",
  "inventory.manage": "Read stock transfers and see them linked to tasks; every stock-transfer change needs it too, with `inventory.modify`.",
  "inventory.modify":
    "Create, change and delete items and adjust their stock; create and change item categories, locations and zones; build and disassemble kits; with `inventory.manage`, create, change, send, receive and delete stock transfers.",
  "costs.view":
    "See unit costs: an item's `cost` and a variation's `unit_cost_override` (without it both are `null`: the keys are always there, as existing v3 clients need), and the `shipping_cost` and line `unit_cost` and `total_cost` of estimates, sales orders and invoices (without it these keys are left out, as the spec says). Sending a `cost`, `unit_cost_override` or `shipping_cost` value without it is 403 `permission_denied`; an item's `cost` or `unit_cost_override` sent back as `null` (as read without it) changes nothing (`shipping_cost` is never read as `null`, and `null` is not a value it takes: 422). Purchase-order unit costs are always shown.",
  "prices.modify":
    "Set `unit_price` on inventory lines: without it that is 403 `permission_denied` on estimates and invoices, and ignored on sales orders (the item's price applies). Service lines always take the `unit_price` given.",
  "estimates.list": "Read estimates and see them linked to tasks; needed to decline one; with `records.view_all`, sync estimates.",
  "estimates.modify":
    "Create, change, preview, decline and delete estimates; convert them (into an invoice also needs `invoices.modify`, into a sales order `sales_orders.list` and `sales_orders.modify`).",
  "invoices.list":
    "Read invoices, their payments and packing lists, and see them linked to tasks; with `sales_orders.list`, a sales order's invoices; with `records.view_all`, sync invoices.",
  "invoices.modify":
    "Create, change, send, cancel and delete invoices; record and delete their payments; pack and ship them (with `invoices.list`); invoice a sales order (with `sales_orders.modify`); convert an estimate into an invoice (with `estimates.modify`).",
  "sales_orders.list":
    "Read sales orders and their packing lists, and see them linked to tasks; with `invoices.list`, their invoices; needed to convert an estimate into a sales order; with `records.view_all`, sync sales orders.",
  "sales_orders.modify":
    "Create, change and delete sales orders; pack and ship them (with `sales_orders.list`); invoice them (with `invoices.modify`); convert an estimate into a sales order (with `estimates.modify` and `sales_orders.list`).",
  "purchase_orders.list": "Read purchase orders and their payments, and see them linked to tasks; with `records.view_all`, sync purchase orders.",
  "purchase_orders.modify": "Create, change, send and receive purchase orders; record and delete their payments.",
  "tasks.manage_all":
    "See and change every task of the account (others see the tasks assigned to them or created by them); list and count tasks with `scope=all` or `scope=recovery`.",
  "tasks.assign": "Assign a task to another user (on create or update); `GET /tasks/assignees` lists every active user instead of only the caller.",
};

/**
 * The user settings besides permissions that limit what a user may do (architecture section 4),
 * described for operators beside the permissions (same readers as PERMISSION_DESCRIPTIONS).
 */
export const USER_SETTING_DESCRIPTIONS: Readonly<Record<"role" | "assigned_location_id" | "status" | "time_zone", string>> = {
  role: "`owner`: every permission and every location, whatever was granted (`user list` shows every permission); `staff` (the default): only the permissions granted.",
  assigned_location_id:
    "A staff user assigned to a location (`--location`) works in it alone: `GET /locations` lists only it and other locations' zones are 404; no location can be created; item and kit quantities count only its stock and only its adjustments and kit builds are listed; a purchase order, sales order, invoice or estimate at another location (its `location_id` or a line's stock row) is 404 `resource_missing` to every route, read or write, and left out of lists; a body naming another location (`location_id`, a line's stock row, an adjustment or a kit build) is 422 `validation_failed` on that field; other locations' kit builds cannot be disassembled (404); `GET /sync` is 403 `sync_permission_denied` (a cursor from before the assignment: 409 `sync_scope_changed`, as after any change of access). Stock transfers are not limited by it (spec: account-wide).",
  status: "`inactive`: every key of the user is refused (401) until the user is `active` again.",
  time_zone:
    "The zone of the user's \"today\" (the default dates of estimates, sales orders, invoices, stock transfers, receipts, shipments and payments) and of task deadlines with `time_zone_mode: mine`; unset, the account's zone applies. Where the spec says \"the (API) user's account timezone\" the account's zone applies whatever the user's: a purchase order's `issue_date` and `date_sent`, an invoice's `date_sent` and the `issue_date` of an estimate converted to an invoice.",
};

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
  "webhooks:read",
  "webhooks:write",
] as const;

export type Scope = (typeof SCOPES)[number];

/**
 * What each scope lets a key call (the route table's `scopes`, plus the read scopes that task
 * record links and sync check), as operators read it (`npm run admin -- scopes`, the README
 * table, which a test keeps identical). A key also needs its user's permissions.
 */
export const SCOPE_DESCRIPTIONS: Readonly<Record<Scope, string>> = {
  "items:read": "Read locations, zones, item categories, items (variations, adjustments) and units; link items to tasks; sync items.",
  "items:write": "Create and change locations, zones, item categories and items; delete items; adjust stock (`POST /items/{id}/adjustments`).",
  "customers:read": "Read customers; link customers to tasks.",
  "customers:write": "Create and change customers (`POST`, `PATCH`, `PUT /customers`).",
  "customers:delete": "Delete customers.",
  "prospects:read": "Read prospects; link prospects to tasks.",
  "prospects:write": "Create and change prospects (`POST`, `PATCH`, `PUT /prospects`).",
  "prospects:delete": "Delete prospects.",
  "suppliers:read": "Read suppliers; link suppliers to tasks.",
  "suppliers:write": "Create and change suppliers (`POST`, `PATCH`, `PUT /suppliers`).",
  "suppliers:delete": "Delete suppliers.",
  "contacts:read": "Read contacts.",
  "contacts:write": "Create and change contacts.",
  "estimates:read": "Read estimates; link estimates to tasks; sync estimates.",
  "estimates:write": "Create and change estimates, and preview them (`POST /estimates/preview`, `POST /estimates/{id}/preview`).",
  "estimates:convert": "Convert an estimate into an invoice (`POST /estimates/{id}/convert-to-invoice`).",
  "estimates:convert_to_sales_order": "Convert an estimate into a sales order (`POST /estimates/{id}/convert-to-sales-order`).",
  "estimates:decline": "Decline estimates (`POST /estimates/{id}/decline`).",
  "estimates:delete": "Delete estimates.",
  "invoices:read":
    "Read invoices, their payments and packing lists; with `sales_orders:read`, a sales order's invoices; link invoices to tasks; sync invoices.",
  "invoices:write":
    "Create, change, send, cancel and delete invoices; record and delete their payments; with `sales_orders:write`, invoice a sales order (`POST /sales-orders/{id}/invoices`).",
  "invoices:pack": "Pack invoices and ship their packing lists (`POST /invoices/{id}/fulfillments`, `.../ship`).",
  "sales_orders:read": "Read sales orders and their packing lists; with `invoices:read`, their invoices; link sales orders to tasks; sync sales orders.",
  "sales_orders:write": "Create, change and delete sales orders; with `invoices:write`, invoice them.",
  "sales_orders:pack": "Pack sales orders and ship their packing lists (`POST /sales-orders/{id}/fulfillments`, `.../ship`).",
  "purchase_orders:read": "Read purchase orders and their payments; link purchase orders to tasks; sync purchase orders.",
  "purchase_orders:write": "Create and change purchase orders; record and delete their payments.",
  "purchase_orders:send": "Send purchase orders (`POST /purchase-orders/{id}/send`).",
  "purchase_orders:receive": "Receive purchase orders (`POST /purchase-orders/{id}/receive`).",
  "stock_transfers:read": "Read stock transfers; link stock transfers to tasks.",
  "stock_transfers:write": "Create and change stock transfers.",
  "stock_transfers:send": "Send stock transfers (`POST /stock-transfers/{id}/send`).",
  "stock_transfers:receive": "Receive stock transfers (`POST /stock-transfers/{id}/receive`).",
  "stock_transfers:delete": "Delete stock transfers.",
  "tasks:read": "Read tasks, their activity, stats, assignees and the caller's reminders; reconcile (`POST /tasks/reconcile`).",
  "tasks:write": "Create and change tasks; act on the caller's reminders (`POST /tasks/reminders/{id}/read`, `dismiss`, `snooze`, `complete`).",
  "kits:read": "Read kits and their builds; link kits to tasks.",
  "kits:build": "Build kits (`POST /kits/{id}/builds`).",
  "kits:disassemble": "Disassemble kit builds (`DELETE /kits/{id}/builds/{build_id}`).",
  "webhooks:read": "Read webhook endpoints and their deliveries.",
  "webhooks:write":
    "Create, change and delete webhook endpoints, rotate their secrets and send test messages (each resource an endpoint receives also needs what `GET /sync` needs for it).",
};

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
  /**
   * What of its access this request consulted, when it records it: permissions, `"location"`
   * (the caller's whole location restriction, e.g. stock totals over every location it sees)
   * and `"location:<id>"` (one location it acted at). An idempotent outcome depends on these
   * alone (`usedAccessText`).
   */
  accessUsed?: Set<Permission | "location" | `location:${string}`>;
}

/** The parts of a caller or a stored user that permission checks read. */
export type AccessHolder = Pick<Principal, "role" | "permissions" | "assignedLocationId" | "accessUsed">;

/**
 * What a stored user may see and do, as the key's principal and the webhook fan-out read it:
 * its role, its known permissions, and its location (owners are never restricted).
 */
export function accessOfUser(user: {
  role: "owner" | "staff";
  permissions?: readonly string[];
  assignedLocationId?: string;
}): Pick<Principal, "role" | "permissions" | "assignedLocationId"> {
  return {
    role: user.role,
    permissions: new Set((user.permissions ?? []).filter(isPermission)),
    assignedLocationId: user.role === "owner" ? null : (user.assignedLocationId ?? null),
  };
}

export function hasPermission(principal: Pick<AccessHolder, "role" | "permissions" | "accessUsed">, permission: Permission): boolean {
  principal.accessUsed?.add(permission);
  return holds(principal, permission);
}

const holds = (principal: Pick<AccessHolder, "role" | "permissions">, permission: Permission): boolean =>
  principal.role === "owner" || principal.permissions.has(permission);

const restrictionOf = (principal: Pick<AccessHolder, "role" | "assignedLocationId">): string | null =>
  principal.role === "owner" ? null : principal.assignedLocationId;

const PERMISSION_NAMES: Partial<Record<Permission, string>> = {
  "inventory.modify": "inventory-modify",
  "accounts.manage": "account-management",
};

/**
 * Throws 403 `permission_denied` unless the caller's live user record grants `permission`;
 * `param` names the field or parameter that needs it, when one does.
 */
export function requirePermission(principal: Principal, permission: Permission, param?: string): void {
  if (!hasPermission(principal, permission)) {
    throw errors.permissionDenied(`This action requires the ${PERMISSION_NAMES[permission] ?? permission} permission.`, param);
  }
}

export function hasScope(principal: Principal, scope: string): boolean {
  return principal.scopes === null || principal.scopes.has(scope);
}

/**
 * Whether the caller may take an action: the user's permission AND the key's scope (spec part 1,
 * section 1: permissions are checked in addition to the key's scopes). What `can_edit` and
 * `can_pack` answer.
 */
export const mayAct = (principal: Principal, permission: Permission, scope: string): boolean =>
  hasPermission(principal, permission) && hasScope(principal, scope);

/**
 * All the access a caller has, as text (`<location or *>|<permissions, sorted>`): what a sync
 * cursor is bound to (`accessFingerprint`).
 */
export function accessText(principal: AccessHolder): string {
  return `${restrictionOf(principal) ?? "*"}|${PERMISSIONS.filter((p) => holds(principal, p)).join(",")}`;
}

/**
 * The access a request's outcome depended on, as text: of the permissions it consulted, those
 * the user held, and its location (`*` for none) when it consulted the location rule, else an
 * empty location. Stored with an idempotent outcome, so that a replay needs only what the
 * request used (`holdsAccess`), not every permission the user had then. A caller that records
 * nothing gets its whole access (`accessText`).
 */
export function usedAccessText(principal: AccessHolder): string {
  const used = principal.accessUsed;
  if (!used) return accessText(principal);
  const location = used.has("location") ? (restrictionOf(principal) ?? "*") : "";
  const permissions = PERMISSIONS.filter((p) => used.has(p) && holds(principal, p)).join(",");
  const places = [...used].flatMap((entry) => (entry.startsWith("location:") ? [entry.slice("location:".length)] : [])).sort();
  return places.length === 0 ? `${location}|${permissions}` : `${location}|${permissions}|${places.join(",")}`;
}

/**
 * Whether the caller holds at least the access `text` records (`usedAccessText`): every
 * permission it lists, no narrower location when it names one, and every location it acted at
 * (spec part 1, section 1: every request, a replay too, is evaluated against the user's current
 * permissions).
 */
export function holdsAccess(principal: AccessHolder, text: string): boolean {
  return accessLost(principal, text) === null;
}

/**
 * What the caller lacks of the access `text` records (`usedAccessText`), or null when it holds
 * it all: `visibility` when a record the request acted on is now out of its sight (a location
 * it acted at is out of reach, or `records.view_all` is gone: such a record is 404 to it
 * everywhere), else `access` (another permission, or a narrower restriction than an answer
 * covering every location it saw).
 */
export function accessLost(principal: AccessHolder, text: string): "visibility" | "access" | null {
  const [location, granted = "", places = ""] = text.split("|");
  const restriction = restrictionOf(principal);
  const missing = granted === "" ? [] : granted.split(",").filter((name) => !isPermission(name) || !holds(principal, name));
  if (places !== "" && restriction !== null && places.split(",").some((place) => place !== restriction)) return "visibility";
  if (missing.includes("records.view_all")) return "visibility";
  if (location !== "" && restriction !== null && restriction !== location) return "access";
  return missing.length > 0 ? "access" : null;
}

/**
 * Whether the caller may act at `locationId` (an unrestricted caller everywhere, a restricted
 * one at its own location only), recording that location as one the request acted at.
 */
export function reachesLocation(principal: Pick<AccessHolder, "role" | "assignedLocationId" | "accessUsed">, locationId: string): boolean {
  principal.accessUsed?.add(`location:${locationId}`);
  const restriction = restrictionOf(principal);
  return restriction === null || restriction === locationId;
}

/**
 * The location a restricted user's writes default to (a document's location, the row a line
 * sells from), or null: NOT recorded as access the request used. A default reveals nothing of
 * other locations, and the location the write then acts at is recorded when it is reached
 * (`reachesLocation`), so a replay after a restriction that still reaches it is answered.
 */
export const defaultLocationOf = (principal: Pick<AccessHolder, "role" | "assignedLocationId">): string | null => restrictionOf(principal);

/** The location a user is restricted to, or null (owners are never restricted); records that the request applied the whole restriction. */
export function locationRestriction(principal: Pick<AccessHolder, "role" | "assignedLocationId" | "accessUsed">): string | null {
  principal.accessUsed?.add("location");
  return restrictionOf(principal);
}
