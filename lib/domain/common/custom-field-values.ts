import { errors, type ValidationDetail } from "../../core/errors.js";
import type { CustomFieldKind } from "../../db/entities/custom-field.js";
import type { Reference } from "../../db/references.js";
import { MAX_CUSTOM_FIELD_VALUE_BYTES } from "../../schemas/parties.js";

/**
 * `custom_field_values` on write (spec part 1, section 2.1): a complete replacement; ids must
 * be unique; a blank value (empty string or null) removes that value. Whether each id is a
 * custom field of the record's kind in this account is checked by the write's transaction.
 */
export interface StoredCustomFieldValue {
  id: string;
  value: string;
}

/**
 * Returns the values to store (blanks dropped) and every id sent with its position: each id is
 * checked, blank or not, so a blank value for a foreign field is still rejected; a value that
 * repeats one of `stored` (the record's own) is not checked again. Values over
 * `MAX_CUSTOM_FIELD_VALUE_BYTES` together are 422 `too_large` on `custom_field_values`.
 */
export function normalizeCustomFieldValues(
  input: readonly { custom_field_id: string; value: string | number | boolean | null }[],
  stored: readonly StoredCustomFieldValue[] = [],
): {
  values: StoredCustomFieldValue[];
  checkedIds: string[];
  positions: number[];
} {
  const seen = new Set<string>();
  const details: ValidationDetail[] = [];
  const values: StoredCustomFieldValue[] = [];
  const checkedIds: string[] = [];
  const positions: number[] = [];
  input.forEach((entry, index) => {
    if (seen.has(entry.custom_field_id)) {
      details.push({ param: `custom_field_values[${index}].custom_field_id`, code: "duplicate", message: "appears more than once." });
      return;
    }
    seen.add(entry.custom_field_id);
    const value = entry.value === null ? "" : String(entry.value).trim();
    // A value the record holds already, sent back as read, is kept unchecked (what you read you can
    // write back): its field may have left the record's kind or category since it was written.
    const repeated = value !== "" && stored.some((kept) => kept.id === entry.custom_field_id && kept.value === value);
    if (!repeated) {
      checkedIds.push(entry.custom_field_id);
      positions.push(index);
    }
    if (value !== "") values.push({ id: entry.custom_field_id, value });
  });
  const bytes = values.reduce((sum, entry) => sum + Buffer.byteLength(entry.value, "utf8"), 0);
  if (bytes > MAX_CUSTOM_FIELD_VALUE_BYTES) {
    details.push({
      param: "custom_field_values",
      code: "too_large",
      message: `take ${Math.ceil(bytes / 1024)} KB of UTF-8; a record holds at most ${MAX_CUSTOM_FIELD_VALUE_BYTES / 1024} KB of custom field values.`,
    });
  }
  if (details.length > 0) throw errors.validationFailed(details);
  return { values, checkedIds, positions };
}

export function presentCustomFieldValues(values: readonly StoredCustomFieldValue[] | undefined) {
  return (values ?? []).map((entry) => ({ custom_field_id: entry.id, value: entry.value }));
}

/**
 * The values to store and the reference checks of a record's `custom_field_values` (each id,
 * blank or not, must be a custom field of `recordKind` in the account: checked in the write's
 * own transaction with `checkReferences`).
 */
export function customFieldWrite(
  input: readonly { custom_field_id: string; value: string | number | boolean | null }[],
  recordKind: CustomFieldKind,
): { values: StoredCustomFieldValue[]; references: Reference[] } {
  const { values, checkedIds, positions } = normalizeCustomFieldValues(input);
  return {
    values,
    references: checkedIds.map((id, i) => ({ param: `custom_field_values[${positions[i]}].custom_field_id`, kind: "custom_field" as const, id, recordKind })),
  };
}
