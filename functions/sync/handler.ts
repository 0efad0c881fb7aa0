import { createApiHandler } from "../../lib/http/api-handler.js";
import { syncRoutes } from "../../lib/routes/sync.js";
import { ok } from "../../lib/http/responses.js";
import type { ApiRequest } from "../../lib/http/types.js";
import { syncChanges } from "../../lib/domain/sync/feed.js";

/** Endpoint group `sync`: `GET /sync` (spec part 1, section 4.7). */
export const handler = createApiHandler(syncRoutes, {
  sync: async (req: ApiRequest<{}, Record<string, unknown>>) => ok(await syncChanges(req.principal, req.query)),
});
