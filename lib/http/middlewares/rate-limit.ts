import { rateLimitPerMinute } from "../../core/config.js";
import { errors } from "../../core/errors.js";
import type { PipelineMiddleware, PipelineRequest } from "../types.js";

export const RATE_WINDOW_SECONDS = 60;

export interface RateLimitOptions {
  /** Requests per API key per window; read from RATE_LIMIT_PER_MINUTE when not given. */
  limit?: number;
}

function secondsToReset(): number {
  const now = Date.now() / 1000;
  return Math.max(1, Math.ceil((Math.floor(now / RATE_WINDOW_SECONDS) + 1) * RATE_WINDOW_SECONDS - now));
}

/**
 * Per-key fixed-window rate limit, shared by every Lambda instance: the counter lives on the
 * key record and is incremented by authentication's read of it. Over the limit the request
 * is 429 `rate_limited` with `Retry-After`.
 */
export function rateLimit(options: RateLimitOptions = {}): PipelineMiddleware {
  const rateLimitBefore = (request: PipelineRequest): void => {
    const limit = options.limit ?? rateLimitPerMinute();
    const counted = request.internal.rateCount;
    const reset = secondsToReset();
    if (!counted) {
      request.internal.rateLimit = { limit, remaining: limit, reset, exceeded: false };
      return;
    }
    const exceeded = counted.count > limit;
    request.internal.rateLimit = { limit, remaining: Math.max(0, limit - counted.count), reset, exceeded };
    if (exceeded) throw errors.rateLimited(reset);
  };
  return { before: rateLimitBefore };
}

/** The `RateLimit-*` headers every response carries (unattributed requests show the full quota). */
export function rateLimitHeaders(request: PipelineRequest): Record<string, string> {
  const limit = rateLimitPerMinute();
  const counted = request.internal.rateCount;
  const state = request.internal.rateLimit ?? {
    limit,
    remaining: Math.max(0, limit - (counted?.count ?? 0)),
    reset: secondsToReset(),
  };
  return formatRateLimit(state);
}

/**
 * The `RateLimit-*` headers of an answer given before any key is read (the local server's own
 * 413 for a body over the limit): the full quota, as for every unattributed request.
 */
export function unattributedRateLimitHeaders(): Record<string, string> {
  const limit = rateLimitPerMinute();
  return formatRateLimit({ limit, remaining: limit, reset: secondsToReset() });
}

function formatRateLimit(state: { limit: number; remaining: number; reset: number }): Record<string, string> {
  return {
    "RateLimit-Limit": String(state.limit),
    "RateLimit-Remaining": String(state.remaining),
    "RateLimit-Reset": String(state.reset),
  };
}
