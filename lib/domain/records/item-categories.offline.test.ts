import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import type { ItemCategoryItem } from "../../db/service.js";
import { ApiError } from "../../core/errors.js";
import { parseParentFilter, presentItemCategory, resolveCustomFields } from "./item-categories.js";

/** Item-category rules without a database: spec part 1, sections 2.4 and 4.2. */
type Stored = NonNullable<ItemCategoryItem["customFields"]>[number];
type Desired = Parameters<typeof resolveCustomFields>[1][number];

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

const stored = (name: string, flags: Partial<Pick<Stored, "displayOnInventoryList" | "publishOnDocuments">> = {}): Stored => ({
  id: randomUUID(),
  name,
  displayOnInventoryList: flags.displayOnInventoryList ?? false,
  publishOnDocuments: flags.publishOnDocuments ?? false,
});

/** A desired field as the request schema hands it over (flags may be absent). */
const desired = (field: { id?: string; name: string; display_on_inventory_list?: boolean; publish_on_documents?: boolean }) => field as Desired;

function thrown(fn: () => unknown): ApiError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(ApiError);
    return error as ApiError;
  }
  throw new Error("expected an ApiError");
}

describe("offline: resolveCustomFields", () => {
  it("adds every field without an id, in array order, with fresh ids and flags defaulting to false", () => {
    const fields = resolveCustomFields([], [desired({ name: "Colour" }), desired({ name: "Size", publish_on_documents: true })]);
    expect(fields).toEqual([
      { id: expect.stringMatching(UUID), name: "Colour", displayOnInventoryList: false, publishOnDocuments: false },
      { id: expect.stringMatching(UUID), name: "Size", displayOnInventoryList: false, publishOnDocuments: true },
    ]);
    expect(fields[0]!.id).not.toBe(fields[1]!.id);
  });

  it("an empty desired list deletes every field", () => {
    expect(resolveCustomFields([stored("A"), stored("B")], [])).toEqual([]);
  });

  it("keeps fields named by id, adds fields without id, deletes fields left out; order follows the array", () => {
    const [a, b, c] = [stored("A"), stored("B"), stored("C")];
    const fields = resolveCustomFields([a!, b!, c!], [desired({ id: c!.id, name: "C2" }), desired({ name: "D" }), desired({ id: a!.id, name: "A" })]);
    expect(fields.map((f) => f.name)).toEqual(["C2", "D", "A"]);
    expect(fields[0]!.id).toBe(c!.id);
    expect(fields[2]!.id).toBe(a!.id);
    expect(fields[1]!.id).toMatch(UUID);
    expect([a!.id, b!.id, c!.id]).not.toContain(fields[1]!.id);
    expect(fields.map((f) => f.id)).not.toContain(b!.id);
  });

  it("a kept field takes the flags sent with it", () => {
    const a = stored("A", { displayOnInventoryList: false, publishOnDocuments: true });
    const [field] = resolveCustomFields([a], [desired({ id: a.id, name: "A", display_on_inventory_list: true, publish_on_documents: false })]);
    expect(field).toEqual({ id: a.id, name: "A", displayOnInventoryList: true, publishOnDocuments: false });
  });

  it("a kept field keeps a flag left out (spec part 1, 4.2: an id keeps the field); a renamed one too", () => {
    const a = stored("A", { displayOnInventoryList: true, publishOnDocuments: true });
    const [field] = resolveCustomFields([a], [desired({ id: a.id, name: "A renamed", publish_on_documents: false })]);
    expect(field).toEqual({ id: a.id, name: "A renamed", displayOnInventoryList: true, publishOnDocuments: false });
  });

  it("does not modify the stored list", () => {
    const existing = [stored("A"), stored("B")];
    const copy = structuredClone(existing);
    resolveCustomFields(existing, [desired({ id: existing[1]!.id, name: "B2" }), desired({ name: "C" })]);
    expect(existing).toEqual(copy);
  });

  it("an id that is not a field of this category is 422 validation_failed at custom_fields[i].id", () => {
    const a = stored("A");
    const error = thrown(() =>
      resolveCustomFields([a], [desired({ id: a.id, name: "A" }), desired({ name: "New" }), desired({ id: randomUUID(), name: "X" })]),
    );
    expect(error.statusCode).toBe(422);
    expect(error.code).toBe("validation_failed");
    expect(error.type).toBe("invalid_request_error");
    expect(error.param).toBe("custom_fields[2].id");
    expect(error.details).toEqual([{ param: "custom_fields[2].id", code: "not_found", message: expect.any(String) }]);
  });

  it("an id of another category's field is rejected like an unknown id", () => {
    const other = stored("Elsewhere");
    const error = thrown(() => resolveCustomFields([stored("Mine")], [desired({ id: other.id, name: "Elsewhere" })]));
    expect(error.param).toBe("custom_fields[0].id");
  });

  it("ids on a new category (no fields yet) are rejected", () => {
    const error = thrown(() => resolveCustomFields([], [desired({ name: "A" }), desired({ id: "whatever", name: "B" })]));
    expect(error.param).toBe("custom_fields[1].id");
  });

  it("reports every bad id, one detail each", () => {
    const error = thrown(() => resolveCustomFields([], [desired({ id: "x", name: "A" }), desired({ name: "B" }), desired({ id: "y", name: "C" })]));
    expect(error.details?.map((d) => d.param)).toEqual(["custom_fields[0].id", "custom_fields[2].id"]);
  });

  it("the same id twice is rejected at its second position", () => {
    const a = stored("A");
    const error = thrown(() => resolveCustomFields([a], [desired({ id: a.id, name: "A" }), desired({ id: a.id, name: "A again" })]));
    expect(error.statusCode).toBe(422);
    expect(error.details).toEqual([{ param: "custom_fields[1].id", code: "duplicate", message: expect.any(String) }]);
  });
});

describe("offline: parseParentFilter", () => {
  it("no value means no filter", () => {
    expect(parseParentFilter(undefined)).toBeUndefined();
  });

  it("`root` selects root categories", () => {
    expect(parseParentFilter("root")).toBe("root");
  });

  it("a UUID selects its direct children (lower-cased)", () => {
    const id = randomUUID();
    expect(parseParentFilter(id)).toBe(id);
    expect(parseParentFilter(id.toUpperCase())).toBe(id);
  });

  it.each([["garbage"], [""], ["123"], ["root "], ["roots"], ["3f0c8f9e-6a53-4f0a-9a57-0b5e1b1c2d3"], ["3f0c8f9e6a534f0a9a570b5e1b1c2d3e0"]])(
    "%j is 422 invalid_query_parameter naming parent_id",
    (value) => {
      const error = thrown(() => parseParentFilter(value));
      expect(error.statusCode).toBe(422);
      expect(error.type).toBe("invalid_request_error");
      expect(error.code).toBe("invalid_query_parameter");
      expect(error.param).toBe("parent_id");
    },
  );
});

describe("offline: presentItemCategory", () => {
  const base = (overrides: Partial<ItemCategoryItem> = {}): ItemCategoryItem => ({
    accountId: randomUUID(),
    categoryId: randomUUID(),
    name: "Tools",
    parentId: "root",
    inventoryType: "quantity",
    weight: 7,
    childCount: 2,
    customFields: [],
    createdAt: "2024-01-01T00:00:00.000Z",
    updatedAt: "2024-01-02T00:00:00.000Z",
    ...overrides,
  });

  it("a root category has parent_id null and exactly the spec's fields", () => {
    const category = base();
    const resource = presentItemCategory(category);
    expect(resource).toEqual({
      id: category.categoryId,
      object: "item_category",
      name: "Tools",
      parent_id: null,
      inventory_type: "quantity",
      custom_fields: [],
    });
    expect(Object.keys(resource).sort()).toEqual(["custom_fields", "id", "inventory_type", "name", "object", "parent_id"]);
  });

  it("a child category shows its parent's id", () => {
    const parentId = randomUUID();
    const resource = presentItemCategory(base({ parentId, inventoryType: "unique" }));
    expect(resource.parent_id).toBe(parentId);
    expect(resource.inventory_type).toBe("unique");
  });

  it("numbers custom fields 1, 2, 3 in stored order with their flags", () => {
    const fields = [
      stored("A", { displayOnInventoryList: true }),
      stored("B", { publishOnDocuments: true }),
      stored("C", { displayOnInventoryList: true, publishOnDocuments: true }),
    ];
    expect(presentItemCategory(base({ customFields: fields })).custom_fields).toEqual([
      { id: fields[0]!.id, name: "A", display_order: 1, display_on_inventory_list: true, publish_on_documents: false },
      { id: fields[1]!.id, name: "B", display_order: 2, display_on_inventory_list: false, publish_on_documents: true },
      { id: fields[2]!.id, name: "C", display_order: 3, display_on_inventory_list: true, publish_on_documents: true },
    ]);
  });

  it("a record without stored fields has an empty list", () => {
    expect(presentItemCategory(base({ customFields: undefined })).custom_fields).toEqual([]);
  });

  it("leaks no storage attributes", () => {
    const text = JSON.stringify(presentItemCategory(base()));
    for (const internal of ["accountId", "weight", "childCount", "createdAt", "updatedAt", "categoryId", "parentId"]) {
      expect(text).not.toContain(internal);
    }
  });
});
