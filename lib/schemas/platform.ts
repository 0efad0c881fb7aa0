import * as z from "zod";

/** `GET /api/v3`: what the API is and where its descriptions are (paths on this host). */
export const apiIndex = z
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
  .meta({ id: "ApiIndex" });

export const openApiDocument = z.record(z.string(), z.unknown()).meta({ description: "An OpenAPI 3.1 document" });
export const htmlPage = z.string().meta({ description: "An HTML page" });
export const javascript = z.string().meta({ description: "A JavaScript file" });
