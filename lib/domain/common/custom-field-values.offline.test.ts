import { describe, expect, it } from "vitest";
import { ApiError } from "../../core/errors.js";
import { MAX_CUSTOM_FIELD_VALUE_BYTES } from "../../schemas/parties.js";
import { normalizeCustomFieldValues } from "./custom-field-values.js";

/** `custom_field_values` on write (spec part 1, section 2.1): complete replacement, unique ids, blanks removed, a size bound. */
describe("offline: normalizeCustomFieldValues", () => {
  const id = (i: number) => `00000000-0000-4000-8000-${String(i).padStart(12, "0")}`;

  it("keeps values trimmed and in order, drops blanks but checks every id, refuses a repeated id", () => {
    const result = normalizeCustomFieldValues([
      { custom_field_id: id(1), value: " a " },
      { custom_field_id: id(2), value: "" },
      { custom_field_id: id(3), value: 7 },
      { custom_field_id: id(4), value: null },
    ]);
    expect(result.values).toEqual([
      { id: id(1), value: "a" },
      { id: id(3), value: "7" },
    ]);
    expect(result.checkedIds).toEqual([id(1), id(2), id(3), id(4)]);
    expect(() =>
      normalizeCustomFieldValues([
        { custom_field_id: id(1), value: "x" },
        { custom_field_id: id(1), value: "y" },
      ]),
    ).toThrow(ApiError);
  });

  it("refuses values over MAX_CUSTOM_FIELD_VALUE_BYTES of UTF-8 together (a record must fit one DynamoDB item): 422 too_large", () => {
    const emoji = (count: number) => Array.from({ length: count }, (_, i) => ({ custom_field_id: id(i), value: "😀".repeat(4000) }));
    const fits = Math.floor(MAX_CUSTOM_FIELD_VALUE_BYTES / 16_000);
    expect(normalizeCustomFieldValues(emoji(fits)).values).toHaveLength(fits);
    expect(normalizeCustomFieldValues(Array.from({ length: 30 }, (_, i) => ({ custom_field_id: id(i), value: "a".repeat(4000) }))).values).toHaveLength(30);
    try {
      normalizeCustomFieldValues(emoji(fits + 1));
      expect.unreachable();
    } catch (error) {
      expect((error as ApiError).toBody().error).toMatchObject({ code: "validation_failed", param: "custom_field_values" });
      expect((error as ApiError).toBody().error.details).toEqual([expect.objectContaining({ param: "custom_field_values", code: "too_large" })]);
    }
  });
});
