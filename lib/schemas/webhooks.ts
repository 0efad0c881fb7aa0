import * as z from "zod";
import { type Infer, lazy } from "./lazy.js";
import { listEnvelope, optionalText, timestamp, uuid } from "./common.js";
import { SYNC_RESOURCES } from "../sync/classify.js";

/** Webhook endpoints and deliveries (architecture section 9). */

const resourceList = () =>
  z
    .array(z.enum(SYNC_RESOURCES))
    .min(1)
    .max(SYNC_RESOURCES.length * 4)
    .meta({ id: "WebhookResources" });

const endpointUrl = () =>
  z.string().max(2048).meta({
    id: "WebhookUrl",
    format: "uri",
    description:
      "`https://`, no user information (the local stack also takes `http://` to 127.0.0.1, localhost or [::1]). A host resolving to a private address fails each attempt (`address_not_allowed`).",
    example: "https://example.com/webhooks/inventory",
  });

const endpointFields = () => ({
  id: uuid(),
  object: z.literal("webhook_endpoint"),
  url: z.string().meta({ example: "https://example.com/webhooks/inventory" }),
  description: z.string().nullable(),
  resources: z.array(z.enum(SYNC_RESOURCES)),
  status: z.enum(["enabled", "disabled"]),
  disabled_reason: z.enum(["manual", "failing", "permission_revoked"]).nullable(),
  user_id: uuid(),
  created_at: timestamp(),
  updated_at: timestamp(),
});

export const webhookEndpointResource = lazy(() => z.object(endpointFields()).meta({ id: "WebhookEndpoint" }));

export const webhookEndpointWithSecret = lazy(() =>
  z
    .object({
      ...endpointFields(),
      secret: z.string().meta({
        description: "Signs the messages. Shown only by create and rotate-secret.",
        example: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
      }),
    })
    .meta({ id: "WebhookEndpointWithSecret" }),
);

export const webhookEndpointList = lazy(() => listEnvelope(webhookEndpointResource(), "WebhookEndpointList"));

export const webhookEndpointCreateBody = lazy(() =>
  z
    .strictObject({
      url: endpointUrl(),
      resources: resourceList().optional(),
      description: optionalText(500),
    })
    .meta({ id: "WebhookEndpointCreate" }),
);

export const webhookEndpointUpdateBody = lazy(() =>
  z
    .strictObject({
      url: endpointUrl().optional(),
      resources: resourceList().optional(),
      description: optionalText(500),
      status: z.enum(["enabled", "disabled"]).optional().meta({ description: "`enabled` clears `disabled_reason`; `disabled` sets it to `manual`." }),
    })
    .meta({ id: "WebhookEndpointUpdate" }),
);

export const webhookEndpointPath = lazy(() => z.object({ id: uuid() }));

export const deletedWebhookEndpoint = lazy(() =>
  z.object({ id: uuid(), object: z.literal("webhook_endpoint"), deleted: z.literal(true) }).meta({ id: "DeletedWebhookEndpoint" }),
);

export const webhookTest = lazy(() =>
  z.object({ object: z.literal("webhook_test"), message_id: z.string().meta({ example: "msg_2mJ0l8S8w1vU2cQm4Cj5xk0q3xA" }) }).meta({ id: "WebhookTest" }),
);

export const webhookDeliveryResource = lazy(() =>
  z
    .object({
      id: uuid(),
      object: z.literal("webhook_delivery"),
      message_id: z.string().meta({ example: "msg_2mJ0l8S8w1vU2cQm4Cj5xk0q3xA" }),
      event_type: z.string().meta({ example: "item.upsert" }),
      attempt: z.int().min(1),
      status: z.enum(["succeeded", "failed"]),
      response_status: z.int().min(100).max(599).nullable().meta({ example: 204 }),
      error: z.string().nullable().meta({
        description:
          "Why no response arrived: `timeout`, `connection_refused`, `connection_reset`, `dns_failure`, `host_unreachable`, `tls_error`, `address_not_allowed` or `network_error`; null when one did (`response_status` tells).",
      }),
      duration_ms: z.int().min(0).meta({ example: 84 }),
      next_attempt_at: timestamp().nullable(),
      created_at: timestamp(),
    })
    .meta({ id: "WebhookDelivery" }),
);

export const webhookDeliveryList = lazy(() => listEnvelope(webhookDeliveryResource(), "WebhookDeliveryList"));

export type WebhookEndpointCreateBody = Infer<typeof webhookEndpointCreateBody>;
export type WebhookEndpointUpdateBody = Infer<typeof webhookEndpointUpdateBody>;
