/**
 * Name keys: the sort key every "ordered by name" index keeps of a record's name (parties,
 * items, contacts, locations), shared by the domain that writes it and the storage that searches it.
 */

/**
 * The most UTF-8 bytes of a name a sort key keeps: DynamoDB holds at most 1,024 bytes in a sort
 * key, and 255 characters of four bytes each (emoji), with the key's labels and id, exceed it.
 * Names that share their first 512 bytes sort by id among themselves.
 */
export const NAME_KEY_MAX_BYTES = 512;

/** The terminator of a name key that holds the whole name, and of one cut at `NAME_KEY_MAX_BYTES`. */
const WHOLE_NAME_END = "\u0001";
const CUT_NAME_END = "\u0002";

/**
 * The sort key of a name in a "by name" index: lower case (at most `NAME_KEY_MAX_BYTES`, cut at
 * a character), then a terminator that sorts below every character a name can hold. Without it
 * the key separator that follows ("#") would sort "apple pie" before "apple", unlike
 * `compareByName`. A cut key ends in its own terminator (`isCutNameKey`): a search that does
 * not find its text in it reads the record's whole name.
 */
export function nameSortKey(name: string): string {
  const lower = name.toLowerCase();
  if (Buffer.byteLength(lower, "utf8") <= NAME_KEY_MAX_BYTES) return `${lower}${WHOLE_NAME_END}`;
  let kept = "";
  let bytes = 0;
  for (const character of lower) {
    bytes += Buffer.byteLength(character, "utf8");
    if (bytes > NAME_KEY_MAX_BYTES) break;
    kept += character;
  }
  return `${kept}${CUT_NAME_END}`;
}

/** Whether a name key holds only the start of its name (`nameSortKey` of a long multi-byte name). */
export const isCutNameKey = (nameKey: string): boolean => nameKey.endsWith(CUT_NAME_END);
