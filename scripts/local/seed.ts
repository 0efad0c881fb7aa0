import type { Principal } from "../../lib/auth/permissions.js";
import {
  createAccount,
  createCustomField,
  createCustomerLabel,
  createPricingTier,
  createKey,
  createUser,
  type CreatedAccount,
} from "../../lib/domain/admin.js";
import { createContact } from "../../lib/domain/contacts.js";
import { createItemCategory } from "../../lib/domain/item-categories.js";
import { createLocation, createZone } from "../../lib/domain/locations.js";
import { createParty } from "../../lib/domain/parties.js";

/**
 * The demo account of `npm start` (SEED=demo): a small wholesale business with locations and
 * zones, categories with custom fields, a few dozen customers, prospects and suppliers, their
 * contacts, and a staff user who sees only the records they own. Everything goes through the
 * same domain code as the API, so the seed obeys every rule an API client would.
 */
const CITIES = ["Springfield", "Riverton", "Lakeside", "Fairview", "Greenville", "Madison", "Franklin", "Clinton"];
const STREETS = ["Main St", "Oak Ave", "Pine Rd", "Maple Dr", "Cedar Ln", "Elm St", "Harbor Way", "Mill Rd"];

const CUSTOMERS = [
  "Acme Hardware", "Blue Ridge Outfitters", "Cedar Point Cafe", "Delta Office Supply", "Evergreen Landscaping",
  "Fairview Dental", "Granite State Builders", "Harbor Marine", "Iron Horse Fitness", "Juniper Bakery",
  "Keystone Auto Repair", "Lakeside Books", "Maple Leaf Florist", "Northwind Traders", "Oakridge Veterinary",
  "Pioneer Plumbing", "Quarry Street Pizza", "Riverside Pharmacy", "Summit Cycles", "Twin Pines Motel",
  "Union Square Deli", "Valley Electric", "Westgate Laundry", "Yellowstone Outdoor", "Zephyr Coffee Roasters",
];
const PROSPECTS = [
  "Aurora Event Rentals", "Brightside Daycare", "Copperfield Brewing", "Driftwood Surf Shop", "Elm Street Clinic",
  "Foxglove Interiors", "Goldleaf Jewelers", "Highland Golf Club", "Ivy League Tutoring", "Jetstream Couriers",
];
const SUPPLIERS = [
  "Allied Packaging", "Benchmark Tools", "Continental Fasteners", "Dynamo Electronics", "Eastern Paper Co",
  "Frontier Lumber", "Global Cable Supply", "Horizon Chemicals", "Interstate Freight", "Jade Textiles",
  "Kingsley Metals", "Lighthouse Lighting",
];
const FIRST = ["Ann", "Ben", "Carla", "Dev", "Elena", "Farid", "Grace", "Hiro", "Ines", "Jon", "Kara", "Luis", "Mia", "Nate", "Omar", "Priya"];
const LAST = ["Lee", "Garcia", "Novak", "Okafor", "Schmidt", "Tanaka", "Rossi", "Kowalski", "Haddad", "Silva", "Murphy", "Chen"];

const slug = (name: string) => name.toLowerCase().replace(/[^a-z0-9]+/g, "");

export interface SeededDemo extends CreatedAccount {
  staff_user_id: string;
  staff_api_key: string;
}

export async function seedDemo(): Promise<SeededDemo> {
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
  const accountId = created.account_id;

  const warehouse = await createLocation(owner, { name: "Main Warehouse", short_name: "MAIN", city: "Springfield" }, undefined);
  const store = await createLocation(owner, { name: "Downtown Store", short_name: "STORE", city: "Springfield" }, undefined);
  await createLocation(owner, { name: "Riverton Depot", short_name: "RIV", city: "Riverton" }, undefined);
  for (const [index, aisle] of ["Aisle 1", "Aisle 2", "Aisle 3", "Receiving", "Returns"].entries()) {
    await createZone(owner, warehouse.id, { name: aisle, short_name: `W${index + 1}`, description: index === 3 ? "Inbound dock" : null }, undefined);
  }
  await createZone(owner, store.id, { name: "Front Counter", short_name: "FC" }, undefined);
  await createZone(owner, store.id, { name: "Back Room", short_name: "BR" }, undefined);

  const electronics = await createItemCategory(
    owner,
    {
      name: "Electronics",
      inventory_type: "quantity",
      custom_fields: [
        { name: "Warranty", display_on_inventory_list: true, publish_on_documents: true },
        { name: "Voltage", display_on_inventory_list: false, publish_on_documents: true },
      ],
    },
    undefined,
  );
  await createItemCategory(owner, { name: "Cables", inventory_type: "quantity", parent_id: electronics.id, custom_fields: [] }, undefined);
  await createItemCategory(owner, { name: "Power Tools", inventory_type: "quantity", custom_fields: [{ name: "Brand", display_on_inventory_list: true, publish_on_documents: false }] }, undefined);
  await createItemCategory(owner, { name: "Serialized Equipment", inventory_type: "unique", custom_fields: [{ name: "Calibration date", display_on_inventory_list: false, publish_on_documents: true }] }, undefined);
  await createItemCategory(owner, { name: "Packaging", inventory_type: "quantity", custom_fields: [] }, undefined);

  const territory = (await createCustomField({ accountId, kind: "customer", name: "Sales territory" })).custom_field_id;
  const source = (await createCustomField({ accountId, kind: "prospect", name: "Lead source" })).custom_field_id;
  const terms = (await createCustomField({ accountId, kind: "supplier", name: "Account number" })).custom_field_id;
  const wholesale = (await createCustomerLabel({ accountId, name: "Wholesale" })).customer_label_id;
  const retail = (await createCustomerLabel({ accountId, name: "Retail" })).customer_label_id;
  const gold = (await createPricingTier({ accountId, name: "Gold" })).pricing_tier_id;
  const standard = (await createPricingTier({ accountId, name: "Standard" })).pricing_tier_id;

  // A staff user who sees only the records they own, with records of their own.
  const staff = await createUser({
    accountId,
    name: "Sam Rivera",
    email: "sam@demo.example",
    permissions: ["accounts.manage", "inventory.list"],
  });
  const staffKey = await createKey({ userId: staff.user_id, name: "Sam's integration", scopes: "all" });
  const staffPrincipal: Principal = { ...owner, userId: staff.user_id, role: "staff", permissions: new Set(["accounts.manage"]) };

  const partyIds: string[] = [];
  for (const [index, name] of CUSTOMERS.entries()) {
    const actor = index % 5 === 4 ? staffPrincipal : owner;
    const city = CITIES[index % CITIES.length]!;
    const customer = await createParty(
      actor,
      "customer",
      {
        name,
        office_email: `orders@${slug(name)}.example`,
        office_phone: `+1 555 01${String(index).padStart(2, "0")}`,
        url: `https://${slug(name)}.example`,
        billing_address_1: `${100 + index * 7} ${STREETS[index % STREETS.length]}`,
        billing_city: city,
        billing_region: "NY",
        billing_postal_code: `1${String(2000 + index * 13).padStart(4, "0")}`,
        billing_country: "United States",
        customer_label_id: index % 3 === 0 ? wholesale : retail,
        pricing_tier_id: index % 4 === 0 ? gold : standard,
        custom_field_values: [{ custom_field_id: territory, value: index % 2 === 0 ? "North" : "South" }],
      },
      undefined,
    );
    partyIds.push(customer.id);
  }
  for (const [index, name] of PROSPECTS.entries()) {
    const prospect = await createParty(
      index % 3 === 2 ? staffPrincipal : owner,
      "prospect",
      {
        name,
        office_email: `hello@${slug(name)}.example`,
        sale_opportunity: index % 2 === 0 ? "Annual supply contract" : "Store fit-out",
        closing_percentage: (index * 15) % 100,
        prospect_date: `2026-${String((index % 9) + 1).padStart(2, "0")}-15`,
        custom_field_values: [{ custom_field_id: source, value: index % 2 === 0 ? "Trade show" : "Referral" }],
      },
      undefined,
    );
    partyIds.push(prospect.id);
  }
  for (const [index, name] of SUPPLIERS.entries()) {
    const supplier = await createParty(
      owner,
      "supplier",
      {
        name,
        office_email: `sales@${slug(name)}.example`,
        office_phone: `+1 555 02${String(index).padStart(2, "0")}`,
        billing_city: CITIES[(index + 3) % CITIES.length],
        custom_field_values: [{ custom_field_id: terms, value: `ACCT-${1000 + index}` }],
      },
      undefined,
    );
    partyIds.push(supplier.id);
  }

  // About forty contacts: one or two per record, a few linked to two records.
  for (let index = 0; index < 40; index++) {
    const first = FIRST[index % FIRST.length]!;
    const last = LAST[(index * 5) % LAST.length]!;
    const links = [partyIds[index % partyIds.length]!];
    if (index % 7 === 0) links.push(partyIds[(index + 11) % partyIds.length]!);
    const ownedByStaff = index % 5 === 4;
    await createContact(
      ownedByStaff ? staffPrincipal : owner,
      {
        first_name: first,
        last_name: last,
        job_title: ["Buyer", "Owner", "Office Manager", "Accounts Payable", "Operations Lead"][index % 5],
        email_1: `${first}.${last}${index}@contacts.example`.toLowerCase(),
        phone: `+1 555 03${String(index).padStart(2, "0")}`,
        auto_add_email: index % 3 === 0,
        // Staff-owned customers sit at positions 4, 9, 14... of the first 25.
        account_record_ids: ownedByStaff ? [partyIds[index % CUSTOMERS.length]!] : links,
      },
      undefined,
    );
  }
  return { ...created, staff_user_id: staff.user_id, staff_api_key: staffKey.api_key };
}
