/**
 * ElectroDB's entity-name attribute on every item it writes: how the stream processor, the sync
 * classifier and raw reads tell one record type from another in the single table. Here, with no
 * database code, so that bundles without it (platform) may name it.
 */
export const ENTITY_ATTRIBUTE = "__edb_e__";
