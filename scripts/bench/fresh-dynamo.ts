import { applyLocalEnvironment } from "../local/env.js";
import { freePort, startDynamoLocal } from "../local/dynamodb.js";

/**
 * Runs a bench against its own DynamoDB Local (in memory, on a free port) with the local
 * environment applied, `env` set over it and the table created, then stops it: what every
 * standalone bench (`bench:contention`, `bench:webhooks`, `bench:sync-head`) measures on.
 */
export async function withFreshDynamoLocal<T>(fn: () => Promise<T>, env: Record<string, string> = {}): Promise<T> {
  const dynamo = await startDynamoLocal({ port: await freePort(), dataDir: "memory" });
  applyLocalEnvironment(dynamo.endpoint);
  Object.assign(process.env, env);
  process.env.LOG_LEVEL ??= "ERROR";
  try {
    const { ensureTable } = await import("../../lib/db/create-table.js");
    const { createDynamoClient } = await import("../../lib/db/client.js");
    const { tableName } = await import("../../lib/db/table.js");
    await ensureTable(createDynamoClient(), tableName());
    return await fn();
  } finally {
    await dynamo.stop();
  }
}
