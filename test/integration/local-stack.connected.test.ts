import { randomUUID } from "node:crypto";
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { createServer, connect, type Server as NetServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Server } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort, portAnswers } from "../../scripts/local/dynamodb.js";
import { startApiServer } from "../../scripts/local/server.js";
import { newAccount } from "../support/fixtures.js";
import { exitOf, javaOnPort, spawnStack, startLocalStack, stopStack as stop, waitFor } from "../support/local-stack.js";
import { scaled } from "../support/timeouts.js";

/**
 * `npm start` as a new user runs it: its own DynamoDB Local (on 127.0.0.1 only), the printed
 * and saved demo keys, the API on the printed URL, `/health`, refusal of ports already taken,
 * and a clean stop on SIGINT or SIGTERM (Java included). Start-ups are slow: few of them.
 * The local server's own robustness (malformed paths, bodies over 1 MB, `/health`) is checked
 * in-process against the suite's DynamoDB Local, through real HTTP.
 */

/** The local addresses listening on a TCP port, from /proc/net (Linux), or undefined elsewhere. */
function listeningAddresses(port: number): string[] | undefined {
  const addresses: string[] = [];
  for (const file of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    if (!existsSync(file)) return undefined;
    for (const line of readFileSync(file, "utf8").split("\n").slice(1)) {
      const [, local, , state] = line.trim().split(/\s+/);
      if (!local || state !== "0A") continue; // 0A = LISTEN
      const [address, hexPort] = local.split(":");
      if (Number.parseInt(hexPort!, 16) === port) addresses.push(address!);
    }
  }
  return addresses;
}
const LOOPBACK = new Set(["0100007F", "0000000000000000FFFF00000100007F", "00000000000000000000000001000000"]);

function javacAvailable(): boolean {
  try {
    execFileSync("javac", ["-version"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

/** Stream-batch log lines of batches that did nothing (the local stack mutes them). */
function idleStreamBatchLines(output: string): string[] {
  return output
    .split("\n")
    .filter((line) => line.includes('"message":"stream batch"'))
    .filter((line) => {
      const entry = JSON.parse(line) as { changes: number; markerTransactions: number };
      return entry.changes === 0 && entry.markerTransactions === 0;
    });
}

const scratch = mkdtempSync(join(tmpdir(), "inventory-local-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe("npm start", () => {
  it(
    "seeds an empty database, prints and saves the demo keys, answers /health, keeps data across restarts and stops Java on SIGINT",
    async () => {
      const dynamoPort = await freePort();
      const dataDir = join(scratch, "persisted", "dynamodb");
      // One keys file per data directory (the default .local/dynamodb's is .local/keys.txt).
      const keysFile = `${dataDir}.keys.txt`;
      const env = { PORT: String(await freePort()), DYNAMODB_PORT: String(dynamoPort), DATA_DIR: dataDir };
      const first = await startLocalStack(env);
      expect(first.apiKey).toMatch(/^isk_live_[0-9A-Za-z]{40}$/);
      // The slow seed step is announced before it runs.
      const seeding = first.output().indexOf("seeding demo data...\n");
      expect(seeding, first.output()).toBeGreaterThan(first.output().indexOf("DynamoDB Local on http://127.0.0.1:"));
      expect(seeding).toBeLessThan(first.output().indexOf("Created demo account "));

      // DynamoDB Local listens on the loopback interface only (with a JDK; with a JRE it says it cannot).
      const addresses = listeningAddresses(dynamoPort);
      if (javacAvailable()) {
        if (addresses) {
          expect(addresses.length).toBeGreaterThan(0);
          for (const address of addresses) expect(LOOPBACK.has(address), `DynamoDB Local listens on ${address}`).toBe(true);
        }
      } else {
        expect(first.output()).toContain("DynamoDB Local listens on all network interfaces");
      }

      // The keys are saved next to the data directory, readable by the owner only.
      const saved = readFileSync(keysFile, "utf8");
      expect(saved).toContain(first.apiKey);
      expect(saved).toContain(first.staffKey);
      // The recovery command reaches this data directory's stack as written.
      expect(saved).toContain(`#   DATA_DIR=${dataDir} npm run -s admin -- key create --user `);
      if (process.platform !== "win32") expect(statSync(keysFile).mode & 0o777).toBe(0o600);
      expect(first.output()).toContain(`dynamodb.keys.txt (mode 600); lost one? DATA_DIR=${dataDir} npm run -s admin -- key create --user `);

      const health = await fetch(`${first.url}/health`);
      expect(health.status).toBe(200);
      expect(await health.json()).toEqual({ status: "ok", dynamodb: "ok" });

      const locations = await fetch(`${first.url}/api/v3/locations`, { headers: { authorization: `Bearer ${first.apiKey}` } });
      expect(locations.status).toBe(200);
      const body = (await locations.json()) as { data: { name: string }[] };
      expect(body.data.map((l) => l.name)).toEqual(["Downtown Store", "Main Warehouse", "Riverton Depot"]);
      // A believable account: dozens of records, and a staff key that sees only its own.
      const totals: Record<string, number> = {};
      for (const [name, key] of [
        ["owner", first.apiKey],
        ["staff", first.staffKey],
      ] as const) {
        for (const collection of ["customers", "prospects", "suppliers", "contacts", "items", "kits"]) {
          const list = await fetch(`${first.url}/api/v3/${collection}`, { headers: { authorization: `Bearer ${key}` } });
          expect(list.status).toBe(200);
          totals[`${name} ${collection}`] = ((await list.json()) as { pagination: { total_records: number } }).pagination.total_records;
        }
      }
      expect(totals).toEqual({
        "owner customers": 25,
        "owner prospects": 10,
        "owner suppliers": 12,
        "owner contacts": 40,
        "owner items": 15,
        "owner kits": 2,
        "staff customers": 5,
        "staff prospects": 3,
        "staff suppliers": 0,
        "staff contacts": 11,
        "staff items": 15,
        "staff kits": 2,
      });
      // Every request above touched its key (a stream record each): the poller printed none of
      // those idle batches, but it does print a batch that changed something.
      const item = await fetch(`${first.url}/api/v3/items`, {
        method: "POST",
        headers: { authorization: `Bearer ${first.apiKey}`, "content-type": "application/json", "idempotency-key": `local-stack-${Date.now()}` },
        body: JSON.stringify({ name: "Logged widget" }),
      });
      expect(item.status).toBe(201);
      await waitFor("a stream batch line with changes", () => /"message":"stream batch".*"changes":[1-9]/.test(first.output()));
      expect(idleStreamBatchLines(first.output())).toEqual([]);
      expect(await stop(first)).toBe(0);
      expect(await portAnswers(dynamoPort)).toBe(false);

      const second = await startLocalStack(env);
      expect(second.apiKey).toBeUndefined();
      expect(second.output()).not.toContain("seeding demo data...");
      expect(readFileSync(keysFile, "utf8")).toBe(saved);
      const again = await fetch(`${second.url}/api/v3/locations`, { headers: { authorization: `Bearer ${first.apiKey}` } });
      expect(again.status).toBe(200);
      expect(await stop(second)).toBe(0);
      expect(await portAnswers(dynamoPort)).toBe(false);
    },
    scaled(180_000),
  );

  it(
    "npm start with SEED=none in memory: keeps serving after a malformed path, then SIGTERM to npm stops everything, Java included",
    async () => {
      const dynamoPort = await freePort();
      const started = await startLocalStack({ PORT: String(await freePort()), DYNAMODB_PORT: String(dynamoPort), DATA_DIR: "memory", SEED: "none" }, "npm");
      expect(started.apiKey).toBeUndefined();
      expect(javaOnPort(dynamoPort)).toHaveLength(1);

      // Without a key: 404 route_not_found where the path matches no route, or 401 where the
      // route table keeps a malformed escape as sent and matches GET /items/{item_id}.
      const malformed = await fetch(`${started.url}/api/v3/items/%E0%A4%A`);
      expect([401, 404]).toContain(malformed.status);
      expect(((await malformed.json()) as { error: { code: string } }).error.code).toMatch(/^(route_not_found|authentication_required)$/);
      const response = await fetch(`${started.url}/api/v3/locations`);
      expect(response.status).toBe(401);
      expect(response.headers.get("www-authenticate")).toBe("Bearer");

      const exited = new Promise<string>((resolve) => started.child.once("exit", (code, signal) => resolve(`${code ?? signal}`)));
      started.child.kill("SIGTERM"); // to npm itself, as a process manager would
      expect(await exited).toMatch(/^(0|1|143|SIGTERM)$/);
      await waitFor(`DynamoDB Local on port ${dynamoPort} to stop`, () => javaOnPort(dynamoPort).length === 0);
      await waitFor(`port ${dynamoPort} to close`, async () => !(await portAnswers(dynamoPort)));
      expect(started.output()).toContain("stopping");
    },
    scaled(120_000),
  );

  it(
    "refuses to start, before Java, when DYNAMODB_PORT or PORT is taken, naming each variable and port",
    async () => {
      const blockers: NetServer[] = [];
      const occupy = async () => {
        const server = createServer();
        await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
        blockers.push(server);
        return (server.address() as { port: number }).port;
      };
      try {
        const dynamoPort = await occupy();
        const port = await occupy();
        const { child, output } = spawnStack({ PORT: String(port), DYNAMODB_PORT: String(dynamoPort), DATA_DIR: "memory", SEED: "none" }, "npm");
        const code = await exitOf(child);
        expect(code, output()).not.toBe(0);
        expect(output()).toContain(`DYNAMODB_PORT ${dynamoPort} is in use`);
        expect(output()).toContain(`PORT ${port} is in use`);
        expect(output()).toMatch(/choose another port: DYNAMODB_PORT=\d+ npm start/);
        expect(output()).toMatch(/choose another port: PORT=\d+ npm start/);
        expect(output()).not.toContain("listening on");
        expect(javaOnPort(dynamoPort)).toEqual([]);
      } finally {
        for (const server of blockers) server.close();
      }
    },
    scaled(60_000),
  );
});

describe("npm start with an unusable setting", () => {
  it(
    "refuses to start, before Java, naming the variable (RATE_LIMIT_PER_MINUTE, LOG_LEVEL, SEED), rather than answer 500 to every request or seed nothing silently",
    async () => {
      for (const [name, value] of [
        ["RATE_LIMIT_PER_MINUTE", "lots"],
        ["LOG_LEVEL", "LOUD"],
        ["SEED", "bogus"],
      ] as const) {
        const dynamoPort = await freePort();
        const { child, output } = spawnStack({
          PORT: String(await freePort()),
          DYNAMODB_PORT: String(dynamoPort),
          DATA_DIR: "memory",
          SEED: "none",
          [name]: value,
        });
        const code = await exitOf(child);
        expect(code, output()).not.toBe(0);
        expect(output()).toContain(`npm start failed: ${name} must be`);
        expect(output()).not.toContain("listening on");
        expect(javaOnPort(dynamoPort)).toEqual([]);
      }
    },
    scaled(60_000),
  );
});

describe("the local server (in-process, real HTTP)", () => {
  let server: Server;
  let url = "";
  beforeAll(async () => {
    // A DynamoDB Local slowed by a loaded machine is still a healthy one here.
    const started = await startApiServer(0, { healthTimeoutMs: scaled(15_000) });
    server = started.server;
    url = started.url;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  /** The server still answers an ordinary request. */
  async function stillServes(): Promise<void> {
    const response = await fetch(`${url}/api/v3/locations`);
    expect(response.status).toBe(401);
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe("authentication_required");
  }

  it("answers malformed percent-encoding in the path with 404 in the error shape and keeps serving", async () => {
    const account = await newAccount();
    for (const path of ["/api/v3/items/%E0%A4%A", "/api/v3/locations/%", "/api/v3/locations/%zz/zones"]) {
      const response = await fetch(`${url}${path}`, { headers: { authorization: `Bearer ${account.ownerKey}` } });
      expect(response.status, path).toBe(404);
      expect(response.headers.get("content-type")).toContain("application/json");
      const body = (await response.json()) as { error: Record<string, unknown> };
      // route_not_found when the malformed path matches no route (the local server's answer when
      // matching throws URIError); resource_missing when the route table keeps the escape as sent.
      expect(body.error).toMatchObject({ type: "invalid_request_error", code: expect.stringMatching(/^(route_not_found|resource_missing)$/) });
      expect(body.error.message).toEqual(expect.any(String));
    }
    await stillServes();
  });

  /** Sends `text` as is on a new connection and returns everything the server writes back. */
  function rawRequest(text: string): Promise<string> {
    return new Promise<string>((resolve, reject) => {
      const socket = connect(server.address() as { port: number }, () => socket.write(text));
      let answer = "";
      socket.on("data", (chunk) => (answer += String(chunk)));
      socket.on("end", () => resolve(answer));
      socket.on("error", reject);
    });
  }

  /** The status and the error body of a raw answer (which must carry the headers every response does). */
  function errorOf(raw: string): { status: number; error: Record<string, unknown> } {
    const [head = "", body = ""] = raw.split("\r\n\r\n");
    expect(head).toMatch(/\r\nContent-Type: application\/json/i);
    for (const name of ["X-Request-Id", "RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset"]) expect(head).toMatch(new RegExp(`\r\n${name}: `, "i"));
    const json = body.startsWith("{") ? body : body.slice(body.indexOf("\r\n") + 2, body.lastIndexOf("}") + 1); // chunked
    return { status: Number(head.split(" ")[1]), error: (JSON.parse(json) as { error: Record<string, unknown> }).error };
  }

  it("answers a path that is no URL (//[, //api/...) with 404 route_not_found naming it as sent, and a target that is not a path with 400 malformed_request", async () => {
    for (const path of ["//[", "//api/v3/customers"]) {
      const { status, error } = errorOf(await rawRequest(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`));
      expect(status, path).toBe(404);
      expect(error).toEqual({ type: "invalid_request_error", code: "route_not_found", message: `Unrecognized request: GET ${path}.` });
    }
    for (const target of ["*", "http://["]) {
      const { status, error } = errorOf(await rawRequest(`GET ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`));
      expect(status, target).toBe(400);
      expect(error).toMatchObject({ code: "malformed_request" });
    }
    await stillServes();
  });

  it("answers what Node's HTTP parser refuses in the error shape with the usual headers (400 malformed_request, 431 for headers over 16 KB), writing nothing", async () => {
    const account = await newAccount();
    const auth = `Authorization: Bearer ${account.ownerKey}\r\n`;
    const cases: [string, number, string][] = [
      [`FOO /api/v3/locations HTTP/1.1\r\nHost: x\r\n${auth}\r\n`, 400, "malformed_request"],
      [`get /api/v3/locations HTTP/1.1\r\nHost: x\r\n${auth}\r\n`, 400, "malformed_request"],
      [`GET /api/v3/locations/\u00e9 HTTP/1.1\r\nHost: x\r\n${auth}\r\n`, 400, "malformed_request"],
      [
        `POST /api/v3/locations HTTP/1.1\r\nHost: x\r\n${auth}Idempotency-Key: a\x7fb\r\nContent-Type: application/json\r\nContent-Length: 31\r\n\r\n{"name":"Raw","short_name":"R"}`,
        400,
        "malformed_request",
      ],
      [
        `POST /api/v3/locations HTTP/1.1\r\nHost: x\r\n${auth}Expect: foo\r\nContent-Type: application/json\r\nContent-Length: 31\r\n\r\n{"name":"Raw","short_name":"R"}`,
        400,
        "malformed_request",
      ],
      [
        `POST /api/v3/locations HTTP/1.1\r\nHost: x\r\n${auth}X-Big: ${"a".repeat(20_000)}\r\nContent-Type: application/json\r\nContent-Length: 31\r\n\r\n{"name":"Raw","short_name":"R"}`,
        431,
        "request_too_large",
      ],
    ];
    for (const [text, expectedStatus, code] of cases) {
      const { status, error } = errorOf(await rawRequest(text));
      expect(status, text.slice(0, 40)).toBe(expectedStatus);
      expect(error).toMatchObject({ type: "invalid_request_error", code, message: expect.any(String) });
    }
    const listed = await fetch(`${url}/api/v3/locations`, { headers: { authorization: `Bearer ${account.ownerKey}` } });
    expect(((await listed.json()) as { data: { name: string }[] }).data.map((location) => location.name)).not.toContain("Raw");
    await stillServes();
  });

  it("reads every header, however many (an Authorization after 2,100 others still authenticates)", async () => {
    const account = await newAccount();
    const headers: Record<string, string> = {};
    for (let i = 0; i < 2100; i++) headers[`x-h${i}`] = "1";
    headers.authorization = `Bearer ${account.ownerKey}`;
    const response = await fetch(`${url}/api/v3/locations`, { headers });
    expect(response.status, await response.clone().text()).toBe(200);
  });

  it("a body over 1 MB reaches the route as deployed: without a key 401, with one 413 request_too_large (its RateLimit headers), to no route 404; exactly 1 MB passes", async () => {
    const account = await newAccount();
    const overLimit = JSON.stringify({ name: "x".repeat(1024 * 1024) });
    const post = (path: string, body: string, key?: string) =>
      fetch(`${url}/api/v3${path}`, {
        method: "POST",
        headers: { "content-type": "application/json", ...(key ? { authorization: `Bearer ${key}` } : {}) },
        body,
      });
    // The pipeline's order (architecture section 3): authentication before the body.
    const anonymous = await post("/locations", overLimit);
    expect(anonymous.status).toBe(401);
    const tooLarge = await post("/locations", overLimit, account.ownerKey);
    expect(tooLarge.status).toBe(413);
    expect(await tooLarge.json()).toEqual({
      error: { type: "invalid_request_error", code: "request_too_large", message: "The request body exceeds 1 MB." },
    });
    expect(tooLarge.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
    expect(Number(tooLarge.headers.get("ratelimit-remaining"))).toBeLessThan(Number(process.env.RATE_LIMIT_PER_MINUTE));
    expect((await post("/no-such-route", overLimit, account.ownerKey)).status).toBe(404);
    await stillServes();
    // A route that takes no body (GET, DELETE) ignores one, as its handler does.
    const deleteIgnored = await fetch(`${url}/api/v3/customers/${randomUUID()}`, { method: "DELETE", body: "x".repeat(2 * 1024 * 1024) });
    expect(deleteIgnored.status).toBe(401); // it reaches the API (which wants a key first)

    const atLimit = `{"name":"${"x".repeat(1024 * 1024 - 11)}"}`;
    expect(Buffer.byteLength(atLimit)).toBe(1024 * 1024);
    const accepted = await post("/locations", atLimit, account.ownerKey);
    expect(accepted.status).toBe(422); // past the size limit, refused by validation (name over 255)
  });

  it("joins a header given twice with a comma, as API Gateway does: a second Authorization makes the key malformed (401)", async () => {
    const account = await newAccount();
    const raw = await rawRequest(
      `GET /api/v3/locations HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${account.ownerKey}\r\nAuthorization: Bearer bogus\r\nConnection: close\r\n\r\n`,
    );
    expect(errorOf(raw)).toMatchObject({ status: 401, error: { code: "authentication_required" } });
    const once = await fetch(`${url}/api/v3/locations`, { headers: { authorization: `Bearer ${account.ownerKey}` } });
    expect(once.status).toBe(200);
  });

  it("answers a 20 MB body (past what a Lambda invocation carries) with 413 before any route (Cache-Control: no-store under /tasks), even to a client that sends all of it before reading", async () => {
    const body = Buffer.alloc(20 * 1024 * 1024, "x");
    const viaFetch = await fetch(`${url}/api/v3/tasks`, { method: "POST", headers: { "content-type": "application/json" }, body });
    expect(viaFetch.status).toBe(413);
    expect(viaFetch.headers.get("cache-control")).toBe("no-store");
    expect(viaFetch.headers.get("ratelimit-limit")).toBe(process.env.RATE_LIMIT_PER_MINUTE);
    expect(((await viaFetch.json()) as { error: { code: string } }).error.code).toBe("request_too_large");

    // A plain socket: the request line, headers and all 20 MB written first, only then the answer read.
    const raw = await new Promise<string>((resolve, reject) => {
      const socket = connect(server.address() as { port: number });
      let text = "";
      socket.on("data", (chunk) => (text += String(chunk)));
      socket.on("end", () => resolve(text));
      socket.on("error", (error) => reject(new Error(`the connection failed instead of answering 413: ${error.message}`)));
      socket.write(`POST /api/v3/tasks HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`);
      socket.write(body);
    });
    expect(raw).toMatch(/^HTTP\/1\.1 413 /);
    expect(raw).toMatch(/\r\nCache-Control: no-store\r\n/i);
    expect(raw).toMatch(/\r\nRateLimit-Remaining: \d+\r\n/i);
    expect(JSON.parse(raw.slice(raw.indexOf("\r\n\r\n") + 4)).error.code).toBe("request_too_large");
    await stillServes();
  });

  it("GET /health: 200 {status: ok, dynamodb: ok} with DynamoDB, 503 when DynamoDB is unreachable", async () => {
    const healthy = await fetch(`${url}/health`);
    expect(healthy.status).toBe(200);
    expect(await healthy.json()).toEqual({ status: "ok", dynamodb: "ok" });

    const nothingThere = await freePort();
    const orphan = await startApiServer(0, { dynamoEndpoint: `http://127.0.0.1:${nothingThere}` });
    try {
      const unhealthy = await fetch(`${orphan.url}/health`);
      expect(unhealthy.status).toBe(503);
      expect(await unhealthy.json()).toEqual({ status: "unavailable", dynamodb: "unreachable" });
      // Not an API route: other methods are the API's 404.
      const post = await fetch(`${orphan.url}/health`, { method: "POST" });
      expect(post.status).toBe(404);
    } finally {
      orphan.server.closeAllConnections();
      await new Promise((resolve) => orphan.server.close(resolve));
    }
  });
});
