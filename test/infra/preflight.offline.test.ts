import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
  BOOTSTRAP_VERSION_PARAMETER,
  checkBootstrapVersion,
  failureMessage,
  PreflightError,
  timeoutMessage,
  withTimeout,
} from "../../scripts/deploy/checks.js";
import { scaled } from "../support/timeouts.js";

const root = join(import.meta.dirname, "..", "..");
const home = mkdtempSync(join(tmpdir(), "preflight-home-"));
afterAll(() => rmSync(home, { recursive: true, force: true }));

/**
 * Runs the preflight with no AWS configuration at all: no AWS_* variable, the instance metadata
 * service off, and an empty HOME (no ~/.aws profile). Only `extra` is added, and the switch that
 * silences the AWS SDK's warning about the Node version (on Node 20 the SDK prints it to stderr
 * since late November 2026, which would put nine more lines before the preflight's one).
 */
function preflight(extra: Record<string, string> = {}): Promise<{ code: number | null; stderr: string; ms: number }> {
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? "",
    HOME: home,
    AWS_EC2_METADATA_DISABLED: "true",
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: "true",
    ...extra,
  };
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", join(root, "scripts/deploy/preflight.ts")], { cwd: root, env });
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stderr, ms: Date.now() - started }));
  });
}

describe("deploy preflight", () => {
  it(
    "without a region exits 1 at once with one line saying to set AWS_REGION",
    async () => {
      const { code, stderr, ms } = await preflight();
      expect(code).toBe(1);
      expect(stderr.trim().split("\n")).toEqual([expect.stringMatching(/^deploy preflight: No AWS region is set .*set AWS_REGION/)]);
      expect(ms).toBeLessThan(scaled(15_000));
    },
    scaled(30_000),
  );

  it(
    "with a region but no credentials exits 1 at once, naming the ways to give them",
    async () => {
      const { code, stderr, ms } = await preflight({ AWS_REGION: "eu-west-1" });
      expect(code).toBe(1);
      expect(stderr.trim().split("\n")).toEqual([expect.stringMatching(/^deploy preflight: No AWS credentials found .*AWS_PROFILE.*AWS_ACCESS_KEY_ID/)]);
      expect(ms).toBeLessThan(scaled(15_000));
    },
    scaled(30_000),
  );

  it("explains each failure in one line: refused credentials, a missing or old bootstrap, a timeout", () => {
    const denied = Object.assign(new Error("The security token included in the request is invalid."), { name: "InvalidClientTokenId" });
    expect(failureMessage("identity", denied, { region: "eu-west-1" })).toBe(
      "The AWS credentials were refused by STS in eu-west-1 (InvalidClientTokenId: The security token included in the request is invalid.): they are invalid, expired or cannot reach AWS.",
    );
    const missing = Object.assign(new Error("not found"), { name: "ParameterNotFound" });
    expect(failureMessage("bootstrap", missing, { region: "eu-west-1" })).toMatch(/not bootstrapped .*\(eu-west-1\).*npx cdk bootstrap/);
    expect(BOOTSTRAP_VERSION_PARAMETER).toBe("/cdk-bootstrap/hnb659fds/version");
    expect(() => checkBootstrapVersion("5", "eu-west-1")).toThrow(/version 5; this stack needs 6 or later: run npx cdk bootstrap again/);
    expect(() => checkBootstrapVersion(undefined)).toThrow(PreflightError);
    expect(checkBootstrapVersion("27")).toBe(27);
    expect(timeoutMessage("identity", "eu-west-1")).toMatch(/STS did not answer within 5 s in eu-west-1/);
    // A PreflightError's own message is kept as it is.
    expect(failureMessage("bootstrap", new PreflightError("bootstrap", "as is"))).toBe("as is");
    for (const step of ["region", "credentials", "identity", "bootstrap"] as const) {
      expect(failureMessage(step, new Error("first line\nsecond line"))).not.toContain("\n");
    }
  });

  it("gives up on a step that hangs after its timeout", async () => {
    const never = new Promise<never>(() => undefined);
    await expect(withTimeout("identity", never, 50, "eu-west-1")).rejects.toThrow(/STS did not answer within 5 s in eu-west-1/);
    await expect(withTimeout("region", Promise.resolve("eu-west-1"), 50)).resolves.toBe("eu-west-1");
  });

  it("npm run deploy runs cdk deploy after the preflight, so arguments after -- reach cdk deploy", () => {
    const scripts = (JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { scripts: Record<string, string> }).scripts;
    // npm appends the arguments to the script's command line: they land after the last command.
    expect(scripts.deploy).toMatch(/&& cdk deploy$/);
  });
});
