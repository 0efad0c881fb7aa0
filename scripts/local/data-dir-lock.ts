import { linkSync, mkdirSync, readFileSync, renameSync, unlinkSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";

/**
 * The lock of a DynamoDB Local data directory. Two DynamoDB Local processes on one directory
 * corrupt each other's view of the data (the running stack then answers 500s), so whoever
 * starts DynamoDB Local on a directory (`npm start`, or the admin CLI when no stack runs)
 * first writes `local-stack.lock` there: who holds it, its pid and DynamoDB Local's port. The
 * others read it: the admin CLI uses the stack's DynamoDB, a second `npm start` refuses. A
 * lock whose process is gone (killed with SIGKILL, a crash) is stale and is taken over.
 */
export interface DataDirLockInfo {
  holder: "npm start" | "admin CLI";
  pid: number;
  /** DynamoDB Local's port (on 127.0.0.1). */
  dynamodb_port: number;
  /** The API's port (`npm start` only). */
  port?: number;
  started_at: string;
}

export interface DataDirLock {
  path: string;
  /** Removes the lock file if it is still this process's lock (idempotent, synchronous). */
  release: () => void;
}

export const LOCK_FILE_NAME = "local-stack.lock";

export function lockFilePath(dataDir: string): string {
  return join(resolve(dataDir), LOCK_FILE_NAME);
}

/** Whether a process with this pid exists (and is not a zombie waiting to be reaped). */
export function processIsAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM"; // alive, owned by another user
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const state = stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3);
    return state !== "Z" && state !== "X";
  } catch {
    return true; // no /proc (not Linux): kill(0) is all there is
  }
}

function parseLock(text: string): DataDirLockInfo | undefined {
  try {
    const value = JSON.parse(text) as Partial<DataDirLockInfo>;
    if ((value.holder === "npm start" || value.holder === "admin CLI") && Number.isInteger(value.pid) && Number.isInteger(value.dynamodb_port)) {
      return value as DataDirLockInfo;
    }
  } catch {
    // not a lock we wrote: treated as stale
  }
  return undefined;
}

function readText(path: string): string | undefined {
  try {
    return readFileSync(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
}

/** The lock of `dataDir` if a live process other than this one holds it. */
export function liveDataDirLock(dataDir: string): DataDirLockInfo | undefined {
  const text = readText(lockFilePath(dataDir));
  const info = text === undefined ? undefined : parseLock(text);
  return info && info.pid !== process.pid && processIsAlive(info.pid) ? info : undefined;
}

/**
 * Takes the lock of `dataDir` (creating the directory), or says who holds it. Creation is
 * atomic (a complete file is hard-linked into place, so no reader sees it half written); a
 * stale lock is moved aside under a unique name and replaced, and one that turns out not to be
 * the stale lock judged (replaced meanwhile) is put back. The lock is also released when this
 * process exits by any path that runs `exit` handlers.
 */
export function acquireDataDirLock(dataDir: string, info: Omit<DataDirLockInfo, "pid" | "started_at">): { lock: DataDirLock } | { heldBy: DataDirLockInfo } {
  const directory = resolve(dataDir);
  mkdirSync(directory, { recursive: true });
  const path = lockFilePath(directory);
  const text = `${JSON.stringify({ ...info, pid: process.pid, started_at: new Date().toISOString() })}\n`;
  const unique = `${path}.${process.pid}.${Date.now().toString(36)}`;
  for (let attempt = 0; attempt < 10; attempt++) {
    writeFileSync(`${unique}.new`, text);
    try {
      linkSync(`${unique}.new`, path);
      return { lock: ownLock(path, text) };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    } finally {
      unlinkSync(`${unique}.new`);
    }
    const heldText = readText(path);
    if (heldText === undefined) continue; // released meanwhile
    const held = parseLock(heldText);
    if (held && held.pid !== process.pid && processIsAlive(held.pid)) return { heldBy: held };
    try {
      renameSync(path, `${unique}.stale`);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") continue;
      throw error;
    }
    if (readText(`${unique}.stale`) !== heldText) {
      // Another process replaced the stale lock between our read and the move: put theirs back.
      try {
        linkSync(`${unique}.stale`, path);
      } catch {
        // a third process locked in the meantime; the next attempt reports whoever holds it
      }
    }
    unlinkSync(`${unique}.stale`);
  }
  throw new Error(`Could not take the lock ${path}: it kept changing.`);
}

function ownLock(path: string, text: string): DataDirLock {
  const release = () => {
    process.off("exit", release);
    try {
      if (readText(path) === text) unlinkSync(path);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
    }
  };
  process.on("exit", release);
  return { path, release };
}
