import type { ItemListQuery } from "../../lib/domain/records/item-model.js";
import { createApiHandler } from "../../lib/http/api-handler.js";
import { itemRoutes } from "../../lib/routes/items.js";
import { normalizePage } from "../../lib/core/pagination.js";
import { created, ok } from "../../lib/http/responses.js";
import type { ApiRequest } from "../../lib/http/types.js";
import {
  adjustItem,
  createItem,
  deleteItem,
  getItem,
  listAdjustments,
  listItems,
  listUnits,
  listVariations,
  updateItem,
} from "../../lib/domain/records/items.js";
import type { AdjustmentBody, ItemCreateBody, ItemUpdateBody } from "../../lib/schemas/items.js";

type PageQuery = { page?: string; limit?: string };
type ItemParams = { id: string };

/** Endpoint group `items`: items, variations, adjustments and units. */
export const handler = createApiHandler(itemRoutes, {
  listItems: async (req: ApiRequest<{}, PageQuery & ItemListQuery>) => ok(await listItems(req.principal, req.path, normalizePage(req.query), req.query)),
  createItem: async (req: ApiRequest<{}, {}, ItemCreateBody>) => created(await createItem(req.principal, req.body, req.completion(201))),
  getItem: async (req: ApiRequest<ItemParams>) => ok(await getItem(req.principal, req.params.id)),
  updateItem: async (req: ApiRequest<ItemParams, {}, ItemUpdateBody>) => ok(await updateItem(req.principal, req.params.id, req.body, req.completion(200))),
  deleteItem: async (req: ApiRequest<ItemParams>) => ok(await deleteItem(req.principal, req.params.id, req.completion(200))),
  listItemVariations: async (req: ApiRequest<ItemParams, PageQuery & { include?: string }>) =>
    ok(await listVariations(req.principal, req.params.id, req.path, normalizePage(req.query), req.query.include)),
  createItemAdjustment: async (req: ApiRequest<ItemParams, {}, AdjustmentBody>) =>
    created(await adjustItem(req.principal, req.params.id, req.body, req.completion(201))),
  listItemAdjustments: async (req: ApiRequest<ItemParams, PageQuery>) =>
    ok(await listAdjustments(req.principal, req.params.id, req.path, normalizePage(req.query))),
  listUnits: async (req: ApiRequest<{}, PageQuery>) => ok(await listUnits(req.principal, req.path, normalizePage(req.query))),
});
