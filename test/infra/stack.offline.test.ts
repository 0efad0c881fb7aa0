import { App, Aspects } from "aws-cdk-lib";
import { Match, Template } from "aws-cdk-lib/assertions";
import type { CloudAssembly } from "aws-cdk-lib/cx-api";
import { AwsSolutionsChecks } from "cdk-nag";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import {
  ALARM_MIN_REQUESTS,
  CURSOR_SECRET_READERS,
  InventoryApiStack,
  LATENCY_ALARM_PERIODS,
  STREAM_BATCH_SIZE,
  STREAM_BATCHING_WINDOW,
  STREAM_FAILURE_QUEUE_AGE_ALARM,
  STREAM_ITERATOR_AGE_ALARM,
  STREAM_MAX_RECORD_AGE,
  STREAM_RETRY_ATTEMPTS,
  WEBHOOK_DELIVERY_BATCH_SIZE,
  WEBHOOK_DELIVERY_MAX_CONCURRENCY,
  WEBHOOK_DELIVERY_TIMEOUT,
  WEBHOOK_MAX_RECEIVE_COUNT,
  WEBHOOK_QUEUE_AGE_ALARM,
} from "../../infra/stack.js";
import { enqueuesWebhooks, tableAccessOf, WEBHOOK_DELIVERY_ACCESS } from "../../infra/permissions.js";
import { ENDPOINT_GROUPS, ROUTES, routeKey, routesOfGroup } from "../../lib/routes/index.js";
import { GLOBAL_INDEXES, projectionOf } from "../../lib/db/table.js";
import { DEFAULT_WEBHOOK_RETRY_SCHEDULE } from "../../lib/core/config.js";
import { ENTITY_ATTRIBUTE, PLATFORM_ENTITIES } from "../../lib/sync/classify.js";
import { STREAM_FILTER_PATTERNS } from "../../lib/sync/stream-filter.js";
import { scaled } from "../support/timeouts.js";

/**
 * ONE synthesis for the whole file (bundling skipped here; `npm run synth` bundles for real):
 * the default stack with the cdk-nag AwsSolutions checks, and a throwaway stack with CORS.
 */
let assembly: CloudAssembly;
let template: Template;
let throwaway: Template;

type Resource = { Type: string; Properties: Record<string, any>; Condition?: string };
type Statement = { Effect: string; Action: string | string[]; Resource: unknown };

const pascal = (name: string) => name.replace(/(^|-)(\w)/g, (_m, _d, c: string) => c.toUpperCase());
const list = <T>(value: T | T[]): T[] => (Array.isArray(value) ? value : [value]);

beforeAll(() => {
  const app = new App({ context: { "aws:cdk:bundling-stacks": [] } });
  const stack = new InventoryApiStack(app, "TestStack", { deletionProtection: true });
  new InventoryApiStack(app, "Throwaway", { deletionProtection: false, corsOrigins: ["https://app.example.com", " "] });
  Aspects.of(stack).add(new AwsSolutionsChecks());
  assembly = app.synth();
  template = Template.fromJSON(assembly.getStackByName("TestStack").template);
  throwaway = Template.fromJSON(assembly.getStackByName("Throwaway").template);
}, scaled(120_000)); // synthesis with the checks takes several seconds on a busy machine

/** The logical id of a function by its construct id (e.g. `SyncFunction`). */
function functionId(t: Template, constructId: string): string {
  const ids = Object.keys(t.findResources("AWS::Lambda::Function")).filter((id) => new RegExp(`^${constructId}[0-9A-F]{8}$`).test(id));
  expect(ids).toHaveLength(1);
  return ids[0]!;
}

/** Every statement of the policies attached to a function's role. */
function statementsOf(t: Template, constructId: string): Statement[] {
  const fn = t.findResources("AWS::Lambda::Function")[functionId(t, constructId)] as Resource;
  const roleId = (fn.Properties.Role as { "Fn::GetAtt": [string, string] })["Fn::GetAtt"][0];
  const role = t.findResources("AWS::IAM::Role")[roleId] as Resource;
  expect(role.Properties.ManagedPolicyArns ?? []).toEqual([]);
  return Object.values(t.findResources("AWS::IAM::Policy"))
    .filter((policy) => (policy as Resource).Properties.Roles.some((r: { Ref: string }) => r.Ref === roleId))
    .flatMap((policy) => (policy as Resource).Properties.PolicyDocument.Statement as Statement[]);
}

/** The logical id of a resource of `type` by its construct id (e.g. `WebhookQueue`). */
function logicalId(t: Template, type: string, constructId: string): string {
  const ids = Object.keys(t.findResources(type)).filter((id) => new RegExp(`^${constructId}[0-9A-F]{8}$`).test(id));
  expect(ids, `${type} ${constructId}`).toHaveLength(1);
  return ids[0]!;
}

/** `action resource` for every SQS action granted, the resource by its logical id (GetAtt Id.Arn). */
function sqsGrants(statements: Statement[]): string[] {
  const name = (resource: unknown) => {
    const arn = (resource as { "Fn::GetAtt"?: [string, string] })["Fn::GetAtt"];
    return arn?.[1] === "Arn" ? arn[0] : JSON.stringify(resource);
  };
  return statements
    .flatMap((s) => list(s.Action).flatMap((action) => (action.startsWith("sqs:") ? list(s.Resource).map((r) => `${action} ${name(r)}`) : [])))
    .sort();
}

/**
 * Whether a Lambda event filter pattern admits a record: every key of the pattern matches, an
 * array rule by any of its values (a literal, `anything-but` a list of an existing value, or
 * `exists`). A leaf under a missing parent is missing (what `exists: false` matches).
 */
function admits(pattern: Record<string, unknown>, event: Record<string, unknown>): boolean {
  return Object.entries(pattern).every(([key, rule]) => {
    const value = event[key];
    if (!Array.isArray(rule)) {
      if (value !== undefined && (typeof value !== "object" || value === null)) return false;
      return admits(rule as Record<string, unknown>, (value ?? {}) as Record<string, unknown>);
    }
    return rule.some((option: unknown) => {
      if (typeof option !== "object" || option === null) return option === value;
      if (Object.keys(option).length !== 1) throw new Error(`filter rule this test cannot evaluate: ${JSON.stringify(option)}`);
      const { exists, "anything-but": excluded } = option as { exists?: unknown; "anything-but"?: unknown };
      if (typeof exists === "boolean") return exists === (value !== undefined && (typeof value !== "object" || value === null));
      if (!Array.isArray(excluded)) throw new Error(`filter rule this test cannot evaluate: ${JSON.stringify(option)}`);
      return value !== undefined && !excluded.includes(value);
    });
  });
}

/**
 * A dashboard's body as one string: DashboardBody is a Fn::Join of literal parts and tokens;
 * each token is written as `{Ref:LogicalId}` or `{GetAtt:LogicalId.Attribute}`.
 */
function dashboardBody(dashboard: Resource): string {
  const body = dashboard.Properties.DashboardBody as string | { "Fn::Join": [string, unknown[]] };
  if (typeof body === "string") return body;
  const [separator, parts] = body["Fn::Join"];
  return parts
    .map((part) => {
      if (typeof part === "string") return part;
      return renderToken(part);
    })
    .join(separator);
}

/** A token of a dashboard body as text: `{Ref:Id}`, `{GetAtt:Id.Attribute}`, `{If:Condition?<true>:<false>}`. */
function renderToken(part: unknown): string {
  const token = part as { Ref?: string; "Fn::GetAtt"?: [string, string]; "Fn::If"?: [string, unknown, unknown] };
  if (token.Ref) return `{Ref:${token.Ref}}`;
  if (token["Fn::GetAtt"]) return `{GetAtt:${token["Fn::GetAtt"].join(".")}}`;
  if (token["Fn::If"]) return `{If:${token["Fn::If"][0]}?${renderToken(token["Fn::If"][1])}:${renderToken(token["Fn::If"][2])}}`;
  throw new Error(`dashboard body part this test cannot render: ${JSON.stringify(part)}`);
}

/** The table in use: `Fn::If: [UseExistingTable, <parameter>, <the own table's attribute>]`. */
function tableInUse(t: Template, parameter: string, attribute: "Ref" | "StreamArn"): unknown {
  const own = logicalId(t, "AWS::DynamoDB::Table", "Table");
  return { "Fn::If": ["UseExistingTable", { Ref: parameter }, attribute === "Ref" ? { Ref: own } : { "Fn::GetAtt": [own, attribute] }] };
}

/** arn:${Partition}:dynamodb:${Region}:${AccountId}:table/<the table in use>, plus `suffix`. */
function tableArnInUse(t: Template, suffix = ""): unknown {
  return {
    "Fn::Join": [
      "",
      [
        "arn:",
        { Ref: "AWS::Partition" },
        ":dynamodb:",
        { Ref: "AWS::Region" },
        ":",
        { Ref: "AWS::AccountId" },
        ":table/",
        tableInUse(t, "ExistingTableName", "Ref"),
        ...(suffix ? [suffix] : []),
      ],
    ],
  };
}

/** The actions granted on the table in use itself (its ARN, not an index's). */
function tableActions(statements: Statement[]): string[] {
  const arn = JSON.stringify(tableArnInUse(template));
  return statements
    .filter((s) => list(s.Resource).some((r) => JSON.stringify(r) === arn))
    .flatMap((s) => list(s.Action))
    .sort();
}

/** The construct ids of ApiUnhealthyAlarm's members, in the order of its rule. */
function apiUnhealthyMembers(): string[] {
  return [...ENDPOINT_GROUPS.map((group) => `${pascal(group)}ErrorRateAlarm`), "Api5xxRateAlarm", "ApiLatencyP99Alarm"];
}

/** The properties of the default stack's alarm with that construct id. */
function alarmProperties(constructId: string): Record<string, any> {
  return (template.findResources("AWS::CloudWatch::Alarm")[logicalId(template, "AWS::CloudWatch::Alarm", constructId)] as Resource).Properties;
}

const lambdaMetric = (name: string, fn: unknown) => ({ Namespace: "AWS/Lambda", MetricName: name, Dimensions: [{ Name: "FunctionName", Value: fn }] });
const apiMetric = (name: string, api: unknown) => ({ Namespace: "AWS/ApiGateway", MetricName: name, Dimensions: [{ Name: "ApiId", Value: api }] });

/** A rate alarm: 100 * part / total over 5-minute sums, 0 below ALARM_MIN_REQUESTS of total, above the threshold parameter. */
function expectRateAlarm(props: Record<string, any>, threshold: unknown, part: unknown, total: unknown): void {
  expect(props).toMatchObject({ Threshold: threshold, ComparisonOperator: "GreaterThanThreshold", EvaluationPeriods: 1, TreatMissingData: "notBreaching" });
  expect(props.MetricName).toBeUndefined();
  const metrics = props.Metrics as { Id: string; Expression?: string; ReturnData: boolean; MetricStat?: Record<string, unknown> }[];
  expect(metrics).toHaveLength(3);
  const expression = metrics.find((m) => m.Expression !== undefined)!;
  expect(expression.ReturnData).toBe(true);
  expect(expression.Expression).toBe(`IF(total >= ${ALARM_MIN_REQUESTS}, 100 * FILL(part, 0) / total, 0)`);
  expect(metrics.find((m) => m.Id === "part")).toEqual({ Id: "part", ReturnData: false, MetricStat: { Metric: part, Period: 300, Stat: "Sum" } });
  expect(metrics.find((m) => m.Id === "total")).toEqual({ Id: "total", ReturnData: false, MetricStat: { Metric: total, Period: 300, Stat: "Sum" } });
}

describe("infrastructure", () => {
  it("has one on-demand table with PITR, a new-and-old-images stream, TTL and deletion protection", () => {
    template.resourceCountIs("AWS::DynamoDB::Table", 1);
    template.hasResource("AWS::DynamoDB::Table", { Condition: "CreateTable", DeletionPolicy: "Retain", UpdateReplacePolicy: "Retain" });
    template.hasResourceProperties("AWS::DynamoDB::Table", {
      BillingMode: "PAY_PER_REQUEST",
      PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
      StreamSpecification: { StreamViewType: "NEW_AND_OLD_IMAGES" },
      TimeToLiveSpecification: { AttributeName: "expires_at", Enabled: true },
      DeletionProtectionEnabled: true,
      GlobalSecondaryIndexes: GLOBAL_INDEXES.map((index) => Match.objectLike({ IndexName: index.indexName, Projection: projectionOf(index) })),
    });
  });

  it("turns deletion protection off only when asked", () => {
    throwaway.hasResourceProperties("AWS::DynamoDB::Table", { DeletionProtectionEnabled: false });
  });

  it("creates an API Gateway route for every route of the route table, plus $default", () => {
    const routes = template.findResources("AWS::ApiGatewayV2::Route");
    const keys = Object.values(routes).map((r) => (r as { Properties: { RouteKey: string } }).Properties.RouteKey);
    for (const route of ROUTES) expect(keys).toContain(routeKey(route));
    expect(keys).toContain("$default");
    expect(keys).toHaveLength(ROUTES.length + 1);
  });

  it("deploys one Node 22 arm64 function per endpoint group plus the stream processor and the webhook delivery function, without source maps in the hot path", () => {
    const functions = template.findResources("AWS::Lambda::Function", {
      Properties: { Runtime: "nodejs22.x", Architectures: ["arm64"] },
    });
    expect(Object.keys(functions)).toHaveLength(ENDPOINT_GROUPS.length + 2);
    template.hasResourceProperties("AWS::Lambda::Function", {
      Environment: { Variables: Match.objectLike({ TABLE_NAME: Match.anyValue(), RATE_LIMIT_PER_MINUTE: Match.anyValue() }) },
    });
    for (const fn of Object.values(functions) as Resource[]) {
      expect(fn.Properties.Environment.Variables.NODE_OPTIONS).toBeUndefined();
    }
  });

  it("invokes the stream processor every minute to release expired stock holds", () => {
    const rules = Object.values(template.findResources("AWS::Events::Rule")) as Resource[];
    const sweep = rules.find((rule) => rule.Properties.ScheduleExpression === "rate(1 minute)");
    expect(sweep, "a rate(1 minute) schedule").toBeDefined();
    const target = (sweep!.Properties.Targets as { Arn: { "Fn::GetAtt": string[] } }[])[0]!;
    expect(target.Arn["Fn::GetAtt"][0]).toBe(functionId(template, "StreamProcessorFunction"));
  });

  it("throttles the API stage with the burst and rate parameters", () => {
    template.hasParameter("ApiThrottleRateLimit", { Type: "Number", Default: 200 });
    template.hasParameter("ApiThrottleBurstLimit", { Type: "Number", Default: 400 });
    template.resourceCountIs("AWS::ApiGatewayV2::Stage", 1);
    template.hasResourceProperties("AWS::ApiGatewayV2::Stage", {
      StageName: "$default",
      AutoDeploy: true,
      DefaultRouteSettings: {
        ThrottlingRateLimit: { Ref: "ApiThrottleRateLimit" },
        ThrottlingBurstLimit: { Ref: "ApiThrottleBurstLimit" },
      },
    });
  });

  it("writes JSON access logs without anything secret, to a log group with retention", () => {
    const stage = Object.values(template.findResources("AWS::ApiGatewayV2::Stage"))[0] as Resource;
    const format = JSON.parse(stage.Properties.AccessLogSettings.Format as string) as Record<string, string>;
    expect(format).toMatchObject({
      requestId: "$context.requestId",
      routeKey: "$context.routeKey",
      status: "$context.status",
      latencyMs: "$context.responseLatency",
      ip: "$context.identity.sourceIp",
      integrationRequestId: "$context.integration.requestId",
    });
    // No headers (Authorization carries the per-user API key), no query string, no body.
    for (const value of Object.values(format)) expect(value).not.toMatch(/header|querystring|authorizer|apiKey|path/i);
    const logGroupId = (stage.Properties.AccessLogSettings.DestinationArn as { "Fn::GetAtt": [string, string] })["Fn::GetAtt"][0];
    expect((template.findResources("AWS::Logs::LogGroup")[logGroupId] as Resource).Properties.RetentionInDays).toEqual({ Ref: "LogRetentionDays" });
  });

  it("reserves concurrency for every function from a parameter (0 leaves it unreserved)", () => {
    template.hasParameter("ApiReservedConcurrency", { Type: "Number", Default: 20, MinValue: 0 });
    template.hasParameter("StreamProcessorReservedConcurrency", { Type: "Number", Default: 10, MinValue: 0 });
    for (const group of ENDPOINT_GROUPS) {
      const fn = template.findResources("AWS::Lambda::Function")[functionId(template, `${pascal(group)}Function`)] as Resource;
      expect(fn.Properties.ReservedConcurrentExecutions).toEqual({
        "Fn::If": ["ApiReservedConcurrencySet", { Ref: "ApiReservedConcurrency" }, { Ref: "AWS::NoValue" }],
      });
    }
    const processor = template.findResources("AWS::Lambda::Function")[functionId(template, "StreamProcessorFunction")] as Resource;
    expect(processor.Properties.ReservedConcurrentExecutions).toEqual({
      "Fn::If": ["StreamProcessorReservedConcurrencySet", { Ref: "StreamProcessorReservedConcurrency" }, { Ref: "AWS::NoValue" }],
    });
    expect(template.toJSON().Conditions.ApiReservedConcurrencySet).toEqual({ "Fn::Not": [{ "Fn::Equals": [{ Ref: "ApiReservedConcurrency" }, "0"] }] });
  });

  it("gives every function its own log group with the retention parameter", () => {
    template.hasParameter("LogRetentionDays", { Type: "Number", Default: 30 });
    const logGroups = template.findResources("AWS::Logs::LogGroup");
    const functions = Object.values(template.findResources("AWS::Lambda::Function")) as Resource[];
    const used = new Set<string>();
    for (const fn of functions) {
      const ref = (fn.Properties.LoggingConfig?.LogGroup as { Ref?: string } | undefined)?.Ref;
      expect(ref, "every function names its log group").toBeDefined();
      expect((logGroups[ref!] as Resource).Properties.RetentionInDays).toEqual({ Ref: "LogRetentionDays" });
      used.add(ref!);
    }
    expect(used.size).toBe(functions.length);
  });

  it("wires the table stream to the stream processor: filtered, bisected, bounded retries, a failure queue", () => {
    template.hasResourceProperties("AWS::Lambda::EventSourceMapping", {
      EventSourceArn: tableInUse(template, "ExistingTableStreamArn", "StreamArn"),
      StartingPosition: "TRIM_HORIZON",
      BatchSize: STREAM_BATCH_SIZE,
      MaximumBatchingWindowInSeconds: STREAM_BATCHING_WINDOW.toSeconds(),
      FunctionResponseTypes: ["ReportBatchItemFailures"],
      FilterCriteria: { Filters: Match.arrayWith([Match.objectLike({ Pattern: Match.stringLikeRegexp("anything-but") })]) },
      BisectBatchOnFunctionError: true,
      MaximumRetryAttempts: STREAM_RETRY_ATTEMPTS,
      MaximumRecordAgeInSeconds: STREAM_MAX_RECORD_AGE.toSeconds(),
      DestinationConfig: { OnFailure: { Destination: { "Fn::GetAtt": [Match.stringLikeRegexp("^StreamFailureQueue"), "Arn"] } } },
    });
    expect(STREAM_RETRY_ATTEMPTS).toBeGreaterThan(0);
    expect(STREAM_MAX_RECORD_AGE.toHours()).toBeLessThan(24); // replayable from the stream's 24 h
    template.hasResourceProperties("AWS::SQS::Queue", { MessageRetentionPeriod: 14 * 24 * 3600, SqsManagedSseEnabled: true });
    const processor = statementsOf(template, "StreamProcessorFunction");
    expect(processor.some((s) => list(s.Action).includes("sqs:SendMessage"))).toBe(true);
  });

  it("sends every alarm but ApiUnhealthyAlarm's members (and its recovery) to the alarm topic; email only when AlarmEmail is set", () => {
    const topicId = Object.keys(template.findResources("AWS::SNS::Topic"))[0]!;
    const alarms = Object.entries(template.findResources("AWS::CloudWatch::Alarm")) as [string, Resource][];
    const memberIds = new Set(apiUnhealthyMembers().map((constructId) => logicalId(template, "AWS::CloudWatch::Alarm", constructId)));
    // Per group: an error-rate alarm (member) and a throttles alarm; 5xx rate, p99 latency (members), 4xx rate; 9 others.
    expect(alarms).toHaveLength(2 * ENDPOINT_GROUPS.length + 3 + 9);
    expect(memberIds.size).toBe(ENDPOINT_GROUPS.length + 2);
    for (const [id, alarm] of alarms) {
      if (memberIds.has(id)) {
        expect(alarm.Properties.AlarmActions, id).toBeUndefined();
        expect(alarm.Properties.OKActions, id).toBeUndefined();
        expect(alarm.Properties.InsufficientDataActions, id).toBeUndefined();
      } else {
        expect(alarm.Properties.AlarmActions, id).toEqual([{ Ref: topicId }]);
        expect(alarm.Properties.OKActions, id).toEqual([{ Ref: topicId }]);
      }
    }
    for (const [id, composite] of Object.entries(template.findResources("AWS::CloudWatch::CompositeAlarm")) as [string, Resource][]) {
      expect(composite.Properties.AlarmActions, id).toEqual([{ Ref: topicId }]);
      expect(composite.Properties.OKActions, id).toEqual([{ Ref: topicId }]);
    }
    const metrics = alarms.map(([, alarm]) => alarm.Properties.MetricName as string | undefined);
    expect(metrics).toEqual(
      expect.arrayContaining([
        "IteratorAge",
        "ApproximateNumberOfMessagesVisible",
        "ApproximateAgeOfOldestMessage",
        "DestinationDeliveryFailures",
        "Throttles",
        "Latency",
      ]),
    );
    template.hasParameter("AlarmEmail", { Type: "String", Default: "" });
    template.hasResource("AWS::SNS::Subscription", { Condition: "HasAlarmEmail", Properties: { Protocol: "email", Endpoint: { Ref: "AlarmEmail" } } });
    expect(template.toJSON().Conditions.HasAlarmEmail).toEqual({ "Fn::Not": [{ "Fn::Equals": [{ Ref: "AlarmEmail" }, ""] }] });
  });

  it("has the alarm thresholds as parameters with their defaults", () => {
    template.hasParameter("ApiErrorRatePercent", { Type: "Number", Default: 5, MinValue: 0, MaxValue: 100 });
    template.hasParameter("Api5xxRatePercent", { Type: "Number", Default: 1, MinValue: 0, MaxValue: 100 });
    template.hasParameter("Api4xxRatePercent", { Type: "Number", Default: 25, MinValue: 0, MaxValue: 100 });
    template.hasParameter("ApiLatencyP99Ms", { Type: "Number", Default: 3000, MinValue: 1 });
  });

  it("alarms on each API function's error rate (not on a single error), with a minimum-traffic guard, without actions", () => {
    expect(ALARM_MIN_REQUESTS).toBe(10);
    for (const group of ENDPOINT_GROUPS) {
      const fn = { Ref: functionId(template, `${pascal(group)}Function`) };
      const props = alarmProperties(`${pascal(group)}ErrorRateAlarm`);
      expectRateAlarm(props, { Ref: "ApiErrorRatePercent" }, lambdaMetric("Errors", fn), lambdaMetric("Invocations", fn));
      expect(props.AlarmActions, group).toBeUndefined();
      expect(props.OKActions, group).toBeUndefined();
    }
    // No alarm pages on a single API function error any more (the stream processor's and delivery function's stay).
    const errorAlarms = (Object.values(template.findResources("AWS::CloudWatch::Alarm")) as Resource[]).filter((a) => a.Properties.MetricName === "Errors");
    expect(errorAlarms.map((a) => (a.Properties.Dimensions[0].Value as { Ref: string }).Ref).sort()).toEqual(
      [functionId(template, "StreamProcessorFunction"), functionId(template, "WebhookDeliveryFunction")].sort(),
    );
    for (const alarm of errorAlarms)
      expect(alarm.Properties).toMatchObject({ Threshold: 1, AlarmActions: [expect.anything()], OKActions: [expect.anything()] });
    for (const group of ENDPOINT_GROUPS) {
      expect(Object.keys(template.findResources("AWS::CloudWatch::Alarm")).filter((id) => id.startsWith(`${pascal(group)}ErrorsAlarm`))).toEqual([]);
    }
  });

  it("alarms on the API's 5xx rate, 4xx rate (429s included) and p99 latency", () => {
    const api = { Ref: logicalId(template, "AWS::ApiGatewayV2::Api", "HttpApi") };
    const count = apiMetric("Count", api);
    const five = alarmProperties("Api5xxRateAlarm");
    expectRateAlarm(five, { Ref: "Api5xxRatePercent" }, apiMetric("5xx", api), count);
    expect(five.AlarmActions).toBeUndefined();
    expect(five.OKActions).toBeUndefined();
    const four = alarmProperties("Api4xxRateAlarm");
    expectRateAlarm(four, { Ref: "Api4xxRatePercent" }, apiMetric("4xx", api), count);
    const topicId = Object.keys(template.findResources("AWS::SNS::Topic"))[0]!;
    expect(four.AlarmActions).toEqual([{ Ref: topicId }]);
    expect(four.OKActions).toEqual([{ Ref: topicId }]);
    const latency = alarmProperties("ApiLatencyP99Alarm");
    expect(latency).toMatchObject({
      Namespace: "AWS/ApiGateway",
      MetricName: "Latency",
      Dimensions: [{ Name: "ApiId", Value: api }],
      ExtendedStatistic: "p99",
      Period: 300,
      Threshold: { Ref: "ApiLatencyP99Ms" },
      ComparisonOperator: "GreaterThanThreshold",
      EvaluationPeriods: 5,
      DatapointsToAlarm: 3,
      TreatMissingData: "notBreaching",
    });
    expect(LATENCY_ALARM_PERIODS).toEqual({ datapointsToAlarm: 3, evaluationPeriods: 5 });
    expect(latency.AlarmActions).toBeUndefined();
    expect(latency.OKActions).toBeUndefined();
    // The old count alarm is gone: the rate alarm replaces it.
    expect(Object.keys(template.findResources("AWS::CloudWatch::Alarm")).filter((id) => /^Api5xxAlarm[0-9A-F]{8}$/.test(id))).toEqual([]);
  });

  it("pages once per API incident: ApiUnhealthyAlarm is ANY of the error-rate, 5xx-rate and p99 latency alarms, and only it has actions", () => {
    const composites = template.findResources("AWS::CloudWatch::CompositeAlarm");
    expect(Object.keys(composites)).toHaveLength(1);
    const composite = composites[logicalId(template, "AWS::CloudWatch::CompositeAlarm", "ApiUnhealthyAlarm")] as Resource;
    const topicId = Object.keys(template.findResources("AWS::SNS::Topic"))[0]!;
    expect(composite.Properties.AlarmActions).toEqual([{ Ref: topicId }]);
    expect(composite.Properties.OKActions).toEqual([{ Ref: topicId }]);
    expect(composite.Properties.ActionsEnabled ?? true).toBe(true);
    // The rule, with each alarm ARN (GetAtt Id.Arn) written as {Id}.
    const [separator, parts] = composite.Properties.AlarmRule["Fn::Join"] as [string, unknown[]];
    const rule = parts.map((part) => (typeof part === "string" ? part : `{${(part as { "Fn::GetAtt": [string, string] })["Fn::GetAtt"][0]}}`)).join(separator);
    const members = apiUnhealthyMembers().map((constructId) => `ALARM("{${logicalId(template, "AWS::CloudWatch::Alarm", constructId)}}")`);
    expect(rule).toBe(`(${members.join(" OR ")})`);
  });

  it("alarms when a failed stream batch has waited an hour in the failure queue, besides its depth", () => {
    const queueName = { "Fn::GetAtt": [logicalId(template, "AWS::SQS::Queue", "StreamFailureQueue"), "QueueName"] };
    const topicId = Object.keys(template.findResources("AWS::SNS::Topic"))[0]!;
    expect(STREAM_FAILURE_QUEUE_AGE_ALARM.toHours()).toBe(1);
    expect(alarmProperties("StreamFailureQueueAgeAlarm")).toMatchObject({
      Namespace: "AWS/SQS",
      MetricName: "ApproximateAgeOfOldestMessage",
      Dimensions: [{ Name: "QueueName", Value: queueName }],
      Statistic: "Maximum",
      Threshold: 3600,
      ComparisonOperator: "GreaterThanOrEqualToThreshold",
      AlarmActions: [{ Ref: topicId }],
      OKActions: [{ Ref: topicId }],
    });
    expect(alarmProperties("StreamFailureQueueAlarm")).toMatchObject({
      MetricName: "ApproximateNumberOfMessagesVisible",
      Dimensions: [{ Name: "QueueName", Value: queueName }],
      Threshold: 1,
    });
  });

  it("lets CloudWatch alarms of this account (and only they) publish to the alarm topic, and refuses publishing over plain HTTP", () => {
    const topicId = Object.keys(template.findResources("AWS::SNS::Topic"))[0]!;
    const policies = Object.values(template.findResources("AWS::SNS::TopicPolicy")) as Resource[];
    expect(policies).toHaveLength(1);
    expect(policies[0]!.Properties.Topics).toEqual([{ Ref: topicId }]);
    const statements = policies[0]!.Properties.PolicyDocument.Statement as Record<string, unknown>[];
    expect(statements).toContainEqual({
      Sid: "AllowCloudWatchAlarmsOfThisAccount",
      Effect: "Allow",
      Principal: { Service: "cloudwatch.amazonaws.com" },
      Action: "sns:Publish",
      Resource: { Ref: topicId },
      Condition: { StringEquals: { "aws:SourceAccount": { Ref: "AWS::AccountId" } } },
    });
    // The enforceSSL statement stays: publishing over plain HTTP is denied to everyone.
    expect(statements).toContainEqual(
      expect.objectContaining({ Effect: "Deny", Principal: "*", Action: "sns:Publish", Condition: { Bool: { "aws:SecureTransport": "false" } } }),
    );
    // Nothing else is allowed, to anyone.
    expect(statements.filter((statement) => statement.Effect === "Allow")).toHaveLength(1);
  });

  it("gives each function one least-privilege policy derived from the route table", () => {
    for (const group of ENDPOINT_GROUPS) {
      const statements = statementsOf(template, `${pascal(group)}Function`);
      const expected = tableAccessOf(routesOfGroup(group));
      expect(tableActions(statements), group).toEqual(expected?.table ?? []);
      const allActions = statements.flatMap((s) => list(s.Action));
      for (const action of allActions)
        expect(action, group).toMatch(
          /^(dynamodb:(BatchGetItem|GetItem|Query|UpdateItem|PutItem|DeleteItem|ConditionCheckItem)|logs:(CreateLogStream|PutLogEvents)|secretsmanager:GetSecretValue|sqs:SendMessage)$/,
        );
      // No wildcard resource in any API function policy.
      expect(JSON.stringify(statements.map((s) => s.Resource)), group).not.toContain("*");
    }
    // The platform group serves public documents only: no table access at all.
    expect(tableActions(statementsOf(template, "PlatformFunction"))).toEqual([]);
    // Sync is read-only: reads, plus the rate-window UpdateItem on the key item.
    const sync = tableActions(statementsOf(template, "SyncFunction"));
    expect(sync).toEqual(["dynamodb:BatchGetItem", "dynamodb:GetItem", "dynamodb:Query", "dynamodb:UpdateItem"]);
    expect(sync).not.toContain("dynamodb:PutItem");
    expect(sync).not.toContain("dynamodb:DeleteItem");
    // Groups with writes get the per-item write actions TransactWriteItems is authorised by.
    expect(tableActions(statementsOf(template, "ItemsFunction"))).toEqual(
      expect.arrayContaining(["dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem", "dynamodb:ConditionCheckItem"]),
    );
  });

  it("never grants Scan, table administration or dynamodb:*", () => {
    const actions = Object.values(template.findResources("AWS::IAM::Policy")).flatMap((policy) =>
      ((policy as Resource).Properties.PolicyDocument.Statement as Statement[]).flatMap((s) => list(s.Action)),
    );
    expect(actions).toContain("dynamodb:ConditionCheckItem");
    for (const forbidden of ["dynamodb:Scan", "dynamodb:DeleteTable", "dynamodb:BatchWriteItem", "dynamodb:*", "*"]) expect(actions).not.toContain(forbidden);
  });

  it("keeps the cursor secret out of the environment: the functions that sign cursors (sync, tasks) get its ARN and may read only that secret", () => {
    const signers = CURSOR_SECRET_READERS;
    expect(signers).toEqual(["sync", "tasks"]);
    for (const signer of signers) {
      const fn = template.findResources("AWS::Lambda::Function")[functionId(template, `${pascal(signer)}Function`)] as Resource;
      const variables = fn.Properties.Environment.Variables as Record<string, unknown>;
      expect(variables.SYNC_CURSOR_SECRET).toBeUndefined();
      expect(variables.SYNC_CURSOR_SECRET_ARN).toEqual({ Ref: expect.stringMatching(/^SyncCursorSecret/) });
      const reads = statementsOf(template, `${pascal(signer)}Function`).filter((s) => list(s.Action).includes("secretsmanager:GetSecretValue"));
      expect(reads.map((s) => s.Resource)).toEqual([variables.SYNC_CURSOR_SECRET_ARN]);
    }
    expect(JSON.stringify(template.toJSON())).not.toContain("resolve:secretsmanager");
    for (const group of ENDPOINT_GROUPS.filter((g) => !(signers as readonly string[]).includes(g))) {
      expect(statementsOf(template, `${pascal(group)}Function`).flatMap((s) => list(s.Action))).not.toContain("secretsmanager:GetSecretValue");
    }
  });

  it("outputs the cursor secret and its readers: every function with SYNC_CURSOR_SECRET_ARN, each allowed GetSecretValue on exactly that secret", () => {
    const secretId = logicalId(template, "AWS::SecretsManager::Secret", "SyncCursorSecret");
    template.hasOutput("CursorSecretArn", { Value: { Ref: secretId } });
    const readers = (Object.entries(template.findResources("AWS::Lambda::Function")) as [string, Resource][])
      .filter(([, fn]) => fn.Properties.Environment?.Variables?.SYNC_CURSOR_SECRET_ARN !== undefined)
      .map(([id]) => id);
    expect(readers.length).toBe(CURSOR_SECRET_READERS.length);
    const output = template.toJSON().Outputs.CursorSecretReaderFunctions.Value as { "Fn::Join": [string, { Ref: string }[]] };
    expect(output["Fn::Join"][0]).toBe(",");
    expect(output["Fn::Join"][1].map((part) => part.Ref).sort()).toEqual([...readers].sort());
    for (const id of readers) {
      const fn = template.findResources("AWS::Lambda::Function")[id] as Resource;
      expect(fn.Properties.Environment.Variables.SYNC_CURSOR_SECRET_ARN, id).toEqual({ Ref: secretId });
      const constructId = id.slice(0, -8);
      const reads = statementsOf(template, constructId).filter((s) => list(s.Action).includes("secretsmanager:GetSecretValue"));
      expect(
        reads.map((s) => [s.Action, s.Resource]),
        id,
      ).toEqual([["secretsmanager:GetSecretValue", { Ref: secretId }]]);
    }
  });

  it("takes ExistingTableName and ExistingTableStreamArn (default empty; both or neither, by template rules)", () => {
    template.hasParameter("ExistingTableName", { Type: "String", Default: "" });
    template.hasParameter("ExistingTableStreamArn", { Type: "String", Default: "" });
    const json = template.toJSON();
    const given = (parameter: string) => ({ "Fn::Not": [{ "Fn::Equals": [{ Ref: parameter }, ""] }] });
    expect(json.Conditions.UseExistingTable).toEqual(given("ExistingTableName"));
    expect(json.Conditions.CreateTable).toEqual({ "Fn::Not": [{ Condition: "UseExistingTable" }] });
    expect(json.Rules.ExistingTableNeedsStreamArn).toMatchObject({
      RuleCondition: given("ExistingTableName"),
      Assertions: [{ Assert: given("ExistingTableStreamArn") }],
    });
    expect(json.Rules.ExistingTableStreamArnNeedsName).toMatchObject({
      RuleCondition: given("ExistingTableStreamArn"),
      Assertions: [{ Assert: given("ExistingTableName") }],
    });
    const pattern = new RegExp(json.Parameters.ExistingTableStreamArn.AllowedPattern as string);
    expect(pattern.test("")).toBe(true);
    expect(pattern.test("arn:aws:dynamodb:eu-west-1:123456789012:table/inventory-restored-0412/stream/2026-04-12T10:00:00.000")).toBe(true);
    expect(pattern.test("inventory-restored-0412")).toBe(false);
    expect(new RegExp(json.Parameters.ExistingTableName.AllowedPattern as string).test("inventory-restored-0412")).toBe(true);
  });

  it("uses the table in use everywhere: every TABLE_NAME, table and index policy, the stream mapping and its read grant, the alarm, the dashboard and the outputs", () => {
    const name = tableInUse(template, "ExistingTableName", "Ref");
    const stream = tableInUse(template, "ExistingTableStreamArn", "StreamArn");
    const functions = Object.entries(template.findResources("AWS::Lambda::Function")) as [string, Resource][];
    const withTable = functions.filter(([, fn]) => fn.Properties.Environment.Variables.TABLE_NAME !== undefined);
    expect(withTable).toHaveLength(functions.length);
    for (const [id, fn] of withTable) expect(fn.Properties.Environment.Variables.TABLE_NAME, id).toEqual(name);
    const indexArns = GLOBAL_INDEXES.map((index) => tableArnInUse(template, `/index/${index.indexName}`));
    for (const group of ENDPOINT_GROUPS.filter((g) => tableAccessOf(routesOfGroup(g)))) {
      const statements = statementsOf(template, `${pascal(group)}Function`);
      expect(
        statements.filter((s) => s.Action === "dynamodb:Query").map((s) => s.Resource),
        group,
      ).toEqual([indexArns]);
    }
    const processor = statementsOf(template, "StreamProcessorFunction");
    expect(processor).toContainEqual({
      Action: ["dynamodb:DescribeStream", "dynamodb:GetRecords", "dynamodb:GetShardIterator"],
      Effect: "Allow",
      Resource: stream,
    });
    expect(processor).toContainEqual({ Action: "dynamodb:ListStreams", Effect: "Allow", Resource: "*" });
    template.hasResourceProperties("AWS::Lambda::EventSourceMapping", { EventSourceArn: stream });
    template.hasOutput("TableName", { Value: name });
    template.hasOutput("TableStreamArn", { Value: stream });
    expect(JSON.stringify(alarmProperties("ThrottleAlarm").Metrics)).toContain(JSON.stringify({ Name: "TableName", Value: name }));
  });

  it("references the stack's own table only where it exists: in the false branch of Fn::If UseExistingTable", () => {
    const own = logicalId(template, "AWS::DynamoDB::Table", "Table");
    const unguarded: string[] = [];
    const walk = (node: unknown, path: string, guarded: boolean): void => {
      if (Array.isArray(node)) {
        for (const [i, child] of node.entries()) walk(child, `${path}[${i}]`, guarded);
        return;
      }
      if (typeof node !== "object" || node === null) return;
      const record = node as Record<string, unknown>;
      const ref = record.Ref ?? (record["Fn::GetAtt"] as unknown[] | undefined)?.[0];
      if (ref === own && !guarded) unguarded.push(path);
      const branches = record["Fn::If"] as [string, unknown, unknown] | undefined;
      if (branches?.[0] === "UseExistingTable") {
        walk(branches[1], `${path}.If.true`, guarded);
        walk(branches[2], `${path}.If.false`, true);
        return;
      }
      for (const [key, child] of Object.entries(record)) walk(child, `${path}.${key}`, guarded);
    };
    const json = template.toJSON();
    for (const [id, resource] of Object.entries(json.Resources as Record<string, Resource>)) {
      if (id === own) continue;
      walk(resource, id, false);
      expect((resource as { DependsOn?: string[] }).DependsOn ?? [], id).not.toContain(own);
    }
    walk(json.Outputs, "Outputs", false);
    expect(unguarded).toEqual([]);
    // The same holds for the throwaway stack (its table is deleted with the stack, not retained).
    throwaway.hasResource("AWS::DynamoDB::Table", { Condition: "CreateTable", DeletionPolicy: "Delete" });
  });

  it("queues webhook messages on an encrypted, SSL-only queue whose redrive policy ends in the failed queue", () => {
    const queues = template.findResources("AWS::SQS::Queue") as Record<string, Resource>;
    const queueId = logicalId(template, "AWS::SQS::Queue", "WebhookQueue");
    const failedId = logicalId(template, "AWS::SQS::Queue", "WebhookFailedQueue");
    const delivery = template.findResources("AWS::Lambda::Function")[functionId(template, "WebhookDeliveryFunction")] as Resource;
    const queue = queues[queueId]!.Properties;
    expect(queue).toMatchObject({
      SqsManagedSseEnabled: true,
      MessageRetentionPeriod: 4 * 24 * 3600,
      RedrivePolicy: { deadLetterTargetArn: { "Fn::GetAtt": [failedId, "Arn"] }, maxReceiveCount: WEBHOOK_MAX_RECEIVE_COUNT },
    });
    // A backstop beyond the function's own attempts (one more than the retry delays), which
    // all fit in the queue's retention; the deployed functions keep the default schedule.
    expect(WEBHOOK_MAX_RECEIVE_COUNT).toBeGreaterThan(DEFAULT_WEBHOOK_RETRY_SCHEDULE.length + 1);
    const schedule = DEFAULT_WEBHOOK_RETRY_SCHEDULE.reduce((sum, delay) => sum + delay, 0);
    expect(queue.MessageRetentionPeriod).toBeGreaterThan(2 * schedule);
    for (const fn of Object.values(template.findResources("AWS::Lambda::Function")) as Resource[]) {
      expect(fn.Properties.Environment.Variables.WEBHOOK_RETRY_SCHEDULE).toBeUndefined();
    }
    // Lambda's advice for an SQS event source: at least 6 times the function's timeout.
    expect(delivery.Properties.Timeout).toBe(WEBHOOK_DELIVERY_TIMEOUT.toSeconds());
    expect(queue.VisibilityTimeout).toBeGreaterThanOrEqual(6 * delivery.Properties.Timeout);
    const failed = queues[failedId]!.Properties;
    expect(failed).toMatchObject({ SqsManagedSseEnabled: true, MessageRetentionPeriod: 14 * 24 * 3600 });
    expect(failed.RedrivePolicy).toBeUndefined();
    expect(failed.MessageRetentionPeriod).toBeGreaterThan(queue.MessageRetentionPeriod); // a moved message keeps its first enqueue time
    for (const id of [queueId, failedId]) {
      template.hasResourceProperties("AWS::SQS::QueuePolicy", {
        Queues: [{ Ref: id }],
        PolicyDocument: {
          Statement: Match.arrayWith([
            Match.objectLike({
              Effect: "Deny",
              Action: "sqs:*",
              Condition: { Bool: { "aws:SecureTransport": "false" } },
              Resource: { "Fn::GetAtt": [id, "Arn"] },
            }),
          ]),
        },
      });
    }
  });

  it("delivers webhooks with their own function: 512 MB, the queues' URLs, fed by the queue in batches with partial failures and a concurrency cap", () => {
    const deliveryId = functionId(template, "WebhookDeliveryFunction");
    const queueId = logicalId(template, "AWS::SQS::Queue", "WebhookQueue");
    const failedId = logicalId(template, "AWS::SQS::Queue", "WebhookFailedQueue");
    const delivery = template.findResources("AWS::Lambda::Function")[deliveryId] as Resource;
    expect(delivery.Properties.MemorySize).toBe(512);
    expect(delivery.Properties.Environment.Variables).toMatchObject({
      TABLE_NAME: tableInUse(template, "ExistingTableName", "Ref"),
      WEBHOOK_QUEUE_URL: { Ref: queueId },
      WEBHOOK_FAILED_QUEUE_URL: { Ref: failedId },
    });
    // Outbound HTTPS to the internet, and no reservation (the event source caps its concurrency).
    expect(delivery.Properties.VpcConfig).toBeUndefined();
    expect(delivery.Properties.ReservedConcurrentExecutions).toBeUndefined();
    const mappings = (Object.values(template.findResources("AWS::Lambda::EventSourceMapping")) as Resource[]).filter(
      (mapping) => JSON.stringify(mapping.Properties.EventSourceArn) === JSON.stringify({ "Fn::GetAtt": [queueId, "Arn"] }),
    );
    expect(mappings).toHaveLength(1);
    expect(mappings[0]!.Properties).toMatchObject({
      FunctionName: { Ref: deliveryId },
      BatchSize: WEBHOOK_DELIVERY_BATCH_SIZE,
      FunctionResponseTypes: ["ReportBatchItemFailures"],
      ScalingConfig: { MaximumConcurrency: WEBHOOK_DELIVERY_MAX_CONCURRENCY },
    });
    expect(WEBHOOK_DELIVERY_BATCH_SIZE).toBe(10);
    // Nothing consumes the failed queue.
    expect(JSON.stringify(template.findResources("AWS::Lambda::EventSourceMapping"))).not.toContain(failedId);
  });

  it("lets the delivery function do exactly what it must: consume the queue (retries by visibility), send to the failed queue, read and write the table", () => {
    const statements = statementsOf(template, "WebhookDeliveryFunction");
    const queueId = logicalId(template, "AWS::SQS::Queue", "WebhookQueue");
    const failedId = logicalId(template, "AWS::SQS::Queue", "WebhookFailedQueue");
    expect(sqsGrants(statements)).toEqual(
      [
        ...["sqs:ChangeMessageVisibility", "sqs:DeleteMessage", "sqs:GetQueueAttributes", "sqs:GetQueueUrl", "sqs:ReceiveMessage"].map(
          (action) => `${action} ${queueId}`,
        ),
        `sqs:SendMessage ${failedId}`,
      ].sort(),
    );
    expect(tableActions(statements)).toEqual(WEBHOOK_DELIVERY_ACCESS.table);
    expect(WEBHOOK_DELIVERY_ACCESS.table).toEqual([
      "dynamodb:BatchGetItem",
      "dynamodb:ConditionCheckItem",
      "dynamodb:DeleteItem",
      "dynamodb:GetItem",
      "dynamodb:PutItem",
      "dynamodb:Query",
      "dynamodb:UpdateItem",
    ]);
    const others = statements.flatMap((s) => list(s.Action)).filter((action) => !action.startsWith("sqs:"));
    for (const action of others)
      expect(action).toMatch(/^(dynamodb:(BatchGetItem|GetItem|Query|UpdateItem|PutItem|DeleteItem|ConditionCheckItem)|logs:(CreateLogStream|PutLogEvents))$/);
    expect(JSON.stringify(statements.map((s) => s.Resource))).not.toContain("*");
  });

  it("lets the functions with an enqueuesWebhooks route (and only they) send to the webhook queue, with its URL", () => {
    const queueId = logicalId(template, "AWS::SQS::Queue", "WebhookQueue");
    const enqueuers = ENDPOINT_GROUPS.filter((group) => enqueuesWebhooks(routesOfGroup(group)));
    expect(enqueuers).toContain("webhooks"); // POST /webhook-endpoints/{id}/test
    expect(enqueuers).not.toContain("items");
    for (const group of ENDPOINT_GROUPS) {
      const fn = template.findResources("AWS::Lambda::Function")[functionId(template, `${pascal(group)}Function`)] as Resource;
      const enqueues = enqueuers.includes(group);
      expect(fn.Properties.Environment.Variables.WEBHOOK_QUEUE_URL, group).toEqual(enqueues ? { Ref: queueId } : undefined);
      expect(fn.Properties.Environment.Variables.WEBHOOK_FAILED_QUEUE_URL, group).toBeUndefined();
      expect(sqsGrants(statementsOf(template, `${pascal(group)}Function`)), group).toEqual(enqueues ? [`sqs:SendMessage ${queueId}`] : []);
    }
  });

  it("lets the stream processor fan the markers it writes out to the webhook queue; its filter still leaves platform records out", () => {
    const queueId = logicalId(template, "AWS::SQS::Queue", "WebhookQueue");
    const failureId = logicalId(template, "AWS::SQS::Queue", "StreamFailureQueue");
    const processor = template.findResources("AWS::Lambda::Function")[functionId(template, "StreamProcessorFunction")] as Resource;
    expect(processor.Properties.Environment.Variables.WEBHOOK_QUEUE_URL).toEqual({ Ref: queueId });
    expect(sqsGrants(statementsOf(template, "StreamProcessorFunction"))).toEqual(
      [`sqs:SendMessage ${queueId}`, ...["sqs:GetQueueAttributes", "sqs:GetQueueUrl", "sqs:SendMessage"].map((action) => `${action} ${failureId}`)].sort(),
    );

    const stream = (Object.values(template.findResources("AWS::Lambda::EventSourceMapping")) as Resource[]).find(
      (mapping) => mapping.Properties.StartingPosition !== undefined,
    )!;
    const patterns = (stream.Properties.FilterCriteria.Filters as { Pattern: string }[]).map((filter) => JSON.parse(filter.Pattern) as Record<string, unknown>);
    const image = (entity: string) => ({ [ENTITY_ATTRIBUTE]: { S: entity } });
    const record = (eventName: "INSERT" | "MODIFY" | "REMOVE", entity: string) => ({
      eventName,
      dynamodb: { ...(eventName === "REMOVE" ? {} : { NewImage: image(entity) }), ...(eventName === "INSERT" ? {} : { OldImage: image(entity) }) },
    });
    const admitted = (event: Record<string, unknown>) => patterns.some((pattern) => admits(pattern, event));
    expect(admitted(record("INSERT", "item"))).toBe(true);
    expect(admitted(record("MODIFY", "item"))).toBe(true);
    // The markers it writes (and the webhook records) never come back to it as changes.
    expect(PLATFORM_ENTITIES).toEqual(expect.arrayContaining(["syncmarker", "webhookendpoint", "webhookdelivery", "webhookdeliveryday"]));
    for (const entity of PLATFORM_ENTITIES) {
      expect(admitted(record("INSERT", entity)), entity).toBe(false);
      expect(admitted(record("MODIFY", entity)), entity).toBe(false);
    }
    // Removals by a request pass, whatever the entity.
    for (const entity of ["syncmarker", "apikey", "item"]) expect(admitted(record("REMOVE", entity)), entity).toBe(true);
  });

  it("keeps TTL expiries away from the stream processor (user removals still reach it), with its filters from one constant", () => {
    const stream = (Object.values(template.findResources("AWS::Lambda::EventSourceMapping")) as Resource[]).find(
      (mapping) => mapping.Properties.StartingPosition !== undefined,
    )!;
    const patterns = (stream.Properties.FilterCriteria.Filters as { Pattern: string }[]).map((filter) => JSON.parse(filter.Pattern) as Record<string, unknown>);
    expect(patterns).toEqual(STREAM_FILTER_PATTERNS);
    expect(patterns[0]).toEqual({ eventName: ["REMOVE"], userIdentity: { type: [{ exists: false }] } });
    const admitted = (event: Record<string, unknown>) => patterns.some((pattern) => admits(pattern, event));
    const removal = (entity: string, extra: Record<string, unknown> = {}) => ({
      eventName: "REMOVE",
      dynamodb: { Keys: {}, OldImage: { [ENTITY_ATTRIBUTE]: { S: entity } } },
      ...extra,
    });
    // What DynamoDB writes for an item its TTL process deleted (developer guide, "DynamoDB Streams and Time to Live").
    const ttl = { userIdentity: { type: "Service", principalId: "dynamodb.amazonaws.com" } };
    for (const entity of ["syncmarker", "syncpointer", "synccheckpoint", "idempotency", "webhookdelivery", "turn", "itemreference", "documentitem", "item"]) {
      expect(admitted(removal(entity, ttl)), `TTL ${entity}`).toBe(false);
    }
    for (const entity of ["item", "invoice", "documentitem"]) expect(admitted(removal(entity)), `delete ${entity}`).toBe(true);
  });

  it("lets the stream processor wait up to a second for fuller batches", () => {
    expect(STREAM_BATCHING_WINDOW.toSeconds()).toBe(1);
    template.hasResourceProperties("AWS::Lambda::EventSourceMapping", {
      StartingPosition: "TRIM_HORIZON",
      BatchSize: 100,
      MaximumBatchingWindowInSeconds: 1,
    });
    // The webhook queue's event source keeps no window (deliveries go out as soon as they are due).
    const sqs = (Object.values(template.findResources("AWS::Lambda::EventSourceMapping")) as Resource[]).find(
      (m) => m.Properties.StartingPosition === undefined,
    )!;
    expect(sqs.Properties.MaximumBatchingWindowInSeconds).toBeUndefined();
  });

  it("alarms on failed webhook messages, delivery function errors and a stalled webhook queue", () => {
    const alarm = (constructId: string) =>
      (template.findResources("AWS::CloudWatch::Alarm")[logicalId(template, "AWS::CloudWatch::Alarm", constructId)] as Resource).Properties;
    const queueName = (constructId: string) => ({ "Fn::GetAtt": [logicalId(template, "AWS::SQS::Queue", constructId), "QueueName"] });
    expect(alarm("WebhookFailedQueueAlarm")).toMatchObject({
      Namespace: "AWS/SQS",
      MetricName: "ApproximateNumberOfMessagesVisible",
      Dimensions: [{ Name: "QueueName", Value: queueName("WebhookFailedQueue") }],
      Threshold: 1,
      ComparisonOperator: "GreaterThanOrEqualToThreshold",
    });
    expect(alarm("WebhookDeliveryErrorsAlarm")).toMatchObject({
      Namespace: "AWS/Lambda",
      MetricName: "Errors",
      Dimensions: [{ Name: "FunctionName", Value: { Ref: functionId(template, "WebhookDeliveryFunction") } }],
      Threshold: 1,
    });
    expect(alarm("WebhookQueueAgeAlarm")).toMatchObject({
      Namespace: "AWS/SQS",
      MetricName: "ApproximateAgeOfOldestMessage",
      Dimensions: [{ Name: "QueueName", Value: queueName("WebhookQueue") }],
      Statistic: "Maximum",
      Threshold: WEBHOOK_QUEUE_AGE_ALARM.toSeconds(),
    });
    // The metric leaves out messages received three times or more: the ones it sees wait at most
    // the first two delays of the schedule (5 s, 5 min), far below the threshold.
    const firstTwoDelays = DEFAULT_WEBHOOK_RETRY_SCHEDULE[0]! + DEFAULT_WEBHOOK_RETRY_SCHEDULE[1]!;
    expect(WEBHOOK_QUEUE_AGE_ALARM.toSeconds()).toBeGreaterThan(10 * firstTwoDelays);
  });

  it("outputs the webhook queues' URLs and the delivery function's name", () => {
    template.hasOutput("WebhookQueueUrl", { Value: { Ref: logicalId(template, "AWS::SQS::Queue", "WebhookQueue") } });
    template.hasOutput("WebhookFailedQueueUrl", { Value: { Ref: logicalId(template, "AWS::SQS::Queue", "WebhookFailedQueue") } });
    template.hasOutput("WebhookDeliveryFunctionName", { Value: { Ref: functionId(template, "WebhookDeliveryFunction") } });
  });

  it("has one dashboard, named from the stack, with a row each for the API, the API functions, the table, the stream processor and the webhooks", () => {
    const dashboards = template.findResources("AWS::CloudWatch::Dashboard");
    expect(Object.keys(dashboards)).toHaveLength(1);
    const dashboard = Object.values(dashboards)[0] as Resource;
    expect(dashboard.Properties.DashboardName).toEqual({ "Fn::Join": ["", ["TestStack-", { Ref: "AWS::Region" }]] });
    const body = dashboardBody(dashboard);
    const widgets = JSON.parse(body).widgets as { type: string; properties: { markdown?: string; title?: string; metrics?: unknown[][] } }[];
    expect(widgets.length).toBeLessThan(50);
    expect(widgets.filter((w) => w.type === "text").map((w) => w.properties.markdown)).toEqual([
      expect.stringContaining("API"),
      expect.stringContaining("API functions"),
      expect.stringContaining("DynamoDB"),
      expect.stringContaining("Stream processor"),
      expect.stringContaining("Webhooks"),
    ]);
    /** `namespace metric dimension=value` for every metric line of the graphs. */
    const lines = widgets.flatMap((w) =>
      (w.properties.metrics ?? []).map((m) => {
        const plain = m.filter((part) => typeof part === "string") as string[];
        return `${plain[0]} ${plain[1]} ${plain[2]}=${plain[3]}`;
      }),
    );
    const has = (namespace: string, metric: string, dimension: string, value: string) =>
      expect(lines, `${namespace} ${metric} ${dimension}=${value}`).toContain(`${namespace} ${metric} ${dimension}=${value}`);

    const api = `{Ref:${logicalId(template, "AWS::ApiGatewayV2::Api", "HttpApi")}}`;
    for (const metric of ["Count", "4xx", "5xx", "Latency"]) has("AWS/ApiGateway", metric, "ApiId", api);
    // Every API function, derived from the route table: invocations, errors, duration, throttles.
    for (const group of ENDPOINT_GROUPS) {
      const fn = `{Ref:${functionId(template, `${pascal(group)}Function`)}}`;
      for (const metric of ["Invocations", "Errors", "Duration", "Throttles"]) has("AWS/Lambda", metric, "FunctionName", fn);
    }
    const table = `{If:UseExistingTable?{Ref:ExistingTableName}:{Ref:${logicalId(template, "AWS::DynamoDB::Table", "Table")}}}`;
    for (const metric of ["ConsumedReadCapacityUnits", "ConsumedWriteCapacityUnits", "ReadThrottleEvents", "WriteThrottleEvents"]) {
      has("AWS/DynamoDB", metric, "TableName", table);
    }
    // ThrottledRequests and SystemErrors are per operation: summed over the operations the functions use.
    for (const metric of ["ThrottledRequests", "SystemErrors"]) {
      for (const operation of ["GetItem", "Query", "UpdateItem", "TransactWriteItems"]) has("AWS/DynamoDB", metric, "Operation", operation);
    }
    expect(body).toContain(`"TableName","${table}"`);
    const processor = `{Ref:${functionId(template, "StreamProcessorFunction")}}`;
    for (const metric of ["IteratorAge", "Invocations", "Errors"]) has("AWS/Lambda", metric, "FunctionName", processor);
    const queue = (constructId: string) => `{GetAtt:${logicalId(template, "AWS::SQS::Queue", constructId)}.QueueName}`;
    for (const metric of ["ApproximateNumberOfMessagesVisible", "ApproximateAgeOfOldestMessage"])
      has("AWS/SQS", metric, "QueueName", queue("StreamFailureQueue"));
    const delivery = `{Ref:${functionId(template, "WebhookDeliveryFunction")}}`;
    for (const metric of ["Invocations", "Errors", "Duration"]) has("AWS/Lambda", metric, "FunctionName", delivery);
    for (const metric of ["ApproximateNumberOfMessagesVisible", "ApproximateNumberOfMessagesNotVisible", "ApproximateAgeOfOldestMessage"]) {
      has("AWS/SQS", metric, "QueueName", queue("WebhookQueue"));
    }
    has("AWS/SQS", "ApproximateNumberOfMessagesVisible", "QueueName", queue("WebhookFailedQueue"));
    // The alarm thresholds are drawn on their graphs.
    expect(body).toContain(`{"value":${WEBHOOK_QUEUE_AGE_ALARM.toSeconds()},"label":"WebhookQueueAgeAlarm"`);
    expect(body).toContain(`{"value":${STREAM_ITERATOR_AGE_ALARM.toMilliseconds()},"label":"StreamIteratorAgeAlarm"`);
    expect(body).toContain(`{"value":${STREAM_FAILURE_QUEUE_AGE_ALARM.toSeconds()},"label":"StreamFailureQueueAgeAlarm"`);
  });

  it("outputs the dashboard's name and console address", () => {
    const dashboard = logicalId(template, "AWS::CloudWatch::Dashboard", "Dashboard");
    template.hasOutput("DashboardName", { Value: { Ref: dashboard } });
    template.hasOutput("DashboardUrl", { Value: { "Fn::Join": ["", Match.arrayWith([`#dashboards:name=`, { Ref: dashboard }])] } });
  });

  it("configures CORS only when origins are given", () => {
    const api = Object.values(template.findResources("AWS::ApiGatewayV2::Api"))[0] as Resource;
    expect(api.Properties.CorsConfiguration).toBeUndefined();
    throwaway.hasResourceProperties("AWS::ApiGatewayV2::Api", {
      CorsConfiguration: Match.objectLike({
        AllowOrigins: ["https://app.example.com"],
        AllowHeaders: Match.arrayWith(["authorization", "idempotency-key"]),
        ExposeHeaders: Match.arrayWith(["retry-after", "x-request-id"]),
      }),
    });
  });

  it("exposes the rate limit as a stack parameter defaulting to 120", () => {
    template.hasParameter("RateLimitPerMinute", { Type: "Number", Default: 120 });
  });

  it("passes the cdk-nag AwsSolutions checks: no unsuppressed error, and every suppression has a reason", () => {
    const messages = assembly.getStackByName("TestStack").messages;
    const nag = messages.filter((m) => String(m.entry.data).startsWith("AwsSolutions-"));
    const errors = nag.filter((m) => m.level === "error").map((m) => `${m.id}: ${String(m.entry.data).split("\n")[0]}`);
    expect(errors).toEqual([]);
    // The checks really ran: their report lists every rule applied, none of them failing.
    const report = readFileSync(
      join(assembly.directory, readdirSync(assembly.directory).find((f) => /^AwsSolutions-.*TestStack-NagReport\.csv$/.test(f))!),
      "utf8",
    );
    const rows = report
      .trim()
      .split("\n")
      .slice(1)
      .map((line) => line.split('","').map((cell) => cell.replace(/^"|"$/g, "")));
    expect(rows.length).toBeGreaterThan(50);
    expect(rows.filter((row) => row[2] === "Non-Compliant")).toEqual([]);
    expect(new Set(rows.filter((row) => row[2] === "Suppressed").map((row) => row[0]))).toEqual(
      new Set(["AwsSolutions-APIG4", "AwsSolutions-IAM5", "AwsSolutions-L1", "AwsSolutions-SMG4", "AwsSolutions-SQS3"]),
    );
    for (const row of rows.filter((r) => r[2] === "Suppressed")) expect(row[3]!.length, row[0]).toBeGreaterThan(60);
  });
});
