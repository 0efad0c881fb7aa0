import { describe, expect, it } from "vitest";
import * as z from "zod";
import { itemCategoryCreateBody, itemCategoryUpdateBody } from "../schemas/item-categories.js";
import { locationCreateBody } from "../schemas/locations.js";
import { estimateUpdateBody } from "../schemas/estimates.js";
import { invoiceUpdateBody } from "../schemas/invoices.js";
import { purchaseOrderUpdateBody } from "../schemas/purchase-orders.js";
import { countIssues, jsonPath, toValidationDetails } from "./validation.js";

/** Validation details (architecture section 4): `details: [{param, code, message}]`, `param` a JSON path. */
function detailsOf(schema: z.ZodType, input: unknown) {
  const result = schema.safeParse(input);
  if (result.success) throw new Error("expected the input to be invalid");
  return toValidationDetails(result.error, input);
}

describe("offline: jsonPath", () => {
  it.each([
    [["lines", 2, "quantity"], "lines[2].quantity"],
    [["name"], "name"],
    [["custom_fields", 0, "name"], "custom_fields[0].name"],
    [["a", "b", "c"], "a.b.c"],
    [["matrix", 1, 2], "matrix[1][2]"],
    [[0, "name"], "[0].name"],
    [[], ""],
  ] as Array<[PropertyKey[], string]>)("%j -> %s", (path, expected) => {
    expect(jsonPath(path)).toBe(expected);
  });
});

describe("offline: toValidationDetails", () => {
  it("a missing required field is `required`", () => {
    const details = detailsOf(itemCategoryCreateBody(), { inventory_type: "quantity" });
    expect(details).toEqual([{ param: "name", code: "required", message: "is required." }]);
  });

  it("an integer beyond 2^53 is one too_large detail with the field's own bound (zod reports two)", () => {
    const schema = z.object({ row: z.int().min(1).max(2_147_483_647) });
    const input = { row: 2 ** 53 + 2 };
    const result = schema.safeParse(input);
    expect(result.error?.issues).toHaveLength(2);
    expect(toValidationDetails(result.error!, input)).toEqual([{ param: "row", code: "too_large", message: expect.stringContaining("2147483647") }]);
    expect(countIssues(result.error!)).toBe(1);
  });

  it("reports every offending field, each with a message", () => {
    const details = detailsOf(itemCategoryCreateBody(), {});
    expect(details.map((d) => d.param).sort()).toEqual(["inventory_type", "name"]);
    expect(details.every((d) => d.message.length > 0)).toBe(true);
    expect(details.find((d) => d.param === "name")?.code).toBe("required");
  });

  it("a string over its maximum is `too_long`", () => {
    const details = detailsOf(itemCategoryCreateBody(), { name: "x".repeat(256), inventory_type: "quantity" });
    expect(details).toEqual([{ param: "name", code: "too_long", message: expect.stringContaining("255") }]);
  });

  it("a nested field gets its JSON path", () => {
    const details = detailsOf(itemCategoryCreateBody(), {
      name: "Tools",
      inventory_type: "quantity",
      custom_fields: [{ name: "ok" }, { name: "y".repeat(256) }, { display_on_inventory_list: true }],
    });
    expect(details).toEqual([
      { param: "custom_fields[1].name", code: "too_long", message: expect.any(String) },
      { param: "custom_fields[2].name", code: "required", message: expect.any(String) },
    ]);
  });

  it("unknown keys are `unknown_field`, one detail per key", () => {
    const details = detailsOf(itemCategoryCreateBody(), { name: "Tools", inventory_type: "quantity", colour: "red", size: 3 });
    expect(details).toEqual([
      { param: "colour", code: "unknown_field", message: expect.any(String) },
      { param: "size", code: "unknown_field", message: expect.any(String) },
    ]);
  });

  it("an unknown key inside an array element is named by its path", () => {
    const details = detailsOf(itemCategoryUpdateBody(), { custom_fields: [{ name: "A", colour: "red" }] });
    expect(details).toEqual([{ param: "custom_fields[0].colour", code: "unknown_field", message: expect.any(String) }]);
  });

  it("a bad email is `invalid_email`", () => {
    const details = detailsOf(locationCreateBody(), { name: "Main", short_name: "M", email: "not-an-email" });
    expect(details).toEqual([{ param: "email", code: "invalid_email", message: expect.any(String) }]);
  });

  it("a value outside an enum is `invalid_value` listing the choices", () => {
    const details = detailsOf(itemCategoryCreateBody(), { name: "Tools", inventory_type: "bulk" });
    expect(details).toEqual([{ param: "inventory_type", code: "invalid_value", message: expect.stringContaining("quantity") }]);
    expect(details[0]!.message).toContain("unique");
  });

  it("a present value of the wrong type is `invalid_type`, not `required`", () => {
    const details = detailsOf(itemCategoryCreateBody(), { name: 42, inventory_type: "quantity" });
    expect(details).toEqual([{ param: "name", code: "invalid_type", message: expect.any(String) }]);
  });

  it("a blank required string is `blank`", () => {
    const details = detailsOf(itemCategoryCreateBody(), { name: "   ", inventory_type: "quantity" });
    expect(details).toEqual([{ param: "name", code: "blank", message: expect.any(String) }]);
  });

  it("a malformed UUID is `invalid_uuid`", () => {
    const details = detailsOf(itemCategoryCreateBody(), { name: "Tools", inventory_type: "quantity", parent_id: "nope" });
    expect(details).toEqual([{ param: "parent_id", code: "invalid_uuid", message: expect.any(String) }]);
  });

  it("an array over its maximum is `too_many`", () => {
    const details = detailsOf(itemCategoryCreateBody(), {
      name: "Tools",
      inventory_type: "quantity",
      custom_fields: Array.from({ length: 101 }, (_, i) => ({ name: `F${i}` })),
    });
    expect(details).toEqual([{ param: "custom_fields", code: "too_many", message: expect.stringContaining("100") }]);
  });

  it("an update's lines past the schema's room state the service's limit (500 lines, the discount line of a body sent back aside)", () => {
    const line = { name: "Service", unit_price: "1" };
    const body = { lines: Array.from({ length: 502 }, () => line) };
    expect(detailsOf(estimateUpdateBody(), body)).toEqual([{ param: "lines", code: "too_many", message: expect.stringContaining("at most 500 entries") }]);
    // A kind that creates 100 lines states 100 (more only for a document that holds more), as its service does.
    for (const schema of [invoiceUpdateBody(), purchaseOrderUpdateBody()]) {
      expect(detailsOf(schema, body)).toEqual([{ param: "lines", code: "too_many", message: expect.stringContaining("at most 100 entries") }]);
    }
  });

  it("prefixes the path when asked", () => {
    const schema = z.object({ quantity: z.number() });
    const input = { quantity: "x" };
    const result = schema.safeParse(input);
    expect(result.success).toBe(false);
    expect(toValidationDetails(result.error!, input, ["lines", 2])).toEqual([
      { param: "lines[2].quantity", code: "invalid_type", message: expect.any(String) },
    ]);
  });
});
