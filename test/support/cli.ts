import { execFile } from "node:child_process";
import { join } from "node:path";
import { expect } from "vitest";

/**
 * The admin CLI as an operator runs it (`npm run admin -- ...`), as a subprocess against the
 * suite's DynamoDB Local. Uses the project's own tsx (what `npx tsx` resolves to), without
 * npx's start-up cost.
 */
const ROOT = join(import.meta.dirname, "..", "..");
const TSX = join(ROOT, "node_modules", ".bin", "tsx");

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

export function cli(...args: string[]): Promise<CliResult> {
  return new Promise((resolve) => {
    execFile(
      TSX,
      ["scripts/admin/cli.ts", ...args],
      {
        cwd: ROOT,
        timeout: 45_000,
        env: {
          ...process.env,
          DYNAMODB_ENDPOINT: process.env.DYNAMODB_ENDPOINT,
          TABLE_NAME: process.env.TABLE_NAME,
          AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: "true",
        },
      },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === "number" ? error.code : -1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
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

export function failed(result: CliResult): Record<string, any> {
  expect(result.code, `stdout: ${result.stdout}\nstderr: ${result.stderr}`).not.toBe(0);
  const body = singleJsonObject(result);
  expect(Object.keys(body)).toEqual(["error"]);
  expect(body.error.message).toEqual(expect.any(String));
  return body;
}
