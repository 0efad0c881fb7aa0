/**
 * The body a naive client writes back (architecture section 8, "What you read you can write
 * back"): the GET body with only the architecture's read-only kinds removed (the record's own
 * id, numbers, totals, timestamps, statuses and computed quantities); lines keep their ids.
 */
type Json = Record<string, any>;

const STRIPPED =
  /^(id|created_at|updated_at|status|status_id|subtotal|tax|tax_2|total|amount_paid|amount_due|pre_discount_subtotal|pre_discount_total|discount|discount_total|total_cost|quantity_\w+|\w+_number)$/;

export const naiveWriteBack = (record: Json): Json =>
  Object.fromEntries(
    Object.entries(record)
      .filter(([key]) => !STRIPPED.test(key))
      .map(([key, value]) => [
        key,
        // Lines go back with their ids: only the record's own id is stripped.
        key === "lines"
          ? (value as Json[]).map((line) => Object.fromEntries(Object.entries(line).filter(([field]) => field === "id" || !STRIPPED.test(field))))
          : value,
      ]),
  );
