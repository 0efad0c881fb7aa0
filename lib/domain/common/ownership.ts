import { hasPermission, type Principal } from "../../auth/permissions.js";

/**
 * Whether the caller sees a record owned by (or assigned to) `ownerUserId` (architecture section
 * 4: `records.view_all` sees every record, a user without it only their own). Ownership is asked
 * first: a request about the caller's own record does not depend on `records.view_all`, so its
 * idempotent replay does not need it either.
 */
export const seesOwnedBy = (principal: Principal, ownerUserId: string | undefined): boolean =>
  ownerUserId === principal.userId || hasPermission(principal, "records.view_all");
