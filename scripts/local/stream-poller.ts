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
import { readFileSync, renameSync, writeFileSync } from "node:fs";
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

/** Per shard, the sequence number of the last record handled: where a restarted poller resumes. */
type Checkpoints = Record<string, string>;

/** The checkpoints saved for this stream, or undefined (no file, another stream: the table was made anew). */
function readCheckpoints(file: string, streamArn: string): Checkpoints | undefined {
  try {
    const saved = JSON.parse(readFileSync(file, "utf8")) as { streamArn?: unknown; shards?: unknown };
    if (saved.streamArn !== streamArn || saved.shards === null || typeof saved.shards !== "object") return undefined;
    return Object.fromEntries(
      Object.entries(saved.shards as Record<string, unknown>).filter((entry): entry is [string, string] => typeof entry[1] === "string"),
    );
  } catch {
    return undefined;
  }
}

/** Saves the checkpoints whole (a new file renamed over the old: never half written). */
function writeCheckpoints(file: string, streamArn: string, shards: Checkpoints): void {
  writeFileSync(`${file}.tmp`, JSON.stringify({ streamArn, shards }));
  renameSync(`${file}.tmp`, file);
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
   * A file keeping, per shard, the last record handled (the local stack's DATA_DIR): a restart
   * resumes right after it, so what was written while the stack was stopped (an admin command,
   * the end of a batch not yet polled) still reaches the change feed; saved after every batch,
   * a poller killed mid-batch hands its restart again only that batch, as Lambda retries the
   * batch in flight. Without one, or when it is of another stream, a start skips the history
   * before it.
   */
  checkpointFile?: string;
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
  const checkpointFile = options.checkpointFile;
  const resumed = checkpointFile ? readCheckpoints(checkpointFile, streamArn) : undefined;
  const checkpoints: Checkpoints = {};
  // A first start saves its file even with nothing noted: a restart then reads every shard it
  // has no entry for (empty at this start) from its beginning, instead of starting afresh.
  let unsaved = Boolean(checkpointFile) && !resumed;
  const saveCheckpoints = () => {
    if (!checkpointFile || !unsaved) return;
    writeCheckpoints(checkpointFile, streamArn, checkpoints);
    unsaved = false;
  };
  const handled = (shardId: string, sequenceNumber: string | undefined) => {
    if (sequenceNumber === undefined) return;
    checkpoints[shardId] = sequenceNumber;
    unsaved = true;
  };

  const iteratorOf = async (shardId: string, type: "TRIM_HORIZON" | "LATEST" | "AFTER_SEQUENCE_NUMBER", after?: string) =>
    (await streams.send(new GetShardIteratorCommand({ StreamArn: streamArn, ShardId: shardId, ShardIteratorType: type, SequenceNumber: after }))).ShardIterator;

  /** Reads a shard to its end without handling anything: the iterator there, and its last record's sequence number. */
  async function skipToEnd(shardId: string): Promise<string | undefined> {
    let iterator = await iteratorOf(shardId, "TRIM_HORIZON");
    while (iterator) {
      const page = await streams.send(new GetRecordsCommand({ ShardIterator: iterator, Limit: 1000 }));
      const records = page.Records ?? [];
      handled(shardId, records[records.length - 1]?.dynamodb?.SequenceNumber);
      iterator = page.NextShardIterator;
      if (records.length === 0) break;
    }
    return iterator;
  }

  /** Right after the record a previous run handled last; the shard's retained history when that record was trimmed. */
  async function resumeAfter(shardId: string, sequenceNumber: string): Promise<string | undefined> {
    checkpoints[shardId] = sequenceNumber;
    try {
      return await iteratorOf(shardId, "AFTER_SEQUENCE_NUMBER", sequenceNumber);
    } catch (error) {
      if ((error as Error).name !== "TrimmedDataAccessException") throw error;
      return iteratorOf(shardId, "TRIM_HORIZON");
    }
  }

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
      // Known once its start is settled: a failure here (DynamoDB away) is tried again next cycle.
      const ending = shard.SequenceNumberRange?.EndingSequenceNumber;
      if (resumed) {
        // A shard a previous run handled resumes after its last record; one it never handled
        // (begun since, or empty then) is new from its start.
        const last = resumed[shardId];
        if (last !== undefined && last === ending) checkpoints[shardId] = last;
        else iterators.set(shardId, last !== undefined ? await resumeAfter(shardId, last) : await iteratorOf(shardId, "TRIM_HORIZON"));
      } else if (firstDiscovery && !options.fromStart) {
        // History from before this start is not handled: a closed shard is left, an open one
        // read from its end on (with a checkpoint file, its last record noted, so a restart
        // knows where this run began).
        if (ending !== undefined) handled(shardId, ending);
        else iterators.set(shardId, checkpointFile ? await skipToEnd(shardId) : await iteratorOf(shardId, "LATEST"));
      } else {
        iterators.set(shardId, await iteratorOf(shardId, "TRIM_HORIZON"));
      }
      known.add(shardId);
    }
    firstDiscovery = false;
    saveCheckpoints();
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
        // Saved batch by batch: a poller killed after a batch hands a restart only the batch it was on.
        handled(shardId, records[records.length - 1]!.dynamodb?.SequenceNumber);
        saveCheckpoints();
      }
      iterator = page.NextShardIterator;
      iterators.set(shardId, iterator);
      // Stopping ends a long catch-up between batches (the rest is handled after a restart).
      if (!iterator || records.length === 0 || !running) return;
    }
  }

  async function pollOnce(): Promise<void> {
    await discoverShards();
    await Promise.all([...iterators.keys()].map(pollShard));
    saveCheckpoints();
  }

  // Where this start begins is settled before it returns: what is written after is handled.
  await discoverShards();

  // The wait between polls ends early when the poller stops (a long interval never holds up `stop`).
  let wake: () => void = () => {};
  const loop = (async () => {
    while (running) {
      cycle = pollOnce().catch((error: Error) => {
        if (running) process.stderr.write(`stream poller: ${error.message}\n`);
      });
      await cycle;
      if (!running) break; // stopped during the cycle: no wait to wake
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
      saveCheckpoints();
      tables.destroy();
      streams.destroy();
    },
    drain: async () => {
      await cycle;
      await pollOnce();
    },
  };
}
