import { execFile } from "node:child_process";
import { join } from "node:path";
import { expect } from "vitest";
import { scaled } from "./timeouts.js";

/**
 * The admin CLI against the suite's DynamoDB Local. `cli` runs a command in this process
 * (`runAdminCli`, what scripts/admin/cli.ts runs, its output captured): a process start costs
 * more than most commands. `cliWithEnv` runs what the npm script runs (`node --import tsx`) in
 * a subprocess with its own environment (connection and start-up behaviour), and `npmAdmin`
 * goes through npm itself, exactly as documented.
 */
const ROOT = join(import.meta.dirname, "..", "..");

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

function run(file: string, args: string[], env: Record<string, string | undefined>): Promise<CliResult> {
  return new Promise((resolve) => {
    const childEnv: Record<string, string | undefined> = {
      ...process.env,
      DYNAMODB_ENDPOINT: process.env.DYNAMODB_ENDPOINT,
      TABLE_NAME: process.env.TABLE_NAME,
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: "true",
      ...env,
    };
    for (const [name, value] of Object.entries(childEnv)) if (value === undefined) delete childEnv[name];
    execFile(file, args, { cwd: ROOT, timeout: scaled(45_000), env: childEnv as NodeJS.ProcessEnv }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === "number" ? error.code : -1) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}

export async function cli(...args: string[]): Promise<CliResult> {
  const { runAdminCli } = await import("../../scripts/admin/run.js");
  let stdout = "";
  let stderr = "";
  const code = await runAdminCli(args, {
    out: (text) => {
      stdout += text;
    },
    err: (text) => {
      stderr += text;
    },
  });
  return { code, stdout, stderr };
}

/**
 * The CLI in this process with changes to its environment for the command's length (a value of
 * undefined removes the variable), for what it decides before it connects (argument errors):
 * no process start. Run one at a time: the environment is the process's.
 */
export async function cliInEnv(env: Record<string, string | undefined>, ...args: string[]): Promise<CliResult> {
  const saved = { ...process.env };
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
  try {
    return await cli(...args);
  } finally {
    for (const name of Object.keys(process.env)) if (!(name in saved)) delete process.env[name];
    Object.assign(process.env, saved);
  }
}

/** The CLI with changes to its environment (a value of undefined removes the variable). */
export function cliWithEnv(env: Record<string, string | undefined>, ...args: string[]): Promise<CliResult> {
  return run(process.execPath, ["--import", "tsx", "scripts/admin/cli.ts", ...args], env);
}

/** Exactly as documented: `npm run -s admin -- ...`. */
export function npmAdmin(...args: string[]): Promise<CliResult> {
  return run(process.platform === "win32" ? "npm.cmd" : "npm", ["run", "-s", "admin", "--", ...args], {});
}

/** `--json`: exactly one JSON object on stdout (architecture section 7). */
export function singleJsonObject(result: CliResult): Record<string, any> {
  const lines = result.stdout.split("\n").filter((line) => line.trim() !== "");
  expect(lines, `stdout: ${result.stdout}\nstderr: ${result.stderr}`).toHaveLength(1);
  const parsed: unknown = JSON.parse(lines[0]!);
  expect(parsed).toBeTypeOf("object");
  expect(Array.isArray(parsed)).toBe(false);
  return parsed as Record<string, any>;
}

export function succeeded(result: CliResult): Record<string, any> {
  expect(result.code, `stdout: ${result.stdout}\nstderr: ${result.stderr}`).toBe(0);
  return singleJsonObject(result);
}

/** A failure with --json: a non-zero exit and exactly `{"error": {"code", "message"}}`. */
export function failed(result: CliResult, code?: string): Record<string, any> {
  expect(result.code, `stdout: ${result.stdout}\nstderr: ${result.stderr}`).not.toBe(0);
  const body = singleJsonObject(result);
  expect(Object.keys(body)).toEqual(["error"]);
  expect(Object.keys(body.error).sort()).toEqual(["code", "message"]);
  expect(body.error.message).toEqual(expect.any(String));
  if (code !== undefined) expect(body.error.code, body.error.message).toBe(code);
  return body;
}
