import {
  CreateTableCommand,
  UpdateTableCommand,
  DescribeTableCommand,
  ListTablesCommand,
  ResourceInUseException,
  UpdateTimeToLiveCommand,
  type CreateTableCommandInput,
  type DynamoDBClient,
} from "@aws-sdk/client-dynamodb";
import { GLOBAL_INDEXES, TABLE_KEYS, projectionOf, type GlobalIndexDefinition } from "./table.js";

/** Whether `name` exists on the DynamoDB `client` talks to; undefined when it does not, with the tables that do (at most 100). */
export async function missingTable(client: DynamoDBClient, name: string): Promise<{ others: string[] } | undefined> {
  try {
    await client.send(new DescribeTableCommand({ TableName: name }));
    return undefined;
  } catch (error) {
    if ((error as { name?: string }).name !== "ResourceNotFoundException") throw error;
  }
  const listed = await client.send(new ListTablesCommand({ Limit: 100 }));
  return { others: listed.TableNames ?? [] };
}

/**
 * Creates the table from the shared definition (the same one the CDK stack deploys) when it
 * does not exist yet: keys, indexes, TTL and a stream with new and old images; adds the indexes
 * an existing one lacks (and says which). Used by the local stack and the tests; in AWS the
 * CDK stack owns the table.
 */
export async function ensureTable(client: DynamoDBClient, name: string): Promise<{ addedIndexes: string[] }> {
  try {
    const described = await client.send(new DescribeTableCommand({ TableName: name }));
    return { addedIndexes: await addMissingIndexes(client, name, new Set((described.Table?.GlobalSecondaryIndexes ?? []).map((i) => i.IndexName!))) };
  } catch (error) {
    if ((error as { name?: string }).name !== "ResourceNotFoundException") throw error;
  }
  try {
    await client.send(new CreateTableCommand(tableDefinition(name)));
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
  return { addedIndexes: [] };
}

/**
 * The CreateTable input of the table (keys, the given indexes, on-demand), with the stream
 * unless `stream` is false (a table as a point-in-time restore returns it, for tests).
 */
export function tableDefinition(name: string, options: { indexes?: readonly GlobalIndexDefinition[]; stream?: boolean } = {}): CreateTableCommandInput {
  const indexes = options.indexes ?? GLOBAL_INDEXES;
  const attributes = new Set<string>([TABLE_KEYS.partitionKey, TABLE_KEYS.sortKey, ...indexes.flatMap((index) => [index.partitionKey, index.sortKey])]);
  return {
    TableName: name,
    BillingMode: "PAY_PER_REQUEST",
    AttributeDefinitions: [...attributes].map((attribute) => ({ AttributeName: attribute, AttributeType: "S" })),
    KeySchema: [
      { AttributeName: TABLE_KEYS.partitionKey, KeyType: "HASH" },
      { AttributeName: TABLE_KEYS.sortKey, KeyType: "RANGE" },
    ],
    ...(indexes.length > 0
      ? {
          GlobalSecondaryIndexes: indexes.map((index) => ({
            IndexName: index.indexName,
            KeySchema: [
              { AttributeName: index.partitionKey, KeyType: "HASH" as const },
              { AttributeName: index.sortKey, KeyType: "RANGE" as const },
            ],
            Projection: projectionOf(index),
          })),
        }
      : {}),
    ...(options.stream === false ? {} : { StreamSpecification: { StreamEnabled: true, StreamViewType: "NEW_AND_OLD_IMAGES" as const } }),
  };
}

/**
 * Adds indexes that the definition gained since a local table was created (a persisted
 * DATA_DIR from an older version), one at a time as DynamoDB requires, waiting for each;
 * returns their names.
 */
async function addMissingIndexes(client: DynamoDBClient, name: string, existing: Set<string>): Promise<string[]> {
  const added: string[] = [];
  for (const index of GLOBAL_INDEXES) {
    if (existing.has(index.indexName)) continue;
    added.push(index.indexName);
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
  return added;
}
