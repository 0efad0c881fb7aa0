/**
 * A noun with its indefinite article, for messages: `an invoice`, `a sales order`. Nouns are the
 * API's own words (record kinds, line types), so the first letter decides.
 */
export const withArticle = (noun: string): string => `${/^[aeiou]/i.test(noun) ? "an" : "a"} ${noun}`;

/** A record kind as words: `sales_order` -> `sales order`. */
export const kindWords = (kind: string): string => kind.replace(/_/g, " ");
