import { deflateRawSync, inflateRawSync } from "node:zlib";

/**
 * Compressed JSON for large stored values (document lines, stored idempotency outcomes):
 * JSON text compressed with raw DEFLATE, split into chunks small enough for one DynamoDB item
 * each (400 KB per item). A 500-line estimate's lines are ~270 KB of JSON with short
 * descriptions and ~2.2 MB with 4,000-character ones; compressed they are ~40 KB and ~700 KB
 * (natural text), so a document is read back in one Query request (1 MB per response).
 */

/** Bytes of one stored chunk: far below DynamoDB's 400 KB item limit, with room for keys. */
export const MAX_CHUNK_BYTES = 350 * 1024;

export interface PackedJson {
  /** The compressed JSON, split into chunks of at most `MAX_CHUNK_BYTES`, in order. */
  chunks: Buffer[];
  /** Compressed size in bytes (what DynamoDB stores). */
  bytes: number;
  /** Size of the JSON text in bytes (what a response body carries). */
  jsonBytes: number;
  /**
   * Size of the JSON text as a string inside JSON, in bytes: what a Lambda response carries, its
   * body being a string in the JSON the runtime sends (every `"` and `\\` again escaped).
   */
  responseBytes: number;
}

export function packJson(value: unknown, chunkBytes: number = MAX_CHUNK_BYTES): PackedJson {
  const text = JSON.stringify(value);
  const json = Buffer.from(text, "utf8");
  const packed = deflateRawSync(json);
  const chunks: Buffer[] = [];
  for (let offset = 0; offset < packed.length; offset += chunkBytes) chunks.push(packed.subarray(offset, offset + chunkBytes));
  if (chunks.length === 0) chunks.push(Buffer.alloc(0));
  // JSON text holds no raw control character: escaped again, only quotes and backslashes grow, by one byte each.
  let escapes = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code === 34 || code === 92) escapes += 1;
  }
  return { chunks, bytes: packed.length, jsonBytes: json.length, responseBytes: json.length + escapes };
}

/** The JSON text of `packJson`'s chunks (given in order). */
export function unpackText(chunks: readonly Uint8Array[]): string {
  const packed = Buffer.concat(chunks.map((chunk) => Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength)));
  return inflateRawSync(packed).toString("utf8");
}

/** The value of `packJson`'s chunks (given in order). */
export const unpackJson = <T>(chunks: readonly Uint8Array[]): T => JSON.parse(unpackText(chunks)) as T;
