import { logLevel } from "./config.js";

/** Structured JSON logging: one object per line on stdout (CloudWatch parses it as is). */
export type LogLevel = "DEBUG" | "INFO" | "WARN" | "ERROR";

const ORDER: Record<LogLevel, number> = { DEBUG: 10, INFO: 20, WARN: 30, ERROR: 40 };

function threshold(): number {
  try {
    return ORDER[logLevel()];
  } catch {
    // A bad LOG_LEVEL fails a deployed function at start (checkDeployedConfig); logging itself never throws.
    return ORDER.INFO;
  }
}

export function log(level: LogLevel, message: string, fields: Record<string, unknown> = {}): void {
  if (ORDER[level] < threshold()) return;
  process.stdout.write(`${JSON.stringify({ level, message, timestamp: new Date().toISOString(), service: "inventory-api", ...fields })}\n`);
}

/** An error as log fields: name, message, stack and its cause chain. */
export function errorFields(error: unknown): Record<string, unknown> {
  if (!(error instanceof Error)) return { error: String(error) };
  return {
    error: {
      name: error.name,
      message: error.message,
      stack: error.stack,
      cause: error.cause === undefined ? undefined : errorFields(error.cause).error,
    },
  };
}
