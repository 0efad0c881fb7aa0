import { describe, expect, it } from "vitest";
import type { Principal } from "../../../auth/permissions.js";
import type { DocumentItem } from "../../../db/service.js";
import {
  UNPRICED_AMOUNTS,
  addDays,
  conversionSource,
  editBlockReason,
  effectiveStatus,
  expiryInstantAt,
  expiryInstantOf,
  NEVER_EXPIRES,
  presentEstimate,
  priceEstimate,
  statusFilter,
  type EstimateLine,
  unplacedLinesConflict,
} from "./model.js";
import { errors } from "../../../core/errors.js";
import { dateProblems } from "./problems.js";

const principal = (permissions: string[] = [], role: "owner" | "staff" = "staff"): Principal => ({
  accountId: "a",
  userId: "u",
  role,
  permissions: new Set(permissions) as Principal["permissions"],
  assignedLocationId: null,
  timeZone: null,
  keyId: "k",
  keyHash: "h",
  scopes: null,
});

const line = (overrides: Partial<EstimateLine> = {}): EstimateLine => ({
  id: "l1",
  lineType: "service",
  name: "Work",
  quantity: 1,
  unitPrice: "100.0000",
  unitCost: "40.0000",
  discountPercent: "0.000",
  taxRate: "0.000",
  tax2Rate: "0.000",
  variationValues: {},
  ...UNPRICED_AMOUNTS,
  ...overrides,
});

const header = (overrides: Partial<DocumentItem> = {}): DocumentItem =>
  ({
    accountId: "a",
    documentId: "d",
    kind: "estimate",
    number: 7,
    numberKey: "0000000007",
    revision: "est_1",
    status: "open",
    statusId: 5,
    assignedUserId: "u",
    partyId: "c",
    partyName: "Acme",
    partyKind: "customer",
    issueDate: "2026-03-01",
    expiryDate: "2026-03-31",
    expiryInstant: "2026-04-01T00:00:00.000Z",
    discountPercent: "0.000",
    subtotal: "100.0000",
    preDiscountTotal: "100.0000",
    discountTotal: "0.0000",
    shippingFee: "0.0000",
    shippingCost: "2.0000",
    tax: "0.0000",
    tax2: "0.0000",
    total: "100.0000",
    amountPaidMinor: 0,
    paymentCount: 0,
    pageCount: 1,
    lineCount: 1,
    searchText: "acme",
    createdAt: "2026-03-01T10:00:00.000Z",
    updatedAt: "2026-03-01T10:00:00.000Z",
    ...overrides,
  }) as DocumentItem;

describe("offline: estimate expiry and statuses", () => {
  it("expires an Open estimate at the start of the day after its expiry date in the account's time zone", () => {
    expect(expiryInstantOf("2026-03-31", "UTC")).toBe("2026-04-01T00:00:00.000Z");
    expect(expiryInstantOf("2026-03-31", "Pacific/Kiritimati")).toBe("2026-03-31T10:00:00.000Z");
    expect(expiryInstantOf("2026-03-31", "America/New_York")).toBe("2026-04-01T04:00:00.000Z");
    expect(expiryInstantOf("2026-03-31", "Not/AZone")).toBe("2026-04-01T00:00:00.000Z");
    const open = header();
    expect(effectiveStatus(open, "2026-03-31T23:59:59.999Z")).toBe("open");
    expect(effectiveStatus(open, "2026-04-01T00:00:00.000Z")).toBe("expired");
    expect(effectiveStatus(header({ status: "declined" }), "2030-01-01T00:00:00.000Z")).toBe("declined");
    expect(effectiveStatus(header({ status: "closed" }), "2030-01-01T00:00:00.000Z")).toBe("closed");
  });

  it("an estimate written after its expiry instant (recorded late) never expires; one written before it expires then", () => {
    expect(expiryInstantAt("2026-03-31", "UTC", "2026-03-31T23:59:59.999Z")).toBe("2026-04-01T00:00:00.000Z");
    expect(expiryInstantAt("2026-03-31", "UTC", "2026-04-01T00:00:00.000Z")).toBe(NEVER_EXPIRES);
    expect(expiryInstantAt("2024-02-14", "Pacific/Kiritimati", "2026-11-27T12:00:00.000Z")).toBe(NEVER_EXPIRES);
    expect(effectiveStatus(header({ expiryInstant: NEVER_EXPIRES }), "9999-01-01T00:00:00.000Z")).toBe("open");
    // Later writes keep a never-expiring estimate so while its expiry date stays.
    const late = { expiryDate: "2024-02-14", expiryInstant: NEVER_EXPIRES };
    expect(expiryInstantAt("2024-02-14", "UTC", "2026-11-27T12:00:00.000Z", late)).toBe(NEVER_EXPIRES);
    // An update in a zone where the expiry date has passed (the account's zone changed) expires it from that write.
    const current = { expiryDate: "2026-11-27", expiryInstant: "2026-11-28T11:00:00.000Z" };
    expect(expiryInstantAt("2026-11-27", "Pacific/Kiritimati", "2026-11-28T01:30:00.000Z", current)).toBe("2026-11-27T10:00:00.000Z");
  });

  it("the last date never expires, and midnight that happens twice starts the day at its first occurrence", () => {
    expect(expiryInstantOf("9999-12-31", "UTC")).toBe(NEVER_EXPIRES);
    expect(expiryInstantOf("9999-12-30", "UTC")).toBe("9999-12-31T00:00:00.000Z");
    expect(expiryInstantOf("2026-10-31", "America/Havana")).toBe("2026-11-01T04:00:00.000Z");
  });

  it("adds calendar days across months and leap days", () => {
    expect(addDays("2028-02-15", 30)).toBe("2028-03-16");
    expect(addDays("2026-12-15", 30)).toBe("2027-01-14");
    expect(addDays("2026-01-31", 0)).toBe("2026-01-31");
    // A default expiry never runs past the last date.
    expect(addDays("9999-12-15", 30)).toBe("9999-12-31");
  });

  it("filters Open and Expired by the expiry instant, Closed and Declined by the stored status, unknown ids to nothing", () => {
    const now = "2026-03-10T12:00:00.000Z";
    expect(statusFilter(5, now)).toEqual({ statusId: 5, dates: [{ attribute: "expiryInstant", from: "2026-03-10T12:00:00.001Z" }] });
    expect(statusFilter(8, now)).toEqual({ statusId: 5, dates: [{ attribute: "expiryInstant", to: now }] });
    expect(statusFilter(7, now)).toEqual({ statusId: 7 });
    expect(statusFilter(6, now)).toEqual({ statusId: 6 });
    expect(statusFilter(21, now)).toEqual({ statusId: -1 });
  });

  it("gives the edit block reason: permission first, then anything but Open", () => {
    const now = "2026-03-10T00:00:00.000Z";
    expect(editBlockReason(principal([]), header(), now)).toBe("permission_denied");
    expect(editBlockReason(principal(["estimates.modify"]), header(), now)).toBeNull();
    expect(editBlockReason(principal(["estimates.modify"]), header({ status: "declined" }), now)).toBe("estimate_not_open");
    expect(editBlockReason(principal(["estimates.modify"]), header(), "2026-05-01T00:00:00.000Z")).toBe("estimate_not_open");
  });
});

describe("offline: estimate pricing", () => {
  it("prices lines with taxes and total cost, and generates one discount line keeping its id", () => {
    const { lines, totals } = priceEstimate(
      [line({ quantity: 3, unitPrice: "10.0000", unitCost: "4.3333", taxRate: "8.250", tax2Rate: "1.500" }), line({ id: "l2", unitPrice: "0.3333" })],
      "10.000",
      "5.0000",
      "disc",
    );
    expect(lines.map((l) => l.lineType)).toEqual(["service", "service", "discount"]);
    expect(lines[0]).toMatchObject({
      subtotal: "30.0000",
      tax: "2.2275",
      tax2: "0.4050",
      total: "32.6325",
      totalCost: "12.9999",
      discountedUnitPrice: "9.0000",
    });
    expect(lines[2]).toMatchObject({ id: "disc", unitPrice: "-3.0333", subtotal: "-3.0333", unitCost: null, totalCost: null, tax: "0.0000", total: "-3.0333" });
    expect(totals).toEqual({
      subtotal: "27.3000",
      preDiscountTotal: "30.3333",
      discountTotal: "-3.0333",
      shippingFee: "5.0000",
      tax: "2.2275",
      tax2: "0.4050",
      total: "34.9325",
    });
  });

  it("drops the discount line when the discount goes to zero, and reuses a stored one otherwise", () => {
    const stored = [line(), line({ id: "old-discount", lineType: "discount", unitCost: null })];
    expect(priceEstimate(stored, "0.000", "0.0000").lines.map((l) => l.id)).toEqual(["l1"]);
    expect(priceEstimate(stored, "5.000", "0.0000").lines.map((l) => l.id)).toEqual(["l1", "old-discount"]);
  });
});

describe("offline: estimate presentation", () => {
  const now = "2026-03-10T00:00:00.000Z";

  it("shows cost fields only with costs.view, in the spec's order, and null identity in a preview of a new estimate", () => {
    const lines = priceEstimate([line()], "0.000", "0.0000").lines;
    const withCosts = presentEstimate(principal(["costs.view", "estimates.modify"]), header(), lines, { now });
    expect(Object.keys(withCosts)).toContain("shipping_cost");
    expect((withCosts.lines as Record<string, unknown>[])[0]).toMatchObject({ unit_cost: "40.0000", total_cost: "40.0000" });
    const without = presentEstimate(principal(["estimates.modify"]), header(), lines, { now });
    expect(Object.keys(without)).not.toContain("shipping_cost");
    expect(Object.keys((without.lines as Record<string, unknown>[])[0]!)).not.toContain("unit_cost");
    expect(without).toMatchObject({ status_id: 5, status: "Open", purchase_order_number: "", converted_document: null, can_edit: true });
    const preview = presentEstimate(principal(["estimates.modify"]), header(), lines, { now, preview: { storedLineIds: new Set(), isNew: true } });
    expect(preview).toMatchObject({ id: null, estimate_number: null, revision: null, created_at: null, updated_at: null });
    expect((preview.lines as Record<string, unknown>[])[0]!.id).toBeNull();
    const existing = presentEstimate(principal(["estimates.modify"]), header(), lines, { now, preview: { storedLineIds: new Set(["l1"]), isNew: false } });
    expect(existing).toMatchObject({ id: "d", estimate_number: 7, revision: null });
    expect((existing.lines as Record<string, unknown>[])[0]!.id).toBe("l1");
  });

  it("shows a converted estimate as Closed with its converted document", () => {
    const shown = presentEstimate(
      principal([], "owner"),
      header({ status: "closed", statusId: 6, convertedTo: { kind: "invoice", id: "i", number: 3 } }),
      undefined,
      { now },
    );
    expect(shown).toMatchObject({
      status_id: 6,
      status: "Closed",
      can_edit: false,
      edit_block_reason: "estimate_not_open",
      converted_document: { id: "i", kind: "invoice", number: 3 },
    });
    expect(shown).not.toHaveProperty("lines");
  });
});

describe("offline: conversion source", () => {
  const now = "2026-03-10T00:00:00.000Z";
  const lines = priceEstimate([line(), line({ id: "l2", lineType: "inventory", itemId: "item" })], "10.000", "0.0000").lines;

  it("gives the header values and the non-discount lines (fresh ids, source line ids) of an Open estimate", () => {
    const source = conversionSource(header({ discountPercent: "10.000" }), lines, "invoice", now);
    expect(source.header).toMatchObject({ partyId: "c", partyName: "Acme", assignedUserId: "u", discountPercent: "10.000", shippingCost: "2.0000" });
    expect(source.lines.map((l) => [l.lineType, l.sourceLineId])).toEqual([
      ["service", "l1"],
      ["inventory", "l2"],
    ]);
    expect(source.lines.every((l) => l.id !== l.sourceLineId)).toBe(true);
  });

  it("refuses closed, declined and expired estimates with the conversion kind's code", () => {
    expect(() => conversionSource(header({ status: "declined" }), lines, "invoice", now)).toThrow(
      expect.objectContaining({ statusCode: 409, code: "estimate_conversion_not_allowed" }),
    );
    expect(() => conversionSource(header({ status: "closed" }), lines, "sales_order", now)).toThrow(
      expect.objectContaining({ code: "estimate_sales_order_conversion_not_allowed" }),
    );
    expect(() => conversionSource(header(), lines, "invoice", "2026-04-02T00:00:00.000Z")).toThrow(
      expect.objectContaining({ code: "estimate_conversion_not_allowed" }),
    );
  });
});

describe("offline: a conversion that cannot place a line", () => {
  const unplaced = {
    param: "lines[1].item_variation_location_id",
    code: "required",
    message: "is required: the item is stocked at several locations.",
  } as const;

  it("is 409 with the conversion kind's code, naming the line, when every problem is an unplaced line", () => {
    const conflict = unplacedLinesConflict(errors.validationFailed([unplaced]), "sales_order");
    expect(conflict).toMatchObject({ statusCode: 409, code: "estimate_sales_order_conversion_not_allowed" });
    expect((conflict as Error).message).toContain("lines[1].item_variation_location_id is required: the item is stocked at several locations.");
    expect(unplacedLinesConflict(errors.validationFailed([unplaced]), "invoice")).toMatchObject({ code: "estimate_conversion_not_allowed" });
  });

  it("leaves any other error as it is (short stock, a bad date, a row refused for another reason)", () => {
    const short = errors.validationFailed([{ param: "lines[0].quantity", code: "insufficient_stock", message: "exceeds the stock." } as const]);
    expect(unplacedLinesConflict(short, "invoice")).toBe(short);
    const mixed = errors.validationFailed([unplaced, { param: "issue_date", code: "invalid", message: "is not a date." } as const]);
    expect(unplacedLinesConflict(mixed, "invoice")).toBe(mixed);
    const plain = new Error("boom");
    expect(unplacedLinesConflict(plain, "invoice")).toBe(plain);
  });
});

describe("offline: estimate date rules", () => {
  const codes = (result: ReturnType<typeof dateProblems>) => [...result.problems, ...result.warnings].map((p) => `${p.code}@${p.param}`);

  it("refuses an expiry before the issue date on the field given, an update's past expiry, and warns of a create's", () => {
    const base = { issueDate: "2026-03-10", today: "2026-03-20" };
    expect(codes(dateProblems({ ...base, expiryDate: "2026-03-09", isUpdate: false, expiryGiven: true }))).toEqual(["before_issue_date@expiry_date"]);
    expect(codes(dateProblems({ ...base, expiryDate: "2026-03-09", isUpdate: true, expiryGiven: false }))).toEqual(["before_issue_date@issue_date"]);
    expect(codes(dateProblems({ ...base, expiryDate: "2026-03-19", isUpdate: true, expiryGiven: true }))).toEqual(["past_date@expiry_date"]);
    expect(codes(dateProblems({ ...base, expiryDate: "2026-03-20", isUpdate: true, expiryGiven: true }))).toEqual(["past_date@expiry_date"]);
    expect(dateProblems({ ...base, expiryDate: "2026-03-21", isUpdate: true, expiryGiven: true })).toEqual({ problems: [], warnings: [] });
    const created = dateProblems({ ...base, expiryDate: "2026-03-19", isUpdate: false, expiryGiven: true });
    expect(created.problems).toEqual([]);
    expect(codes(created)).toEqual(["expiry_date_passed@expiry_date"]);
    expect(dateProblems({ ...base, expiryDate: "2026-03-10", isUpdate: true, expiryGiven: false })).toEqual({ problems: [], warnings: [] });
  });
});
