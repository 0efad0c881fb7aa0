/** Helpers shared by the storage modules. */
export const nowIso = (): string => new Date().toISOString();
export const epochSeconds = (): number => Math.floor(Date.now() / 1000);
