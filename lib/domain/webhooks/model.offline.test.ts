import { describe, expect, it } from "vitest";
import { Webhook } from "standardwebhooks";
import { ApiError } from "../../core/errors.js";
import { derivedMessageId, newWebhookSecret, randomMessageId, signWebhook, webhookHeaders } from "../../webhooks/signing.js";
import { addressAllowed } from "../../webhooks/transport.js";
import {
  changeMessageBody,
  checkEndpointUrl,
  dayOf,
  expiryOfDay,
  firstKeptDay,
  isSuccess,
  planAfterAttempt,
  plannedAttemptOf,
  presentEndpoint,
  receives,
  signingSecrets,
  testMessageBody,
  type EndpointState,
} from "./model.js";

const endpoint: EndpointState = {
  endpointId: "5b0a3c55-3f2a-4a0e-9d8b-1f6f1f0b2c3d",
  url: "https://example.com/hooks",
  resources: ["invoice", "item"],
  status: "enabled",
  userId: "0c9d3b7e-8f0a-4c1b-a2d3-e4f5a6b7c8d9",
  secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
  createdAt: "2026-11-27T08:00:00.000Z",
  updatedAt: "2026-11-27T08:00:00.000Z",
};

const urlError = (url: string, local = false): string | undefined => {
  try {
    checkEndpointUrl(url, local);
    return undefined;
  } catch (error) {
    expect(error).toBeInstanceOf(ApiError);
    const apiError = error as ApiError;
    expect([apiError.statusCode, apiError.code, apiError.param]).toEqual([422, "validation_failed", "url"]);
    return apiError.details?.[0]?.code;
  }
};

describe("webhook signing (Standard Webhooks)", () => {
  it("signs what the consumer's library verifies, with each of several secrets", () => {
    const [current, previous] = [newWebhookSecret(), newWebhookSecret()];
    expect(current).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const body = JSON.stringify({ type: "item.upsert" });
    const timestamp = Math.floor(Date.now() / 1000);
    const headers = webhookHeaders([current, previous], "msg_abc", timestamp, body);
    expect(headers["webhook-signature"].split(" ")).toHaveLength(2);
    for (const secret of [current, previous]) expect(new Webhook(secret).verify(body, headers)).toEqual({ type: "item.upsert" });
    expect(() => new Webhook(newWebhookSecret()).verify(body, headers)).toThrow();
    expect(signWebhook(current, "msg_abc", timestamp, body)).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
  });

  it("derives the same message id from the same parts, another from other parts", () => {
    const id = derivedMessageId("account", "42", "endpoint");
    expect(id).toMatch(/^msg_[A-Za-z0-9_-]{27}$/);
    expect(derivedMessageId("account", "42", "endpoint")).toBe(id);
    expect(derivedMessageId("account", "43", "endpoint")).not.toBe(id);
    expect(derivedMessageId("account", "42", "other")).not.toBe(id);
    expect(randomMessageId()).not.toBe(randomMessageId());
  });
});

describe("webhook endpoint rules", () => {
  it("takes https URLs without user information, at most 2,048 characters", () => {
    expect(urlError("https://example.com/hooks?x=1")).toBeUndefined();
    expect(urlError("http://example.com/hooks")).toBe("invalid_format");
    expect(urlError("ftp://example.com/hooks")).toBe("invalid_format");
    expect(urlError("https://user:pass@example.com/hooks")).toBe("invalid_format");
    // Forms URL parsing forgives are judged as written: an empty user info, no host, no "//".
    expect(urlError("https://:@example.com/")).toBe("invalid_format");
    expect(urlError("https://@example.com/")).toBe("invalid_format");
    expect(urlError("https:///x")).toBe("invalid_format");
    expect(urlError("https:example.com/hooks")).toBe("invalid_format");
    expect(urlError("https://example.com:8443/hooks#frag")).toBeUndefined();
    expect(urlError("not a url")).toBe("invalid_format");
    expect(urlError(`https://example.com/${"a".repeat(2030)}`)).toBe("too_long");
  });

  it("takes http loopback URLs on the local stack only", () => {
    for (const url of ["http://127.0.0.1:4000/hooks", "http://localhost/hooks", "http://[::1]:9/x"]) {
      expect(urlError(url, true), url).toBeUndefined();
      expect(urlError(url, false), url).toBe("invalid_format");
    }
    expect(urlError("http://10.0.0.1/hooks", true)).toBe("invalid_format");
    // Other spellings that URL parsing maps to a loopback host are refused, as written.
    for (const url of ["http://127.1:4000/x", "http://0x7f000001/x", "http://2130706433/x", "http://127.0.0.1.nip.io/x", "http://LOCALHOST./x"]) {
      expect(urlError(url, true), url).toBe("invalid_format");
    }
    expect(urlError("HTTP://LocalHost:8080?x=1", true)).toBeUndefined();
  });

  it("refuses spaces and control characters anywhere (the URL is stored as sent)", () => {
    for (const url of [
      " https://example.com/x",
      "https://example.com/x ",
      "https://example.com/a b",
      "https://example.com/\tx",
      "https://example.com/\u0085x",
      "https://example.com/\u009fx",
      " http://127.0.0.1:4717/d",
    ]) {
      expect(urlError(url, true), JSON.stringify(url)).toBe("invalid_format");
    }
  });

  it("shows the secret only when asked, and a reason only when disabled", () => {
    expect(presentEndpoint(endpoint)).not.toHaveProperty("secret");
    expect(presentEndpoint(endpoint, { withSecret: true }).secret).toBe(endpoint.secret);
    expect(presentEndpoint(endpoint).disabled_reason).toBeNull();
    expect(presentEndpoint({ ...endpoint, status: "disabled", disabledReason: "failing" }).disabled_reason).toBe("failing");
    expect(Object.keys(presentEndpoint(endpoint))).toEqual([
      "id",
      "object",
      "url",
      "description",
      "resources",
      "status",
      "disabled_reason",
      "user_id",
      "created_at",
      "updated_at",
    ]);
  });

  it("signs with the previous secret too until its 24 hours are over", () => {
    const rotated = { ...endpoint, previousSecret: "whsec_old", previousSecretUntil: 1_000 };
    expect(signingSecrets(rotated, 999)).toEqual([endpoint.secret, "whsec_old"]);
    expect(signingSecrets(rotated, 1_000)).toEqual([endpoint.secret]);
    expect(signingSecrets(endpoint, 0)).toEqual([endpoint.secret]);
  });

  it("an enabled endpoint receives the resources it selected", () => {
    expect(receives(endpoint, "item")).toBe(true);
    expect(receives(endpoint, "estimate")).toBe(false);
    expect(receives({ ...endpoint, status: "disabled" }, "item")).toBe(false);
  });
});

describe("webhook messages and attempts", () => {
  it("a change message is the thin event of /sync", () => {
    const { type, body } = changeMessageBody({ accountId: "a", seq: 7, resource: "item", recordId: "r1", operation: "delete", at: Date.UTC(2026, 10, 27, 8) });
    expect(type).toBe("item.delete");
    expect(JSON.parse(body)).toEqual({
      type: "item.delete",
      timestamp: "2026-11-27T08:00:00.000Z",
      data: { object: "change", resource: "item", id: "r1", operation: "delete" },
    });
    expect(JSON.parse(testMessageBody("e1", new Date(0)).body)).toEqual({
      type: "webhook.test",
      timestamp: "1970-01-01T00:00:00.000Z",
      data: { object: "webhook_endpoint", id: "e1" },
    });
  });

  it("retries after each delay of the schedule, then the message is exhausted", () => {
    const schedule = [5, 300, 1800, 7200, 18000, 36000, 36000];
    expect(planAfterAttempt(true, 1, schedule)).toEqual({ kind: "delivered" });
    expect(planAfterAttempt(false, 1, schedule)).toEqual({ kind: "retry", delaySeconds: 5 });
    expect(planAfterAttempt(false, 7, schedule)).toEqual({ kind: "retry", delaySeconds: 36000 });
    expect(planAfterAttempt(false, 8, schedule)).toEqual({ kind: "exhausted" });
    expect([199, 200, 204, 299, 300, 500, null].map(isSuccess)).toEqual([false, true, true, true, false, false, false]);
  });

  it("an attempt shows its planned retry until the endpoint says the retry will be dropped, test messages aside", () => {
    const at = "2026-11-27T09:00:00.000Z";
    const now = "2026-11-27T09:03:00.000Z";
    const failed = { eventType: "item.upsert", createdAt: at, nextAttemptAt: "2026-11-27T09:05:00.000Z" };
    expect(plannedAttemptOf(failed, endpoint, now)).toBe("2026-11-27T09:05:00.000Z");
    expect(plannedAttemptOf({ ...failed, nextAttemptAt: undefined }, endpoint, now)).toBeNull();
    expect(plannedAttemptOf(failed, { ...endpoint, status: "disabled" }, now)).toBeNull();
    // Disabled and enabled again after the attempt: its message is dropped all the same.
    expect(plannedAttemptOf(failed, { ...endpoint, enabledAt: "2026-11-27T09:01:00.000Z" }, now)).toBeNull();
    expect(plannedAttemptOf(failed, { ...endpoint, enabledAt: "2026-11-27T08:59:00.000Z" }, now)).toBe(failed.nextAttemptAt);
    // An attempt under way while the endpoint was disabled and enabled again ends after it: its message's time decides.
    const late = { ...failed, createdAt: "2026-11-27T09:02:00.000Z", messageCreatedAt: at };
    expect(plannedAttemptOf(late, { ...endpoint, enabledAt: "2026-11-27T09:01:00.000Z" }, now)).toBeNull();
    expect(plannedAttemptOf(failed, { ...endpoint, resources: ["invoice"] }, now)).toBeNull();
    // A test message goes even to a disabled endpoint.
    expect(plannedAttemptOf({ ...failed, eventType: "webhook.test" }, { ...endpoint, status: "disabled" }, now)).toBe(failed.nextAttemptAt);
    // A planned time already past is history: that retry ran (or was dropped and cleared when it came).
    expect(plannedAttemptOf(failed, { ...endpoint, status: "disabled" }, "2026-11-27T09:06:00.000Z")).toBe(failed.nextAttemptAt);
  });

  it("keeps deliveries 30 UTC days, today included", () => {
    const now = new Date("2026-11-27T23:59:59.000Z");
    expect(dayOf(now)).toBe("2026-11-27");
    expect(firstKeptDay(now)).toBe("2026-10-29");
    expect(expiryOfDay("2026-11-27")).toBe(Date.parse("2026-12-27T00:00:00.000Z") / 1000);
  });
});

describe("addresses a delivery may connect to", () => {
  it("refuses private, loopback, link-local and metadata addresses (IPv4, IPv6, mapped)", () => {
    for (const address of [
      "10.1.2.3",
      "172.16.0.1",
      "192.168.1.1",
      "127.0.0.1",
      "169.254.169.254",
      "0.0.0.0",
      "100.64.0.1",
      "::1",
      "fd00:ec2::254",
      "fe80::1",
      "::ffff:10.0.0.1",
      "::",
    ]) {
      expect(addressAllowed(address, false), address).toBe(false);
    }
    for (const address of ["93.184.216.34", "8.8.8.8", "2606:2800:220:1:248:1893:25c8:1946", "::ffff:8.8.8.8"]) {
      expect(addressAllowed(address, false), address).toBe(true);
    }
  });

  it("lets the local stack reach its own loopback, and nothing else private", () => {
    expect(addressAllowed("127.0.0.1", true)).toBe(true);
    expect(addressAllowed("::1", true)).toBe(true);
    expect(addressAllowed("10.0.0.1", true)).toBe(false);
    expect(addressAllowed("169.254.169.254", true)).toBe(false);
  });
});
