/**
 * Page-based pagination (spec part 1, sections 2.1 and 8): `page` defaults to 1 and values
 * below 1 become 1; `limit` defaults to 20, is capped at 100 and raised to 1.
 */
export const DEFAULT_LIMIT = 20;
export const MAX_LIMIT = 100;
/** The highest page number kept as sent: a larger one (any number of digits) reads as this page, which is empty. */
export const MAX_PAGE = 999_999_999_999_999;

export interface PageRequest {
  page: number;
  limit: number;
}

/** An integer's text (any number of digits) as a number within `min`..`max`: exact inside the range, clamped outside. */
const clampedInteger = (text: string, min: number, max: number): number => Math.min(max, Math.max(min, Number.parseInt(text, 10)));

export function normalizePage(query: { page?: string; limit?: string }): PageRequest {
  const page = query.page === undefined ? 1 : clampedInteger(query.page, 1, MAX_PAGE);
  const limit = query.limit === undefined ? DEFAULT_LIMIT : clampedInteger(query.limit, 1, MAX_LIMIT);
  return { page, limit };
}

export interface ListEnvelope<T> {
  object: "list";
  url: string;
  has_more: boolean;
  data: T[];
  pagination: { page: number; per_page: number; total_pages: number; total_records: number };
}

/** The list envelope for one page of a result whose total size is known. */
export function listEnvelope<T>(url: string, request: PageRequest, totalRecords: number, data: T[]): ListEnvelope<T> {
  return {
    object: "list",
    url,
    has_more: request.page * request.limit < totalRecords,
    data,
    pagination: {
      page: request.page,
      per_page: request.limit,
      total_pages: Math.ceil(totalRecords / request.limit),
      total_records: totalRecords,
    },
  };
}

/** Pages an already ordered, fully read collection (small reference collections only). */
export function pageOfAll<T>(url: string, request: PageRequest, all: readonly T[]): ListEnvelope<T> {
  const start = (request.page - 1) * request.limit;
  return listEnvelope(url, request, all.length, all.slice(start, start + request.limit));
}
