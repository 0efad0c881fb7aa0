import type { TestProject } from "vitest/node";
import { startDynamoLocal, freePort, type DynamoLocal } from "../../scripts/local/dynamodb.js";

declare module "vitest" {
  export interface ProvidedContext {
    dynamoEndpoint: string;
  }
}

let local: DynamoLocal | undefined;

/**
 * Starts one in-memory DynamoDB Local for the integration suite; each worker creates its own
 * table there (test/support/connect.ts).
 */
export async function setup(project: TestProject): Promise<void> {
  local = await startDynamoLocal({ port: await freePort(), dataDir: "memory" });
  project.provide("dynamoEndpoint", local.endpoint);
}

export async function teardown(): Promise<void> {
  await local?.stop();
}
