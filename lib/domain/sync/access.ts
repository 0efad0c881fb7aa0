import { type AccessHolder, hasPermission, hasScope, locationRestriction, type Permission, type Principal } from "../../auth/permissions.js";
import { ApiError } from "../../core/errors.js";
import type { SyncResource } from "../../sync/classify.js";

/**
 * Who may follow a resource's changes (spec part 1, section 7): the feed (`feed.ts`) and the
 * webhook endpoints and fan-out apply the same rule. Apart from the feed so that what only
 * checks access loads neither the cursor codec nor its secret.
 */

/** 403 `sync_permission_denied` on `resources`, the parameter that selected what the caller may not sync (the message says why). */
const denied = (message: string, param?: string) => new ApiError(403, "invalid_request_error", "sync_permission_denied", message, param ? { param } : {});

/** What each resource needs: its scope, and the permissions of account-wide visibility. */
const ACCESS: Record<SyncResource, { scope: string; permissions: Permission[] }> = {
  item: { scope: "items:read", permissions: ["inventory.list"] },
  invoice: { scope: "invoices:read", permissions: ["records.view_all", "invoices.list"] },
  estimate: { scope: "estimates:read", permissions: ["records.view_all", "estimates.list"] },
  purchase_order: { scope: "purchase_orders:read", permissions: ["records.view_all", "purchase_orders.list"] },
  sales_order: { scope: "sales_orders:read", permissions: ["records.view_all", "sales_orders.list"] },
};

/** The parts of a user that decide what it may sync (a caller's principal, or a stored user). */
export type SyncViewer = AccessHolder;

/** Whether a user sees every record of `resource` (no location boundary, the list permissions). */
export function seesAccountWide(viewer: SyncViewer, resource: SyncResource): boolean {
  return locationRestriction(viewer) === null && ACCESS[resource].permissions.every((permission) => hasPermission(viewer, permission));
}

/** Whether the caller may sync `resource`: its key's scope and account-wide visibility. */
export function maySync(principal: Principal, resource: SyncResource): boolean {
  return hasScope(principal, ACCESS[resource].scope) && seesAccountWide(principal, resource);
}

/** 403 `sync_permission_denied` unless the caller may sync every selected resource account-wide. */
export function requireSyncAccess(principal: Principal, resources: readonly SyncResource[]): void {
  for (const resource of resources) {
    const access = ACCESS[resource];
    if (!hasScope(principal, access.scope)) {
      throw denied(`Syncing ${resource} requires the ${access.scope} scope.`, "resources");
    }
    if (!seesAccountWide(principal, resource)) {
      throw denied(`Syncing ${resource} requires account-wide visibility of ${resource} records.`, "resources");
    }
  }
}
