/** Name ordering used by every "ordered by name" list: case-insensitive, then exact, then id. */
export function compareByName(a: { name: string; id: string }, b: { name: string; id: string }): number {
  const left = a.name.toLowerCase();
  const right = b.name.toLowerCase();
  if (left !== right) return left < right ? -1 : 1;
  if (a.name !== b.name) return a.name < b.name ? -1 : 1;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

/**
 * The most UTF-8 bytes of a name a sort key keeps: DynamoDB holds at most 1,024 bytes in a sort
 * key, and 255 characters of four bytes each (emoji), with the key's labels and id, exceed it.
 * Names that share their first 512 bytes sort by id among themselves.
 */
export const NAME_KEY_MAX_BYTES = 512;

/**
 * The sort key of a name in a "by name" index: lower case (at most `NAME_KEY_MAX_BYTES`, cut at
 * a character), then a terminator that sorts below every character a name can hold. Without it
 * the key separator that follows ("#") would sort "apple pie" before "apple", unlike
 * `compareByName`.
 */
export function nameSortKey(name: string): string {
  const lower = name.toLowerCase();
  if (Buffer.byteLength(lower, "utf8") <= NAME_KEY_MAX_BYTES) return `${lower}\u0001`;
  let kept = "";
  let bytes = 0;
  for (const character of lower) {
    bytes += Buffer.byteLength(character, "utf8");
    if (bytes > NAME_KEY_MAX_BYTES) break;
    kept += character;
  }
  return `${kept}\u0001`;
}
