import { laterUpdatedAt } from "../../../core/clock.js";
import { NO_MONEY, accountToday, localToday, noCounters } from "../rules.js";
import { hasPermission, type Principal } from "../../../auth/permissions.js";
import { errors } from "../../../core/errors.js";
import type { Reference } from "../../../db/references.js";
import type { AccountItem, DocumentItem } from "../../../db/service.js";
import { customFieldWrite } from "../../common/custom-field-values.js";
import { money, rate } from "../../common/money.js";
import { newRevision } from "../../common/revisions.js";
import { partyDetailsOf, storedPartyName } from "../party-details.js";
import type { SalesContext, SalesCreateRequest, SalesKind, SalesLine } from "./model.js";

/**
 * Header rules of sales orders and invoices, without storage (spec 4.4 and 4.5; architecture
 * section 8): the fields a request sets or clears, the permission `shipping_cost` needs, the
 * snapshots a header carries (customer, account settings, items) and a new header's defaults.
 */

/** The header fields a create or an update sets from the request (null or "" clears a field). */
export function salesHeaderFields(
  input: Record<string, unknown>,
  map: readonly [string, keyof DocumentItem][],
): Partial<DocumentItem> & { cleared: (keyof DocumentItem)[] } {
  const set: Record<string, unknown> = {};
  const cleared: (keyof DocumentItem)[] = [];
  for (const [field, attribute] of map) {
    const value = input[field] as string | null | undefined;
    if (value === undefined) continue;
    if (value === null || value === "") cleared.push(attribute);
    else set[attribute] = value;
  }
  if (input.shipping_fee !== undefined) set.shippingFee = money(input.shipping_fee as string);
  if (input.shipping_cost !== undefined) set.shippingCost = money(input.shipping_cost as string);
  if (input.discount_percent !== undefined) set.discountPercent = rate(input.discount_percent as string);
  return { ...(set as Partial<DocumentItem>), cleared };
}

/**
 * The header an update asks for, before its totals: the request's fields set or cleared (an
 * issue date cannot be cleared), its custom field values (else the stored ones), a new revision
 * and a later `updated_at`. `references` are the custom fields' to check in the write.
 */
export function mergeSalesHeader(
  previous: DocumentItem,
  input: Record<string, unknown>,
  kind: Pick<SalesKind, "kind" | "revisionPrefix">,
  map: readonly [string, keyof DocumentItem][],
): { merged: DocumentItem; references: Reference[] | undefined } {
  const { cleared, ...set } = salesHeaderFields(input, map);
  const merged = { ...previous, ...set } as DocumentItem;
  for (const attribute of cleared) delete (merged as Record<string, unknown>)[attribute];
  if (!merged.issueDate) merged.issueDate = previous.issueDate;
  const customFields = input.custom_field_values === undefined ? undefined : customFieldWrite(input.custom_field_values as never, kind.kind);
  merged.customFieldValues = customFields ? customFields.values : previous.customFieldValues;
  merged.revision = newRevision(kind.revisionPrefix);
  merged.updatedAt = laterUpdatedAt(previous.updatedAt);
  return { merged, references: customFields?.references };
}

/** What a kind's new header starts with: its status, attributes of its own and its request fields. */
export interface NewHeaderRules {
  status: Pick<DocumentItem, "status" | "statusId">;
  /** Attributes only this kind starts with (a sales order's invoice count). */
  initial?: Partial<DocumentItem>;
  /** Request field -> header attribute. */
  map: readonly [string, keyof DocumentItem][];
}

/**
 * A new document's header before its totals (spec 4.4 and 4.5 create): the kind's status, the
 * caller (or the draft's salesperson) as salesperson, the request's fields, issue date today in
 * the caller's time zone unless given, the account's payment terms unless given, the custom
 * field values and the estimate it came from. `references` are the custom fields' to check.
 */
export function newSalesHeader(
  context: Pick<SalesContext, "principal" | "account">,
  kind: Pick<SalesKind, "kind" | "revisionPrefix">,
  rules: NewHeaderRules,
  request: SalesCreateRequest,
  documentId: string,
): { header: DocumentItem; references: Reference[] | undefined } {
  const { principal, account } = context;
  const { cleared, ...set } = salesHeaderFields(request.fields, rules.map);
  const customFields = request.fields.custom_field_values === undefined ? undefined : customFieldWrite(request.fields.custom_field_values as never, kind.kind);
  const header: DocumentItem = {
    ...blankHeader({
      accountId: principal.accountId,
      documentId,
      kind: kind.kind,
      revision: newRevision(kind.revisionPrefix),
      ...rules.status,
      assignedUserId: request.salespersonId ?? principal.userId,
    }),
    issueDate: set.issueDate ?? (request.issueDateZone === "account" ? accountToday(account) : localToday(principal, account)),
    ...set,
    // The account's terms when omitted (spec 4.4, 4.5); null or blank sent means none.
    paymentTerms: cleared.includes("paymentTerms") ? undefined : (set.paymentTerms ?? account.paymentTerms),
    customFieldValues: customFields?.values,
    ...rules.initial,
    ...(request.sourceEstimate ? { sourceEstimateId: request.sourceEstimate.id, sourceEstimateNumber: request.sourceEstimate.number } : {}),
  };
  if (!header.paymentTerms) delete header.paymentTerms;
  return { header, references: customFields?.references };
}

/** `shipping_cost` needs the unit-cost permission (spec 4.4 and 4.5): 403 without it. */
export function requireShippingCostPermission(principal: Principal, input: { shipping_cost?: unknown }): void {
  if (input.shipping_cost !== undefined && !hasPermission(principal, "costs.view")) {
    throw errors.permissionDenied("shipping_cost: setting the shipping cost requires the unit-cost permission (costs.view).", "shipping_cost");
  }
}

/** Snapshots of the customer, the account settings and the items a header carries. */
export function deriveSalesHeader(
  header: DocumentItem,
  context: Pick<SalesContext, "account" | "customer">,
  lines: readonly SalesLine[],
  searchParts: readonly (string | undefined)[],
): DocumentItem {
  const next: DocumentItem = withAccountSnapshot(
    {
      ...header,
      partyId: context.customer.partyId,
      partyName: storedPartyName(header, context.customer),
      partyKind: context.customer.kind,
      partyDetails: partyDetailsOf(context.customer),
    },
    context.account,
  );
  const itemIds = [...new Set(lines.flatMap((line) => (line.itemId ? [line.itemId] : [])))];
  if (itemIds.length > 0) next.itemIds = itemIds;
  else delete next.itemIds;
  next.searchText = [next.partyName, ...searchParts].filter(Boolean).join(" ").toLowerCase();
  return next;
}

/** A header with the account settings it shows (tax labels, packing settings) refreshed. */
export function withAccountSnapshot(header: DocumentItem, account: AccountItem): DocumentItem {
  const next: DocumentItem = { ...header, packingListsEnabled: account.packingListsEnabled, packingServiceItems: account.packingServiceItems };
  if (account.taxLabel) next.taxLabel = account.taxLabel;
  else delete next.taxLabel;
  if (account.tax2Label) next.tax2Label = account.tax2Label;
  else delete next.tax2Label;
  return next;
}

/** A new header's defaults (money zero, counters zero). */
export function blankHeader(
  fields: Pick<DocumentItem, "accountId" | "documentId" | "kind" | "revision" | "status" | "statusId" | "assignedUserId">,
): DocumentItem {
  const now = new Date().toISOString();
  return {
    ...fields,
    number: 0,
    numberKey: "",
    ...NO_MONEY,
    ...noCounters(now),
  } as DocumentItem;
}

/** The later of two `YYYY-MM-DD` dates (either may be absent). */
export const laterDate = (a: string | undefined, b: string | undefined): string | undefined => (!a ? b : !b ? a : a > b ? a : b);
