import { runAdminCli } from "./run.js";

/** `npm run -s admin -- <group> <action> [--flags]`: the operator CLI (scripts/admin/run.ts). */
process.exitCode = await runAdminCli(process.argv.slice(2));
