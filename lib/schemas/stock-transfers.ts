import * as z from "zod";
import { type Infer, lazy } from "./lazy.js";
import { blankAsNull, isoDate, listEnvelope, optionalText, text, uuid } from "./common.js";
import { quantityInput } from "./amounts.js";
import { dateOut, documentListQuery, issueDateFilters, lineUpdateOf, nullableText, statusIdOut, statusIdQuery, timestampsOut } from "./documents.js";

/** Stock transfers (spec part 2, sections 2.2, 3.2 and 4.2). */

export const MAX_TRANSFER_LINES = 100;

const lineFields = lazy(() => ({
  item_id: uuid().meta({ description: "An active item of the account stocked at the origin" }),
  quantity: quantityInput({ positive: true, description: "Positive, at most 4 decimals; unique items are stored as 1" }),
  item_variation_location_id: z.int().min(1).max(2_147_483_647).optional().meta({ description: "For variation items: a stock row of the item at the origin" }),
  description: optionalText(4000).meta({ description: 'Omitted, the item\'s description applies; null or "" clears it' }),
}));

export const stockTransferLineInput = lazy(() => z.strictObject(lineFields()).meta({ id: "StockTransferLineCreate" }));
export const stockTransferLineUpdate = lazy(() =>
  lineUpdateOf("StockTransferLineUpdate", lineFields(), "An existing line to keep (and update); omit to add a line"),
);
export type StockTransferLineBody = Infer<typeof stockTransferLineUpdate>;

const shippingFields = lazy(() => ({
  estimated_arrival_date: blankAsNull(isoDate()).meta({ description: 'YYYY-MM-DD; null or "" clears it' }),
  shipping_provider: optionalText(255),
  shipping_tracking_code: optionalText(255),
}));

export const stockTransferCreateBody = lazy(() =>
  z
    .strictObject({
      origin_location_id: uuid().meta({ description: "Active location the stock leaves" }),
      destination_location_id: uuid().meta({ description: "Active location the stock goes to" }),
      lines: z.array(stockTransferLineInput()).min(1).max(MAX_TRANSFER_LINES),
      ...shippingFields(),
    })
    .meta({ id: "StockTransferCreate" }),
);
export type StockTransferCreateBody = Infer<typeof stockTransferCreateBody>;

export const stockTransferUpdateBody = lazy(() =>
  z
    .strictObject({
      issue_date: isoDate().optional(),
      lines: z
        .array(stockTransferLineUpdate())
        .min(1)
        .max(MAX_TRANSFER_LINES)
        .optional()
        .meta({ description: "The complete desired list: an existing `id` keeps that line, no `id` adds one, omitted lines are removed." }),
      ...shippingFields(),
    })
    .meta({ id: "StockTransferUpdate" }),
);
export type StockTransferUpdateBody = Infer<typeof stockTransferUpdateBody>;

export const stockTransferSendBody = lazy(() =>
  z
    .strictObject({ date_sent: isoDate().optional().meta({ description: "Default: today in the user's time zone" }), ...shippingFields() })
    .meta({ id: "StockTransferSend" }),
);
export type StockTransferSendBody = Infer<typeof stockTransferSendBody>;

export const stockTransferReceiveBody = lazy(() =>
  z
    .strictObject({ date_received: isoDate().optional().meta({ description: "Default: today in the user's time zone" }), ...shippingFields() })
    .meta({ id: "StockTransferReceive" }),
);
export type StockTransferReceiveBody = Infer<typeof stockTransferReceiveBody>;

const locationRef = lazy(() => z.object({ id: uuid(), name: z.string().nullable() }).meta({ id: "LocationReference" }));

export const stockTransferLine = lazy(() =>
  z
    .object({
      id: uuid(),
      object: z.literal("stock_transfer_line"),
      item_id: uuid(),
      item_variation_location_id: z.int().min(1),
      name: z.string(),
      description: nullableText(),
      variation: z.string().meta({
        description: 'The variation\'s values for display, e.g. "Size: M, Colour: Red"; "" for an item without variations (a display string, never null)',
      }),
      quantity: z.number(),
      unit_id: z.int().min(1).nullable(),
    })
    .meta({ id: "StockTransferLine" }),
);

const shape = lazy(() => ({
  id: uuid(),
  object: z.literal("stock_transfer"),
  stock_transfer_number: z.int().min(1),
  assigned_user_id: z.string().nullable(),
  status_id: statusIdOut("stock_transfer"),
  status: z.enum(["Pending", "In Transit", "Transferred"]).nullable(),
  origin_location: locationRef(),
  destination_location: locationRef(),
  issue_date: dateOut(),
  estimated_arrival_date: dateOut(),
  date_sent: dateOut(),
  date_received: dateOut(),
  shipping_provider: nullableText(),
  shipping_tracking_code: nullableText(),
  ...timestampsOut(),
}));

export const stockTransferListEntry = lazy(() => z.object(shape()).meta({ id: "StockTransferListEntry" }));
export const stockTransferResource = lazy(() => z.object({ ...shape(), lines: z.array(stockTransferLine()) }).meta({ id: "StockTransfer" }));
export const stockTransferList = lazy(() => listEnvelope(stockTransferListEntry(), "StockTransferList"));
export const deletedStockTransfer = lazy(() =>
  z.object({ id: uuid(), object: z.literal("stock_transfer"), deleted: z.literal(true) }).meta({ id: "DeletedStockTransfer" }),
);

export const stockTransferListQuery = lazy(() =>
  documentListQuery().extend({
    status_id: statusIdQuery("stock_transfer"),
    q: text(255).optional().meta({ description: "The exact transfer number, or part of the tracking code" }),
    assigned_user_id: uuid().optional(),
    origin_location_id: uuid().optional(),
    destination_location_id: uuid().optional(),
    ...issueDateFilters(),
  }),
);
export type StockTransferListQuery = Infer<typeof stockTransferListQuery>;

export const stockTransferPath = lazy(() => z.object({ stock_transfer_id: uuid() }));
