/** The local stack's environment (architecture section 7), with its defaults. */
export const localEnv = {
  port: () => Number.parseInt(process.env.PORT ?? "3000", 10),
  dynamoPort: () => Number.parseInt(process.env.DYNAMODB_PORT ?? "8000", 10),
  dataDir: () => process.env.DATA_DIR ?? ".local/dynamodb",
  seed: () => process.env.SEED ?? "demo",
  tableName: () => process.env.TABLE_NAME ?? "inventory-api-local",
  rateLimitPerMinute: () => process.env.RATE_LIMIT_PER_MINUTE ?? "1200",
};

/** Sets what the handlers read, before any of them is imported. */
export function applyLocalEnvironment(endpoint: string): void {
  process.env.DYNAMODB_ENDPOINT = endpoint;
  process.env.TABLE_NAME = localEnv.tableName();
  process.env.RATE_LIMIT_PER_MINUTE = localEnv.rateLimitPerMinute();
  process.env.AWS_REGION ??= "local";
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = "true";
  // Sync cursors are signed with a secret generated once and kept with the local data.
  if (!process.env.SYNC_CURSOR_SECRET && localEnv.dataDir() !== "memory") {
    process.env.SYNC_CURSOR_SECRET_FILE ??= `${localEnv.dataDir()}/sync-cursor-secret`;
  }
}
