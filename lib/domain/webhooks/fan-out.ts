import { nowIso } from "../../core/clock.js";
import { readUser } from "../../db/auth-store.js";
import { queryWebhookEndpoints } from "../../db/webhooks.js";
import { derivedMessageId } from "../../webhooks/signing.js";
import { disableRevokedEndpoint, type WebhookMessage } from "./delivery.js";
import { accessRevoked, changeMessageBody, receives, viewerOf, type MarkerChange } from "./model.js";
import { enqueueWebhookMessages } from "./queue.js";

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
  const createdAt = nowIso();
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
        if (accessRevoked(viewer, endpoint)) {
          await disableRevokedEndpoint({ accountId, endpointId: endpoint.endpointId });
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
            createdAt,
          });
        }
      }
    }),
  );
  await enqueueWebhookMessages(messages);
  return messages.length;
}
