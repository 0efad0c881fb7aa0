/**
 * Offset pagination over an index: DynamoDB has no offset, so an index is read from its start
 * until `offset + limit` entries are in hand (never further). The cost grows with the page's
 * depth, never with the entries after it. `fetch` runs one Query from `cursor` for at most
 * `want` entries.
 */
export async function readToOffset<T>(
  offset: number,
  limit: number,
  fetch: (cursor: string | null, want: number) => Promise<{ data: T[]; cursor: string | null }>,
): Promise<T[]> {
  const wanted = offset + limit;
  const entries: T[] = [];
  let cursor: string | null = null;
  do {
    const page = await fetch(cursor, Math.min(wanted - entries.length, 1000));
    entries.push(...page.data);
    cursor = page.cursor;
  } while (cursor && entries.length < wanted);
  return entries.slice(offset, wanted);
}
