import { afterAll, beforeAll } from "vitest";
import type { Server } from "node:http";
import { startApiServer } from "../../scripts/local/server.js";

/** A response as the tests read it. */
export interface TestResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export interface RequestOptions {
  idempotencyKey?: string;
  headers?: Record<string, string>;
  /** Raw body text (sent as is); otherwise `body` is JSON-encoded. */
  raw?: string;
  query?: Record<string, string | number>;
}

/** An API client bound to one key (or none). */
export class ApiClient {
  constructor(
    readonly baseUrl: string,
    readonly apiKey?: string,
  ) {}

  withKey(apiKey: string | undefined): ApiClient {
    return new ApiClient(this.baseUrl, apiKey);
  }

  async request<T = any>(method: string, path: string, body?: unknown, options: RequestOptions = {}): Promise<TestResponse<T>> {
    const url = new URL(`${this.baseUrl}/api/v3${path}`);
    for (const [name, value] of Object.entries(options.query ?? {})) url.searchParams.set(name, String(value));
    const headers: Record<string, string> = { ...options.headers };
    if (this.apiKey !== undefined) headers.authorization ??= `Bearer ${this.apiKey}`;
    if (options.idempotencyKey !== undefined) headers["idempotency-key"] = options.idempotencyKey;
    let payload: string | undefined = options.raw;
    if (payload === undefined && body !== undefined) payload = JSON.stringify(body);
    if (payload !== undefined && !Object.keys(headers).some((h) => h.toLowerCase() === "content-type")) {
      headers["content-type"] = "application/json";
    }
    const response = await fetch(url, { method, headers, body: payload });
    const text = await response.text();
    let parsed: unknown;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = undefined;
    }
    return { status: response.status, headers: response.headers, body: parsed as T, text };
  }

  get<T = any>(path: string, query?: Record<string, string | number>, options: RequestOptions = {}) {
    return this.request<T>("GET", path, undefined, { ...options, query });
  }
  post<T = any>(path: string, body?: unknown, options: RequestOptions = {}) {
    return this.request<T>("POST", path, body, options);
  }
  patch<T = any>(path: string, body?: unknown, options: RequestOptions = {}) {
    return this.request<T>("PATCH", path, body, options);
  }
}

/**
 * Starts the local API server (the same handlers AWS runs) for one test file and returns a
 * getter for its base URL. `processes` > 1 serves it through that many worker processes, one
 * request at a time each, as Lambda runs it (no shared memory between requests).
 */
export function useApiServer(options: { processes?: number } = {}): () => ApiClient {
  let server: Server | undefined;
  let baseUrl = "";
  beforeAll(async () => {
    const started = await startApiServer(0, { processes: options.processes });
    server = started.server;
    baseUrl = started.url;
  });
  afterAll(async () => {
    server?.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve));
  });
  return () => new ApiClient(baseUrl);
}
