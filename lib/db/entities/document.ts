import { TIMESTAMP_ATTRIBUTES } from "./timestamps.js";
import { Entity } from "electrodb";
import { LISTING_ATTRIBUTES } from "./listing-attributes.js";

/**
 * The header of a document: purchase order, stock transfer, estimate, sales order or invoice
 * (`kind`). It shares its partition (collection `documentTree`) with its line pages
 * (`DocumentLines`), payments and fulfillments, so ONE Query reads a document with everything it
 * shows; the header, the line pages and the counters it moves are written in one transaction
 * (`lib/db/documents.ts`).
 *
 * - `gsi1`: the account's documents of a kind by number (lists are newest first);
 * - `gsi2`: one assigned user's documents of a kind by number (users without
 *   `records.view_all` see only the documents assigned to them);
 * - `lx1`..`lx7`: the list indexes (filters; `lib/db/listing.ts`).
 * Money is stored as four-decimal strings, rates as three-decimal strings. `itemIds` (the
 * distinct items the lines reference) lets the stream processor keep each item's
 * `documentCount`. `revision` changes on every write (optimistic concurrency).
 */
export const DOCUMENT_KINDS = ["purchase_order", "stock_transfer", "estimate", "sales_order", "invoice"] as const;
export type DocumentKind = (typeof DOCUMENT_KINDS)[number];

export const documentEntity = () =>
  new Entity({
    model: { entity: "document", version: "1", service: "inv" },
    attributes: {
      accountId: { type: "string", required: true, readOnly: true },
      documentId: { type: "string", required: true, readOnly: true },
      kind: { type: DOCUMENT_KINDS, required: true, readOnly: true },
      number: { type: "number", required: true, readOnly: true },
      /** Zero-padded `number`: the sort key of the by-number indexes. */
      numberKey: { type: "string", required: true, readOnly: true },
      revision: { type: "string", required: true },
      status: { type: "string", required: true },
      statusId: { type: "number", required: true },
      assignedUserId: { type: "string", required: true },
      customNumber: { type: "string" },
      name: { type: "string" },
      /** The customer, prospect or supplier, with its name as stored on the document. */
      partyId: { type: "string" },
      partyName: { type: "string" },
      partyKind: { type: ["customer", "prospect", "supplier"] as const },
      locationId: { type: "string" },
      /**
       * Where the document is, for the location rule (`lib/domain/common/location-access.ts`): the one
       * location its header and lines name, `none`, or `several`; derived on every write
       * (`addDocumentWrite`), so lists can keep a restricted user's documents in the Query.
       */
      locationScope: { type: "string" },
      /** Snapshots taken when the document was last written (detail responses read no other record). */
      locationName: { type: "string" },
      partyDetails: { type: "any" },
      taxLabel: { type: "string" },
      tax2Label: { type: "string" },
      originLocationId: { type: "string" },
      destinationLocationId: { type: "string" },
      issueDate: { type: "string" },
      expiryDate: { type: "string" },
      dateSent: { type: "string" },
      dateReceived: { type: "string" },
      dateRequested: { type: "string" },
      dateNeeded: { type: "string" },
      dateFullyPaid: { type: "string" },
      estimatedArrivalDate: { type: "string" },
      requestedFrom: { type: "string" },
      attention: { type: "string" },
      shippingAddress: { type: "string" },
      publicNote: { type: "string" },
      packingListNote: { type: "string" },
      paymentTerms: { type: "string" },
      shippingProvider: { type: "string" },
      shippingTrackingCode: { type: "string" },
      /** The customer's own order reference (estimates, sales orders, invoices). */
      purchaseOrderNumber: { type: "string" },
      discountPercent: { type: "string", required: true, default: "0.000" },
      subtotal: { type: "string", required: true, default: "0.0000" },
      preDiscountTotal: { type: "string", required: true, default: "0.0000" },
      discountTotal: { type: "string", required: true, default: "0.0000" },
      shippingFee: { type: "string", required: true, default: "0.0000" },
      shippingCost: { type: "string", required: true, default: "0.0000" },
      tax: { type: "string", required: true, default: "0.0000" },
      tax2: { type: "string", required: true, default: "0.0000" },
      total: { type: "string", required: true, default: "0.0000" },
      /** Payments and refunds, as an exact integer of ten-thousandths (moved with ADD). */
      amountPaidMinor: { type: "number", required: true, default: 0 },
      paymentCount: { type: "number", required: true, default: 0 },
      customFieldValues: {
        type: "list",
        items: { type: "map", properties: { id: { type: "string", required: true }, value: { type: "string", required: true } } },
      },
      /** How many line pages the document has (pages 0..pageCount-1). */
      pageCount: { type: "number", required: true, default: 0 },
      lineCount: { type: "number", required: true, default: 0 },
      /** Distinct items referenced by the lines. */
      itemIds: { type: "set", items: "string" },
      /**
       * Estimates: the instant (ISO 8601, UTC) from which an Open estimate counts as Expired: the
       * start of the day after `expiryDate` in the account's time zone when it was written.
       */
      expiryInstant: { type: "string" },
      /** The document this one was converted into (an estimate closed as converted). */
      convertedTo: {
        type: "map",
        properties: {
          kind: { type: "string", required: true },
          id: { type: "string", required: true },
          number: { type: "number", required: true },
        },
      },
      /** Sales orders: drop shipment (service-controlled; false/absent unless set by the service). */
      dropShipped: { type: "boolean" },
      dropShipCustomerId: { type: "string" },
      dropShipAddress: { type: "string" },
      /**
       * Fulfilment and invoicing progress (percent numbers, absent = null): stored so lists and
       * details read no other record. A linked invoice holds its sales order's packed and shipped
       * percentages here (the sales order's pack and ship writes refresh them).
       */
      invoicedPercent: { type: "number" },
      packedPercent: { type: "number" },
      shippedPercent: { type: "number" },
      /**
       * Sales orders: what a list entry's edit and pack block reasons need of the lines, kept with
       * them (`withPackingFacts`): whether any line was packed or shipped, the locations of
       * inventory lines left to pack, and whether a service line is. Absent on orders last written
       * before them.
       */
      packingStarted: { type: "boolean" },
      unpackedLocationIds: { type: "list", items: { type: "string" } },
      unpackedServiceLines: { type: "boolean" },
      /** Sales orders: invoices created from the order (at most `MAX_ORDER_INVOICES` not cancelled). */
      invoiceCount: { type: "number" },
      /**
       * Sales orders: whether a live invoice carries the order's shipping fee and cost (its first
       * invoice takes them; its cancellation gives them back). Absent on orders written before:
       * carried once the order has an invoice.
       */
      shippingInvoiced: { type: "boolean" },
      linkedInvoiceIds: { type: "list", items: { type: "string" } },
      /** Sales orders: the linked invoices since cancelled (they no longer count toward the cap or follow packing). */
      cancelledInvoiceIds: { type: "list", items: { type: "string" } },
      /** Invoices created from a sales order, documents converted from an estimate. */
      sourceSalesOrderId: { type: "string" },
      sourceSalesOrderNumber: { type: "number" },
      sourceEstimateId: { type: "string" },
      sourceEstimateNumber: { type: "number" },
      /** Account settings as of the document's last write (details read no other record). */
      packingListsEnabled: { type: "boolean" },
      packingServiceItems: { type: "boolean" },
      /** Lower-cased searchable text (party name, custom number, name, tracking code). */
      searchText: { type: "string", required: true, default: "" },
      ...TIMESTAMP_ATTRIBUTES,
      /**
       * The list indexes' keys and facts (`documentListing` in `lib/db/documents.ts`), derived from
       * the attributes above on every write; never returned by reads.
       */
      ...LISTING_ATTRIBUTES,
      /** The estimate expiry index's keys (`estimateExpiryKeys` in `lib/db/estimate-expiries.ts`), derived on every write; never returned by reads. */
      ex1pk: { type: "string", hidden: true },
      ex1sk: { type: "string", hidden: true },
    },
    indexes: {
      primary: {
        collection: "documentTree",
        pk: { field: "pk", composite: ["accountId", "documentId"] },
        sk: { field: "sk", composite: [] },
      },
      byNumber: {
        index: "gsi1",
        pk: { field: "gsi1pk", composite: ["accountId", "kind"] },
        sk: { field: "gsi1sk", composite: ["numberKey"] },
      },
      byAssignee: {
        index: "gsi2",
        pk: { field: "gsi2pk", composite: ["accountId", "kind", "assignedUserId"] },
        sk: { field: "gsi2sk", composite: ["numberKey"] },
      },
    },
  });
