import * as z from "zod";
import { lazy } from "./lazy.js";

/** `GET /api/v3`: what the API is and where its descriptions are (paths on this host). */
export const apiIndex = lazy(() =>
  z
    .object({
      object: z.literal("api"),
      version: z.literal("v3"),
      links: z
        .object({
          openapi: z.string().meta({ description: "The OpenAPI 3.1 document", example: "/api/v3/openapi.json" }),
          docs: z.string().meta({ description: "The HTML reference rendered from it", example: "/api/v3/docs" }),
        })
        .meta({ description: "Paths on this host, like a list's `url`" }),
    })
    .meta({ id: "ApiIndex" }),
);

export const openApiDocument = lazy(() =>
  z.record(z.string(), z.unknown()).meta({
    description: "An OpenAPI 3.1 document",
    example: {
      openapi: "3.1.0",
      info: { title: "Inventory and Sales Management API", version: "3.0.0" },
      paths: { "/api/v3/locations": { get: { operationId: "listLocations" } } },
    },
  }),
);
export const htmlPage = lazy(() =>
  z.string().meta({
    description: "An HTML page",
    example:
      '<!doctype html>\n<html lang="en">\n<head><title>Inventory and Sales Management API v3 reference</title></head>\n<body><redoc spec-url="openapi.json"></redoc><script src="docs/redoc.standalone.js"></script></body>\n</html>',
  }),
);
export const javascript = lazy(() =>
  z.string().meta({
    description: "A JavaScript file",
    example: "/*! For license information please see redoc.standalone.js.LICENSE.txt */\n!function(e,t){...}(this,(()=>{...}));",
  }),
);
