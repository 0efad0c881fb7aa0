import middy from "@middy/core";
import type { Context } from "aws-lambda";
import { newDbUsage, withDbUsage } from "../db/metrics.js";
import { pathPattern, routeKey, specificity, type RouteDefinition } from "../routes/define.js";
import { errors, type ApiError } from "../core/errors.js";
import { apiErrorOf, errorHandler } from "./middlewares/error-handler.js";
import { jsonBody } from "./middlewares/json-body.js";
import { rateLimit } from "./middlewares/rate-limit.js";
import { requestContext } from "./middlewares/request-context.js";
import { type ReadCurrent, validateRequest, validateWriteBack } from "./middlewares/validate-request.js";
import type { ApiRequest, HttpEvent, HttpResult, PipelineMiddleware, PipelineRequest, RouteHandler } from "./types.js";

/** What a request that matches no route of the group gets (default: 404 `route_not_found`). */
export type UnmatchedRequest = (method: string, path: string) => ApiError | Promise<ApiError>;

/**
 * The methods of a more specific path than `route`'s that `path` literally is, if any: API
 * Gateway sends `GET /estimates/preview` (a path only POST has) to `GET /estimates/{estimate_id}`,
 * and that request is a wrong method on a known path, not a missing estimate.
 */
function literalPathMethods(patterns: readonly { route: RouteDefinition; pattern: RegExp }[], route: RouteDefinition, path: string): string[] {
  const literal = patterns.filter((other) => specificity(other.route.path, route.path) < 0 && other.pattern.test(path));
  return [...new Set(literal.map((other) => other.route.method))].sort();
}

/** Resolves the route from API Gateway's route key; `$default` and unknown keys are `unmatched`. */
function resolveRoute(routes: readonly RouteDefinition[], unmatched: UnmatchedRequest): PipelineMiddleware {
  const byKey = new Map(routes.map((r) => [routeKey(r), r]));
  const patterns = routes.map((r) => ({ route: r, pattern: pathPattern(r.path) }));
  const exact = new Map(routes.map((r) => [r, pathPattern(r.path, r.trailingSlash)]));
  // A route with `trailingSlash` serves its path with one trailing slash too, should API Gateway send that to `$default`.
  const slashed = (event: HttpEvent) => {
    const path = event.rawPath ?? "";
    const route = path.length > 1 && path.endsWith("/") ? byKey.get(`${event.requestContext?.http?.method ?? ""} ${path.slice(0, -1)}`) : undefined;
    return route?.trailingSlash ? route : undefined;
  };
  const resolveRouteBefore = async (request: PipelineRequest): Promise<void> => {
    const route = byKey.get(request.event.routeKey) ?? slashed(request.event);
    const method = request.event.requestContext?.http?.method ?? "";
    const path = request.event.rawPath ?? "";
    if (!route) throw await unmatched(method, path);
    // API Gateway also hands a route a path it is not spelled as (`/tasks/` to `GET /tasks`):
    // the fixed part of a path has one spelling, deployed as locally, where the platform
    // function answers it (with `no-store` under a group that sends it).
    if (!exact.get(route)!.test(path)) {
      const error = await unmatched(method, path);
      if (route.noStore) error.headers["Cache-Control"] = "no-store";
      throw error;
    }
    request.internal.route = route;
    const allowed = literalPathMethods(patterns, route, path);
    if (allowed.length > 0) throw errors.routeNotFound(method, path, allowed);
  };
  return { before: resolveRouteBefore };
}

/** API Gateway waits at most 30 s for a function: a request's receipt time is never older when its handler starts. */
const MAX_GATEWAY_MS = 30_000;

/** Retrying writes give up this long before the Lambda's deadline, leaving time to answer. */
const DEADLINE_MARGIN_MS = 3000;

/**
 * Builds the Lambda handler of one endpoint group (its own routes only): the request pipeline
 * (architecture section 3) around a dispatcher that calls the group's route handler by
 * `operationId`. `stages` are the middlewares between routing and body parsing that need
 * the database (authentication, scopes; idempotency last): `createApiHandler` passes them,
 * `createPublicHandler` has none, so a public group's bundle holds no database code.
 * Throws at import time when a route of the group has no implementation.
 */
export function buildHandler(
  routes: readonly RouteDefinition[],
  implementations: Record<string, RouteHandler>,
  stages: { beforeRateLimit: PipelineMiddleware[]; afterValidation: PipelineMiddleware[] },
  options: { unmatched?: UnmatchedRequest } = {},
) {
  for (const route of routes) {
    if (!implementations[route.operationId]) throw new Error(`Route ${route.operationId} of ${route.group} has no handler.`);
  }

  const dispatch = async (event: HttpEvent, _context: Context, request: PipelineRequest): Promise<HttpResult> => {
    const state = request.internal;
    if (state.answer) return state.answer; // decided before the handler (an idempotent replay)
    const route = state.route!;
    const implementation = implementations[route.operationId]!;
    const input = state.input ?? { path: {}, query: {}, body: undefined };
    const apiRequest: ApiRequest = {
      principal: state.principal!,
      params: input.path as Record<string, string>,
      query: input.query,
      body: input.body,
      ...(input.bodyProblems ? { bodyProblems: input.bodyProblems } : {}),
      path: event.rawPath,
      headers: event.headers ?? {},
      completion: (statusCode) => (state.idempotency ? { context: state.idempotency, statusCode } : undefined),
    };
    state.handlerStarted = true;
    const response = await implementation(apiRequest).catch((error: unknown) => {
      // A copy's revision that went stale after the copy was checked: the write names it as sent.
      if (state.revisionFromBody && apiErrorOf(error)?.code === "mobile_mutation_conflict") throw errors.mobileMutationConflict("revision");
      throw error;
    });
    return {
      statusCode: response.statusCode,
      headers: { "Content-Type": "application/json", ...response.headers },
      body: response.raw ? String(response.body) : JSON.stringify(response.body),
    };
  };

  // What a PATCH or PUT body may repeat is compared with the GET of the same path (write-back),
  // or of the path a route names (`writeBackOf`: a change preview).
  const reads = new Map(routes.filter((route) => route.method === "GET").map((route) => [route.path, route]));
  const readCurrent: ReadCurrent = async (request, path) => {
    const route = request.internal.route;
    const read = reads.get(route?.writeBackOf ?? route?.path ?? "");
    if (!read || !request.internal.principal) return undefined;
    try {
      const response = await implementations[read.operationId]!({
        principal: request.internal.principal,
        params: path as Record<string, string>,
        query: {},
        body: undefined,
        path: request.event.rawPath,
        headers: {},
        completion: () => undefined,
      });
      return response.statusCode === 200 && !response.raw ? response.body : undefined;
    } catch (error) {
      // Gone (or never visible): 404, as the write itself would answer, before judging its body.
      if (apiErrorOf(error)?.statusCode === 404) throw error;
      // Not readable by this caller (a permission the write may not need): the write answers.
      return undefined;
    }
  };

  // The dispatcher needs the pipeline state; events are unique per invocation, so the
  // request is found by its event (safe when one process serves concurrent requests).
  const requests = new WeakMap<object, PipelineRequest>();
  const pipeline = middy<HttpEvent, HttpResult, Error, Context, PipelineRequest["internal"]>()
    .use([
      requestContext(),
      errorHandler(),
      resolveRoute(routes, options.unmatched ?? errors.routeNotFound),
      ...stages.beforeRateLimit,
      rateLimit(),
      jsonBody(),
      validateRequest({ writeBack: true }),
      ...stages.afterValidation,
      validateWriteBack({ readCurrent }),
    ])
    .before((request) => {
      requests.set(request.event, request);
    })
    .handler(async (event: HttpEvent, context: Context) => dispatch(event, context, requests.get(event)!));

  return (event: HttpEvent, context: Context): Promise<HttpResult> => {
    const remaining = context?.getRemainingTimeInMillis?.();
    const deadline = remaining === undefined ? undefined : Date.now() + remaining - DEADLINE_MARGIN_MS;
    // API Gateway's receipt time, when it is one (an event replayed from a file is not: now).
    const received = event.requestContext?.timeEpoch;
    const now = Date.now();
    const receivedAt = typeof received === "number" && received <= now && received > now - MAX_GATEWAY_MS ? received : now;
    return withDbUsage(newDbUsage(deadline, receivedAt), () => pipeline(event, context) as Promise<HttpResult>);
  };
}
