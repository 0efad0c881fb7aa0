/** Name ordering used by every "ordered by name" list: case-insensitive, then exact, then id. */
export function compareByName(a: { name: string; id: string }, b: { name: string; id: string }): number {
  const left = a.name.toLowerCase();
  const right = b.name.toLowerCase();
  if (left !== right) return left < right ? -1 : 1;
  if (a.name !== b.name) return a.name < b.name ? -1 : 1;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}
