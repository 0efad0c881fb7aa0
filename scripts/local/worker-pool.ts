import { fork, type ChildProcess } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { EndpointGroup } from "../../lib/routes/index.js";
import type { HttpEvent, HttpResult } from "../../lib/http/types.js";

/**
 * API worker processes, as Lambda runs the API (architecture section 7, `API_PROCESSES`): each
 * worker (`api-worker.ts`) serves ONE request at a time and shares no memory with the others,
 * so contention between requests is what it is between Lambda containers (the in-process
 * writer queues of `lib/db/retry.ts` then spare nothing). A request goes to any idle worker;
 * when all are busy it waits its turn (FIFO), as API Gateway's requests wait for a container.
 * A worker that dies fails its request (500) and is replaced.
 */
export interface WorkerPool {
  readonly size: number;
  invoke(group: EndpointGroup, event: HttpEvent, requestId: string): Promise<HttpResult>;
  close(): Promise<void>;
}

interface Job {
  group: EndpointGroup;
  event: HttpEvent;
  requestId: string;
  resolve: (result: HttpResult) => void;
  reject: (error: Error) => void;
}

interface Worker {
  child: ChildProcess;
  job?: Job & { id: number };
}

const REPOSITORY = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const WORKER_SCRIPT = join(REPOSITORY, "scripts", "local", "api-worker.ts");

/** Starts `size` workers; resolves once each has loaded (a worker that cannot start rejects). */
export async function startWorkerPool(size: number): Promise<WorkerPool> {
  const queue: Job[] = [];
  const idle: Worker[] = [];
  const workers = new Set<Worker>();
  let nextId = 1;
  let closing = false;

  const dispatch = () => {
    while (idle.length > 0 && queue.length > 0) {
      const worker = idle.shift()!;
      const job = { ...queue.shift()!, id: nextId++ };
      worker.job = job;
      worker.child.send({ id: job.id, group: job.group, event: job.event, requestId: job.requestId });
    }
  };

  const spawn = (): Promise<Worker> =>
    new Promise((resolve, reject) => {
      const child = fork(WORKER_SCRIPT, [], { cwd: REPOSITORY, execArgv: ["--import", "tsx"], stdio: ["ignore", "inherit", "inherit", "ipc"] });
      const worker: Worker = { child };
      workers.add(worker);
      let ready = false;
      child.on("message", (message: { ready?: true; id?: number; result?: HttpResult; error?: string }) => {
        if (message.ready) {
          ready = true;
          idle.push(worker);
          resolve(worker);
          dispatch();
          return;
        }
        const job = worker.job;
        if (!job || job.id !== message.id) return;
        worker.job = undefined;
        if (message.error !== undefined) job.reject(new Error(`API worker ${child.pid}: ${message.error}`));
        else job.resolve(message.result!);
        idle.push(worker);
        dispatch();
      });
      child.on("exit", (code, signal) => {
        workers.delete(worker);
        const index = idle.indexOf(worker);
        if (index >= 0) idle.splice(index, 1);
        const reason = new Error(`API worker ${child.pid} exited (${signal ?? `code ${code}`})`);
        worker.job?.reject(reason);
        if (!ready) reject(reason);
        else if (!closing) spawn().catch((error: unknown) => process.stderr.write(`local server: could not replace an API worker: ${String(error)}\n`));
      });
    });

  await Promise.all(Array.from({ length: size }, spawn));
  return {
    size,
    invoke: (group, event, requestId) =>
      new Promise<HttpResult>((resolve, reject) => {
        if (closing) return reject(new Error("the API worker pool is closed"));
        queue.push({ group, event, requestId, resolve, reject });
        dispatch();
      }),
    async close() {
      closing = true;
      for (const job of queue.splice(0)) job.reject(new Error("the API worker pool is closed"));
      await Promise.all(
        [...workers].map(
          (worker) =>
            new Promise<void>((resolve) => {
              if (worker.child.exitCode !== null || worker.child.signalCode !== null) return resolve();
              worker.child.once("exit", () => resolve());
              worker.child.kill("SIGTERM");
            }),
        ),
      );
    },
  };
}
