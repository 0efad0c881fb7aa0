import { describe, expect, it } from "vitest";
import { DEFAULT_LIMIT, MAX_LIMIT, listEnvelope, normalizePage, pageOfAll } from "./pagination.js";

/** Page-based lists: spec part 1, sections 2.1 and 8; architecture section 4 (page past the end). */
describe("offline: normalizePage", () => {
  it("defaults to page 1 of 20", () => {
    expect(DEFAULT_LIMIT).toBe(20);
    expect(MAX_LIMIT).toBe(100);
    expect(normalizePage({})).toEqual({ page: 1, limit: 20 });
  });

  it.each([
    [{ page: "3" }, { page: 3, limit: 20 }],
    [{ limit: "50" }, { page: 1, limit: 50 }],
    [
      { page: "2", limit: "100" },
      { page: 2, limit: 100 },
    ],
    [
      { page: "+4", limit: "+7" },
      { page: 4, limit: 7 },
    ],
  ])("keeps in-range values %j", (query, expected) => {
    expect(normalizePage(query)).toEqual(expected);
  });

  it.each([
    [{ page: "0" }, 1],
    [{ page: "-5" }, 1],
    [{ page: `-${"9".repeat(40)}` }, 1],
    [{ page: "9".repeat(40) }, 999_999_999_999_999],
    [{ page: "999999999999999" }, 999_999_999_999_999],
    [{ page: "1" }, 1],
  ])("normalizes page %j to %i", (query, page) => {
    expect(normalizePage(query).page).toBe(page);
  });

  it.each([
    [{ limit: "101" }, 100],
    [{ limit: "500" }, 100],
    [{ limit: "999999999" }, 100],
    [{ limit: "9".repeat(40) }, 100],
    [{ limit: `-${"9".repeat(40)}` }, 1],
    [{ limit: "0" }, 1],
    [{ limit: "-3" }, 1],
    [{ limit: "1" }, 1],
  ])("caps or raises limit %j to %i", (query, limit) => {
    expect(normalizePage(query).limit).toBe(limit);
  });
});

describe("offline: listEnvelope", () => {
  it("has the envelope shape with the effective page size", () => {
    expect(listEnvelope("/api/v3/things", { page: 1, limit: 20 }, 2, ["a", "b"])).toEqual({
      object: "list",
      url: "/api/v3/things",
      has_more: false,
      data: ["a", "b"],
      pagination: { page: 1, per_page: 20, total_pages: 1, total_records: 2 },
    });
  });

  it("an empty result has 0 pages and no more", () => {
    const envelope = listEnvelope("/x", { page: 1, limit: 20 }, 0, []);
    expect(envelope.has_more).toBe(false);
    expect(envelope.pagination).toEqual({ page: 1, per_page: 20, total_pages: 0, total_records: 0 });
  });

  it.each([
    // [page, limit, total, has_more, total_pages]
    [1, 10, 10, false, 1],
    [1, 10, 11, true, 2],
    [2, 10, 11, false, 2],
    [1, 10, 20, true, 2],
    [2, 10, 20, false, 2],
    [2, 10, 21, true, 3],
    [3, 10, 21, false, 3],
    [1, 1, 3, true, 3],
    [3, 1, 3, false, 3],
    [5, 10, 21, false, 3],
    [1, 100, 250, true, 3],
  ])("page %i of size %i over %i records: has_more %s, total_pages %i", (page, limit, total, hasMore, totalPages) => {
    const envelope = listEnvelope("/x", { page, limit }, total, []);
    expect(envelope.has_more).toBe(hasMore);
    expect(envelope.pagination.total_pages).toBe(totalPages);
    expect(envelope.pagination.total_records).toBe(total);
    expect(envelope.pagination.page).toBe(page);
    expect(envelope.pagination.per_page).toBe(limit);
  });
});

describe("offline: pageOfAll", () => {
  const all = Array.from({ length: 7 }, (_, i) => i + 1);

  it("slices the requested page", () => {
    expect(pageOfAll("/x", { page: 1, limit: 3 }, all).data).toEqual([1, 2, 3]);
    expect(pageOfAll("/x", { page: 2, limit: 3 }, all).data).toEqual([4, 5, 6]);
    const last = pageOfAll("/x", { page: 3, limit: 3 }, all);
    expect(last.data).toEqual([7]);
    expect(last.has_more).toBe(false);
    expect(last.pagination).toEqual({ page: 3, per_page: 3, total_pages: 3, total_records: 7 });
  });

  it("reports has_more on every page but the last", () => {
    expect(pageOfAll("/x", { page: 1, limit: 3 }, all).has_more).toBe(true);
    expect(pageOfAll("/x", { page: 2, limit: 3 }, all).has_more).toBe(true);
  });

  it("reading pages until has_more is false yields every record once", () => {
    const seen: number[] = [];
    for (let page = 1; ; page++) {
      const envelope = pageOfAll("/x", { page, limit: 2 }, all);
      seen.push(...envelope.data);
      if (!envelope.has_more) break;
    }
    expect(seen).toEqual(all);
  });

  it("a page past the end is empty with has_more false", () => {
    const envelope = pageOfAll("/x", { page: 4, limit: 3 }, all);
    expect(envelope.data).toEqual([]);
    expect(envelope.has_more).toBe(false);
    expect(envelope.pagination).toEqual({ page: 4, per_page: 3, total_pages: 3, total_records: 7 });
    expect(pageOfAll("/x", { page: 1000, limit: 100 }, all).data).toEqual([]);
  });

  it("an empty collection is one empty page with 0 total pages", () => {
    expect(pageOfAll("/api/v3/item-categories", { page: 1, limit: 20 }, [])).toEqual({
      object: "list",
      url: "/api/v3/item-categories",
      has_more: false,
      data: [],
      pagination: { page: 1, per_page: 20, total_pages: 0, total_records: 0 },
    });
  });

  it("does not modify the collection", () => {
    const copy = [...all];
    pageOfAll("/x", { page: 2, limit: 2 }, all);
    expect(all).toEqual(copy);
  });
});
