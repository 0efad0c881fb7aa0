// `npm test` after the lint: the type check and the test suite side by side. The suite leaves
// about a quarter of both cores idle (it waits on DynamoDB Local), and a cold type check takes
// half a minute of one core, so running it beside the suite (at a lower priority, so the suite's
// time limits never wait for it) takes it off the wall clock. The type check's output is shown
// after the suite's; the exit code is the first failure's. Arguments go to vitest
// (`npm test -- test/integration/invoices.connected.test.ts`).
import { spawn } from "node:child_process";
import { constants, setPriority } from "node:os";

/** Runs a command from node_modules/.bin (npm puts it on PATH); resolves with its exit code and, when buffered, its output. */
function run(command, args, { buffered }) {
  return new Promise((resolve) => {
    const child = spawn(command, args, { stdio: buffered ? ["ignore", "pipe", "pipe"] : "inherit" });
    let output = "";
    if (buffered) {
      const keep = (chunk) => {
        output += chunk;
      };
      child.stdout.on("data", keep);
      child.stderr.on("data", keep);
    }
    child.on("spawn", () => {
      if (!buffered) return;
      try {
        setPriority(child.pid, constants.priority.PRIORITY_BELOW_NORMAL);
      } catch {
        // Lowering a child's priority is a courtesy; a system that refuses it runs it as is.
      }
    });
    child.on("error", (error) => resolve({ code: 1, output: `${command}: ${error.message}\n` }));
    child.on("close", (code, signal) => resolve({ code: code ?? (signal ? 1 : 0), output }));
  });
}

const started = Date.now();
const typecheck = run("tsc", ["--noEmit"], { buffered: true }).then((result) => ({ ...result, seconds: (Date.now() - started) / 1000 }));
const suite = await run("vitest", ["run", ...process.argv.slice(2)], { buffered: false });
const types = await typecheck;
if (types.output.trim()) process.stdout.write(types.output);
process.stdout.write(
  `\ntsc --noEmit: ${types.code === 0 ? "no type errors" : `failed (exit ${types.code})`} in ${types.seconds.toFixed(1)} s, beside the suite\n`,
);
process.exitCode = suite.code !== 0 ? suite.code : types.code;
