import { App, Aspects } from "aws-cdk-lib";
import { AwsSolutionsChecks } from "cdk-nag";
import { InventoryApiStack } from "./stack.js";

/**
 * The CDK app. Context: `stackName` (default InventoryApi), `deletionProtection` (default
 * true; `-c deletionProtection=false` for throwaway stages), `corsOrigins` (comma-separated
 * browser origins allowed by CORS; default none). The cdk-nag AwsSolutions checks run on every
 * synth: an unsuppressed finding fails it.
 */
const app = new App();
const stackName = (app.node.tryGetContext("stackName") as string | undefined) ?? "InventoryApi";
const protection = app.node.tryGetContext("deletionProtection");
const cors = app.node.tryGetContext("corsOrigins") as string | string[] | undefined;
new InventoryApiStack(app, stackName, {
  deletionProtection: protection === undefined ? true : String(protection) !== "false",
  corsOrigins: Array.isArray(cors)
    ? cors
    : (cors ?? "")
        .split(",")
        .map((origin) => origin.trim())
        .filter(Boolean),
  env: { account: process.env.CDK_DEFAULT_ACCOUNT, region: process.env.CDK_DEFAULT_REGION },
});
Aspects.of(app).add(new AwsSolutionsChecks({ verbose: true }));
app.synth();
