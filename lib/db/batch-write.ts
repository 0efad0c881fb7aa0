import { UNPROCESSED_KEYS_POLICY } from "./batch-get.js";
import { RETRY, retrying } from "./retry.js";

/** Requests in one BatchWriteItem (DynamoDB's limit). */
export const BATCH_WRITE_LIMIT = 25;

/** Chunks in flight at once: a bulk write shares the table with the API's own writes. */
const CHUNKS_IN_FLIGHT = 4;

/** One BatchWriteItem of at most `BATCH_WRITE_LIMIT` puts, as an ElectroDB entity's `put([...]).go()` answers it. */
export type BatchPutChunk<T> = (records: T[]) => Promise<{ unprocessed: T[] }>;

/**
 * Writes any number of records in BatchWriteItems of up to 25 puts, a few chunks at a time,
 * sending again what DynamoDB left unprocessed (as for reads, `UNPROCESSED_KEYS_POLICY`, then
 * `ContentionError`). Each put is atomic on its own; the whole is not, so it suits writes that
 * may be repeated (the operator directory's entries), never a document's.
 */
export async function batchPutAll<T>(operation: string, records: readonly T[], put: BatchPutChunk<T>): Promise<void> {
  const chunks: T[][] = [];
  for (let i = 0; i < records.length; i += BATCH_WRITE_LIMIT) chunks.push(records.slice(i, i + BATCH_WRITE_LIMIT));
  for (let i = 0; i < chunks.length; i += CHUNKS_IN_FLIGHT) {
    await Promise.all(
      chunks.slice(i, i + CHUNKS_IN_FLIGHT).map(async (chunk) => {
        let pending = chunk;
        await retrying(
          operation,
          async () => {
            const { unprocessed } = await put(pending);
            if (unprocessed.length === 0) return true;
            pending = unprocessed;
            return RETRY;
          },
          UNPROCESSED_KEYS_POLICY,
        );
      }),
    );
  }
}
