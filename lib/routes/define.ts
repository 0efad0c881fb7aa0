import type * as z from "zod";
import type { Permission } from "../auth/permissions.js";
import type { ErrorCode, UnsupportedFieldCode } from "../core/error-codes.js";
import type { Lazy } from "../schemas/lazy.js";

/**
 * The shape of a route. Each endpoint group declares its routes in its own file
 * (`lib/routes/<group>.ts`); `lib/routes/index.ts` gathers them into THE route table, the single
 * source of truth for the HTTP surface: the CDK stack creates one API Gateway route per entry
 * (and one Lambda per group), the local server dispatches by it, the scope middleware checks
 * `scopes`, the idempotency middleware reads `idempotency`, and the OpenAPI document is
 * generated from it. A group's Lambda imports only its own route file, so its bundle holds only
 * its own routes and schemas.
 *
 * A route's schemas are built on first use (lib/schemas/lazy.ts): a route file names them
 * unbuilt, and `request` and `responses` build them the first time they are read (when the
 * route is first matched, or the OpenAPI document is built), once. Nothing is built at import.
 */
export const API_PREFIX = "/api/v3";

export type HttpMethod = "GET" | "POST" | "PATCH" | "PUT" | "DELETE";
export type IdempotencyMode = "required" | "optional" | "none";

/** Endpoint groups: one Lambda function each (architecture section 2). */
export const ENDPOINT_GROUPS = [
  "platform",
  "locations",
  "item-categories",
  "items",
  "contacts",
  "parties",
  "sync",
  "purchase-orders",
  "stock-transfers",
  "kits",
  "tasks",
  "estimates",
  "sales-orders",
  "invoices",
  "webhooks",
] as const;
export type EndpointGroup = (typeof ENDPOINT_GROUPS)[number];

export interface RouteDefinition {
  /** Unique name; the group's handler module implements a function under this name. */
  operationId: string;
  method: HttpMethod;
  /** Full path with `{param}` placeholders, as API Gateway writes it. */
  path: string;
  group: EndpointGroup;
  summary: string;
  description?: string;
  /** Scopes required of the API key (all of them); empty for public routes. */
  scopes: readonly string[];
  /**
   * User permissions the route ALWAYS requires (all of them; architecture section 4): a user
   * lacking one is 403 `permission_denied`, checked by the route's domain function. Permissions
   * needed only for some inputs (e.g. `costs.view` to write a cost) are not listed here: they
   * are prose in `description` and a `permission_denied` in `errors`. The OpenAPI document
   * derives the 403 `permission_denied` and names these in the operation's description; the
   * contract test calls the route as a user lacking each of them.
   */
  permissions?: readonly Permission[];
  /** False only for public documents such as the OpenAPI file. */
  authenticated: boolean;
  idempotency: IdempotencyMode;
  request: {
    path?: z.ZodObject;
    query?: z.ZodObject;
    body?: z.ZodType;
  };
  /** Success responses by status code. */
  responses: Record<number, z.ZodType>;
  /**
   * Error codes this route can answer beyond the ones every route of its kind can (those are
   * derived: see `lib/openapi/errors.ts`), by HTTP status. Documented as an enum per status.
   */
  errors?: Partial<Record<number, readonly ErrorCode[]>>;
  /**
   * Whether the route honours `If-Match` (the record's ETag or revision; a stale one is 409
   * `mobile_mutation_conflict`): `optional` makes the write conditional when sent, `required`
   * refuses a request without it (428). Documented as a header parameter.
   */
  ifMatch?: "optional" | "required";
  /**
   * The route also answers at its path with one trailing slash (`/api/v3/docs/`), as API
   * Gateway routes it: the route key stays the path without the slash.
   */
  trailingSlash?: boolean;
  /** A documented example request: the body (and query) a client would send. */
  example?: { body?: unknown; query?: Record<string, string> };
  /** Response headers the route sets on success beyond the common ones (e.g. `ETag`). */
  headers?: readonly ("ETag" | "Location" | "Content-Security-Policy" | "Cache-Control")[];
  /**
   * Every response of the route, errors included, carries `Cache-Control: no-store` (set by
   * the request-context middleware): for responses no cache may keep (tasks).
   */
  noStore?: boolean;
  /** Media type of the success responses when not `application/json` (e.g. the HTML reference). */
  produces?: "text/html; charset=utf-8" | "text/javascript; charset=utf-8";
  /**
   * Body fields the service controls that the route refuses with its own 422 `code` instead of
   * `unknown_field` (spec part 2: "Supplying protected or unsupported fields ... returns 422
   * `unsupported_estimate_field`"): a top-level name (`status_id`) or one in each element of an
   * array (`lines[].subtotal`). Checked before the body schema.
   */
  protectedFields?: { code: UnsupportedFieldCode; fields: readonly string[] };
  /**
   * A POST that takes an update body of the record at this path (an estimate's change preview):
   * like a PATCH, the body may repeat what that record's GET shows (architecture section 8,
   * "What you read you can write back"). PATCH and PUT compare with their own path's GET.
   */
  writeBackOf?: string;
  /** The code of the 422 for a body that fails its schema (default `validation_failed`). */
  bodyErrorCode?: ErrorCode;
  /**
   * `"report"`: a body that fails its schema or names protected fields is not refused with 422;
   * the handler runs without a body and gets the problems as that 422 would name them
   * (`ApiRequest.bodyProblems`): an estimate preview reports them in its `errors`.
   */
  bodyProblems?: "report";
  /**
   * The route puts messages on the webhook queue (`POST /webhook-endpoints/{id}/test`): the
   * stack grants its function `sqs:SendMessage` on that queue and sets `WEBHOOK_QUEUE_URL`.
   */
  enqueuesWebhooks?: boolean;
}

/** A route as its file declares it: its schemas unbuilt (each built on first use). */
export type RouteDeclaration = Omit<RouteDefinition, "authenticated" | "request" | "responses"> & {
  authenticated?: boolean;
  request: { path?: Lazy<z.ZodObject>; query?: Lazy<z.ZodObject>; body?: Lazy<z.ZodType> };
  responses: Record<number, Lazy<z.ZodType>>;
};

/** A value computed the first time the property is read, then kept as a plain property. */
function defineOnFirstRead<T extends object>(target: T, name: string, compute: () => unknown): void {
  Object.defineProperty(target, name, {
    enumerable: true,
    configurable: true,
    get() {
      const value = compute();
      Object.defineProperty(target, name, { value, enumerable: true, configurable: true, writable: false });
      return value;
    },
  });
}

const built = <K extends string | number, S>(schemas: Partial<Record<K, Lazy<S>>>): Partial<Record<K, S>> =>
  Object.fromEntries(Object.entries(schemas).map(([key, schema]) => [key, (schema as Lazy<S>)()])) as Partial<Record<K, S>>;

export const route = ({ request, responses, ...definition }: RouteDeclaration): RouteDefinition => {
  const out = { authenticated: true, ...definition } as RouteDefinition;
  defineOnFirstRead(out, "request", () => built(request));
  defineOnFirstRead(out, "responses", () => built(responses));
  return out;
};

/** API Gateway's route key of a route, e.g. `GET /api/v3/locations`. */
export const routeKey = (definition: Pick<RouteDefinition, "method" | "path">): string => `${definition.method} ${definition.path}`;

/**
 * Which of two routes that match the same path API Gateway picks: at the first segment where
 * they differ, a literal segment beats a `{param}` (`/tasks/stats` over `/tasks/{id}`).
 * Negative when `a` is more specific.
 */
export function specificity(a: string, b: string): number {
  const as = a.split("/");
  const bs = b.split("/");
  for (let i = 0; i < Math.min(as.length, bs.length); i++) {
    const aParam = as[i]!.startsWith("{");
    const bParam = bs[i]!.startsWith("{");
    if (aParam !== bParam) return aParam ? 1 : -1;
  }
  return as.length - bs.length; // a total order (paths of different lengths never match the same request)
}

/** The pattern of a route's path: each `{param}` one segment (captured in order); `trailingSlash` allows one at the end. */
export const pathPattern = (path: string, trailingSlash = false): RegExp => new RegExp(`^${path.replace(/\{\w+\}/g, "([^/]+)")}${trailingSlash ? "/?" : ""}$`);

/**
 * The status of a route's query errors (`invalid_query_parameter`): 422, "invalid query value"
 * (spec part 1, section 7), except where the route declares 400 for them (`GET /sync`:
 * "invalid or conflicting parameters").
 */
export const queryErrorStatus = (definition: Pick<RouteDefinition, "errors">): 400 | 422 =>
  definition.errors?.[400]?.includes("invalid_query_parameter") ? 400 : 422;
