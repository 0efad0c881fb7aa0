import {
  CreateTableCommand,
  UpdateTableCommand,
  DescribeTableCommand,
  ResourceInUseException,
  UpdateTimeToLiveCommand,
  type DynamoDBClient,
} from "@aws-sdk/client-dynamodb";
import { GLOBAL_INDEXES, TABLE_KEYS, projectionOf } from "./table.js";

/**
 * Creates the table from the shared definition (the same one the CDK stack deploys) when it
 * does not exist yet: keys, indexes, TTL and a stream with new and old images. Used by the
 * local stack and the tests; in AWS the CDK stack owns the table.
 */
export async function ensureTable(client: DynamoDBClient, name: string): Promise<void> {
  try {
    const described = await client.send(new DescribeTableCommand({ TableName: name }));
    await addMissingIndexes(client, name, new Set((described.Table?.GlobalSecondaryIndexes ?? []).map((i) => i.IndexName!)));
    return;
  } catch (error) {
    if ((error as { name?: string }).name !== "ResourceNotFoundException") throw error;
  }
  const attributes = new Set<string>([TABLE_KEYS.partitionKey, TABLE_KEYS.sortKey]);
  for (const index of GLOBAL_INDEXES) {
    attributes.add(index.partitionKey);
    attributes.add(index.sortKey);
  }
  try {
    await client.send(
      new CreateTableCommand({
        TableName: name,
        BillingMode: "PAY_PER_REQUEST",
        AttributeDefinitions: [...attributes].map((attribute) => ({ AttributeName: attribute, AttributeType: "S" })),
        KeySchema: [
          { AttributeName: TABLE_KEYS.partitionKey, KeyType: "HASH" },
          { AttributeName: TABLE_KEYS.sortKey, KeyType: "RANGE" },
        ],
        GlobalSecondaryIndexes: GLOBAL_INDEXES.map((index) => ({
          IndexName: index.indexName,
          KeySchema: [
            { AttributeName: index.partitionKey, KeyType: "HASH" },
            { AttributeName: index.sortKey, KeyType: "RANGE" },
          ],
          Projection: projectionOf(index),
        })),
        StreamSpecification: { StreamEnabled: true, StreamViewType: "NEW_AND_OLD_IMAGES" },
      }),
    );
  } catch (error) {
    if (!(error instanceof ResourceInUseException)) throw error;
  }
  await client
    .send(
      new UpdateTimeToLiveCommand({
        TableName: name,
        TimeToLiveSpecification: { AttributeName: TABLE_KEYS.timeToLiveAttribute, Enabled: true },
      }),
    )
    .catch(() => undefined); // DynamoDB Local accepts TTL settings but never expires items; harmless if refused.
}

/**
 * Adds indexes that the definition gained since a local table was created (a persisted
 * DATA_DIR from an older version), one at a time as DynamoDB requires, waiting for each.
 */
async function addMissingIndexes(client: DynamoDBClient, name: string, existing: Set<string>): Promise<void> {
  for (const index of GLOBAL_INDEXES) {
    if (existing.has(index.indexName)) continue;
    await client.send(
      new UpdateTableCommand({
        TableName: name,
        AttributeDefinitions: [
          { AttributeName: index.partitionKey, AttributeType: "S" },
          { AttributeName: index.sortKey, AttributeType: "S" },
        ],
        GlobalSecondaryIndexUpdates: [
          {
            Create: {
              IndexName: index.indexName,
              KeySchema: [
                { AttributeName: index.partitionKey, KeyType: "HASH" },
                { AttributeName: index.sortKey, KeyType: "RANGE" },
              ],
              Projection: projectionOf(index),
            },
          },
        ],
      }),
    );
    for (let attempt = 0; attempt < 600; attempt++) {
      const described = await client.send(new DescribeTableCommand({ TableName: name }));
      const status = described.Table?.GlobalSecondaryIndexes?.find((i) => i.IndexName === index.indexName)?.IndexStatus;
      if (status === "ACTIVE") break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}
