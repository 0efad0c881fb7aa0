import * as z from "zod";
import { API_PREFIX, route, type RouteDefinition } from "./define.js";

/** Endpoint group `platform`: public documents. */
export const platformRoutes: RouteDefinition[] = [
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
    responses: { 200: z.record(z.string(), z.unknown()) },
  }),
];
