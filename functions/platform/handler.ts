import { createApiHandler } from "../../lib/http/api-handler.js";
import { platformRoutes } from "../../lib/routes/platform.js";
import { methodsAtPath, API_PREFIX } from "../../lib/routes/index.js";
import { document, ok } from "../../lib/http/responses.js";
import { errors } from "../../lib/core/errors.js";
import { buildOpenApiDocument } from "../../lib/openapi/document.js";
import { REFERENCE_CSP, referencePage, rendererScript } from "../../lib/openapi/reference.js";

let openApi: unknown;

/**
 * Endpoint group `platform`: the API's public documents (built on first request, never at
 * import), and API Gateway's `$default` route: a path no route has is 404 `route_not_found`,
 * a known path with another method is 405 `method_not_allowed` with `Allow`.
 */
export const handler = createApiHandler(
  platformRoutes,
  {
    getApiIndex: async () => ok({ object: "api", version: "v3", links: { openapi: `${API_PREFIX}/openapi.json`, docs: `${API_PREFIX}/docs` } }),
    getOpenApiDocument: async () => ok((openApi ??= buildOpenApiDocument())),
    getApiReference: async () =>
      document(referencePage(), "text/html; charset=utf-8", {
        "Content-Security-Policy": REFERENCE_CSP,
        "Cache-Control": "no-cache",
        "X-Content-Type-Options": "nosniff",
        "Referrer-Policy": "no-referrer",
      }),
    getApiReferenceScript: async () =>
      document(await rendererScript(), "text/javascript; charset=utf-8", {
        "Cache-Control": "public, max-age=86400",
        "X-Content-Type-Options": "nosniff",
      }),
  },
  {
    unmatched: (method, path) => {
      const allowed = methodsAtPath(path);
      return allowed.length > 0 && !(allowed as string[]).includes(method) ? errors.methodNotAllowed(method, path, allowed) : errors.routeNotFound(method, path);
    },
  },
);
