import { parseApiKey } from "../../auth/api-keys.js";
import { accessOfUser, type Principal } from "../../auth/permissions.js";
import { readUser, touchApiKey } from "../../db/auth-store.js";
import { errors } from "../../core/errors.js";
import type { PipelineMiddleware, PipelineRequest } from "../types.js";
import { RATE_WINDOW_SECONDS } from "./rate-limit.js";

/**
 * Authenticates `Authorization: Bearer <key>` (spec part 1, section 5) with at most two
 * strongly consistent reads: the key record (which also counts the request against the
 * key's rate window) and the live user record. Every failure is 401
 * `authentication_required` with `WWW-Authenticate: Bearer`. Nothing is cached, so a
 * revocation or a user change takes effect on the next request.
 */
export function authentication(): PipelineMiddleware {
  const authenticationBefore = async (request: PipelineRequest): Promise<void> => {
    if (request.internal.route?.authenticated === false) return;
    const header = request.event.headers?.authorization;
    if (!header) throw errors.authenticationRequired("No API key provided. Send Authorization: Bearer <API_KEY>.");
    const match = /^Bearer +(\S+)\s*$/i.exec(header);
    if (!match) {
      // Name what is wrong with the header itself: a bare key lacks its scheme.
      const scheme = /^(\S+)(\s|$)/.exec(header.trim())?.[1] ?? "";
      throw errors.authenticationRequired(
        /^Bearer$/i.test(scheme)
          ? "The Authorization header has no API key after Bearer. Send Authorization: Bearer <API_KEY>."
          : /^[a-z]+_(live|test)_/i.test(scheme) || !/\s/.test(header.trim())
            ? "The Authorization header is missing its scheme. Send Authorization: Bearer <API_KEY>."
            : `The Authorization scheme ${scheme.slice(0, 20)} is not supported. Send Authorization: Bearer <API_KEY>.`,
      );
    }
    const parsed = parseApiKey(match[1]!);
    if (!parsed) throw errors.authenticationRequired("The API key is malformed.");

    const nowMs = Date.now();
    const window = Math.floor(nowMs / 1000 / RATE_WINDOW_SECONDS);
    const key = await touchApiKey(parsed.accountId, parsed.keyHash, window);
    if (!key) throw errors.authenticationRequired("The API key is invalid.");
    // Counted against the key's window from here on, whatever follows: its RateLimit headers say so (a 401 too).
    request.internal.rateCount = { window, count: key.rateWindow === window ? (key.rateCount ?? 1) : 1 };
    if (key.revokedAt) throw errors.authenticationRequired("The API key has been revoked.");
    if (key.expiresAt && Date.parse(key.expiresAt) <= nowMs) throw errors.authenticationRequired("The API key has expired.");

    const user = await readUser(key.accountId, key.userId);
    if (!user) throw errors.authenticationRequired("The API key's user no longer exists in this account.");
    if (user.status !== "active") throw errors.authenticationRequired("The API key's user is inactive.");
    if (user.keysNotBefore && key.createdAt < user.keysNotBefore) {
      throw errors.authenticationRequired("The API key no longer belongs to its user's account.");
    }

    const scopes = new Set(key.scopes ?? []);
    const principal: Principal = {
      accountId: key.accountId,
      userId: user.userId,
      ...accessOfUser(user),
      timeZone: user.timeZone ?? null,
      keyId: key.keyId,
      keyHash: key.keyHash,
      scopes: scopes.has("all") ? null : scopes,
      accessUsed: new Set(),
    };
    request.internal.principal = principal;
  };
  return { before: authenticationBefore };
}
