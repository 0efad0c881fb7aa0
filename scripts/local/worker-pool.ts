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
 * A worker that dies fails the request it took (500) and is replaced (again and again, a little later
 * each time, while a replacement cannot start); a request is never handed to a worker whose
 * channel has closed, and a send that fails puts the request back in the queue.
 */
export interface WorkerPool {
  readonly size: number;
  /** The workers alive now: their process ids, and whether each has started (else it is starting). */
  processes(): { pid: number; ready: boolean }[];
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
  ready: boolean;
  /** The request it serves: `accepted` once the worker said it took it (before running it). */
  job?: Job & { id: number; accepted?: boolean };
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
  /** Replacements waiting to be tried again (cancelled on close). */
  const retries = new Set<NodeJS.Timeout>();

  const dispatch = () => {
    while (idle.length > 0 && queue.length > 0) {
      const worker = idle.shift()!;
      // Killed but not yet reported: its exit replaces it.
      if (!worker.child.connected) continue;
      const waiting = queue.shift()!;
      const job = { ...waiting, id: nextId++ };
      worker.job = job;
      worker.child.send({ id: job.id, group: job.group, event: job.event, requestId: job.requestId }, (error) => {
        // The channel closed before the request reached the worker: it ran nowhere, so another worker takes it.
        if (!error || worker.job !== job) return;
        worker.job = undefined;
        queue.unshift(waiting);
        dispatch();
      });
    }
  };

  /** Replaces a worker that died, trying again (0.5 s, 1 s, ... up to 30 s apart) while the replacement cannot start. */
  const replace = (attempt = 0) => {
    if (closing) return;
    spawn().catch((error: unknown) => {
      if (closing) return;
      const delayMs = Math.min(30_000, 500 * 2 ** attempt);
      process.stderr.write(`local server: could not replace an API worker (${String(error)}); trying again in ${delayMs / 1000} s\n`);
      const timer = setTimeout(() => {
        retries.delete(timer);
        replace(attempt + 1);
      }, delayMs);
      retries.add(timer);
    });
  };

  const spawn = (): Promise<Worker> =>
    new Promise((resolve, reject) => {
      const child = fork(WORKER_SCRIPT, [], { cwd: REPOSITORY, execArgv: ["--import", "tsx"], stdio: ["ignore", "inherit", "inherit", "ipc"] });
      const worker: Worker = { child, ready: false };
      workers.add(worker);
      child.on("message", (message: { ready?: true; accepted?: number; id?: number; result?: HttpResult; error?: string }) => {
        if (message.accepted !== undefined) {
          if (worker.job?.id === message.accepted) worker.job.accepted = true;
          return;
        }
        if (message.ready) {
          worker.ready = true;
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
      // A send on a channel closing meanwhile reports here (and to its callback), never as an uncaught error.
      child.on("error", (error) => {
        process.stderr.write(`local server: API worker ${child.pid ?? "(not started)"}: ${error.message}\n`);
        // A fork that failed (no process at all) never exits: it is gone now.
        if (child.pid === undefined) {
          workers.delete(worker);
          reject(error);
        }
      });
      child.on("disconnect", () => {
        const index = idle.indexOf(worker);
        if (index >= 0) idle.splice(index, 1);
      });
      child.on("exit", (code, signal) => {
        workers.delete(worker);
        const index = idle.indexOf(worker);
        if (index >= 0) idle.splice(index, 1);
        const reason = new Error(`API worker ${child.pid} exited (${signal ?? `code ${code}`})`);
        const job = worker.job;
        worker.job = undefined;
        if (job && !job.accepted && !closing) {
          // It died before it took the request (killed a moment before it was handed over): the request ran nowhere.
          const { id: _id, accepted: _accepted, ...waiting } = job;
          queue.unshift(waiting);
          dispatch();
        } else job?.reject(reason);
        if (!worker.ready) reject(reason);
        else replace();
      });
    });

  await Promise.all(Array.from({ length: size }, spawn));
  return {
    size,
    processes: () => [...workers].flatMap(({ child, ready }) => (child.pid === undefined ? [] : [{ pid: child.pid, ready }])),
    invoke: (group, event, requestId) =>
      new Promise<HttpResult>((resolve, reject) => {
        if (closing) return reject(new Error("the API worker pool is closed"));
        queue.push({ group, event, requestId, resolve, reject });
        dispatch();
      }),
    async close() {
      closing = true;
      for (const timer of retries) clearTimeout(timer);
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
