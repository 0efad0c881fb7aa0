import {
  DescribeStreamCommand,
  type DescribeStreamCommandOutput,
  DynamoDBStreamsClient,
  GetRecordsCommand,
  type GetRecordsCommandOutput,
  GetShardIteratorCommand,
  type Shard,
  type _Record,
} from "@aws-sdk/client-dynamodb-streams";
import { DescribeTableCommand, DynamoDBClient } from "@aws-sdk/client-dynamodb";
import type { DynamoDBBatchResponse, DynamoDBStreamEvent } from "aws-lambda";

/**
 * Drives the stream-processor handler from DynamoDB Local's stream the way Lambda's event
 * source mapping does: every shard polled in parallel, batches handed to the same handler,
 * child shards followed. `drain()` lets tests wait until everything written so far has been
 * processed.
 */
type StreamHandler = (event: DynamoDBStreamEvent) => Promise<DynamoDBBatchResponse | undefined>;

export interface StreamPoller {
  stop: () => Promise<void>;
  /** Resolves once every shard has been read up to its current end. */
  drain: () => Promise<void>;
}

function hash(text: string): number {
  let value = 0;
  for (let i = 0; i < text.length; i++) value = (value * 31 + text.charCodeAt(i)) >>> 0;
  return value;
}

/**
 * The SDK's Streams client drops the payload of an empty map (`{"M": {}}` arrives as `{}`);
 * Lambda delivers it intact, so restore it before the handler sees the record.
 */
function restoreEmptyMaps(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(restoreEmptyMaps);
  if (value === null || typeof value !== "object") return value;
  const entries = Object.entries(value as Record<string, unknown>);
  if (entries.length === 0) return { M: {} };
  if ("M" in (value as object)) {
    const map = (value as { M: Record<string, unknown> }).M;
    return { M: Object.fromEntries(Object.entries(map).map(([k, v]) => [k, restoreEmptyMaps(v)])) };
  }
  if ("L" in (value as object)) return { L: ((value as { L: unknown[] }).L ?? []).map(restoreEmptyMaps) };
  return value;
}

function lambdaShape(record: _Record["dynamodb"]) {
  if (!record) return record;
  const image = (image: Record<string, unknown> | undefined) =>
    image ? Object.fromEntries(Object.entries(image).map(([k, v]) => [k, restoreEmptyMaps(v)])) : undefined;
  return { ...record, NewImage: image(record.NewImage as never), OldImage: image(record.OldImage as never) };
}

/**
 * The stream-processor handler logs one `stream batch` line per batch, also for batches with
 * nothing to do (every API request updates its key's rate counter, a stream record of its
 * own). In the local stack's console those lines are noise: this drops the `stream batch`
 * lines of batches that produced no change and wrote nothing; every other line passes.
 */
export function muteIdleStreamBatches(): void {
  const write = process.stdout.write.bind(process.stdout) as (...args: unknown[]) => boolean;
  process.stdout.write = ((chunk: unknown, ...rest: unknown[]) => {
    if (typeof chunk === "string" && chunk.includes('"message":"stream batch"')) {
      try {
        const entry = JSON.parse(chunk) as { message?: string; changes?: number; markerTransactions?: number };
        if (entry.message === "stream batch" && entry.changes === 0 && !entry.markerTransactions) {
          const callback = rest.find((arg) => typeof arg === "function") as (() => void) | undefined;
          if (callback) process.nextTick(callback);
          return true;
        }
      } catch {
        // not one JSON line: print it as it is
      }
    }
    return write(chunk, ...rest);
  }) as typeof process.stdout.write;
}

export async function startStreamPoller(options: {
  endpoint: string;
  tableName: string;
  handler: StreamHandler;
  intervalMs?: number;
  /** Start at the oldest record (tests) instead of the newest (a restarted local stack). */
  fromStart?: boolean;
  /**
   * Like Lambda's parallelization factor: a shard's records are split by partition key into
   * this many groups handled concurrently (order kept within a key). Default 1.
   */
  parallelism?: number;
  /** Up to this many milliseconds of random delay before each handler call (ordering tests). */
  maxDelayMs?: number;
}): Promise<StreamPoller> {
  const config = { endpoint: options.endpoint, region: "local", credentials: { accessKeyId: "local", secretAccessKey: "local" } };
  const tables = new DynamoDBClient(config);
  const streams = new DynamoDBStreamsClient(config);
  const table = await tables.send(new DescribeTableCommand({ TableName: options.tableName }));
  const streamArn = table.Table?.LatestStreamArn;
  if (!streamArn) throw new Error(`Table ${options.tableName} has no stream.`);

  const iterators = new Map<string, string | undefined>(); // shardId -> next iterator (undefined = closed)
  const known = new Set<string>();
  let running = true;
  let firstDiscovery = true;
  let cycle: Promise<void> = Promise.resolve();

  async function discoverShards(): Promise<void> {
    let exclusiveStartShardId: string | undefined;
    const shards: Shard[] = [];
    do {
      const page: DescribeStreamCommandOutput = await streams.send(
        new DescribeStreamCommand({ StreamArn: streamArn, ExclusiveStartShardId: exclusiveStartShardId }),
      );
      shards.push(...(page.StreamDescription?.Shards ?? []));
      exclusiveStartShardId = page.StreamDescription?.LastEvaluatedShardId;
    } while (exclusiveStartShardId);
    for (const shard of shards) {
      const shardId = shard.ShardId!;
      if (known.has(shardId)) continue;
      known.add(shardId);
      const open = shard.SequenceNumberRange?.EndingSequenceNumber === undefined;
      const type = firstDiscovery && !options.fromStart && open ? "LATEST" : "TRIM_HORIZON";
      if (firstDiscovery && !options.fromStart && !open) continue; // history from before this start
      const { ShardIterator } = await streams.send(new GetShardIteratorCommand({ StreamArn: streamArn, ShardId: shardId, ShardIteratorType: type }));
      iterators.set(shardId, ShardIterator);
    }
    firstDiscovery = false;
  }

  /** Hands a batch to the handler, retrying it (as Lambda does) while it reports failures. */
  async function deliver(records: DynamoDBStreamEvent["Records"]): Promise<void> {
    for (let attempt = 0; attempt < 10; attempt++) {
      if (options.maxDelayMs) await new Promise((r) => setTimeout(r, Math.random() * options.maxDelayMs!));
      const result = await options.handler({ Records: records });
      const failed = result?.batchItemFailures ?? [];
      if (failed.length === 0) return;
      const from = records.findIndex((r) => r.dynamodb?.SequenceNumber === failed[0]!.itemIdentifier);
      records = records.slice(Math.max(0, from));
      await new Promise((r) => setTimeout(r, 50 * (attempt + 1)));
    }
    throw new Error("stream batch kept failing");
  }

  async function pollShard(shardId: string): Promise<void> {
    let iterator = iterators.get(shardId);
    if (!iterator) return;
    for (;;) {
      let page: GetRecordsCommandOutput;
      try {
        page = await streams.send(new GetRecordsCommand({ ShardIterator: iterator, Limit: 100 }));
      } catch (error) {
        if ((error as Error).name !== "TrimmedDataAccessException") throw error;
        // DynamoDB Local answers this, at its first write, to a LATEST iterator taken while the
        // shard was empty: read the shard from its start instead (nothing was there before).
        const { ShardIterator } = await streams.send(
          new GetShardIteratorCommand({ StreamArn: streamArn, ShardId: shardId, ShardIteratorType: "TRIM_HORIZON" }),
        );
        iterator = ShardIterator;
        iterators.set(shardId, iterator);
        if (!iterator) return;
        continue;
      }
      const records: _Record[] = page.Records ?? [];
      if (records.length > 0) {
        const events = records.map((record) => ({
          eventID: record.eventID,
          eventName: record.eventName,
          eventVersion: record.eventVersion,
          eventSource: "aws:dynamodb",
          awsRegion: "local",
          eventSourceARN: streamArn,
          dynamodb: lambdaShape(record.dynamodb) as never,
        }));
        const groups = new Map<number, typeof events>();
        for (const event of events) {
          const key = JSON.stringify((event.dynamodb as { Keys?: unknown }).Keys ?? "");
          const group = hash(key) % Math.max(1, options.parallelism ?? 1);
          groups.set(group, [...(groups.get(group) ?? []), event]);
        }
        await Promise.all([...groups.values()].map((group) => deliver(group)));
      }
      iterator = page.NextShardIterator;
      iterators.set(shardId, iterator);
      if (!iterator || records.length === 0) return;
    }
  }

  async function pollOnce(): Promise<void> {
    await discoverShards();
    await Promise.all([...iterators.keys()].map(pollShard));
  }

  // The wait between polls ends early when the poller stops (a long interval never holds up `stop`).
  let wake: () => void = () => {};
  const loop = (async () => {
    while (running) {
      cycle = pollOnce().catch((error: Error) => {
        if (running) process.stderr.write(`stream poller: ${error.message}\n`);
      });
      await cycle;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, options.intervalMs ?? 250);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
  })();

  return {
    stop: async () => {
      running = false;
      wake();
      await loop;
      tables.destroy();
      streams.destroy();
    },
    drain: async () => {
      await cycle;
      await pollOnce();
    },
  };
}
