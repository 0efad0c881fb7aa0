import { CfnCondition, CfnOutput, CfnParameter, CfnRule, Duration, Fn, Names, RemovalPolicy, Stack, Token, Validations, type StackProps } from "aws-cdk-lib";
import { AccessLogFormat } from "aws-cdk-lib/aws-apigateway";
import { CorsHttpMethod, HttpApi, HttpMethod, HttpStage, LogGroupLogDestination, type HttpRouteIntegration } from "aws-cdk-lib/aws-apigatewayv2";
import { HttpLambdaIntegration } from "aws-cdk-lib/aws-apigatewayv2-integrations";
import {
  Alarm,
  AlarmRule,
  AlarmState,
  ComparisonOperator,
  CompositeAlarm,
  MathExpression,
  Metric,
  TreatMissingData,
  type IMetric,
} from "aws-cdk-lib/aws-cloudwatch";
import { SnsAction } from "aws-cdk-lib/aws-cloudwatch-actions";
import { AttributeType, BillingMode, type CfnTable, type ITable, Operation, ProjectionType, StreamViewType, Table } from "aws-cdk-lib/aws-dynamodb";
import { PolicyStatement, Role, ServicePrincipal } from "aws-cdk-lib/aws-iam";
import { Architecture, type CfnFunction, FilterCriteria, LoggingFormat, Runtime, StartingPosition } from "aws-cdk-lib/aws-lambda";
import { SqsDlq, SqsEventSource } from "aws-cdk-lib/aws-lambda-event-sources";
import { Rule, Schedule } from "aws-cdk-lib/aws-events";
import { LambdaFunction } from "aws-cdk-lib/aws-events-targets";
import { NodejsFunction, OutputFormat } from "aws-cdk-lib/aws-lambda-nodejs";
import { LogGroup, type RetentionDays } from "aws-cdk-lib/aws-logs";
import { Secret } from "aws-cdk-lib/aws-secretsmanager";
import { type CfnSubscription, Subscription, SubscriptionProtocol, Topic } from "aws-cdk-lib/aws-sns";
import { Queue, QueueEncryption } from "aws-cdk-lib/aws-sqs";
import { NagSuppressions } from "cdk-nag";
import type { Construct } from "constructs";
import { fileURLToPath } from "node:url";
import { dirname, join } from "node:path";
import { ENDPOINT_GROUPS, ROUTES, routesOfGroup, type EndpointGroup } from "../lib/routes/index.js";
import { GLOBAL_INDEXES, TABLE_KEYS } from "../lib/db/table.js";
import { STREAM_FILTER_PATTERNS } from "../lib/sync/stream-filter.js";
import { enqueuesWebhooks, STREAM_PROCESSOR_ACCESS, tableAccessOf, WEBHOOK_DELIVERY_ACCESS, type TableAccess } from "./permissions.js";
import { ESBUILD_OPTIONS, lambdaBundling } from "./bundling.js";
import { OperationsDashboard } from "./dashboard.js";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");

export interface InventoryApiStackProps extends StackProps {
  /** Protect the table from deletion (default true; turn off for throwaway stages). */
  deletionProtection?: boolean;
  /**
   * Browser origins allowed by CORS (API Gateway answers preflights itself). Default none: no
   * CORS configuration, so browsers on other origins cannot call the API.
   */
  corsOrigins?: readonly string[];
}

/** Values CloudWatch Logs accepts for a retention (the LogRetentionDays parameter). */
const RETENTION_CHOICES = [1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653];

/** Stream processor event source: retries are bounded, and records are never older than this when replayed from the DLQ. */
export const STREAM_RETRY_ATTEMPTS = 10;
/** Leaves at least 18 of the stream's 24 hours of retention to replay a discarded batch. */
export const STREAM_MAX_RECORD_AGE = Duration.hours(6);
/** The webhook delivery function's timeout: a batch of up to 10 messages, each attempt given 10 s (docs/operations.md, "Webhook delivery failures"). */
export const WEBHOOK_DELIVERY_TIMEOUT = Duration.seconds(60);
/** Messages per delivery invocation. */
export const WEBHOOK_DELIVERY_BATCH_SIZE = 10;
/** Concurrent delivery invocations at most (the event source's maximum concurrency; nothing reserved). */
export const WEBHOOK_DELIVERY_MAX_CONCURRENCY = 20;
/**
 * Receives of one webhook message before SQS moves it to the failed queue itself: the delivery
 * function's 8 attempts, plus a margin for invocations that failed as a whole (crash, timeout).
 * A backstop only: the function moves a message whose 8 attempts failed itself.
 */
export const WEBHOOK_MAX_RECEIVE_COUNT = 12;
/**
 * WebhookQueueAgeAlarm's threshold. ApproximateAgeOfOldestMessage counts from a message's first
 * enqueue but leaves out messages received three times or more (SQS documentation), so the
 * messages waiting for their later retries (up to about 27.6 hours after the first attempt)
 * never reach it; a message received less than three times is due within minutes. An hour
 * means delivery has stalled or fallen far behind (a large fan-out backlog also shows here).
 */
export const WEBHOOK_QUEUE_AGE_ALARM = Duration.hours(1);
/**
 * The stream processor's batching window: Lambda gathers records this long (or until a batch of
 * 100) before invoking. Sync markers and webhook messages wait up to this much longer; in
 * exchange a burst of writes makes fuller batches, so fewer invocations and fewer marker
 * transactions per account (one head update covers the whole batch's markers).
 */
export const STREAM_BATCHING_WINDOW = Duration.seconds(1);
/** The stream processor's batch size (records per invocation at most). */
export const STREAM_BATCH_SIZE = 100;
/**
 * The API functions that sign cursors with SyncCursorSecret and read it at cold start: sync
 * (sync cursors, lib/sync/cursor.ts) and tasks (task-list cursors, a key derived from it,
 * lib/domain/tasks/cursor.ts). After a rotation each of them must be refreshed (output
 * CursorSecretReaderFunctions, docs/operations.md).
 */
export const CURSOR_SECRET_READERS = ["sync", "tasks"] as const satisfies readonly EndpointGroup[];
/** StreamIteratorAgeAlarm's threshold (3 minutes in a row): sync markers lag the table by this much. */
export const STREAM_ITERATOR_AGE_ALARM = Duration.minutes(1);

/** StreamFailureQueueAgeAlarm's threshold: a described batch has waited this long (its 24 h replay deadline keeps running while an operator holds it). */
export const STREAM_FAILURE_QUEUE_AGE_ALARM = Duration.hours(1);
/**
 * The rate alarms (API function error rate, API 5xx and 4xx rate) count only 5-minute periods
 * with at least this many invocations or requests: below it the rate is 0, so one error in a
 * quiet period does not page.
 */
export const ALARM_MIN_REQUESTS = 10;
/** Periods of ApiLatencyP99Alarm: 3 breaching 5-minute periods out of the last 5. */
export const LATENCY_ALARM_PERIODS = { datapointsToAlarm: 3, evaluationPeriods: 5 } as const;

/** The table operations the functions use: ThrottleAlarm and the dashboard's table row watch these. */
const TABLE_OPERATIONS = [
  Operation.GET_ITEM,
  Operation.QUERY,
  Operation.PUT_ITEM,
  Operation.UPDATE_ITEM,
  Operation.DELETE_ITEM,
  Operation.TRANSACT_WRITE_ITEMS,
  Operation.BATCH_GET_ITEM,
];

/** Headers a browser client sends and may read (CORS). */
const CORS_REQUEST_HEADERS = ["authorization", "content-type", "idempotency-key", "if-match"];
const CORS_EXPOSED_HEADERS = ["etag", "idempotent-replayed", "ratelimit-limit", "ratelimit-remaining", "ratelimit-reset", "retry-after", "x-request-id"];

/**
 * The whole service: one table, one HTTP API whose routes come from the route table, one
 * Lambda per endpoint group (each with its own role, log group and reserved concurrency), the
 * stream processor with its failure queue, the webhook queue with its delivery function and
 * failed queue, and alarms that notify one SNS topic.
 */
export class InventoryApiStack extends Stack {
  /**
   * The table every function, policy, event source, alarm and output uses: the stack's own
   * (`ownTable`) while the ExistingTableName parameter is empty, else the table it names (a
   * point-in-time restore, docs/operations.md). Its name, ARN and stream ARN are
   * `Fn::If: [UseExistingTable, <parameter>, <own table>]`.
   */
  readonly table: ITable;
  /** The table the stack creates, only while ExistingTableName is empty (condition CreateTable); retained when that changes. */
  readonly ownTable: Table;
  readonly api: HttpApi;
  readonly functions: Record<EndpointGroup, NodejsFunction>;
  readonly streamProcessor: NodejsFunction;
  readonly alarmTopic: Topic;
  readonly streamFailureQueue: Queue;
  readonly webhookQueue: Queue;
  readonly webhookFailedQueue: Queue;
  readonly webhookDelivery: NodejsFunction;
  readonly dashboard: OperationsDashboard;

  constructor(scope: Construct, id: string, props: InventoryApiStackProps = {}) {
    super(scope, id, props);
    const throwaway = props.deletionProtection === false;

    const rateLimit = new CfnParameter(this, "RateLimitPerMinute", {
      type: "Number",
      default: 120,
      minValue: 1,
      description: "Requests allowed per API key per minute.",
    });
    const throttleRate = new CfnParameter(this, "ApiThrottleRateLimit", {
      type: "Number",
      default: 200,
      minValue: 1,
      description: "Steady-state requests per second the API stage accepts in total (API Gateway answers 429 above it).",
    });
    const throttleBurst = new CfnParameter(this, "ApiThrottleBurstLimit", {
      type: "Number",
      default: 400,
      minValue: 1,
      description: "Requests the API stage accepts in a burst above the steady rate.",
    });
    const apiConcurrency = new CfnParameter(this, "ApiReservedConcurrency", {
      type: "Number",
      default: 20,
      minValue: 0,
      description:
        "Concurrent executions reserved for (and capping) EACH API function. 0 reserves nothing (the functions then share the account's unreserved pool).",
    });
    const streamConcurrency = new CfnParameter(this, "StreamProcessorReservedConcurrency", {
      type: "Number",
      default: 10,
      minValue: 0,
      description: "Concurrent executions reserved for the stream processor (one per active stream shard). 0 reserves nothing.",
    });
    const logRetention = new CfnParameter(this, "LogRetentionDays", {
      type: "Number",
      default: 30,
      allowedValues: RETENTION_CHOICES.map(String),
      description: "Days CloudWatch keeps function and access logs.",
    });
    const alarmThresholds = {
      apiErrorRate: new CfnParameter(this, "ApiErrorRatePercent", {
        type: "Number",
        default: 5,
        minValue: 0,
        maxValue: 100,
        description: `ApiUnhealthyAlarm member: an API function's errors per invocation, in percent over 5 minutes, above which its <Group>ErrorRateAlarm fires (periods with fewer than ${ALARM_MIN_REQUESTS} invocations count as 0).`,
      }),
      api5xxRate: new CfnParameter(this, "Api5xxRatePercent", {
        type: "Number",
        default: 1,
        minValue: 0,
        maxValue: 100,
        description: `ApiUnhealthyAlarm member: the API's 5xx answers per request, in percent over 5 minutes, above which Api5xxRateAlarm fires (periods with fewer than ${ALARM_MIN_REQUESTS} requests count as 0).`,
      }),
      api4xxRate: new CfnParameter(this, "Api4xxRatePercent", {
        type: "Number",
        default: 25,
        minValue: 0,
        maxValue: 100,
        description: `The API's 4xx answers (429s from stage throttling included) per request, in percent over 5 minutes, above which Api4xxRateAlarm fires (periods with fewer than ${ALARM_MIN_REQUESTS} requests count as 0).`,
      }),
      apiLatencyP99: new CfnParameter(this, "ApiLatencyP99Ms", {
        type: "Number",
        default: 3000,
        minValue: 1,
        description: "ApiUnhealthyAlarm member: the API's p99 latency in milliseconds above which ApiLatencyP99Alarm fires (3 of 5 periods of 5 minutes).",
      }),
    };
    const alarmEmail = new CfnParameter(this, "AlarmEmail", {
      type: "String",
      default: "",
      allowedPattern: "^$|^[^@\\s]+@[^@\\s]+$",
      description: "Email address subscribed to the alarm topic (empty: no subscription).",
    });

    // Restoring from a point in time makes a NEW table (docs/operations.md, "Restoring the table
    // from a point in time"): with ExistingTableName set, the stack's own table is conditioned
    // out (its RETAIN policy keeps it in the account) and everything uses the named table.
    const existingTableName = new CfnParameter(this, "ExistingTableName", {
      type: "String",
      default: "",
      allowedPattern: "^$|^[a-zA-Z0-9_.-]{3,255}$",
      description:
        "Empty: the stack creates and uses its own table. Else the name of an existing table to use instead (a point-in-time restore, prepared with `npm run admin -- table prepare-restored`); needs ExistingTableStreamArn.",
    });
    const existingTableStreamArn = new CfnParameter(this, "ExistingTableStreamArn", {
      type: "String",
      default: "",
      allowedPattern: "^$|^arn:aws[a-z-]*:dynamodb:[a-z0-9-]+:[0-9]{12}:table/[a-zA-Z0-9_.-]{3,255}/stream/.+$",
      description: "The stream ARN (NEW_AND_OLD_IMAGES) of ExistingTableName: set both or neither.",
    });
    const nameGiven = Fn.conditionNot(Fn.conditionEquals(existingTableName.valueAsString, ""));
    const streamGiven = Fn.conditionNot(Fn.conditionEquals(existingTableStreamArn.valueAsString, ""));
    const usesExistingTable = new CfnCondition(this, "UseExistingTable", { expression: nameGiven });
    const createsTable = new CfnCondition(this, "CreateTable", { expression: Fn.conditionNot(usesExistingTable) });
    // Refused before anything changes (a rule fails the change set), rather than a stream
    // processor left without a stream.
    new CfnRule(this, "ExistingTableNeedsStreamArn", {
      ruleCondition: nameGiven,
      assertions: [
        { assert: streamGiven, assertDescription: "ExistingTableName needs ExistingTableStreamArn (the stream processor reads that table's stream)." },
      ],
    });
    new CfnRule(this, "ExistingTableStreamArnNeedsName", {
      ruleCondition: streamGiven,
      assertions: [{ assert: nameGiven, assertDescription: "ExistingTableStreamArn is used only with ExistingTableName: set both or neither." }],
    });

    this.ownTable = new Table(this, "Table", {
      partitionKey: { name: TABLE_KEYS.partitionKey, type: AttributeType.STRING },
      sortKey: { name: TABLE_KEYS.sortKey, type: AttributeType.STRING },
      billingMode: BillingMode.PAY_PER_REQUEST,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      stream: StreamViewType.NEW_AND_OLD_IMAGES,
      timeToLiveAttribute: TABLE_KEYS.timeToLiveAttribute,
      deletionProtection: props.deletionProtection ?? true,
      removalPolicy: throwaway ? RemovalPolicy.DESTROY : RemovalPolicy.RETAIN,
    });
    for (const index of GLOBAL_INDEXES) {
      this.ownTable.addGlobalSecondaryIndex({
        indexName: index.indexName,
        partitionKey: { name: index.partitionKey, type: AttributeType.STRING },
        sortKey: { name: index.sortKey, type: AttributeType.STRING },
        ...(index.projection?.type === "INCLUDE"
          ? { projectionType: ProjectionType.INCLUDE, nonKeyAttributes: [...index.projection.attributes] }
          : { projectionType: index.projection?.type === "KEYS_ONLY" ? ProjectionType.KEYS_ONLY : ProjectionType.ALL }),
      });
    }
    (this.ownTable.node.defaultChild as CfnTable).cfnOptions.condition = createsTable;
    // The synth-time template check reads each Fn::If branch alone: it sees the own table's
    // Ref in an output (W1001) and the empty default of the parameters (W1030), both only in the
    // branch that condition excludes (and the rules above refuse an empty stream ARN there).
    Validations.of(this).acknowledge(
      {
        id: "CloudFormation-Validate::W1001",
        reason: "The own table is referenced only in the Fn::If branch of UseExistingTable false, its own condition (CreateTable).",
      },
      {
        id: "CloudFormation-Validate::W1030",
        reason: "ExistingTableName and ExistingTableStreamArn are used only in the Fn::If branch where they are set (rules ExistingTable*).",
      },
    );
    // The ONE place that chooses between the two tables: everything below uses this.table.
    const inUse = (existing: CfnParameter, own: string) => Token.asString(Fn.conditionIf(usesExistingTable.logicalId, existing.valueAsString, own));
    // By name, its ARN is arn:${Partition}:dynamodb:${Region}:${AccountId}:table/<name>.
    this.table = Table.fromTableAttributes(this, "TableInUse", {
      tableName: inUse(existingTableName, this.ownTable.tableName),
      tableStreamArn: inUse(existingTableStreamArn, this.ownTable.tableStreamArn!),
    });
    // Each index by name: no wildcard in any policy.
    const indexArns = GLOBAL_INDEXES.map((index) => `${this.table.tableArn}/index/${index.indexName}`);

    const environment = {
      TABLE_NAME: this.table.tableName,
      RATE_LIMIT_PER_MINUTE: rateLimit.valueAsString,
      LOG_LEVEL: "INFO",
    };
    const logRemoval = throwaway ? RemovalPolicy.DESTROY : RemovalPolicy.RETAIN;
    const retention = Token.asNumber(logRetention.valueAsNumber) as RetentionDays;
    /** Reserved concurrency from a parameter; 0 leaves the function unreserved (Lambda's 0 would stop it). */
    const reservations = new Map<CfnParameter, CfnCondition>();
    const reserve = (fn: NodejsFunction, parameter: CfnParameter) => {
      let reserves = reservations.get(parameter);
      if (!reserves) {
        reserves = new CfnCondition(this, `${parameter.node.id}Set`, { expression: Fn.conditionNot(Fn.conditionEquals(parameter.valueAsString, "0")) });
        reservations.set(parameter, reserves);
      }
      (fn.node.defaultChild as CfnFunction).reservedConcurrentExecutions = Token.asNumber(
        Fn.conditionIf(reserves.logicalId, parameter.valueAsNumber, Fn.ref("AWS::NoValue")),
      );
    };

    /** A function with its own role (only what `access` says, plus its own log group) and log group. */
    const makeFunction = (name: string, group: string, memorySize: number, timeout: Duration, access: TableAccess | undefined): NodejsFunction => {
      const logGroup = new LogGroup(this, `${name}LogGroup`, { retention, removalPolicy: logRemoval });
      const role = new Role(this, `${name}Role`, {
        assumedBy: new ServicePrincipal("lambda.amazonaws.com"),
        description: `${name}: its log group${access ? ` and ${access.table.join(", ")} on the table` : ""}`,
      });
      // No AWS-managed policy: the function writes to its own log group only.
      logGroup.grantWrite(role);
      if (access) {
        role.addToPolicy(new PolicyStatement({ actions: access.table, resources: [this.table.tableArn] }));
        role.addToPolicy(new PolicyStatement({ actions: access.indexes, resources: indexArns }));
      }
      return new NodejsFunction(this, name, {
        entry: join(root, "functions", group, "handler.ts"),
        handler: "handler",
        projectRoot: root,
        depsLockFilePath: join(root, "package-lock.json"),
        runtime: Runtime.NODEJS_22_X,
        architecture: Architecture.ARM_64,
        memorySize,
        timeout,
        role,
        logGroup,
        environment,
        loggingFormat: LoggingFormat.JSON,
        // The shared options (infra/bundling.ts): the bundles `npm run bench:bundles` measures.
        bundling: { ...lambdaBundling(group), format: ESBUILD_OPTIONS.format === "esm" ? OutputFormat.ESM : OutputFormat.CJS },
      });
    };

    this.functions = {} as Record<EndpointGroup, NodejsFunction>;
    for (const group of ENDPOINT_GROUPS) {
      const fn = makeFunction(`${pascal(group)}Function`, group, 1024, Duration.seconds(29), tableAccessOf(routesOfGroup(group)));
      reserve(fn, apiConcurrency);
      this.functions[group] = fn;
    }

    // Sync cursors are HMAC-signed with a generated secret, task-list cursors with a key derived
    // from it (lib/domain/tasks/cursor.ts). Its readers (CURSOR_SECRET_READERS) read it from
    // Secrets Manager at cold start (lib/sync/cursor.ts); only its ARN is in the environment.
    const cursorSecret = new Secret(this, "SyncCursorSecret", {
      description: "HMAC key that signs sync cursors (and, derived, task cursors)",
      generateSecretString: { passwordLength: 48, excludePunctuation: true },
    });
    for (const group of CURSOR_SECRET_READERS) {
      this.functions[group].addEnvironment("SYNC_CURSOR_SECRET_ARN", cursorSecret.secretArn);
      this.functions[group].addToRolePolicy(new PolicyStatement({ actions: ["secretsmanager:GetSecretValue"], resources: [cursorSecret.secretArn] }));
    }
    NagSuppressions.addResourceSuppressions(cursorSecret, [
      {
        id: "AwsSolutions-SMG4",
        reason:
          "The HMAC key signs sync cursors that stay valid for up to 90 days (and, derived, task-list cursors): an automatic rotation would invalidate every client's cursor (400 sync_cursor_invalid: a rebuild with start=now; 400 invalid_cursor on task lists). Rotate by hand, planned with the integrators (docs/operations.md).",
      },
    ]);

    const integrations = new Map<EndpointGroup, HttpRouteIntegration>();
    const integrationOf = (group: EndpointGroup) => {
      let integration = integrations.get(group);
      if (!integration) {
        integration = new HttpLambdaIntegration(`${pascal(group)}Integration`, this.functions[group]);
        integrations.set(group, integration);
      }
      return integration;
    };

    // Unknown methods and paths reach the platform function, which answers route_not_found.
    const corsOrigins = props.corsOrigins?.filter((origin) => origin.trim() !== "") ?? [];
    this.api = new HttpApi(this, "HttpApi", {
      apiName: `${id}-api`,
      defaultIntegration: integrationOf("platform"),
      createDefaultStage: false,
      corsPreflight: corsOrigins.length
        ? {
            allowOrigins: [...corsOrigins],
            allowMethods: [...new Set(ROUTES.map((route) => route.method))].map((method) => CorsHttpMethod[method]),
            allowHeaders: CORS_REQUEST_HEADERS,
            exposeHeaders: CORS_EXPOSED_HEADERS,
            maxAge: Duration.hours(1),
          }
        : undefined,
    });
    for (const route of ROUTES) {
      this.api.addRoutes({ path: route.path, methods: [HttpMethod[route.method]], integration: integrationOf(route.group) });
    }
    NagSuppressions.addResourceSuppressions(
      this.api,
      [
        {
          id: "AwsSolutions-APIG4",
          reason:
            "API keys are validated in the function (lib/http/middlewares/authentication.ts), not by an API Gateway authorizer: keys are per user, their rate window is counted in the same read, and revocation takes effect on the next request (an authorizer would cache). The unmatched $default route and the OpenAPI document are public by design.",
        },
      ],
      true,
    );

    // The $default stage (same construct path as the one HttpApi would create), throttled and
    // access-logged. Nothing secret is logged: no headers, no query string, no body.
    const accessLogs = new LogGroup(this, "ApiAccessLogs", { retention, removalPolicy: logRemoval });
    new HttpStage(this.api, "DefaultStage", {
      httpApi: this.api,
      autoDeploy: true,
      throttle: { rateLimit: throttleRate.valueAsNumber, burstLimit: throttleBurst.valueAsNumber },
      accessLogSettings: {
        destination: new LogGroupLogDestination(accessLogs),
        format: AccessLogFormat.custom(
          JSON.stringify({
            requestId: "$context.requestId",
            routeKey: "$context.routeKey",
            status: "$context.status",
            latencyMs: "$context.responseLatency",
            ip: "$context.identity.sourceIp",
            integrationRequestId: "$context.integration.requestId",
            integrationStatus: "$context.integration.status",
            integrationLatencyMs: "$context.integration.latency",
            integrationError: "$context.integrationErrorMessage",
            error: "$context.error.message",
            requestTime: "$context.requestTimeEpoch",
            responseLength: "$context.responseLength",
          }),
        ),
      },
    });

    // The stream processor. A batch that still fails after the bounded retries (bisected on
    // each function error, which does not use up retries) is described in the failure queue
    // (shard and sequence range), never dropped silently: docs/operations.md replays it.
    this.streamFailureQueue = new Queue(this, "StreamFailureQueue", {
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: Duration.days(14),
    });
    NagSuppressions.addResourceSuppressions(this.streamFailureQueue, [
      {
        id: "AwsSolutions-SQS3",
        reason:
          "This queue is itself the dead-letter destination of the stream processor's event source mapping; its messages are read by an operator (docs/operations.md), never consumed by a function that could fail them again.",
      },
    ]);

    this.streamProcessor = makeFunction("StreamProcessorFunction", "stream-processor", 512, Duration.minutes(1), STREAM_PROCESSOR_ACCESS);
    reserve(this.streamProcessor, streamConcurrency);
    // The mapping is built here rather than by DynamoEventSource, whose stream must come from one
    // table: this one reads the stream of the table in use. Same construct id as
    // DynamoEventSource gave it, so the deployed mapping (and its position in the stream) stays.
    this.streamProcessor.addEventSourceMapping(`DynamoDBEventSource:${Names.nodeUniqueId(this.ownTable.node)}`, {
      eventSourceArn: this.table.tableStreamArn!,
      startingPosition: StartingPosition.TRIM_HORIZON,
      batchSize: STREAM_BATCH_SIZE,
      maxBatchingWindow: STREAM_BATCHING_WINDOW,
      bisectBatchOnError: true,
      retryAttempts: STREAM_RETRY_ATTEMPTS,
      maxRecordAge: STREAM_MAX_RECORD_AGE,
      onFailure: new SqsDlq(this.streamFailureQueue),
      reportBatchItemFailures: true,
      // Request removals (not TTL expiries), and changes unless they are high-churn platform
      // records (lib/sync/stream-filter.ts says why).
      filters: STREAM_FILTER_PATTERNS.map((pattern) => FilterCriteria.filter(pattern)),
    });
    // What DynamoEventSource granted: ListStreams (Resource *) and the stream's read actions on
    // that stream only.
    this.table.grantStreamRead(this.streamProcessor);
    // Every minute the same function releases stock holds whose writer died before binding
    // them (lib/domain/inventory/stock-holds.ts): a hold's lease outlives any request.
    new Rule(this, "HoldSweepSchedule", {
      description: "Releases expired stock holds (stream processor, scheduled invocation).",
      schedule: Schedule.rate(Duration.minutes(1)),
      targets: [new LambdaFunction(this.streamProcessor, { retryAttempts: 2 })],
    });
    NagSuppressions.addResourceSuppressions(
      this.streamProcessor.role!,
      [
        {
          id: "AwsSolutions-IAM5",
          appliesTo: ["Resource::*"],
          reason:
            "dynamodb:ListStreams has no resource-level permissions (AWS requires Resource *); the event source mapping's poller needs it to find the table's stream. Every other stream action is granted on the stream ARN only.",
        },
      ],
      true,
    );

    // Webhooks (docs/operations.md, "Webhook delivery failures"). The stream processor fans each new sync marker out
    // to the matching endpoints as messages on WebhookQueue (and API routes flagged
    // `enqueuesWebhooks` put test messages there); the delivery function sends them. It
    // schedules a retry by changing the visibility timeout of the message it received (at most
    // 10 hours) and reporting it failed, and moves a message whose 8 attempts all failed to
    // WebhookFailedQueue itself. The redrive policy is the backstop for a message the function
    // never settled (its invocations failed as a whole on it, again and again).
    this.webhookFailedQueue = new Queue(this, "WebhookFailedQueue", {
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      // A moved message keeps its first enqueue time: longer than WebhookQueue's 4 days, so
      // that a message moved late still stays here for 10 days or more.
      retentionPeriod: Duration.days(14),
    });
    this.webhookQueue = new Queue(this, "WebhookQueue", {
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      // The whole retry schedule takes about 27.6 hours.
      retentionPeriod: Duration.days(4),
      // Lambda's advice for an SQS event source (6 times the function's timeout): a batch whose
      // invocation is retried after a throttle or timeout is not received twice meanwhile.
      visibilityTimeout: Duration.seconds(6 * WEBHOOK_DELIVERY_TIMEOUT.toSeconds()),
      deadLetterQueue: { queue: this.webhookFailedQueue, maxReceiveCount: WEBHOOK_MAX_RECEIVE_COUNT },
    });
    // Outbound HTTPS to the endpoints on the internet: no VPC.
    this.webhookDelivery = makeFunction("WebhookDeliveryFunction", "webhook-delivery", 512, WEBHOOK_DELIVERY_TIMEOUT, WEBHOOK_DELIVERY_ACCESS);
    this.webhookDelivery.addEnvironment("WEBHOOK_QUEUE_URL", this.webhookQueue.queueUrl);
    this.webhookDelivery.addEnvironment("WEBHOOK_FAILED_QUEUE_URL", this.webhookFailedQueue.queueUrl);
    // The event source grants what Lambda's poller and the function need on WebhookQueue:
    // ReceiveMessage, DeleteMessage, GetQueueAttributes, GetQueueUrl and ChangeMessageVisibility
    // (the function's retry scheduling).
    this.webhookDelivery.addEventSource(
      new SqsEventSource(this.webhookQueue, {
        batchSize: WEBHOOK_DELIVERY_BATCH_SIZE,
        reportBatchItemFailures: true,
        maxConcurrency: WEBHOOK_DELIVERY_MAX_CONCURRENCY,
      }),
    );
    this.webhookDelivery.addToRolePolicy(new PolicyStatement({ actions: ["sqs:SendMessage"], resources: [this.webhookFailedQueue.queueArn] }));
    // Who enqueues: the stream processor (the fan-out) and every API function with a route
    // flagged `enqueuesWebhooks` in the route table. SendMessage only (it also authorises
    // SendMessageBatch).
    const enqueuers = [
      this.streamProcessor,
      ...ENDPOINT_GROUPS.filter((group) => enqueuesWebhooks(routesOfGroup(group))).map((group) => this.functions[group]),
    ];
    for (const fn of enqueuers) {
      fn.addEnvironment("WEBHOOK_QUEUE_URL", this.webhookQueue.queueUrl);
      fn.addToRolePolicy(new PolicyStatement({ actions: ["sqs:SendMessage"], resources: [this.webhookQueue.queueArn] }));
    }

    // Alarms: every one notifies the topic (alarm and OK), except the members of the composite
    // ApiUnhealthyAlarm, which notifies for them; an email subscription only when AlarmEmail is set.
    // Not KMS-encrypted: notifications carry alarm names and states only, and CloudWatch cannot
    // publish to a topic under the AWS-managed SNS key.
    this.alarmTopic = new Topic(this, "AlarmTopic", { displayName: `${id} alarms`, enforceSSL: true });
    // enforceSSL gives the topic a policy of its own, which replaces SNS's default one: without
    // this statement nothing allows CloudWatch to publish, and every alarm would reach no one.
    this.alarmTopic.addToResourcePolicy(
      new PolicyStatement({
        sid: "AllowCloudWatchAlarmsOfThisAccount",
        principals: [new ServicePrincipal("cloudwatch.amazonaws.com")],
        actions: ["sns:Publish"],
        resources: [this.alarmTopic.topicArn],
        conditions: { StringEquals: { "aws:SourceAccount": this.account } },
      }),
    );
    const hasEmail = new CfnCondition(this, "HasAlarmEmail", { expression: Fn.conditionNot(Fn.conditionEquals(alarmEmail.valueAsString, "")) });
    const subscription = new Subscription(this, "AlarmEmailSubscription", {
      topic: this.alarmTopic,
      protocol: SubscriptionProtocol.EMAIL,
      endpoint: alarmEmail.valueAsString,
    });
    (subscription.node.defaultChild as CfnSubscription).cfnOptions.condition = hasEmail;

    this.addAlarms(alarmThresholds);

    // One dashboard over all of the above (infra/dashboard.ts; docs/operations.md explains it).
    this.dashboard = new OperationsDashboard(this, "Dashboard", {
      api: this.api,
      functions: this.functions,
      table: this.table,
      tableOperations: TABLE_OPERATIONS,
      streamProcessor: this.streamProcessor,
      streamFailureQueue: this.streamFailureQueue,
      webhookDelivery: this.webhookDelivery,
      webhookQueue: this.webhookQueue,
      webhookFailedQueue: this.webhookFailedQueue,
      thresholds: { iteratorAge: STREAM_ITERATOR_AGE_ALARM, webhookQueueAge: WEBHOOK_QUEUE_AGE_ALARM, streamFailureQueueAge: STREAM_FAILURE_QUEUE_AGE_ALARM },
    });

    NagSuppressions.addStackSuppressions(this, [
      {
        id: "AwsSolutions-L1",
        reason:
          "Functions run nodejs22.x on purpose: CI (.ci/run) runs the whole suite, bundles included, and the synth on Node 22, installed by scripts/ci/lambda-node.sh when the machine has another version, so the runtime is the one tested; a runtime upgrade is a deliberate, tested change.",
      },
    ]);

    new CfnOutput(this, "ApiUrl", { value: `${this.api.apiEndpoint}/api/v3` });
    new CfnOutput(this, "TableName", { value: this.table.tableName });
    new CfnOutput(this, "AlarmTopicArn", { value: this.alarmTopic.topicArn });
    new CfnOutput(this, "StreamFailureQueueUrl", { value: this.streamFailureQueue.queueUrl });
    new CfnOutput(this, "StreamProcessorFunctionName", { value: this.streamProcessor.functionName });
    new CfnOutput(this, "TableStreamArn", { value: this.table.tableStreamArn! });
    new CfnOutput(this, "WebhookQueueUrl", { value: this.webhookQueue.queueUrl });
    new CfnOutput(this, "WebhookFailedQueueUrl", { value: this.webhookFailedQueue.queueUrl });
    new CfnOutput(this, "WebhookDeliveryFunctionName", { value: this.webhookDelivery.functionName });
    new CfnOutput(this, "DashboardName", { value: this.dashboard.dashboard.dashboardName });
    new CfnOutput(this, "DashboardUrl", { value: this.dashboard.url });
    new CfnOutput(this, "CursorSecretArn", { value: cursorSecret.secretArn });
    // The functions to refresh after rotating the secret (docs/operations.md, "Sync cursor secret").
    new CfnOutput(this, "CursorSecretReaderFunctions", {
      value: Fn.join(
        ",",
        CURSOR_SECRET_READERS.map((group) => this.functions[group].functionName),
      ),
    });
  }

  private addAlarms(thresholds: { apiErrorRate: CfnParameter; api5xxRate: CfnParameter; api4xxRate: CfnParameter; apiLatencyP99: CfnParameter }): void {
    const action = new SnsAction(this.alarmTopic);
    interface AlarmOptions {
      evaluationPeriods?: number;
      datapointsToAlarm?: number;
      comparisonOperator?: ComparisonOperator;
      /** false: a member of ApiUnhealthyAlarm, without actions of its own (the composite pages). */
      notifies?: boolean;
    }
    const alarm = (id: string, description: string, metric: IMetric, threshold: number, options: AlarmOptions = {}) => {
      const created = new Alarm(this, id, {
        alarmDescription: description,
        metric,
        threshold,
        evaluationPeriods: options.evaluationPeriods ?? 1,
        datapointsToAlarm: options.datapointsToAlarm,
        comparisonOperator: options.comparisonOperator ?? ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        treatMissingData: TreatMissingData.NOT_BREACHING,
      });
      if (options.notifies ?? true) {
        created.addAlarmAction(action);
        created.addOkAction(action);
      }
      return created;
    };
    const period = Duration.minutes(5);
    /** `part` per `total` in percent, 0 in a period with fewer than ALARM_MIN_REQUESTS of `total`. */
    const rate = (label: string, part: IMetric, total: IMetric) =>
      new MathExpression({
        label,
        expression: `IF(total >= ${ALARM_MIN_REQUESTS}, 100 * FILL(part, 0) / total, 0)`,
        usingMetrics: { part, total },
        period,
      });
    const percent = (parameter: CfnParameter) => parameter.valueAsNumber;

    // ApiUnhealthyAlarm's members: no actions of their own.
    const members: Alarm[] = [];
    for (const [group, fn] of Object.entries(this.functions)) {
      members.push(
        alarm(
          `${pascal(group)}ErrorRateAlarm`,
          `More than ApiErrorRatePercent of the ${group} function's invocations failed in 5 minutes (at least ${ALARM_MIN_REQUESTS} invocations). Member of ApiUnhealthyAlarm.`,
          rate(`${group} error rate (%)`, fn.metricErrors({ period, statistic: "Sum" }), fn.metricInvocations({ period, statistic: "Sum" })),
          percent(thresholds.apiErrorRate),
          { comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD, notifies: false },
        ),
      );
      alarm(
        `${pascal(group)}ThrottlesAlarm`,
        `The ${group} function was throttled: its reserved concurrency (ApiReservedConcurrency) is exhausted.`,
        fn.metricThrottles({ period, statistic: "Sum" }),
        1,
      );
    }
    const requests = this.api.metricCount({ period, statistic: "Sum" });
    members.push(
      alarm(
        "Api5xxRateAlarm",
        `More than Api5xxRatePercent of the API's answers were 5xx in 5 minutes (at least ${ALARM_MIN_REQUESTS} requests). Member of ApiUnhealthyAlarm.`,
        rate("5xx rate (%)", this.api.metricServerError({ period, statistic: "Sum" }), requests),
        percent(thresholds.api5xxRate),
        { comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD, notifies: false },
      ),
      alarm(
        "ApiLatencyP99Alarm",
        "The API's p99 latency was above ApiLatencyP99Ms in 3 of the last 5 periods of 5 minutes. Member of ApiUnhealthyAlarm.",
        this.api.metricLatency({ period, statistic: "p99" }),
        thresholds.apiLatencyP99.valueAsNumber,
        { ...LATENCY_ALARM_PERIODS, comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD, notifies: false },
      ),
    );
    const unhealthy = new CompositeAlarm(this, "ApiUnhealthyAlarm", {
      alarmDescription:
        "The API is unhealthy: an API function's error rate, the API's 5xx rate or its p99 latency is above its threshold (see the member alarm in ALARM). The only API alarm that pages for these.",
      alarmRule: AlarmRule.anyOf(...members.map((member) => AlarmRule.fromAlarm(member, AlarmState.ALARM))),
    });
    unhealthy.addAlarmAction(action);
    unhealthy.addOkAction(action);

    // 429s (stage throttling, per-key rate limit) are inside 4xx: HTTP APIs publish no metric per status.
    alarm(
      "Api4xxRateAlarm",
      `More than Api4xxRatePercent of the API's answers were 4xx (429s included) in 5 minutes (at least ${ALARM_MIN_REQUESTS} requests): a client storm or a broken integration.`,
      rate("4xx rate (%)", this.api.metricClientError({ period, statistic: "Sum" }), requests),
      percent(thresholds.api4xxRate),
      { comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD },
    );

    const processor = this.streamProcessor;
    alarm("StreamProcessorErrorsAlarm", "The stream processor failed a batch.", processor.metricErrors({ period, statistic: "Sum" }), 1);
    alarm(
      "StreamIteratorAgeAlarm",
      "Sync markers lag the table by more than a minute (stream processor iterator age, 3 minutes in a row).",
      new Metric({
        namespace: "AWS/Lambda",
        metricName: "IteratorAge",
        dimensionsMap: { FunctionName: processor.functionName },
        statistic: "Maximum",
        period: Duration.minutes(1),
      }),
      STREAM_ITERATOR_AGE_ALARM.toMilliseconds(),
      { evaluationPeriods: 3 },
    );
    alarm(
      "StreamFailureQueueAlarm",
      "A stream batch was given up and described in the failure queue: replay it within the stream's 24 hours (docs/operations.md).",
      this.streamFailureQueue.metricApproximateNumberOfMessagesVisible({ period: Duration.minutes(1), statistic: "Maximum" }),
      1,
    );
    alarm(
      "StreamFailureQueueAgeAlarm",
      `A failed stream batch has been in the failure queue for ${STREAM_FAILURE_QUEUE_AGE_ALARM.toHours()} hour or more: its records leave the stream 24 hours after they were written, held by an operator or not. Replay it (docs/operations.md).`,
      this.streamFailureQueue.metricApproximateAgeOfOldestMessage({ period, statistic: "Maximum" }),
      STREAM_FAILURE_QUEUE_AGE_ALARM.toSeconds(),
    );
    alarm(
      "StreamFailureDeliveryAlarm",
      "Lambda could not write a failed stream batch to the failure queue.",
      new Metric({
        namespace: "AWS/Lambda",
        metricName: "DestinationDeliveryFailures",
        dimensionsMap: { FunctionName: processor.functionName },
        statistic: "Sum",
        period,
      }),
      1,
    );
    alarm(
      "WebhookDeliveryErrorsAlarm",
      "The webhook delivery function failed an invocation: its batch returns to the queue after the visibility timeout.",
      this.webhookDelivery.metricErrors({ period, statistic: "Sum" }),
      1,
    );
    alarm(
      "WebhookFailedQueueAlarm",
      "A webhook message failed all 8 attempts or its delivery function failed repeatedly: it is in WebhookFailedQueue (docs/operations.md).",
      this.webhookFailedQueue.metricApproximateNumberOfMessagesVisible({ period: Duration.minutes(1), statistic: "Maximum" }),
      1,
    );
    alarm(
      "WebhookQueueAgeAlarm",
      `A webhook message received fewer than three times has waited ${WEBHOOK_QUEUE_AGE_ALARM.toHours()} hours or more in WebhookQueue: deliveries have stalled or fallen far behind.`,
      this.webhookQueue.metricApproximateAgeOfOldestMessage({ period, statistic: "Maximum" }),
      WEBHOOK_QUEUE_AGE_ALARM.toSeconds(),
    );
    alarm("ThrottleAlarm", "DynamoDB throttled requests.", this.table.metricThrottledRequestsForOperations({ operations: TABLE_OPERATIONS, period }), 1);
  }
}

function pascal(name: string): string {
  return name.replace(/(^|-)(\w)/g, (_m, _d, c: string) => c.toUpperCase());
}
