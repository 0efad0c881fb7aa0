import type { Principal } from "../../lib/auth/permissions.js";
import { createAccount, type CreatedAccount } from "../../lib/domain/admin.js";
import { createItemCategory } from "../../lib/domain/item-categories.js";
import { createLocation, createZone } from "../../lib/domain/locations.js";

/** Creates the demo account with a little reference data, through the same domain code the API runs. */
export async function seedDemo(): Promise<CreatedAccount> {
  const created = await createAccount({ name: "Demo Company", timeZone: "America/New_York", currency: "USD" });
  const owner: Principal = {
    accountId: created.account_id,
    userId: created.user_id,
    role: "owner",
    permissions: new Set(),
    assignedLocationId: null,
    timeZone: null,
    keyId: created.key_id,
    keyHash: "",
    scopes: null,
  };
  const warehouse = await createLocation(owner, { name: "Main Warehouse", short_name: "MAIN", city: "Springfield" }, undefined);
  await createLocation(owner, { name: "Downtown Store", short_name: "STORE" }, undefined);
  await createZone(owner, warehouse.id, { name: "Aisle 1", short_name: "A1", description: "Fast movers" }, undefined);
  await createZone(owner, warehouse.id, { name: "Aisle 2", short_name: "A2" }, undefined);
  const electronics = await createItemCategory(
    owner,
    {
      name: "Electronics",
      inventory_type: "quantity",
      custom_fields: [{ name: "Warranty", display_on_inventory_list: true, publish_on_documents: true }],
    },
    undefined,
  );
  await createItemCategory(owner, { name: "Cables", inventory_type: "quantity", parent_id: electronics.id, custom_fields: [] }, undefined);
  await createItemCategory(owner, { name: "Serialized Equipment", inventory_type: "unique", custom_fields: [] }, undefined);
  return created;
}
