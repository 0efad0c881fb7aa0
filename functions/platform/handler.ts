import { createPublicHandler } from "../../lib/http/public-handler.js";
import { platformRoutes } from "../../lib/routes/platform.js";
import { API_PREFIX } from "../../lib/routes/define.js";
import { document, ok } from "../../lib/http/responses.js";
import { errors } from "../../lib/core/errors.js";
import { REFERENCE_CSP, referencePage, rendererScript } from "../../lib/openapi/reference.js";

/**
 * The whole route table and the OpenAPI document (every group's zod schemas) are loaded by
 * the first request that needs them, not at import: most requests here (the index, the HTML
 * reference, its script) need neither.
 */
let openApi: Promise<unknown> | undefined;
const openApiDocument = () => (openApi ??= import("../../lib/openapi/document.js").then((m) => m.buildOpenApiDocument()));

/**
 * Endpoint group `platform`: the API's public documents, and API Gateway's `$default` route:
 * a method and path no route has is 404 `route_not_found` (with `Allow` when the path is known
 * with other methods). All public: its pipeline never reads the table.
 */
export const handler = createPublicHandler(
  platformRoutes,
  {
    getApiIndex: async () => ok({ object: "api", version: "v3", links: { openapi: `${API_PREFIX}/openapi.json`, docs: `${API_PREFIX}/docs` } }),
    getOpenApiDocument: async () => ok(await openApiDocument()),
    getApiReference: async (req) =>
      document(referencePage(req.path), "text/html; charset=utf-8", {
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
    unmatched: async (method, path) => {
      const { methodsAtPath, noStoreAtPath } = await import("../../lib/routes/index.js");
      const allowed = methodsAtPath(path);
      const error =
        allowed.length > 0 && !(allowed as string[]).includes(method) ? errors.routeNotFound(method, path, allowed) : errors.routeNotFound(method, path);
      if (noStoreAtPath(path)) error.headers["Cache-Control"] = "no-store";
      return error;
    },
  },
);
