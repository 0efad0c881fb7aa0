import { createHash, createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import type { Principal } from "../auth/permissions.js";

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

/**
 * The signing secret: `SYNC_CURSOR_SECRET` (the deployed stack injects it from Secrets
 * Manager); locally, generated once and kept in `SYNC_CURSOR_SECRET_FILE` (under DATA_DIR);
 * in memory otherwise (cursors then last as long as the process).
 */
export function cursorSecret(): Buffer {
  if (secret) return secret;
  const configured = process.env.SYNC_CURSOR_SECRET;
  if (configured) return (secret = Buffer.from(configured, "utf8"));
  const file = process.env.SYNC_CURSOR_SECRET_FILE;
  if (file) {
    if (!existsSync(file)) {
      mkdirSync(dirname(file), { recursive: true });
      writeFileSync(file, randomBytes(32).toString("base64url"), { mode: 0o600 });
    }
    return (secret = Buffer.from(readFileSync(file, "utf8").trim(), "utf8"));
  }
  return (secret = randomBytes(32));
}

const sign = (payload: string) => createHmac("sha256", cursorSecret()).update(payload).digest("base64url");

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

/** A fingerprint of everything that decides what the caller may see (scopes and permissions). */
export function accessFingerprint(principal: Principal): string {
  const material = JSON.stringify({
    role: principal.role,
    permissions: [...principal.permissions].sort(),
    location: principal.assignedLocationId,
    scopes: principal.scopes === null ? "all" : [...principal.scopes].sort(),
  });
  return createHash("sha256").update(material).digest("base64url").slice(0, 22);
}
