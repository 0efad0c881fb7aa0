/** What the record writes of items, parties and contacts share: field copying (pure). */

/**
 * Copies each field sent to its attribute: `null` clears it (and so does "" for a field
 * without `convert`, i.e. text), another value is set (through `convert` when given); a field
 * not sent is left alone.
 */
export function collectFields<A extends PropertyKey>(
  input: object,
  fields: Iterable<readonly [string, A]>,
  set: Record<PropertyKey, unknown>,
  remove: A[],
  convert?: (value: never) => unknown,
): void {
  for (const [field, attribute] of fields) {
    const value = (input as Record<string, unknown>)[field];
    if (value === undefined) continue;
    if (value === null || (convert === undefined && value === "")) remove.push(attribute);
    else set[attribute] = convert ? convert(value as never) : value;
  }
}
