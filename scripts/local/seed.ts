import type { Principal } from "../../lib/auth/permissions.js";
import {
  createAccount,
  createCustomField,
  createCustomerLabel,
  createPricingTier,
  createKey,
  createUser,
  type CreatedAccount,
} from "../../lib/domain/admin/service.js";
import { createContact } from "../../lib/domain/records/contacts.js";
import { createItemCategory } from "../../lib/domain/records/item-categories.js";
import { createLocation, createZone } from "../../lib/domain/records/locations.js";
import { createParty } from "../../lib/domain/records/parties.js";
import { adjustItem, createItem } from "../../lib/domain/records/items.js";
import { createKit, createUnit } from "../../lib/domain/admin/service.js";

/**
 * The demo account of `npm start` (SEED=demo): a small wholesale business with locations and
 * zones, categories with custom fields, a few dozen customers, prospects and suppliers, their
 * contacts, and a staff user who sees only the records they own. Everything goes through the
 * same domain code as the API, so the seed obeys every rule an API client would.
 */
const CITIES = ["Springfield", "Riverton", "Lakeside", "Fairview", "Greenville", "Madison", "Franklin", "Clinton"];
const STREETS = ["Main St", "Oak Ave", "Pine Rd", "Maple Dr", "Cedar Ln", "Elm St", "Harbor Way", "Mill Rd"];

const CUSTOMERS = [
  "Acme Hardware",
  "Blue Ridge Outfitters",
  "Cedar Point Cafe",
  "Delta Office Supply",
  "Evergreen Landscaping",
  "Fairview Dental",
  "Granite State Builders",
  "Harbor Marine",
  "Iron Horse Fitness",
  "Juniper Bakery",
  "Keystone Auto Repair",
  "Lakeside Books",
  "Maple Leaf Florist",
  "Northwind Traders",
  "Oakridge Veterinary",
  "Pioneer Plumbing",
  "Quarry Street Pizza",
  "Riverside Pharmacy",
  "Summit Cycles",
  "Twin Pines Motel",
  "Union Square Deli",
  "Valley Electric",
  "Westgate Laundry",
  "Yellowstone Outdoor",
  "Zephyr Coffee Roasters",
];
const PROSPECTS = [
  "Aurora Event Rentals",
  "Brightside Daycare",
  "Copperfield Brewing",
  "Driftwood Surf Shop",
  "Elm Street Clinic",
  "Foxglove Interiors",
  "Goldleaf Jewelers",
  "Highland Golf Club",
  "Ivy League Tutoring",
  "Jetstream Couriers",
];
const SUPPLIERS = [
  "Allied Packaging",
  "Benchmark Tools",
  "Continental Fasteners",
  "Dynamo Electronics",
  "Eastern Paper Co",
  "Frontier Lumber",
  "Global Cable Supply",
  "Horizon Chemicals",
  "Interstate Freight",
  "Jade Textiles",
  "Kingsley Metals",
  "Lighthouse Lighting",
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
  const rivertonDepot = await createLocation(owner, { name: "Riverton Depot", short_name: "RIV", city: "Riverton" }, undefined);
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
  const cables = await createItemCategory(owner, { name: "Cables", inventory_type: "quantity", parent_id: electronics.id, custom_fields: [] }, undefined);
  const tools = await createItemCategory(
    owner,
    { name: "Power Tools", inventory_type: "quantity", custom_fields: [{ name: "Brand", display_on_inventory_list: true, publish_on_documents: false }] },
    undefined,
  );
  const serialized = await createItemCategory(
    owner,
    {
      name: "Serialized Equipment",
      inventory_type: "unique",
      custom_fields: [{ name: "Calibration date", display_on_inventory_list: false, publish_on_documents: true }],
    },
    undefined,
  );
  const packaging = await createItemCategory(owner, { name: "Packaging", inventory_type: "quantity", custom_fields: [] }, undefined);
  await seedItems(owner, { warehouse: warehouse.id, store: store.id, riverton: rivertonDepot.id }, { electronics, cables, tools, serialized, packaging });

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

type Category = { id: string; custom_fields: { id: string; name: string }[] };

/**
 * Items with stock: plain items at one or two locations, two items with variations (size and
 * colour), one unique serialised item, and two kits: a manual starter kit that holds an automatic
 * tie pack (nested builds).
 */
async function seedItems(
  owner: Principal,
  locations: { warehouse: string; store: string; riverton: string },
  categories: Record<"electronics" | "cables" | "tools" | "serialized" | "packaging", Category>,
): Promise<void> {
  const accountId = owner.accountId;
  const each = (await createUnit({ accountId, name: "Each" })).unit_id;
  const box = (await createUnit({ accountId, name: "Box" })).unit_id;
  await createUnit({ accountId, name: "Meter" });
  const stock = async (itemId: string, locationId: string, quantity: number, variationId?: string) =>
    adjustItem(owner, itemId, { location_id: locationId, quantity, item_variation_id: variationId, reason: "Opening stock" }, undefined);

  const plain: [string, string, Category, string, string, number, number][] = [
    ["USB-C Cable 2m", "CAB-USBC-2M", categories.cables, "12.5000", "4.2000", 140, 35],
    ["HDMI Cable 1.5m", "CAB-HDMI-15", categories.cables, "9.9900", "3.1000", 80, 20],
    ["Cordless Drill 18V", "TL-DRILL-18", categories.tools, "129.0000", "74.5000", 12, 3],
    ["Impact Driver", "TL-IMPACT", categories.tools, "149.0000", "88.0000", 6, 0],
    ["Bluetooth Speaker", "EL-SPK-BT", categories.electronics, "59.0000", "27.0000", 25, 8],
    ["Shipping Box Small", "PK-BOX-S", categories.packaging, "0.8500", "0.3100", 500, 0],
    ["Shipping Box Large", "PK-BOX-L", categories.packaging, "1.4000", "0.5200", 240, 0],
    ["Bubble Wrap Roll", "PK-BUBBLE", categories.packaging, "18.0000", "9.0000", 30, 5],
  ];
  const created: Record<string, string> = {};
  for (const [name, sku, category, price, cost, warehouseQty, storeQty] of plain) {
    const item = await createItem(
      owner,
      {
        name,
        sku,
        category_id: category.id,
        price,
        cost,
        threshold: 5,
        unit_id: category === categories.packaging ? box : each,
        location_id: locations.warehouse,
      },
      undefined,
    );
    created[sku] = item.id as string;
    if (warehouseQty > 0) await stock(item.id as string, locations.warehouse, warehouseQty);
    if (storeQty > 0) await stock(item.id as string, locations.store, storeQty);
  }

  const shirt = await createItem(
    owner,
    {
      name: "Work Shirt",
      sku: "AP-SHIRT",
      price: "24.0000",
      cost: "9.5000",
      unit_id: each,
      variations: [
        { values: { Size: "M", Colour: "Navy" }, sku: "AP-SHIRT-M-NV" },
        { values: { Size: "L", Colour: "Navy" }, sku: "AP-SHIRT-L-NV" },
        { values: { Size: "L", Colour: "Grey" }, sku: "AP-SHIRT-L-GY", unit_price_override: "26.0000" },
      ],
    },
    undefined,
  );
  const { listVariations } = await import("../../lib/domain/records/items.js");
  const shirtVariations = (await listVariations(owner, shirt.id as string, "", { page: 1, limit: 100 }, undefined)).data as { id: string }[];
  for (const [index, variation] of shirtVariations.entries()) {
    await stock(shirt.id as string, locations.warehouse, 20 + index * 5, variation.id);
    await stock(shirt.id as string, locations.store, 4 + index, variation.id);
  }
  const gloves = await createItem(
    owner,
    {
      name: "Safety Gloves",
      sku: "AP-GLOVE",
      price: "7.5000",
      cost: "2.2000",
      variations: [{ values: { Size: "S" } }, { values: { Size: "M" } }, { values: { Size: "L" } }],
    },
    undefined,
  );
  const gloveVariations = (await listVariations(owner, gloves.id as string, "", { page: 1, limit: 100 }, undefined)).data as { id: string }[];
  for (const variation of gloveVariations) await stock(gloves.id as string, locations.riverton, 60, variation.id);

  const calibrationField = categories.serialized.custom_fields[0]!;
  const meter = await createItem(
    owner,
    {
      name: "Calibrated Multimeter",
      sku: "EQ-MM-001",
      serial_number: "MM-2026-0001",
      category_id: categories.serialized.id,
      price: "349.0000",
      cost: "210.0000",
      custom_field_values: [{ custom_field_id: calibrationField.id, value: "2026-10-01" }],
    },
    undefined,
  );
  await stock(meter.id as string, locations.warehouse, 1);

  // Kits (numbered from the account's kit sequence): the manual "Cable Starter Kit" (kit 1)
  // holds an automatic "Cable Tie Pack" (kit 2) that is never in stock: building starter kits
  // (POST /kits/{kit_id}/builds) assembles the tie packs they need first, as nested builds.
  const tie = await createItem(owner, { name: "Cable Tie", sku: "AC-TIE", price: "0.1000", cost: "0.0200", unit_id: each }, undefined);
  await stock(tie.id as string, locations.warehouse, 500);
  const pouch = await createItem(owner, { name: "Zip Pouch", sku: "PK-POUCH", price: "0.5000", cost: "0.1500", unit_id: each }, undefined);
  await stock(pouch.id as string, locations.warehouse, 100);
  const tiePack = await createItem(owner, { name: "Cable Tie Pack", sku: "KIT-TIES", price: "2.0000", unit_id: each }, undefined);
  const kitItem = await createItem(owner, { name: "Cable Starter Kit", sku: "KIT-CABLES", price: "29.0000", unit_id: each }, undefined);
  await createKit({
    accountId,
    itemId: kitItem.id as string,
    method: "manual",
    components: [
      { itemId: created["CAB-USBC-2M"]!, quantity: 2 },
      { itemId: created["CAB-HDMI-15"]!, quantity: 1 },
      { itemId: created["PK-BOX-S"]!, quantity: 1 },
      { itemId: tiePack.id as string, quantity: 1 },
    ],
  });
  await createKit({
    accountId,
    itemId: tiePack.id as string,
    method: "automatic",
    components: [
      { itemId: tie.id as string, quantity: 10 },
      { itemId: pouch.id as string, quantity: 1 },
    ],
  });
}
