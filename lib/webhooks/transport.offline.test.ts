import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { postWebhook } from "./transport.js";

/**
 * The guarded POST against a real local HTTP server: what it sends, what it calls success, and
 * what it refuses. A name is checked where the socket resolves it (so a lookup that answers a
 * private address is refused even though nothing checked the name beforehand).
 */
let server: Server;
let base = "";
const received: { headers: Record<string, unknown>; body: string }[] = [];

beforeAll(async () => {
  server = createServer((request, response) => {
    let body = "";
    request.on("data", (chunk) => (body += chunk));
    request.on("end", () => {
      received.push({ headers: request.headers, body });
      if (request.url === "/redirect") {
        response.writeHead(302, { location: "/ok" }).end();
      } else if (request.url === "/hang") {
        // never answers
      } else if (request.url === "/fail") {
        response.writeHead(503).end("down");
      } else {
        response.writeHead(204).end();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const options = { timeoutMs: 2_000, allowLoopback: true };

describe("the webhook POST", () => {
  it("sends the body and headers, and reports the status", async () => {
    const outcome = await postWebhook(`${base}/ok`, { "webhook-id": "msg_1", "content-type": "application/json" }, '{"a":1}', options);
    expect(outcome).toMatchObject({ status: 204, error: null });
    expect(received.at(-1)).toMatchObject({ body: '{"a":1}', headers: { "webhook-id": "msg_1", "content-type": "application/json" } });
    expect((await postWebhook(`${base}/fail`, {}, "{}", options)).status).toBe(503);
  });

  it("does not follow a redirect", async () => {
    const before = received.length;
    expect(await postWebhook(`${base}/redirect`, {}, "{}", options)).toMatchObject({ status: 302, error: null });
    expect(received.length).toBe(before + 1);
  });

  it("gives up when no answer comes in time", async () => {
    const outcome = await postWebhook(`${base}/hang`, {}, "{}", { ...options, timeoutMs: 300 });
    expect(outcome).toMatchObject({ status: null, error: "timeout" });
    expect(outcome.durationMs).toBeGreaterThanOrEqual(290);
  });

  it("names a refused connection", async () => {
    expect(await postWebhook("http://127.0.0.1:9/x", {}, "{}", options)).toMatchObject({ status: null, error: "connection_refused" });
  });

  it("refuses loopback and private addresses unless the local stack allows its own loopback", async () => {
    const before = received.length;
    const deployed = { ...options, allowLoopback: false };
    expect(await postWebhook(`${base}/ok`, {}, "{}", deployed)).toMatchObject({ status: null, error: "address_not_allowed" });
    // A name is refused where the socket resolves it: localhost answers 127.0.0.1 (and ::1).
    const port = (server.address() as AddressInfo).port;
    expect(await postWebhook(`http://localhost:${port}/ok`, {}, "{}", deployed)).toMatchObject({ status: null, error: "address_not_allowed" });
    expect(await postWebhook("https://169.254.169.254/latest/meta-data", {}, "{}", options)).toMatchObject({ error: "address_not_allowed" });
    expect(await postWebhook("https://[fd00:ec2::254]/", {}, "{}", options)).toMatchObject({ error: "address_not_allowed" });
    expect(await postWebhook("https://10.0.0.1/x", {}, "{}", options)).toMatchObject({ error: "address_not_allowed" });
    expect(received.length).toBe(before);
    expect(await postWebhook(`http://localhost:${port}/ok`, {}, "{}", options)).toMatchObject({ status: 204 });
  });
});

describe("offline: a failed TLS handshake", () => {
  it("is tls_error: https to a server that speaks plain HTTP", async () => {
    const outcome = await postWebhook(base.replace("http:", "https:"), {}, "{}", options);
    expect(outcome).toMatchObject({ status: null, error: "tls_error" });
  });
});
