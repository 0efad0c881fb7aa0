import type { Principal } from "../../auth/permissions.js";
import { RETENTION_DAYS, firstSequenceSince, queryMarkers, readHead } from "../../db/sync.js";
import { ApiError, type ErrorCode } from "../../core/errors.js";
import { SYNC_RESOURCES, type SyncResource } from "../../sync/classify.js";
import { accessFingerprint, cursorSecret, decodeCursor, encodeCursor } from "../../sync/cursor.js";
import { requireSyncAccess } from "./access.js";

/** Incremental sync: spec part 1, sections 2.7, 4.7, 6 and 7; design in docs/sync.md. */

const RETENTION_SECONDS = RETENTION_DAYS * 24 * 3600;
const ALLOWED = new Set(["start", "since", "cursor", "resources", "limit"]);

const fail = (status: number, code: ErrorCode, message: string, param?: string) =>
  new ApiError(status, "invalid_request_error", code, message, param ? { param } : {});
const badParameter = (param: string, message: string) => fail(400, "invalid_query_parameter", message, param);

export type SyncRequest =
  | { mode: "start"; resources: SyncResource[]; limit: number }
  | { mode: "since"; resources: SyncResource[]; since: number; limit: number }
  | { mode: "cursor"; cursor: string; limit: number };

/**
 * ISO 8601 date and time with an explicit zone, in the extended (`2026-11-28T10:00:00+02:00`) or
 * basic (`20261128T100000+0200`) format; seconds may be left out (reduced precision, `T10:00Z`),
 * an offset may give hours only (`+02`). Fractions of a second are refused (spec part 1, 4.7).
 */
const ISO_EXTENDED = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2}))?(Z|[+-]\d{2}(?::?\d{2})?)$/;
const ISO_BASIC = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})?(Z|[+-]\d{2}(?:\d{2})?)$/;

/** Epoch seconds of a `since` value, or a 400 (fractions, milliseconds, exponents, no zone...). */
export function parseSince(value: string): number {
  if (/^\d{1,10}$/.test(value)) return Number(value);
  const match = ISO_EXTENDED.exec(value) ?? ISO_BASIC.exec(value);
  if (!match) {
    throw badParameter("since", "since must be ISO 8601 with an explicit time zone (no fractional seconds) or epoch seconds (at most 10 digits).");
  }
  const zone = match[7]!.replace(":", "");
  const offset = zone === "Z" ? "Z" : `${zone.slice(0, 3)}:${zone.length > 3 ? zone.slice(3) : "00"}`;
  const normalized = `${match[1]}-${match[2]}-${match[3]}T${match[4]}:${match[5]}:${match[6] ?? "00"}${offset}`;
  const time = Date.parse(normalized);
  const [year, month, day, hour, minute, second] = [...match.slice(1, 6), match[6] ?? "0"].map(Number) as [number, number, number, number, number, number];
  const calendar = new Date(Date.UTC(year, month - 1, day));
  const valid = !Number.isNaN(time) && calendar.getUTCMonth() === month - 1 && calendar.getUTCDate() === day && hour < 24 && minute < 60 && second < 60;
  if (!valid) throw badParameter("since", "since is not a real date and time.");
  return Math.floor(time / 1000);
}

function parseResources(value: string | undefined): SyncResource[] {
  if (value === undefined) throw badParameter("resources", "resources is required with start or since.");
  // Names exactly as listed: a space or an empty entry is a malformed value (400), not trimmed.
  const names = value.split(",");
  if (names.some((name) => !(SYNC_RESOURCES as readonly string[]).includes(name))) {
    throw badParameter("resources", `resources takes a comma-separated list of ${SYNC_RESOURCES.join(", ")}.`);
  }
  return [...new Set(names as SyncResource[])].sort();
}

/** Checks every parameter rule of section 4.7 (400 `invalid_query_parameter` otherwise). */
export function parseSyncQuery(query: Record<string, unknown>, nowSeconds: number): SyncRequest {
  for (const name of Object.keys(query)) {
    if (name === "modifiedSince") throw badParameter(name, "modifiedSince is not accepted: use since (epoch seconds or ISO 8601).");
    if (!ALLOWED.has(name)) throw badParameter(name, `Unknown parameter ${name}.`);
  }
  const value = (name: string) => (query[name] === undefined ? undefined : String(query[name]));
  const given = ["start", "since", "cursor"].filter((name) => value(name) !== undefined);
  if (given.length !== 1) {
    throw badParameter(given[1] ?? "start", "Send exactly one of start, since and cursor.");
  }
  let limit = 100;
  const rawLimit = value("limit");
  if (rawLimit !== undefined) {
    // Digits only (no sign, no spaces); leading zeros read as the number they spell.
    if (!/^\d{1,10}$/.test(rawLimit) || Number(rawLimit) < 1 || Number(rawLimit) > 500) throw badParameter("limit", "limit must be an integer from 1 to 500.");
    limit = Number(rawLimit);
  }
  if (given[0] === "cursor") {
    if (value("resources") !== undefined) throw badParameter("resources", "resources is kept inside the cursor: omit it with cursor.");
    const cursor = value("cursor")!;
    if (cursor === "") throw fail(400, "sync_cursor_invalid", "The cursor is malformed.", "cursor");
    return { mode: "cursor", cursor, limit };
  }
  const resources = parseResources(value("resources"));
  if (given[0] === "start") {
    if (value("start") !== "now") throw badParameter("start", "start accepts only `now`.");
    return { mode: "start", resources, limit };
  }
  const since = parseSince(value("since")!);
  if (since > nowSeconds) throw badParameter("since", "since is in the future.");
  if (since < nowSeconds - RETENTION_SECONDS) {
    throw fail(409, "sync_full_refresh_required", `since is older than the retained history (${RETENTION_DAYS} days): rebuild with start=now.`, "since");
  }
  return { mode: "since", resources, since, limit };
}

export interface SyncStartResponse {
  object: "sync_start";
  resources: SyncResource[];
  retention_days: number;
  cursor: string;
}

export interface SyncPageResponse {
  object: "sync_page";
  resources: SyncResource[];
  changes: { resource: SyncResource; id: string; operation: "upsert" | "delete" }[];
  has_more: boolean;
  next_cursor: string;
}

/**
 * `GET /sync`. A page reads the head (strongly consistent) and then ONE consistent Query of the
 * markers in (position, head]: every marker up to the head was committed with it, so none can
 * appear later below it (docs/sync.md).
 */
/**
 * A cursor whose position the feed no longer has: the table was restored from a backup to a
 * point before the position (the restore noted the lost sequences on the head,
 * lib/db/sync-restore.ts), or the position is past the head (a restore not carried forward).
 * The client's copy holds changes the table lost: it must rebuild.
 */
function refuseLostPosition(position: number, head: { seq: number; restoreGaps: readonly { after: number; upTo: number }[] }): void {
  if (position > head.seq || head.restoreGaps.some((gap) => position > gap.after && position < gap.upTo)) {
    throw fail(
      409,
      "sync_cursor_expired",
      "The feed was restored from a backup to a point before this cursor's position, so your copy holds changes that no longer exist: rebuild with start=now.",
      "cursor",
    );
  }
}

export async function syncChanges(principal: Principal, query: Record<string, unknown>): Promise<SyncStartResponse | SyncPageResponse> {
  const nowSeconds = Math.floor(Date.now() / 1000);
  const request = parseSyncQuery(query, nowSeconds);
  await cursorSecret(); // deployed, read from Secrets Manager once per container
  const fingerprint = accessFingerprint(principal);
  /**
   * `t` is the time of the position: for a cursor that stopped inside the feed, the time of
   * the last marker examined (the unread markers after it are at least that recent, and expire
   * 90 days after their own time); for a cursor caught up with the head, now.
   */
  const cursorFor = (resources: SyncResource[], position: number, positionTime = nowSeconds) =>
    encodeCursor({ a: principal.accountId, u: principal.userId, r: resources, f: fingerprint, p: position, t: positionTime });

  let resources: SyncResource[];
  let position: number;
  if (request.mode === "cursor") {
    const payload = decodeCursor(request.cursor);
    if (!payload || payload.r.some((r) => !(SYNC_RESOURCES as readonly string[]).includes(r))) {
      throw fail(400, "sync_cursor_invalid", "The cursor is malformed, tampered with or not supported.", "cursor");
    }
    if (payload.a !== principal.accountId || payload.u !== principal.userId) {
      throw fail(403, "sync_cursor_owner_mismatch", "The cursor belongs to another account or user.", "cursor");
    }
    // Any change of the effective permissions or scopes, even one that takes syncing these
    // resources away, is 409 for an old cursor (architecture section 4, readings of the
    // contract); the rebuild's start=now then says what is missing (403).
    if (payload.f !== fingerprint) {
      throw fail(
        409,
        "sync_scope_changed",
        "Your permissions or the key's scopes changed since this cursor was issued: rebuild your copy with start=now.",
        "cursor",
      );
    }
    if (payload.t < nowSeconds - RETENTION_SECONDS) {
      throw fail(
        409,
        "sync_cursor_expired",
        `The cursor's position is older than the retained history (${RETENTION_DAYS} days): rebuild with start=now.`,
        "cursor",
      );
    }
    resources = payload.r as SyncResource[];
    requireSyncAccess(principal, resources);
    position = payload.p;
  } else {
    resources = request.resources;
    requireSyncAccess(principal, resources);
    const head = await readHead(principal.accountId);
    if (request.mode === "start") {
      return { object: "sync_start", resources, retention_days: RETENTION_DAYS, cursor: cursorFor(resources, head.seq) };
    }
    const first = await firstSequenceSince(principal.accountId, request.since);
    position = first === undefined ? head.seq : first - 1;
  }

  const head = await readHead(principal.accountId);
  if (request.mode === "cursor") refuseLostPosition(position, head);
  const markers = await queryMarkers(principal.accountId, position, head.seq, request.limit);
  const full = markers.length === request.limit;
  const last = markers[markers.length - 1];
  const next = full && last ? last.seq : Math.max(position, head.seq);
  const selected = new Set<string>(resources);
  return {
    object: "sync_page",
    resources,
    changes: markers.filter((m) => selected.has(m.resource)).map((m) => ({ resource: m.resource as SyncResource, id: m.recordId, operation: m.operation })),
    has_more: full && next < head.seq,
    next_cursor: cursorFor(resources, next, full && last ? Math.min(nowSeconds, Math.floor(last.at / 1000)) : nowSeconds),
  };
}
