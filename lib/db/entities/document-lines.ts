import { Entity } from "electrodb";

/**
 * A page of a document's lines. The lines (the document kind's stored line shape, in stored
 * order) are written as ONE compressed JSON text split over as few pages as its size needs
 * (`packed`, page 0 first; `lib/db/documents.ts`), so a 500-line estimate is one to three
 * items: its header and pages fit one transaction (100 items, 4 MB) and are read back by one
 * Query request (1 MB). Pages written before compression hold their lines as a plain list in
 * `lines` instead; readers accept both.
 */
export const documentLinesEntity = () =>
  new Entity({
    model: { entity: "documentlines", version: "1", service: "inv" },
    attributes: {
      accountId: { type: "string", required: true, readOnly: true },
      documentId: { type: "string", required: true, readOnly: true },
      page: { type: "number", required: true, readOnly: true },
      /** A chunk of the compressed JSON array of lines (binary). */
      packed: { type: "any" },
      /** Older pages: the lines themselves. */
      lines: { type: "any" },
    },
    indexes: {
      primary: {
        collection: "documentTree",
        pk: { field: "pk", composite: ["accountId", "documentId"] },
        sk: { field: "sk", composite: ["page"] },
      },
    },
  });
