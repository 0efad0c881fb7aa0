import { requirePermission } from "../../auth/permissions.js";
import { ApiError, errors, type BodyProblem } from "../../core/errors.js";
import { parseIfMatch } from "../../domain/common/revisions.js";
import { queryErrorStatus, type RouteDefinition } from "../../routes/define.js";
import type { ZodError, ZodSafeParseResult } from "zod";
import { countIssues, jsonPath, toValidationDetails } from "../validation.js";
import type { PipelineMiddleware, PipelineRequest } from "../types.js";
import { staleCopyConflict, withoutRepeatedFields } from "../write-back.js";

/** The JSON paths of a body's fields that the route lists as protected (`lines[].x` in every element), in body order. */
export function protectedFieldsIn(body: unknown, fields: readonly string[]): string[] {
  if (body === null || typeof body !== "object" || Array.isArray(body)) return [];
  const top = new Set<string>();
  const nested = new Map<string, Set<string>>();
  for (const field of fields) {
    const match = /^(\w+)\[\]\.(\w+)$/.exec(field);
    if (match) {
      if (!nested.has(match[1]!)) nested.set(match[1]!, new Set());
      nested.get(match[1]!)!.add(match[2]!);
    } else top.add(field);
  }
  const found: string[] = [];
  for (const [key, value] of Object.entries(body)) {
    if (top.has(key)) found.push(key);
    const keys = nested.get(key);
    if (!keys || !Array.isArray(value)) continue;
    value.forEach((element, index) => {
      if (element === null || typeof element !== "object" || Array.isArray(element)) return;
      for (const name of Object.keys(element)) if (keys.has(name)) found.push(`${key}[${index}].${name}`);
    });
  }
  return found;
}

/** The JSON paths of the fields a body schema refused as unknown, in issue order. */
function unknownFieldsOf(error: ZodError): string[] {
  return error.issues.flatMap((issue) => (issue.code === "unrecognized_keys" ? issue.keys.map((key) => jsonPath([...issue.path, key])) : []));
}

/**
 * The JSON paths of the fields a body schema refused in entries of a list that name an existing
 * entry by `id` (`lines[3].unit_price`): a generated line sent back as read (the discount line,
 * its negative price) is the record's own, which the write-back comparison may drop.
 */
function refusedFieldsOfKeptEntries(error: ZodError, body: unknown): string[] {
  return error.issues.flatMap((issue) => {
    const [list, index, field] = issue.path;
    if (typeof list !== "string" || typeof index !== "number" || typeof field !== "string" || issue.path.length !== 3) return [];
    const entries = (body as Record<string, unknown> | null)?.[list];
    const entry = Array.isArray(entries) ? (entries[index] as Record<string, unknown> | null) : undefined;
    return typeof entry?.id === "string" ? [jsonPath(issue.path)] : [];
  });
}

function refuseProtectedFields(route: RouteDefinition, body: unknown): void {
  if (!route.protectedFields) return;
  const found = protectedFieldsIn(body, route.protectedFields.fields);
  if (found.length > 0) throw errors.unsupportedField(route.protectedFields.code, found);
}

/** One query component decoded (`+` is a space), or undefined when it is not valid percent-encoded UTF-8. */
function decodeQueryComponent(text: string): string | undefined {
  try {
    return decodeURIComponent(text.replace(/\+/g, " "));
  } catch {
    return undefined;
  }
}

/**
 * The raw query must be valid percent-encoding of UTF-8 (`?q=%E0%A4%A` is not): else
 * `invalid_query_parameter` naming the parameter (at `status`), rather than a search for
 * replacement characters (a lenient decoder would turn the broken escape into U+FFFD).
 */
function assertQueryEncoding(raw: string | undefined, status: number): void {
  for (const pair of (raw ?? "").split("&")) {
    if (pair === "") continue;
    const separator = pair.indexOf("=");
    const rawName = separator < 0 ? pair : pair.slice(0, separator);
    const name = decodeQueryComponent(rawName);
    if (name === undefined || decodeQueryComponent(separator < 0 ? "" : pair.slice(separator + 1)) === undefined) {
      const shown = name ?? rawName;
      throw errors.invalidQueryParameter(shown, `Query parameter ${shown} is not valid percent-encoding (escapes must spell UTF-8, e.g. %C3%A9).`, status);
    }
  }
}

/** Whether a query field is a comma-separated list (`ids=a,b`): repeating it (`ids=a&ids=b`) adds to the list. */
function isListParameter(field: unknown): boolean {
  const meta = (field as { meta?: () => Record<string, unknown> | undefined } | undefined)?.meta?.();
  return (meta?.["x-parameter"] as { explode?: boolean } | undefined)?.explode === false;
}

/**
 * A parameter given twice (`page=2&page=3`) is `invalid_query_parameter` naming it: API
 * Gateway joins repeats with commas, which would turn it into a value nobody sent ("2,3", or a
 * search for "a,b"). Only comma-separated lists may repeat; a parameter the route does not
 * know is answered as when given once.
 */
function assertNoRepeatedParameters(raw: string | undefined, shape: Record<string, unknown>, status: number): void {
  const seen = new Set<string>();
  for (const pair of (raw ?? "").split("&")) {
    if (pair === "") continue;
    const separator = pair.indexOf("=");
    const name = decodeQueryComponent(separator < 0 ? pair : pair.slice(0, separator)) ?? "";
    // A parameter the route does not know is left to the schema (ignored, or refused once), as when given once.
    if (seen.has(name) && name in shape && !isListParameter(shape[name])) {
      throw errors.invalidQueryParameter(name, `Query parameter ${name} is given more than once; give it once.`, status);
    }
    seen.add(name);
  }
}

/**
 * The record a PATCH or PUT addresses, as its GET shows it (the route handler of the GET of the
 * same path), or undefined when there is none to compare with.
 */
export type ReadCurrent = (request: PipelineRequest, path: Record<string, unknown>) => Promise<unknown>;

/**
 * The fields of a PATCH or PUT body that it may not write (protected, unknown to its schema, or
 * refused in an entry that names an existing one), with the body's own parse: a body holding
 * any is compared with the record (`validateWriteBack`); one holding none stands as parsed.
 */
function readOnlyFieldsOf(route: RouteDefinition, raw: unknown): { parsed: ZodSafeParseResult<unknown>; extra: string[] } {
  const parsed = route.request.body!.safeParse(raw);
  const extra = [
    ...(route.protectedFields ? protectedFieldsIn(raw, route.protectedFields.fields) : []),
    ...(parsed.success ? [] : [...unknownFieldsOf(parsed.error), ...refusedFieldsOfKeptEntries(parsed.error, raw)]),
  ];
  return { parsed, extra };
}

/**
 * The body without the fields it may not write that repeat the record as it is now
 * (`lib/http/write-back.ts`): what a client read, it can send back. One read of the record.
 */
async function withoutReadBackFields(
  request: PipelineRequest,
  route: RouteDefinition,
  path: Record<string, unknown>,
  copy: NonNullable<PipelineRequest["internal"]["writeBack"]>,
  readCurrent: ReadCurrent,
): Promise<{ sent: unknown; parsed?: ZodSafeParseResult<unknown> }> {
  const { raw, parsed, extra } = copy;
  const current = await readCurrent(request, path);
  const principal = request.internal.principal;
  if (principal) {
    // A caller the write is refused to gets that answer (403), as with a body holding no copy.
    for (const permission of route.permissions ?? []) requirePermission(principal, permission);
    // Where If-Match is required, its absence is answered before what the copy holds (as without one).
    const required = route.errors?.[428]?.[0];
    if (route.ifMatch === "required" && required && parseIfMatch(request.event.headers?.["if-match"]) === undefined) {
      throw errors.revisionRequired(required, "This operation requires If-Match with the record's current revision (ETag).");
    }
    const conflict = staleCopyConflict(route, request.event.headers?.["if-match"], raw, current, extra);
    if (conflict) throw conflict;
    adoptCopyRevision(request, route, raw);
  }
  const sent = withoutRepeatedFields(raw, current, extra);
  return sent === raw ? { sent, parsed } : { sent };
}

/** A refused body's problems as its 422 names them: each detail (its own code), else the error itself. */
function bodyProblemsOf(error: ApiError): BodyProblem[] {
  const details = error.details ?? [];
  if (details.length === 0) return [{ code: error.code, message: error.message, param: error.param ?? null }];
  // An unsupported field's detail code is the error's own (unsupported_estimate_field).
  return details.map((detail) => ({ code: detail.code, message: detail.message, param: detail.param === "" ? null : detail.param }));
}

/**
 * A copy's `revision`, sent back in the body without an `If-Match` header, is the write's
 * If-Match: the update commits only while the record is still at that revision (a copy that a
 * parallel write made stale between the check above and the commit is 409 too, never a lost
 * update). Not where If-Match is required: a missing header stays 428.
 */
function adoptCopyRevision(request: PipelineRequest, route: RouteDefinition, raw: unknown): void {
  if (route.ifMatch !== "optional" || request.event.headers?.["if-match"] !== undefined) return;
  const revision = raw !== null && typeof raw === "object" && !Array.isArray(raw) ? (raw as Record<string, unknown>).revision : undefined;
  if (typeof revision === "string" && revision !== "") {
    request.event.headers = { ...request.event.headers, "if-match": `"${revision}"` };
    request.internal.revisionFromBody = true;
  }
}

/** Path parameters whose name is shorter than the record's. */
const NAMED_BY: Record<string, string> = { category_id: "item category", build_id: "kit build" };

/**
 * What a path parameter names, for its 404: `sales_order_id` a "sales order"; `id` the kind of
 * the segment before it (`/webhook-endpoints/{id}`: a "webhook endpoint").
 */
export function recordNamedBy(routePath: string, param: string): string {
  if (param !== "id") return NAMED_BY[param] ?? (param.replace(/_id$/, "").replaceAll("_", " ") || "resource");
  const segment = /([a-z-]+)\/\{id\}/.exec(routePath)?.[1];
  return segment ? segment.replace(/s$/, "").replaceAll("-", " ") : "resource";
}

/**
 * Validates path, query and body against the route's zod schemas. A malformed path id
 * cannot name a record, so it is 404 `resource_missing`; a bad query value is 422
 * `invalid_query_parameter` naming the parameter; a body: see `acceptBody`. With `writeBack`, a
 * PATCH or PUT body that repeats read-only fields is left to `validateWriteBack`.
 */
export function validateRequest(options: { writeBack?: boolean } = {}): PipelineMiddleware {
  const validateRequestBefore = async (request: PipelineRequest): Promise<void> => {
    const route = request.internal.route;
    if (!route) return;
    const { path: pathSchema, query: querySchema, body: bodySchema } = route.request;

    let path: Record<string, unknown> = request.event.pathParameters ?? {};
    if (pathSchema) {
      const result = pathSchema.safeParse(path);
      if (!result.success) {
        // A path segment outside its fixed set (`/tasks/reminders/{id}/{operation}`) names no
        // route; a malformed id names no record.
        if (result.error.issues.some((issue) => issue.code === "invalid_value")) {
          throw errors.routeNotFound(request.event.requestContext.http.method, request.event.rawPath);
        }
        const param = String(result.error.issues[0]?.path[0] ?? "");
        throw errors.resourceMissing(recordNamedBy(route.path, param), String(path[param] ?? Object.values(path).join("/")));
      }
      path = result.data as Record<string, unknown>;
    }

    let query: Record<string, unknown> = request.event.queryStringParameters ?? {};
    if (querySchema) {
      const status = queryErrorStatus(route);
      assertQueryEncoding(request.event.rawQueryString, status);
      assertNoRepeatedParameters(request.event.rawQueryString, querySchema.shape, status);
      const result = querySchema.safeParse(query);
      if (!result.success) {
        const detail = toValidationDetails(result.error, query)[0]!;
        throw errors.invalidQueryParameter(detail.param, `Query parameter ${detail.param} ${detail.message}`);
      }
      query = result.data as Record<string, unknown>;
    }

    request.internal.input = { path, query, body: undefined };
    if (!bodySchema) return;
    const raw = request.event.body;
    if (options.writeBack && (route.method === "PATCH" || route.method === "PUT" || route.writeBackOf !== undefined)) {
      const copy = readOnlyFieldsOf(route, raw);
      if (copy.extra.length > 0) {
        // Compared with the record by `validateWriteBack`, after idempotency has replayed a retry.
        request.internal.writeBack = { raw, ...copy };
        return;
      }
      return acceptBody(request, route, raw, copy.parsed);
    }
    return acceptBody(request, route, raw);
  };
  return { before: validateRequestBefore };
}

/**
 * The body's own validation, once any copy of the record it repeats is dropped: a field the
 * route protects is 422 with the route's code; a bad body is 422 `validation_failed` (or the
 * route's code) with one detail per field; a `bodyProblems: "report"` route gets the problems
 * instead of the error.
 */
function acceptBody(request: PipelineRequest, route: RouteDefinition, sent: unknown, parsed?: ZodSafeParseResult<unknown>): void {
  const input = request.internal.input!;
  try {
    refuseProtectedFields(route, sent);
    const result = parsed ?? route.request.body!.safeParse(sent);
    if (!result.success) {
      // Spec part 2 (estimates, invoices): "protected or unsupported fields" answer the route's
      // own code, so a field the body schema does not know is refused with it too.
      const unknown = route.protectedFields ? unknownFieldsOf(result.error) : [];
      if (unknown.length > 0) throw errors.unsupportedField(route.protectedFields!.code, unknown);
      const details = toValidationDetails(result.error, sent);
      throw route.bodyErrorCode
        ? errors.invalidBody(route.bodyErrorCode, details, undefined, countIssues(result.error))
        : errors.validationFailed(details, undefined, countIssues(result.error));
    }
    request.internal.input = { ...input, body: result.data };
  } catch (error) {
    if (route.bodyProblems !== "report" || !(error instanceof ApiError) || error.statusCode !== 422) throw error;
    request.internal.input = { ...input, body: undefined, bodyProblems: bodyProblemsOf(error) };
  }
}

/**
 * The second half of body validation, for a PATCH or PUT body that repeats fields it may not
 * write (architecture section 8, "What you read you can write back"): the copy is compared with
 * the record as its GET shows it now (`readCurrent`), the repeats that match are dropped and the
 * rest is validated as any body. It runs after idempotency, so an identical retry of such a
 * write is replayed rather than compared with the record its first run changed. Nothing to do
 * for a request answered before the handler (a replay).
 */
export function validateWriteBack(options: { readCurrent: ReadCurrent }): PipelineMiddleware {
  const validateWriteBackBefore = async (request: PipelineRequest): Promise<void> => {
    const { route, writeBack, input } = request.internal;
    if (!route || !writeBack || !input || request.internal.answer) return;
    request.internal.writeBack = undefined;
    const { sent, parsed } = await withoutReadBackFields(request, route, input.path, writeBack, options.readCurrent);
    acceptBody(request, route, sent, parsed);
  };
  return { before: validateWriteBackBefore };
}
