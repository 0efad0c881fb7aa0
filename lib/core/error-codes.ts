/**
 * Every error `code` the API answers with (spec part 1, section 7, and the route-specific codes of
 * part 2), as one union. `ApiError`, the route table's `errors` maps and the OpenAPI document's
 * per-status enums (lib/openapi/errors.ts) take only these, so a misspelt or undocumented code
 * does not compile.
 */
export const ERROR_CODES = [
  // Authentication, authorization and rate limits.
  "authentication_required",
  "insufficient_scope",
  "permission_denied",
  "rate_limited",
  // The request itself.
  "route_not_found",
  "resource_missing",
  "invalid_json",
  "request_too_large",
  "malformed_request",
  "validation_failed",
  "invalid_query_parameter",
  "invalid_cursor",
  // Idempotency and revisions.
  "idempotency_key_required",
  "invalid_idempotency_key",
  "idempotency_key_reused",
  "idempotency_in_progress",
  "mobile_mutation_conflict",
  "estimate_revision_required",
  // Fields the service controls.
  "unsupported_estimate_field",
  "unsupported_invoice_field",
  "unsupported_invoice_pack_field",
  // Records.
  "record_limit_reached",
  // Estimates.
  "estimate_update_not_allowed",
  "estimate_delete_not_allowed",
  "estimate_decline_not_allowed",
  "estimate_conversion_not_allowed",
  "estimate_sales_order_conversion_not_allowed",
  // Sales orders.
  "sales_order_update_not_allowed",
  "sales_order_invoice_not_allowed",
  "sales_order_pack_not_allowed",
  "sales_order_line_already_packed",
  "fulfillment_already_shipped",
  // Invoices.
  "invoice_update_not_allowed",
  "invoice_delete_not_allowed",
  "invoice_send_not_allowed",
  "invoice_cancel_not_allowed",
  "invoice_payment_not_allowed",
  "invoice_payment_delete_not_allowed",
  "invoice_pack_not_allowed",
  "invalid_invoice_pack",
  "invoice_fulfillment_managed_by_sales_order",
  "exceeds_amount_due",
  "exceeds_amount_paid",
  // Purchase orders.
  "purchase_order_update_not_allowed",
  "purchase_order_send_not_allowed",
  "purchase_order_receive_not_allowed",
  "purchase_order_payment_delete_not_allowed",
  // Stock transfers.
  "stock_transfer_update_not_allowed",
  "stock_transfer_delete_not_allowed",
  "stock_transfer_send_not_allowed",
  "stock_transfer_receive_not_allowed",
  // Kits.
  "invalid_kit_build",
  "kit_disassembly_not_allowed",
  // Tasks and reminders.
  "task_conflict",
  "task_transition_not_allowed",
  "reminder_not_actionable",
  // Webhooks (architecture section 9).
  "webhook_endpoint_limit_reached",
  // Sync.
  "sync_cursor_invalid",
  "sync_cursor_expired",
  "sync_cursor_owner_mismatch",
  "sync_scope_changed",
  "sync_permission_denied",
  "sync_full_refresh_required",
  // The service.
  "resource_busy",
  "internal_error",
] as const;

/** An error `code` of the catalogue. */
export type ErrorCode = (typeof ERROR_CODES)[number];

/**
 * The `code` of one entry of `error.details` (a field's problem): what zod's checks become
 * (lib/http/validation.ts), the domain's own field rules, or an error code naming the rule a
 * field breaks (e.g. `exceeds_amount_due` on `amount`).
 */
export const DETAIL_CODES = [
  // Shape (zod's checks, lib/http/validation.ts).
  "required",
  "blank",
  "invalid",
  "invalid_type",
  "invalid_value",
  "invalid_format",
  "invalid_email",
  "invalid_uuid",
  "too_short",
  "too_long",
  "too_small",
  "too_large",
  "too_few",
  "too_many",
  "unknown_field",
  // References and records.
  "invalid_reference",
  "duplicate",
  "archived",
  "sold",
  "not_found",
  "has_documents",
  "has_kits",
  "has_children",
  "not_allowed",
  // Dates.
  "past_date",
  "not_in_future",
  "before_issue_date",
  "expiry_date_passed",
  "requires_due_date",
  // Lines and stock.
  "insufficient_stock",
  "negative_balance",
  "unknown_item",
  "unique_quantity",
  "unique_item",
  "no_effect",
  "not_inventory",
  "not_at_origin",
  "not_packable",
  "not_invoiceable",
  "already_packed",
  "packed_line_removed",
] as const;

/** A `details[].code`: a detail code, or the error code of the rule the field breaks. */
export type DetailCode = (typeof DETAIL_CODES)[number] | ErrorCode;

/** The codes of `unsupportedField` (fields the service controls). */
export type UnsupportedFieldCode = Extract<ErrorCode, `unsupported_${string}_field`>;
