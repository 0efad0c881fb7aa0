import { checkDeployedConfig } from "../core/config.js";
import { Service, type EntityItem } from "electrodb";
import { getDocumentClient } from "./client.js";
import { tableName } from "./table.js";
import { accountEntity } from "./entities/account.js";
import { userEntity } from "./entities/user.js";
import { apiKeyEntity } from "./entities/api-key.js";
import { idempotencyRecordEntity } from "./entities/idempotency-record.js";
import { idempotencyPartEntity } from "./entities/idempotency-part.js";
import { locationEntity } from "./entities/location.js";
import { zoneEntity } from "./entities/zone.js";
import { itemCategoryEntity } from "./entities/item-category.js";
import { partyEntity } from "./entities/party.js";
import { contactEntity } from "./entities/contact.js";
import { contactLinkEntity } from "./entities/contact-link.js";
import { contactAccessEntity } from "./entities/contact-access.js";
import { syncHeadEntity } from "./entities/sync-head.js";
import { syncMarkerEntity } from "./entities/sync-marker.js";
import { syncPointerEntity } from "./entities/sync-pointer.js";
import { syncCheckpointEntity } from "./entities/sync-checkpoint.js";
import { itemEntity } from "./entities/item.js";
import { itemVariationEntity } from "./entities/item-variation.js";
import { stockRowEntity } from "./entities/stock-row.js";
import { stockHistoryEntity } from "./entities/stock-history.js";
import { stockJournalEntity } from "./entities/stock-journal.js";
import { unitEntity } from "./entities/unit.js";
import { kitEntity } from "./entities/kit.js";
import { kitLinkEntity } from "./entities/kit-link.js";
import { kitBuildEntity } from "./entities/kit-build.js";
import { inventoryCountersEntity } from "./entities/inventory-counters.js";
import { accountCountersEntity } from "./entities/account-counters.js";
import { ownerCountersEntity } from "./entities/owner-counters.js";
import { customFieldEntity } from "./entities/custom-field.js";
import { customerLabelEntity } from "./entities/customer-label.js";
import { pricingTierEntity } from "./entities/pricing-tier.js";
import { sequenceEntity } from "./entities/sequence.js";
import { turnEntity } from "./entities/turn.js";
import { documentEntity } from "./entities/document.js";
import { documentLinesEntity } from "./entities/document-lines.js";
import { documentPaymentEntity } from "./entities/document-payment.js";
import { itemReferenceEntity } from "./entities/item-reference.js";
import { referenceIntentEntity } from "./entities/reference-intent.js";
import { taskEntity } from "./entities/task.js";
import { taskLinkEntity } from "./entities/task-link.js";
import { taskActivityEntity } from "./entities/task-activity.js";
import { taskReminderEntity } from "./entities/task-reminder.js";
import { taskTallyEntity } from "./entities/task-tally.js";
import { taskAccountTallyEntity } from "./entities/task-account-tally.js";
import { fulfillmentEntity } from "./entities/fulfillment.js";
import { webhookEndpointEntity } from "./entities/webhook-endpoint.js";
import { operatorDirectoryEntity } from "./entities/operator-directory.js";
import { webhookDeliveryDayEntity, webhookDeliveryEntity } from "./entities/webhook-delivery.js";

// A deployed function without its table fails as it starts (Lambda reports the init error with
// this message), not on its first request.
checkDeployedConfig();

const ENTITY_FACTORIES = {
  account: accountEntity,
  user: userEntity,
  apiKey: apiKeyEntity,
  idempotencyRecord: idempotencyRecordEntity,
  location: locationEntity,
  zone: zoneEntity,
  itemCategory: itemCategoryEntity,
  party: partyEntity,
  item: itemEntity,
  itemVariation: itemVariationEntity,
  stockRow: stockRowEntity,
  stockHistory: stockHistoryEntity,
  stockJournal: stockJournalEntity,
  unit: unitEntity,
  kit: kitEntity,
  kitLink: kitLinkEntity,
  kitBuild: kitBuildEntity,
  inventoryCounters: inventoryCountersEntity,
  syncHead: syncHeadEntity,
  syncMarker: syncMarkerEntity,
  syncPointer: syncPointerEntity,
  syncCheckpoint: syncCheckpointEntity,
  contact: contactEntity,
  contactLink: contactLinkEntity,
  contactAccess: contactAccessEntity,
  accountCounters: accountCountersEntity,
  ownerCounters: ownerCountersEntity,
  customField: customFieldEntity,
  customerLabel: customerLabelEntity,
  pricingTier: pricingTierEntity,
  sequence: sequenceEntity,
  document: documentEntity,
  documentLines: documentLinesEntity,
  documentPayment: documentPaymentEntity,
  itemReference: itemReferenceEntity,
  referenceIntent: referenceIntentEntity,
  task: taskEntity,
  taskLink: taskLinkEntity,
  taskActivity: taskActivityEntity,
  taskReminder: taskReminderEntity,
  taskTally: taskTallyEntity,
  taskAccountTally: taskAccountTallyEntity,
  idempotencyPart: idempotencyPartEntity,
  fulfillment: fulfillmentEntity,
  turn: turnEntity,
  webhookEndpoint: webhookEndpointEntity,
  webhookDelivery: webhookDeliveryEntity,
  webhookDeliveryDay: webhookDeliveryDayEntity,
  operatorDirectory: operatorDirectoryEntity,
};

/** Every entity of the table, by the name the code uses for it (`db().entities.<name>`). */
export type Entities = { [Name in keyof typeof ENTITY_FACTORIES]: ReturnType<(typeof ENTITY_FACTORIES)[Name]> };
export type EntityName = keyof Entities;

/**
 * The collections: entities that share a partition, read together by one Query. Each is an
 * ElectroDB Service over just those entities, built the first time it is queried.
 */
const COLLECTIONS = {
  contactTree: ["contact", "contactLink", "contactAccess"],
  documentTree: ["document", "documentLines", "documentPayment"],
  itemTree: ["item", "itemVariation", "stockRow"],
  locationTree: ["location", "zone"],
} as const satisfies Record<string, readonly EntityName[]>;

type CollectionName = keyof typeof COLLECTIONS;
type CollectionService<Name extends CollectionName> = Service<Pick<Entities, (typeof COLLECTIONS)[Name][number]>>;
export interface Collections {
  contactTree: CollectionService<"contactTree">["collections"]["contactTree"];
  documentTree: CollectionService<"documentTree">["collections"]["documentTree"];
  itemTree: CollectionService<"itemTree">["collections"]["itemTree"];
  locationTree: CollectionService<"locationTree">["collections"]["locationTree"];
}

/** Types only: the ElectroDB service the table's entities would form (for transaction types). */
export type InventoryService = Service<Entities>;

/**
 * The table's entities and collections. An entity is constructed (ElectroDB parses its model:
 * about a millisecond each) the first time a request uses it, so a function constructs the few
 * entities its requests touch instead of all of them at every cold start.
 */
export interface Database {
  readonly entities: Entities;
  readonly collections: Collections;
}

const constructed: Partial<Entities> = {};

function entity<Name extends EntityName>(name: Name): Entities[Name] {
  let instance = constructed[name] as Entities[Name] | undefined;
  if (!instance) {
    instance = ENTITY_FACTORIES[name]() as Entities[Name];
    instance.setClient(getDocumentClient());
    instance.setTableName(tableName());
    constructed[name] = instance;
  }
  return instance;
}

function collectionService<Name extends CollectionName>(name: Name): CollectionService<Name> {
  const members = Object.fromEntries(COLLECTIONS[name].map((member) => [member, entity(member)]));
  return new Service(members as Pick<Entities, (typeof COLLECTIONS)[Name][number]>, { client: getDocumentClient(), table: tableName() });
}

function createDatabase(): Database {
  const entities = {} as Entities;
  for (const name of Object.keys(ENTITY_FACTORIES) as EntityName[]) {
    Object.defineProperty(entities, name, { get: () => entity(name), enumerable: true });
  }
  const collections = {} as Collections;
  for (const name of Object.keys(COLLECTIONS) as CollectionName[]) {
    let service: CollectionService<CollectionName> | undefined;
    Object.defineProperty(collections, name, {
      get: () => {
        service ??= collectionService(name);
        return service.collections[name as never];
      },
      enumerable: true,
    });
  }
  return { entities, collections };
}

let database: Database | undefined;

/** The table's entities and collections (nothing is constructed at import). */
export function db(): Database {
  database ??= createDatabase();
  return database;
}

/**
 * The entities constructed so far (every entity a transaction's items were built from among
 * them): what a transaction hands ElectroDB, which reads every entity it is given.
 */
export function constructedEntities(): Partial<Entities> {
  return { ...constructed };
}

export type AccountItem = EntityItem<Entities["account"]>;
export type UserItem = EntityItem<Entities["user"]>;
export type ApiKeyItem = EntityItem<Entities["apiKey"]>;
export type IdempotencyItem = EntityItem<Entities["idempotencyRecord"]>;
export type IdempotencyPartItem = EntityItem<Entities["idempotencyPart"]>;
export type LocationItem = EntityItem<Entities["location"]>;
export type ZoneItem = EntityItem<Entities["zone"]>;
export type ItemCategoryItem = EntityItem<Entities["itemCategory"]>;
export type PartyItem = EntityItem<Entities["party"]>;
export type AccountCountersItem = EntityItem<Entities["accountCounters"]>;
export type OwnerCountersItem = EntityItem<Entities["ownerCounters"]>;
export type ContactItem = EntityItem<Entities["contact"]>;
export type ContactLinkItem = EntityItem<Entities["contactLink"]>;
export type ContactAccessItem = EntityItem<Entities["contactAccess"]>;
export type ItemRecord = EntityItem<Entities["item"]>;
export type ItemVariationItem = EntityItem<Entities["itemVariation"]>;
export type StockRowItem = EntityItem<Entities["stockRow"]>;
export type StockHistoryItem = EntityItem<Entities["stockHistory"]>;
export type StockJournalItem = EntityItem<Entities["stockJournal"]>;
export type UnitItem = EntityItem<Entities["unit"]>;
export type KitItem = EntityItem<Entities["kit"]>;
export type DocumentItem = EntityItem<Entities["document"]>;
export type DocumentLinesItem = EntityItem<Entities["documentLines"]>;
export type DocumentPaymentItem = EntityItem<Entities["documentPayment"]>;
export type KitLinkItem = EntityItem<Entities["kitLink"]>;
export type KitBuildItem = EntityItem<Entities["kitBuild"]>;
export type FulfillmentItem = EntityItem<Entities["fulfillment"]>;
export type SyncMarkerItem = EntityItem<Entities["syncMarker"]>;
export type SyncPointerItem = EntityItem<Entities["syncPointer"]>;
export type TaskItem = EntityItem<Entities["task"]>;
export type TaskLinkItem = EntityItem<Entities["taskLink"]>;
export type TaskActivityItem = EntityItem<Entities["taskActivity"]>;
export type TaskReminderItem = EntityItem<Entities["taskReminder"]>;
export type TaskTallyItem = EntityItem<Entities["taskTally"]>;
export type TaskAccountTallyItem = EntityItem<Entities["taskAccountTally"]>;
export type WebhookEndpointItem = EntityItem<Entities["webhookEndpoint"]>;
export type WebhookDeliveryItem = EntityItem<Entities["webhookDelivery"]>;
