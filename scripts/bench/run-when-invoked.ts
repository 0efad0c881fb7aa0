import { pathToFileURL } from "node:url";

/**
 * Runs `main` when the module at `moduleUrl` is the script node was started with (not when a
 * bench imports another), then exits: 0 when it resolved (unless `exitWhenDone` is false, for a
 * process that must stay to serve its parent), 1 with the error printed when it threw.
 */
export function runWhenInvoked(moduleUrl: string, main: () => Promise<unknown>, exitWhenDone = true): void {
  if (moduleUrl !== pathToFileURL(process.argv[1] ?? "").href) return;
  main().then(
    () => {
      if (exitWhenDone) process.exit(0);
    },
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
}
