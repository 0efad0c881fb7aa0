/**
 * Documentation-only metadata for query parameters (no dependencies: any schema module may
 * import it without pulling in the others).
 */
/**
 * How a query parameter is documented when its text is validated by a schema that cannot
 * show its meaning (query values arrive as text): the OpenAPI generator shows `schema` (and
 * `explode: false` for comma-separated lists) instead of the validating schema. Runtime
 * validation is unchanged.
 */
export interface DocumentedParameter {
  schema: Record<string, unknown>;
  /** Comma-separated list (`style: form, explode: false`). */
  explode?: false;
}
export const documentedAs = (parameter: DocumentedParameter) => ({ "x-parameter": parameter });

/** A query id: a UUID (an id that is not one is 422 invalid_query_parameter naming it, checked where it is used). */
export const QUERY_UUID = { type: "string", format: "uuid" } as const;

/**
 * The bound of an `ids=` query value: 50 UUIDs with room for spaces after the commas (the
 * count of ids is what the lists check; this only bounds the text).
 */
export const IDS_QUERY_MAX_LENGTH = 4096;
