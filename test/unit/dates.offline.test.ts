import { describe, expect, it } from "vitest";
import * as z from "zod";
import { isCalendarDate } from "../../lib/schemas/common.js";
import { ROUTES } from "../../lib/routes/index.js";

/**
 * Dates are real calendar dates from 0001-01-01 (architecture section 8, "Dates"): EVERY date
 * field of every request (bodies, nested lines, queries), found in the route table's schemas by
 * its documented `format: date`, refuses `0000-01-01` at its own path and accepts `0001-01-01`.
 * A new date field is covered without touching this file.
 */
type Json = Record<string, any>;
type Path = (string | number)[];

/** Paths of the `format: date` fields of a JSON Schema (arrays as index 0), refs resolved. */
function datePaths(schema: Json, defs: Json, path: Path = [], seen = new Set<Json>()): Path[] {
  if (!schema || typeof schema !== "object" || seen.has(schema)) return [];
  if (schema.$ref) return datePaths(defs[String(schema.$ref).replace("#/$defs/", "")], defs, path, seen);
  if (schema.format === "date") return [path];
  const next = new Set(seen).add(schema);
  const found: Path[] = [];
  for (const branch of [...(schema.anyOf ?? []), ...(schema.oneOf ?? []), ...(schema.allOf ?? [])]) found.push(...datePaths(branch, defs, path, next));
  for (const [name, property] of Object.entries(schema.properties ?? {})) found.push(...datePaths(property as Json, defs, [...path, name], next));
  if (schema.items) found.push(...datePaths(schema.items, defs, [...path, 0], next));
  const unique = new Map(found.map((p) => [JSON.stringify(p), p]));
  return [...unique.values()];
}

/** An object holding `value` at `path` and nothing else. */
function holding(path: Path, value: unknown): unknown {
  if (path.length === 0) return value;
  const [head, ...rest] = path;
  return typeof head === "number" ? [holding(rest, value)] : { [head!]: holding(rest, value) };
}

const issuesAt = (schema: z.ZodType, path: Path, value: string) => {
  const result = schema.safeParse(holding(path, value));
  return result.success ? [] : result.error.issues.filter((issue) => JSON.stringify(issue.path) === JSON.stringify(path));
};

const fields = ROUTES.flatMap((route) =>
  (["body", "query"] as const).flatMap((part) => {
    const schema = route.request[part];
    if (!schema) return [];
    const generated = z.toJSONSchema(schema, { io: "input", unrepresentable: "any" }) as Json;
    return datePaths(generated, generated.$defs ?? {}).map((path) => ({ label: `${route.operationId} ${part} ${path.join(".")}`, schema, path }));
  }),
);

describe("offline: dates from 0001-01-01 on every date field", () => {
  it("finds the date fields of the route table (bodies, lines and queries)", () => {
    const labels = fields.map((f) => f.label);
    expect(labels.length).toBeGreaterThan(40);
    expect(labels).toEqual(expect.arrayContaining(["createPurchaseOrder body issue_date", "updateTask body due_date", "listInvoices query issue_date_from"]));
  });

  it.each(fields.map((f) => [f.label, f] as const))("%s refuses 0000-01-01 and accepts 0001-01-01", (_label, field) => {
    expect(issuesAt(field.schema, field.path, "0000-01-01").length).toBeGreaterThan(0);
    expect(issuesAt(field.schema, field.path, "0001-01-01")).toEqual([]);
    expect(issuesAt(field.schema, field.path, "2026-02-29").length).toBeGreaterThan(0);
    // A malformed date is one detail, not also "not a real calendar date".
    expect(issuesAt(field.schema, field.path, "20261127").length).toBeLessThanOrEqual(1);
  });

  it("isCalendarDate: real dates only, from year 1", () => {
    expect(["0001-01-01", "2024-02-29", "9999-12-31"].map(isCalendarDate)).toEqual([true, true, true]);
    expect(["0000-01-01", "0000-12-31", "2023-02-29", "2026-13-01", "2026-1-01", "+02026-01-01", ""].map(isCalendarDate)).toEqual(Array(7).fill(false));
  });
});
