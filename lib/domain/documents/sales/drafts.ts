import type { IdempotencyCompletion } from "../../../core/idempotency.js";
import type { DocumentItem, PartyItem } from "../../../db/service.js";
import type { TransactionBuilder } from "../../../db/transactions.js";
import { money, rate } from "../../common/money.js";
import type { CustomerActivity, OwnerCountsMove } from "./insert.js";
import type { IssueDateZone, LineSpec, SalesCreateRequest, SalesLine } from "./model.js";

/**
 * Drafts: sales orders and invoices built by other features (estimate conversions) from given
 * values, and how a draft becomes the same create request as an API create.
 */

/** A line of a draft: values as the source document stores them (prices, taxes, names). */
export interface DraftLine {
  /** Inventory lines: the item (and optionally its stock row); absent for service lines. */
  itemId?: string;
  ivlId?: number;
  /** Its variation (an estimate's line placed by variation alone has no row yet). */
  variationId?: string;
  /** The line's stored name (inventory lines default to the item's). */
  name?: string;
  /** The line's stored description (absent or null: none). */
  description?: string | null;
  quantity: number;
  /** Four-decimal selling price. */
  unitPrice: string;
  /** Four-decimal cost snapshot (inventory lines default to the item's). */
  unitCost?: string;
  /** Three-decimal percentages (tax rates default to the customer's). */
  discountPercent?: string;
  taxRate?: string;
  tax2Rate?: string;
}

/**
 * Header values and lines of a document another feature asks this one to build (an estimate
 * converted into an invoice or a sales order). Absent values take the same defaults as the API
 * create (issue date today in the caller's time zone, the account's payment terms, ...).
 */
export interface SalesDraft {
  customerId: string;
  /** Default: the caller. */
  salespersonId?: string;
  name?: string;
  issueDate?: string;
  /** Whose today a missing issue date is: the caller's zone (else the account's) by default. */
  issueDateZone?: IssueDateZone;
  expiryDate?: string;
  purchaseOrderNumber?: string;
  attention?: string;
  shippingAddress?: string;
  publicNote?: string;
  paymentTerms?: string;
  /** Four-decimal strings; discount three decimals. */
  shippingFee?: string;
  shippingCost?: string;
  discountPercent?: string;
  /** Values of custom fields of the new document's own kind (checked like an API create). */
  customFieldValues?: { custom_field_id: string; value: string }[];
  /** The estimate converted (shown as `source_estimate`). */
  sourceEstimate?: { id: string; number: number };
  /** Sales orders: the order's location (default as for the API create) and packing-list note. */
  locationId?: string;
  packingListNote?: string;
  /** Invoices: the custom invoice number. */
  customNumber?: string;
  lines: DraftLine[];
}

/** Options of a draft create: the caller's transaction items and idempotent outcome. */
export interface DraftOptions {
  /** The stored outcome of the caller's request (its response is the new document, 201). */
  completion?: IdempotencyCompletion;
  /**
   * Items of the caller written in the SAME transaction (e.g. the estimate's close, conditioned on
   * its revision). `activity` is what the new document moves on its customer.
   */
  extra?: (tx: TransactionBuilder, header: DocumentItem, lines: readonly SalesLine[], activity: CustomerActivity, customer: PartyItem) => void;
  /** Accept a prospect as the customer (the caller converts it in `extra`). */
  allowProspect?: boolean;
  /**
   * `caller`: the caller writes the customer's item in `extra` (a prospect's conversion) and
   * must apply `activity` there (`addDocumentActivity` shows how); otherwise this function does.
   */
  customerActivity?: "caller";
  /** See `NewSalesDocument.ownerCounts`. */
  ownerCounts?: (customer: PartyItem) => OwnerCountsMove | undefined;
}

/** A draft's lines as line specs (its prices are taken as given: the source already checked them). */
export const draftLineSpecs = (lines: readonly DraftLine[]): LineSpec[] =>
  lines.map((line, index) => ({
    index,
    itemId: line.itemId,
    ivlId: line.ivlId,
    variationId: line.ivlId === undefined ? line.variationId : undefined,
    name: line.name,
    description: line.description ?? null,
    quantity: line.quantity,
    unitPrice: money(line.unitPrice),
    unitCost: line.unitCost === undefined ? undefined : money(line.unitCost),
    discountPercent: line.discountPercent === undefined ? undefined : rate(line.discountPercent),
    taxRate: line.taxRate === undefined ? undefined : rate(line.taxRate),
    tax2Rate: line.tax2Rate === undefined ? undefined : rate(line.tax2Rate),
  }));

/** A draft's header values in request form (so a draft create and an API create share one path). */
export const draftRequestFields = (draft: SalesDraft): Record<string, unknown> => ({
  name: draft.name,
  issue_date: draft.issueDate,
  expiry_date: draft.expiryDate,
  purchase_order_number: draft.purchaseOrderNumber,
  attention: draft.attention,
  shipping_address: draft.shippingAddress,
  public_note: draft.publicNote,
  // Copied as the estimate has them: none stays none (not the account's default).
  payment_terms: draft.paymentTerms ?? null,
  shipping_fee: draft.shippingFee,
  shipping_cost: draft.shippingCost,
  discount_percent: draft.discountPercent,
  custom_field_values: draft.customFieldValues,
  location_id: draft.locationId,
  packing_list_note: draft.packingListNote,
  custom_invoice_number: draft.customNumber,
});

/** A draft as a create request: its fields in request form, its lines as given. */
export function draftCreateRequest(draft: SalesDraft): SalesCreateRequest {
  const specs = draftLineSpecs(draft.lines);
  return {
    customerId: draft.customerId,
    fields: draftRequestFields(draft),
    specs: () => specs,
    salespersonId: draft.salespersonId,
    sourceEstimate: draft.sourceEstimate,
    issueDateZone: draft.issueDateZone,
  };
}
