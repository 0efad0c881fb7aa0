import { lookup as dnsLookup, type LookupAddress } from "node:dns";
import { request as httpRequest, type IncomingMessage } from "node:http";
import { request as httpsRequest } from "node:https";
import { BlockList, isIP } from "node:net";

/**
 * The HTTP POST of one webhook attempt (architecture section 9): no redirects followed (a 3xx
 * is a failed attempt), the whole exchange within `timeoutMs`, and never to a private,
 * loopback, link-local or metadata address. The address is checked where the connection is
 * made (the socket's DNS lookup, and IP literals before connecting), so a name that resolves
 * to a public address when checked and a private one when used (DNS rebinding) is refused too.
 */

export interface PostOutcome {
  /** The HTTP status, when a response arrived. */
  status: number | null;
  /** Why no 2xx arrived: `timeout`, `connection_refused`, `address_not_allowed`, ... (null on a response). */
  error: string | null;
  durationMs: number;
}

/** Addresses a delivery never connects to (RFC 6890 special-purpose ranges, cloud metadata). */
const FORBIDDEN = new BlockList();
for (const [network, prefix] of [
  ["0.0.0.0", 8],
  ["10.0.0.0", 8],
  ["100.64.0.0", 10],
  ["127.0.0.0", 8],
  ["169.254.0.0", 16], // link-local, including 169.254.169.254 (instance metadata)
  ["172.16.0.0", 12],
  ["192.0.0.0", 24],
  ["192.0.2.0", 24],
  ["192.168.0.0", 16],
  ["198.18.0.0", 15],
  ["198.51.100.0", 24],
  ["203.0.113.0", 24],
  ["224.0.0.0", 4],
  ["240.0.0.0", 4],
] as const) {
  FORBIDDEN.addSubnet(network, prefix, "ipv4");
}
for (const [network, prefix] of [
  ["::", 128],
  ["::1", 128],
  ["64:ff9b::", 96],
  ["100::", 64],
  ["2001:db8::", 32],
  ["fc00::", 7], // unique local, including fd00:ec2::254 (instance metadata over IPv6)
  ["fe80::", 10],
  ["ff00::", 8],
] as const) {
  FORBIDDEN.addSubnet(network, prefix, "ipv6");
}
const LOOPBACK = new BlockList();
LOOPBACK.addSubnet("127.0.0.0", 8, "ipv4");
LOOPBACK.addAddress("::1", "ipv6");

/** An IPv4 address mapped into IPv6 (`::ffff:10.0.0.1`) is checked as the IPv4 address. */
function unmapped(address: string): { address: string; family: "ipv4" | "ipv6" } {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return { address: mapped[1]!, family: "ipv4" };
  return { address, family: isIP(address) === 6 ? "ipv6" : "ipv4" };
}

/** Whether a delivery may connect to this address (`allowLoopback`: the local stack's own machine). */
export function addressAllowed(address: string, allowLoopback: boolean): boolean {
  const { address: plain, family } = unmapped(address);
  if (allowLoopback && LOOPBACK.check(plain, family)) return true;
  return !FORBIDDEN.check(plain, family);
}

class AddressNotAllowed extends Error {
  readonly code = "ADDRESS_NOT_ALLOWED";
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/** A socket lookup that resolves as usual and refuses forbidden addresses. */
function guardedLookup(allowLoopback: boolean) {
  return (hostname: string, options: { all?: boolean; family?: number }, callback: LookupCallback): void => {
    dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, []);
      const list = addresses as LookupAddress[];
      if (list.length === 0 || list.some((entry) => !addressAllowed(entry.address, allowLoopback))) {
        return callback(new AddressNotAllowed(`${hostname} resolves to an address deliveries may not reach.`), []);
      }
      if (options.all) return callback(null, list);
      return callback(null, list[0]!.address, list[0]!.family);
    });
  };
}

const ERROR_NAMES: Record<string, string> = {
  ADDRESS_NOT_ALLOWED: "address_not_allowed",
  ECONNREFUSED: "connection_refused",
  ECONNRESET: "connection_reset",
  EPIPE: "connection_reset",
  ENOTFOUND: "dns_failure",
  EAI_AGAIN: "dns_failure",
  EHOSTUNREACH: "host_unreachable",
  ENETUNREACH: "host_unreachable",
  ETIMEDOUT: "timeout",
};

function errorName(error: unknown): string {
  const { code = "", library = "" } = error as { code?: string; library?: string };
  if (code in ERROR_NAMES) return ERROR_NAMES[code]!;
  // EPROTO: the TLS handshake failed (e.g. the far end speaks plain HTTP); OpenSSL names its library.
  if (code === "EPROTO" || code.startsWith("ERR_TLS") || /CERT|SSL/.test(code) || /SSL/i.test(library)) return "tls_error";
  return "network_error";
}

/** POSTs `body` to `url` once; never throws (the outcome says what happened). */
export function postWebhook(
  url: string,
  headers: Record<string, string>,
  body: string,
  options: { timeoutMs: number; allowLoopback: boolean },
): Promise<PostOutcome> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  return new Promise((resolve) => {
    let settled = false;
    let timer: NodeJS.Timeout | undefined;
    const finish = (outcome: Omit<PostOutcome, "durationMs">) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve({ ...outcome, durationMs: elapsed() });
    };
    const target = new URL(url);
    const host = target.hostname.replace(/^\[|\]$/g, "");
    // An IP literal is connected to without a lookup: check it here.
    if (isIP(host) !== 0 && !addressAllowed(host, options.allowLoopback)) {
      finish({ status: null, error: "address_not_allowed" });
      return;
    }
    const send = target.protocol === "https:" ? httpsRequest : httpRequest;
    const request = send(
      target,
      {
        method: "POST",
        headers: { ...headers, "content-length": String(Buffer.byteLength(body)), "user-agent": "inventory-api-webhooks/1" },
        lookup: guardedLookup(options.allowLoopback) as never,
        agent: false,
      },
      (response: IncomingMessage) => {
        // Only the status matters; the body is read (and dropped) so the exchange completes.
        response.on("data", () => undefined);
        response.on("end", () => finish({ status: response.statusCode ?? null, error: null }));
        response.on("error", (error) => finish({ status: response.statusCode ?? null, error: errorName(error) }));
      },
    );
    timer = setTimeout(() => {
      finish({ status: null, error: "timeout" });
      request.destroy();
    }, options.timeoutMs);
    request.on("error", (error) => finish({ status: null, error: errorName(error) }));
    request.end(body);
  });
}
