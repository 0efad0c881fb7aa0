import { Entity } from "electrodb";

/**
 * A page of a document's lines, in stored order. Lines are packed into as few pages as their
 * size allows (`lib/db/documents.ts`), so a 500-line estimate is a handful of items: its
 * header and pages fit one transaction (100 items, 4 MB) and every page stays far below
 * DynamoDB's 400 KB item limit. The line objects are the document kind's stored line shape.
 */
export const DocumentLines = new Entity({
  model: { entity: "documentlines", version: "1", service: "inv" },
  attributes: {
    accountId: { type: "string", required: true, readOnly: true },
    documentId: { type: "string", required: true, readOnly: true },
    page: { type: "number", required: true, readOnly: true },
    lines: { type: "any", required: true },
  },
  indexes: {
    primary: {
      collection: "documentTree",
      pk: { field: "pk", composite: ["accountId", "documentId"] },
      sk: { field: "sk", composite: ["page"] },
    },
  },
});
