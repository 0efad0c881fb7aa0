import { App } from "aws-cdk-lib";
import { InventoryApiStack } from "./stack.js";

/**
 * The CDK app. Context: `stackName` (default InventoryApi), `deletionProtection` (default
 * true; `-c deletionProtection=false` for throwaway stages).
 */
const app = new App();
const stackName = (app.node.tryGetContext("stackName") as string | undefined) ?? "InventoryApi";
const protection = app.node.tryGetContext("deletionProtection");
new InventoryApiStack(app, stackName, {
  deletionProtection: protection === undefined ? true : String(protection) !== "false",
  env: { account: process.env.CDK_DEFAULT_ACCOUNT, region: process.env.CDK_DEFAULT_REGION },
});
app.synth();
