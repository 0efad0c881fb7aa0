import { UNKNOWN_RECORD_MESSAGE, type ValidationDetail } from "../core/errors.js";
import type { CustomFieldKind } from "./entities/custom-field.js";
import { db } from "./service.js";
import type { Cancellation, TransactionBuilder, TransactionOp } from "./transactions.js";

/**
 * Account-owned references (spec part 1, section 2.1): a UUID in a request that is missing or
 * belongs to another account is 422 `validation_failed` with a detail naming the field, and
 * nothing about the other account shows. Written once for every writer:
 * - `checkReferences` adds one ConditionCheck per reference to the write's own transaction, so
 *   the reference is proven at the moment the write commits (no check-then-write race);
 * - `referenceDetails` turns the failed checks of a cancellation into validation details;
 * - `referenceDetail` is the same detail for a reference found missing by a read (when the
 *   writer needs the referenced record's data anyway);
 * - `missingReferences` proves the same references by reading, for requests that write
 *   nothing (previews) but must report what the write would refuse.
 */
export type ReferenceKind = "custom_field" | "customer_label" | "pricing_tier" | "item_category" | "unit" | "location";

export type Reference =
  | { param: string; kind: "custom_field"; id: string; recordKind: CustomFieldKind }
  | { param: string; kind: "customer_label" | "pricing_tier" | "item_category" | "location"; id: string }
  | { param: string; kind: "unit"; id: number };

const MESSAGES: Record<ReferenceKind | "record", string> = {
  custom_field: "is not a custom field of this record kind in this account.",
  customer_label: "does not exist in this account.",
  pricing_tier: "does not exist in this account.",
  item_category: "does not exist in this account.",
  unit: "does not exist in this account.",
  location: "is not an active location of this account.",
  record: UNKNOWN_RECORD_MESSAGE,
};

const LABEL_PREFIX = "ref:";

/** The label of a reference's item in a transaction: `ref:` + the request field's path. */
export const referenceLabel = (param: string): string => `${LABEL_PREFIX}${param}`;

function checkOp(tx: TransactionBuilder, accountId: string, reference: Reference): TransactionOp {
  const e = tx.entities;
  switch (reference.kind) {
    case "custom_field":
      return e.customField
        .check({ accountId, kind: reference.recordKind, customFieldId: reference.id })
        .where(({ customFieldId }, { exists }) => exists(customFieldId))
        .commit();
    case "customer_label":
      return e.customerLabel
        .check({ accountId, labelId: reference.id })
        .where(({ labelId }, { exists }) => exists(labelId))
        .commit();
    case "pricing_tier":
      return e.pricingTier
        .check({ accountId, pricingTierId: reference.id })
        .where(({ pricingTierId }, { exists }) => exists(pricingTierId))
        .commit();
    case "item_category":
      return e.itemCategory
        .check({ accountId, categoryId: reference.id })
        .where(({ categoryId }, { exists }) => exists(categoryId))
        .commit();
    case "unit":
      return e.unit
        .check({ accountId, unitId: reference.id })
        .where(({ unitId }, { exists }) => exists(unitId))
        .commit();
    case "location":
      return e.location
        .check({ accountId, locationId: reference.id })
        .where(({ active }, { eq }) => eq(active, true))
        .commit();
  }
}

/** Adds a ConditionCheck per reference (labelled by its field) to the write's transaction. */
export function checkReferences(tx: TransactionBuilder, accountId: string, references: readonly Reference[]): void {
  const checked = new Set<string>();
  for (const reference of references) {
    // One check per record, under its first field: a transaction may not name an item twice, and
    // keys match ids in any casing.
    const record = `${reference.kind}|${reference.kind === "custom_field" ? reference.recordKind : ""}|${String(reference.id).toLowerCase()}`;
    if (checked.has(record)) continue;
    checked.add(record);
    tx.add(referenceLabel(reference.param), checkOp(tx, accountId, reference), MESSAGES[reference.kind]);
  }
}

/**
 * Adds an item of the write that also proves a reference (for example the update that counts
 * a contact on a linked record, conditioned on the record existing): its failure reads as an
 * invalid reference of `param`.
 */
export function addReferencingOp(tx: TransactionBuilder, param: string, op: TransactionOp, message = MESSAGES.record): void {
  tx.add(referenceLabel(param), op, message);
}

/** The validation details of the failed reference items of a cancelled write (none if none failed). */
export function referenceDetails(cancellation: Cancellation | null): ValidationDetail[] {
  if (!cancellation) return [];
  return cancellation.failedUnder(LABEL_PREFIX).map((reason) => ({
    param: reason.label.slice(LABEL_PREFIX.length),
    code: "invalid_reference",
    message: reason.note ?? MESSAGES.record,
  }));
}

/** Whether a reference's record exists (and is usable) now: one strongly consistent GetItem. */
async function referenceExists(accountId: string, reference: Reference): Promise<boolean> {
  const e = db().entities;
  const options = { consistent: true } as const;
  switch (reference.kind) {
    case "custom_field":
      return Boolean((await e.customField.get({ accountId, kind: reference.recordKind, customFieldId: reference.id }).go(options)).data);
    case "customer_label":
      return Boolean((await e.customerLabel.get({ accountId, labelId: reference.id }).go(options)).data);
    case "pricing_tier":
      return Boolean((await e.pricingTier.get({ accountId, pricingTierId: reference.id }).go(options)).data);
    case "item_category":
      return Boolean((await e.itemCategory.get({ accountId, categoryId: reference.id }).go(options)).data);
    case "unit":
      return Boolean((await e.unit.get({ accountId, unitId: reference.id }).go(options)).data);
    case "location":
      return (await e.location.get({ accountId, locationId: reference.id }).go(options)).data?.active === true;
  }
}

/** The details `referenceDetails` would give if a write checked these references now (reads them; writes nothing). */
export async function missingReferences(accountId: string, references: readonly Reference[]): Promise<ValidationDetail[]> {
  const found = await Promise.all(references.map((reference) => referenceExists(accountId, reference)));
  return references.flatMap((reference, i) => (found[i] ? [] : [{ param: reference.param, code: "invalid_reference", message: MESSAGES[reference.kind] }]));
}
