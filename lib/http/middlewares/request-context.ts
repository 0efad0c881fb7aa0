import { randomUUID } from "node:crypto";
import { currentDbUsage } from "../../db/metrics.js";
import { log } from "../../core/log.js";
import type { PipelineMiddleware, PipelineRequest } from "../types.js";
import { rateLimitHeaders } from "./rate-limit.js";

export interface RequestContextOptions {
  /** Writes the per-request log line; on by default. */
  logRequests?: boolean;
}

const defaults: Required<RequestContextOptions> = { logRequests: true };

/**
 * Outermost middleware: gives the request an id, and when the response is final (after the
 * error handler shaped any error) adds the common headers and writes ONE structured log line
 * with the route, status, latency and DynamoDB usage.
 */
export function requestContext(options: RequestContextOptions = {}): PipelineMiddleware {
  const config = { ...defaults, ...options };

  const requestContextBefore = (request: PipelineRequest): void => {
    request.internal.requestId = request.event.requestContext?.requestId ?? randomUUID();
    request.internal.startedAt = Date.now();
  };

  const requestContextFinish = (request: PipelineRequest): void => {
    const response = request.response;
    if (!response) return;
    response.headers = {
      "Content-Type": "application/json",
      ...response.headers,
      "X-Request-Id": request.internal.requestId,
      ...rateLimitHeaders(request),
      // Routes that declare `noStore`: on every response, errors and replays included.
      ...(request.internal.route?.noStore ? { "Cache-Control": "no-store" } : {}),
    };
    if (!config.logRequests) return;
    const usage = currentDbUsage();
    log(response.statusCode >= 500 ? (response.statusCode === 503 ? "WARN" : "ERROR") : "INFO", "request", {
      requestId: request.internal.requestId,
      method: request.event.requestContext?.http?.method,
      path: request.event.rawPath,
      route: request.internal.route?.operationId ?? null,
      status: response.statusCode,
      latencyMs: Date.now() - request.internal.startedAt,
      accountId: request.internal.principal?.accountId,
      replayed: request.internal.replayed ?? false,
      reason: request.internal.failureReason,
      dynamodb: usage
        ? {
            calls: usage.calls,
            commands: usage.commands,
            readCapacity: usage.readCapacity,
            writeCapacity: usage.writeCapacity,
          }
        : undefined,
    });
  };

  return {
    before: requestContextBefore,
    after: requestContextFinish,
    onError: requestContextFinish,
  };
}
