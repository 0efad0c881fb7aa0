import { createApiHandler } from "../../lib/http/api-handler.js";
import { partyRoutes } from "../../lib/routes/parties.js";
import { normalizePage } from "../../lib/core/pagination.js";
import { created, ok } from "../../lib/http/responses.js";
import type { ApiRequest, RouteHandler } from "../../lib/http/types.js";
import { createParty, deleteParty, getParty, listParties, updateParty } from "../../lib/domain/records/parties.js";
import { PARTY_KINDS, type PartyKind, type PartyWriteBody } from "../../lib/schemas/parties.js";

type ListQuery = { page?: string; limit?: string; q?: string };
type PartyParams = { id: string };

/** The route handlers of one kind (spec part 1, section 4.4). */
function handlersOf(kind: PartyKind): Record<string, RouteHandler> {
  const title = kind[0]!.toUpperCase() + kind.slice(1);
  const update = async (req: ApiRequest<PartyParams, {}, PartyWriteBody>) =>
    ok(await updateParty(req.principal, kind, req.params.id, req.body, req.completion(200)));
  return {
    [`list${title}s`]: async (req: ApiRequest<{}, ListQuery>) => ok(await listParties(req.principal, kind, req.path, normalizePage(req.query), req.query.q)),
    [`get${title}`]: async (req: ApiRequest<PartyParams>) => ok(await getParty(req.principal, kind, req.params.id)),
    [`create${title}`]: async (req: ApiRequest<{}, {}, PartyWriteBody>) => created(await createParty(req.principal, kind, req.body, req.completion(201))),
    [`update${title}`]: update,
    [`replace${title}`]: update,
    [`delete${title}`]: async (req: ApiRequest<PartyParams>) => ok(await deleteParty(req.principal, kind, req.params.id, req.completion(200))),
  };
}

/** Endpoint group `parties`: customers, prospects and suppliers. */
export const handler = createApiHandler(partyRoutes, Object.assign({}, ...PARTY_KINDS.map(handlersOf)));
