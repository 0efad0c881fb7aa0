import * as z from "zod";
import { API_PREFIX, route, type RouteDefinition } from "./define.js";
import { syncPage, syncQuery, syncStart } from "../schemas/sync.js";

/** Endpoint group `sync` (spec part 1, section 4.7). */
export const syncRoutes: RouteDefinition[] = [
  route({
    operationId: "sync",
    method: "GET",
    path: `${API_PREFIX}/sync`,
    group: "sync",
    summary: "Incremental change feed",
    description:
      "start=now returns a sync_start checkpoint; since or cursor return a sync_page of {resource, id, operation} changes. Needs the read scope of every selected resource (items:read, invoices:read, estimates:read, purchase_orders:read, sales_orders:read) and account-wide visibility, else 403 sync_permission_denied. Parameter errors are 400 invalid_query_parameter; cursor errors are 400 sync_cursor_invalid, 403 sync_cursor_owner_mismatch, 409 sync_scope_changed, 409 sync_cursor_expired; since older than 90 days is 409 sync_full_refresh_required.",
    scopes: [],
    idempotency: "none",
    request: { query: syncQuery },
    example: { query: { start: "now", resources: "item" } },
    errors: {
      400: ["invalid_query_parameter", "sync_cursor_invalid"],
      403: ["sync_permission_denied", "sync_cursor_owner_mismatch"],
      409: ["sync_scope_changed", "sync_cursor_expired", "sync_full_refresh_required"],
    },
    responses: { 200: () => z.union([syncStart(), syncPage()]) },
  }),
];
