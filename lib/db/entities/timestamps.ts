/** The timestamps a record carries: `createdAt`, set once, and `updatedAt`, moved by every write. */
export const TIMESTAMP_ATTRIBUTES = {
  createdAt: { type: "string", required: true, readOnly: true },
  updatedAt: { type: "string", required: true },
} as const;
