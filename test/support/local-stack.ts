import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { join } from "node:path";
import { afterAll } from "vitest";
import { scaled } from "./timeouts.js";

/**
 * `npm start` as a child process, for the tests of the local stack: spawning it (through npm,
 * or the script npm runs), waiting for it, stopping it, and the Java processes it leaves. Every
 * wait polls with a deadline and says what it timed out waiting for.
 */
const ROOT = join(import.meta.dirname, "..", "..");
const NPM = process.platform === "win32" ? "npm.cmd" : "npm";

/** How long a local stack may take to print `listening on` (Java start-up, the table, a seed). */
export const STACK_START_TIMEOUT = scaled(60_000);

export interface SpawnedStack {
  child: ChildProcess;
  /** Everything printed so far, stdout and stderr interleaved. */
  output: () => string;
}

export interface StartedStack extends SpawnedStack {
  url: string;
  apiKey: string | undefined;
  staffKey: string | undefined;
}

/** The stack's environment: the test's own without the suite's DynamoDB, table and log level, then `env`. */
function stackEnv(env: Record<string, string>): NodeJS.ProcessEnv {
  const { DYNAMODB_ENDPOINT: _endpoint, TABLE_NAME: _table, LOG_LEVEL: _level, ...inherited } = process.env;
  return { ...inherited, ...env };
}

/** Every stack spawned by the importing test file: one a failed test left running is stopped after the file. */
const spawned: ChildProcess[] = [];
afterAll(async () => {
  const running = spawned.filter((child) => child.exitCode === null && child.signalCode === null);
  await Promise.all(
    running.map(
      (child) =>
        new Promise((resolve) => {
          child.once("exit", resolve);
          child.kill("SIGTERM");
        }),
    ),
  );
});

/** Spawns `npm start` itself, or (faster, and the child's pid is the stack's own) the script it runs. */
export function spawnStack(env: Record<string, string>, via: "npm" | "node" = "node"): SpawnedStack {
  const child =
    via === "npm"
      ? spawn(NPM, ["start"], { cwd: ROOT, env: stackEnv(env), stdio: ["ignore", "pipe", "pipe"] })
      : spawn(process.execPath, ["--import", "tsx", "scripts/local/start.ts"], { cwd: ROOT, env: stackEnv(env), stdio: ["ignore", "pipe", "pipe"] });
  spawned.push(child);
  let output = "";
  child.stdout!.on("data", (chunk) => (output += String(chunk)));
  child.stderr!.on("data", (chunk) => (output += String(chunk)));
  return { child, output: () => output };
}

/** Spawns a stack and waits for its `listening on` line; the demo keys are read from its output. */
export async function startLocalStack(env: Record<string, string>, via: "npm" | "node" = "node"): Promise<StartedStack> {
  const { child, output } = spawnStack(env, via);
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`Timed out after ${STACK_START_TIMEOUT} ms waiting for npm start to print "listening on":\n${output()}`)),
      STACK_START_TIMEOUT,
    );
    const check = () => {
      const match = /listening on (http:\/\/127\.0\.0\.1:\d+)\/api\/v3/.exec(output());
      if (match) {
        clearTimeout(timer);
        resolve(match[1]!);
      }
    };
    child.stdout!.on("data", check);
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`npm start exited (${code}) before listening:\n${output()}`));
    });
  });
  const apiKey = /Demo API key: (isk_live_\w+)/.exec(output())?.[1];
  const staffKey = /Staff API key [^:]*: (isk_live_\w+)/.exec(output())?.[1];
  return { child, output, url, apiKey, staffKey };
}

/** The child's exit code (null when a signal ended it), once it has exited. */
export function exitOf(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((resolve) => child.once("exit", (code) => resolve(code)));
}

export async function stopStack(stack: SpawnedStack, signal: NodeJS.Signals = "SIGINT"): Promise<number | null> {
  const exited = exitOf(stack.child);
  stack.child.kill(signal);
  return exited;
}

/** Java processes running DynamoDB Local whose command line matches `pattern`. */
function javaProcesses(pattern: RegExp): { pid: number; args: string }[] {
  const processes = execFileSync("ps", ["-eww", "-o", "pid=,args="], { encoding: "utf8" });
  return processes
    .split("\n")
    .map((line) => /^\s*(\d+)\s+(.*)$/.exec(line))
    .filter((match): match is RegExpExecArray => match !== null && /java/.test(match[2]!) && /DynamoDB/.test(match[2]!) && pattern.test(match[2]!))
    .map((match) => ({ pid: Number(match[1]), args: match[2]! }));
}

/** Java processes running DynamoDB Local on this port. */
export function javaOnPort(port: number): { pid: number; args: string }[] {
  return javaProcesses(new RegExp(`-port ${port}(\\s|$)`));
}

/** Java processes running DynamoDB Local on this (absolute) data directory. */
export function javaOnDataDir(dataDir: string): { pid: number; args: string }[] {
  return javaProcesses(new RegExp(`-dbPath ${dataDir.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}(\\s|$)`));
}

export { waitFor } from "./timeouts.js";
