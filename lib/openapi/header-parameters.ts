/** An OpenAPI object (a parameter, a schema). */
type JsonSchema = Record<string, unknown>;

/** Header parameters the routes share (components.parameters), by the route fact they document. */
export const HEADER_PARAMETERS: Record<string, JsonSchema> = {
  IdempotencyKey: {
    name: "Idempotency-Key",
    in: "header",
    required: false,
    description:
      "1 to 255 visible ASCII characters (else 400 `invalid_idempotency_key`). A retry with the same key and body within 300 s replays the original response with `Idempotent-Replayed: true`; the same key with other data is 409 `idempotency_key_reused`; a retry while the first request is still running is 409 `idempotency_in_progress` (retry shortly with the same key).",
    schema: { type: "string", minLength: 1, maxLength: 255, pattern: "^[\\x21-\\x7E]+$" },
    example: "order-7781-create-1",
  },
  IfMatch: {
    name: "If-Match",
    in: "header",
    required: false,
    description:
      "The record's current revision: its `ETag` (quoted, or `W/` weak) or the bare `revision` (a list: any of them). The write happens only while the record is still at that revision, else 409 `mobile_mutation_conflict` and nothing changes; `*` or blank means any revision. A value that names no revision (however long or malformed) is that 409 too.",
    schema: { type: "string" },
    example: '"est_0mf3k2q1a9c4e1b2d3f4a5b6"',
  },
};
HEADER_PARAMETERS.IdempotencyKeyRequired = {
  ...HEADER_PARAMETERS.IdempotencyKey,
  required: true,
  description: `Required on this operation (else 400 \`idempotency_key_required\`). ${HEADER_PARAMETERS.IdempotencyKey!.description}`,
};
HEADER_PARAMETERS.IfMatchRequired = {
  ...HEADER_PARAMETERS.IfMatch,
  required: true,
  description:
    "Required on this operation: the record's current revision, its `ETag` (quoted, or `W/` weak) or the bare `revision`. Missing, blank or `*` is 428; another revision is 409 `mobile_mutation_conflict`.",
};
