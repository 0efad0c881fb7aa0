import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { freePort } from "../../scripts/local/dynamodb.js";
import { LOCK_FILE_NAME, type DataDirLockInfo } from "../../scripts/local/data-dir-lock.js";
import { cliWithEnv, failed, succeeded } from "../support/cli.js";
import { exitOf, javaOnDataDir, javaOnPort, spawnStack, startLocalStack, stopStack, waitFor } from "../support/local-stack.js";
import { scaled } from "../support/timeouts.js";

/**
 * The data directory lock (scripts/local/data-dir-lock.ts): `npm start` and the admin CLI run
 * as real child processes on real data directories, with real DynamoDB Local. The admin CLI
 * never opens a DATA_DIR a running stack has open (it uses the stack's DynamoDB), a second
 * `npm start` refuses it, every exit path frees it, and a lock left by a killed process is
 * taken over. Start-ups are slow: few of them.
 */
const scratch = mkdtempSync(join(tmpdir(), "inventory-lock-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

const lockPath = (dataDir: string) => join(dataDir, LOCK_FILE_NAME);
const lockOf = (dataDir: string) => JSON.parse(readFileSync(lockPath(dataDir), "utf8")) as DataDirLockInfo;

/** The admin CLI as an operator runs it beside a local stack: no endpoint, no port, only DATA_DIR. */
const cliOn = (dataDir: string, ...args: string[]) =>
  cliWithEnv({ DYNAMODB_ENDPOINT: undefined, DYNAMODB_PORT: undefined, TABLE_NAME: undefined, DATA_DIR: dataDir }, ...args);

const withKey = (key: string) => ({ headers: { authorization: `Bearer ${key}` } });

async function stackEnv(dataDir: string): Promise<{ env: Record<string, string>; port: number; dynamoPort: number }> {
  const port = await freePort();
  const dynamoPort = await freePort();
  return { env: { PORT: String(port), DYNAMODB_PORT: String(dynamoPort), DATA_DIR: dataDir, SEED: "none" }, port, dynamoPort };
}

/** SIGKILLs a pid if it still runs (a process this test started, directly or through the stack). */
function kill(pid: number): void {
  try {
    process.kill(pid, "SIGKILL");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ESRCH") throw error;
  }
}

describe("the DATA_DIR lock", () => {
  it(
    "npm start holds it: the admin CLI uses the running stack's DynamoDB, a second npm start refuses naming the pid, and it goes when the stack stops",
    async () => {
      const dataDir = join(scratch, "running", "dynamodb");
      const { env, port, dynamoPort } = await stackEnv(dataDir);
      const stack = await startLocalStack(env);
      const lock = lockOf(dataDir);
      expect(lock).toEqual({ holder: "npm start", port, dynamodb_port: dynamoPort, pid: stack.child.pid, started_at: expect.stringMatching(ISO_TIME) });

      // While the CLI runs, DATA_DIR never has a second DynamoDB Local.
      let most = 0;
      let sampling = true;
      const sampler = (async () => {
        while (sampling) {
          most = Math.max(most, javaOnDataDir(dataDir).length);
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
      })();
      const created = await cliOn(dataDir, "account", "create", "--name", "Through the lock", "--json");
      sampling = false;
      await sampler;
      const account = succeeded(created);
      expect(most).toBe(1);

      // The stack serves what the CLI wrote through it, and keeps serving.
      const locations = await fetch(`${stack.url}/api/v3/locations`, withKey(account.api_key));
      expect(locations.status).toBe(200);
      expect(((await locations.json()) as { data: unknown[] }).data).toEqual([]);

      const secondDynamoPort = await freePort();
      const second = spawnStack({ ...env, PORT: String(await freePort()), DYNAMODB_PORT: String(secondDynamoPort) });
      expect(await exitOf(second.child), second.output()).toBe(1);
      expect(second.output()).toContain(
        `npm start failed: DATA_DIR ${dataDir} is in use by another local stack (npm start, pid ${stack.child.pid}; API on port ${port}, DynamoDB Local on port ${dynamoPort}). ` +
          `Use that one, or stop it first (Ctrl-C in its terminal, or kill ${stack.child.pid}). To run a second stack, give it its own data and ports: DATA_DIR=.local/other`,
      );
      expect(second.output()).not.toContain("DynamoDB Local on http");
      expect(javaOnPort(secondDynamoPort)).toEqual([]);
      expect(lockOf(dataDir)).toEqual(lock);
      const health = await fetch(`${stack.url}/health`);
      expect(health.status).toBe(200);
      expect(await health.json()).toEqual({ status: "ok", dynamodb: "ok" });

      expect(await stopStack(stack)).toBe(0);
      expect(existsSync(lockPath(dataDir))).toBe(false);
    },
    scaled(120_000),
  );

  it(
    "a killed stack's stale lock is taken over by the admin CLI and by npm start; it is freed when DynamoDB Local dies (npm start stops with a clear message)",
    async () => {
      const dataDir = join(scratch, "killed", "dynamodb");
      const { env, dynamoPort } = await stackEnv(dataDir);
      const killed = await startLocalStack(env);
      const account = succeeded(await cliOn(dataDir, "account", "create", "--name", "Survivor", "--json"));
      // Killed outright (SIGKILL, Java too): no exit handler runs, the lock stays behind.
      const killedJava = javaOnPort(dynamoPort).map((p) => p.pid);
      killed.child.kill("SIGKILL");
      await exitOf(killed.child);
      killedJava.forEach(kill);
      await waitFor(`DynamoDB Local on port ${dynamoPort} to be gone`, () => javaOnPort(dynamoPort).length === 0);
      const staleText = readFileSync(lockPath(dataDir), "utf8");
      expect(JSON.parse(staleText).pid).toBe(killed.child.pid);

      // The admin CLI opens DATA_DIR itself, under its own lock, and frees it.
      const listed = succeeded(await cliOn(dataDir, "account", "list", "--json"));
      expect(listed.accounts.map((a: { account_id: string }) => a.account_id)).toEqual([account.account_id]);
      expect(existsSync(lockPath(dataDir))).toBe(false);
      expect(javaOnDataDir(dataDir)).toEqual([]);

      // npm start takes the same stale lock over.
      writeFileSync(lockPath(dataDir), staleText);
      const stack = await startLocalStack(env);
      expect(lockOf(dataDir)).toMatchObject({ holder: "npm start", pid: stack.child.pid });
      const served = await fetch(`${stack.url}/api/v3/locations`, withKey(account.api_key));
      expect(served.status).toBe(200);

      // Without DynamoDB Local the API could only answer 500s: npm start stops, and frees the lock.
      const [java] = javaOnPort(dynamoPort);
      expect(java, stack.output()).toBeDefined();
      kill(java!.pid);
      expect(await exitOf(stack.child), stack.output()).toBe(1);
      expect(stack.output()).toContain("DynamoDB Local exited unexpectedly (SIGKILL); the API cannot serve without it. Stopping. Start again with npm start.");
      expect(existsSync(lockPath(dataDir))).toBe(false);
    },
    scaled(150_000),
  );

  it(
    "is freed when npm start fails after taking it (a port in use)",
    async () => {
      const dataDir = join(scratch, "failed", "dynamodb");
      const blocker = createServer();
      await new Promise<void>((resolve) => blocker.listen(0, "127.0.0.1", () => resolve()));
      try {
        const taken = (blocker.address() as { port: number }).port;
        const { env } = await stackEnv(dataDir);
        const stack = spawnStack({ ...env, PORT: String(taken) });
        expect(await exitOf(stack.child), stack.output()).toBe(1);
        expect(stack.output()).toContain(`npm start failed: PORT ${taken} is in use`);
        expect(readdirSync(dataDir)).toEqual([]);
      } finally {
        blocker.close();
      }
    },
    scaled(60_000),
  );

  it(
    "held by a live process: the admin CLI and npm start refuse (naming the pid) and never open the data",
    async () => {
      const dataDir = join(scratch, "held", "dynamodb");
      mkdirSync(dataDir, { recursive: true });
      const silentPort = await freePort();
      // This test's own process is alive; nothing answers on silentPort.
      const stackLock: DataDirLockInfo = {
        holder: "npm start",
        pid: process.pid,
        port: await freePort(),
        dynamodb_port: silentPort,
        started_at: new Date().toISOString(),
      };
      writeFileSync(lockPath(dataDir), JSON.stringify(stackLock));
      const { env } = await stackEnv(dataDir);
      const [cli, stack] = await Promise.all([
        cliOn(dataDir, "account", "list", "--json"),
        (async () => {
          const spawned = spawnStack(env);
          return { code: await exitOf(spawned.child), output: spawned.output() };
        })(),
      ]);
      expect(cli.code).toBe(1);
      expect(failed(cli, "database_unavailable").error.message).toBe(
        `The local stack (npm start, pid ${process.pid}) has DATA_DIR ${dataDir} open, but its DynamoDB Local on port ${silentPort} does not answer (still starting?). ` +
          "Run the command again once it prints `listening on`, or stop it; a second DynamoDB Local on its data would break it.",
      );
      expect(stack.code, stack.output).toBe(1);
      expect(stack.output).toContain(`DATA_DIR ${dataDir} is in use by another local stack (npm start, pid ${process.pid}; `);

      writeFileSync(
        lockPath(dataDir),
        JSON.stringify({ holder: "admin CLI", pid: process.pid, dynamodb_port: silentPort, started_at: new Date().toISOString() }),
      );
      const [cliAgain, stackAgain] = await Promise.all([
        cliOn(dataDir, "account", "list"),
        (async () => {
          const spawned = spawnStack(env);
          return { code: await exitOf(spawned.child), output: spawned.output() };
        })(),
      ]);
      expect(cliAgain.code).toBe(1);
      expect(cliAgain.stderr).toBe(
        `error: Another admin command (pid ${process.pid}) has DATA_DIR ${dataDir} open with its own DynamoDB Local; run this one again when it has finished.\n`,
      );
      expect(stackAgain.code, stackAgain.output).toBe(1);
      expect(stackAgain.output).toContain(
        `npm start failed: DATA_DIR ${dataDir} is in use by an admin command (npm run admin, pid ${process.pid}) that opened it with its own DynamoDB Local; start again when it has finished.`,
      );
      // Only the lock: no DynamoDB Local data, no leftover files of a lock attempt.
      expect(readdirSync(dataDir)).toEqual([LOCK_FILE_NAME]);
    },
    scaled(60_000),
  );
});
