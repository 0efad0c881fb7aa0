import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import { PERMISSIONS, SCOPES, type Permission, type Principal } from "../auth/permissions.js";
import { parseSince, parseSyncQuery } from "../domain/sync/feed.js";
import { ApiError } from "../core/errors.js";
import { changeOf, compactChanges, onlyItemBookkeeping, type RecordChange } from "./changes.js";
import { ENTITY_ATTRIBUTE } from "./classify.js";
import { accessFingerprint, decodeCursor, encodeCursor, type CursorPayload } from "./cursor.js";

/**
 * Pure rules of the change feed (spec part 1, sections 2.7, 4.7, 6, 7; architecture sections 4
 * and 6): the `since` grammar, the parameter rules, signed cursors, the access fingerprint and
 * the mapping of stream images to compacted record changes.
 */

const DAY = 24 * 3600;
const NOW = Date.UTC(2026, 4, 15, 12, 0, 0) / 1000; // 2026-05-15T12:00:00Z, fixed "now" for parseSyncQuery

/** Runs `fn`, expects an ApiError and returns it. */
function apiErrorOf(fn: () => unknown): ApiError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(ApiError);
    return error as ApiError;
  }
  throw new Error("expected an ApiError, nothing was thrown");
}

function expectApiError(fn: () => unknown, statusCode: number, code: string, param?: string): ApiError {
  const error = apiErrorOf(fn);
  expect({ statusCode: error.statusCode, code: error.code, type: error.type }).toEqual({ statusCode, code, type: "invalid_request_error" });
  if (param !== undefined) expect(error.param).toBe(param);
  return error;
}

describe("parseSince", () => {
  const utc = (y: number, mo: number, d: number, h = 0, mi = 0, s = 0) => Date.UTC(y, mo - 1, d, h, mi, s) / 1000;

  it("reads ISO 8601 with Z", () => {
    expect(parseSince("2026-01-01T00:00:00Z")).toBe(utc(2026, 1, 1));
    expect(parseSince("2026-05-15T12:34:56Z")).toBe(utc(2026, 5, 15, 12, 34, 56));
  });

  it("reads ISO 8601 with an explicit offset, with or without the colon", () => {
    expect(parseSince("2026-01-01T02:00:00+02:00")).toBe(utc(2026, 1, 1));
    expect(parseSince("2026-01-01T00:00:00+00:00")).toBe(utc(2026, 1, 1));
    expect(parseSince("2026-01-01T00:00:00-00:00")).toBe(utc(2026, 1, 1));
    expect(parseSince("2025-12-31T19:00:00-0500")).toBe(utc(2026, 1, 1));
    expect(parseSince("2026-01-01T05:30:00+0530")).toBe(utc(2026, 1, 1));
    expect(parseSince("2026-01-01T00:00:00-05:00")).toBe(utc(2026, 1, 1, 5));
  });

  it("reads reduced precision (no seconds), the basic format and hour-only offsets, as ISO 8601 allows", () => {
    expect(parseSince("2026-01-01T10:00Z")).toBe(utc(2026, 1, 1, 10));
    expect(parseSince("2026-01-01T12:00+02:00")).toBe(utc(2026, 1, 1, 10));
    expect(parseSince("20260101T100000Z")).toBe(utc(2026, 1, 1, 10));
    expect(parseSince("20260101T1200+0200")).toBe(utc(2026, 1, 1, 10));
    expect(parseSince("2026-01-01T12:00:00+02")).toBe(utc(2026, 1, 1, 10));
    expect(parseSince("20260101T053000-05")).toBe(utc(2026, 1, 1, 10, 30));
  });

  it("accepts real calendar edge values", () => {
    expect(parseSince("2024-02-29T00:00:00Z")).toBe(utc(2024, 2, 29));
    expect(parseSince("2026-12-31T23:59:59Z")).toBe(utc(2026, 12, 31, 23, 59, 59));
    // The offset moves the instant across a day, month and year boundary.
    expect(parseSince("2026-12-31T23:30:00-01:00")).toBe(utc(2027, 1, 1, 0, 30));
  });

  it("reads epoch seconds of 1 to 10 digits as is (never rescaled)", () => {
    expect(parseSince("0")).toBe(0);
    expect(parseSince("7")).toBe(7);
    expect(parseSince("1700000000")).toBe(1_700_000_000);
    expect(parseSince("9999999999")).toBe(9_999_999_999);
    expect(parseSince("0001700000")).toBe(1_700_000);
  });

  it.each([
    ["fractional seconds", "2026-01-01T00:00:00.5Z"],
    ["milliseconds in ISO", "2026-01-01T00:00:00.000Z"],
    ["fractional seconds with an offset", "2026-01-01T00:00:00.123+02:00"],
    ["epoch milliseconds (13 digits)", "1700000000000"],
    ["11 digits", "17000000000"],
    ["scientific notation", "1.7e9"],
    ["scientific notation without a dot", "17e8"],
    ["a fractional epoch", "1700000000.5"],
    ["a negative epoch", "-1"],
    ["a negative epoch of ten digits", "-1700000000"],
    ["a signed positive epoch", "+1700000000"],
    ["no time zone", "2026-01-01T00:00:00"],
    ["a date only", "2026-01-01"],
    ["basic and extended mixed", "2026-01-01T000000Z"],
    ["a basic date without time", "20260101Z"],
    ["a three-digit offset", "2026-01-01T00:00:00+020"],
    ["a space instead of T", "2026-01-01 00:00:00Z"],
    ["February 30", "2026-02-30T00:00:00Z"],
    ["February 29 of a common year", "2025-02-29T00:00:00Z"],
    ["April 31", "2026-04-31T00:00:00Z"],
    ["month 13", "2026-13-01T00:00:00Z"],
    ["month 00", "2026-00-10T00:00:00Z"],
    ["day 00", "2026-01-00T00:00:00Z"],
    ["hour 24", "2026-01-01T24:00:00Z"],
    ["minute 60", "2026-01-01T00:60:00Z"],
    ["second 60", "2026-01-01T00:00:60Z"],
    ["an offset hour of 25", "2026-01-01T00:00:00+25:00"],
    ["an offset minute of 60", "2026-01-01T00:00:00+02:60"],
    ["a one-digit offset", "2026-01-01T00:00:00+2:00"],
    ["an unencoded + turned into a space", "2026-01-01T00:00:00 02:00"],
    ["words", "yesterday"],
    ["an empty value", ""],
    ["surrounding spaces", " 1700000000 "],
    ["hexadecimal", "0x6553f100"],
  ])("rejects %s (%j) with 400 invalid_query_parameter on since", (_label, value) => {
    expectApiError(() => parseSince(value), 400, "invalid_query_parameter", "since");
  });
});

describe("parseSyncQuery", () => {
  it("start=now with resources", () => {
    expect(parseSyncQuery({ start: "now", resources: "item" }, NOW)).toEqual({ mode: "start", resources: ["item"], limit: 100 });
  });

  it("since returns epoch seconds and the default limit 100", () => {
    expect(parseSyncQuery({ since: String(NOW - 60), resources: "item" }, NOW)).toEqual({ mode: "since", resources: ["item"], since: NOW - 60, limit: 100 });
    expect(parseSyncQuery({ since: "2026-05-15T13:00:00+01:00", resources: "invoice" }, NOW)).toEqual({
      mode: "since",
      resources: ["invoice"],
      since: NOW,
      limit: 100,
    });
  });

  it("refuses a resource name with spaces or an empty entry (malformed values are 400, not trimmed)", () => {
    for (const resources of ["item ", " item", "item, invoice", "item,", ",item", ""]) {
      expectApiError(() => parseSyncQuery({ start: "now", resources }, NOW), 400, "invalid_query_parameter", "resources");
    }
  });

  it("reads limit's digits as the number they spell, leading zeros too; a sign or a space is 400", () => {
    expect(parseSyncQuery({ start: "now", resources: "item", limit: "010" }, NOW)).toMatchObject({ limit: 10 });
    expect(parseSyncQuery({ start: "now", resources: "item", limit: "0500" }, NOW)).toMatchObject({ limit: 500 });
    for (const limit of ["+10", " 10", "10 ", "0", "0501", "1e2", "10.0"]) {
      expectApiError(() => parseSyncQuery({ start: "now", resources: "item", limit }, NOW), 400, "invalid_query_parameter", "limit");
    }
  });

  it("cursor needs no resources", () => {
    expect(parseSyncQuery({ cursor: "v1.abc.def", limit: "20" }, NOW)).toEqual({ mode: "cursor", cursor: "v1.abc.def", limit: 20 });
  });

  it("deduplicates resources and sorts them alphabetically", () => {
    const parsed = parseSyncQuery({ start: "now", resources: "sales_order,item,invoice,item,purchase_order,estimate,invoice" }, NOW);
    expect(parsed).toMatchObject({ resources: ["estimate", "invoice", "item", "purchase_order", "sales_order"] });
    expect(parseSyncQuery({ start: "now", resources: "item,invoice" }, NOW)).toMatchObject({ resources: ["invoice", "item"] });
  });

  describe("exactly one of start, since and cursor", () => {
    it("none is 400", () => {
      expectApiError(() => parseSyncQuery({}, NOW), 400, "invalid_query_parameter");
      expectApiError(() => parseSyncQuery({ resources: "item" }, NOW), 400, "invalid_query_parameter");
      expectApiError(() => parseSyncQuery({ limit: "10" }, NOW), 400, "invalid_query_parameter");
    });

    it.each([
      [{ start: "now", since: String(NOW), resources: "item" }, ["start", "since"]],
      [{ start: "now", cursor: "v1.a.b" }, ["start", "cursor"]],
      [{ since: String(NOW), cursor: "v1.a.b" }, ["since", "cursor"]],
      [{ start: "now", since: String(NOW), cursor: "v1.a.b", resources: "item" }, ["start", "since", "cursor"]],
    ])("%j is 400 naming one of the conflicting parameters", (query, names) => {
      const error = expectApiError(() => parseSyncQuery(query, NOW), 400, "invalid_query_parameter");
      expect(names).toContain(error.param);
    });
  });

  it("refuses unknown parameters, naming them", () => {
    expectApiError(() => parseSyncQuery({ start: "now", resources: "item", page: "2" }, NOW), 400, "invalid_query_parameter", "page");
    expectApiError(() => parseSyncQuery({ since: String(NOW), resources: "item", Since: "1" }, NOW), 400, "invalid_query_parameter", "Since");
    expectApiError(() => parseSyncQuery({ cursor: "v1.a.b", resource: "item" }, NOW), 400, "invalid_query_parameter", "resource");
  });

  it("refuses the v2 parameter modifiedSince, alone or with since", () => {
    expectApiError(() => parseSyncQuery({ modifiedSince: String(NOW - 60), resources: "item" }, NOW), 400, "invalid_query_parameter", "modifiedSince");
    expectApiError(
      () => parseSyncQuery({ since: String(NOW - 60), modifiedSince: String(NOW - 60), resources: "item" }, NOW),
      400,
      "invalid_query_parameter",
      "modifiedSince",
    );
  });

  it.each(["later", "NOW", "", "0", String(NOW)])("start=%j is 400 on start", (start) => {
    expectApiError(() => parseSyncQuery({ start, resources: "item" }, NOW), 400, "invalid_query_parameter", "start");
  });

  it("resources is required with start and since", () => {
    expectApiError(() => parseSyncQuery({ start: "now" }, NOW), 400, "invalid_query_parameter", "resources");
    expectApiError(() => parseSyncQuery({ since: String(NOW) }, NOW), 400, "invalid_query_parameter", "resources");
  });

  it("resources is refused with cursor", () => {
    expectApiError(() => parseSyncQuery({ cursor: "v1.a.b", resources: "item" }, NOW), 400, "invalid_query_parameter", "resources");
  });

  it.each(["widget", "item,widget", "items", "Item", "customer", "location", "", "item,", ",item", "item,,invoice"])(
    "resources=%j is 400 on resources",
    (resources) => {
      expectApiError(() => parseSyncQuery({ start: "now", resources }, NOW), 400, "invalid_query_parameter", "resources");
      expectApiError(() => parseSyncQuery({ since: String(NOW), resources }, NOW), 400, "invalid_query_parameter", "resources");
    },
  );

  it("limit 1 to 500 is accepted", () => {
    for (const limit of ["1", "2", "100", "499", "500"]) {
      expect(parseSyncQuery({ start: "now", resources: "item", limit }, NOW)).toMatchObject({ limit: Number(limit) });
      expect(parseSyncQuery({ cursor: "v1.a.b", limit }, NOW)).toMatchObject({ limit: Number(limit) });
    }
  });

  it.each(["0", "501", "1000", "abc", "1.5", "-1", "", "1e2", " 10", "10 ", "+5", "5000"])("limit=%j is 400 on limit (never capped)", (limit) => {
    expectApiError(() => parseSyncQuery({ start: "now", resources: "item", limit }, NOW), 400, "invalid_query_parameter", "limit");
    expectApiError(() => parseSyncQuery({ since: String(NOW), resources: "item", limit }, NOW), 400, "invalid_query_parameter", "limit");
    expectApiError(() => parseSyncQuery({ cursor: "v1.a.b", limit }, NOW), 400, "invalid_query_parameter", "limit");
  });

  it("since now is accepted; since in the future is 400 on since", () => {
    expect(parseSyncQuery({ since: String(NOW), resources: "item" }, NOW)).toMatchObject({ since: NOW });
    expectApiError(() => parseSyncQuery({ since: String(NOW + 1), resources: "item" }, NOW), 400, "invalid_query_parameter", "since");
    expectApiError(() => parseSyncQuery({ since: "2026-05-15T12:00:01Z", resources: "item" }, NOW), 400, "invalid_query_parameter", "since");
    expectApiError(() => parseSyncQuery({ since: "9999999999", resources: "item" }, NOW), 400, "invalid_query_parameter", "since");
  });

  it("since exactly 90 days old is accepted; older is 409 sync_full_refresh_required", () => {
    expect(parseSyncQuery({ since: String(NOW - 90 * DAY), resources: "item" }, NOW)).toMatchObject({ since: NOW - 90 * DAY });
    expectApiError(() => parseSyncQuery({ since: String(NOW - 90 * DAY - 1), resources: "item" }, NOW), 409, "sync_full_refresh_required", "since");
    expectApiError(() => parseSyncQuery({ since: String(NOW - 91 * DAY), resources: "item" }, NOW), 409, "sync_full_refresh_required", "since");
    expectApiError(() => parseSyncQuery({ since: "0", resources: "item" }, NOW), 409, "sync_full_refresh_required", "since");
    expectApiError(() => parseSyncQuery({ since: "2026-01-01T00:00:00Z", resources: "item" }, NOW), 409, "sync_full_refresh_required", "since");
  });

  it("a malformed since is 400 (not 409), even when it would be old", () => {
    expectApiError(() => parseSyncQuery({ since: "1700000000000", resources: "item" }, NOW), 400, "invalid_query_parameter", "since");
    expectApiError(() => parseSyncQuery({ since: "1.7e9", resources: "item" }, NOW), 400, "invalid_query_parameter", "since");
  });

  it("an empty cursor is 400 sync_cursor_invalid", () => {
    expectApiError(() => parseSyncQuery({ cursor: "" }, NOW), 400, "sync_cursor_invalid", "cursor");
  });
});

describe("cursors", () => {
  const payload: CursorPayload = {
    a: "acc-1",
    u: "user-1",
    r: ["invoice", "item"],
    f: "fingerprint",
    p: 42,
    t: 1_780_000_000,
  };
  const secret = () => process.env.SYNC_CURSOR_SECRET ?? "";
  const signWith = (key: string, body: string) => createHmac("sha256", key).update(body).digest("base64url");
  const forge = (value: unknown, key = secret()) => {
    const body = Buffer.from(JSON.stringify(value)).toString("base64url");
    return `v1.${body}.${signWith(key, body)}`;
  };

  it("the test secret is the one vitest sets", () => {
    expect(secret()).toBe("test-cursor-secret");
  });

  it("round-trips a payload; the cursor is opaque v1.<payload>.<signature>", () => {
    const cursor = encodeCursor(payload);
    expect(cursor).toMatch(/^v1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
    expect(decodeCursor(cursor)).toEqual(payload);
    expect(decodeCursor(encodeCursor({ ...payload, p: 0 }))).toEqual({ ...payload, p: 0 });
  });

  it("is signed with SYNC_CURSOR_SECRET (HMAC-SHA256)", () => {
    expect(decodeCursor(forge(payload))).toEqual(payload);
    expect(encodeCursor(payload)).toBe(forge(payload));
  });

  it("a tampered payload is refused", () => {
    const [version, body, signature] = encodeCursor(payload).split(".") as [string, string, string];
    const otherBody = Buffer.from(JSON.stringify({ ...payload, a: "acc-2" })).toString("base64url");
    expect(decodeCursor(`${version}.${otherBody}.${signature}`)).toBeUndefined();
    const otherPosition = Buffer.from(JSON.stringify({ ...payload, p: 0 })).toString("base64url");
    expect(decodeCursor(`${version}.${otherPosition}.${signature}`)).toBeUndefined();
    const flipped = body.slice(0, 5) + (body[5] === "A" ? "B" : "A") + body.slice(6);
    expect(decodeCursor(`${version}.${flipped}.${signature}`)).toBeUndefined();
  });

  it("a tampered or missing signature is refused", () => {
    const [version, body, signature] = encodeCursor(payload).split(".") as [string, string, string];
    const flipped = (signature[0] === "A" ? "B" : "A") + signature.slice(1);
    expect(decodeCursor(`${version}.${body}.${flipped}`)).toBeUndefined();
    expect(decodeCursor(`${version}.${body}.${signature.slice(0, -1)}`)).toBeUndefined();
    expect(decodeCursor(`${version}.${body}.${signature}x`)).toBeUndefined();
    expect(decodeCursor(`${version}.${body}.`)).toBeUndefined();
    expect(decodeCursor(`${version}.${body}`)).toBeUndefined();
  });

  it("a cursor signed with another secret is refused", () => {
    expect(decodeCursor(forge(payload, "another-secret"))).toBeUndefined();
  });

  it("a wrong version prefix or shape is refused", () => {
    const [, body, signature] = encodeCursor(payload).split(".") as [string, string, string];
    expect(decodeCursor(`v2.${body}.${signature}`)).toBeUndefined();
    expect(decodeCursor(`V1.${body}.${signature}`)).toBeUndefined();
    expect(decodeCursor(`.${body}.${signature}`)).toBeUndefined();
    expect(decodeCursor(`${body}.${signature}`)).toBeUndefined();
    expect(decodeCursor(`v1.${body}.${signature}.extra`)).toBeUndefined();
    expect(decodeCursor("")).toBeUndefined();
    expect(decodeCursor("garbage")).toBeUndefined();
    expect(decodeCursor("v1..")).toBeUndefined();
  });

  it("a correctly signed payload of the wrong shape is refused", () => {
    expect(decodeCursor(forge({ ...payload, p: -1 }))).toBeUndefined();
    expect(decodeCursor(forge({ ...payload, p: 1.5 }))).toBeUndefined();
    expect(decodeCursor(forge({ ...payload, p: "42" }))).toBeUndefined();
    expect(decodeCursor(forge({ ...payload, t: "now" }))).toBeUndefined();
    expect(decodeCursor(forge({ ...payload, r: "item" }))).toBeUndefined();
    const { a: _a, ...withoutAccount } = payload;
    expect(decodeCursor(forge(withoutAccount))).toBeUndefined();
    const { f: _f, ...withoutFingerprint } = payload;
    expect(decodeCursor(forge(withoutFingerprint))).toBeUndefined();
    expect(decodeCursor(forge(null))).toBeUndefined();
    expect(decodeCursor(forge("text"))).toBeUndefined();
    const notJson = Buffer.from("{not json").toString("base64url");
    expect(decodeCursor(`v1.${notJson}.${signWith(secret(), notJson)}`)).toBeUndefined();
  });
});

describe("accessFingerprint", () => {
  const principal = (overrides: Partial<Principal> = {}): Principal => ({
    accountId: "acc-1",
    userId: "user-1",
    role: "staff",
    permissions: new Set<Permission>(["inventory.list", "records.view_all", "invoices.list"]),
    assignedLocationId: null,
    timeZone: null,
    keyId: "key-1",
    keyHash: "hash-1",
    scopes: new Set(["items:read", "invoices:read"]),
    ...overrides,
  });
  const base = accessFingerprint(principal());

  it("is stable for the same access", () => {
    expect(accessFingerprint(principal())).toBe(base);
    expect(base.length).toBeGreaterThan(0);
  });

  it("does not depend on the order of permissions or scopes", () => {
    expect(accessFingerprint(principal({ permissions: new Set<Permission>(["invoices.list", "inventory.list", "records.view_all"]) }))).toBe(base);
    expect(accessFingerprint(principal({ scopes: new Set(["invoices:read", "items:read"]) }))).toBe(base);
  });

  it("does not depend on the key, time zone or ids (they do not decide what is visible)", () => {
    expect(accessFingerprint(principal({ keyId: "key-2", keyHash: "hash-2", timeZone: "Europe/Paris" }))).toBe(base);
  });

  it("changes when a permission is added or removed (unit-cost visibility included)", () => {
    expect(accessFingerprint(principal({ permissions: new Set<Permission>(["inventory.list", "records.view_all", "invoices.list", "costs.view"]) }))).not.toBe(
      base,
    );
    expect(accessFingerprint(principal({ permissions: new Set<Permission>(["inventory.list", "records.view_all"]) }))).not.toBe(base);
    expect(accessFingerprint(principal({ permissions: new Set<Permission>() }))).not.toBe(base);
  });

  it("changes with the role", () => {
    expect(accessFingerprint(principal({ role: "owner" }))).not.toBe(base);
  });

  it("follows the effective access, not the stored lists: an owner's stored permissions, a key listing every scope", () => {
    const owner = accessFingerprint(principal({ role: "owner", scopes: null }));
    expect(accessFingerprint(principal({ role: "owner", scopes: null, permissions: new Set<Permission>(["inventory.list"]) }))).toBe(owner);
    expect(accessFingerprint(principal({ role: "owner", scopes: null, permissions: new Set<Permission>(PERMISSIONS) }))).toBe(owner);
    expect(accessFingerprint(principal({ role: "owner", scopes: new Set(SCOPES) }))).toBe(owner);
    expect(accessFingerprint(principal({ role: "staff", scopes: null, permissions: new Set<Permission>(PERMISSIONS) }))).toBe(owner);
    // A stored location does not restrict an owner.
    expect(accessFingerprint(principal({ role: "owner", scopes: null, assignedLocationId: "loc-1" }))).toBe(owner);
  });

  it("changes with the location restriction", () => {
    const restricted = accessFingerprint(principal({ assignedLocationId: "loc-1" }));
    expect(restricted).not.toBe(base);
    expect(accessFingerprint(principal({ assignedLocationId: "loc-2" }))).not.toBe(restricted);
  });

  it("changes with the key's scopes (all vs. restricted, and between restricted sets)", () => {
    expect(accessFingerprint(principal({ scopes: null }))).not.toBe(base);
    expect(accessFingerprint(principal({ scopes: new Set(["items:read"]) }))).not.toBe(base);
    expect(accessFingerprint(principal({ scopes: new Set(["items:read", "invoices:read", "items:write"]) }))).not.toBe(base);
    expect(accessFingerprint(principal({ scopes: new Set() }))).not.toBe(accessFingerprint(principal({ scopes: null })));
  });
});

describe("changeOf", () => {
  const image = (entity: string, fields: Record<string, unknown> = {}) => ({ [ENTITY_ATTRIBUTE]: entity, accountId: "acc-1", itemId: "item-1", ...fields });

  it("an item insert or modify is an upsert of the item", () => {
    const expected = { accountId: "acc-1", resource: "item", recordId: "item-1", operation: "upsert" };
    expect(changeOf("INSERT", image("item"))).toEqual(expected);
    expect(changeOf("MODIFY", image("item"))).toEqual(expected);
  });

  it("an item REMOVE is a delete of the item", () => {
    expect(changeOf("REMOVE", image("item"))).toEqual({ accountId: "acc-1", resource: "item", recordId: "item-1", operation: "delete" });
  });

  it.each(["stockrow", "itemvariation", "stockhistory"])("a %s change marks its parent item with upsert, even when removed", (entity) => {
    const child = image(entity, { itemId: "parent-9", variationId: "var-1", locationId: "loc-1" });
    const expected = { accountId: "acc-1", resource: "item", recordId: "parent-9", operation: "upsert" };
    expect(changeOf("INSERT", child)).toEqual(expected);
    expect(changeOf("MODIFY", child)).toEqual(expected);
    expect(changeOf("REMOVE", child)).toEqual(expected);
  });

  it.each([
    "party",
    "contact",
    "location",
    "zone",
    "itemcategory",
    "customfield",
    "unit",
    "account",
    "user",
    "apikey",
    "idempotency",
    "counters",
    "stockjournal",
    "synchead",
    "syncmarker",
    "syncpointer",
    "synccheckpoint",
    "kit",
    "kitlink",
    "kitbuild",
    "something-new",
  ])("a %s change marks nothing", (entity) => {
    expect(changeOf("INSERT", image(entity))).toBeUndefined();
    expect(changeOf("MODIFY", image(entity))).toBeUndefined();
    expect(changeOf("REMOVE", image(entity))).toBeUndefined();
  });

  it("an image without entity, account or parent id marks nothing", () => {
    expect(changeOf("INSERT", undefined)).toBeUndefined();
    expect(changeOf("INSERT", {})).toBeUndefined();
    expect(changeOf("INSERT", { accountId: "acc-1", itemId: "item-1" })).toBeUndefined();
    expect(changeOf("INSERT", { [ENTITY_ATTRIBUTE]: "item", itemId: "item-1" })).toBeUndefined();
    expect(changeOf("INSERT", { [ENTITY_ATTRIBUTE]: "item", accountId: "acc-1" })).toBeUndefined();
    expect(changeOf("INSERT", { [ENTITY_ATTRIBUTE]: "stockrow", accountId: "acc-1" })).toBeUndefined();
    expect(changeOf("INSERT", { [ENTITY_ATTRIBUTE]: 7, accountId: "acc-1", itemId: "item-1" })).toBeUndefined();
  });
});

describe("compactChanges", () => {
  const change = (recordId: string, operation: "upsert" | "delete", accountId = "acc-1", resource: RecordChange["resource"] = "item"): RecordChange => ({
    accountId,
    resource,
    recordId,
    operation,
  });

  it("keeps one change per record, in the order of each record's last change", () => {
    expect(compactChanges([change("a", "upsert"), change("b", "upsert"), change("a", "upsert"), change("c", "upsert")])).toEqual([
      change("b", "upsert"),
      change("a", "upsert"),
      change("c", "upsert"),
    ]);
  });

  it("the last change of a record wins (an upsert then a delete is a delete)", () => {
    expect(compactChanges([change("a", "upsert"), change("a", "upsert"), change("a", "delete")])).toEqual([change("a", "delete")]);
  });

  it("a delete is final within a batch (a later upsert of the same record is dropped)", () => {
    expect(compactChanges([change("a", "delete"), change("a", "upsert")])).toEqual([change("a", "delete")]);
    expect(compactChanges([change("a", "upsert"), change("a", "delete"), change("b", "upsert"), change("a", "upsert")])).toEqual([
      change("a", "delete"),
      change("b", "upsert"),
    ]);
  });

  it("keeps records of different accounts or resources apart", () => {
    const input = [change("a", "upsert", "acc-1"), change("a", "delete", "acc-2"), change("a", "upsert", "acc-1", "invoice")];
    expect(compactChanges(input)).toEqual(input);
  });

  it("an empty batch stays empty", () => {
    expect(compactChanges([])).toEqual([]);
  });

  it("an item REMOVE with its children's images yields one delete, whatever the order", () => {
    const item = { [ENTITY_ATTRIBUTE]: "item", accountId: "acc-1", itemId: "item-1" };
    const variation = { [ENTITY_ATTRIBUTE]: "itemvariation", accountId: "acc-1", itemId: "item-1" };
    const childrenFirst = [changeOf("REMOVE", variation)!, changeOf("REMOVE", item)!];
    const itemFirst = [changeOf("REMOVE", item)!, changeOf("REMOVE", variation)!];
    expect(compactChanges(childrenFirst)).toEqual([change("item-1", "delete")]);
    expect(compactChanges(itemFirst)).toEqual([change("item-1", "delete")]);
  });
});

describe("onlyItemBookkeeping", () => {
  const item = { [ENTITY_ATTRIBUTE]: "item", accountId: "a", itemId: "i", name: "Bolt", documentCount: 0, stock: { l1: { onHand: 2 } } };
  it("is true for an item change of only documentCount / referenceTick (documents referencing it): no change marker", () => {
    expect(onlyItemBookkeeping(item, { ...item, documentCount: 1 })).toBe(true);
    expect(onlyItemBookkeeping(item, { ...item, referenceTick: 1 })).toBe(true);
  });
  it("is false for any visible change, a creation, a deletion, or another entity", () => {
    expect(onlyItemBookkeeping(item, { ...item, documentCount: 1, name: "Nut" })).toBe(false);
    expect(onlyItemBookkeeping(item, { ...item, stock: { l1: { onHand: 3 } } })).toBe(false);
    expect(onlyItemBookkeeping(undefined, item)).toBe(false);
    expect(onlyItemBookkeeping(item, undefined)).toBe(false);
    const row = { [ENTITY_ATTRIBUTE]: "stockrow", accountId: "a", itemId: "i" };
    expect(onlyItemBookkeeping(row, { ...row })).toBe(false);
  });
});
