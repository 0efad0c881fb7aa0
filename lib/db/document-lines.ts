/**
 * A document's lines as stored (architecture section 8, "Document storage"): one compressed
 * JSON text split into line pages of at most `MAX_PAGE_BYTES`, within the document limits.
 */
import { DocumentTooLargeError } from "../core/failures.js";
import { packJson, unpackJson } from "./packing.js";
import type { DocumentLinesItem } from "./service.js";

/** A stored line: the document kind's own shape, with a stable `id`. */
export type StoredLine = { id: string } & Record<string, unknown>;

/** Compressed line data per page: far below DynamoDB's 400 KB per item. */
export const MAX_PAGE_BYTES = 350 * 1024;
/** Compressed line data per document: with the header, within one Query response (1 MB). */
export const MAX_DOCUMENT_LINE_BYTES = 900 * 1024;
/** Line JSON per document: the response that carries it stays below Lambda's 6 MB payload. */
export const MAX_DOCUMENT_LINE_JSON_BYTES = 4 * 1024 * 1024;
/**
 * The same JSON as a Lambda response carries it (the body a string inside JSON, its quotes and
 * backslashes escaped again), with room for the header and the lines' computed fields below
 * Lambda's 6 MB, however many quotes the descriptions hold.
 */
export const MAX_DOCUMENT_LINE_RESPONSE_BYTES = 5.5 * 1024 * 1024;

/** A document's lines ready to store: the compressed pages (encode once, write in any attempt). */
export interface EncodedLines {
  lines: readonly StoredLine[];
  pages: Uint8Array[];
  /** Compressed bytes (stored). */
  bytes: number;
  /** JSON bytes (as a response carries them). */
  jsonBytes: number;
}

/** Compresses lines into pages; throws `DocumentTooLargeError` beyond the document limits. */
export function encodeDocumentLines(lines: readonly StoredLine[]): EncodedLines {
  const { chunks, bytes, jsonBytes, responseBytes } = packJson(lines, MAX_PAGE_BYTES);
  if (jsonBytes > MAX_DOCUMENT_LINE_JSON_BYTES) throw new DocumentTooLargeError(jsonBytes, MAX_DOCUMENT_LINE_JSON_BYTES, "json");
  if (responseBytes > MAX_DOCUMENT_LINE_RESPONSE_BYTES) throw new DocumentTooLargeError(responseBytes, MAX_DOCUMENT_LINE_RESPONSE_BYTES, "response");
  if (bytes > MAX_DOCUMENT_LINE_BYTES) throw new DocumentTooLargeError(bytes, MAX_DOCUMENT_LINE_BYTES, "stored");
  return { lines, pages: chunks, bytes, jsonBytes };
}

/** Whether lines come encoded already (`encodeDocumentLines`). */
export const isEncoded = (lines: readonly StoredLine[] | EncodedLines): lines is EncodedLines => !Array.isArray(lines);

/** The lines of a partition's pages (compressed pages, or older pages holding plain lists). */
export function decodePages(pages: readonly DocumentLinesItem[]): StoredLine[] {
  const ordered = [...pages].sort((a, b) => a.page - b.page);
  if (ordered.length === 0) return [];
  if (ordered[0]!.packed !== undefined) return unpackJson<StoredLine[]>(ordered.map((page) => page.packed as Uint8Array));
  return ordered.flatMap((page) => (page.lines ?? []) as StoredLine[]);
}
