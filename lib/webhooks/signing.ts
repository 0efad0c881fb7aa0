import { createHash, createHmac, randomBytes } from "node:crypto";

/**
 * Standard Webhooks signing (standardwebhooks.com; architecture section 9). Pure: any receiver
 * verifies what this signs with an off-the-shelf library (npm `standardwebhooks`).
 */

const SECRET_PREFIX = "whsec_";

/** A new endpoint secret: `whsec_` + base64 of 32 random bytes. */
export function newWebhookSecret(): string {
  return `${SECRET_PREFIX}${randomBytes(32).toString("base64")}`;
}

/** The key bytes of a secret (the base64 after `whsec_`). */
function keyOf(secret: string): Buffer {
  return Buffer.from(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret, "base64");
}

/** `v1,` + base64 HMAC-SHA256 of `{id}.{timestamp}.{body}` keyed with the secret's bytes. */
export function signWebhook(secret: string, messageId: string, timestampSeconds: number, body: string): string {
  const digest = createHmac("sha256", keyOf(secret)).update(`${messageId}.${timestampSeconds}.${body}`).digest("base64");
  return `v1,${digest}`;
}

/** The headers of one attempt. */
export interface WebhookHeaders {
  "content-type": string;
  "webhook-id": string;
  "webhook-timestamp": string;
  "webhook-signature": string;
  [name: string]: string;
}

/** The `webhook-*` headers of one attempt: one signature per secret, space-separated. */
export function webhookHeaders(secrets: readonly string[], messageId: string, timestampSeconds: number, body: string): WebhookHeaders {
  return {
    "content-type": "application/json",
    "webhook-id": messageId,
    "webhook-timestamp": String(timestampSeconds),
    "webhook-signature": secrets.map((secret) => signWebhook(secret, messageId, timestampSeconds, body)).join(" "),
  };
}

/**
 * A message id derived from what the message is (`msg_` + 27 base64url characters of a
 * SHA-256): the same parts give the same id on every retry and every reprocessing of its
 * source, different parts a different id.
 */
export function derivedMessageId(...parts: readonly string[]): string {
  return `msg_${createHash("sha256").update(parts.join("\u0000")).digest("base64url").slice(0, 27)}`;
}

/** A message id of a one-off message (a test message): random. */
export function randomMessageId(): string {
  return `msg_${randomBytes(20).toString("base64url").slice(0, 27)}`;
}
