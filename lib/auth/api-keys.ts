import { createHash, randomBytes, randomUUID } from "node:crypto";

/**
 * API keys: `isk_live_` followed by 40 base62 characters. The first 22 characters encode the
 * owning account's UUID (so the key record is found inside that account's partition), the next
 * 14 are random (about 83 bits) and the last 4 are a checksum of everything before them, so a
 * mistyped or made-up key is refused without any database call (unauthenticated floods cost
 * nothing but CPU). Only the SHA-256 hash of a key is ever stored.
 */
export const API_KEY_PREFIX = "isk_live_";
const ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
const ACCOUNT_PART = 22;
const RANDOM_PART = 14;
const CHECKSUM_PART = 4;
const KEY_PATTERN = /^isk_live_[0-9A-Za-z]{40}$/;
const MAX_UUID = (1n << 128n) - 1n;

function encodeBase62(value: bigint, width: number): string {
  let out = "";
  let rest = value;
  while (rest > 0n) {
    out = ALPHABET[Number(rest % 62n)] + out;
    rest /= 62n;
  }
  return out.padStart(width, "0");
}

function decodeBase62(text: string): bigint {
  let value = 0n;
  for (const char of text) value = value * 62n + BigInt(ALPHABET.indexOf(char));
  return value;
}

function uuidToBigInt(uuid: string): bigint {
  return BigInt(`0x${uuid.replaceAll("-", "")}`);
}

function bigIntToUuid(value: bigint): string {
  const hex = value.toString(16).padStart(32, "0");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

function randomBase62(length: number): string {
  let out = "";
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      // Rejection sampling keeps every character equally likely.
      if (byte < 248 && out.length < length) out += ALPHABET[byte % 62];
    }
  }
  return out;
}

/** The 4-character checksum of a key's leading part (prefix, account and random characters). */
function checksumOf(body: string): string {
  const digest = createHash("sha256").update(body).digest();
  return encodeBase62(BigInt(digest.readUInt32BE(0)) % 62n ** BigInt(CHECKSUM_PART), CHECKSUM_PART);
}

/** Mints a new key for an account: returns the key (shown once) and its stored hash. */
export function mintApiKey(accountId: string): { apiKey: string; keyHash: string; keyId: string } {
  const body = API_KEY_PREFIX + encodeBase62(uuidToBigInt(accountId), ACCOUNT_PART) + randomBase62(RANDOM_PART);
  const apiKey = body + checksumOf(body);
  return { apiKey, keyHash: hashApiKey(apiKey), keyId: `key_${randomUUID().replaceAll("-", "")}` };
}

export function hashApiKey(apiKey: string): string {
  return createHash("sha256").update(apiKey).digest("hex");
}

/**
 * Reads the account id out of a presented key, or returns undefined when the value is not a
 * well-formed key (the caller answers 401 without touching the database).
 */
export function parseApiKey(apiKey: string): { accountId: string; keyHash: string } | undefined {
  if (!KEY_PATTERN.test(apiKey)) return undefined;
  const checksumAt = apiKey.length - CHECKSUM_PART;
  if (checksumOf(apiKey.slice(0, checksumAt)) !== apiKey.slice(checksumAt)) return undefined;
  const accountNumber = decodeBase62(apiKey.slice(API_KEY_PREFIX.length, API_KEY_PREFIX.length + ACCOUNT_PART));
  if (accountNumber > MAX_UUID) return undefined;
  return { accountId: bigIntToUuid(accountNumber), keyHash: hashApiKey(apiKey) };
}
