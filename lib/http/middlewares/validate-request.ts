import { errors } from "../../core/errors.js";
import { countIssues, toValidationDetails } from "../validation.js";
import type { PipelineMiddleware, PipelineRequest } from "../types.js";
import type { RouteDefinition } from "../../routes/define.js";
import type { ValidationDetail } from "../../core/errors.js";

const isObject = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === "object" && !Array.isArray(value);

/** 422 with the route's code when the body carries fields the service controls (top level or in `lines`). */
function rejectUnsupportedFields(rule: NonNullable<RouteDefinition["unsupportedFields"]>, body: unknown): void {
  if (!isObject(body)) return;
  const details: ValidationDetail[] = [];
  const message = "is set by the service and cannot be supplied.";
  for (const field of rule.fields) if (field in body) details.push({ param: field, code: "unsupported_field", message });
  if (rule.lineFields && Array.isArray(body.lines)) {
    body.lines.forEach((line, index) => {
      if (!isObject(line)) return;
      for (const field of rule.lineFields!) if (field in line) details.push({ param: `lines[${index}].${field}`, code: "unsupported_field", message });
    });
  }
  if (details.length > 0) throw errors.invalidBody(rule.code, details);
}

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
      if (route.unsupportedFields) rejectUnsupportedFields(route.unsupportedFields, request.event.body);
      const result = bodySchema.safeParse(request.event.body);
      if (!result.success) {
        const details = toValidationDetails(result.error, request.event.body);
        throw route.bodyErrorCode
          ? errors.invalidBody(route.bodyErrorCode, details, undefined, countIssues(result.error))
          : errors.validationFailed(details, undefined, countIssues(result.error));
      }
      body = result.data;
    }
    request.internal.input = { path, query, body };
  };
  return { before: validateRequestBefore };
}
