import { Aws, Duration, Stack } from "aws-cdk-lib";
import type { HttpApi } from "aws-cdk-lib/aws-apigatewayv2";
import { Dashboard, GraphWidget, type GraphWidgetProps, type IMetric, type IWidget, Stats, TextWidget } from "aws-cdk-lib/aws-cloudwatch";
import type { ITable, Operation } from "aws-cdk-lib/aws-dynamodb";
import type { IFunction } from "aws-cdk-lib/aws-lambda";
import type { Queue } from "aws-cdk-lib/aws-sqs";
import { Construct } from "constructs";

export interface OperationsDashboardProps {
  readonly api: HttpApi;
  /** The API functions, one per endpoint group, labelled by their group name. */
  readonly functions: Readonly<Record<string, IFunction>>;
  /** The table in use (the stack's own or an existing one: its name may be an Fn::If). */
  readonly table: ITable;
  /** The table operations the functions use (ThrottledRequests and SystemErrors are per operation). */
  readonly tableOperations: readonly Operation[];
  readonly streamProcessor: IFunction;
  readonly streamFailureQueue: Queue;
  readonly webhookDelivery: IFunction;
  readonly webhookQueue: Queue;
  readonly webhookFailedQueue: Queue;
  /** Alarm thresholds drawn as lines on the matching graphs. */
  readonly thresholds: { readonly iteratorAge: Duration; readonly webhookQueueAge: Duration; readonly streamFailureQueueAge: Duration };
}

/** Counters and queue depths: one point a minute. */
const MINUTE = Duration.minutes(1);
/** Lambda and API rates and percentiles: five minutes smooths out single requests. */
const FIVE_MINUTES = Duration.minutes(5);
const HEIGHT = 6;

/**
 * One CloudWatch dashboard for the whole stack, named `<stack name>-<region>` (dashboard names
 * are unique per account, not per region). Five rows, each under a text header: the API, the
 * API functions (one line per endpoint group), the table, the stream processor with its failure
 * queue, and the webhooks. docs/operations.md says what each row shows and what to look at first.
 */
export class OperationsDashboard extends Construct {
  readonly dashboard: Dashboard;

  constructor(scope: Construct, id: string, props: OperationsDashboardProps) {
    super(scope, id);
    this.dashboard = new Dashboard(this, "Resource", {
      dashboardName: `${Stack.of(this).stackName}-${Aws.REGION}`,
      defaultInterval: Duration.hours(3),
    });
    const graph = (title: string, width: number, left: IMetric[], extra: Partial<GraphWidgetProps> = {}) =>
      new GraphWidget({ title, width, height: HEIGHT, left, ...extra });
    const row = (header: string, ...widgets: IWidget[]) =>
      this.dashboard.addWidgets(new TextWidget({ markdown: `## ${header}`, width: 24, height: 1 }), ...widgets);

    // 1. The API as clients see it (API Gateway's own metrics, every route together).
    const api = props.api;
    row(
      "API (HTTP API, all routes)",
      graph("Requests", 8, [api.metricCount({ period: MINUTE, statistic: Stats.SUM, label: "requests" })]),
      graph("4xx and 5xx answers", 8, [
        api.metricClientError({ period: MINUTE, statistic: Stats.SUM, label: "4xx" }),
        api.metricServerError({ period: MINUTE, statistic: Stats.SUM, label: "5xx" }),
      ]),
      graph("Latency (ms)", 8, [
        api.metricLatency({ period: FIVE_MINUTES, statistic: Stats.p(50), label: "p50" }),
        api.metricLatency({ period: FIVE_MINUTES, statistic: Stats.p(99), label: "p99" }),
        api.metricIntegrationLatency({ period: FIVE_MINUTES, statistic: Stats.p(99), label: "integration p99" }),
      ]),
    );

    // 2. The API functions: one graph per metric, one line per endpoint group.
    const groups = Object.entries(props.functions);
    const perGroup = (metric: (fn: IFunction, label: string) => IMetric) => groups.map(([group, fn]) => metric(fn, group));
    row(
      "API functions (one line per endpoint group)",
      graph(
        "Invocations",
        6,
        perGroup((fn, label) => fn.metricInvocations({ period: FIVE_MINUTES, statistic: Stats.SUM, label })),
      ),
      graph(
        "Errors",
        6,
        perGroup((fn, label) => fn.metricErrors({ period: FIVE_MINUTES, statistic: Stats.SUM, label })),
      ),
      graph(
        "Duration p99 (ms)",
        6,
        perGroup((fn, label) => fn.metricDuration({ period: FIVE_MINUTES, statistic: Stats.p(99), label })),
      ),
      graph(
        "Throttles (reserved concurrency exhausted)",
        6,
        perGroup((fn, label) => fn.metricThrottles({ period: FIVE_MINUTES, statistic: Stats.SUM, label })),
      ),
    );

    // 3. The table (on demand: consumed units are what is billed; throttles mean a hot key or a
    // sudden jump above the table's previous peak).
    const table = props.table;
    const operations = [...props.tableOperations];
    row(
      "DynamoDB table",
      graph("Consumed capacity units (per minute)", 8, [
        table.metricConsumedReadCapacityUnits({ period: MINUTE, statistic: Stats.SUM, label: "read units" }),
        table.metricConsumedWriteCapacityUnits({ period: MINUTE, statistic: Stats.SUM, label: "write units" }),
      ]),
      graph("Throttled requests", 8, [
        table.metricThrottledRequestsForOperations({ operations, period: MINUTE }),
        table.metric("ReadThrottleEvents", { period: MINUTE, statistic: Stats.SUM, label: "read throttle events" }),
        table.metric("WriteThrottleEvents", { period: MINUTE, statistic: Stats.SUM, label: "write throttle events" }),
      ]),
      graph("System errors (DynamoDB's side: HTTP 500)", 8, [table.metricSystemErrorsForOperations({ operations, period: MINUTE })]),
    );

    // 4. The stream processor (change feed: sync markers, stock journals, webhook fan-out).
    const processor = props.streamProcessor;
    row(
      "Stream processor (table stream to sync markers and webhook fan-out)",
      graph("Iterator age, max (ms)", 6, [processor.metric("IteratorAge", { period: MINUTE, statistic: Stats.MAXIMUM, label: "iterator age" })], {
        leftAnnotations: [{ value: props.thresholds.iteratorAge.toMilliseconds(), label: "StreamIteratorAgeAlarm" }],
      }),
      graph("Invocations and errors (stream batches and the hold sweep)", 6, [
        processor.metricInvocations({ period: FIVE_MINUTES, statistic: Stats.SUM, label: "invocations" }),
        processor.metricErrors({ period: FIVE_MINUTES, statistic: Stats.SUM, label: "errors" }),
      ]),
      graph("Failure queue: batches given up", 6, [
        props.streamFailureQueue.metricApproximateNumberOfMessagesVisible({ period: MINUTE, statistic: Stats.MAXIMUM, label: "messages" }),
      ]),
      graph(
        "Failure queue: age of oldest message (s)",
        6,
        [props.streamFailureQueue.metricApproximateAgeOfOldestMessage({ period: MINUTE, statistic: Stats.MAXIMUM, label: "oldest message" })],
        { leftAnnotations: [{ value: props.thresholds.streamFailureQueueAge.toSeconds(), label: "StreamFailureQueueAgeAlarm" }] },
      ),
    );

    // 5. Webhooks: the delivery function, the queue it consumes and the failed queue.
    const delivery = props.webhookDelivery;
    row(
      "Webhooks",
      graph("Delivery function: invocations and errors", 6, [
        delivery.metricInvocations({ period: FIVE_MINUTES, statistic: Stats.SUM, label: "invocations" }),
        delivery.metricErrors({ period: FIVE_MINUTES, statistic: Stats.SUM, label: "errors" }),
      ]),
      graph("Delivery function: duration (ms)", 6, [
        delivery.metricDuration({ period: FIVE_MINUTES, statistic: Stats.p(50), label: "p50" }),
        delivery.metricDuration({ period: FIVE_MINUTES, statistic: Stats.p(99), label: "p99" }),
      ]),
      graph("WebhookQueue: waiting and in flight", 4, [
        props.webhookQueue.metricApproximateNumberOfMessagesVisible({ period: MINUTE, statistic: Stats.MAXIMUM, label: "visible (due now)" }),
        props.webhookQueue.metricApproximateNumberOfMessagesNotVisible({ period: MINUTE, statistic: Stats.MAXIMUM, label: "in flight or waiting for a retry" }),
      ]),
      graph(
        "WebhookQueue: age of oldest message (s)",
        4,
        [props.webhookQueue.metricApproximateAgeOfOldestMessage({ period: MINUTE, statistic: Stats.MAXIMUM, label: "oldest message" })],
        { leftAnnotations: [{ value: props.thresholds.webhookQueueAge.toSeconds(), label: "WebhookQueueAgeAlarm" }] },
      ),
      graph("WebhookFailedQueue: failed messages", 4, [
        props.webhookFailedQueue.metricApproximateNumberOfMessagesVisible({ period: MINUTE, statistic: Stats.MAXIMUM, label: "messages" }),
      ]),
    );
  }

  /** The dashboard's address in the CloudWatch console. */
  get url(): string {
    return `https://${Aws.REGION}.console.aws.amazon.com/cloudwatch/home?region=${Aws.REGION}#dashboards:name=${this.dashboard.dashboardName}`;
  }
}
