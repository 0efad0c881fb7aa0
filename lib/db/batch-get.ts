import { RETRY, retrying, type RetryPolicy } from "./retry.js";

/** Keys in one BatchGetItem (DynamoDB's limit). */
export const BATCH_GET_LIMIT = 100;

/**
 * Keys DynamoDB left unprocessed (throttling, or a response over 16 MB) are asked again after a
 * short jittered pause; when they are still left after these attempts the read gives up with
 * `ContentionError` (503 `resource_busy`, safe to retry: nothing was written).
 */
export const UNPROCESSED_KEYS_POLICY: RetryPolicy = { attempts: 8, baseMs: 20, capMs: 500 };

/** One BatchGetItem of at most `BATCH_GET_LIMIT` keys, as an ElectroDB entity's `get([...]).go()` answers it. */
export type BatchGetChunk<K, T> = (keys: K[]) => Promise<{ data: T[]; unprocessed: K[] }>;

/**
 * Reads any number of keys in BatchGetItems of up to 100 keys, every chunk at once (one round
 * trip however many chunks), asking again for the keys DynamoDB left unprocessed. Missing
 * records are simply absent from the result (in no particular order).
 */
export async function batchGetAll<K, T>(operation: string, keys: readonly K[], get: BatchGetChunk<K, T>): Promise<T[]> {
  const chunks: K[][] = [];
  for (let i = 0; i < keys.length; i += BATCH_GET_LIMIT) chunks.push(keys.slice(i, i + BATCH_GET_LIMIT));
  const found = await Promise.all(
    chunks.map(async (chunk) => {
      const data: T[] = [];
      let pending = chunk;
      await retrying(
        operation,
        async () => {
          const result = await get(pending);
          data.push(...result.data);
          if (result.unprocessed.length === 0) return true;
          pending = result.unprocessed;
          return RETRY;
        },
        UNPROCESSED_KEYS_POLICY,
      );
      return data;
    }),
  );
  return found.flat();
}

/** `records` (as `batchGetAll` returns them, unordered) in the order of `ids`; missing ones left out. */
export function inOrderOf<T>(ids: readonly string[], records: readonly T[], idOf: (record: T) => string): T[] {
  const byId = new Map(records.map((record) => [idOf(record), record]));
  return ids.map((id) => byId.get(id)).filter((record): record is T => record !== undefined);
}
