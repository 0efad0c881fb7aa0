import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from "aws-lambda";
import type { MiddlewareObj, Request } from "@middy/core";
import type { Principal } from "../auth/permissions.js";
import type { RouteDefinition } from "../routes/index.js";
import type { BodyProblem } from "../core/errors.js";
import type { IdempotencyContext, IdempotencyCompletion } from "../core/idempotency.js";
import type { ZodSafeParseResult } from "zod";

export type HttpEvent = APIGatewayProxyEventV2;
export type HttpResult = APIGatewayProxyStructuredResultV2 & { statusCode: number; headers: Record<string, string> };

export interface RateLimitState {
  limit: number;
  remaining: number;
  /** Seconds until the current window resets. */
  reset: number;
  exceeded: boolean;
}

/** State shared by the middlewares of one request (`request.internal`). */
export interface PipelineState {
  requestId: string;
  startedAt: number;
  route?: RouteDefinition;
  principal?: Principal;
  rateLimit?: RateLimitState;
  /** This request's count in its key's current rate window (set by authentication). */
  rateCount?: { window: number; count: number };
  /** Parsed and validated inputs (`bodyProblems`: a `bodyProblems: "report"` route's body refused, and so absent). */
  input?: { path: Record<string, unknown>; query: Record<string, unknown>; body: unknown; bodyProblems?: BodyProblem[] };
  /**
   * A PATCH or PUT body that repeats read-only fields, left by `validateRequest` for
   * `validateWriteBack` (after idempotency: a retry is replayed before its copy is compared
   * with the record its first run changed).
   */
  writeBack?: { raw: unknown; parsed: ZodSafeParseResult<unknown>; extra: string[] };
  /** The body's `revision` stands for If-Match (a copy sent back without the header): a stale one is named `revision`. */
  revisionFromBody?: boolean;
  idempotency?: IdempotencyContext;
  /** True once the route handler started: from then on its outcome is stored for replay. */
  handlerStarted?: boolean;
  /** True when the response came from the idempotency store. */
  replayed?: boolean;
  /**
   * An answer decided before the handler (an idempotent replay or its 409): the dispatcher
   * returns it instead of running the route, so the after middlewares still shape it.
   */
  answer?: HttpResult;
  /** Why a request failed with a 5xx (logged, never sent). */
  failureReason?: string;
}

export type PipelineRequest = Request<HttpEvent, HttpResult, Error, Context, PipelineState & Record<string, unknown>>;
export type PipelineMiddleware = MiddlewareObj<HttpEvent, HttpResult, Error, Context, PipelineState & Record<string, unknown>>;

/** What a route handler receives: validated inputs and the authenticated caller. */
export interface ApiRequest<P = Record<string, string>, Q = Record<string, unknown>, B = unknown> {
  principal: Principal;
  params: P;
  query: Q;
  body: B;
  /** A `bodyProblems: "report"` route's refused body: why (then `body` is undefined). */
  bodyProblems?: BodyProblem[];
  /** Request path without the query string (the list envelope's `url`). */
  path: string;
  headers: Record<string, string | undefined>;
  /**
   * Builds the idempotency record for a response with this status; the domain writes it in the
   * same transaction as its effect. Undefined when the request carries no Idempotency-Key.
   */
  completion: (statusCode: number) => IdempotencyCompletion | undefined;
}

export interface ApiResponse {
  statusCode: number;
  body: unknown;
  headers?: Record<string, string>;
  /** The body is a string sent as it is, with the `Content-Type` in `headers` (not JSON). */
  raw?: boolean;
}

// biome-ignore lint/suspicious/noExplicitAny: each handler narrows its own params, query and body (validated by its route's schemas)
export type RouteHandler = (request: ApiRequest<any, any, any>) => Promise<ApiResponse>;
