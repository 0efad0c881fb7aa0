import { describe, expect, it } from "vitest";
import type { Principal } from "../../auth/permissions.js";
import { ApiError } from "../../core/errors.js";
import type { ItemRecord, ItemVariationItem, StockRowItem } from "../../db/service.js";
import { categoryView, itemChanges, liveFieldValues, parseListQuery, presentItem, resolveVariation, withCostPermission } from "./item-model.js";

const LOCATION = "11111111-1111-4111-8111-111111111111";

const principal = (role: "owner" | "staff", permissions: string[] = [], assignedLocationId: string | null = null): Principal => ({
  accountId: "acct",
  userId: "user",
  role,
  permissions: new Set(permissions) as Principal["permissions"],
  assignedLocationId,
  timeZone: null,
  keyId: "key",
  keyHash: "",
  scopes: null,
});

/** Only what presenting an item reads. */
const item = (overrides: Partial<ItemRecord> = {}): ItemRecord =>
  ({
    itemId: "item-1",
    number: 7,
    name: "Bolt",
    inventoryType: "quantity",
    stock: { [LOCATION]: { onHand: 5, reserved: 2, incoming: 1, inTransit: 0 } },
    cost: "1.5000",
    ...overrides,
  }) as ItemRecord;

describe("offline: presentItem", () => {
  it("sums the stock and hides the cost without costs.view", () => {
    const staff = presentItem(item(), { principal: principal("staff"), categories: categoryView([]) });
    expect(staff).toMatchObject({ id: "item-1", item_number: 7, quantity: 5, quantity_available: 3, cost: null, status_id: 1, location_inventory: null });
    expect(presentItem(item(), { principal: principal("owner"), categories: categoryView([]) }).cost).toBe("1.5000");
  });

  it("shows a restricted user only its location's stock", () => {
    const elsewhere = principal("staff", [], "22222222-2222-4222-8222-222222222222");
    expect(presentItem(item(), { principal: elsewhere, categories: categoryView([]) }).quantity).toBe(0);
  });
});

describe("offline: itemChanges", () => {
  it("sets, clears and converts the fields sent, with their keys and references", () => {
    const changes = itemChanges({ name: "Nut", sku: "", price: 2, cost: null, location_id: LOCATION } as never, undefined, undefined);
    expect(changes.set).toMatchObject({ name: "Nut", nameKey: expect.any(String), price: "2.0000", locationId: LOCATION });
    expect(changes.remove).toEqual(expect.arrayContaining(["sku", "skuKey", "cost"]));
    expect(changes.references).toEqual([{ param: "location_id", kind: "location", id: LOCATION }]);
  });
});

describe("offline: withCostPermission", () => {
  it("refuses a cost without costs.view and drops a null one", () => {
    expect(() => withCostPermission(principal("staff"), { cost: "1" })).toThrow(ApiError);
    expect(withCostPermission(principal("staff"), { cost: null, name: "x" } as { cost: null; name: string })).toEqual({ name: "x" });
  });
});

describe("offline: parseListQuery", () => {
  it("checks the query parameters", () => {
    expect(() => parseListQuery(principal("owner"), { archived: "yes" })).toThrow(ApiError);
    expect(() => parseListQuery(principal("owner"), { ids: "not-a-uuid" })).toThrow(ApiError);
    const parsed = parseListQuery(principal("owner"), { archived: "all", include_sold: "true", q: " Bolt " });
    expect(parsed).toMatchObject({ filter: { includeArchived: true, includeSold: true }, needle: "bolt" });
  });
});

describe("offline: resolveVariation", () => {
  const variations = [{ variationId: "v1" }, { variationId: "v2" }] as ItemVariationItem[];
  const rows = [{ ivlId: 3, variationId: "v2", locationId: LOCATION }] as StockRowItem[];
  it("takes the row's variation, the one named, or the only one", () => {
    expect(resolveVariation(variations, rows, { location_id: LOCATION, quantity: 1, item_variation_location_id: 3 } as never)).toBe("v2");
    expect(resolveVariation(variations, rows, { location_id: LOCATION, quantity: 1, item_variation_id: "v1" } as never)).toBe("v1");
    expect(() => resolveVariation(variations, rows, { location_id: LOCATION, quantity: 1 } as never)).toThrow(ApiError);
    expect(resolveVariation(variations.slice(0, 1), [], { location_id: LOCATION, quantity: 1 } as never)).toBe("v1");
  });
});

describe("custom field values of deleted category fields", () => {
  it("are hidden wherever an item is shown; a category view gathers every category's deleted ids", () => {
    const view = categoryView([{ categoryId: "c1", name: "Electrics", deletedFieldIds: ["f-old"] }, undefined, { categoryId: "c2", name: "Kitchen" }]);
    expect(view.names.get("c2")).toBe("Kitchen");
    expect([...view.deletedFieldIds]).toEqual(["f-old"]);
    const values = [
      { id: "f-old", value: "230V" },
      { id: "f-live", value: "Type G" },
    ];
    expect(liveFieldValues(values, view.deletedFieldIds)).toEqual([{ id: "f-live", value: "Type G" }]);
    expect(liveFieldValues(undefined, view.deletedFieldIds)).toBeUndefined();
    expect(liveFieldValues(values, new Set())).toBe(values);
  });
});
