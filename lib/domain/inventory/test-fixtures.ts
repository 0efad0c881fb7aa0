/**
 * Test support, imported only by the offline unit tests (never by the application): a sample
 * item record of one variation, nothing stocked, created and updated `at`, that a test adjusts
 * with `overrides`.
 */
import type { ItemRecord } from "../../db/service.js";

export function sampleItem(accountId: string, itemId: string, at: string, overrides: Partial<ItemRecord> = {}): ItemRecord {
  return {
    accountId,
    itemId,
    number: 1,
    name: "Item",
    nameKey: "item",
    categoryKey: "none",
    inventoryType: "quantity",
    threshold: 0,
    published: false,
    archived: false,
    sold: false,
    documentCount: 0,
    variationCount: 1,
    adjustmentCount: 0,
    stockVersion: 0,
    stock: {},
    createdAt: at,
    updatedAt: at,
    ...overrides,
  } as ItemRecord;
}
