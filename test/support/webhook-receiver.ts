import { randomUUID } from "node:crypto";
import { createServer, type IncomingHttpHeaders, type ServerResponse, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll } from "vitest";
import { handler as streamHandler } from "../../functions/stream-processor/handler.js";
import { tableName } from "../../lib/db/table.js";
import { localWebhookQueue } from "../../lib/domain/webhooks/queue.js";
import { startStreamPoller, type StreamPoller } from "../../scripts/local/stream-poller.js";

/** One message as a receiver got it. */
export interface ReceivedMessage {
  /** The request path (`/hooks/<inbox>`). */
  path: string;
  method: string;
  /** `webhook-id`, `webhook-timestamp`, `webhook-signature` as sent. */
  id: string;
  timestamp: string;
  signature: string;
  headers: IncomingHttpHeaders;
  body: string;
  /** The body parsed (undefined when it is not JSON). */
  payload: any;
  /** The secrets (of those the inbox held when it arrived) the message verified with (`standardwebhooks`, the consumer's library). */
  verifiedWith: string[];
  /** 1 for the first message with this `webhook-id` at this inbox, 2 for its retry, ... */
  attempt: number;
  /** `Date.now()` when the body had arrived. */
  receivedAt: number;
}

/**
 * What the receiver answers: a status (or a status with headers, e.g. a redirect's `location`, and a body),
 * `hang` (never answers: the sender's timeout ends it) or `reset` (drops the connection unanswered).
 */
export type Answer = number | { status: number; headers?: Record<string, string>; body?: string } | "hang" | "reset";
export type Responder = (message: ReceivedMessage) => Answer | Promise<Answer>;

/**
 * One URL of the receiver (`/hooks/<random>`): its own secrets, answers and messages, so a test
 * that uses its own inbox never sees another test's messages.
 */
export class WebhookInbox {
  readonly messages: ReceivedMessage[] = [];
  /** The secrets each message is verified with (`verifiedWith` lists those that verified it). */
  secrets: string[] = [];
  respond: Responder = () => 204;

  constructor(
    readonly url: string,
    readonly path: string,
  ) {}

  /** The messages with this `webhook-id` (a message and its retries). */
  withId(id: string): ReceivedMessage[] {
    return this.messages.filter((message) => message.id === id);
  }

  /** The messages whose body is of this type (`item.upsert`, `webhook.test`, ...). */
  ofType(type: string): ReceivedMessage[] {
    return this.messages.filter((message) => message.payload?.type === type);
  }

  /** The change messages about this record. */
  about(recordId: string): ReceivedMessage[] {
    return this.messages.filter((message) => message.payload?.data?.id === recordId);
  }
}

/**
 * A real HTTP receiver in the test process: records every POST, verifies each with the npm
 * `standardwebhooks` package against the secrets the test set, and answers as told (a status,
 * `hang`, or a promise of either, to hold an attempt open while the test acts). `inbox()`
 * makes a URL of its own for one test (its own secrets, answers and messages); any other path
 * (`url` itself included) uses the receiver's `secrets` and `respond`. `messages` holds every
 * message, whatever its path.
 */
export class WebhookReceiver {
  /** Every message, whatever its path. */
  readonly messages: ReceivedMessage[] = [];
  secrets: string[] = [];
  respond: Responder = () => 204;
  url = "";
  private base = "";
  private server!: Server;
  private readonly inboxes = new Map<string, WebhookInbox>();
  private readonly open = new Set<ServerResponse>();

  async start(): Promise<this> {
    this.server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on("data", (chunk: Buffer) => chunks.push(chunk));
      request.on("end", () => {
        const body = Buffer.concat(chunks).toString("utf8");
        const header = (name: string) => String(request.headers[name] ?? "");
        const path = (request.url ?? "/").split("?")[0]!;
        const inbox = this.inboxes.get(path);
        const secrets = inbox ? inbox.secrets : this.secrets;
        const earlier = this.messages.filter((m) => m.path === path && m.id === header("webhook-id")).length;
        let payload: unknown;
        try {
          payload = JSON.parse(body);
        } catch {
          payload = undefined;
        }
        const message: ReceivedMessage = {
          path,
          method: request.method ?? "",
          id: header("webhook-id"),
          timestamp: header("webhook-timestamp"),
          signature: header("webhook-signature"),
          headers: request.headers,
          body,
          payload,
          verifiedWith: secrets.filter((secret) => verifies(secret, body, header)),
          attempt: earlier + 1,
          receivedAt: Date.now(),
        };
        inbox?.messages.push(message);
        this.messages.push(message);
        this.open.add(response);
        response.on("close", () => this.open.delete(response));
        void Promise.resolve()
          .then(() => (inbox ? inbox.respond(message) : this.respond(message)))
          .catch(() => 500)
          .then((answer) => {
            if (answer === "hang" || response.destroyed) return;
            if (answer === "reset") {
              request.socket.destroy();
              return;
            }
            const { status, headers, body: text } = typeof answer === "number" ? { status: answer, headers: {}, body: undefined } : answer;
            response.writeHead(status, headers);
            response.end(text);
          });
      });
    });
    await new Promise<void>((resolve) => this.server.listen(0, "127.0.0.1", resolve));
    this.base = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    this.url = `${this.base}/hooks`;
    return this;
  }

  /** A fresh URL of this receiver with its own secrets, answers and messages. */
  inbox(): WebhookInbox {
    const path = `/hooks/${randomUUID()}`;
    const inbox = new WebhookInbox(`${this.base}${path}`, path);
    this.inboxes.set(path, inbox);
    return inbox;
  }

  /** Requests still waiting for an answer (a `hang`, or a responder that has not settled). */
  get pending(): number {
    return this.open.size;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }
}

/** Whether `standardwebhooks` verifies the message with `secret` (signature and timestamp tolerance). */
function verifies(secret: string, body: string, header: (name: string) => string): boolean {
  try {
    new Webhook(secret).verify(body, {
      "webhook-id": header("webhook-id"),
      "webhook-timestamp": header("webhook-timestamp"),
      "webhook-signature": header("webhook-signature"),
    });
    return true;
  } catch {
    return false;
  }
}

/** What `useWebhookStack` starts for a test file: set once its `beforeAll` has run. */
export interface WebhookStack {
  poller: StreamPoller;
  receiver: WebhookReceiver;
}

/**
 * For one test file: the stream poller (the stream processor in-process, so markers are written
 * and fanned out), one receiver, and the retry schedule `retrySchedule` (seconds, as
 * `WEBHOOK_RETRY_SCHEDULE`; read at each attempt); stopped, with the local queue's waiting
 * retries dropped, after the file.
 */
export function useWebhookStack(retrySchedule: string): WebhookStack {
  const stack = {} as WebhookStack;
  const previousSchedule = process.env.WEBHOOK_RETRY_SCHEDULE;
  beforeAll(async () => {
    process.env.WEBHOOK_RETRY_SCHEDULE = retrySchedule;
    stack.poller = await startStreamPoller({ endpoint: process.env.DYNAMODB_ENDPOINT!, tableName: tableName(), handler: streamHandler, intervalMs: 50 });
    stack.receiver = await new WebhookReceiver().start();
  });
  afterAll(async () => {
    await stack.poller?.stop();
    await localWebhookQueue().stop();
    await stack.receiver?.stop();
    if (previousSchedule === undefined) delete process.env.WEBHOOK_RETRY_SCHEDULE;
    else process.env.WEBHOOK_RETRY_SCHEDULE = previousSchedule;
  });
  return stack;
}
