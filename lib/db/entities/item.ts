import { Entity } from "electrodb";

/**
 * Items, their variations and their stock rows share one partition (collection `itemTree`):
 * one Query reads an item with everything that its figures are summed from.
 *
 * The item record also carries `stock`, the sums of its rows per location (so that lists read
 * items alone), and `stockVersion`, which every stock change moves on condition that it is
 * unchanged: the stock changes of one item are serialised exactly and none is ever lost, and
 * balances can be written as computed values. Only `lib/domain/inventory.ts` writes these.
 */
export const Item = new Entity({
  model: { entity: "item", version: "1", service: "inv" },
  attributes: {
    accountId: { type: "string", required: true, readOnly: true },
    itemId: { type: "string", required: true, readOnly: true },
    number: { type: "number", required: true, readOnly: true },
    name: { type: "string", required: true },
    nameKey: { type: "string", required: true },
    /** Lower-cased SKU (and variation SKUs), for `q`. */
    skuKey: { type: "string" },
    description: { type: "string" },
    sku: { type: "string" },
    barcode: { type: "string" },
    serialNumber: { type: "string" },
    categoryId: { type: "string" },
    /** `categoryId` or "none": the partition of the by-category index. */
    categoryKey: { type: "string", required: true, default: "none" },
    inventoryType: { type: ["quantity", "unique"] as const, required: true },
    locationId: { type: "string" },
    unitId: { type: "number" },
    unitName: { type: "string" },
    /** Money as four-decimal strings. */
    price: { type: "string" },
    cost: { type: "string" },
    threshold: { type: "number", required: true, default: 0 },
    published: { type: "boolean", required: true, default: false },
    archived: { type: "boolean", required: true, default: false },
    sold: { type: "boolean", required: true, default: false },
    /** Documents referencing the item (deletion is refused while > 0). */
    documentCount: { type: "number", required: true, default: 0 },
    variationCount: { type: "number", required: true, default: 1 },
    adjustmentCount: { type: "number", required: true, default: 0 },
    stockVersion: { type: "number", required: true, default: 0 },
    /** locationId -> {onHand, reserved, incoming, inTransit}: the sums of the item's rows there. */
    stock: { type: "any", required: true, default: () => ({}) },
    /** Moving average unit cost of stock received or built (four-decimal string). */
    averageCost: { type: "string" },
    customFieldValues: {
      type: "list",
      items: { type: "map", properties: { id: { type: "string", required: true }, value: { type: "string", required: true } } },
    },
    createdAt: { type: "string", required: true, readOnly: true },
    updatedAt: { type: "string", required: true },
  },
  indexes: {
    primary: {
      collection: "itemTree",
      pk: { field: "pk", composite: ["accountId", "itemId"] },
      sk: { field: "sk", composite: [] },
    },
    byName: {
      index: "gsi1",
      pk: { field: "gsi1pk", composite: ["accountId"] },
      sk: { field: "gsi1sk", composite: ["nameKey", "itemId"] },
    },
    byCategory: {
      index: "gsi2",
      pk: { field: "gsi2pk", composite: ["accountId", "categoryKey"] },
      sk: { field: "gsi2sk", composite: ["nameKey", "itemId"] },
    },
  },
});

/** A variation of an item; a plain item has one base variation with empty `values`. */
export const ItemVariation = new Entity({
  model: { entity: "itemvariation", version: "1", service: "inv" },
  attributes: {
    accountId: { type: "string", required: true, readOnly: true },
    itemId: { type: "string", required: true, readOnly: true },
    variationId: { type: "string", required: true, readOnly: true },
    variationNumber: { type: "number", required: true, readOnly: true },
    /** Label -> value, e.g. {"Size": "M", "Colour": "Red"}. */
    values: { type: "any", required: true },
    sku: { type: "string" },
    barcode: { type: "string" },
    unitPriceOverride: { type: "string" },
    unitCostOverride: { type: "string" },
    createdAt: { type: "string", required: true, readOnly: true },
    updatedAt: { type: "string", required: true },
  },
  indexes: {
    primary: {
      collection: "itemTree",
      pk: { field: "pk", composite: ["accountId", "itemId"] },
      sk: { field: "sk", composite: ["variationId"] },
    },
  },
});

/**
 * The stock of one variation at one location (an item-variation-location row). Created by the
 * first stock change there; `ivlId` comes from the account's sequence and never changes.
 */
export const StockRow = new Entity({
  model: { entity: "stockrow", version: "1", service: "inv" },
  attributes: {
    accountId: { type: "string", required: true, readOnly: true },
    itemId: { type: "string", required: true, readOnly: true },
    variationId: { type: "string", required: true, readOnly: true },
    locationId: { type: "string", required: true, readOnly: true },
    ivlId: { type: "number", required: true, readOnly: true },
    zoneId: { type: "string" },
    onHand: { type: "number", required: true, default: 0 },
    reserved: { type: "number", required: true, default: 0 },
    incoming: { type: "number", required: true, default: 0 },
    inTransit: { type: "number", required: true, default: 0 },
    createdAt: { type: "string", required: true, readOnly: true },
    updatedAt: { type: "string", required: true },
  },
  indexes: {
    primary: {
      collection: "itemTree",
      pk: { field: "pk", composite: ["accountId", "itemId"] },
      sk: { field: "sk", composite: ["variationId", "locationId"] },
    },
  },
});

/**
 * One stock change of one row: who, when, why, the source (document or adjustment), the
 * deltas and the balances after. Written in the same transaction as the balance it changes.
 * Stored in the item's partition outside `itemTree`, newest last per source type.
 */
export const StockHistory = new Entity({
  model: { entity: "stockhistory", version: "1", service: "inv" },
  attributes: {
    accountId: { type: "string", required: true, readOnly: true },
    itemId: { type: "string", required: true, readOnly: true },
    sourceType: { type: "string", required: true, readOnly: true },
    entryId: { type: "string", required: true, readOnly: true },
    at: { type: "string", required: true, readOnly: true },
    sourceId: { type: "string" },
    journalId: { type: "string", required: true },
    variationId: { type: "string", required: true },
    locationId: { type: "string", required: true },
    ivlId: { type: "number", required: true },
    userId: { type: "string" },
    reason: { type: "string" },
    onHandDelta: { type: "number", required: true, default: 0 },
    reservedDelta: { type: "number", required: true, default: 0 },
    incomingDelta: { type: "number", required: true, default: 0 },
    inTransitDelta: { type: "number", required: true, default: 0 },
    onHandAfter: { type: "number", required: true },
    reservedAfter: { type: "number", required: true },
    incomingAfter: { type: "number", required: true },
    inTransitAfter: { type: "number", required: true },
  },
  indexes: {
    primary: {
      pk: { field: "pk", composite: ["accountId", "itemId"] },
      sk: { field: "sk", composite: ["sourceType", "at", "entryId"] },
    },
  },
});

/**
 * A journal of stock changes too large for one transaction: written (pending) with its
 * document, then applied in chunks. `appliedChunks` makes each chunk apply exactly once.
 */
export const StockJournal = new Entity({
  model: { entity: "stockjournal", version: "1", service: "inv" },
  attributes: {
    accountId: { type: "string", required: true, readOnly: true },
    journalId: { type: "string", required: true, readOnly: true },
    status: { type: ["pending", "applied"] as const, required: true, default: "pending" },
    sourceType: { type: "string", required: true },
    sourceId: { type: "string" },
    userId: { type: "string" },
    reason: { type: "string" },
    /** The changes, as JSON (up to a few hundred rows: far below the 400 KB item limit). */
    changes: { type: "string", required: true },
    appliedChunks: { type: "set", items: "number" },
    createdAt: { type: "string", required: true, readOnly: true },
    updatedAt: { type: "string", required: true },
  },
  indexes: {
    primary: {
      pk: { field: "pk", composite: ["accountId", "journalId"] },
      sk: { field: "sk", composite: [] },
    },
  },
});

/** A unit of measure (`unit_id` is an integer from the account's sequence). */
export const Unit = new Entity({
  model: { entity: "unit", version: "1", service: "inv" },
  attributes: {
    accountId: { type: "string", required: true, readOnly: true },
    unitId: { type: "number", required: true, readOnly: true },
    name: { type: "string", required: true },
    createdAt: { type: "string", required: true, readOnly: true },
  },
  indexes: {
    primary: {
      pk: { field: "pk", composite: ["accountId"] },
      sk: { field: "sk", composite: ["unitId"] },
    },
  },
});

/** A kit definition: an assembled item made of component items (created by operators). */
export const Kit = new Entity({
  model: { entity: "kit", version: "1", service: "inv" },
  attributes: {
    accountId: { type: "string", required: true, readOnly: true },
    kitId: { type: "string", required: true, readOnly: true },
    itemId: { type: "string", required: true },
    method: { type: ["manual", "automatic"] as const, required: true, default: "manual" },
    components: {
      type: "list",
      required: true,
      items: {
        type: "map",
        properties: { itemId: { type: "string", required: true }, quantity: { type: "number", required: true } },
      },
    },
    createdAt: { type: "string", required: true, readOnly: true },
    updatedAt: { type: "string", required: true },
  },
  indexes: {
    primary: {
      pk: { field: "pk", composite: ["accountId", "kitId"] },
      sk: { field: "sk", composite: [] },
    },
  },
});

/**
 * Inventory sequences and item counts, apart from the party counters so that stock postings
 * and customer creation never contend. `items_<archived><sold>` count items by status.
 */
export const InventoryCounters = new Entity({
  model: { entity: "inventorycounters", version: "1", service: "inv" },
  attributes: {
    accountId: { type: "string", required: true, readOnly: true },
    itemSeq: { type: "number" },
    ivlSeq: { type: "number" },
    unitSeq: { type: "number" },
    items_00: { type: "number" },
    items_01: { type: "number" },
    items_10: { type: "number" },
    items_11: { type: "number" },
  },
  indexes: {
    primary: {
      pk: { field: "pk", composite: ["accountId"] },
      sk: { field: "sk", composite: [] },
    },
  },
});
