import type { LogLevel } from "./log.js";

/**
 * The environment, read here and nowhere else in `lib/`. Each value is read when asked (the
 * local server and the tests set variables after this module loads) and checked: a variable
 * that is set to something unusable is an error naming it, never quietly replaced by a
 * default. A deployed function checks them all as it starts (`checkDeployedConfig`), so a bad
 * value fails the function's init, with its message in the logs, instead of its requests.
 */

/** A variable set to a value the service cannot use. */
export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    message: string,
  ) {
    super(message);
    this.name = "ConfigError";
  }
}

/** The table of a local stack (`npm start`, the scripts) when `TABLE_NAME` is not set. */
export const LOCAL_TABLE_NAME = "inventory-api-local";

/** Requests per API key per minute when `RATE_LIMIT_PER_MINUTE` is not set. */
export const DEFAULT_RATE_LIMIT_PER_MINUTE = 120;

const LOG_LEVELS: readonly LogLevel[] = ["DEBUG", "INFO", "WARN", "ERROR"];

const read = (name: string): string | undefined => {
  const value = process.env[name];
  return value === undefined || value === "" ? undefined : value;
};

/** The name of the Lambda function this runs in (`AWS_LAMBDA_FUNCTION_NAME`), or undefined outside Lambda. */
export const functionName = (): string | undefined => read("AWS_LAMBDA_FUNCTION_NAME");

/**
 * The table name: `TABLE_NAME`, which the CDK stack sets on every function. Only outside Lambda
 * (the local stack, scripts) does a missing one fall back to `LOCAL_TABLE_NAME`; a deployed
 * function without it throws, rather than quietly read and write a table of another name.
 */
export function tableName(): string {
  const configured = read("TABLE_NAME");
  if (configured) return configured;
  const deployed = functionName();
  if (deployed)
    throw new ConfigError("TABLE_NAME", `TABLE_NAME is not set on function ${deployed}: it needs its DynamoDB table's name (the CDK stack sets it).`);
  return LOCAL_TABLE_NAME;
}

/** Where DynamoDB is when it is not AWS's (`DYNAMODB_ENDPOINT`: DynamoDB Local), with its region. */
export function localDynamo(): { endpoint: string; region: string } | undefined {
  const endpoint = read("DYNAMODB_ENDPOINT");
  if (!endpoint) return undefined;
  if (!URL.canParse(endpoint)) throw new ConfigError("DYNAMODB_ENDPOINT", `DYNAMODB_ENDPOINT must be a URL such as http://127.0.0.1:8000, not "${endpoint}".`);
  return { endpoint, region: read("AWS_REGION") ?? "local" };
}

/** Requests per API key per minute (`RATE_LIMIT_PER_MINUTE`, a positive integer; default 120). */
export function rateLimitPerMinute(): number {
  const configured = read("RATE_LIMIT_PER_MINUTE");
  if (configured === undefined) return DEFAULT_RATE_LIMIT_PER_MINUTE;
  const value = Number(configured);
  if (!Number.isSafeInteger(value) || value < 1) {
    throw new ConfigError("RATE_LIMIT_PER_MINUTE", `RATE_LIMIT_PER_MINUTE must be a positive integer, not "${configured}".`);
  }
  return value;
}

/** The lowest level logged (`LOG_LEVEL`: DEBUG, INFO, WARN or ERROR, any case; default INFO). */
export function logLevel(): LogLevel {
  const configured = read("LOG_LEVEL");
  if (configured === undefined) return "INFO";
  const level = configured.toUpperCase() as LogLevel;
  if (!LOG_LEVELS.includes(level)) throw new ConfigError("LOG_LEVEL", `LOG_LEVEL must be one of ${LOG_LEVELS.join(", ")}, not "${configured}".`);
  return level;
}

/**
 * Where the key that signs sync and task-list cursors comes from, first set first:
 * `SYNC_CURSOR_SECRET` (the key itself), `SYNC_CURSOR_SECRET_FILE` (a file holding it, created
 * when missing), `SYNC_CURSOR_SECRET_ARN` (a Secrets Manager secret: the deployed stack's); none:
 * a key of this process only.
 */
export function cursorSecretSource(): { secret: string } | { file: string } | { arn: string } | undefined {
  const secret = read("SYNC_CURSOR_SECRET");
  if (secret) return { secret };
  const file = read("SYNC_CURSOR_SECRET_FILE");
  if (file) return { file };
  const arn = read("SYNC_CURSOR_SECRET_ARN");
  if (arn) return { arn };
  return undefined;
}

/** Seconds before each retry of a webhook message, when `WEBHOOK_RETRY_SCHEDULE` is not set (architecture section 9). */
export const DEFAULT_WEBHOOK_RETRY_SCHEDULE: readonly number[] = [5, 300, 1800, 7200, 18000, 36000, 36000];
/** SQS hides a received message for at most 12 hours: the longest delay a retry can have. */
const MAX_RETRY_DELAY_SECONDS = 43_200;

/**
 * The delays before each retry of a webhook message (`WEBHOOK_RETRY_SCHEDULE`: seconds,
 * comma-separated, each from 0 to 43200, fractions allowed so tests can compress it; at most 20).
 * A message has one attempt more than the schedule has delays.
 */
export function webhookRetrySchedule(): readonly number[] {
  const configured = read("WEBHOOK_RETRY_SCHEDULE");
  if (configured === undefined) return DEFAULT_WEBHOOK_RETRY_SCHEDULE;
  const values = configured.split(",").map((part) => part.trim());
  const delays = values.map(Number);
  const valid =
    values.length <= 20 && values.every((part) => /^\d+(\.\d+)?$/.test(part)) && delays.every((d) => Number.isFinite(d) && d <= MAX_RETRY_DELAY_SECONDS);
  if (!valid) {
    throw new ConfigError(
      "WEBHOOK_RETRY_SCHEDULE",
      `WEBHOOK_RETRY_SCHEDULE must be up to 20 comma-separated delays in seconds, each from 0 to ${MAX_RETRY_DELAY_SECONDS} (e.g. 5,300,1800), not "${configured}".`,
    );
  }
  return delays;
}

/**
 * The SQS queue webhook messages travel on (`WEBHOOK_QUEUE_URL`, set by the CDK stack on the
 * functions that enqueue or deliver). Unset outside AWS: the local stack delivers in-process.
 */
export function webhookQueueUrl(): string | undefined {
  const configured = read("WEBHOOK_QUEUE_URL");
  if (configured !== undefined && !URL.canParse(configured)) {
    throw new ConfigError("WEBHOOK_QUEUE_URL", `WEBHOOK_QUEUE_URL must be an SQS queue URL, not "${configured}".`);
  }
  return configured;
}

/** The queue messages that failed every attempt are moved to (`WEBHOOK_FAILED_QUEUE_URL`, deployed). */
export function webhookFailedQueueUrl(): string | undefined {
  const configured = read("WEBHOOK_FAILED_QUEUE_URL");
  if (configured !== undefined && !URL.canParse(configured)) {
    throw new ConfigError("WEBHOOK_FAILED_QUEUE_URL", `WEBHOOK_FAILED_QUEUE_URL must be an SQS queue URL, not "${configured}".`);
  }
  return configured;
}

/**
 * Whether this is the local stack (`npm start`, the tests): DynamoDB Local and no Lambda. Only
 * there may webhook endpoints be plain-HTTP loopback URLs.
 */
export function isLocalStack(): boolean {
  return functionName() === undefined && localDynamo() !== undefined;
}

/** Checks every value; throws the first `ConfigError`. The local stack runs it as it starts. */
export function checkConfig(): void {
  tableName();
  localDynamo();
  rateLimitPerMinute();
  logLevel();
  webhookRetrySchedule();
  webhookQueueUrl();
  webhookFailedQueueUrl();
}

/** `checkConfig` in a deployed function (at its init); nothing outside Lambda. */
export function checkDeployedConfig(): void {
  if (functionName()) checkConfig();
}
