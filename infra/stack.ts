import { CfnOutput, CfnParameter, Duration, RemovalPolicy, Stack, type StackProps } from "aws-cdk-lib";
import { HttpApi, HttpMethod, type HttpRouteIntegration } from "aws-cdk-lib/aws-apigatewayv2";
import { HttpLambdaIntegration } from "aws-cdk-lib/aws-apigatewayv2-integrations";
import { Alarm, ComparisonOperator, TreatMissingData, type IMetric } from "aws-cdk-lib/aws-cloudwatch";
import { AttributeType, BillingMode, Operation, StreamViewType, Table } from "aws-cdk-lib/aws-dynamodb";
import { PolicyStatement } from "aws-cdk-lib/aws-iam";
import { Secret } from "aws-cdk-lib/aws-secretsmanager";
import { Architecture, FilterCriteria, Runtime, StartingPosition, type IFunction } from "aws-cdk-lib/aws-lambda";
import { DynamoEventSource } from "aws-cdk-lib/aws-lambda-event-sources";
import { LoggingFormat } from "aws-cdk-lib/aws-lambda";
import { NodejsFunction, OutputFormat } from "aws-cdk-lib/aws-lambda-nodejs";
import type { Construct } from "constructs";
import { fileURLToPath } from "node:url";
import { dirname, join } from "node:path";
import { ENDPOINT_GROUPS, ROUTES, type EndpointGroup } from "../lib/routes/index.js";
import { GLOBAL_INDEXES, TABLE_KEYS } from "../lib/db/table.js";
import { ENTITY_ATTRIBUTE, PLATFORM_ENTITIES } from "../lib/sync/classify.js";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");

export interface InventoryApiStackProps extends StackProps {
  /** Protect the table from deletion (default true; turn off for throwaway stages). */
  deletionProtection?: boolean;
}

/** Actions an API function needs on the table and its indexes (no Scan, no table admin). */
const API_TABLE_ACTIONS = [
  "dynamodb:GetItem",
  "dynamodb:BatchGetItem",
  "dynamodb:Query",
  "dynamodb:PutItem",
  "dynamodb:UpdateItem",
  "dynamodb:DeleteItem",
  "dynamodb:ConditionCheckItem",
];

/** Groups that serve public documents only and never touch the table. */
const GROUPS_WITHOUT_TABLE: readonly EndpointGroup[] = ["platform"];

/**
 * The whole service: one table, one HTTP API whose routes come from the route table, one
 * Lambda per endpoint group, the stream processor, and alarms.
 */
export class InventoryApiStack extends Stack {
  readonly table: Table;
  readonly api: HttpApi;
  readonly functions: Record<EndpointGroup, NodejsFunction>;

  constructor(scope: Construct, id: string, props: InventoryApiStackProps = {}) {
    super(scope, id, props);

    const rateLimit = new CfnParameter(this, "RateLimitPerMinute", {
      type: "Number",
      default: 120,
      minValue: 1,
      description: "Requests allowed per API key per minute.",
    });

    this.table = new Table(this, "Table", {
      partitionKey: { name: TABLE_KEYS.partitionKey, type: AttributeType.STRING },
      sortKey: { name: TABLE_KEYS.sortKey, type: AttributeType.STRING },
      billingMode: BillingMode.PAY_PER_REQUEST,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      stream: StreamViewType.NEW_AND_OLD_IMAGES,
      timeToLiveAttribute: TABLE_KEYS.timeToLiveAttribute,
      deletionProtection: props.deletionProtection ?? true,
      removalPolicy: props.deletionProtection === false ? RemovalPolicy.DESTROY : RemovalPolicy.RETAIN,
    });
    for (const index of GLOBAL_INDEXES) {
      this.table.addGlobalSecondaryIndex({
        indexName: index.indexName,
        partitionKey: { name: index.partitionKey, type: AttributeType.STRING },
        sortKey: { name: index.sortKey, type: AttributeType.STRING },
      });
    }

    const environment = {
      TABLE_NAME: this.table.tableName,
      RATE_LIMIT_PER_MINUTE: rateLimit.valueAsString,
      LOG_LEVEL: "INFO",
      NODE_OPTIONS: "--enable-source-maps",
    };

    const makeFunction = (name: string, entry: string, memorySize: number, timeout: Duration): NodejsFunction =>
      new NodejsFunction(this, name, {
        entry: join(root, entry),
        handler: "handler",
        projectRoot: root,
        depsLockFilePath: join(root, "package-lock.json"),
        runtime: Runtime.NODEJS_22_X,
        architecture: Architecture.ARM_64,
        memorySize,
        timeout,
        environment,
        loggingFormat: LoggingFormat.JSON,
        bundling: {
          format: OutputFormat.ESM,
          target: "node22",
          minify: true,
          sourceMap: true,
          forceDockerBundling: false,
          // ElectroDB is CommonJS: give the ESM bundle a require().
          banner: "import{createRequire}from'module';const require=createRequire(import.meta.url);",
          mainFields: ["module", "main"],
          // Bundle the AWS SDK too: one self-contained file imports about 3x faster than
          // resolving the runtime's SDK, and pins the SDK version we test against.
          externalModules: [],
        },
      });

    const tablePolicy = new PolicyStatement({
      actions: API_TABLE_ACTIONS,
      resources: [this.table.tableArn, `${this.table.tableArn}/index/*`],
    });

    this.functions = {} as Record<EndpointGroup, NodejsFunction>;
    for (const group of ENDPOINT_GROUPS) {
      const fn = makeFunction(`${pascal(group)}Function`, `functions/${group}/handler.ts`, 1024, Duration.seconds(29));
      if (!GROUPS_WITHOUT_TABLE.includes(group)) fn.addToRolePolicy(tablePolicy);
      this.functions[group] = fn;
    }

    // Sync cursors are HMAC-signed with a generated secret, resolved into the sync function's
    // environment at deploy time (a CloudFormation dynamic reference: not in the template).
    const cursorSecret = new Secret(this, "SyncCursorSecret", {
      description: "HMAC key that signs sync cursors",
      generateSecretString: { passwordLength: 48, excludePunctuation: true },
    });
    this.functions.sync.addEnvironment("SYNC_CURSOR_SECRET", cursorSecret.secretValue.unsafeUnwrap());

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
    this.api = new HttpApi(this, "HttpApi", {
      apiName: `${id}-api`,
      defaultIntegration: integrationOf("platform"),
      createDefaultStage: true,
    });
    for (const route of ROUTES) {
      this.api.addRoutes({ path: route.path, methods: [HttpMethod[route.method]], integration: integrationOf(route.group) });
    }

    const streamProcessor = makeFunction("StreamProcessorFunction", "functions/stream-processor/handler.ts", 512, Duration.minutes(1));
    // It finishes interrupted stock journals, which reads and writes stock like the API does.
    streamProcessor.addToRolePolicy(tablePolicy);
    streamProcessor.addEventSource(
      new DynamoEventSource(this.table, {
        startingPosition: StartingPosition.TRIM_HORIZON,
        batchSize: 100,
        bisectBatchOnError: true,
        retryAttempts: 10,
        reportBatchItemFailures: true,
        filters: [
          // Removals always; other changes unless they are high-churn platform records.
          FilterCriteria.filter({ eventName: ["REMOVE"] }),
          FilterCriteria.filter({
            eventName: ["INSERT", "MODIFY"],
            dynamodb: { NewImage: { [ENTITY_ATTRIBUTE]: { S: [{ "anything-but": [...PLATFORM_ENTITIES] }] } } },
          }),
        ],
      }),
    );

    this.addAlarms(streamProcessor);

    new CfnOutput(this, "ApiUrl", { value: `${this.api.apiEndpoint}/api/v3` });
    new CfnOutput(this, "TableName", { value: this.table.tableName });
  }

  private addAlarms(streamProcessor: IFunction): void {
    const alarm = (id: string, description: string, metric: IMetric, threshold: number) =>
      new Alarm(this, id, {
        alarmDescription: description,
        metric,
        threshold,
        evaluationPeriods: 1,
        comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        treatMissingData: TreatMissingData.NOT_BREACHING,
      });
    const period = Duration.minutes(5);
    alarm("Api5xxAlarm", "The API answered with 5xx errors.", this.api.metricServerError({ period, statistic: "Sum" }), 5);
    for (const [group, fn] of Object.entries(this.functions)) {
      alarm(`${pascal(group)}ErrorsAlarm`, `The ${group} function failed.`, fn.metricErrors({ period, statistic: "Sum" }), 1);
    }
    alarm("StreamProcessorErrorsAlarm", "The stream processor failed a batch.", streamProcessor.metricErrors({ period, statistic: "Sum" }), 1);
    const operations = [
      Operation.GET_ITEM,
      Operation.QUERY,
      Operation.PUT_ITEM,
      Operation.UPDATE_ITEM,
      Operation.DELETE_ITEM,
      Operation.TRANSACT_WRITE_ITEMS,
      Operation.BATCH_GET_ITEM,
    ];
    alarm("ThrottleAlarm", "DynamoDB throttled requests.", this.table.metricThrottledRequestsForOperations({ operations, period }), 1);
  }
}

function pascal(name: string): string {
  return name.replace(/(^|-)(\w)/g, (_m, _d, c: string) => c.toUpperCase());
}

