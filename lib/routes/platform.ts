import { API_PREFIX, route, type RouteDefinition } from "./define.js";
import { apiIndex, htmlPage, javascript, openApiDocument } from "../schemas/platform.js";

/**
 * Endpoint group `platform`: the API's public documents. Its function also serves API
 * Gateway's `$default` route: an unknown route is 404 `route_not_found`, with `Allow` listing
 * the methods of a path that other routes have.
 */
export const platformRoutes: RouteDefinition[] = [
  route({
    operationId: "getApiIndex",
    method: "GET",
    path: API_PREFIX,
    group: "platform",
    summary: "The API's index: its version and links to its OpenAPI document and HTML reference",
    scopes: [],
    authenticated: false,
    idempotency: "none",
    request: {},
    responses: { 200: apiIndex },
  }),
  route({
    operationId: "getOpenApiDocument",
    method: "GET",
    path: `${API_PREFIX}/openapi.json`,
    group: "platform",
    summary: "The OpenAPI 3.1 document of this API",
    scopes: [],
    authenticated: false,
    idempotency: "none",
    request: {},
    responses: { 200: openApiDocument },
  }),
  route({
    operationId: "getApiReference",
    method: "GET",
    path: `${API_PREFIX}/docs`,
    group: "platform",
    summary: "The HTML API reference, rendered from the OpenAPI document",
    description: `Served with a Content-Security-Policy that lets the page load nothing but this API's own resources (no CDN). Also at \`${API_PREFIX}/docs/\` (trailing slash).`,
    scopes: [],
    authenticated: false,
    idempotency: "none",
    request: {},
    responses: { 200: htmlPage },
    produces: "text/html; charset=utf-8",
    headers: ["Content-Security-Policy", "Cache-Control"],
    trailingSlash: true,
  }),
  route({
    operationId: "getApiReferenceScript",
    method: "GET",
    path: `${API_PREFIX}/docs/redoc.standalone.js`,
    group: "platform",
    summary: "The script that renders the HTML API reference (Redoc)",
    scopes: [],
    authenticated: false,
    idempotency: "none",
    request: {},
    responses: { 200: javascript },
    produces: "text/javascript; charset=utf-8",
    headers: ["Cache-Control"],
  }),
];
