import { createHash, createHmac, timingSafeEqual } from "node:crypto";
import { canonicalJson } from "../../core/idempotency.js";
import { cursorSecret } from "../../sync/cursor.js";

/**
 * Task list and reminder inbox cursors: opaque, HMAC-SHA256 signed the way sync cursors are
 * (lib/sync/cursor.ts, same secret), with a key derived for tasks so that no sync cursor can
 * ever pass as a task cursor or the reverse. A cursor is bound to the list it continues (`k`),
 * the account, the user and a fingerprint of the request's filters; it carries the position
 * (the sort key of the last entry served). `tc1.<payload>.<signature>`.
 */
export type TaskCursorKind = "tasks" | "inbox";

export interface TaskCursorPayload {
  /** which list */
  k: TaskCursorKind;
  /** account id */
  a: string;
  /** user id */
  u: string;
  /** filters fingerprint */
  f: string;
  /** position: sort key of the last entry served */
  p: string;
}

const PREFIX = "tc1";

/** The signing key: HMAC(cursor secret, purpose), so task and sync cursors never verify as each other. */
export async function taskCursorKey(): Promise<Buffer> {
  return createHmac("sha256", await cursorSecret())
    .update("task-cursor-v1")
    .digest();
}

const signature = (key: Buffer, body: string) => createHmac("sha256", key).update(body).digest("base64url");

export function encodeTaskCursor(payload: TaskCursorPayload, key: Buffer): string {
  const body = Buffer.from(JSON.stringify(payload)).toString("base64url");
  return `${PREFIX}.${body}.${signature(key, body)}`;
}

/** The payload of a cursor whose signature verifies, or undefined (malformed or tampered). */
export function decodeTaskCursor(cursor: string, key: Buffer): TaskCursorPayload | undefined {
  const parts = cursor.split(".");
  if (parts.length !== 3 || parts[0] !== PREFIX || !parts[1] || !parts[2]) return undefined;
  const expected = Buffer.from(signature(key, parts[1]));
  const given = Buffer.from(parts[2]);
  if (expected.length !== given.length || !timingSafeEqual(expected, given)) return undefined;
  try {
    const payload = JSON.parse(Buffer.from(parts[1], "base64url").toString("utf8")) as TaskCursorPayload;
    const valid =
      (payload.k === "tasks" || payload.k === "inbox") &&
      typeof payload.a === "string" &&
      typeof payload.u === "string" &&
      typeof payload.f === "string" &&
      typeof payload.p === "string" &&
      payload.p.length > 0 &&
      payload.p.length <= 200;
    return valid ? payload : undefined;
  } catch {
    return undefined;
  }
}

/** A fingerprint of the filters a cursor continues (canonical JSON, so key order never matters). */
export function filterFingerprint(filters: Record<string, unknown>): string {
  return createHash("sha256").update(canonicalJson(filters)).digest("base64url").slice(0, 22);
}

/**
 * The position a cursor may continue from, or undefined when it does not belong to this
 * request (tampered, another list, account, user or other filters).
 */
export function cursorPosition(cursor: string, key: Buffer, expected: Omit<TaskCursorPayload, "p">): string | undefined {
  const payload = decodeTaskCursor(cursor, key);
  if (!payload) return undefined;
  if (payload.k !== expected.k || payload.a !== expected.a || payload.u !== expected.u || payload.f !== expected.f) return undefined;
  return payload.p;
}
