import { createHmac } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { waitFor } from "../support/timeouts.js";

/**
 * How the deployed sync function gets its cursor secret: from Secrets Manager, by the ARN in
 * SYNC_CURSOR_SECRET_ARN, read once per container. The SDK talks to a local HTTP endpoint that
 * answers GetSecretValue (AWS_ENDPOINT_URL_SECRETS_MANAGER, the SDK's standard override).
 */
const ARN = "arn:aws:secretsmanager:us-east-1:123456789012:secret:SyncCursorSecret-AbCdEf";
const VALUE = "deployed-cursor-secret-0123456789abcdefghijklmnopqrstuv";

let server: Server;
let requests: { target: string; secretId: string }[] = [];
let failures = 0;
const saved = { ...process.env };

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = "";
    req.on("data", (chunk: Buffer) => (body += chunk.toString("utf8")));
    req.on("end", () => {
      const input = JSON.parse(body || "{}") as { SecretId?: string };
      requests.push({ target: String(req.headers["x-amz-target"]), secretId: String(input.SecretId) });
      res.setHeader("content-type", "application/x-amz-json-1.1");
      if (failures > 0) {
        failures -= 1;
        res.statusCode = 400;
        res.end(JSON.stringify({ __type: "ResourceNotFoundException", message: "not yet" }));
        return;
      }
      res.end(JSON.stringify({ ARN, Name: "SyncCursorSecret", SecretString: VALUE, VersionId: "v1" }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});

beforeEach(() => {
  requests = [];
  failures = 0;
  vi.resetModules();
  delete process.env.SYNC_CURSOR_SECRET;
  delete process.env.SYNC_CURSOR_SECRET_FILE;
  process.env.SYNC_CURSOR_SECRET_ARN = ARN;
  process.env.AWS_ENDPOINT_URL_SECRETS_MANAGER = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  process.env.AWS_REGION = "us-east-1";
  process.env.AWS_ACCESS_KEY_ID = "test";
  process.env.AWS_SECRET_ACCESS_KEY = "test";
});

afterEach(() => {
  for (const key of Object.keys(process.env)) if (!(key in saved)) delete process.env[key];
  Object.assign(process.env, saved);
});

const cursorModule = () => import("../../lib/sync/cursor.js");
const payload = { a: "acc", u: "user", r: ["item"], f: "fp", p: 7, t: 1_780_000_000 };
const signature = (secret: string, cursor: string) => {
  const body = cursor.split(".")[1]!;
  return createHmac("sha256", secret).update(body).digest("base64url");
};

describe("sync cursor secret from Secrets Manager", () => {
  it("starts reading at cold start, reads once, and signs with the secret's value", async () => {
    const cursor = await cursorModule();
    // The read started when the module was imported (the Lambda init phase).
    await waitFor("the cold start's GetSecretValue", () => requests.length === 1);
    expect(requests[0]).toEqual({ target: "secretsmanager.GetSecretValue", secretId: ARN });
    expect((await cursor.cursorSecret()).toString("utf8")).toBe(VALUE);
    expect((await cursor.cursorSecret()).toString("utf8")).toBe(VALUE);
    const encoded = cursor.encodeCursor(payload);
    expect(encoded.split(".")[2]).toBe(signature(VALUE, encoded));
    expect(cursor.decodeCursor(encoded)).toEqual(payload);
    expect(requests).toHaveLength(1);
  });

  it("refuses to sign before the secret is loaded rather than sign with another key", async () => {
    failures = 1;
    const cursor = await cursorModule();
    expect(() => cursor.encodeCursor(payload)).toThrow(/not loaded/);
  });

  it("does not cache a failed read: the next request reads again", async () => {
    failures = 5; // the import's read and the first request's read both fail
    const cursor = await cursorModule();
    await waitFor("the cold start's GetSecretValue", () => requests.length >= 1);
    await expect(cursor.cursorSecret()).rejects.toThrow();
    failures = 0;
    expect((await cursor.cursorSecret()).toString("utf8")).toBe(VALUE);
    expect(cursor.decodeCursor(cursor.encodeCursor(payload))).toEqual(payload);
  });

  it("keeps the local sources first: SYNC_CURSOR_SECRET is used without any request", async () => {
    process.env.SYNC_CURSOR_SECRET = "local-secret";
    const cursor = await cursorModule();
    expect((await cursor.cursorSecret()).toString("utf8")).toBe("local-secret");
    const encoded = cursor.encodeCursor(payload);
    expect(encoded.split(".")[2]).toBe(signature("local-secret", encoded));
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(requests).toHaveLength(0);
  });
});
