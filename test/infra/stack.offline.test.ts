import { App } from "aws-cdk-lib";
import { Match, Template } from "aws-cdk-lib/assertions";
import { beforeAll, describe, expect, it } from "vitest";
import { InventoryApiStack } from "../../infra/stack.js";
import { ENDPOINT_GROUPS, ROUTES, routeKey } from "../../lib/routes/index.js";
import { GLOBAL_INDEXES } from "../../lib/db/table.js";

/** The synthesized template (bundling skipped here; `npm run synth` bundles for real). */
let template: Template;

beforeAll(() => {
  const app = new App({ context: { "aws:cdk:bundling-stacks": [] } });
  const stack = new InventoryApiStack(app, "TestStack", { deletionProtection: true });
  template = Template.fromStack(stack);
});

describe("infrastructure", () => {
  it("has one on-demand table with PITR, a new-and-old-images stream, TTL and deletion protection", () => {
    template.resourceCountIs("AWS::DynamoDB::Table", 1);
    template.hasResourceProperties("AWS::DynamoDB::Table", {
      BillingMode: "PAY_PER_REQUEST",
      PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
      StreamSpecification: { StreamViewType: "NEW_AND_OLD_IMAGES" },
      TimeToLiveSpecification: { AttributeName: "expires_at", Enabled: true },
      DeletionProtectionEnabled: true,
      GlobalSecondaryIndexes: GLOBAL_INDEXES.map((index) => Match.objectLike({ IndexName: index.indexName })),
    });
  });

  it("turns deletion protection off only when asked", () => {
    const app = new App({ context: { "aws:cdk:bundling-stacks": [] } });
    const stack = new InventoryApiStack(app, "Throwaway", { deletionProtection: false });
    Template.fromStack(stack).hasResourceProperties("AWS::DynamoDB::Table", { DeletionProtectionEnabled: false });
  });

  it("creates an API Gateway route for every route of the route table, plus $default", () => {
    const routes = template.findResources("AWS::ApiGatewayV2::Route");
    const keys = Object.values(routes).map((r) => (r as { Properties: { RouteKey: string } }).Properties.RouteKey);
    for (const route of ROUTES) expect(keys).toContain(routeKey(route));
    expect(keys).toContain("$default");
    expect(keys).toHaveLength(ROUTES.length + 1);
  });

  it("deploys one Node 22 arm64 function per endpoint group plus the stream processor", () => {
    const functions = template.findResources("AWS::Lambda::Function", {
      Properties: { Runtime: "nodejs22.x", Architectures: ["arm64"] },
    });
    expect(Object.keys(functions)).toHaveLength(ENDPOINT_GROUPS.length + 1);
    template.hasResourceProperties("AWS::Lambda::Function", {
      Environment: { Variables: Match.objectLike({ TABLE_NAME: Match.anyValue(), RATE_LIMIT_PER_MINUTE: Match.anyValue() }) },
    });
  });

  it("wires the table stream to the stream processor with batch item failures and a platform-record filter", () => {
    template.hasResourceProperties("AWS::Lambda::EventSourceMapping", {
      EventSourceArn: { "Fn::GetAtt": [Match.stringLikeRegexp("Table"), "StreamArn"] },
      StartingPosition: "TRIM_HORIZON",
      FunctionResponseTypes: ["ReportBatchItemFailures"],
      FilterCriteria: { Filters: Match.arrayWith([Match.objectLike({ Pattern: Match.stringLikeRegexp("anything-but") })]) },
    });
  });

  it("grants API functions item-level table actions only (no Scan, no table administration)", () => {
    const policies = template.findResources("AWS::IAM::Policy");
    const actions = Object.values(policies).flatMap((policy) =>
      ((policy as { Properties: { PolicyDocument: { Statement: { Action: string | string[] }[] } } }).Properties.PolicyDocument.Statement).flatMap(
        (statement) => (Array.isArray(statement.Action) ? statement.Action : [statement.Action]),
      ),
    );
    expect(actions).toContain("dynamodb:ConditionCheckItem");
    expect(actions).not.toContain("dynamodb:Scan");
    expect(actions).not.toContain("dynamodb:DeleteTable");
    expect(actions.filter((a) => a === "dynamodb:*")).toHaveLength(0);
  });

  it("exposes the rate limit as a stack parameter defaulting to 120", () => {
    template.hasParameter("RateLimitPerMinute", { Type: "Number", Default: 120 });
  });
});
