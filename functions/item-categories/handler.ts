import { createApiHandler } from "../../lib/http/api-handler.js";
import { itemCategoryRoutes } from "../../lib/routes/item-categories.js";
import { normalizePage } from "../../lib/core/pagination.js";
import { created, ok } from "../../lib/http/responses.js";
import type { ApiRequest } from "../../lib/http/types.js";
import { createItemCategory, getItemCategory, listItemCategories, updateItemCategory } from "../../lib/domain/records/item-categories.js";
import type { ItemCategoryCreateBody, ItemCategoryUpdateBody } from "../../lib/schemas/item-categories.js";

type ListQuery = { page?: string; limit?: string; q?: string; parent_id?: string };
type CategoryParams = { category_id: string };

/** Endpoint group `item-categories` (spec part 1, section 4.2). */
export const handler = createApiHandler(itemCategoryRoutes, {
  listItemCategories: async (req: ApiRequest<{}, ListQuery>) =>
    ok(
      await listItemCategories(req.principal, req.path, normalizePage(req.query), {
        q: req.query.q,
        parentId: req.query.parent_id,
      }),
    ),

  getItemCategory: async (req: ApiRequest<CategoryParams>) => ok(await getItemCategory(req.principal, req.params.category_id)),

  createItemCategory: async (req: ApiRequest<{}, {}, ItemCategoryCreateBody>) =>
    created(await createItemCategory(req.principal, req.body, req.completion(201))),

  updateItemCategory: async (req: ApiRequest<CategoryParams, {}, ItemCategoryUpdateBody>) =>
    ok(await updateItemCategory(req.principal, req.params.category_id, req.body, req.completion(200))),
});
