import { Service, type EntityItem } from "electrodb";
import { getDocumentClient } from "./client.js";
import { tableName } from "./table.js";
import { Account } from "./entities/account.js";
import { User } from "./entities/user.js";
import { ApiKey } from "./entities/api-key.js";
import { IdempotencyRecord } from "./entities/idempotency-record.js";
import { IdempotencyPart } from "./entities/idempotency-part.js";
import { Location } from "./entities/location.js";
import { Zone } from "./entities/zone.js";
import { ItemCategory } from "./entities/item-category.js";
import { Party } from "./entities/party.js";
import { Contact } from "./entities/contact.js";
import { ContactLink } from "./entities/contact-link.js";
import { ContactAccess } from "./entities/contact-access.js";
import { SyncHead } from "./entities/sync-head.js";
import { SyncMarker } from "./entities/sync-marker.js";
import { SyncPointer } from "./entities/sync-pointer.js";
import { SyncCheckpoint } from "./entities/sync-checkpoint.js";
import { Item } from "./entities/item.js";
import { ItemVariation } from "./entities/item-variation.js";
import { StockRow } from "./entities/stock-row.js";
import { StockHistory } from "./entities/stock-history.js";
import { StockJournal } from "./entities/stock-journal.js";
import { Unit } from "./entities/unit.js";
import { Kit } from "./entities/kit.js";
import { KitLink } from "./entities/kit-link.js";
import { KitBuild } from "./entities/kit-build.js";
import { InventoryCounters } from "./entities/inventory-counters.js";
import { AccountCounters } from "./entities/account-counters.js";
import { OwnerCounters } from "./entities/owner-counters.js";
import { CustomField } from "./entities/custom-field.js";
import { CustomerLabel } from "./entities/customer-label.js";
import { PricingTier } from "./entities/pricing-tier.js";
import { Sequence } from "./entities/sequence.js";
import { Document } from "./entities/document.js";
import { DocumentLines } from "./entities/document-lines.js";
import { DocumentPayment } from "./entities/document-payment.js";
import { ItemReference } from "./entities/item-reference.js";
import { Task } from "./entities/task.js";
import { TaskLink } from "./entities/task-link.js";
import { TaskActivity } from "./entities/task-activity.js";
import { TaskReminder } from "./entities/task-reminder.js";
import { TaskTally } from "./entities/task-tally.js";
import { TaskAccountTally } from "./entities/task-account-tally.js";
import { Fulfillment } from "./entities/fulfillment.js";

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
  kitLink: KitLink,
  kitBuild: KitBuild,
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
  sequence: Sequence,
  document: Document,
  documentLines: DocumentLines,
  documentPayment: DocumentPayment,
  itemReference: ItemReference,
  task: Task,
  taskLink: TaskLink,
  taskActivity: TaskActivity,
  taskReminder: TaskReminder,
  taskTally: TaskTally,
  taskAccountTally: TaskAccountTally,
  idempotencyPart: IdempotencyPart,
  fulfillment: Fulfillment,
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
export type IdempotencyPartItem = EntityItem<typeof IdempotencyPart>;
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
export type DocumentItem = EntityItem<typeof Document>;
export type DocumentLinesItem = EntityItem<typeof DocumentLines>;
export type DocumentPaymentItem = EntityItem<typeof DocumentPayment>;
export type KitLinkItem = EntityItem<typeof KitLink>;
export type KitBuildItem = EntityItem<typeof KitBuild>;
export type FulfillmentItem = EntityItem<typeof Fulfillment>;
export type SyncMarkerItem = EntityItem<typeof SyncMarker>;
export type SyncPointerItem = EntityItem<typeof SyncPointer>;
export type TaskItem = EntityItem<typeof Task>;
export type TaskLinkItem = EntityItem<typeof TaskLink>;
export type TaskActivityItem = EntityItem<typeof TaskActivity>;
export type TaskReminderItem = EntityItem<typeof TaskReminder>;
export type TaskTallyItem = EntityItem<typeof TaskTally>;
export type TaskAccountTallyItem = EntityItem<typeof TaskAccountTally>;
