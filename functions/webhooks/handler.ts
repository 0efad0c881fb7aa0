import { createApiHandler } from "../../lib/http/api-handler.js";
import { webhookRoutes } from "../../lib/routes/webhooks.js";
import { normalizePage } from "../../lib/core/pagination.js";
import { accepted, created, ok } from "../../lib/http/responses.js";
import type { ApiRequest } from "../../lib/http/types.js";
import {
  createWebhookEndpoint,
  deleteWebhookEndpointOf,
  getWebhookEndpoint,
  listDeliveries,
  listWebhookEndpoints,
  rotateWebhookSecret,
  sendTestMessage,
  updateWebhookEndpoint,
} from "../../lib/domain/webhooks/endpoints.js";
import type { WebhookEndpointCreateBody, WebhookEndpointUpdateBody } from "../../lib/schemas/webhooks.js";

type PageQuery = { page?: string; limit?: string };
type EndpointParams = { id: string };

/** Endpoint group `webhooks`: webhook endpoints and their deliveries (architecture section 9). */
export const handler = createApiHandler(webhookRoutes, {
  createWebhookEndpoint: async (req: ApiRequest<{}, {}, WebhookEndpointCreateBody>) =>
    created(await createWebhookEndpoint(req.principal, req.body, req.completion(201))),

  listWebhookEndpoints: async (req: ApiRequest<{}, PageQuery>) => ok(await listWebhookEndpoints(req.principal, req.path, normalizePage(req.query))),

  getWebhookEndpoint: async (req: ApiRequest<EndpointParams>) => ok(await getWebhookEndpoint(req.principal, req.params.id)),

  updateWebhookEndpoint: async (req: ApiRequest<EndpointParams, {}, WebhookEndpointUpdateBody>) =>
    ok(await updateWebhookEndpoint(req.principal, req.params.id, req.body, req.completion(200))),

  deleteWebhookEndpoint: async (req: ApiRequest<EndpointParams>) => ok(await deleteWebhookEndpointOf(req.principal, req.params.id, req.completion(200))),

  rotateWebhookSecret: async (req: ApiRequest<EndpointParams>) => ok(await rotateWebhookSecret(req.principal, req.params.id, req.completion(200))),

  testWebhookEndpoint: async (req: ApiRequest<EndpointParams>) => accepted(await sendTestMessage(req.principal, req.params.id)),

  listWebhookDeliveries: async (req: ApiRequest<EndpointParams, PageQuery>) =>
    ok(await listDeliveries(req.principal, req.params.id, req.path, normalizePage(req.query))),
});
