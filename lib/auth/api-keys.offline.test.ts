import { createHash, randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { API_KEY_PREFIX, hashApiKey, mintApiKey, parseApiKey } from "./api-keys.js";

/** API keys (architecture section 4): `isk_live_` + 40 base62 characters, only a SHA-256 hash stored. */
const KEY_FORMAT = /^isk_live_[0-9A-Za-z]{40}$/;

describe("offline: api keys", () => {
  it("mints keys of the documented format", () => {
    const { apiKey, keyHash, keyId } = mintApiKey(randomUUID());
    expect(apiKey).toMatch(KEY_FORMAT);
    expect(apiKey.startsWith(API_KEY_PREFIX)).toBe(true);
    expect(keyHash).toMatch(/^[0-9a-f]{64}$/);
    expect(keyId).toEqual(expect.any(String));
  });

  it("stores the SHA-256 hex of the key, never the key", () => {
    const { apiKey, keyHash } = mintApiKey(randomUUID());
    const expected = createHash("sha256").update(apiKey).digest("hex");
    expect(keyHash).toBe(expected);
    expect(hashApiKey(apiKey)).toBe(expected);
    expect(keyHash).not.toContain(apiKey);
  });

  it("parses the account id back out of a minted key", () => {
    for (const accountId of [randomUUID(), randomUUID(), "00000000-0000-0000-0000-000000000000", "ffffffff-ffff-ffff-ffff-ffffffffffff"]) {
      const { apiKey, keyHash } = mintApiKey(accountId);
      expect(apiKey).toMatch(KEY_FORMAT);
      expect(parseApiKey(apiKey)).toEqual({ accountId, keyHash });
    }
  });

  it("mints a different key (and hash) each time, even for one account", () => {
    const accountId = randomUUID();
    const first = mintApiKey(accountId);
    const second = mintApiKey(accountId);
    expect(first.apiKey).not.toBe(second.apiKey);
    expect(first.keyHash).not.toBe(second.keyHash);
    expect(first.keyId).not.toBe(second.keyId);
    expect(parseApiKey(first.apiKey)?.accountId).toBe(accountId);
    expect(parseApiKey(second.apiKey)?.accountId).toBe(accountId);
  });

  describe("malformed values are undefined (401 without a database read)", () => {
    const valid = mintApiKey(randomUUID()).apiKey;
    const body = valid.slice(API_KEY_PREFIX.length);
    const cases: Array<[string, string]> = [
      ["empty", ""],
      ["the prefix alone", API_KEY_PREFIX],
      ["a test-key prefix", `isk_test_${body}`],
      ["another prefix", `sk_live_${body}`],
      ["an upper-case prefix", `ISK_LIVE_${body}`],
      ["39 characters", `${API_KEY_PREFIX}${body.slice(0, 39)}`],
      ["41 characters", `${API_KEY_PREFIX}${body}A`],
      ["a non-base62 character", `${API_KEY_PREFIX}${body.slice(0, 39)}-`],
      ["an underscore inside", `${API_KEY_PREFIX}${body.slice(0, 20)}_${body.slice(21)}`],
      ["a non-ASCII character", `${API_KEY_PREFIX}${body.slice(0, 39)}é`],
      ["surrounding whitespace", ` ${valid}`],
      ["a trailing newline", `${valid}\n`],
      ["an account part past 128 bits", `${API_KEY_PREFIX}${"z".repeat(22)}${body.slice(22)}`],
      // The last 4 characters are a checksum: any other change makes a key that was never issued.
      ["one random character changed", `${API_KEY_PREFIX}${body.slice(0, 30)}${body[30] === "a" ? "b" : "a"}${body.slice(31)}`],
      ["the checksum changed", `${API_KEY_PREFIX}${body.slice(0, 39)}${body[39] === "0" ? "1" : "0"}`],
      [
        "another account's part with this tail",
        `${API_KEY_PREFIX}${mintApiKey(randomUUID()).apiKey.slice(API_KEY_PREFIX.length, API_KEY_PREFIX.length + 22)}${body.slice(22)}`,
      ],
      ["made up", `${API_KEY_PREFIX}${"A".repeat(40)}`],
    ];
    it.each(cases)("%s", (_label, value) => {
      expect(parseApiKey(value)).toBeUndefined();
    });
  });

  it("accepts the largest account part that still fits 128 bits", () => {
    const key = mintApiKey("ffffffff-ffff-ffff-ffff-ffffffffffff").apiKey;
    expect(parseApiKey(key)?.accountId).toBe("ffffffff-ffff-ffff-ffff-ffffffffffff");
  });
});
