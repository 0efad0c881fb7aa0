import { createHash, createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { accessText, hasScope, SCOPES, type Principal } from "../auth/permissions.js";
import { cursorSecretSource } from "../core/config.js";

/**
 * Sync cursors: opaque, HMAC-SHA256 signed, bound to account, user, resource selection and a
 * fingerprint of the caller's effective scopes and permissions; they carry the position (last
 * marker sequence consumed) and its time (for expiry). `v1.<payload>.<signature>`.
 */
export interface CursorPayload {
  /** account id */
  a: string;
  /** user id */
  u: string;
  /** sorted resources */
  r: string[];
  /** access fingerprint */
  f: string;
  /** position: last sequence consumed */
  p: number;
  /** time of the position, epoch seconds (now when caught up with the head) */
  t: number;
}

let secret: Buffer | undefined;
let loading: Promise<Buffer> | undefined;

/**
 * The signing secret, cached for the life of the process (a Lambda container):
 * `SYNC_CURSOR_SECRET`; else, locally, generated once and kept in `SYNC_CURSOR_SECRET_FILE`
 * (under DATA_DIR); else, deployed, the Secrets Manager secret `SYNC_CURSOR_SECRET_ARN` (read
 * once: the value never sits in the Lambda environment); else random, in memory (cursors then
 * last as long as the process).
 */
export async function cursorSecret(): Promise<Buffer> {
  if (secret) return secret;
  const arn = secretsManagerArn();
  if (!arn) return loadedSecret();
  // A failed read is not cached: the next request tries again.
  loading ??= readSecretsManager(arn).then(
    (value) => (secret = value),
    (error: unknown) => {
      loading = undefined;
      throw error;
    },
  );
  return loading;
}

/** The Secrets Manager secret to read, when no local source is configured. */
const secretsManagerArn = (): string | undefined => {
  const source = cursorSecretSource();
  return source && "arn" in source ? source.arn : undefined;
};

/** The secret for signing, synchronously: local sources resolve here; Secrets Manager must have been awaited. */
function loadedSecret(): Buffer {
  secret ??= localSecret();
  return secret;
}

function localSecret(): Buffer {
  const source = cursorSecretSource();
  if (source && "secret" in source) return Buffer.from(source.secret, "utf8");
  if (source && "file" in source) {
    const { file } = source;
    if (!existsSync(file)) {
      mkdirSync(dirname(file), { recursive: true });
      writeFileSync(file, randomBytes(32).toString("base64url"), { mode: 0o600 });
    }
    return Buffer.from(readFileSync(file, "utf8").trim(), "utf8");
  }
  if (source && "arn" in source) throw new Error("The sync cursor secret is not loaded: await cursorSecret() first.");
  return randomBytes(32);
}

async function readSecretsManager(arn: string): Promise<Buffer> {
  // Loaded only here, so nothing else pays for the client (and only the sync bundle holds it).
  const { GetSecretValueCommand, SecretsManagerClient } = await import("@aws-sdk/client-secrets-manager");
  const client = new SecretsManagerClient({ maxAttempts: 3 });
  const { SecretString } = await client.send(new GetSecretValueCommand({ SecretId: arn }));
  client.destroy();
  if (!SecretString) throw new Error("The sync cursor secret has no string value.");
  return Buffer.from(SecretString, "utf8");
}

// Deployed, start reading the secret at cold start (during the init phase); the first request
// awaits the same read. A failure here is retried by that request.
if (secretsManagerArn()) {
  cursorSecret().catch(() => undefined);
}

const sign = (payload: string) => createHmac("sha256", loadedSecret()).update(payload).digest("base64url");

/** Signs a cursor (deployed, after `await cursorSecret()`). */
export function encodeCursor(payload: CursorPayload): string {
  const body = Buffer.from(JSON.stringify(payload)).toString("base64url");
  return `v1.${body}.${sign(body)}`;
}

/** The payload of a cursor whose signature verifies, or undefined (malformed or tampered). */
export function decodeCursor(cursor: string): CursorPayload | undefined {
  const parts = cursor.split(".");
  if (parts.length !== 3 || parts[0] !== "v1" || !parts[1] || !parts[2]) return undefined;
  const expected = Buffer.from(sign(parts[1]));
  const given = Buffer.from(parts[2]);
  if (expected.length !== given.length || !timingSafeEqual(expected, given)) return undefined;
  try {
    const payload = JSON.parse(Buffer.from(parts[1], "base64url").toString("utf8")) as CursorPayload;
    const valid =
      typeof payload.a === "string" &&
      typeof payload.u === "string" &&
      Array.isArray(payload.r) &&
      typeof payload.f === "string" &&
      Number.isSafeInteger(payload.p) &&
      payload.p >= 0 &&
      Number.isSafeInteger(payload.t);
    return valid ? payload : undefined;
  } catch {
    return undefined;
  }
}

/**
 * A fingerprint of everything that decides what the caller may see: the effective permissions,
 * location and scopes, not the stored lists (an owner holds every permission whatever its stored
 * list says; a key listing every scope is a key of all scopes), so an edit that changes nothing
 * the caller may do leaves its cursors valid (architecture section 4).
 */
export function accessFingerprint(principal: Principal): string {
  const material = JSON.stringify({ access: accessText(principal), scopes: SCOPES.filter((scope) => hasScope(principal, scope)) });
  return createHash("sha256").update(material).digest("base64url").slice(0, 22);
}
