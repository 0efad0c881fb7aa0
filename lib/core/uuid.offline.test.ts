import { describe, expect, it } from "vitest";
import { ledgerEntryUuid, uuidV5 } from "./uuid.js";

describe("offline: name-based UUIDs", () => {
  it("matches the RFC 9562 version 5 test vector", () => {
    // RFC 9562 appendix A.4: the DNS namespace and the name www.example.com.
    expect(uuidV5("www.example.com", "6ba7b810-9dad-11d1-80b4-00c04fd430c8")).toBe("2ed6657d-e927-568b-95e1-2665a8aea6a2");
  });

  it("a ledger entry's public id is a version 5 UUID, the same for the same journal and index, different otherwise", () => {
    const journal = "0f8b7c52-4a8e-4c59-9a0e-2f1d3c4b5a69";
    const id = ledgerEntryUuid(`${journal}:0`);
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(ledgerEntryUuid(`${journal}:0`)).toBe(id);
    expect(ledgerEntryUuid(`${journal}:1`)).not.toBe(id);
  });

  it("refuses a namespace that is not a UUID", () => {
    expect(() => uuidV5("x", "nope")).toThrow(/Not a UUID/);
  });
});
