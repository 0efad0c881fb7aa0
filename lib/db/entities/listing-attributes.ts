/**
 * The attributes of the list indexes (`lib/db/listing.ts`), for an entity whose lists filter:
 * sparse partition keys `lx1pk`..`lx7pk`, the sort keys `lxsk` and `lx7sk`, and the facts `lxf` (`lxn`: those a text search reads).
 * Hidden: derived on every write, never part of a record's body.
 */
export const LISTING_ATTRIBUTES = {
  lx1pk: { type: "string", hidden: true },
  lx2pk: { type: "string", hidden: true },
  lx3pk: { type: "string", hidden: true },
  lx4pk: { type: "string", hidden: true },
  lx5pk: { type: "string", hidden: true },
  lx6pk: { type: "string", hidden: true },
  lx7pk: { type: "string", hidden: true },
  lxsk: { type: "string", hidden: true },
  lx7sk: { type: "string", hidden: true },
  lxf: { type: "string", hidden: true },
  lxn: { type: "string", hidden: true },
} as const;
