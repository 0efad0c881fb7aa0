import type { RouteDefinition } from "../routes/define.js";
import { buildHandler, type UnmatchedRequest } from "./pipeline.js";
import type { RouteHandler } from "./types.js";

/**
 * The handler of a group whose routes are all public (platform): the same pipeline as
 * `createApiHandler` without the stages that read the table (authentication, scopes,
 * idempotency), which public routes skip anyway. Its function has no table access (its IAM
 * role grants none), and its bundle holds no database code (no ElectroDB, no AWS SDK), so it
 * imports fast. Refuses a route that needs authentication or idempotency.
 */
export function createPublicHandler(
  routes: readonly RouteDefinition[],
  implementations: Record<string, RouteHandler>,
  options: { unmatched?: UnmatchedRequest } = {},
) {
  for (const route of routes) {
    if (route.authenticated || route.idempotency !== "none") {
      throw new Error(`Route ${route.operationId} needs authentication or idempotency: build its group with createApiHandler.`);
    }
  }
  return buildHandler(routes, implementations, { beforeRateLimit: [], afterValidation: [] }, options);
}
