import { hasScope } from "../../auth/permissions.js";
import { errors } from "../../core/errors.js";
import type { PipelineMiddleware, PipelineRequest } from "../types.js";

/** Checks the API key's scopes against the route table's `scopes` (403 `insufficient_scope`). */
export function requireScopes(): PipelineMiddleware {
  const requireScopesBefore = (request: PipelineRequest): void => {
    const { route, principal } = request.internal;
    if (!route || !principal) return;
    const missing = route.scopes.find((scope) => !hasScope(principal, scope));
    if (missing) throw errors.insufficientScope(missing);
  };
  return { before: requireScopesBefore };
}
