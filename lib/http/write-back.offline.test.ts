import { describe, expect, it } from "vitest";
import type { RouteDefinition } from "../routes/define.js";
import { sameJson, staleCopyConflict, withoutRepeatedFields } from "./write-back.js";

describe("offline: write-back of fields the update does not take", () => {
  const current = {
    name: "Order",
    customer_name: "Acme",
    party: { id: "p1", name: "Acme" },
    note: null,
    lines: [
      { id: "l1", sku: "CAB-1", position: 1, line_type: "inventory", quantity: 2 },
      { id: "d1", line_type: "discount", name: "Discount", unit_price: "-1.0000", position: 2 },
    ],
  };

  it("drops top-level fields that repeat the record (objects and null included), keeps changed or unknown ones", () => {
    const body = { customer_name: "Acme", party: { name: "Acme", id: "p1" }, note: null, extra: 1, name: "Order" };
    expect(withoutRepeatedFields(body, current, ["customer_name", "party", "note", "extra"])).toEqual({ extra: 1, name: "Order" });
    expect(withoutRepeatedFields({ customer_name: "Other" }, current, ["customer_name"])).toEqual({ customer_name: "Other" });
  });

  it("drops a line's repeated fields by the line's id, keeps those of a new line or another value; a generated line sent back unchanged goes", () => {
    const body = {
      lines: [
        { id: "l1", sku: "CAB-1", position: 1, quantity: 3 },
        { sku: "CAB-1", quantity: 1 },
        { id: "l1", sku: "OTHER" },
        { id: "d1", line_type: "discount", name: "Discount", unit_price: "-1.0000", position: 2 },
      ],
    };
    const paths = ["lines[0].sku", "lines[0].position", "lines[1].sku", "lines[2].sku", "lines[3].line_type", "lines[3].position"];
    expect(withoutRepeatedFields(body, current, paths)).toEqual({
      lines: [
        { id: "l1", quantity: 3 },
        { sku: "CAB-1", quantity: 1 },
        { id: "l1", sku: "OTHER" },
      ],
    });
  });

  it("drops an object's repeated members (a task's record preview), keeps a changed one", () => {
    const shown = { record: { type: "customer", id: "c1", name: "Acme", number: 7 } };
    expect(withoutRepeatedFields({ record: { type: "customer", id: "c1", name: "Acme", number: 7 } }, shown, ["record.name", "record.number"])).toEqual({
      record: { type: "customer", id: "c1" },
    });
    expect(withoutRepeatedFields({ record: { type: "customer", id: "c2", name: "Acme" } }, shown, ["record.name"])).toEqual({
      record: { type: "customer", id: "c2" },
    });
    expect(withoutRepeatedFields({ record: { type: "customer", id: "c1", name: "Other" } }, shown, ["record.name"])).toEqual({
      record: { type: "customer", id: "c1", name: "Other" },
    });
  });

  it("leaves out an object whose every member repeats the record (an unavailable task link read back)", () => {
    const shown = { title: "Call", record: { available: false } };
    expect(withoutRepeatedFields({ title: "Call", record: { available: false } }, shown, ["record.available"])).toEqual({ title: "Call" });
    // A member that differs keeps the object, for validation to refuse.
    expect(withoutRepeatedFields({ record: { available: true } }, shown, ["record.available"])).toEqual({ record: { available: true } });
  });

  it("leaves the body alone without a record to compare with, or nothing to drop", () => {
    const body = { customer_name: "Acme" };
    expect(withoutRepeatedFields(body, undefined, ["customer_name"])).toBe(body);
    expect(withoutRepeatedFields(body, current, [])).toBe(body);
    expect(sameJson({ a: [1, { b: null }] }, { a: [1, { b: null }] })).toBe(true);
    expect(sameJson({ a: 1 }, { a: 1, b: undefined })).toBe(false);
    expect(sameJson([1, 2], [2, 1])).toBe(false);
  });

  it("a copy older than the record is its conflict: a task's version, a document's revision named in the body or If-Match", () => {
    const taskRoute = { errors: { 409: ["task_conflict"] } } as unknown as RouteDefinition;
    const documentRoute = { ifMatch: "optional" } as unknown as RouteDefinition;
    const task = { version: 2, modified: "2026-11-28T03:00:00.000Z" };
    expect(staleCopyConflict(taskRoute, undefined, { version: 1, modified: "x" }, task, ["modified"])).toMatchObject({
      statusCode: 409,
      code: "task_conflict",
    });
    expect(staleCopyConflict(taskRoute, undefined, { version: 2, modified: "x" }, task, ["modified"])).toBeUndefined();
    expect(staleCopyConflict(taskRoute, undefined, { modified: "x" }, task, ["modified"])).toBeUndefined();
    // A field the record does not show is no copy of it: its own 422 stands.
    expect(staleCopyConflict(taskRoute, undefined, { version: 1, nonsense: 1 }, task, ["nonsense"])).toBeUndefined();
    const current = { revision: "est_b", customer_name: "Acme", lines: [] };
    expect(staleCopyConflict(documentRoute, undefined, { revision: "est_a" }, current, ["revision"])).toMatchObject({
      statusCode: 409,
      code: "mobile_mutation_conflict",
    });
    expect(staleCopyConflict(documentRoute, '"est_a"', { customer_name: "Old" }, current, ["customer_name"])).toMatchObject({
      code: "mobile_mutation_conflict",
    });
    expect(staleCopyConflict(documentRoute, '"est_a"', {}, current, ["lines[0].sku"])).toMatchObject({ code: "mobile_mutation_conflict" });
    expect(staleCopyConflict(documentRoute, '"est_a", "est_b"', { revision: "est_b" }, current, ["revision"])).toBeUndefined();
    expect(staleCopyConflict(documentRoute, "*", { customer_name: "Old" }, current, ["customer_name"])).toBeUndefined();
    expect(staleCopyConflict({} as RouteDefinition, '"est_a"', { revision: "est_a" }, current, ["revision"])).toBeUndefined();
  });
});
