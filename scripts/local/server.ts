import { randomUUID } from "node:crypto";
import { isUtf8 } from "node:buffer";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { Duplex } from "node:stream";
import { DescribeTableCommand, DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { type ApiError, errors } from "../../lib/core/errors.js";
import { matchRoute, noStoreAtPath, routeKey, type EndpointGroup } from "../../lib/routes/index.js";
import { MAX_BODY_BYTES } from "../../lib/http/middlewares/json-body.js";
import { unattributedRateLimitHeaders } from "../../lib/http/middlewares/rate-limit.js";
import type { HttpEvent } from "../../lib/http/types.js";
import { tableName } from "../../lib/db/table.js";
import { invokeHandler } from "./handlers.js";
import { startWorkerPool, type WorkerPool } from "./worker-pool.js";

/**
 * The local API Gateway: turns each HTTP request into an HTTP API payload 2.0 event, picks
 * the route the way API Gateway does (unknown ones go to `$default`, served by `platform`),
 * and invokes the same Lambda handler module that AWS runs. Whatever goes wrong with one
 * request is answered in the API's error shape; the process keeps serving. It also answers
 * `GET /health` itself.
 */
/**
 * The most body a deployed function can receive: a synchronous Lambda invocation carries at most
 * 6 MB (API Gateway's own limit is 10 MB). A larger body never reaches a handler there (AWS
 * answers in its own shape); here it is 413 `request_too_large` before any route, in the API's
 * shape. Within it, the body goes to the handler, whose pipeline applies the API's 1 MB limit
 * after authentication, as deployed (`lib/http/middlewares/json-body.ts`).
 */
const MAX_INVOCATION_BODY_BYTES = 6 * 1024 * 1024;

/** A request target that is not a path (nor an absolute URL). */
class MalformedTarget extends Error {
  constructor() {
    super("malformed request target");
  }
}

/** A request body over what an invocation carries (6 MB), read to its end. */
class BodyTooLarge extends Error {
  constructor() {
    super("body too large");
  }
}

/**
 * Reads the body. One over 6 MB is still read to its end (what is past 6 MB is discarded, so
 * memory stays bounded) before the 413 is sent: a client that sends its whole body before it
 * reads the answer (most do) then gets the 413, never a connection reset, whatever the size.
 * Node's `requestTimeout` (300 s) bounds a body that never ends.
 */
async function readBody(request: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  // No GET or DELETE route takes a body: read and dropped (as the handlers do), within the invocation's limit.
  const ignored = request.method === "GET" || request.method === "HEAD" || request.method === "DELETE";
  for await (const chunk of request) {
    size += (chunk as Buffer).length;
    if (size <= MAX_INVOCATION_BODY_BYTES && !ignored) chunks.push(chunk as Buffer);
  }
  if (size > MAX_INVOCATION_BODY_BYTES) throw new BodyTooLarge();
  return Buffer.concat(chunks);
}

/**
 * The request target as a URL: origin-form (`/api/v3/items`, `//api/v3/items` keeps its double
 * slash) or absolute-form (`http://host/api/v3/items`); undefined when it is neither.
 */
function requestUrl(target: string | undefined): URL | undefined {
  const text = target ?? "/";
  try {
    return text.startsWith("/") ? new URL(`http://127.0.0.1${text}`) : new URL(text);
  } catch {
    return undefined;
  }
}

/** matchRoute, where a path that is not valid percent-encoding matches no route. */
function matchPath(method: string, path: string): ReturnType<typeof matchRoute> {
  try {
    return matchRoute(method, path);
  } catch (error) {
    if (error instanceof URIError) return undefined; // -> $default: 404 route_not_found
    throw error;
  }
}

/** Builds the payload 2.0 event API Gateway would send for this request. */
export function toHttpEvent(request: IncomingMessage, body: Buffer, requestId: string = randomUUID()): { event: HttpEvent; group: EndpointGroup } {
  const url = requestUrl(request.url);
  if (!url) throw new MalformedTarget();
  const method = (request.method ?? "GET").toUpperCase();
  // A header given more than once is joined with commas, as API Gateway does (Node's `headers`
  // would keep only the first Authorization, and join others with ", ").
  const headers: Record<string, string> = {};
  for (const [name, values] of Object.entries(request.headersDistinct)) {
    if (values !== undefined) headers[name.toLowerCase()] = values.join(",");
  }
  const query: Record<string, string> = {};
  for (const [name, value] of url.searchParams) query[name] = name in query ? `${query[name]},${value}` : value;
  const matched = matchPath(method, url.pathname);
  const key = matched ? routeKey(matched.route) : "$default";
  const binary = body.length > 0 && !isUtf8(body);
  const now = new Date();
  const event: HttpEvent = {
    version: "2.0",
    routeKey: key,
    rawPath: url.pathname,
    rawQueryString: url.search.replace(/^\?/, ""),
    headers,
    queryStringParameters: Object.keys(query).length > 0 ? query : undefined,
    pathParameters: matched && Object.keys(matched.pathParameters).length > 0 ? matched.pathParameters : undefined,
    // Bytes that are not UTF-8 go on as API Gateway sends binary bodies (base64), for the pipeline to refuse.
    body: body.length === 0 ? undefined : body.toString(binary ? "base64" : "utf8"),
    isBase64Encoded: binary,
    requestContext: {
      accountId: "000000000000",
      apiId: "local",
      domainName: headers.host ?? "127.0.0.1",
      domainPrefix: "local",
      http: {
        method,
        path: url.pathname,
        protocol: `HTTP/${request.httpVersion}`,
        sourceIp: request.socket.remoteAddress ?? "127.0.0.1",
        userAgent: headers["user-agent"] ?? "",
      },
      requestId,
      routeKey: key,
      stage: "$default",
      time: now.toUTCString(),
      timeEpoch: now.getTime(),
    },
  };
  return { event, group: matched?.route.group ?? "platform" };
}

function sendJson(response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  if (response.headersSent) {
    response.destroy();
    return;
  }
  const text = JSON.stringify(body);
  response.writeHead(status, { "Content-Type": "application/json", "Content-Length": String(Buffer.byteLength(text)), ...headers });
  response.end(text);
}

/** The API's error shape, for what the local server answers itself. */
function sendError(response: ServerResponse, error: ApiError, requestId: string, headers: Record<string, string> = {}): void {
  sendJson(response, error.statusCode, error.toBody(), { "X-Request-Id": requestId, ...headers });
}

/**
 * The 413 the local server answers itself, with the headers every API response carries (the
 * request id, `RateLimit-*` with the full quota: no key was read) and `Cache-Control: no-store`
 * where the path's routes declare `noStore` (under /tasks), as the document promises.
 */
function sendTooLarge(request: IncomingMessage, response: ServerResponse, requestId: string): void {
  const path = requestUrl(request.url)?.pathname; // no URL at all: no route, no path rules
  const matched = path === undefined ? undefined : matchPath((request.method ?? "GET").toUpperCase(), path);
  const noStore = matched ? matched.route.noStore === true : path !== undefined && noStoreAtPath(path);
  // The message names the API's limit (1 MB), which such a body exceeds too.
  sendError(response, errors.requestTooLarge(MAX_BODY_BYTES), requestId, {
    ...unattributedRateLimitHeaders(),
    ...(noStore ? { "Cache-Control": "no-store" } : {}),
    Connection: "close",
  });
}

/**
 * `GET /health`, the local server's own route (not an API route): 200 when DynamoDB answers
 * and the table exists, 503 otherwise.
 */
async function health(response: ServerResponse, dynamo: () => DynamoDBClient, table: string, timeoutMs: number): Promise<void> {
  let dynamodb = "ok";
  try {
    await dynamo().send(new DescribeTableCommand({ TableName: table }), { abortSignal: AbortSignal.timeout(timeoutMs) });
  } catch (error) {
    dynamodb = (error as Error).name === "ResourceNotFoundException" ? "table_missing" : "unreachable";
  }
  const ok = dynamodb === "ok";
  sendJson(response, ok ? 200 : 503, { status: ok ? "ok" : "unavailable", dynamodb }, { "Cache-Control": "no-store" });
}

async function serve(
  request: IncomingMessage,
  response: ServerResponse,
  options: Required<Omit<ApiServerOptions, "processes">>,
  dynamo: () => DynamoDBClient,
  pool: WorkerPool | undefined,
): Promise<void> {
  const requestId = randomUUID();
  let body: Buffer;
  try {
    body = await readBody(request);
  } catch (error) {
    if (!(error instanceof BodyTooLarge)) {
      response.destroy(); // the client went away mid-body: nobody to answer
      return;
    }
    sendTooLarge(request, response, requestId);
    return;
  }
  try {
    if (request.method === "GET" && (request.url === "/health" || request.url?.startsWith("/health?"))) {
      await health(response, dynamo, options.tableName, options.healthTimeoutMs);
      return;
    }
    const { event, group } = toHttpEvent(request, body, requestId);
    const result = pool ? await pool.invoke(group, event, requestId) : await invokeHandler(group, event, requestId);
    if (response.headersSent) return;
    response.writeHead(result.statusCode, result.headers);
    response.end(result.body ?? "");
  } catch (error) {
    if (error instanceof MalformedTarget) {
      sendError(response, errors.malformedRequest("The request target is not a path."), requestId, unattributedRateLimitHeaders());
      return;
    }
    // What the API answers when the integration itself fails: the error shape, no internals.
    process.stderr.write(`local server: ${request.method} ${request.url}: ${(error as Error)?.stack ?? String(error)}\n`);
    sendError(response, errors.internal(error), requestId);
  }
}

/** The size of all headers Node's parser takes (its `--max-http-header-size`, 16 KB by default). */
const MAX_HEADER_BYTES = 16 * 1024;

/**
 * What Node's HTTP parser refuses before there is a request (an unknown or lower-case method,
 * a byte HTTP does not allow in the path or a header, a malformed header, headers over 16 KB):
 * the API's error shape with the headers every response carries, instead of Node's bare 400 or
 * 431, then the connection closes (the rest of the stream cannot be trusted).
 */
function answerClientError(error: Error & { code?: string }, socket: Duplex): void {
  if (error.code === "ECONNRESET" || !socket.writable) {
    socket.destroy();
    return;
  }
  // A request that was too slow to arrive: Node's own answer (408) stands.
  if (error.code === "ERR_HTTP_REQUEST_TIMEOUT") {
    socket.end("HTTP/1.1 408 Request Timeout\r\nConnection: close\r\n\r\n");
    return;
  }
  const answer =
    error.code === "HPE_HEADER_OVERFLOW"
      ? errors.headersTooLarge(MAX_HEADER_BYTES)
      : errors.malformedRequest(`The request is not well-formed HTTP (${malformedPart(error.code)}).`);
  const text = JSON.stringify(answer.toBody());
  const headers = {
    "Content-Type": "application/json",
    "Content-Length": String(Buffer.byteLength(text)),
    "X-Request-Id": randomUUID(),
    ...unattributedRateLimitHeaders(),
    Connection: "close",
  };
  const reason = answer.statusCode === 431 ? "Request Header Fields Too Large" : "Bad Request";
  const head = Object.entries(headers)
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join("");
  socket.end(`HTTP/1.1 ${answer.statusCode} ${reason}\r\n${head}\r\n${text}`);
}

/** Which part of the request Node's parser refused, from its error code. */
function malformedPart(code: string | undefined): string {
  switch (code) {
    case "HPE_INVALID_METHOD":
      return "an unknown method; methods are upper case";
    case "HPE_INVALID_URL":
      return "a character the request path may not hold; percent-encode it";
    case "HPE_INVALID_HEADER_TOKEN":
    case "HPE_INVALID_CHARACTER":
      return "a header name or value with a character HTTP does not allow";
    case "HPE_INVALID_CONTENT_LENGTH":
    case "HPE_UNEXPECTED_CONTENT_LENGTH":
      return "an invalid Content-Length";
    case "HPE_INVALID_TRANSFER_ENCODING":
    case "HPE_INVALID_CHUNK_SIZE":
      return "an invalid Transfer-Encoding or chunk";
    default:
      return "its request line or headers";
  }
}

export interface ApiServerOptions {
  /** DynamoDB endpoint `/health` checks (default DYNAMODB_ENDPOINT). */
  dynamoEndpoint?: string;
  /** Table `/health` checks (default TABLE_NAME). */
  tableName?: string;
  /** How long `/health` waits for DynamoDB before it answers 503 `unreachable` (default 2000 ms). */
  healthTimeoutMs?: number;
  /**
   * API worker processes (`API_PROCESSES`): 1 (the default) runs the handlers in this process;
   * more runs them in that many worker processes, one request at a time each, as Lambda does.
   */
  processes?: number;
}

/** A local API server started by `startApiServer`. */
export interface StartedApiServer {
  server: Server;
  port: number;
  url: string;
  /** The API worker processes alive now, and whether each has started (none with one process). */
  workers: () => { pid: number; ready: boolean }[];
}

/** Starts the local API on 127.0.0.1:`port` (0 picks a free port). */
export async function startApiServer(port: number, options: ApiServerOptions = {}): Promise<StartedApiServer> {
  const processes = options.processes ?? 1;
  if (!Number.isInteger(processes) || processes < 1 || processes > 64) throw new Error(`API processes must be a whole number from 1 to 64, not ${processes}.`);
  const pool = processes > 1 ? await startWorkerPool(processes) : undefined;
  const resolved: Required<Omit<ApiServerOptions, "processes">> = {
    dynamoEndpoint: options.dynamoEndpoint ?? process.env.DYNAMODB_ENDPOINT ?? "",
    tableName: options.tableName ?? tableName(),
    healthTimeoutMs: options.healthTimeoutMs ?? 2000,
  };
  let client: DynamoDBClient | undefined;
  const dynamo = () =>
    (client ??= new DynamoDBClient({
      ...(resolved.dynamoEndpoint ? { endpoint: resolved.dynamoEndpoint, credentials: { accessKeyId: "local", secretAccessKey: "local" } } : {}),
      region: process.env.AWS_REGION ?? "local",
      maxAttempts: 1,
    }));
  const server = createServer((request, response) => {
    serve(request, response, resolved, dynamo, pool).catch((error: unknown) => {
      process.stderr.write(`local server: ${(error as Error)?.stack ?? String(error)}\n`);
      if (!response.headersSent) sendError(response, errors.internal(error), randomUUID());
      else response.destroy();
    });
  });
  server.keepAliveTimeout = 5000;
  // Every header counts (the 16 KB size limit bounds them): past Node's default of 2,000 the
  // rest, an Authorization header too, would be dropped without a word.
  server.maxHeadersCount = 0;
  server.on("clientError", answerClientError);
  server.on("checkExpectation", (_request: IncomingMessage, response: ServerResponse) => {
    sendError(response, errors.malformedRequest("Expect takes only 100-continue."), randomUUID(), { ...unattributedRateLimitHeaders(), Connection: "close" });
  });
  server.on("close", () => {
    client?.destroy();
    void pool?.close();
  });
  try {
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(port, "127.0.0.1", () => resolve());
    });
  } catch (error) {
    await pool?.close();
    throw error;
  }
  const address = server.address();
  const actualPort = typeof address === "object" && address ? address.port : port;
  return { server, port: actualPort, url: `http://127.0.0.1:${actualPort}`, workers: () => pool?.processes() ?? [] };
}
