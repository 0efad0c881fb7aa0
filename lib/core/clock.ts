/** The time every write stamps: ISO-8601 timestamps and epoch seconds (TTLs, rate windows). */

/** Now, as the ISO-8601 UTC timestamp records store (`createdAt`, `updatedAt`, ...). */
export const nowIso = (): string => new Date().toISOString();

/** Now, in whole epoch seconds (DynamoDB TTL attributes). */
export const epochSeconds = (): number => Math.floor(Date.now() / 1000);
