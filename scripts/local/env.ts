import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { LOCAL_TABLE_NAME } from "../../lib/db/table.js";

/** The data directory when DATA_DIR is not set. */
export const DEFAULT_DATA_DIR = ".local/dynamodb";

/** The local stack's environment (architecture section 7), with its defaults. */
export const localEnv = {
  port: () => Number.parseInt(process.env.PORT ?? "3000", 10),
  dynamoPort: () => Number.parseInt(process.env.DYNAMODB_PORT ?? "8000", 10),
  dataDir: () => process.env.DATA_DIR ?? DEFAULT_DATA_DIR,
  seed: () => process.env.SEED ?? "demo",
  tableName: () => process.env.TABLE_NAME ?? LOCAL_TABLE_NAME,
  rateLimitPerMinute: () => process.env.RATE_LIMIT_PER_MINUTE ?? "1200",
};

/**
 * Sets what the handlers read, before any of them is imported. `createCursorSecret: false` (the
 * admin CLI, which signs no cursor) only names the secret's file under DATA_DIR: nothing is
 * written there unless a cursor is signed, so a command against another DynamoDB
 * (`DYNAMODB_ENDPOINT`, `DYNAMODB_PORT`) leaves the default DATA_DIR alone.
 */
export function applyLocalEnvironment(endpoint: string, options: { createCursorSecret?: boolean } = {}): void {
  process.env.DYNAMODB_ENDPOINT = endpoint;
  process.env.TABLE_NAME = localEnv.tableName();
  process.env.RATE_LIMIT_PER_MINUTE = localEnv.rateLimitPerMinute();
  process.env.AWS_REGION ??= "local";
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = "true";
  // Sync cursors are signed with a secret generated once and kept with the local data (in
  // memory: one per start). Made here, once, so every API worker process signs alike.
  if (!process.env.SYNC_CURSOR_SECRET) {
    if (localEnv.dataDir() === "memory") process.env.SYNC_CURSOR_SECRET = randomBytes(32).toString("base64url");
    else {
      process.env.SYNC_CURSOR_SECRET_FILE ??= `${localEnv.dataDir()}/sync-cursor-secret`;
      const file = process.env.SYNC_CURSOR_SECRET_FILE;
      if (options.createCursorSecret !== false && !existsSync(file)) {
        mkdirSync(dirname(file), { recursive: true });
        writeFileSync(file, randomBytes(32).toString("base64url"), { mode: 0o600 });
      }
    }
  }
}

/**
 * `API_PROCESSES`: how many worker processes serve the API (default 1: the handlers run in the
 * main process). Each serves one request at a time, as Lambda does.
 */
export function apiProcesses(): number {
  const raw = process.env.API_PROCESSES ?? "1";
  const value = Number(raw);
  if (!/^\d+$/.test(raw) || value < 1 || value > 64) throw new Error(`API_PROCESSES must be a whole number from 1 to 64, not ${JSON.stringify(raw)}.`);
  return value;
}
