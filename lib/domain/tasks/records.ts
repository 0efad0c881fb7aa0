import { seesOwnedBy } from "../common/ownership.js";
import { canSeeDocument } from "../documents/rules.js";
import { locationScopeOf, type LocationScoped } from "../../core/document-scope.js";
import { hasPermission, hasScope, type Permission, type Principal } from "../../auth/permissions.js";
import { readDocumentHeaders } from "../../db/documents.js";
import type { DocumentKind } from "../../db/entities/document.js";
import { readKits } from "../../db/kits.js";
import type { DocumentItem } from "../../db/service.js";
import { RECORD_READ_SCOPES, TASK_RECORD_TYPES, type TaskRecordType } from "./rules.js";
import { readParties } from "../../db/parties.js";
import { readItems } from "../../db/items.js";
import type { TransactionBuilder, TransactionOp } from "../../db/transactions.js";

/**
 * Records a task can link (spec part 2, section 2.6), and the registry that resolves them.
 *
 * A task stores its link `{type, id}` with a snapshot of the record (name, number and the
 * facts access is judged by, such as a party's owner), taken at every write of the task and
 * refreshed by the stream processor when the record changes; a response reads the records as
 * they are now (`withLiveRecords`), so it never shows a deleted record or a former name. A
 * response shows the preview `{type, id, name, number}` only when the caller has the read scope of the record's kind and
 * may currently see the record (judged from the caller's live permissions); otherwise
 * `{available: false}`, without the former name or id.
 *
 * Every kind of the spec is accepted in requests. A kind resolves once its module registers a
 * resolver here (`registerTaskRecordResolver`); until then its links are stored unresolved and
 * show `{available: false}`. Every kind of the spec registers below.
 */
export { RECORD_READ_SCOPES, TASK_RECORD_TYPES, type TaskRecordType };

/** What a task keeps of a linked record: shown name and number, plus the facts access is judged by. */
export interface RecordSnapshot {
  name: string;
  number: string | number | null;
  /** The owner or assigned user, for kinds whose visibility depends on it. */
  ownerUserId?: string;
  /** Documents: where the document is (`locationScopeOf`), for the location rule. */
  locationScope?: string;
}

export interface TaskRecordResolver {
  /**
   * The existing records of the account among `ids`, with their snapshots (one batch read).
   * Records that do not exist (or are of another kind) are absent.
   */
  read(accountId: string, ids: readonly string[]): Promise<Map<string, RecordSnapshot>>;
  /** A condition that the record still exists, for the write that links it (checked at commit). */
  existsCheck?(tx: TransactionBuilder, accountId: string, id: string): TransactionOp;
  /** Whether the caller may currently see the record (its live permissions; the scope is checked apart). */
  canAccess(principal: Principal, snapshot: RecordSnapshot): boolean;
  /**
   * For the stream processor: the record a changed table item is, with its new snapshot
   * (null when the record is gone), or undefined when the item is not a record of this kind
   * or the change does not touch the snapshot.
   */
  changeOf?(
    entity: string,
    image: Record<string, unknown>,
    oldImage: Record<string, unknown> | undefined,
    removed: boolean,
  ): { accountId: string; id: string; snapshot: RecordSnapshot | null } | undefined;
}

const resolvers = new Map<TaskRecordType, TaskRecordResolver>();

/** The extension point: a module makes its kind resolvable (and its previews available). */
export function registerTaskRecordResolver(type: TaskRecordType, resolver: TaskRecordResolver): void {
  resolvers.set(type, resolver);
}

export function resolverOf(type: string): TaskRecordResolver | undefined {
  return resolvers.get(type as TaskRecordType);
}

/**
 * The records among `ids` of one kind that exist AND that the caller may see, with their
 * snapshots. The caller checks the read scope first. An unregistered kind resolves nothing.
 */
export async function resolveRecords(principal: Principal, type: TaskRecordType, ids: readonly string[]): Promise<Map<string, RecordSnapshot>> {
  const resolver = resolvers.get(type);
  if (!resolver) return new Map();
  const found = await resolver.read(principal.accountId, ids);
  return new Map([...found].filter(([, snapshot]) => resolver.canAccess(principal, snapshot)));
}

/** The stored link of a task: what it references and what was last seen of it. */
export interface StoredRecordLink {
  type: string;
  id: string;
  state: "resolved" | "gone" | "unresolved";
  name?: string;
  number?: unknown;
  ownerUserId?: string;
  locationScope?: string;
}

export type RecordPreview = { type: string; id: string; name: string; number: string | number | null } | { available: false };

/** The preview a caller sees of a stored link (null without a link). */
export function presentRecord(principal: Principal, link: StoredRecordLink | undefined): RecordPreview | null {
  if (!link) return null;
  const unavailable = { available: false } as const;
  const resolver = resolvers.get(link.type as TaskRecordType);
  if (!resolver || link.state !== "resolved" || link.name === undefined) return unavailable;
  if (!hasScope(principal, RECORD_READ_SCOPES[link.type as TaskRecordType])) return unavailable;
  const snapshot: RecordSnapshot = {
    name: link.name,
    number: (link.number as string | number | undefined) ?? null,
    ownerUserId: link.ownerUserId,
    locationScope: link.locationScope,
  };
  if (!resolver.canAccess(principal, snapshot)) return unavailable;
  return { type: link.type, id: link.id, name: snapshot.name, number: snapshot.number };
}

/**
 * Tasks with their links' records as they are now: one batch read per kind on the page, in
 * parallel (consistent reads), for the links the caller could be shown (read scope held). A
 * record deleted or renamed a moment ago is shown as it is, never as the stream processor last
 * copied it into the task: the stored snapshot only serves the caller-independent parts
 * (search, filters) and kinds the caller cannot read anyway.
 */
export async function withLiveRecords<T extends { record?: unknown }>(principal: Principal, tasks: readonly T[]): Promise<T[]> {
  const idsByType = new Map<TaskRecordType, Set<string>>();
  for (const task of tasks) {
    const link = task.record as StoredRecordLink | undefined;
    if (!link || link.state === "gone") continue;
    const type = link.type as TaskRecordType;
    if (!resolvers.has(type) || !hasScope(principal, RECORD_READ_SCOPES[type])) continue;
    const ids = idsByType.get(type) ?? new Set<string>();
    idsByType.set(type, ids);
    ids.add(link.id);
  }
  if (idsByType.size === 0) return [...tasks];
  const found = new Map(
    await Promise.all([...idsByType].map(async ([type, ids]) => [type, await resolvers.get(type)!.read(principal.accountId, [...ids])] as const)),
  );
  return tasks.map((task) => {
    const link = task.record as StoredRecordLink | undefined;
    const live = link ? found.get(link.type as TaskRecordType) : undefined;
    if (!link || !live) return task;
    return { ...task, record: storedLink(link.type, link.id, live.get(link.id) ?? null) };
  });
}

/** The stored form of a link with a fresh snapshot (null: the record is gone; undefined: no resolver). */
export function storedLink(type: string, id: string, snapshot: RecordSnapshot | null | undefined): StoredRecordLink {
  if (snapshot === undefined) return { type, id, state: "unresolved" };
  if (snapshot === null) return { type, id, state: "gone" };
  const link: StoredRecordLink = { type, id, state: "resolved", name: snapshot.name, number: snapshot.number ?? undefined };
  if (snapshot.ownerUserId !== undefined) link.ownerUserId = snapshot.ownerUserId;
  if (snapshot.locationScope !== undefined) link.locationScope = snapshot.locationScope;
  return link;
}

// --- The kinds that exist today -------------------------------------------------------------

const PARTY_KINDS = ["customer", "prospect", "supplier"] as const;

for (const kind of PARTY_KINDS) {
  registerTaskRecordResolver(kind, {
    async read(accountId, ids) {
      const parties = await readParties(accountId, ids);
      return new Map(parties.filter((p) => p.kind === kind).map((p) => [p.partyId, { name: p.name, number: p.number, ownerUserId: p.ownerUserId }] as const));
    },
    existsCheck: (tx, accountId, id) =>
      tx.entities.party
        .check({ accountId, partyId: id })
        .where(({ kind: k }, { eq }) => eq(k, kind))
        .commit(),
    // Parties: every record with records.view_all, else the caller's own (lib/domain/records/parties.ts).
    canAccess: (principal, snapshot) => seesOwnedBy(principal, snapshot.ownerUserId),
    changeOf(entity, image, oldImage, removed) {
      if (entity !== "party" || image.kind !== kind) return undefined;
      const accountId = String(image.accountId);
      const id = String(image.partyId);
      if (removed) return { accountId, id, snapshot: null };
      if (oldImage && oldImage.name === image.name) return undefined;
      return { accountId, id, snapshot: { name: String(image.name), number: Number(image.number), ownerUserId: String(image.ownerUserId) } };
    },
  });
}

registerTaskRecordResolver("item", {
  async read(accountId, ids) {
    const items = await readItems(accountId, ids);
    return new Map(items.map((item) => [item.itemId, { name: item.name, number: item.number }] as const));
  },
  existsCheck: (tx, accountId, id) =>
    tx.entities.item
      .check({ accountId, itemId: id })
      .where(({ itemId }, { exists }) => exists(itemId))
      .commit(),
  // Items: readable with the inventory-list permission (lib/domain/records/items.ts).
  canAccess: (principal) => hasPermission(principal, "inventory.list"),
  changeOf(entity, image, oldImage, removed) {
    if (entity !== "item") return undefined;
    const accountId = String(image.accountId);
    const id = String(image.itemId);
    if (removed) return { accountId, id, snapshot: null };
    if (oldImage && oldImage.name === image.name) return undefined;
    return { accountId, id, snapshot: { name: String(image.name), number: Number(image.number) } };
  },
});

// Documents: previews show the document's name (else its counterparty, else its kind and
// number) and number; access follows the kind's list permission and the assigned-user boundary
// (stock transfers: account-wide, with the inventory-management permission).
const DOCUMENT_TYPES = {
  purchase_order: { permission: "purchase_orders.list", label: "Purchase order" },
  stock_transfer: { permission: "inventory.manage", label: "Stock transfer" },
  estimate: { permission: "estimates.list", label: "Estimate" },
  sales_order: { permission: "sales_orders.list", label: "Sales order" },
  invoice: { permission: "invoices.list", label: "Invoice" },
} as const satisfies Record<DocumentKind, { permission: Permission; label: string }>;

const documentSnapshot = (header: Pick<DocumentItem, "kind" | "name" | "partyName" | "number" | "assignedUserId"> & LocationScoped): RecordSnapshot => ({
  name: header.name ?? header.partyName ?? `${DOCUMENT_TYPES[header.kind].label} ${header.number}`,
  number: header.number,
  ownerUserId: header.assignedUserId,
  locationScope: locationScopeOf(header),
});

for (const kind of Object.keys(DOCUMENT_TYPES) as DocumentKind[]) {
  registerTaskRecordResolver(kind, {
    async read(accountId, ids) {
      const headers = await readDocumentHeaders(accountId, ids);
      return new Map(headers.filter((h) => h.kind === kind).map((h) => [h.documentId, documentSnapshot(h)] as const));
    },
    existsCheck: (tx, accountId, id) =>
      tx.entities.document
        .check({ accountId, documentId: id })
        .where(({ kind: k }, { eq }) => eq(k, kind))
        .commit(),
    canAccess: (principal, snapshot) =>
      hasPermission(principal, DOCUMENT_TYPES[kind].permission) &&
      canSeeDocument(principal, { kind, assignedUserId: snapshot.ownerUserId ?? "", locationScope: snapshot.locationScope }),
    changeOf(entity, image, oldImage, removed) {
      if (entity !== "document" || image.kind !== kind) return undefined;
      const accountId = String(image.accountId);
      const id = String(image.documentId);
      if (removed) return { accountId, id, snapshot: null };
      const next = documentSnapshot(image as unknown as DocumentItem);
      if (oldImage) {
        const before = documentSnapshot(oldImage as unknown as DocumentItem);
        if (before.name === next.name && before.ownerUserId === next.ownerUserId && before.locationScope === next.locationScope) return undefined;
      }
      return { accountId, id, snapshot: next };
    },
  });
}

// Kits: the assembled item's name and the kit number (refreshed on the task's next write when
// the item is renamed); readable with the inventory-list permission while the item is active.
registerTaskRecordResolver("kit", {
  async read(accountId, ids) {
    const kits = await readKits(accountId, ids);
    const items = new Map(
      (
        await readItems(
          accountId,
          kits.map((k) => k.itemId),
        )
      ).map((item) => [item.itemId, item]),
    );
    return new Map(
      kits.flatMap((kit) => {
        const item = items.get(kit.itemId);
        // As GET /kits/{id}: a kit whose assembled item is archived is not served, so it is not linkable either.
        return item && !item.archived ? [[kit.kitId, { name: item.name, number: kit.number }] as const] : [];
      }),
    );
  },
  existsCheck: (tx, accountId, id) =>
    tx.entities.kit
      .check({ accountId, kitId: id })
      .where(({ kitId }, { exists }) => exists(kitId))
      .commit(),
  canAccess: (principal) => hasPermission(principal, "inventory.list"),
  changeOf(entity, image, _oldImage, removed) {
    if (entity !== "kit" || !removed) return undefined;
    return { accountId: String(image.accountId), id: String(image.kitId), snapshot: null };
  },
});
