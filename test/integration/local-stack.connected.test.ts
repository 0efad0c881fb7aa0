import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createConnection } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { freePort } from "../../scripts/local/dynamodb.js";

/**
 * `npm start` as a new user runs it: its own DynamoDB Local, the printed demo key, the API on
 * the printed URL, and a clean stop on SIGINT (Java included).
 */
interface Started {
  child: ChildProcess;
  output: () => string;
  url: string;
  apiKey: string | undefined;
  staffKey: string | undefined;
}

async function startLocalStack(env: Record<string, string>): Promise<Started> {
  const childEnv: Record<string, string | undefined> = { ...process.env, ...env };
  delete childEnv.DYNAMODB_ENDPOINT;
  delete childEnv.TABLE_NAME;
  const child = spawn(process.execPath, ["--import", "tsx", "scripts/local/start.ts"], { env: childEnv, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  child.stdout!.on("data", (chunk) => (output += String(chunk)));
  child.stderr!.on("data", (chunk) => (output += String(chunk)));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`npm start did not become ready:\n${output}`)), 45_000);
    const check = () => {
      const match = /listening on (http:\/\/127\.0\.0\.1:\d+)\/api\/v3/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]!);
      }
    };
    child.stdout!.on("data", check);
    child.once("exit", (code) => reject(new Error(`npm start exited (${code}):\n${output}`)));
  });
  const apiKey = /Demo API key \(shown once\): (isk_live_\w+)/.exec(output)?.[1];
  const staffKey = /Staff API key [^:]*: (isk_live_\w+)/.exec(output)?.[1];
  return { child, output: () => output, url, apiKey, staffKey };
}

async function stop(started: Started): Promise<number | null> {
  const exited = new Promise<number | null>((resolve) => started.child.once("exit", (code) => resolve(code)));
  started.child.kill("SIGINT");
  return exited;
}

const portOpen = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = createConnection({ host: "127.0.0.1", port }, () => {
      socket.end();
      resolve(true);
    });
    socket.on("error", () => resolve(false));
  });

const dataDir = mkdtempSync(join(tmpdir(), "inventory-local-"));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

describe("npm start", () => {
  it("seeds an empty database, serves the demo key, keeps data across restarts and stops Java on SIGINT", async () => {
    const dynamoPort = await freePort();
    const env = { PORT: String(await freePort()), DYNAMODB_PORT: String(dynamoPort), DATA_DIR: dataDir };
    const first = await startLocalStack(env);
    expect(first.apiKey).toMatch(/^isk_live_[0-9A-Za-z]{40}$/);
    const locations = await fetch(`${first.url}/api/v3/locations`, { headers: { authorization: `Bearer ${first.apiKey}` } });
    expect(locations.status).toBe(200);
    const body = (await locations.json()) as { data: { name: string }[] };
    expect(body.data.map((l) => l.name)).toEqual(["Downtown Store", "Main Warehouse", "Riverton Depot"]);
    // A believable account: dozens of records, and a staff key that sees only its own.
    const totals: Record<string, number> = {};
    for (const [name, key] of [["owner", first.apiKey], ["staff", first.staffKey]] as const) {
      for (const collection of ["customers", "prospects", "suppliers", "contacts", "items"]) {
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
      "owner items": 12,
      "staff customers": 5,
      "staff prospects": 3,
      "staff suppliers": 0,
      "staff contacts": 11,
      "staff items": 12,
    });
    expect(await stop(first)).toBe(0);
    expect(await portOpen(dynamoPort)).toBe(false);

    const second = await startLocalStack(env);
    expect(second.apiKey).toBeUndefined();
    const again = await fetch(`${second.url}/api/v3/locations`, { headers: { authorization: `Bearer ${first.apiKey}` } });
    expect(again.status).toBe(200);
    expect(await stop(second)).toBe(0);
    expect(await portOpen(dynamoPort)).toBe(false);
  }, 120_000);

  it("creates nothing with SEED=none and runs in memory with DATA_DIR=memory", async () => {
    const started = await startLocalStack({
      PORT: String(await freePort()),
      DYNAMODB_PORT: String(await freePort()),
      DATA_DIR: "memory",
      SEED: "none",
    });
    expect(started.apiKey).toBeUndefined();
    const response = await fetch(`${started.url}/api/v3/locations`);
    expect(response.status).toBe(401);
    expect(response.headers.get("www-authenticate")).toBe("Bearer");
    expect(await stop(started)).toBe(0);
  }, 120_000);
});
