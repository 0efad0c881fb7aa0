import { API_PREFIX, route, type RouteDefinition } from "./define.js";
import {
  itemCategoryCreateBody,
  itemCategoryList,
  itemCategoryListQuery,
  itemCategoryPath,
  itemCategoryResource,
  itemCategoryUpdateBody,
} from "../schemas/item-categories.js";

/** Endpoint group `item-categories` (spec part 1, section 4.2). */
export const itemCategoryRoutes: RouteDefinition[] = [
  route({
    operationId: "listItemCategories",
    method: "GET",
    path: `${API_PREFIX}/item-categories`,
    group: "item-categories",
    summary: "List item categories ordered by weight, then name",
    scopes: ["items:read"],
    idempotency: "none",
    request: { query: itemCategoryListQuery },
    errors: { 422: ["invalid_query_parameter"] },
    responses: { 200: itemCategoryList },
  }),
  route({
    operationId: "getItemCategory",
    method: "GET",
    path: `${API_PREFIX}/item-categories/{category_id}`,
    group: "item-categories",
    summary: "Retrieve an item category with its ordered custom fields",
    scopes: ["items:read"],
    idempotency: "none",
    request: { path: itemCategoryPath },
    responses: { 200: itemCategoryResource },
  }),
  route({
    operationId: "createItemCategory",
    method: "POST",
    path: `${API_PREFIX}/item-categories`,
    group: "item-categories",
    summary: "Create an item category",
    description: "`parent_id` must name a top-level category of the account.",
    scopes: ["items:write"],
    permissions: ["inventory.modify"],
    idempotency: "optional",
    request: { body: itemCategoryCreateBody },
    example: {
      body: {
        name: "Electronics",
        inventory_type: "quantity",
        custom_fields: [{ name: "Warranty", display_on_inventory_list: true, publish_on_documents: false }],
      },
    },
    responses: { 201: itemCategoryResource },
  }),
  route({
    operationId: "updateItemCategory",
    method: "PATCH",
    path: `${API_PREFIX}/item-categories/{category_id}`,
    group: "item-categories",
    summary: "Update an item category",
    description:
      "Fields sent replace the stored ones; `custom_fields`, when sent, is the complete desired list.",
    scopes: ["items:write"],
    permissions: ["inventory.modify"],
    idempotency: "optional",
    request: { path: itemCategoryPath, body: itemCategoryUpdateBody },
    example: { body: { name: "Consumer Electronics" } },
    responses: { 200: itemCategoryResource },
  }),
];
