import { Entity } from "electrodb";

export const syncHeadEntity = () =>
  new Entity({
    model: { entity: "synchead", version: "1", service: "inv" },
    attributes: {
      accountId: { type: "string", required: true, readOnly: true },
      seq: { type: "number", required: true },
      /** Epoch milliseconds of the last marker (markers' times never go backwards). */
      lastAt: { type: "number", required: true },
      /**
       * The sequences a point-in-time restore skipped (lib/db/sync-restore.ts): changes numbered
       * above `after` were made on the table before the restore and are lost; the restored head
       * starts again at `upTo`, so a cursor positioned in (after, upTo) is refused. `table` is
       * the restored table (one gap per restore).
       */
      restoreGaps: {
        type: "list",
        items: {
          type: "map",
          properties: {
            table: { type: "string", required: true },
            after: { type: "number", required: true },
            upTo: { type: "number", required: true },
          },
        },
      },
    },
    indexes: {
      primary: {
        pk: { field: "pk", composite: ["accountId"], template: "$inv#accountid_${accountId}#sync" },
        sk: { field: "sk", composite: [], template: "head" },
      },
    },
  });
