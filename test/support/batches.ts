/**
 * Fixture records made `size` at a time (default 10). Setup is not a contention proof: 100
 * creates on one account at once queue for its sequence, and on a loaded machine the last of
 * them can outwait the request deadline (503 `resource_busy`, as documented). The contention
 * tests fire their requests all at once on purpose.
 */
export async function inBatches<T>(count: number, make: (index: number) => Promise<T>, size = 10): Promise<T[]> {
  const made: T[] = [];
  for (let start = 0; start < count; start += size) {
    made.push(...(await Promise.all(Array.from({ length: Math.min(size, count - start) }, (_, j) => make(start + j)))));
  }
  return made;
}
