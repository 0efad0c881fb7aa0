import type { RouteDefinition } from "../routes/define.js";
import { authentication } from "./middlewares/authentication.js";
import { idempotency } from "./middlewares/idempotency.js";
import { requireScopes } from "./middlewares/scopes.js";
import { buildHandler, type UnmatchedRequest } from "./pipeline.js";
import type { RouteHandler } from "./types.js";

export type { UnmatchedRequest } from "./pipeline.js";

/**
 * Builds the Lambda handler of one endpoint group (its own routes only): the full request
 * pipeline (architecture section 3): request context, error handler, routing, authentication,
 * scopes, rate limit, JSON body, validation, idempotency, the comparison of a body that copies
 * the record with the record (`validateWriteBack`), then the group's route handler by
 * `operationId`. Throws at import time when a route of the group has no implementation.
 */
export function createApiHandler(
  routes: readonly RouteDefinition[],
  implementations: Record<string, RouteHandler>,
  options: { unmatched?: UnmatchedRequest } = {},
) {
  return buildHandler(routes, implementations, { beforeRateLimit: [authentication(), requireScopes()], afterValidation: [idempotency()] }, options);
}
