import { inject } from "vitest";
import { createDynamoClient } from "../../lib/db/client.js";
import { ensureTable } from "../../lib/db/create-table.js";

// Connected tests refuse to run without the suite's DynamoDB Local (never a mock).
const endpoint = inject("dynamoEndpoint");
if (!endpoint) throw new Error("Integration tests need the DynamoDB Local endpoint from the global setup.");
process.env.DYNAMODB_ENDPOINT = endpoint;

// Each vitest worker has a table of its own on the one DynamoDB Local, so test files run in
// parallel without meeting: a file's stream poller reads only its own worker's writes.
process.env.TABLE_NAME = `${process.env.TABLE_NAME ?? "inventory-api-test"}-${process.env.VITEST_POOL_ID ?? "1"}`;
const client = createDynamoClient();
try {
  await ensureTable(client, process.env.TABLE_NAME);
} finally {
  client.destroy();
}
