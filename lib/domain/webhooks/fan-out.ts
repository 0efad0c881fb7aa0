import { accessOfUser } from "../../auth/permissions.js";
import { nowIso } from "../../core/clock.js";
import { log } from "../../core/log.js";
import { readUser } from "../../db/auth-store.js";
import type { UserItem } from "../../db/service.js";
import { disableWebhookEndpoint, queryWebhookEndpoints } from "../../db/webhooks.js";
import { seesAccountWide, type SyncViewer } from "../sync/access.js";
import type { SyncResource } from "../../sync/classify.js";
import { derivedMessageId } from "../../webhooks/signing.js";
import type { WebhookMessage } from "./delivery.js";
import { changeMessageBody, receives, type MarkerChange } from "./model.js";
import { enqueueWebhookMessages } from "./queue.js";

/** What a stored user may sync: nothing once inactive. */
export const viewerOf = (user: UserItem | undefined): SyncViewer | undefined => (user?.status === "active" ? accessOfUser(user) : undefined);

/**
 * Fans change markers out to webhook endpoints (architecture section 9): per account ONE Query
 * of its endpoints (none: nothing more), the endpoints' users (one read each), then one
 * message per marker and enabled endpoint that selected its resource, while the endpoint's
 * user may still sync it (`GET /sync`'s rule). An endpoint whose user lost that right for any
 * of its resources is disabled with `permission_revoked` and gets nothing. A message's id comes from the marker
 * and the endpoint, so reprocessing the same markers (a retried stream batch) makes the same
 * messages. Returns how many messages were enqueued.
 */
export async function fanOutChanges(changes: readonly MarkerChange[]): Promise<number> {
  const byAccount = new Map<string, MarkerChange[]>();
  for (const change of changes) byAccount.set(change.accountId, [...(byAccount.get(change.accountId) ?? []), change]);
  const messages: WebhookMessage[] = [];
  await Promise.all(
    [...byAccount].map(async ([accountId, accountChanges]) => {
      const resources = new Set(accountChanges.map((change) => change.resource));
      const endpoints = (await queryWebhookEndpoints(accountId)).filter((endpoint) => [...resources].some((resource) => receives(endpoint, resource)));
      if (endpoints.length === 0) return;
      const userIds = [...new Set(endpoints.map((endpoint) => endpoint.userId))];
      const users = new Map(await Promise.all(userIds.map(async (userId) => [userId, viewerOf(await readUser(accountId, userId))] as const)));
      for (const endpoint of endpoints) {
        const viewer = users.get(endpoint.userId);
        const wanted = accountChanges.filter((change) => receives(endpoint, change.resource));
        // Any of its resources lost (not only those of this batch): the endpoint is disabled, as documented.
        if (!viewer || endpoint.resources.some((resource) => !seesAccountWide(viewer, resource as SyncResource))) {
          const key = { accountId, endpointId: endpoint.endpointId };
          if (await disableWebhookEndpoint(key, "permission_revoked", nowIso()))
            log("WARN", "webhook endpoint disabled", { ...key, reason: "permission_revoked" });
          continue;
        }
        for (const change of wanted) {
          const { type, body } = changeMessageBody(change);
          messages.push({
            accountId,
            endpointId: endpoint.endpointId,
            messageId: derivedMessageId(accountId, String(change.seq), endpoint.endpointId),
            type,
            body,
          });
        }
      }
    }),
  );
  await enqueueWebhookMessages(messages);
  return messages.length;
}
