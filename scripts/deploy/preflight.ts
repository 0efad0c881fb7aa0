/**
 * `npm run deploy` runs this before `cdk deploy`: without a region, credentials or the CDK
 * bootstrap, `cdk deploy` waits silently for minutes (SDK retries, the instance metadata
 * service) before failing. Each step here has a STEP_TIMEOUT_MS budget, one attempt, and ends
 * with one line on stderr and exit code 1 when it fails:
 *
 * 1. a region (the AWS SDK's own resolution: AWS_REGION, AWS_DEFAULT_REGION, the profile's);
 * 2. credentials (the SDK's default chain: environment, AWS_PROFILE, SSO, ...);
 * 3. STS GetCallerIdentity accepts them (no permission needed);
 * 4. the CDK bootstrap's SSM parameter is readable and its version is at least 6.
 *
 * The arguments of `npm run deploy -- ...` reach `cdk deploy` (npm appends them to the script,
 * after the `&&`): this script reads none.
 */
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { GetParameterCommand, SSMClient } from "@aws-sdk/client-ssm";
import { GetCallerIdentityCommand, STSClient } from "@aws-sdk/client-sts";
import { BOOTSTRAP_VERSION_PARAMETER, checkBootstrapVersion, failureMessage, PreflightError, STEP_TIMEOUT_MS, type Step, withTimeout } from "./checks.js";

/** One attempt, and a connection and request budget inside the step's timeout. */
const CLIENT_OPTIONS = { maxAttempts: 1, requestHandler: { connectionTimeout: 3_000, requestTimeout: STEP_TIMEOUT_MS } };

async function run(): Promise<string> {
  let step: Step = "region";
  let region: string | undefined;
  try {
    // The DynamoDB client is only a vehicle for the SDK's region and credential resolution.
    const probe = new DynamoDBClient({ maxAttempts: 1 });
    region = await withTimeout("region", probe.config.region());
    step = "credentials";
    const credentials = await withTimeout("credentials", probe.config.credentials());
    probe.destroy();

    step = "identity";
    const stsClient = new STSClient({ region, credentials, ...CLIENT_OPTIONS });
    const identity = await withTimeout(step, stsClient.send(new GetCallerIdentityCommand({})), STEP_TIMEOUT_MS, region);
    stsClient.destroy();

    step = "bootstrap";
    const ssmClient = new SSMClient({ region, credentials, ...CLIENT_OPTIONS });
    const answer = await withTimeout(step, ssmClient.send(new GetParameterCommand({ Name: BOOTSTRAP_VERSION_PARAMETER })), STEP_TIMEOUT_MS, region);
    ssmClient.destroy();
    const version = checkBootstrapVersion(answer.Parameter?.Value, region);
    return `account ${String(identity.Account)} (${String(identity.Arn)}), region ${region}, CDK bootstrap version ${version}`;
  } catch (error) {
    throw new PreflightError(step, failureMessage(step, error, { region }));
  }
}

run().then(
  (summary) => {
    console.error(`deploy preflight: ${summary}`);
    process.exit(0);
  },
  (error: unknown) => {
    console.error(`deploy preflight: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  },
);
