import { API_PREFIX, route, type RouteDefinition } from "./define.js";
import { pageQuery } from "../schemas/common.js";
import {
  locationCreateBody,
  locationList,
  locationPath,
  locationResource,
  zoneList,
  zonePath,
  zoneResource,
  zoneWriteBody,
} from "../schemas/locations.js";

/** Endpoint group `locations`: locations and zones (spec part 1, section 4.1). */
export const locationRoutes: RouteDefinition[] = [
  route({
    operationId: "listLocations",
    method: "GET",
    path: `${API_PREFIX}/locations`,
    group: "locations",
    summary: "List active locations ordered by name",
    description: "A user restricted to one location receives only that location.",
    scopes: ["items:read"],
    idempotency: "none",
    request: { query: pageQuery },
    responses: { 200: locationList },
  }),
  route({
    operationId: "createLocation",
    method: "POST",
    path: `${API_PREFIX}/locations`,
    group: "locations",
    summary: "Create a location",
    description:
      "Requires the inventory-modify permission and a user not restricted to one location (else 403 permission_denied).",
    scopes: ["items:write"],
    idempotency: "required",
    request: { body: locationCreateBody },
    responses: { 201: locationResource },
  }),
  route({
    operationId: "listZones",
    method: "GET",
    path: `${API_PREFIX}/locations/{location_id}/zones`,
    group: "locations",
    summary: "List the zones of an active, accessible location ordered by name",
    scopes: ["items:read"],
    idempotency: "none",
    request: { path: locationPath, query: pageQuery },
    responses: { 200: zoneList },
  }),
  route({
    operationId: "createZone",
    method: "POST",
    path: `${API_PREFIX}/locations/{location_id}/zones`,
    group: "locations",
    summary: "Create a zone in a location",
    description: "Requires the inventory-modify permission.",
    scopes: ["items:write"],
    idempotency: "required",
    request: { path: locationPath, body: zoneWriteBody },
    responses: { 201: zoneResource },
  }),
  route({
    operationId: "updateZone",
    method: "PATCH",
    path: `${API_PREFIX}/locations/{location_id}/zones/{zone_id}`,
    group: "locations",
    summary: "Update a zone",
    description:
      "Send the complete zone: `name` and `short_name` (required) and `description` (omitted or null clears it). The zone's location cannot change.",
    scopes: ["items:write"],
    idempotency: "required",
    request: { path: zonePath, body: zoneWriteBody },
    responses: { 200: zoneResource },
  }),
];
