import {
  DescribeContinuousBackupsCommand,
  DescribeTableCommand,
  DescribeTimeToLiveCommand,
  type DynamoDBClient,
  type TableDescription,
  UpdateContinuousBackupsCommand,
  UpdateTableCommand,
  UpdateTimeToLiveCommand,
} from "@aws-sdk/client-dynamodb";
import { GLOBAL_INDEXES, TABLE_KEYS } from "./table.js";
import { operatorDirectoryMissing } from "./admin-store.js";
import { carrySyncFeedsPastRestore } from "./sync-restore.js";

/** What `prepareRestoredTable` found and left on the table. */
export interface PreparedTable {
  table_name: string;
  /** The stream the stack's `ExistingTableStreamArn` parameter takes. */
  stream_arn: string;
  /** TTL on `expires_at`. */
  time_to_live: "enabled";
  /** `unsupported` only where the DynamoDB has no backups API (DynamoDB Local). */
  point_in_time_recovery: "enabled" | "unsupported";
  deletion_protection: true;
  /** The secondary indexes the stack needs, all present. */
  indexes: string[];
  /** Accounts whose sync feed was carried past the restore (lib/db/sync-restore.ts), of all accounts. */
  sync_feeds: { accounts: number; carried: number };
  /** What this run changed, in order (empty when the table was ready). */
  changed: string[];
}

/** How long to wait for the table to settle after each change, and how often to look. */
export interface WaitPolicy {
  timeoutMs: number;
  intervalMs: number;
}

/** A table that cannot serve the stack: nothing was changed. */
export class UnsuitableTableError extends Error {
  override readonly name = "UnsuitableTableError";
}

/**
 * Makes a table restored from a point-in-time backup ready to be the stack's table
 * (docs/operations.md, "Restoring the table from a point in time"): a restore brings back the
 * items, keys and indexes, but no stream, TTL, point-in-time recovery or deletion protection.
 * Checks first that the keys, every secondary index the stack needs and the operator directory
 * are there (changing nothing otherwise), carries every account's sync feed past the
 * sequences the restore lost (lib/db/sync-restore.ts), then enables, each only when missing and one change at a time as
 * DynamoDB requires, waiting for the table to be ACTIVE after each: the stream with new and old
 * images (replacing a stream of another view type), TTL on `expires_at`, point-in-time
 * recovery and deletion protection. Running it again changes nothing.
 */
export async function prepareRestoredTable(client: DynamoDBClient, tableName: string, wait: WaitPolicy): Promise<PreparedTable> {
  const changed: string[] = [];
  let table = await waitUntilActive(client, tableName, wait);
  checkShape(table);
  if (await operatorDirectoryMissing(tableName)) {
    throw new UnsuitableTableError(
      `Table ${tableName} was written before the admin CLI's directory existed: run \`TABLE_NAME=${tableName} npm run admin -- directory rebuild\` first (with the same DYNAMODB_ENDPOINT), then this again.`,
    );
  }
  // Before anything else: the feed must never reuse the sequences the restore lost.
  const feeds = await carrySyncFeedsPastRestore(tableName);
  if (feeds.carried > 0) changed.push(`sync feeds of ${feeds.carried} accounts carried past the restore`);

  const stream = table.StreamSpecification;
  if (stream?.StreamEnabled && stream.StreamViewType !== "NEW_AND_OLD_IMAGES") {
    await client.send(new UpdateTableCommand({ TableName: tableName, StreamSpecification: { StreamEnabled: false } }));
    changed.push(`stream with ${stream.StreamViewType} disabled`);
    table = await waitUntilActive(client, tableName, wait);
  }
  if (!table.StreamSpecification?.StreamEnabled) {
    await client.send(new UpdateTableCommand({ TableName: tableName, StreamSpecification: { StreamEnabled: true, StreamViewType: "NEW_AND_OLD_IMAGES" } }));
    changed.push("stream enabled (NEW_AND_OLD_IMAGES)");
    table = await waitUntilActive(client, tableName, wait);
  }

  const ttl = (await client.send(new DescribeTimeToLiveCommand({ TableName: tableName }))).TimeToLiveDescription;
  const ttlOn = ttl?.TimeToLiveStatus === "ENABLED" || ttl?.TimeToLiveStatus === "ENABLING";
  if (ttlOn && ttl?.AttributeName !== TABLE_KEYS.timeToLiveAttribute) {
    throw new UnsuitableTableError(
      `Table ${tableName} has TTL on ${ttl?.AttributeName}, the stack needs it on ${TABLE_KEYS.timeToLiveAttribute}: disable it (aws dynamodb update-time-to-live), wait an hour as DynamoDB requires, and run this again.`,
    );
  }
  if (!ttlOn) {
    await client.send(
      new UpdateTimeToLiveCommand({ TableName: tableName, TimeToLiveSpecification: { AttributeName: TABLE_KEYS.timeToLiveAttribute, Enabled: true } }),
    );
    changed.push(`TTL enabled on ${TABLE_KEYS.timeToLiveAttribute}`);
    table = await waitUntilActive(client, tableName, wait);
  }

  // Backups do not change the table's status: nothing to wait for.
  const pointInTime = await enablePointInTimeRecovery(client, tableName, changed);

  if (!table.DeletionProtectionEnabled) {
    await client.send(new UpdateTableCommand({ TableName: tableName, DeletionProtectionEnabled: true }));
    changed.push("deletion protection enabled");
    table = await waitUntilActive(client, tableName, wait);
  }
  if (!table.LatestStreamArn) throw new UnsuitableTableError(`Table ${tableName} reports no stream after enabling it; run this again.`);
  return {
    table_name: tableName,
    stream_arn: table.LatestStreamArn,
    time_to_live: "enabled",
    point_in_time_recovery: pointInTime,
    deletion_protection: true,
    indexes: GLOBAL_INDEXES.map((index) => index.indexName),
    sync_feeds: feeds,
    changed,
  };
}

/** The stack's keys and every index it queries: a restore that left one out cannot serve it. */
function checkShape(table: TableDescription): void {
  const keys = Object.fromEntries((table.KeySchema ?? []).map((k) => [k.KeyType, k.AttributeName]));
  if (keys.HASH !== TABLE_KEYS.partitionKey || keys.RANGE !== TABLE_KEYS.sortKey) {
    throw new UnsuitableTableError(
      `Table ${table.TableName} is keyed on ${keys.HASH}/${keys.RANGE}, not ${TABLE_KEYS.partitionKey}/${TABLE_KEYS.sortKey}: it is not a restore of this stack's table.`,
    );
  }
  const present = new Set((table.GlobalSecondaryIndexes ?? []).map((index) => index.IndexName));
  const missing = GLOBAL_INDEXES.filter((index) => !present.has(index.indexName)).map((index) => index.indexName);
  if (missing.length > 0) {
    throw new UnsuitableTableError(
      `Table ${table.TableName} lacks the secondary index(es) ${missing.join(", ")}: restore again without --global-secondary-index-override (a restore keeps every index by default).`,
    );
  }
}

async function enablePointInTimeRecovery(client: DynamoDBClient, tableName: string, changed: string[]): Promise<"enabled" | "unsupported"> {
  try {
    const described = await client.send(new DescribeContinuousBackupsCommand({ TableName: tableName }));
    const status = described.ContinuousBackupsDescription?.PointInTimeRecoveryDescription?.PointInTimeRecoveryStatus;
    if (status === "ENABLED") return "enabled";
    await client.send(new UpdateContinuousBackupsCommand({ TableName: tableName, PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true } }));
    changed.push("point-in-time recovery enabled");
    return "enabled";
  } catch (error) {
    // DynamoDB Local has no backups API at all.
    if ((error as Error).name === "UnknownOperationException") return "unsupported";
    throw error;
  }
}

async function waitUntilActive(client: DynamoDBClient, tableName: string, wait: WaitPolicy): Promise<TableDescription> {
  const deadline = Date.now() + wait.timeoutMs;
  for (;;) {
    const { Table: table } = await client.send(new DescribeTableCommand({ TableName: tableName }));
    if (table && table.TableStatus === "ACTIVE") return table;
    if (Date.now() >= deadline) {
      throw new UnsuitableTableError(
        `Timed out after ${Math.round(wait.timeoutMs / 1000)} s waiting for table ${tableName} to be ACTIVE (it is ${table?.TableStatus}); run this again later: what is already done is kept.`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, wait.intervalMs));
  }
}
