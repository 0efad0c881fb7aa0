import { TIMESTAMP_ATTRIBUTES } from "./timestamps.js";
import { Entity } from "electrodb";

/**
 * Items, their variations and their stock rows share one partition (collection `itemTree`):
 * one Query reads an item with everything that its figures are summed from.
 *
 * The item record also carries `stock`, the sums of its rows per location (so that lists read
 * items alone), and `stockVersion`, which every stock change moves on condition that it is
 * unchanged: the stock changes of one item are serialised exactly and none is ever lost, and
 * balances can be written as computed values. Only `lib/domain/inventory/service.ts` writes these.
 */
export const itemEntity = () =>
  new Entity({
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
      /**
       * A sold unique item: the document whose sale sold it (the ledger source id). Only that
       * document's reversal gives the unit back; another's finds it sold again since (unset on
       * items sold before it was kept: their reversals go by `sold` alone).
       */
      soldBy: { type: "string" },
      /** Documents referencing the item (deletion is refused while > 0). */
      documentCount: { type: "number", required: true, default: 0 },
      /**
       * Moved by every document write that starts referencing the item (`touchItems`), so an
       * item deletion in flight and such a write cannot both commit.
       */
      referenceTick: { type: "number" },
      /**
       * Until when (epoch ms) a document write may be committing a reference to the item that its
       * own transaction had no room to touch (`markReferencing`): a deletion waits for it.
       */
      referencingUntil: { type: "number" },
      /**
       * Kits the item takes part in (as the assembled item or a component), counted when the admin
       * CLI defines a kit: its deletion is refused while > 0 (a kit's builds must stay reversible).
       */
      kitCount: { type: "number" },
      variationCount: { type: "number", required: true, default: 1 },
      adjustmentCount: { type: "number", required: true, default: 0 },
      stockVersion: { type: "number", required: true, default: 0 },
      /** locationId -> {onHand, reserved, incoming, inTransit}: the sums of the item's rows there. */
      stock: { type: "any", required: true, default: () => ({}) },
      /**
       * The line index: the ids of the item's variations (by `variationNumber`) and, per stock
       * row (`ivlId`), its `variationId|locationId`. With them, documents read the variations and
       * rows their lines need by key (BatchGetItem, for any number of items at once) instead of
       * one Query per item. Written with the item (variations never change) and by the ledger
       * with every row it creates. Absent on items stored before it existed: those are read
       * whole (`readItemTree`).
       */
      variationIds: { type: "list", items: { type: "string" } },
      rowIndex: { type: "any" },
      /** Moving average unit cost of stock received or built (four-decimal string). */
      averageCost: { type: "string" },
      /**
       * journalId -> true: stock holds with deltas pending on this item's rows (see the stock row's
       * `pending`). Readers settle them first; absent (or empty) when none is pending.
       */
      pendingJournals: { type: "any" },
      customFieldValues: {
        type: "list",
        items: { type: "map", properties: { id: { type: "string", required: true }, value: { type: "string", required: true } } },
      },
      ...TIMESTAMP_ATTRIBUTES,
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
