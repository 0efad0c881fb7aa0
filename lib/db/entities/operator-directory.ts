import { Entity } from "electrodb";

/**
 * The operator's directory: what the admin CLI looks up by a user's or a key's id alone, and
 * the list of accounts. Each entry is written in the same transaction as the record it points
 * to, so the CLI finds records with a consistent Get or Query, never a table Scan (and no
 * index: a key record is rewritten on every request, which an index would copy). Not tenant
 * data: no API request reads it, and the stream processor ignores it.
 * - `user:<userId>` / `user`: the account whose partition holds the user now;
 * - `user:<userId>` / `key:<keyId>`: each key minted for the user, in whichever account;
 * - `key:<keyId>` / `key`: where the key's record is (account and hash);
 * - `accounts` / `<accountId>`: every account.
 */
export const operatorDirectoryEntity = () =>
  new Entity({
    model: { entity: "operatordirectory", version: "1", service: "inv" },
    attributes: {
      directory: { type: "string", required: true, readOnly: true },
      entry: { type: "string", required: true, readOnly: true },
      accountId: { type: "string", required: true },
      userId: { type: "string" },
      keyId: { type: "string" },
      keyHash: { type: "string" },
    },
    indexes: {
      primary: {
        pk: { field: "pk", composite: ["directory"], template: "$inv#operator#${directory}" },
        sk: { field: "sk", composite: ["entry"], template: "${entry}" },
      },
    },
  });
