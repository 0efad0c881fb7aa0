import { createApiHandler } from "../../lib/http/api-handler.js";
import { platformRoutes } from "../../lib/routes/platform.js";
import { ok } from "../../lib/http/responses.js";
import { buildOpenApiDocument } from "../../lib/openapi/document.js";

let document: unknown;

/**
 * Endpoint group `platform`: the public OpenAPI document, and API Gateway's `$default` route
 * (every unknown method and path), which the pipeline answers with 404 `route_not_found`.
 */
export const handler = createApiHandler(platformRoutes, {
  getOpenApiDocument: async () => ok((document ??= buildOpenApiDocument())),
});
