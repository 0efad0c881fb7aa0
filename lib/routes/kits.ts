import { API_PREFIX, route, type RouteDefinition } from "./define.js";
import {
  deletedKitBuild,
  kitBuildBody,
  kitBuildList,
  kitBuildListQuery,
  kitBuildPath,
  kitBuildResource,
  kitDetailResource,
  kitList,
  kitListQuery,
  kitPath,
} from "../schemas/kits.js";

/**
 * Endpoint group `kits` (spec part 2, sections 2.7, 3.7 and 4.7; architecture section 8): kits
 * are defined by operators (`npm run admin -- kit create`), never through the API.
 */
export const kitRoutes: RouteDefinition[] = [
  route({
    operationId: "listKits",
    method: "GET",
    path: `${API_PREFIX}/kits`,
    group: "kits",
    summary: "List kits by kit number",
    description:
      "Active kit-backed items of the account (a kit whose assembled item is archived or deleted is left out), ordered by kit_number ascending: the kit's own stable identifier (an assembled item can be renamed; a kit number never changes, so pages stay stable). q searches the assembled item's name and SKU (case-insensitive substring); a whole number also matches the exact kit_number. assembly_method narrows to manual or automatic kits. quantity, build_count and last_built_at cover the locations the caller sees.",
    scopes: ["kits:read"],
    permissions: ["inventory.list"],
    idempotency: "none",
    request: { query: kitListQuery },
    responses: { 200: kitList },
    errors: { 422: ["invalid_query_parameter"] },
  }),
  route({
    operationId: "getKit",
    method: "GET",
    path: `${API_PREFIX}/kits/{kit_id}`,
    group: "kits",
    summary: "Retrieve a kit with its components",
    description:
      "Adds components ordered by position (no costs or prices). A missing kit, another account's kit, or a kit whose assembled item is archived or deleted: 404 resource_missing.",
    scopes: ["kits:read"],
    permissions: ["inventory.list"],
    idempotency: "none",
    request: { path: kitPath },
    responses: { 200: kitDetailResource },
    errors: { 404: ["resource_missing"] },
  }),
  route({
    operationId: "listKitBuilds",
    method: "GET",
    path: `${API_PREFIX}/kits/{kit_id}/builds`,
    group: "kits",
    summary: "List a kit's builds, newest first",
    description:
      "Builds that exist (assembled and not disassembled), newest (highest build number) first, nested automatic builds included (parent_kit set). location_id narrows to one active location of the account; a user assigned to a location sees only that location's builds, and another location_id is 422 invalid_query_parameter (it cannot widen the user's access).",
    scopes: ["kits:read"],
    permissions: ["inventory.list"],
    idempotency: "none",
    request: { path: kitPath, query: kitBuildListQuery },
    responses: { 200: kitBuildList },
    errors: { 404: ["resource_missing"], 422: ["invalid_query_parameter"] },
  }),
  route({
    operationId: "createKitBuild",
    method: "POST",
    path: `${API_PREFIX}/kits/{kit_id}/builds`,
    group: "kits",
    summary: "Assemble a kit at a location",
    description:
      "Creates one manual build (method and user set by the service) of quantity kits at location_id: consumes quantity x each component's quantity there and adds quantity of the assembled item there, through the inventory ledger (history source kit_build), in ONE atomic write with the build record. A component that is the assembled item of an automatic kit and is short at the location has its shortfall assembled first, recursively, as builds of their own (assembly_method automatic, parent_kit set) in the same write. Valuation: one assembled unit costs the sum of its components' current unit costs x quantities (the moving average cost, else the selected variation's cost override, else the item's cost), recorded on the build's ledger entries; the assembled item's moving average cost takes the built units. Stock rows missing at the location are prepared in the same write before stock is validated. Insufficient component stock, or an unusable definition (a component missing or archived, a cycle, a component that is the kit itself): 422 invalid_kit_build and nothing changes; parallel builds never take stock below zero. user_id, automatic, kit_id, unit_cost and parent-kit fields are refused (422 unknown_field). A user assigned to a location builds only there. Idempotency-Key recommended.",
    scopes: ["kits:build"],
    permissions: ["inventory.modify"],
    idempotency: "optional",
    request: { path: kitPath, body: kitBuildBody },
    example: { body: { location_id: "00000000-0000-4000-8000-000000000001", quantity: 2 } },
    responses: { 201: kitBuildResource },
    errors: { 404: ["resource_missing"], 422: ["invalid_kit_build", "validation_failed"] },
  }),
  route({
    operationId: "deleteKitBuild",
    method: "DELETE",
    path: `${API_PREFIX}/kits/{kit_id}/builds/{build_id}`,
    group: "kits",
    summary: "Disassemble a build",
    description:
      "Reverses the build's own stock changes exactly, through the ledger (history source kit_disassembly: the assembled units leave its location, the components come back at the unit costs they were consumed at), and removes the build from the kit's history, atomically. The build must belong to the kit and account in the path; a user assigned to a location may remove only builds of that location (others: 404). A second disassembly: 404 resource_missing. When the assembled units are no longer on hand at the build's location (used since), 409 kit_disassembly_not_allowed and nothing changes. Nested automatic builds made for this build stay (they were complete builds of their own kits; their units come back as they went in) and can be disassembled on their own.",
    scopes: ["kits:disassemble"],
    permissions: ["inventory.modify"],
    idempotency: "none",
    request: { path: kitBuildPath },
    responses: { 200: deletedKitBuild },
    errors: { 404: ["resource_missing"], 409: ["kit_disassembly_not_allowed"] },
  }),
];
