import { createConnection } from "node:net";
import { localEnv, applyLocalEnvironment } from "../local/env.js";
import { startDynamoLocal, freePort, type DynamoLocal } from "../local/dynamodb.js";

/**
 * Operator CLI (architecture section 7): `npm run admin -- <group> <action> [--flags]`.
 * With --json it prints exactly one JSON object on stdout (errors too: {"error": {...}}).
 * It talks to DYNAMODB_ENDPOINT, or to the local stack's DynamoDB on DYNAMODB_PORT; when
 * nothing listens there it starts DynamoDB Local on DATA_DIR for the duration of the command.
 * DYNAMODB_ENDPOINT=aws uses the real DynamoDB with the default AWS credentials.
 */
const USAGE = `Usage: npm run admin -- <command> [options] [--json]
  account create --name N [--time-zone Z] [--currency C]
  account update --account ID [--time-zone Z] [--packing-lists on|off] [--packing-service-items on|off]
                 [--estimate-expiry-days N] [--payment-terms S] [--tax-label S] [--tax-2-label S] [--record-limit N|none]
  user create --account ID --name N [--email E] [--role owner|staff] [--permissions p1,p2] [--location ID] [--time-zone Z]
  user update --user ID [--permissions p1,p2] [--status active|inactive] [--location ID|none] [--account ID]
  user delete --user ID
  key create --user ID [--name N] [--scopes s1,s2|all] [--expires-at ISO]
  key revoke --key KEY_ID
  custom-field create --account ID --kind customer|prospect|supplier|contact|item|... --name N
  customer-label create --account ID --name N
  pricing-tier create --account ID --name N
  unit create --account ID --name N
  item create --account ID --name N [--sku S] [--price P] [--cost C] [--category ID] [--unit UNIT_ID] [--type quantity|unique]
  kit create --account ID --item ITEM_ID --components ITEM_ID:QTY[,ITEM_ID:QTY...] [--method manual|automatic]`;

class UsageError extends Error {}

function parseArgs(argv: string[]): { words: string[]; flags: Map<string, string>; json: boolean } {
  const words: string[] = [];
  const flags = new Map<string, string>();
  let json = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === "--json") json = true;
    else if (arg.startsWith("--")) {
      const [name, inline] = arg.slice(2).split("=", 2) as [string, string | undefined];
      const value = inline ?? argv[++i];
      if (value === undefined) throw new UsageError(`--${name} needs a value.`);
      flags.set(name, value);
    } else words.push(arg);
  }
  return { words, flags, json };
}

function required(flags: Map<string, string>, name: string): string {
  const value = flags.get(name);
  if (value === undefined || value === "") throw new UsageError(`--${name} is required.`);
  return value;
}

function onOff(flags: Map<string, string>, name: string): boolean | undefined {
  const value = flags.get(name);
  if (value === undefined) return undefined;
  if (value === "on" || value === "true") return true;
  if (value === "off" || value === "false") return false;
  throw new UsageError(`--${name} takes on or off.`);
}

function list(value: string | undefined): string[] | undefined {
  return value === undefined ? undefined : value.split(",").map((s) => s.trim()).filter(Boolean);
}

function allowOnly(flags: Map<string, string>, allowed: string[]): void {
  for (const name of flags.keys()) if (!allowed.includes(name)) throw new UsageError(`Unknown option --${name}.`);
}

async function run(words: string[], flags: Map<string, string>): Promise<Record<string, unknown>> {
  const admin = await import("../../lib/domain/admin.js");
  const command = words.join(" ");
  switch (command) {
    case "account create":
      allowOnly(flags, ["name", "time-zone", "currency"]);
      return { ...(await admin.createAccount({ name: required(flags, "name"), timeZone: flags.get("time-zone"), currency: flags.get("currency") })) };
    case "account update": {
      allowOnly(flags, ["account", "time-zone", "packing-lists", "packing-service-items", "estimate-expiry-days", "payment-terms", "tax-label", "tax-2-label", "record-limit"]);
      const limit = flags.get("record-limit");
      const days = flags.get("estimate-expiry-days");
      if (days !== undefined && !/^\d+$/.test(days)) throw new UsageError("--estimate-expiry-days takes a whole number.");
      if (limit !== undefined && limit !== "none" && !/^\d+$/.test(limit)) throw new UsageError("--record-limit takes a whole number or none.");
      const account = await admin.updateAccount(required(flags, "account"), {
        timeZone: flags.get("time-zone"),
        packingListsEnabled: onOff(flags, "packing-lists"),
        packingServiceItems: onOff(flags, "packing-service-items"),
        estimateExpiryDays: days === undefined ? undefined : Number(days),
        paymentTerms: flags.get("payment-terms"),
        taxLabel: flags.get("tax-label"),
        tax2Label: flags.get("tax-2-label"),
        recordLimit: limit === undefined ? undefined : limit === "none" ? null : Number(limit),
      });
      return {
        account_id: account.accountId,
        time_zone: account.timeZone,
        currency: account.currency,
        estimate_expiry_days: account.estimateExpiryDays,
        payment_terms: account.paymentTerms ?? null,
        tax_label: account.taxLabel ?? null,
        tax_2_label: account.tax2Label ?? null,
        packing_lists_enabled: account.packingListsEnabled,
        packing_service_items: account.packingServiceItems,
        record_limit: account.recordLimit ?? null,
      };
    }
    case "user create": {
      allowOnly(flags, ["account", "name", "email", "role", "permissions", "location", "time-zone"]);
      const role = flags.get("role");
      if (role !== undefined && role !== "owner" && role !== "staff") throw new UsageError("--role takes owner or staff.");
      return {
        ...(await admin.createUser({
          accountId: required(flags, "account"),
          name: required(flags, "name"),
          email: flags.get("email"),
          role,
          permissions: list(flags.get("permissions")),
          locationId: flags.get("location"),
          timeZone: flags.get("time-zone"),
        })),
      };
    }
    case "user update": {
      allowOnly(flags, ["user", "permissions", "status", "location", "account"]);
      const status = flags.get("status");
      if (status !== undefined && status !== "active" && status !== "inactive") throw new UsageError("--status takes active or inactive.");
      const location = flags.get("location");
      return {
        ...(await admin.updateUser(required(flags, "user"), {
          permissions: list(flags.get("permissions")),
          status,
          locationId: location === undefined ? undefined : location === "none" ? null : location,
          accountId: flags.get("account"),
        })),
      };
    }
    case "user delete":
      allowOnly(flags, ["user"]);
      return { ...(await admin.deleteUser(required(flags, "user"))) };
    case "key create": {
      allowOnly(flags, ["user", "name", "scopes", "expires-at"]);
      const scopes = flags.get("scopes");
      return {
        ...(await admin.createKey({
          userId: required(flags, "user"),
          name: flags.get("name"),
          scopes: scopes === undefined || scopes === "all" ? "all" : list(scopes),
          expiresAt: flags.get("expires-at"),
        })),
      };
    }
    case "key revoke":
      allowOnly(flags, ["key"]);
      return { ...(await admin.revokeKey(required(flags, "key"))) };
    case "custom-field create":
      allowOnly(flags, ["account", "kind", "name"]);
      return { ...(await admin.createCustomField({ accountId: required(flags, "account"), kind: required(flags, "kind"), name: required(flags, "name") })) };
    case "customer-label create":
      allowOnly(flags, ["account", "name"]);
      return { ...(await admin.createCustomerLabel({ accountId: required(flags, "account"), name: required(flags, "name") })) };
    case "pricing-tier create":
      allowOnly(flags, ["account", "name"]);
      return { ...(await admin.createPricingTier({ accountId: required(flags, "account"), name: required(flags, "name") })) };
    case "unit create":
      allowOnly(flags, ["account", "name"]);
      return { ...(await admin.createUnit({ accountId: required(flags, "account"), name: required(flags, "name") })) };
    case "item create": {
      allowOnly(flags, ["account", "name", "sku", "price", "cost", "category", "unit", "type"]);
      const type = flags.get("type");
      if (type !== undefined && type !== "quantity" && type !== "unique") throw new UsageError("--type takes quantity or unique.");
      const unit = flags.get("unit");
      if (unit !== undefined && !/^\d+$/.test(unit)) throw new UsageError("--unit takes a unit_id (a whole number).");
      return {
        ...(await admin.createItemAsOperator({
          accountId: required(flags, "account"),
          name: required(flags, "name"),
          sku: flags.get("sku"),
          price: flags.get("price"),
          cost: flags.get("cost"),
          categoryId: flags.get("category"),
          unitId: unit === undefined ? undefined : Number(unit),
          inventoryType: type,
        })),
      };
    }
    case "kit create": {
      allowOnly(flags, ["account", "item", "components", "method"]);
      const method = flags.get("method");
      if (method !== undefined && method !== "manual" && method !== "automatic") throw new UsageError("--method takes manual or automatic.");
      const components = required(flags, "components")
        .split(",")
        .map((part) => {
          const match = /^([0-9a-fA-F-]{36}):(\d+(?:\.\d+)?)$/.exec(part.trim());
          if (!match) throw new UsageError(`--components takes ITEM_ID:QTY pairs: ${part}.`);
          return { itemId: match[1]!.toLowerCase(), quantity: Number(match[2]) };
        });
      return { ...(await admin.createKit({ accountId: required(flags, "account"), itemId: required(flags, "item").toLowerCase(), components, method })) };
    }
    default:
      throw new UsageError(command ? `Unknown command: ${command}.` : "No command given.");
  }
}

async function portOpen(port: number): Promise<boolean> {
  return new Promise((done) => {
    const socket = createConnection({ host: "127.0.0.1", port }, () => {
      socket.end();
      done(true);
    });
    socket.on("error", () => done(false));
  });
}

async function connect(): Promise<DynamoLocal | undefined> {
  const configured = process.env.DYNAMODB_ENDPOINT;
  if (configured === "aws") {
    delete process.env.DYNAMODB_ENDPOINT;
    return undefined;
  }
  if (configured) {
    applyLocalEnvironment(configured);
    return undefined;
  }
  const port = localEnv.dynamoPort();
  if (await portOpen(port)) {
    applyLocalEnvironment(`http://127.0.0.1:${port}`);
    return undefined;
  }
  if (localEnv.dataDir() === "memory") {
    throw new Error(`No DynamoDB listens on port ${port}; start the local stack (npm start) first.`);
  }
  const local = await startDynamoLocal({ port: await freePort(), dataDir: localEnv.dataDir() });
  applyLocalEnvironment(local.endpoint);
  return local;
}

async function main(): Promise<number> {
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs(process.argv.slice(2));
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n${USAGE}\n`);
    return 2;
  }
  const { words, flags, json } = parsed;
  if (words.length === 0 || words[0] === "help" || flags.has("help")) {
    process.stdout.write(`${USAGE}\n`);
    return words.length === 0 ? 2 : 0;
  }
  let local: DynamoLocal | undefined;
  try {
    local = await connect();
    const { ensureTable } = await import("../../lib/db/create-table.js");
    const { createDynamoClient } = await import("../../lib/db/client.js");
    const { tableName } = await import("../../lib/db/table.js");
    if (process.env.DYNAMODB_ENDPOINT) await ensureTable(createDynamoClient(), tableName());
    const result = await run(words, flags);
    if (json) process.stdout.write(`${JSON.stringify(result)}\n`);
    else for (const [key, value] of Object.entries(result)) process.stdout.write(`${key}: ${value}\n`);
    return 0;
  } catch (error) {
    const message = (error as Error).message;
    const usage = error instanceof UsageError;
    if (json) process.stdout.write(`${JSON.stringify({ error: { type: usage ? "usage" : "failed", message } })}\n`);
    else process.stderr.write(`error: ${message}\n${usage ? `${USAGE}\n` : ""}`);
    return usage ? 2 : 1;
  } finally {
    await local?.stop();
  }
}

process.exitCode = await main();
