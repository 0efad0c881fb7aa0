import type { TestProject } from "vitest/node";
import { startDynamoLocal, freePort, type DynamoLocal } from "../../scripts/local/dynamodb.js";
import { ensureTable } from "../../lib/db/create-table.js";
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";

declare module "vitest" {
  export interface ProvidedContext {
    dynamoEndpoint: string;
  }
}

let local: DynamoLocal | undefined;

/** Starts one in-memory DynamoDB Local for the integration suite and creates the table. */
export async function setup(project: TestProject): Promise<void> {
  local = await startDynamoLocal({ port: await freePort(), dataDir: "memory" });
  const client = new DynamoDBClient({
    endpoint: local.endpoint,
    region: "local",
    credentials: { accessKeyId: "local", secretAccessKey: "local" },
  });
  await ensureTable(client, process.env.TABLE_NAME ?? "inventory-api-test");
  client.destroy();
  project.provide("dynamoEndpoint", local.endpoint);
}

export async function teardown(): Promise<void> {
  await local?.stop();
}
