import { API_PREFIX, route, type RouteDefinition } from "./define.js";
import {
  ESTIMATE_PROTECTED_FIELDS,
  deletedEstimate,
  estimateCreateBody,
  estimateDeclineBody,
  estimateList,
  estimateListQuery,
  estimatePath,
  estimatePreview,
  estimateResource,
  estimateUpdateBody,
} from "../schemas/estimates.js";

const base = `${API_PREFIX}/estimates`;
const one = `${base}/{estimate_id}`;
const SAMPLE_CUSTOMER = "00000000-0000-4000-8000-000000000041";
const SAMPLE_ITEM = "00000000-0000-4000-8000-000000000021";
const SAMPLE_LINE = "00000000-0000-4000-8000-000000000051";
const visibility = "Users without records.view_all see only the estimates assigned to them (their salesperson_id); others are 404.";
const protectedFields = { code: "unsupported_estimate_field" as const, fields: ESTIMATE_PROTECTED_FIELDS };
const protectedNote = `Fields the service controls are refused with 422 unsupported_estimate_field (param names the first): ${ESTIMATE_PROTECTED_FIELDS.join(", ")}; other unknown fields are 422 validation_failed (unknown_field).`;
const permissions =
  "Requires estimates.modify. An inventory line's unit_price needs prices.modify and shipping_cost needs costs.view (else 403 permission_denied naming the field); cost fields (shipping_cost, line unit_cost and total_cost) are omitted from responses without costs.view.";
const expiry =
  "An Open estimate counts as Expired (status_id 8) from the start of the day after its expiry_date in the account's time zone: computed on every read and honoured by every write (no change marker is published when the day passes).";
const createExample = {
  customer_id: SAMPLE_CUSTOMER,
  issue_date: "2026-11-23",
  purchase_order_number: "PO-7781",
  lines: [
    { item_id: SAMPLE_ITEM, quantity: 24 },
    { name: "Installation", description: "On site, half a day", unit_price: "180.0000", tax_rate: 0 },
  ],
  shipping_fee: "12.0000",
  discount_percent: 5,
};

/** Endpoint group `estimates` (spec part 2, sections 2.3, 3.3 and 4.3; architecture section 8 for the delete response). */
export const estimateRoutes: RouteDefinition[] = [
  route({
    operationId: "createEstimate",
    method: "POST",
    path: base,
    group: "estimates",
    summary: "Create an estimate (Open)",
    description: `For a visible, active customer or prospect; assigned to the caller (salesperson_id). Lines (1-500): inventory lines take name, description, unit, SKU, unit cost and selling price from the item; service lines need name and unit_price; tax rates default to the customer's. discount_percent adds one generated discount line. issue_date defaults to today in the user's time zone (else the account's); expiry_date to issue_date plus the account's estimate-expiry setting (30 days), never before issue_date. The number comes from the account's estimate sequence, saved with the estimate (a refused or failed request consumes none). Moves no stock. ${permissions} ${protectedNote} Returns the estimate with ETag.`,
    scopes: ["estimates:write"],
    idempotency: "optional",
    request: { body: estimateCreateBody },
    protectedFields,
    responses: { 201: estimateResource },
    headers: ["ETag"],
    errors: { 403: ["permission_denied"], 422: ["unsupported_estimate_field"] },
    example: { body: createExample },
  }),
  route({
    operationId: "previewEstimate",
    method: "POST",
    path: `${base}/preview`,
    group: "estimates",
    summary: "Preview a new estimate (writes nothing)",
    description: `Validates and calculates a new estimate under the create rules and answers 200 with an estimate_preview: the canonical estimate (id, estimate_number, revision and line ids null), errors (every refusal the create would answer, each {code, message, param} with the create's code and param; the estimate is null only when the customer or an item line cannot be resolved) and warnings (insufficient_stock, expiry_date_passed). A body the create's schema refuses (types, ranges, unknown or protected fields) is answered as the create answers it (422). Takes no number, persists nothing and publishes no change marker. ${permissions} ${protectedNote}`,
    scopes: ["estimates:write"],
    idempotency: "none",
    request: { body: estimateCreateBody },
    protectedFields,
    responses: { 200: estimatePreview },
    errors: { 403: ["permission_denied"], 422: ["unsupported_estimate_field"] },
    example: { body: createExample },
  }),
  route({
    operationId: "listEstimates",
    method: "GET",
    path: base,
    group: "estimates",
    summary: "List estimates, newest number first",
    description: `Filters: q (customer name, custom number, name; a number also matches the exact estimate number), customer_id, status_id (5 Open, 6 Closed, 7 Declined, 8 Expired), inclusive issue and expiry date ranges. ids (at most 50) fetches exact estimates in one response. Requires estimates.list. ${visibility} ${expiry}`,
    scopes: ["estimates:read"],
    idempotency: "none",
    request: { query: estimateListQuery },
    responses: { 200: estimateList },
    errors: { 403: ["permission_denied"] },
  }),
  route({
    operationId: "getEstimate",
    method: "GET",
    path: one,
    group: "estimates",
    summary: "Retrieve an estimate with its lines in stored order",
    description: `One Query reads the estimate and its lines. Requires estimates.list. ${visibility}`,
    scopes: ["estimates:read"],
    idempotency: "none",
    request: { path: estimatePath },
    responses: { 200: estimateResource },
    headers: ["ETag"],
    errors: { 403: ["permission_denied"] },
  }),
  route({
    operationId: "updateEstimate",
    method: "PATCH",
    path: one,
    group: "estimates",
    summary: "Update an Open estimate",
    description: `Partial: omitted fields keep their values. lines, when sent, is the complete set of active non-discount lines (an existing id keeps that line, no id adds one, omitted lines are removed; never the generated discount line); the lines take the create rules. Changing customer_id requires lines. expiry_date must be today or later in the account's time zone and not before issue_date. Optional If-Match (revision or ETag): stale is 409 mobile_mutation_conflict and nothing changes. Declined, expired and closed (converted) estimates are 409 estimate_update_not_allowed (edit_block_reason estimate_not_open). ${permissions} ${protectedNote}`,
    scopes: ["estimates:write"],
    idempotency: "optional",
    request: { path: estimatePath, body: estimateUpdateBody },
    protectedFields,
    responses: { 200: estimateResource },
    headers: ["ETag"],
    errors: { 403: ["permission_denied"], 409: ["estimate_update_not_allowed", "mobile_mutation_conflict"], 422: ["unsupported_estimate_field"] },
    example: { body: { attention: "Purchasing", lines: [{ id: SAMPLE_LINE, item_id: SAMPLE_ITEM, quantity: 30 }] } },
  }),
  route({
    operationId: "previewEstimateChanges",
    method: "POST",
    path: `${one}/preview`,
    group: "estimates",
    summary: "Preview changes to an estimate (writes nothing)",
    description: `Takes an update body and answers 200 with an estimate_preview of the estimate as the update would leave it (revision null; lines not stored yet have null ids), errors (every refusal the update would answer, e.g. estimate_update_not_allowed) and warnings. Requires If-Match with the estimate's current revision (ETag): missing 428 estimate_revision_required, stale 409 mobile_mutation_conflict. Persists nothing and publishes no change marker. ${permissions} ${protectedNote}`,
    scopes: ["estimates:write"],
    idempotency: "none",
    request: { path: estimatePath, body: estimateUpdateBody },
    protectedFields,
    responses: { 200: estimatePreview },
    errors: { 403: ["permission_denied"], 409: ["mobile_mutation_conflict"], 422: ["unsupported_estimate_field"], 428: ["estimate_revision_required"] },
    example: { body: { discount_percent: 10, expiry_date: "2026-12-31" } },
  }),
  route({
    operationId: "declineEstimate",
    method: "POST",
    path: `${one}/decline`,
    group: "estimates",
    summary: "Decline an estimate",
    description:
      "The body must be an empty JSON object. Open -> Declined (status_id 7), lines kept; declining a Declined estimate again returns it unchanged. Closed, expired or converted estimates are 409 estimate_decline_not_allowed. Optional If-Match (stale: 409 mobile_mutation_conflict). Requires estimates.list and estimates.modify. Moves no stock.",
    scopes: ["estimates:decline"],
    idempotency: "optional",
    request: { path: estimatePath, body: estimateDeclineBody },
    responses: { 200: estimateResource },
    headers: ["ETag"],
    errors: { 403: ["permission_denied"], 409: ["estimate_decline_not_allowed", "mobile_mutation_conflict"] },
    example: { body: {} },
  }),
  route({
    operationId: "deleteEstimate",
    method: "DELETE",
    path: one,
    group: "estimates",
    summary: "Delete an Open, unconverted estimate",
    description:
      "Permanently deletes the estimate and its lines, and takes it out of its customer's document_count. Declined, expired and closed (converted) estimates are 409 estimate_delete_not_allowed. Optional If-Match (stale: 409 mobile_mutation_conflict). Requires estimates.modify.",
    scopes: ["estimates:delete"],
    idempotency: "optional",
    request: { path: estimatePath },
    responses: { 200: deletedEstimate },
    errors: { 403: ["permission_denied"], 409: ["estimate_delete_not_allowed", "mobile_mutation_conflict"] },
  }),
];
