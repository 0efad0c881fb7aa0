import { Service, type EntityItem } from "electrodb";
import { getDocumentClient } from "./client.js";
import { tableName } from "./table.js";
import { Account } from "./entities/account.js";
import { User } from "./entities/user.js";
import { ApiKey } from "./entities/api-key.js";
import { IdempotencyRecord } from "./entities/idempotency-record.js";
import { Location } from "./entities/location.js";
import { Zone } from "./entities/zone.js";
import { ItemCategory } from "./entities/item-category.js";
import { Party } from "./entities/party.js";
import { Contact, ContactAccess, ContactLink } from "./entities/contact.js";
import { SyncCheckpoint, SyncHead, SyncMarker, SyncPointer } from "./entities/sync.js";
import { InventoryCounters, Item, ItemVariation, Kit, StockHistory, StockJournal, StockRow, Unit } from "./entities/item.js";
import { AccountCounters, OwnerCounters } from "./entities/counters.js";
import { CustomField, CustomerLabel, PricingTier } from "./entities/reference-data.js";

const entities = {
  account: Account,
  user: User,
  apiKey: ApiKey,
  idempotencyRecord: IdempotencyRecord,
  location: Location,
  zone: Zone,
  itemCategory: ItemCategory,
  party: Party,
  item: Item,
  itemVariation: ItemVariation,
  stockRow: StockRow,
  stockHistory: StockHistory,
  stockJournal: StockJournal,
  unit: Unit,
  kit: Kit,
  inventoryCounters: InventoryCounters,
  syncHead: SyncHead,
  syncMarker: SyncMarker,
  syncPointer: SyncPointer,
  syncCheckpoint: SyncCheckpoint,
  contact: Contact,
  contactLink: ContactLink,
  contactAccess: ContactAccess,
  accountCounters: AccountCounters,
  ownerCounters: OwnerCounters,
  customField: CustomField,
  customerLabel: CustomerLabel,
  pricingTier: PricingTier,
};

function createService() {
  return new Service(entities, { client: getDocumentClient(), table: tableName() });
}

export type InventoryService = ReturnType<typeof createService>;
let service: InventoryService | undefined;

/** The ElectroDB service over the one table (built on first use, not at import). */
export function db(): InventoryService {
  service ??= createService();
  return service;
}

export type AccountItem = EntityItem<typeof Account>;
export type UserItem = EntityItem<typeof User>;
export type ApiKeyItem = EntityItem<typeof ApiKey>;
export type IdempotencyItem = EntityItem<typeof IdempotencyRecord>;
export type LocationItem = EntityItem<typeof Location>;
export type ZoneItem = EntityItem<typeof Zone>;
export type ItemCategoryItem = EntityItem<typeof ItemCategory>;
export type PartyItem = EntityItem<typeof Party>;
export type AccountCountersItem = EntityItem<typeof AccountCounters>;
export type OwnerCountersItem = EntityItem<typeof OwnerCounters>;
export type ContactItem = EntityItem<typeof Contact>;
export type ContactLinkItem = EntityItem<typeof ContactLink>;
export type ContactAccessItem = EntityItem<typeof ContactAccess>;
export type ItemRecord = EntityItem<typeof Item>;
export type ItemVariationItem = EntityItem<typeof ItemVariation>;
export type StockRowItem = EntityItem<typeof StockRow>;
export type StockHistoryItem = EntityItem<typeof StockHistory>;
export type StockJournalItem = EntityItem<typeof StockJournal>;
export type UnitItem = EntityItem<typeof Unit>;
export type KitItem = EntityItem<typeof Kit>;
export type SyncMarkerItem = EntityItem<typeof SyncMarker>;
export type SyncPointerItem = EntityItem<typeof SyncPointer>;
