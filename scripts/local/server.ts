import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { Context } from "aws-lambda";
import { matchRoute, routeKey, type EndpointGroup } from "../../lib/routes/index.js";
import type { HttpEvent, HttpResult } from "../../lib/http/types.js";

/**
 * The local API Gateway: turns each HTTP request into an HTTP API payload 2.0 event, picks
 * the route the way API Gateway does (unknown ones go to `$default`, served by `platform`),
 * and invokes the same Lambda handler module that AWS runs.
 */
type LambdaHandler = (event: HttpEvent, context: Context) => Promise<HttpResult>;
const MAX_BODY_BYTES = 10 * 1024 * 1024;

const loaded = new Map<EndpointGroup, Promise<LambdaHandler>>();
function handlerOf(group: EndpointGroup): Promise<LambdaHandler> {
  let pending = loaded.get(group);
  if (!pending) {
    pending = import(`../../functions/${group}/handler.ts`).then((module: { handler: LambdaHandler }) => module.handler);
    loaded.set(group, pending);
  }
  return pending;
}

function lambdaContext(group: string, requestId: string): Context {
  const deadline = Date.now() + 29_000;
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName: `local-${group}`,
    functionVersion: "$LATEST",
    invokedFunctionArn: `arn:aws:lambda:local:000000000000:function:local-${group}`,
    memoryLimitInMB: "1024",
    awsRequestId: requestId,
    logGroupName: `/aws/lambda/local-${group}`,
    logStreamName: "local",
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}

async function readBody(request: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) throw new Error("body too large");
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

/** Builds the payload 2.0 event API Gateway would send for this request. */
export function toHttpEvent(request: IncomingMessage, body: Buffer): { event: HttpEvent; group: EndpointGroup } {
  const url = new URL(request.url ?? "/", "http://127.0.0.1");
  const method = (request.method ?? "GET").toUpperCase();
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(request.headers)) {
    if (value === undefined) continue;
    headers[name.toLowerCase()] = Array.isArray(value) ? value.join(",") : value;
  }
  const query: Record<string, string> = {};
  for (const [name, value] of url.searchParams) query[name] = name in query ? `${query[name]},${value}` : value;
  const matched = matchRoute(method, url.pathname);
  const key = matched ? routeKey(matched.route) : "$default";
  const requestId = randomUUID();
  const now = new Date();
  const event: HttpEvent = {
    version: "2.0",
    routeKey: key,
    rawPath: url.pathname,
    rawQueryString: url.search.replace(/^\?/, ""),
    headers,
    queryStringParameters: Object.keys(query).length > 0 ? query : undefined,
    pathParameters: matched && Object.keys(matched.pathParameters).length > 0 ? matched.pathParameters : undefined,
    body: body.length > 0 ? body.toString("utf8") : undefined,
    isBase64Encoded: false,
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

async function serve(request: IncomingMessage, response: ServerResponse): Promise<void> {
  let body: Buffer;
  try {
    body = await readBody(request);
  } catch {
    response.writeHead(413, { "Content-Type": "application/json" });
    response.end(JSON.stringify({ message: "Request Entity Too Large" }));
    return;
  }
  const { event, group } = toHttpEvent(request, body);
  try {
    const handler = await handlerOf(group);
    const result = await handler(event, lambdaContext(group, event.requestContext.requestId));
    response.writeHead(result.statusCode, result.headers);
    response.end(result.body ?? "");
  } catch (error) {
    // What API Gateway answers when the integration itself fails.
    process.stderr.write(`${(error as Error).stack ?? String(error)}\n`);
    response.writeHead(500, { "Content-Type": "application/json" });
    response.end(JSON.stringify({ message: "Internal Server Error" }));
  }
}

/** Starts the local API on 127.0.0.1:`port` (0 picks a free port). */
export async function startApiServer(port: number): Promise<{ server: Server; port: number; url: string }> {
  const server = createServer((request, response) => {
    void serve(request, response);
  });
  server.keepAliveTimeout = 5000;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => resolve());
  });
  const address = server.address();
  const actualPort = typeof address === "object" && address ? address.port : port;
  return { server, port: actualPort, url: `http://127.0.0.1:${actualPort}` };
}
