import { numberAtOffset } from "./document-lists.js";
import {
  MAX_DOCUMENT_LINE_BYTES,
  MAX_DOCUMENT_LINE_JSON_BYTES,
  MAX_DOCUMENT_LINE_RESPONSE_BYTES,
  MAX_PAGE_BYTES,
  encodeDocumentLines,
  type StoredLine,
} from "./document-lines.js";
import { DocumentTooLargeError } from "../core/failures.js";
import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { MAX_CHUNK_BYTES, packJson, unpackJson, unpackText } from "./packing.js";

const words = "steel brass cable valve panel fitting the of and to in for with on at by from".split(" ");
const prose = (length: number) => {
  let out = "";
  while (out.length < length) out += `${words[Math.floor(Math.random() * words.length)]} `;
  return out.slice(0, length);
};
const lines = (count: number, description: (i: number) => string): StoredLine[] =>
  Array.from({ length: count }, (_, i) => ({
    id: `line-${i}`,
    lineType: "inventory",
    name: `Part ${i}`,
    description: description(i),
    quantity: 1,
    unitPrice: "2.5000",
    subtotal: "2.5000",
  }));

describe("offline: compressed JSON", () => {
  it("round-trips a value through chunks of at most the chunk size, in order", () => {
    const value = { text: randomBytes(100_000).toString("base64"), list: [1, "€", null] };
    const packed = packJson(value, 10_000);
    expect(packed.chunks.length).toBeGreaterThan(10);
    expect(packed.chunks.every((chunk) => chunk.length <= 10_000)).toBe(true);
    expect(packed.bytes).toBe(packed.chunks.reduce((sum, chunk) => sum + chunk.length, 0));
    expect(unpackJson(packed.chunks)).toEqual(value);
    expect(unpackText(packed.chunks)).toBe(JSON.stringify(value));
    expect(packJson([]).chunks).toHaveLength(1);
    expect(MAX_CHUNK_BYTES).toBeLessThan(400 * 1024);
  });
});

describe("offline: document line storage", () => {
  it("stores 500 lines with 4,000-character natural-language descriptions in at most 3 pages, within one Query response", () => {
    const encoded = encodeDocumentLines(lines(500, () => prose(4000)));
    expect(encoded.jsonBytes).toBeGreaterThan(2_000_000);
    expect(encoded.bytes).toBeLessThanOrEqual(MAX_DOCUMENT_LINE_BYTES);
    expect(encoded.pages.length).toBeLessThanOrEqual(3);
    expect(encoded.pages.every((page) => page.length <= MAX_PAGE_BYTES)).toBe(true);
    expect(unpackJson(encoded.pages)).toEqual(encoded.lines);
  });

  it("refuses lines over the compressed limit (incompressible text) and over the JSON limit (however compressible)", () => {
    const noisy = () => encodeDocumentLines(lines(150, () => randomBytes(7500).toString("base64")));
    expect(noisy).toThrow(DocumentTooLargeError);
    expect(noisy).toThrow(expect.objectContaining({ measure: "stored", limit: MAX_DOCUMENT_LINE_BYTES }));
    const wide = () => encodeDocumentLines(lines(500, () => "€".repeat(10_000)));
    expect(wide).toThrow(expect.objectContaining({ measure: "json", limit: MAX_DOCUMENT_LINE_JSON_BYTES }));
  });

  it("measures the JSON as a Lambda response carries it: quotes count twice again, so a response never passes 6 MB", () => {
    // 3.3 MB of JSON text, 6.6 MB once the runtime escapes the body string (every \" becomes \\\").
    const quoted = lines(300, () => '"'.repeat(5500));
    expect(Buffer.byteLength(JSON.stringify(quoted))).toBeLessThan(MAX_DOCUMENT_LINE_JSON_BYTES);
    expect(Buffer.byteLength(JSON.stringify(JSON.stringify(quoted)))).toBeGreaterThan(6 * 1024 * 1024);
    expect(() => encodeDocumentLines(quoted)).toThrow(expect.objectContaining({ measure: "response", limit: MAX_DOCUMENT_LINE_RESPONSE_BYTES }));
    const plain = lines(300, () => "a".repeat(5000));
    expect(encodeDocumentLines(plain).jsonBytes).toBeLessThan(MAX_DOCUMENT_LINE_JSON_BYTES);
    // What the JSON measure alone held before stays writable: 4 MB with a quote in every 8 characters (4.9 MB escaped).
    const some = lines(430, () => 'abcdefg"'.repeat(1000));
    expect(Buffer.byteLength(JSON.stringify(some))).toBeLessThan(MAX_DOCUMENT_LINE_JSON_BYTES);
    expect(() => encodeDocumentLines(some)).not.toThrow();
    expect(MAX_DOCUMENT_LINE_RESPONSE_BYTES).toBeLessThan(6 * 1024 * 1024);
  });
});

describe("offline: the number at a list position", () => {
  it("counts down from the last number, past deleted numbers at or above the position", () => {
    // Numbers 1..10, none deleted: position 0 is 10, position 3 is 7.
    expect(numberAtOffset({ value: 10, count: 10 }, [], 0)).toBe(10);
    expect(numberAtOffset({ value: 10, count: 10 }, [], 3)).toBe(7);
    // 10 and 8 deleted: live 9, 7, 6, ...
    expect(numberAtOffset({ value: 10, count: 8 }, [8, 10], 0)).toBe(9);
    expect(numberAtOffset({ value: 10, count: 8 }, [10, 8], 1)).toBe(7);
    expect(numberAtOffset({ value: 10, count: 8 }, [8, 10], 2)).toBe(6);
    // Deleted below the position change nothing; past the end the number drops below 1.
    expect(numberAtOffset({ value: 10, count: 9 }, [2], 3)).toBe(7);
    expect(numberAtOffset({ value: 10, count: 9 }, [2], 9)).toBe(0);
  });

  it("gives up when the deleted numbers do not account for every gap (deletions from before they were kept)", () => {
    expect(numberAtOffset({ value: 10, count: 7 }, [4], 2)).toBeUndefined();
  });
});
