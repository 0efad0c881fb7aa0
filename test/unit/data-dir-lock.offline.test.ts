import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { LOCK_FILE_NAME } from "../../scripts/local/data-dir-lock.js";

/**
 * The DATA_DIR lock under contention, between real processes (no Java): each contender takes
 * the lock (or learns who holds it), reports, and holds on until its stdin closes, then exits,
 * its exit handler releasing what it took.
 */
const ROOT = join(import.meta.dirname, "..", "..");
const scratch = mkdtempSync(join(tmpdir(), "data-dir-lock-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const CONTENDER = `
import { acquireDataDirLock } from "./scripts/local/data-dir-lock.ts";
const result = acquireDataDirLock(process.argv[1], { holder: "npm start", dynamodb_port: 1, port: 2 });
console.log(JSON.stringify("lock" in result ? { pid: process.pid, holder: process.pid } : { pid: process.pid, holder: result.heldBy.pid }));
process.stdin.resume();
process.stdin.on("end", () => process.exit(0));
`;

interface Contender {
  child: ChildProcess;
  report: Promise<{ pid: number; holder: number }>;
}

function contend(dataDir: string): Contender {
  const child = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", CONTENDER, dataDir], { cwd: ROOT, stdio: ["pipe", "pipe", "pipe"] });
  let output = "";
  child.stderr!.on("data", (chunk) => (output += String(chunk)));
  const report = new Promise<{ pid: number; holder: number }>((resolve, reject) => {
    child.stdout!.on("data", (chunk) => {
      output += String(chunk);
      if (output.includes("\n")) resolve(JSON.parse(output.split("\n")[0]!));
    });
    child.once("exit", (code) => reject(new Error(`contender exited (${code}) without reporting:\n${output}`)));
  });
  return { child, report };
}

async function release(contenders: Contender[]): Promise<void> {
  await Promise.all(
    contenders.map(({ child }) => {
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.stdin!.end();
      return exited;
    }),
  );
}

describe("the DATA_DIR lock under contention", () => {
  it.each([
    ["a free directory", undefined],
    [
      "a stale lock (its process is gone)",
      JSON.stringify({ holder: "npm start", pid: 2 ** 22 + 1 /* above Linux's largest pid */, dynamodb_port: 1, started_at: "2020-01-01T00:00:00.000Z" }),
    ],
    ["a lock that is not JSON", "garbage"],
  ])(
    "exactly one of four processes racing for %s gets it, the others name it; its exit frees it",
    async (_case, existing) => {
      const dataDir = join(scratch, `case-${readdirSync(scratch).length}`);
      if (existing !== undefined) {
        mkdirSync(dataDir, { recursive: true });
        writeFileSync(join(dataDir, LOCK_FILE_NAME), existing);
      }
      const contenders = Array.from({ length: 4 }, () => contend(dataDir));
      try {
        const reports = await Promise.all(contenders.map((c) => c.report));
        const winners = reports.filter((r) => r.holder === r.pid);
        expect(winners, JSON.stringify(reports)).toHaveLength(1);
        expect(reports.map((r) => r.holder)).toEqual(reports.map(() => winners[0]!.pid));
        expect(readdirSync(dataDir)).toEqual([LOCK_FILE_NAME]);
      } finally {
        await release(contenders);
      }
      expect(existsSync(join(dataDir, LOCK_FILE_NAME))).toBe(false);
    },
    60_000,
  );
});
