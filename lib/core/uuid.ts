import { createHash } from "node:crypto";

/**
 * Name-based UUIDs (RFC 9562 version 5: SHA-1 of a namespace UUID and a name). The same
 * namespace and name always give the same UUID, so an id derived this way is as deterministic
 * as the name it stands for.
 */
export function uuidV5(name: string, namespace: string): string {
  const namespaceBytes = Buffer.from(namespace.replace(/-/g, ""), "hex");
  if (namespaceBytes.length !== 16) throw new Error(`Not a UUID: ${namespace}`);
  const hash = createHash("sha1").update(namespaceBytes).update(name, "utf8").digest();
  hash[6] = (hash[6]! & 0x0f) | 0x50; // version 5
  hash[8] = (hash[8]! & 0x3f) | 0x80; // RFC 4122 variant
  const hex = hash.subarray(0, 16).toString("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}

/** Namespace of the public ids of inventory ledger history entries (adjustments). */
export const LEDGER_ENTRY_NAMESPACE = "3a071a68-eb8e-4bd9-a419-c80525bc1f19";

/**
 * The public UUID of a ledger history entry. The ledger keys an entry by `journalId:index`
 * (deterministic per journal and change, which is what makes applying a journal exactly
 * once possible); its public id is the name-based UUID of that key, so it is as stable and
 * as unique as the key itself, and the stored entries keep their keys and order.
 */
export const ledgerEntryUuid = (entryId: string): string => uuidV5(entryId, LEDGER_ENTRY_NAMESPACE);
