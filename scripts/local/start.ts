import { localEnv, applyLocalEnvironment } from "./env.js";
import { startDynamoLocal, type DynamoLocal } from "./dynamodb.js";

/**
 * `npm start`: DynamoDB Local (or DYNAMODB_ENDPOINT), the table, the stream poller, the demo
 * seed on an empty database, and the API on http://127.0.0.1:$PORT/api/v3. Ctrl-C (or
 * SIGTERM) stops everything, Java included.
 */
async function main(): Promise<void> {
  let dynamo: DynamoLocal | undefined;
  const external = process.env.DYNAMODB_ENDPOINT;
  if (external) {
    applyLocalEnvironment(external);
  } else {
    dynamo = await startDynamoLocal({ port: localEnv.dynamoPort(), dataDir: localEnv.dataDir() });
    applyLocalEnvironment(dynamo.endpoint);
    console.log(`DynamoDB Local on ${dynamo.endpoint} (data: ${localEnv.dataDir()})`);
  }

  const { ensureTable } = await import("../../lib/db/create-table.js");
  const { createDynamoClient } = await import("../../lib/db/client.js");
  const { tableName } = await import("../../lib/db/table.js");
  const { tableIsEmpty } = await import("../../lib/db/admin-store.js");
  await ensureTable(createDynamoClient(), tableName());

  if (localEnv.seed() === "demo" && (await tableIsEmpty())) {
    const { seedDemo } = await import("./seed.js");
    const demo = await seedDemo();
    console.log(`Created demo account ${demo.account_id} (owner user ${demo.user_id}).`);
    console.log(`Demo API key (shown once): ${demo.api_key}`);
    console.log(`Staff API key (sees only its own records; shown once): ${demo.staff_api_key}`);
  }

  const { startStreamPoller } = await import("./stream-poller.js");
  const { handler: streamHandler } = await import("../../functions/stream-processor/handler.js");
  const poller = await startStreamPoller({ endpoint: process.env.DYNAMODB_ENDPOINT!, tableName: tableName(), handler: streamHandler });

  const { startApiServer } = await import("./server.js");
  const api = await startApiServer(localEnv.port());
  console.log(`listening on ${api.url}/api/v3`);

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    console.log(`\n${signal}: stopping`);
    api.server.close();
    api.server.closeAllConnections();
    await poller.stop();
    await dynamo?.stop();
    process.exit(0);
  };
  process.on("SIGINT", () => void stop("SIGINT"));
  process.on("SIGTERM", () => void stop("SIGTERM"));
}

main().catch((error: Error) => {
  console.error(`npm start failed: ${error.message}`);
  process.exit(1);
});
