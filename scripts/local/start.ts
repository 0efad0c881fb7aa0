import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { apiProcesses, DEFAULT_DATA_DIR, localEnv, applyLocalEnvironment } from "./env.js";
import { checkConfig } from "../../lib/core/config.js";
import { LOCAL_TABLE_NAME } from "../../lib/db/table.js";
import { portProblem, startDynamoLocal, type DynamoLocal } from "./dynamodb.js";
import { acquireDataDirLock, type DataDirLockInfo } from "./data-dir-lock.js";

/**
 * `npm start`: DynamoDB Local (or DYNAMODB_ENDPOINT), the table, the stream poller, the demo
 * seed on an empty database, and the API on http://127.0.0.1:$PORT/api/v3. Ctrl-C (or
 * SIGTERM), even during start-up, stops everything, Java included. DATA_DIR is locked
 * (`data-dir-lock.ts`) from before DynamoDB Local starts until everything has stopped.
 */
class StartError extends Error {}

/** What has been started so far, stopped in reverse order. */
const running: { name: string; stop: () => Promise<void> }[] = [];
let stopping = false;

async function stopAll(): Promise<void> {
  for (const part of running.reverse()) {
    try {
      await part.stop();
    } catch (error) {
      process.stderr.write(`stopping ${part.name}: ${(error as Error).message}\n`);
    }
  }
}

function shutDown(reason: string): void {
  if (stopping) return;
  stopping = true;
  console.log(`\n${reason}: stopping`);
  void stopAll().then(() => process.exit(0));
}

// A closed console (EPIPE) must not crash the process halfway through stopping.
process.stdout.on("error", () => undefined);
process.stderr.on("error", () => undefined);

for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) process.on(signal, () => shutDown(signal));

// `npm start` runs this through `sh -c`, and a shell that does not exec its command (dash)
// dies of the SIGTERM npm forwards without passing it on: notice being orphaned, and stop.
const parentPid = process.ppid;
setInterval(() => {
  if (process.ppid !== parentPid) shutDown("parent process exited");
}, 250).unref();

function parsePort(variable: "PORT" | "DYNAMODB_PORT", value: number): number {
  if (!Number.isInteger(value) || value < 1 || value > 65535) {
    throw new StartError(`${variable} must be a port number from 1 to 65535 (got ${JSON.stringify(process.env[variable])}).`);
  }
  return value;
}

/** Refuses ports something else holds, before Java starts: never serve another process's database. */
async function checkPorts(external: boolean, port: number, dynamoPort: number): Promise<void> {
  const problems: string[] = [];
  if (!external) {
    const problem = await portProblem(dynamoPort);
    if (problem) {
      problems.push(
        `DYNAMODB_PORT ${dynamoPort} is ${problem} (another DynamoDB Local, perhaps a local stack already running, or another program). ` +
          `Stop it, or choose another port: DYNAMODB_PORT=${dynamoPort === 8000 ? 8001 : dynamoPort + 1} npm start ` +
          `(or use the DynamoDB that listens there: DYNAMODB_ENDPOINT=http://127.0.0.1:${dynamoPort} npm start).`,
      );
    }
  }
  const problem = await portProblem(port);
  if (problem) {
    problems.push(
      `PORT ${port} is ${problem} (perhaps a local stack already running). Stop it, or choose another port: PORT=${port === 3000 ? 3001 : port + 1} npm start.`,
    );
  }
  if (problems.length > 0) throw new StartError(problems.join("\n"));
}

function dataDirInUse(dataDir: string, held: DataDirLockInfo): string {
  if (held.holder === "admin CLI") {
    return `DATA_DIR ${dataDir} is in use by an admin command (npm run admin, pid ${held.pid}) that opened it with its own DynamoDB Local; start again when it has finished.`;
  }
  return (
    `DATA_DIR ${dataDir} is in use by another local stack (npm start, pid ${held.pid}; API on port ${held.port}, DynamoDB Local on port ${held.dynamodb_port}). ` +
    `Use that one, or stop it first (Ctrl-C in its terminal, or kill ${held.pid}). ` +
    `To run a second stack, give it its own data and ports: DATA_DIR=.local/other PORT=${held.port === 3001 ? 3002 : 3001} DYNAMODB_PORT=${held.dynamodb_port === 8001 ? 8002 : 8001} npm start.`
  );
}

/**
 * Claims DATA_DIR before anything opens it: a second DynamoDB Local on the same files would
 * break the first stack. Released last, once DynamoDB Local has stopped.
 */
function lockDataDir(port: number, dynamoPort: number): void {
  const dataDir = localEnv.dataDir();
  if (dataDir === "memory") return;
  const result = acquireDataDirLock(dataDir, { holder: "npm start", dynamodb_port: dynamoPort, port });
  if ("heldBy" in result) throw new StartError(dataDirInUse(dataDir, result.heldBy));
  running.push({ name: "data directory lock", stop: async () => result.lock.release() });
}

/**
 * Where the keys printed at first start are saved: next to the data directory, one file per
 * data directory (`.local/keys.txt` for the default `.local/dynamodb`, `.local/other.keys.txt`
 * for `.local/other`), so a second stack never overwrites the first one's. Nothing is saved with
 * DATA_DIR=memory.
 */
export function keysFile(): string | undefined {
  const dataDir = localEnv.dataDir();
  if (dataDir === "memory") return undefined;
  const resolved = resolve(dataDir);
  return resolved === resolve(DEFAULT_DATA_DIR) ? join(dirname(resolved), "keys.txt") : `${resolved}.keys.txt`;
}

/** A value as a POSIX shell reads it back (quoted when it holds anything but plain characters). */
const shellWord = (value: string): string => (/^[\w@%+=:,./-]+$/.test(value) ? value : `'${value.replaceAll("'", `'\\''`)}'`);

/**
 * What the admin CLI needs set to reach this stack (nothing for the default DATA_DIR): the
 * DynamoDB it was started on (`external`, DYNAMODB_ENDPOINT at start), else its DATA_DIR; its TABLE_NAME when not the default.
 */
function adminPrefix(external: string | undefined): string {
  const dataDir = localEnv.dataDir();
  const parts: string[] = [];
  if (external) parts.push(`DYNAMODB_ENDPOINT=${shellWord(external)}`);
  else if (resolve(dataDir) !== resolve(DEFAULT_DATA_DIR)) parts.push(`DATA_DIR=${shellWord(dataDir)}`);
  if (localEnv.tableName() !== LOCAL_TABLE_NAME) parts.push(`TABLE_NAME=${shellWord(localEnv.tableName())}`);
  return parts.map((part) => `${part} `).join("");
}

function saveKeys(
  path: string,
  demo: { account_id: string; user_id: string; api_key: string; staff_user_id: string; staff_api_key: string },
  external: string | undefined,
): void {
  mkdirSync(dirname(path), { recursive: true });
  const text = [
    `# Keys of the demo account npm start created on ${new Date().toISOString()} (DATA_DIR=${localEnv.dataDir()}).`,
    "# Only their SHA-256 hashes are stored: keep this file private (mode 600).",
    `Demo account: ${demo.account_id} (owner user ${demo.user_id})`,
    `Demo API key: ${demo.api_key}`,
    `Staff API key (sees only its own records; user ${demo.staff_user_id}): ${demo.staff_api_key}`,
    "# Lost a key? Create a new one (with the stack running):",
    `#   ${adminPrefix(external)}npm run -s admin -- key create --user ${demo.user_id} --name "New key" --json`,
    "",
  ].join("\n");
  writeFileSync(path, text, { mode: 0o600 });
  chmodSync(path, 0o600); // also when the file already existed
}

async function main(): Promise<void> {
  const external = process.env.DYNAMODB_ENDPOINT;
  const port = parsePort("PORT", localEnv.port());
  const dynamoPort = parsePort("DYNAMODB_PORT", localEnv.dynamoPort());
  const seed = localEnv.seed();
  if (seed !== "demo" && seed !== "none") throw new StartError(`SEED must be demo or none (got ${JSON.stringify(seed)}).`);
  let processes: number;
  try {
    processes = apiProcesses();
    // A variable the handlers would refuse on every request (lib/core/config.ts) stops the start instead.
    checkConfig();
  } catch (error) {
    throw new StartError((error as Error).message);
  }
  if (!external && port === dynamoPort) throw new StartError(`PORT and DYNAMODB_PORT are both ${port}; choose two different ports.`);
  if (!external) lockDataDir(port, dynamoPort);
  await checkPorts(Boolean(external), port, dynamoPort);

  let dynamo: DynamoLocal | undefined;
  if (external) {
    applyLocalEnvironment(external);
  } else {
    dynamo = await startDynamoLocal({ port: dynamoPort, dataDir: localEnv.dataDir() });
    running.push({ name: "DynamoDB Local", stop: dynamo.stop });
    // Without its database the API can only answer 500s: if Java dies, say so and stop everything.
    dynamo.process.once("exit", (code, signal) => {
      if (stopping) return;
      process.stderr.write(
        `\nDynamoDB Local exited unexpectedly (${signal ?? `code ${code}`}); the API cannot serve without it. Stopping. Start again with npm start.\n`,
      );
      stopping = true;
      void stopAll().then(() => process.exit(1));
    });
    if (stopping) return;
    applyLocalEnvironment(dynamo.endpoint);
    console.log(`DynamoDB Local on ${dynamo.endpoint} (data: ${localEnv.dataDir()})`);
  }

  const { ensureTable } = await import("../../lib/db/create-table.js");
  const { createDynamoClient } = await import("../../lib/db/client.js");
  const { EXPIRY_INDEX, tableName } = await import("../../lib/db/table.js");
  const { tableIsEmpty, operatorDirectoryMissing, rebuildOperatorDirectory } = await import("../../lib/db/admin-store.js");
  const { addedIndexes } = await ensureTable(createDynamoClient(), tableName());
  // A DATA_DIR written before the estimate expiry index: its open estimates join it once.
  if (addedIndexes.includes(EXPIRY_INDEX.indexName)) {
    const { indexOpenEstimateExpiries } = await import("../../lib/db/estimate-expiries.js");
    const indexed = await indexOpenEstimateExpiries();
    if (indexed > 0) console.log(`Indexed the expiry of ${indexed} open estimates: data from an older version.`);
  }
  // A DATA_DIR written by a version before the admin CLI's directory: write it once.
  if (await operatorDirectoryMissing()) {
    const rebuilt = await rebuildOperatorDirectory();
    console.log(`Wrote the admin CLI's directory (${rebuilt.accounts} accounts, ${rebuilt.users} users, ${rebuilt.keys} keys): data from an older version.`);
  }

  if (localEnv.seed() === "demo" && (await tableIsEmpty())) {
    console.log("seeding demo data...");
    const { seedDemo } = await import("./seed.js");
    const demo = await seedDemo();
    if (stopping) return;
    console.log(`Created demo account ${demo.account_id} (owner user ${demo.user_id}).`);
    console.log(`Demo API key: ${demo.api_key}`);
    console.log(`Staff API key (sees only its own records): ${demo.staff_api_key}`);
    const path = keysFile();
    if (path) {
      saveKeys(path, demo, external);
      console.log(
        `Keys saved to ${relative(process.cwd(), path) || path} (mode 600); lost one? ${adminPrefix(external)}npm run -s admin -- key create --user ${demo.user_id} --json`,
      );
    } else {
      // Nothing on disk tells the admin CLI where this stack's DynamoDB is: the command says it.
      const reach = external ? `DYNAMODB_ENDPOINT=${external}` : `DYNAMODB_PORT=${dynamoPort}`;
      console.log(`Keys not saved (DATA_DIR=memory); create one with: ${reach} npm run -s admin -- key create --user ${demo.user_id} --json`);
    }
  }

  const { startStreamPoller, muteIdleStreamBatches } = await import("./stream-poller.js");
  const { handler: streamHandler } = await import("../../functions/stream-processor/handler.js");
  muteIdleStreamBatches();
  // With a DATA_DIR of its own, the poller notes where it got to, so a restart resumes there:
  // what was written while the stack was stopped (an admin command) still reaches the feed.
  const dataDir = localEnv.dataDir();
  const poller = await startStreamPoller({
    endpoint: process.env.DYNAMODB_ENDPOINT!,
    tableName: tableName(),
    handler: streamHandler,
    checkpointFile: external || dataDir === "memory" ? undefined : join(resolve(dataDir), `stream-checkpoints.${tableName()}.json`),
  });
  running.push({ name: "stream poller", stop: poller.stop });
  // Webhook messages are delivered from this process (retries wait on timers): drop them on stop.
  const { localWebhookQueue } = await import("../../lib/domain/webhooks/queue.js");
  running.push({ name: "webhook deliveries", stop: () => localWebhookQueue().stop() });
  // The deployed stack runs the stream processor on a schedule (every minute) to settle stock
  // holds whose writer died; locally the same handler runs on a timer (readers and writers that
  // meet such a hold settle it themselves).
  const sweeper = setInterval(() => {
    void streamHandler({ source: "aws.events", "detail-type": "Scheduled Event" } as never).catch(() => undefined);
  }, 5_000);
  sweeper.unref();
  running.push({ name: "hold sweeper", stop: async () => clearInterval(sweeper) });
  if (stopping) return;

  const { startApiServer } = await import("./server.js");
  const api = await startApiServer(port, { processes });
  running.push({
    name: "API server",
    stop: async () => {
      const closed = new Promise((resolve) => api.server.close(resolve));
      api.server.closeAllConnections();
      await closed; // its API worker processes, if any, with it
    },
  });
  if (stopping) return;
  console.log(`listening on ${api.url}/api/v3${processes > 1 ? ` (${processes} API worker processes, one request at a time each, as Lambda runs it)` : ""}`);
}

main().catch(async (error: Error) => {
  if (stopping) return; // a signal arrived during start-up: the signal handler finishes
  stopping = true;
  console.error(`npm start failed: ${error.message}`);
  await stopAll();
  process.exit(1);
});
