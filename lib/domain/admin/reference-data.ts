/**
 * Operator actions that create an account's reference data and records: custom fields,
 * customer labels, pricing tiers, units, and items, kits and locations through the same
 * domain code as the API.
 */
import { nowIso } from "../../core/clock.js";
import { AdminError, KitDefinitionError } from "../../core/failures.js";
import { randomUUID } from "node:crypto";
import { insertReferenceData, readAccount } from "../../db/admin-store.js";
import { insertUnit } from "../../db/items.js";
import { checkKitDefinitionInput } from "../kits/definitions.js";
import { CUSTOM_FIELD_KINDS, type CustomFieldKind } from "../../db/entities/custom-field.js";
import { itemBody, locationBody, requireName, type OperatorItemInput } from "./checks.js";

/** Creates a custom-field definition for one record kind. */
export async function createCustomField(input: { accountId: string; kind: string; name: string }): Promise<{ custom_field_id: string }> {
  if (!(CUSTOM_FIELD_KINDS as readonly string[]).includes(input.kind)) {
    throw new AdminError(`--kind must be one of: ${CUSTOM_FIELD_KINDS.join(", ")}.`);
  }
  const name = requireName(input.name);
  const customFieldId = randomUUID();
  const created = await insertReferenceData(input.accountId, (e) =>
    e.customField.create({ accountId: input.accountId, kind: input.kind as CustomFieldKind, customFieldId, name, createdAt: nowIso() }).commit(),
  );
  if (!created) throw new AdminError(`No such account: ${input.accountId}.`);
  return { custom_field_id: customFieldId };
}

/** Creates a customer label (`customer_label_id` of customers, prospects and suppliers). */
export async function createCustomerLabel(input: { accountId: string; name: string }): Promise<{ customer_label_id: string }> {
  const name = requireName(input.name);
  const labelId = randomUUID();
  const created = await insertReferenceData(input.accountId, (e) =>
    e.customerLabel.create({ accountId: input.accountId, labelId, name, createdAt: nowIso() }).commit(),
  );
  if (!created) throw new AdminError(`No such account: ${input.accountId}.`);
  return { customer_label_id: labelId };
}

/** Creates a pricing tier (`pricing_tier_id` of customers and prospects). */
export async function createPricingTier(input: { accountId: string; name: string }): Promise<{ pricing_tier_id: string }> {
  const name = requireName(input.name);
  const pricingTierId = randomUUID();
  const created = await insertReferenceData(input.accountId, (e) =>
    e.pricingTier.create({ accountId: input.accountId, pricingTierId, name, createdAt: nowIso() }).commit(),
  );
  if (!created) throw new AdminError(`No such account: ${input.accountId}.`);
  return { pricing_tier_id: pricingTierId };
}

/** A principal acting as the account's owner, for operator actions that run domain code. */
async function ownerPrincipal(accountId: string): Promise<import("../../auth/permissions.js").Principal> {
  if (!(await readAccount(accountId))) throw new AdminError(`No such account: ${accountId}.`);
  return {
    accountId,
    userId: "operator",
    role: "owner",
    permissions: new Set(),
    assignedLocationId: null,
    timeZone: null,
    keyId: "operator",
    keyHash: "",
    scopes: null,
  };
}

/** Adds a unit of measure; `unit_id` comes from the account's unit sequence. */
export async function createUnit(input: { accountId: string; name: string }): Promise<{ unit_id: number }> {
  const name = requireName(input.name);
  if (!(await readAccount(input.accountId))) throw new AdminError(`No such account: ${input.accountId}.`);
  return { unit_id: await insertUnit(input.accountId, name) };
}

/** Creates an item through the same domain code as `POST /items`. */
export async function createItemAsOperator(input: OperatorItemInput & { accountId: string }): Promise<{ item_id: string }> {
  const principal = await ownerPrincipal(input.accountId);
  const { createItem } = await import("../records/items.js");
  const body = itemBody(input);
  try {
    const item = await createItem(principal, body, undefined);
    return { item_id: item.id as string };
  } catch (error) {
    const details = (error as { details?: { param: string; message: string }[] }).details;
    throw new AdminError(details ? details.map((d) => `${d.param} ${d.message}`).join("; ") : (error as Error).message, { cause: error });
  }
}

/**
 * Stores a kit definition (`lib/domain/kits/definitions.ts`): an assembled item and its
 * components (active items of the same account, not the kit item itself, positive quantities,
 * each component once, at most 25, the variation named or the item's only one, no cycle),
 * numbered from the account's kit sequence.
 */
export async function createKit(input: {
  accountId: string;
  itemId: string;
  components: { itemId: string; quantity: number; variationId?: string }[];
  method?: "manual" | "automatic";
}): Promise<{ kit_id: string }> {
  const { createKitDefinition } = await import("../kits/definitions.js");
  try {
    checkKitDefinitionInput(input);
    if (!(await readAccount(input.accountId))) throw new AdminError(`No such account: ${input.accountId}.`);
    const { kitId } = await createKitDefinition(input);
    return { kit_id: kitId };
  } catch (error) {
    if (error instanceof KitDefinitionError) throw new AdminError(error.message, { cause: error });
    throw error;
  }
}

/** Creates a location through the same domain code as `POST /locations`. */
export async function createLocationAsOperator(input: { accountId: string; name: string; shortName: string }): Promise<{ location_id: string }> {
  const body = locationBody(input);
  const principal = await ownerPrincipal(input.accountId);
  const { createLocation } = await import("../records/locations.js");
  try {
    const location = await createLocation(principal, body, undefined);
    return { location_id: location.id };
  } catch (error) {
    const details = (error as { details?: { param: string; message: string }[] }).details;
    throw new AdminError(details ? details.map((d) => `${d.param} ${d.message}`).join("; ") : (error as Error).message, { cause: error });
  }
}
