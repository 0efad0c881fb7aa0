import { createApiHandler } from "../../lib/http/api-handler.js";
import { kitRoutes } from "../../lib/routes/kits.js";
import { normalizePage } from "../../lib/core/pagination.js";
import { created, ok } from "../../lib/http/responses.js";
import type { ApiRequest } from "../../lib/http/types.js";
import { getKit, listBuilds, listKits, type KitListQuery } from "../../lib/domain/kits/service.js";
import { assembleKit, disassembleKit } from "../../lib/domain/kits/builds.js";
import type { KitBuildBody } from "../../lib/schemas/kits.js";

type PageQuery = { page?: string; limit?: string };
type KitParams = { kit_id: string };

/** Endpoint group `kits`: kits, their components and builds (spec part 2, section 4.7). */
export const handler = createApiHandler(kitRoutes, {
  listKits: async (req: ApiRequest<{}, PageQuery & KitListQuery>) => ok(await listKits(req.principal, req.path, normalizePage(req.query), req.query)),
  getKit: async (req: ApiRequest<KitParams>) => ok(await getKit(req.principal, req.params.kit_id)),
  listKitBuilds: async (req: ApiRequest<KitParams, PageQuery & { location_id?: string }>) =>
    ok(await listBuilds(req.principal, req.params.kit_id, req.path, normalizePage(req.query), req.query.location_id)),
  createKitBuild: async (req: ApiRequest<KitParams, {}, KitBuildBody>) =>
    created(await assembleKit(req.principal, req.params.kit_id, req.body, req.completion(201))),
  deleteKitBuild: async (req: ApiRequest<KitParams & { build_id: string }>) => ok(await disassembleKit(req.principal, req.params.kit_id, req.params.build_id)),
});
