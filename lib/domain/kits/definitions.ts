import { nowIso } from "../../core/clock.js";
import { KitDefinitionError, TransactionCanceledError } from "../../core/failures.js";
import { randomUUID } from "node:crypto";
import { Decimal } from "../../core/decimal.js";
import { readItemTree } from "../../db/inventory.js";
import { KIT_ITEM_LABEL, KIT_LINK_LABEL, insertKit, readKitLinks, readKits } from "../../db/kits.js";
import type { KitItem } from "../../db/service.js";
import { MAX_QUANTITY } from "../../schemas/amounts.js";
import { QUANTITY_PLACES } from "../inventory/math.js";

/**
 * Kit definitions (architecture section 7, `kit create`; spec part 2, section 4.7: the API
 * cannot create or edit them). Written once by an operator, never changed after.
 */

/**
 * Component lines a kit may have: a build consumes every component in ONE transaction (its
 * conditions make "insufficient stock" impossible), and one transaction holds 100 items.
 */
export const MAX_KIT_COMPONENTS = 25;

export interface KitDefinitionInput {
  accountId: string;
  itemId: string;
  components: { itemId: string; quantity: number; variationId?: string }[];
  method?: "manual" | "automatic";
}

/** Checks that need no database (the CLI runs them before it connects). */
export function checkKitDefinitionInput(input: Pick<KitDefinitionInput, "itemId" | "components">): void {
  if (input.components.length === 0) throw new KitDefinitionError("--components must name at least one ITEM_ID:QTY.");
  if (input.components.length > MAX_KIT_COMPONENTS) throw new KitDefinitionError(`A kit has at most ${MAX_KIT_COMPONENTS} component lines.`);
  const ids = input.components.map((c) => c.itemId);
  if (new Set(ids).size !== ids.length) throw new KitDefinitionError("Each component item may appear once.");
  if (ids.includes(input.itemId)) throw new KitDefinitionError("A kit cannot contain its own item.");
  for (const component of input.components) {
    const ok =
      Number.isFinite(component.quantity) &&
      component.quantity > 0 &&
      component.quantity <= MAX_QUANTITY &&
      new Decimal(component.quantity).decimalPlaces() <= QUANTITY_PLACES;
    if (!ok) throw new KitDefinitionError(`Component quantity must be positive with at most ${QUANTITY_PLACES} decimals: ${component.itemId}.`);
  }
}

/**
 * Stores a kit definition numbered from the account's `kit` sequence: the assembled item (an
 * active quantity item with one variation, backing no other kit), and its components in the
 * order given (`position` 1, 2, ...), each an active item of the account, with the variation
 * named or the item's only variation. Refuses a definition that would make a cycle (a component
 * made, through kits, from the assembled item).
 */
export async function createKitDefinition(input: KitDefinitionInput): Promise<{ kitId: string; number: number }> {
  checkKitDefinitionInput(input);
  const { accountId } = input;
  const trees = await Promise.all([input.itemId, ...input.components.map((c) => c.itemId)].map((itemId) => readItemTree(accountId, itemId)));
  const missing = [input.itemId, ...input.components.map((c) => c.itemId)].filter((_, i) => !trees[i]!.item);
  if (missing.length > 0) throw new KitDefinitionError(`No such item(s) in account ${accountId}: ${missing.join(", ")}.`);
  const [assembled, ...componentTrees] = trees as [Required<(typeof trees)[number]>, ...(typeof trees)[number][]];
  if (assembled.item!.archived) throw new KitDefinitionError(`The kit item ${input.itemId} is archived.`);
  if (assembled.item!.inventoryType !== "quantity") throw new KitDefinitionError("The kit item must be a quantity item (not unique).");
  if (assembled.variations.length !== 1) throw new KitDefinitionError("The kit item must have exactly one variation.");

  const components = input.components.map((component, i) => {
    const tree = componentTrees[i]!;
    if (tree.item!.archived) throw new KitDefinitionError(`Component ${component.itemId} is archived.`);
    let variationId: string;
    if (component.variationId !== undefined) {
      if (!tree.variations.some((v) => v.variationId === component.variationId)) {
        throw new KitDefinitionError(`${component.variationId} is not a variation of component ${component.itemId}.`);
      }
      variationId = component.variationId;
    } else {
      if (tree.variations.length !== 1) {
        throw new KitDefinitionError(`Component ${component.itemId} has ${tree.variations.length} variations: name one as ITEM_ID:QTY:VARIATION_ID.`);
      }
      variationId = tree.variations[0]!.variationId;
    }
    return { id: randomUUID(), itemId: component.itemId, itemVariationId: component.variationId, variationId, quantity: component.quantity, position: i + 1 };
  });

  await refuseCycles(
    accountId,
    input.itemId,
    components.map((c) => c.itemId),
  );

  const now = nowIso();
  const kitId = randomUUID();
  const method = input.method ?? "manual";
  const kit: Omit<KitItem, "number"> = {
    accountId,
    kitId,
    itemId: input.itemId,
    variationId: assembled.variations[0]!.variationId,
    method,
    components,
    buildStats: {},
    buildVersion: 0,
    createdAt: now,
    updatedAt: now,
  };
  const { number, cancellation } = await insertKit(kit, { accountId, itemId: input.itemId, kitId, method, createdAt: now });
  if (cancellation?.failed(KIT_LINK_LABEL)) {
    const [link] = await readKitLinks(accountId, [input.itemId]);
    throw new KitDefinitionError(`Item ${input.itemId} already backs kit ${link?.kitId ?? "(another)"}: an item is the assembled item of one kit at most.`);
  }
  const gone = cancellation?.failedUnder(KIT_ITEM_LABEL) ?? [];
  if (gone.length > 0)
    throw new KitDefinitionError(`No such item(s) in account ${accountId}: ${gone.map((r) => r.label.slice(KIT_ITEM_LABEL.length)).join(", ")}.`);
  if (cancellation) throw new TransactionCanceledError(cancellation.reasons);
  return { kitId, number };
}

/** Walks existing definitions from the components: reaching the new kit's item is a cycle. */
async function refuseCycles(accountId: string, kitItemId: string, componentItemIds: readonly string[]): Promise<void> {
  const seen = new Set<string>();
  let frontier = [...componentItemIds];
  while (frontier.length > 0) {
    for (const id of frontier) seen.add(id);
    const links = await readKitLinks(accountId, frontier);
    const kits = await readKits(
      accountId,
      links.map((l) => l.kitId),
    );
    const next = new Set<string>();
    for (const kit of kits) {
      for (const component of kit.components) {
        if (component.itemId === kitItemId) {
          throw new KitDefinitionError(
            `Component item ${kit.itemId} is itself made (through kit ${kit.number}) from ${kitItemId}: the definition would form a cycle.`,
          );
        }
        if (!seen.has(component.itemId)) next.add(component.itemId);
      }
    }
    frontier = [...next];
  }
}
