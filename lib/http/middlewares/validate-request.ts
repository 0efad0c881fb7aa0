import { errors } from "../../core/errors.js";
import { countIssues, toValidationDetails } from "../validation.js";
import type { PipelineMiddleware, PipelineRequest } from "../types.js";

/**
 * Validates path, query and body against the route's zod schemas. A malformed path id
 * cannot name a record, so it is 404 `resource_missing`; a bad query value is 422
 * `invalid_query_parameter` naming the parameter; a bad body is 422 `validation_failed`
 * with one detail per field.
 */
export function validateRequest(): PipelineMiddleware {
  const validateRequestBefore = (request: PipelineRequest): void => {
    const route = request.internal.route;
    if (!route) return;
    const { path: pathSchema, query: querySchema, body: bodySchema } = route.request;

    let path: Record<string, unknown> = request.event.pathParameters ?? {};
    if (pathSchema) {
      const result = pathSchema.safeParse(path);
      if (!result.success) throw errors.resourceMissing("resource", Object.values(path).join("/"));
      path = result.data as Record<string, unknown>;
    }

    let query: Record<string, unknown> = request.event.queryStringParameters ?? {};
    if (querySchema) {
      const result = querySchema.safeParse(query);
      if (!result.success) {
        const detail = toValidationDetails(result.error, query)[0]!;
        throw errors.invalidQueryParameter(detail.param, `Query parameter ${detail.param} ${detail.message}`);
      }
      query = result.data as Record<string, unknown>;
    }

    let body: unknown = undefined;
    if (bodySchema) {
      const result = bodySchema.safeParse(request.event.body);
      if (!result.success) throw errors.validationFailed(toValidationDetails(result.error, request.event.body), undefined, countIssues(result.error));
      body = result.data;
    }
    request.internal.input = { path, query, body };
  };
  return { before: validateRequestBefore };
}
