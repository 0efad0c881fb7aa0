/**
 * The pure parts of the deploy preflight (scripts/deploy/preflight.ts): what each check
 * concludes and the one line it prints. No AWS call here, so the messages are unit-testable.
 */

/** The CDK bootstrap version the stack's template requires (its CheckBootstrapVersion rule). */
export const MIN_BOOTSTRAP_VERSION = 6;
/** The default CDK bootstrap qualifier (cdk.json sets no other). */
export const BOOTSTRAP_QUALIFIER = "hnb659fds";
/** The SSM parameter `cdk bootstrap` writes its version to. */
export const BOOTSTRAP_VERSION_PARAMETER = `/cdk-bootstrap/${BOOTSTRAP_QUALIFIER}/version`;
/** How long each step may take before the preflight gives up on it. */
export const STEP_TIMEOUT_MS = 5_000;

/** The preflight's steps, in order. */
export type Step = "region" | "credentials" | "identity" | "bootstrap";

/** A failed step: the line printed on stderr (prefixed `deploy preflight:`), exit code 1. */
export class PreflightError extends Error {
  constructor(
    readonly step: Step,
    message: string,
  ) {
    super(message);
  }
}

const text = (error: unknown) => (error instanceof Error ? error.message : String(error)).split("\n")[0]!.trim();

/** The line printed when `step` failed with `error` (a timeout or anything the SDK threw). */
export function failureMessage(step: Step, error: unknown, context: { region?: string } = {}): string {
  if (error instanceof PreflightError) return error.message;
  const cause = text(error);
  const name = error instanceof Error ? error.name : "";
  switch (step) {
    case "region":
      return `No AWS region is set (${cause}): set AWS_REGION (or AWS_DEFAULT_REGION, or a region in your AWS_PROFILE) to the region to deploy to.`;
    case "credentials":
      return `No AWS credentials found (${cause}): set AWS_PROFILE, or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN), or run aws sso login for your profile.`;
    case "identity":
      return `The AWS credentials were refused by STS in ${context.region ?? "the region"} (${name ? `${name}: ` : ""}${cause}): they are invalid, expired or cannot reach AWS.`;
    case "bootstrap":
      if (name === "ParameterNotFound") return bootstrapMissing(context.region);
      return `Could not read the CDK bootstrap version (${BOOTSTRAP_VERSION_PARAMETER}) in ${context.region ?? "the region"} (${name ? `${name}: ` : ""}${cause}): the credentials need ssm:GetParameter on it, or run npx cdk bootstrap.`;
  }
}

function bootstrapMissing(region: string | undefined): string {
  return `The CDK is not bootstrapped in this account and region (${region ?? "?"}): no ${BOOTSTRAP_VERSION_PARAMETER} parameter. Run npx cdk bootstrap once (README, "Prerequisites").`;
}

/** The message when a step took longer than STEP_TIMEOUT_MS. */
export function timeoutMessage(step: Step, region?: string): string {
  const seconds = STEP_TIMEOUT_MS / 1000;
  switch (step) {
    case "region":
    case "credentials":
      return `Resolving AWS ${step === "region" ? "the region" : "credentials"} took more than ${seconds} s: check AWS_PROFILE (an SSO or process profile may be waiting) and your network.`;
    case "identity":
      return `STS did not answer within ${seconds} s in ${region ?? "the region"}: check your network (proxy, VPN) and AWS_REGION.`;
    case "bootstrap":
      return `SSM did not answer within ${seconds} s in ${region ?? "the region"} reading ${BOOTSTRAP_VERSION_PARAMETER}: check your network (proxy, VPN).`;
  }
}

/**
 * Checks the bootstrap version read from SSM: a PreflightError unless it is a number of at
 * least MIN_BOOTSTRAP_VERSION (the template refuses older ones at deploy time, after minutes).
 */
export function checkBootstrapVersion(value: string | undefined, region?: string): number {
  const version = Number(value);
  if (value === undefined || !Number.isInteger(version)) throw new PreflightError("bootstrap", bootstrapMissing(region));
  if (version < MIN_BOOTSTRAP_VERSION) {
    throw new PreflightError(
      "bootstrap",
      `The CDK bootstrap in ${region ?? "this region"} is version ${version}; this stack needs ${MIN_BOOTSTRAP_VERSION} or later: run npx cdk bootstrap again.`,
    );
  }
  return version;
}

/** Rejects with a PreflightError carrying timeoutMessage(step) when `promise` takes longer than `ms`. */
export async function withTimeout<T>(step: Step, promise: Promise<T>, ms = STEP_TIMEOUT_MS, region?: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new PreflightError(step, timeoutMessage(step, region))), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
