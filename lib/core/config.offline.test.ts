import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  checkDeployedConfig,
  ConfigError,
  cursorSecretSource,
  DEFAULT_WEBHOOK_RETRY_SCHEDULE,
  isLocalStack,
  localDynamo,
  logLevel,
  rateLimitPerMinute,
  webhookQueueUrl,
  webhookRetrySchedule,
} from "./config.js";

const VARIABLES = [
  "AWS_LAMBDA_FUNCTION_NAME",
  "TABLE_NAME",
  "DYNAMODB_ENDPOINT",
  "AWS_REGION",
  "RATE_LIMIT_PER_MINUTE",
  "LOG_LEVEL",
  "SYNC_CURSOR_SECRET",
  "SYNC_CURSOR_SECRET_FILE",
  "SYNC_CURSOR_SECRET_ARN",
  "WEBHOOK_RETRY_SCHEDULE",
  "WEBHOOK_QUEUE_URL",
  "WEBHOOK_FAILED_QUEUE_URL",
] as const;

describe("offline: the environment (lib/core/config.ts)", () => {
  const saved = Object.fromEntries(VARIABLES.map((name) => [name, process.env[name]]));
  beforeEach(() => {
    for (const name of VARIABLES) delete process.env[name];
  });
  afterEach(() => {
    for (const name of VARIABLES) {
      if (saved[name] === undefined) delete process.env[name];
      else process.env[name] = saved[name];
    }
  });

  it("gives the defaults when nothing is set", () => {
    expect(rateLimitPerMinute()).toBe(120);
    expect(logLevel()).toBe("INFO");
    expect(localDynamo()).toBeUndefined();
    expect(cursorSecretSource()).toBeUndefined();
    expect(() => checkDeployedConfig()).not.toThrow();
  });

  it("reads what is set; an empty variable counts as unset", () => {
    process.env.RATE_LIMIT_PER_MINUTE = "300";
    process.env.LOG_LEVEL = "warn";
    process.env.DYNAMODB_ENDPOINT = "http://127.0.0.1:8000";
    process.env.SYNC_CURSOR_SECRET = "";
    process.env.SYNC_CURSOR_SECRET_FILE = "/tmp/secret";
    process.env.SYNC_CURSOR_SECRET_ARN = "arn:aws:secretsmanager:eu-west-1:1:secret:x";
    expect(rateLimitPerMinute()).toBe(300);
    expect(logLevel()).toBe("WARN");
    expect(localDynamo()).toEqual({ endpoint: "http://127.0.0.1:8000", region: "local" });
    expect(cursorSecretSource()).toEqual({ file: "/tmp/secret" });
  });

  it("refuses an unusable value, naming the variable, instead of a quiet default", () => {
    for (const [name, value, read] of [
      ["RATE_LIMIT_PER_MINUTE", "0", rateLimitPerMinute],
      ["RATE_LIMIT_PER_MINUTE", "12.5", rateLimitPerMinute],
      ["RATE_LIMIT_PER_MINUTE", "lots", rateLimitPerMinute],
      ["LOG_LEVEL", "LOUD", logLevel],
      ["DYNAMODB_ENDPOINT", "localhost 8000", localDynamo],
    ] as const) {
      process.env[name] = value;
      expect(read, `${name}=${value}`).toThrow(ConfigError);
      expect(read, `${name}=${value}`).toThrow(new RegExp(`^${name} must be`));
      delete process.env[name];
    }
  });

  it("a deployed function checks everything as it starts: a bad value or a missing table fails it", () => {
    process.env.AWS_LAMBDA_FUNCTION_NAME = "inventory-invoices";
    expect(() => checkDeployedConfig()).toThrow("TABLE_NAME is not set on function inventory-invoices");
    process.env.TABLE_NAME = "inventory";
    expect(() => checkDeployedConfig()).not.toThrow();
    process.env.RATE_LIMIT_PER_MINUTE = "-1";
    expect(() => checkDeployedConfig()).toThrow("RATE_LIMIT_PER_MINUTE must be a positive integer");
  });

  it("reads the webhook retry schedule, and refuses one it cannot use", () => {
    expect(webhookRetrySchedule()).toEqual(DEFAULT_WEBHOOK_RETRY_SCHEDULE);
    expect(DEFAULT_WEBHOOK_RETRY_SCHEDULE).toEqual([5, 300, 1800, 7200, 18000, 36000, 36000]);
    process.env.WEBHOOK_RETRY_SCHEDULE = "0.2, 1,30";
    expect(webhookRetrySchedule()).toEqual([0.2, 1, 30]);
    for (const bad of ["5,-1", "5,,6", "abc", "43201", Array(21).fill("1").join(",")]) {
      process.env.WEBHOOK_RETRY_SCHEDULE = bad;
      expect(() => webhookRetrySchedule(), bad).toThrow(ConfigError);
    }
  });

  it("delivers webhooks in-process unless a queue URL is set; loopback URLs only on the local stack", () => {
    expect(webhookQueueUrl()).toBeUndefined();
    process.env.WEBHOOK_QUEUE_URL = "https://sqs.eu-west-1.amazonaws.com/123456789012/webhooks";
    expect(webhookQueueUrl()).toBe(process.env.WEBHOOK_QUEUE_URL);
    process.env.WEBHOOK_QUEUE_URL = "not a url";
    expect(() => webhookQueueUrl()).toThrow(ConfigError);
    expect(isLocalStack()).toBe(false);
    process.env.DYNAMODB_ENDPOINT = "http://127.0.0.1:8000";
    expect(isLocalStack()).toBe(true);
    process.env.AWS_LAMBDA_FUNCTION_NAME = "fn";
    expect(isLocalStack()).toBe(false);
  });
});
