import { createApiHandler } from "../../lib/http/api-handler.js";
import { locationRoutes } from "../../lib/routes/locations.js";
import { normalizePage } from "../../lib/core/pagination.js";
import { created, ok } from "../../lib/http/responses.js";
import type { ApiRequest } from "../../lib/http/types.js";
import { createLocation, createZone, getZone, listLocations, listZones, updateZone } from "../../lib/domain/records/locations.js";
import type { LocationCreateBody, ZoneWriteBody } from "../../lib/schemas/locations.js";

type PageQuery = { page?: string; limit?: string };
type LocationParams = { location_id: string };
type ZoneParams = LocationParams & { zone_id: string };

/** Endpoint group `locations`: locations and zones (spec part 1, section 4.1). */
export const handler = createApiHandler(locationRoutes, {
  listLocations: async (req: ApiRequest<{}, PageQuery>) => ok(await listLocations(req.principal, req.path, normalizePage(req.query))),

  createLocation: async (req: ApiRequest<{}, {}, LocationCreateBody>) => created(await createLocation(req.principal, req.body, req.completion(201))),

  listZones: async (req: ApiRequest<LocationParams, PageQuery>) =>
    ok(await listZones(req.principal, req.params.location_id, req.path, normalizePage(req.query))),

  createZone: async (req: ApiRequest<LocationParams, {}, ZoneWriteBody>) =>
    created(await createZone(req.principal, req.params.location_id, req.body, req.completion(201))),

  getZone: async (req: ApiRequest<ZoneParams>) => ok(await getZone(req.principal, req.params.location_id, req.params.zone_id)),

  updateZone: async (req: ApiRequest<ZoneParams, {}, ZoneWriteBody>) =>
    ok(await updateZone(req.principal, req.params.location_id, req.params.zone_id, req.body, req.completion(200))),
});
