import { nowIso } from "../core/clock.js";
import { ConditionalCheckFailedException } from "@aws-sdk/client-dynamodb";
import { UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { unmarshall } from "@aws-sdk/util-dynamodb";
import { ContentionError } from "../core/errors.js";
import { getDocumentClient } from "./client.js";
import { db, type ApiKeyItem, type UserItem } from "./service.js";
import { tableName } from "./table.js";

/**
 * Reads an API key record and counts one request against its rate window, in ONE strongly
 * consistent UpdateItem (the returned image is the current record). The first request of a
 * new minute resets the counter with a second, conditioned update. Returns undefined when
 * the key does not exist.
 */
export async function touchApiKey(accountId: string, keyHash: string, window: number): Promise<ApiKeyItem | undefined> {
  const apiKeys = db().entities.apiKey;
  const { Key } = apiKeys.get({ accountId, keyHash }).params<{ Key: Record<string, string> }>();
  const client = getDocumentClient();
  for (let attempt = 0; attempt < 3; attempt++) {
    const now = nowIso();
    try {
      const counted = await client.send(
        new UpdateCommand({
          TableName: tableName(),
          Key,
          UpdateExpression: "SET lastUsedAt = :now ADD rateCount :one",
          ConditionExpression: "attribute_exists(pk) AND rateWindow = :window",
          ExpressionAttributeValues: { ":now": now, ":one": 1, ":window": window },
          ReturnValues: "ALL_NEW",
          ReturnValuesOnConditionCheckFailure: "ALL_OLD",
        }),
      );
      return apiKeys.parse({ Item: counted.Attributes }).data ?? undefined;
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
      if (!error.Item) return undefined;
      const old = unmarshall(error.Item);
      if (typeof old.rateWindow === "number" && old.rateWindow > window) window = old.rateWindow;
    }
    try {
      const reset = await client.send(
        new UpdateCommand({
          TableName: tableName(),
          Key,
          UpdateExpression: "SET lastUsedAt = :now, rateWindow = :window, rateCount = :one",
          ConditionExpression: "attribute_exists(pk) AND (attribute_not_exists(rateWindow) OR rateWindow < :window)",
          ExpressionAttributeValues: { ":now": now, ":one": 1, ":window": window },
          ReturnValues: "ALL_NEW",
        }),
      );
      return apiKeys.parse({ Item: reset.Attributes }).data ?? undefined;
    } catch (error) {
      // Another request reset the window first: count against it on the next pass.
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
    }
  }
  // Three window resets lost in a row (a minute boundary under heavy load): busy, not broken.
  throw new ContentionError("count the request against the API key's rate window", 3);
}

/** The user's live record (strongly consistent), or undefined when deleted or moved. */
export async function readUser(accountId: string, userId: string): Promise<UserItem | undefined> {
  const { data } = await db().entities.user.get({ accountId, userId }).go({ consistent: true });
  return data ?? undefined;
}
