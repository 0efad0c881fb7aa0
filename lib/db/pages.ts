/** The part of a Query or Scan output that paging reads. */
interface PageOutput {
  Items?: Record<string, unknown>[];
  LastEvaluatedKey?: Record<string, unknown>;
}

/**
 * Every page of a Query or Scan, in order: `read` sends one request from `start` (the previous
 * page's `LastEvaluatedKey`, undefined for the first). A caller that has what it wants stops
 * by leaving its `for await` loop: no further page is read. `read` runs again for each page, so
 * a `Limit` it computes from what the caller holds asks for no more than is still wanted.
 */
export async function* pagesOf(read: (start: Record<string, unknown> | undefined) => Promise<PageOutput>): AsyncGenerator<Record<string, unknown>[]> {
  let start: Record<string, unknown> | undefined;
  do {
    const output = await read(start);
    yield output.Items ?? [];
    start = output.LastEvaluatedKey;
  } while (start);
}
