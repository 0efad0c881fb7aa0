import { Entity } from "electrodb";

/**
 * An API key. Only the SHA-256 hash of the key is stored; the key itself begins with its
 * account id, so the record is found by (account, hash) without any global index.
 * `rateWindow`/`rateCount` hold the per-key request counter of the current minute.
 */
export const apiKeyEntity = () =>
  new Entity({
    model: { entity: "apikey", version: "1", service: "inv" },
    attributes: {
      accountId: { type: "string", required: true, readOnly: true },
      keyHash: { type: "string", required: true, readOnly: true },
      keyId: { type: "string", required: true, readOnly: true },
      userId: { type: "string", required: true, readOnly: true },
      name: { type: "string" },
      /** Granted scopes; `["all"]` means every action the user may take. */
      scopes: { type: "set", items: "string", required: true },
      expiresAt: { type: "string" },
      revokedAt: { type: "string" },
      lastUsedAt: { type: "string" },
      rateWindow: { type: "number" },
      rateCount: { type: "number" },
      createdAt: { type: "string", required: true, readOnly: true },
    },
    indexes: {
      primary: {
        pk: { field: "pk", composite: ["accountId", "keyHash"] },
        sk: { field: "sk", composite: [] },
      },
    },
  });
