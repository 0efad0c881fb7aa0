import { AdminError } from "../../lib/core/failures.js";
import { localEnv, applyLocalEnvironment } from "../local/env.js";
import { startDynamoLocal, freePort, portAnswers } from "../local/dynamodb.js";
import { acquireDataDirLock, liveDataDirLock, type DataDirLockInfo } from "../local/data-dir-lock.js";
import { PERMISSIONS, PERMISSION_DESCRIPTIONS, SCOPES, SCOPE_DESCRIPTIONS, USER_SETTING_DESCRIPTIONS } from "../../lib/auth/permissions.js";

/**
 * Operator CLI (architecture section 7): `npm run -s admin -- <group> <action> [--flags]`
 * (scripts/admin/cli.ts runs `runAdminCli` for the process).
 *
 * - Arguments are checked completely (unknown command, unknown, missing or invalid flags)
 *   before any database is started or contacted.
 * - With --json it prints exactly one JSON object on stdout: the result, `{"help": ...}` for
 *   --help, or `{"error": {"code", "message"}}` with a non-zero exit code (2 for argument
 *   errors, 1 otherwise).
 * - It talks to DYNAMODB_ENDPOINT, else to the DynamoDB on DYNAMODB_PORT when it is set (none
 *   answering there is `database_unavailable`), else to the DynamoDB of the local stack that has
 *   DATA_DIR open (its lock, see `data-dir-lock.ts`), else to one on port 8000; with none of
 *   these it starts DynamoDB Local on DATA_DIR, under the same lock, for the duration of the
 *   command (and makes the table there as npm start does). On a DynamoDB it did not start, the
 *   table must exist (a TABLE_NAME other than the stack's is `database_unavailable`). It never
 *   opens a DATA_DIR another live process has locked. DYNAMODB_ENDPOINT=aws uses the real
 *   DynamoDB with the default AWS credentials.
 * - `scopes` and `permissions` describe what keys and users may do, without any database.
 */
type Admin = typeof import("../../lib/domain/admin/service.js");
type Result = Record<string, unknown>;
type Action = (admin: Admin) => Promise<Result>;

/** An argument error: reported before any database is touched (exit code 2). */
class UsageError extends Error {}
/** No database to talk to. */
class DatabaseUnavailable extends Error {}

class Flags {
  constructor(
    private readonly values: Map<string, string>,
    /** The admin module (its input checks and limits). */
    readonly admin: Admin,
  ) {}

  get(name: string): string | undefined {
    return this.values.get(name);
  }

  required(name: string): string {
    const value = this.values.get(name);
    if (value === undefined || value.trim() === "") throw new UsageError(`--${name} is required.`);
    return value;
  }

  oneOf<T extends string>(name: string, allowed: readonly T[]): T | undefined {
    const value = this.values.get(name);
    if (value === undefined) return undefined;
    if (!(allowed as readonly string[]).includes(value)) throw new UsageError(`--${name} takes ${allowed.join(" or ")}.`);
    return value as T;
  }

  onOff(name: string): boolean | undefined {
    const value = this.oneOf(name, ["on", "off", "true", "false"]);
    return value === undefined ? undefined : value === "on" || value === "true";
  }

  wholeNumber(name: string, max: number, extra?: "none"): number | null | undefined {
    const value = this.values.get(name);
    if (value === undefined) return undefined;
    if (extra && value === extra) return null;
    if (!/^\d+$/.test(value) || Number(value) > max) throw new UsageError(`--${name} takes a whole number up to ${max}${extra ? ` or ${extra}` : ""}.`);
    return Number(value);
  }

  /** An id flag: a UUID (lower-cased). */
  id(name: string, required: true): string;
  id(name: string, required?: false): string | undefined;
  id(name: string, required = false): string | undefined {
    const value = required ? this.required(name) : this.values.get(name);
    if (value === undefined) return undefined;
    if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(value)) throw new UsageError(`--${name} takes an id (a UUID): ${value}.`);
    return value.toLowerCase();
  }

  /** A comma-separated list flag: "" is an empty list; an empty entry (`a,,b`, `a,`) is an argument error. */
  list(name: string): string[] | undefined {
    const value = this.values.get(name);
    if (value === undefined) return undefined;
    if (value.trim() === "") return [];
    const entries = value.split(",").map((s) => s.trim());
    if (entries.includes("")) throw new UsageError(`--${name} takes a comma-separated list without empty entries: ${value}.`);
    return entries;
  }

  /** Runs one of the domain's own input checks now, as an argument error. */
  check(run: (checks: Admin["operatorInputChecks"]) => void): void {
    try {
      run(this.admin.operatorInputChecks);
    } catch (error) {
      throw new UsageError((error as Error).message);
    }
  }
}

interface Command {
  name: string;
  synopsis: string;
  summary: string;
  /** What --json prints on success. */
  output: string;
  flags: readonly string[];
  /** Checks the flags (throwing UsageError) and returns what to run against the database. */
  prepare: (flags: Flags) => Action;
  /** False for commands that read no database (none is contacted or started). */
  database?: false;
  /** The human-readable output, when the generic `key: value` listing does not suit. */
  print?: (result: Result) => string;
}

/** A name column and a wrapped description column (for terminals about 100 characters wide). */
function describedTable(heading: [string, string], rows: readonly { name: string; description: string }[]): string {
  const width = Math.max(heading[0].length, ...rows.map((row) => row.name.length));
  const textWidth = Math.max(40, 100 - width - 2);
  const lines = [`${heading[0].padEnd(width)}  ${heading[1]}`];
  for (const row of rows) {
    // Words, keeping a `code span` whole.
    const words = row.description.split(" ").reduce<string[]>((all, word) => {
      const last = all.length - 1;
      if (last >= 0 && (all[last]!.split("`").length - 1) % 2 === 1) all[last] += ` ${word}`;
      else all.push(word);
      return all;
    }, []);
    const wrapped: string[] = [];
    for (const word of words) {
      const last = wrapped.length - 1;
      if (last >= 0 && wrapped[last]!.length + 1 + word.length <= textWidth) wrapped[last] += ` ${word}`;
      else wrapped.push(word);
    }
    for (const [i, text] of wrapped.entries()) lines.push(`${(i === 0 ? row.name : "").padEnd(width)}  ${text}`);
  }
  return lines.join("\n");
}

type Described = { name: string; description: string }[];

const KEY_ID = /^key_[0-9a-f]{32}$/;

const COMMANDS: readonly Command[] = [
  {
    name: "account create",
    synopsis: "--name N [--time-zone Z] [--currency C]",
    summary: "Creates an account with an owner user and an all-scopes key for that owner (the key is shown once).",
    output: '{"account_id","user_id","key_id","api_key"}',
    flags: ["name", "time-zone", "currency"],
    prepare: (f) => {
      const name = f.required("name");
      const timeZone = f.get("time-zone");
      const currency = f.get("currency");
      f.check((c) => {
        c.name(name);
        if (timeZone !== undefined) c.timeZone(timeZone);
        if (currency !== undefined) c.currency(currency);
      });
      return async (admin) => ({ ...(await admin.createAccount({ name, timeZone, currency })) });
    },
  },
  {
    name: "account list",
    synopsis: "",
    summary: "Lists every account, oldest first.",
    output: '{"accounts":[{"account_id","name","time_zone","currency","created_at"}]}',
    flags: [],
    prepare: () => async (admin) => ({ accounts: await admin.listAccounts() }),
  },
  {
    name: "account update",
    synopsis:
      "--account ID [--time-zone Z] [--packing-lists on|off] [--packing-service-items on|off]\n" +
      "               [--estimate-expiry-days N] [--payment-terms S] [--tax-label S] [--tax-2-label S] [--record-limit N|none]",
    summary: "Changes an account's settings; prints them all.",
    output: '{"account_id","time_zone","currency","estimate_expiry_days",...,"record_limit"}',
    flags: [
      "account",
      "time-zone",
      "packing-lists",
      "packing-service-items",
      "estimate-expiry-days",
      "payment-terms",
      "tax-label",
      "tax-2-label",
      "record-limit",
    ],
    prepare: (f) => {
      const accountId = f.id("account", true);
      const timeZone = f.get("time-zone");
      if (timeZone !== undefined) f.check((c) => c.timeZone(timeZone));
      const settings = {
        timeZone,
        packingListsEnabled: f.onOff("packing-lists"),
        packingServiceItems: f.onOff("packing-service-items"),
        estimateExpiryDays: f.wholeNumber("estimate-expiry-days", f.admin.MAX_ESTIMATE_EXPIRY_DAYS) ?? undefined,
        paymentTerms: f.get("payment-terms"),
        taxLabel: f.get("tax-label"),
        tax2Label: f.get("tax-2-label"),
        recordLimit: f.wholeNumber("record-limit", f.admin.MAX_RECORD_LIMIT, "none"),
      };
      return async (admin) => {
        const account = await admin.updateAccount(accountId, settings);
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
      };
    },
  },
  {
    name: "user create",
    synopsis: "--account ID --name N [--email E] [--role owner|staff] [--permissions p1,p2,...] [--location LOCATION_ID] [--time-zone Z]",
    summary: "Creates a user (staff unless --role owner).",
    output: '{"user_id"}',
    flags: ["account", "name", "email", "role", "permissions", "location", "time-zone"],
    prepare: (f) => {
      const input = {
        accountId: f.id("account", true),
        name: f.required("name"),
        email: f.get("email"),
        role: f.oneOf("role", ["owner", "staff"] as const),
        permissions: f.list("permissions"),
        locationId: f.id("location"),
        timeZone: f.get("time-zone"),
      };
      f.check((c) => {
        c.name(input.name);
        if (input.email !== undefined) c.email(input.email);
        if (input.permissions) c.permissions(input.permissions);
        if (input.timeZone !== undefined) c.timeZone(input.timeZone);
      });
      return async (admin) => ({ ...(await admin.createUser(input)) });
    },
  },
  {
    name: "user list",
    synopsis: "--account ID",
    summary: "Lists the users of an account, oldest first, with the permissions each holds (an owner: every permission).",
    output: '{"users":[{"user_id","name","email","role","status","permissions","location_id","created_at"}]}',
    flags: ["account"],
    prepare: (f) => {
      const accountId = f.id("account", true);
      return async (admin) => ({ users: await admin.listUsers(accountId) });
    },
  },
  {
    name: "user update",
    synopsis: "--user ID [--permissions p1,p2,...] [--status active|inactive] [--location ID|none] [--account ID]",
    summary: "Changes a user; moving them to another account (--account) voids every key they had.",
    output: '{"user_id","account_id"}',
    flags: ["user", "permissions", "status", "location", "account"],
    prepare: (f) => {
      const userId = f.id("user", true);
      const location = f.get("location") === "none" ? null : f.id("location");
      const input = {
        permissions: f.list("permissions"),
        status: f.oneOf("status", ["active", "inactive"] as const),
        locationId: location,
        accountId: f.id("account"),
      };
      if (input.permissions) f.check((c) => c.permissions(input.permissions!));
      return async (admin) => ({ ...(await admin.updateUser(userId, input)) });
    },
  },
  {
    name: "user delete",
    synopsis: "--user ID",
    summary: "Deletes a user; their keys stop working at once.",
    output: '{"user_id","deleted":true}',
    flags: ["user"],
    prepare: (f) => {
      const userId = f.id("user", true);
      return async (admin) => ({ ...(await admin.deleteUser(userId)) });
    },
  },
  {
    name: "key create",
    synopsis: "--user ID [--name N] [--scopes s1,s2,...|all] [--expires-at ISO]",
    summary: "Creates an API key for a user (the key is shown once; only its hash is stored).",
    output: '{"key_id","api_key"}',
    flags: ["user", "name", "scopes", "expires-at"],
    prepare: (f) => {
      const userId = f.id("user", true);
      const scopes = f.get("scopes") === undefined || f.get("scopes") === "all" ? ("all" as const) : f.list("scopes")!;
      const expiresAt = f.get("expires-at");
      const name = f.get("name");
      f.check((c) => {
        if (name !== undefined) c.name(name);
        if (scopes !== "all") c.scopes(scopes);
        if (expiresAt !== undefined) c.expiresAt(expiresAt);
      });
      return async (admin) => ({ ...(await admin.createKey({ userId, name, scopes, expiresAt })) });
    },
  },
  {
    name: "key list",
    synopsis: "--user ID",
    summary: "Lists a user's keys: ids, names, scopes, status and dates; never a key or its hash.",
    output: '{"keys":[{"key_id","name","scopes","status","created_at","expires_at","revoked_at"}]}',
    flags: ["user"],
    prepare: (f) => {
      const userId = f.id("user", true);
      return async (admin) => ({ keys: await admin.listKeys(userId) });
    },
  },
  {
    name: "key revoke",
    synopsis: "--key KEY_ID",
    summary: "Revokes a key (by its key_id): it is refused at once.",
    output: '{"key_id","revoked":true}',
    flags: ["key"],
    prepare: (f) => {
      const keyId = f.required("key");
      if (!KEY_ID.test(keyId))
        throw new UsageError(
          `--key takes a key id (key_ followed by 32 hex digits, see key list), not the key itself: ${keyId.startsWith("isk_") ? "isk_..." : keyId}.`,
        );
      return async (admin) => ({ ...(await admin.revokeKey(keyId)) });
    },
  },
  {
    name: "location create",
    synopsis: "--account ID --name N --short-name S",
    summary: "Creates a location, as POST /locations does.",
    output: '{"location_id"}',
    flags: ["account", "name", "short-name"],
    prepare: (f) => {
      const input = { accountId: f.id("account", true), name: f.required("name"), shortName: f.required("short-name") };
      f.check((c) => c.location(input));
      return async (admin) => ({ ...(await admin.createLocationAsOperator(input)) });
    },
  },
  {
    name: "custom-field create",
    synopsis: "--account ID --kind customer|prospect|supplier|contact|item|... --name N",
    summary: "Creates a custom-field definition for one record kind.",
    output: '{"custom_field_id"}',
    flags: ["account", "kind", "name"],
    prepare: (f) => {
      const input = { accountId: f.id("account", true), kind: f.required("kind"), name: f.required("name") };
      f.check((c) => {
        c.customFieldKind(input.kind);
        c.name(input.name);
      });
      return async (admin) => ({ ...(await admin.createCustomField(input)) });
    },
  },
  {
    name: "customer-label create",
    synopsis: "--account ID --name N",
    summary: "Creates a customer label.",
    output: '{"customer_label_id"}',
    flags: ["account", "name"],
    prepare: (f) => {
      const input = { accountId: f.id("account", true), name: f.required("name") };
      f.check((c) => c.name(input.name));
      return async (admin) => ({ ...(await admin.createCustomerLabel(input)) });
    },
  },
  {
    name: "pricing-tier create",
    synopsis: "--account ID --name N",
    summary: "Creates a pricing tier.",
    output: '{"pricing_tier_id"}',
    flags: ["account", "name"],
    prepare: (f) => {
      const input = { accountId: f.id("account", true), name: f.required("name") };
      f.check((c) => c.name(input.name));
      return async (admin) => ({ ...(await admin.createPricingTier(input)) });
    },
  },
  {
    name: "unit create",
    synopsis: "--account ID --name N",
    summary: "Adds a unit of measure (unit_id comes from the account's sequence).",
    output: '{"unit_id"}',
    flags: ["account", "name"],
    prepare: (f) => {
      const input = { accountId: f.id("account", true), name: f.required("name") };
      f.check((c) => c.name(input.name));
      return async (admin) => ({ ...(await admin.createUnit(input)) });
    },
  },
  {
    name: "item create",
    synopsis: "--account ID --name N [--sku S] [--price P] [--cost C] [--category ID] [--unit UNIT_ID] [--type quantity|unique]",
    summary: "Creates an item, as POST /items does.",
    output: '{"item_id"}',
    flags: ["account", "name", "sku", "price", "cost", "category", "unit", "type"],
    prepare: (f) => {
      const unit = f.get("unit");
      if (unit !== undefined && !/^\d+$/.test(unit)) throw new UsageError("--unit takes a unit_id (a whole number).");
      const input = {
        accountId: f.id("account", true),
        name: f.required("name"),
        sku: f.get("sku"),
        price: f.get("price"),
        cost: f.get("cost"),
        categoryId: f.id("category"),
        unitId: unit === undefined ? undefined : Number(unit),
        inventoryType: f.oneOf("type", ["quantity", "unique"] as const),
      };
      f.check((c) => c.item(input));
      return async (admin) => ({ ...(await admin.createItemAsOperator(input)) });
    },
  },
  {
    name: "kit create",
    synopsis: "--account ID --item ITEM_ID --components ITEM_ID:QTY[:VARIATION_ID][,ITEM_ID:QTY[:VARIATION_ID]...] [--method manual|automatic]",
    summary: "Stores a kit definition numbered from the account's kit sequence (kits cannot be defined through the API); at most 25 components, in order.",
    output: '{"kit_id"}',
    flags: ["account", "item", "components", "method"],
    prepare: (f) => {
      const components = f
        .required("components")
        .split(",")
        .map((part) => {
          const match = /^([0-9a-fA-F-]{36}):(\d+(?:\.\d+)?)(?::([0-9a-fA-F-]{36}))?$/.exec(part.trim());
          if (!match) throw new UsageError(`--components takes ITEM_ID:QTY or ITEM_ID:QTY:VARIATION_ID: ${part}.`);
          return { itemId: match[1]!.toLowerCase(), quantity: Number(match[2]), ...(match[3] ? { variationId: match[3].toLowerCase() } : {}) };
        });
      const input = { accountId: f.id("account", true), itemId: f.id("item", true), components, method: f.oneOf("method", ["manual", "automatic"] as const) };
      f.check((c) => c.kit(input));
      return async (admin) => ({ ...(await admin.createKit(input)) });
    },
  },
  {
    name: "directory rebuild",
    synopsis: "",
    summary:
      "Writes the directory that finds users, keys and accounts by id (once, for a table written before it existed: the only command that scans the table). Safe to repeat.",
    output: '{"accounts","users","keys"}',
    flags: [],
    prepare: () => async (admin) => ({ ...(await admin.rebuildDirectory()) }),
  },
  {
    name: "estimates index-expiries",
    synopsis: "",
    summary:
      "Puts the open estimates written before the estimate expiry index existed into it (once, after the deploy that adds it; a Scan), so the change feed marks each when it turns Expired. Each indexed estimate gets one upsert marker. Safe to repeat.",
    output: '{"indexed"}',
    flags: [],
    prepare: () => async (admin) => ({ ...(await admin.indexEstimateExpiries()) }),
  },
  {
    name: "table prepare-restored",
    synopsis: "--table NAME",
    summary:
      "Makes a table restored from a point-in-time backup ready for the stack: enables its stream, TTL, point-in-time recovery and deletion protection (each only when missing); prints the stack parameters to deploy with.",
    output: '{"table_name","stream_arn","time_to_live","point_in_time_recovery","deletion_protection","indexes","changed"}',
    flags: ["table"],
    prepare: (f) => {
      const table = f.required("table");
      if (!/^[A-Za-z0-9_.-]{3,255}$/.test(table)) throw new UsageError(`--table takes a DynamoDB table name (3-255 of A-Z a-z 0-9 _ . -): ${table}.`);
      return async (admin) => ({ ...(await admin.prepareRestoredTable(table)) });
    },
    print: (result) =>
      [
        `table ${result.table_name} is ready for the stack:`,
        `  stream_arn: ${result.stream_arn}`,
        `  time_to_live: ${result.time_to_live}`,
        `  point_in_time_recovery: ${result.point_in_time_recovery}`,
        `  deletion_protection: ${result.deletion_protection}`,
        `  indexes: ${(result.indexes as string[]).join(", ")}`,
        `  changed: ${(result.changed as string[]).length === 0 ? "nothing (it was ready)" : (result.changed as string[]).join("; ")}`,
        "",
        "Next, point the stack at it (docs/operations.md, Restoring the table from a point in time):",
        `  npx cdk deploy --parameters ExistingTableName=${result.table_name} --parameters ExistingTableStreamArn=${result.stream_arn}`,
      ].join("\n"),
  },
  {
    name: "scopes",
    synopsis: "",
    summary: "Lists every API key scope and what it lets a key call (no database needed).",
    output: '{"scopes":[{"name","description"}]}',
    flags: [],
    database: false,
    prepare: () => async () => ({ scopes: SCOPES.map((name) => ({ name, description: SCOPE_DESCRIPTIONS[name] })) }),
    print: (result) =>
      [
        describedTable(["scope", "what it lets a key do"], result.scopes as Described),
        "",
        "A key created with --scopes all (the default) holds every scope.",
        "A key also needs its user's permissions (see: permissions).",
      ].join("\n"),
  },
  {
    name: "permissions",
    synopsis: "",
    summary: "Lists every user permission and the user settings that limit a user, with what each grants (no database needed).",
    output: '{"permissions":[{"name","description"}],"user_settings":[{"name","description"}]}',
    flags: [],
    database: false,
    prepare: () => async () => ({
      permissions: PERMISSIONS.map((name) => ({ name, description: PERMISSION_DESCRIPTIONS[name] })),
      user_settings: Object.entries(USER_SETTING_DESCRIPTIONS).map(([name, description]) => ({ name, description })),
    }),
    print: (result) =>
      [
        describedTable(["permission", "what it grants"], result.permissions as Described),
        "",
        describedTable(["user setting", "what it does"], result.user_settings as Described),
        "",
        "An API key also needs the route's scope (see: scopes).",
      ].join("\n"),
  },
];

const GROUPS = [...new Set(COMMANDS.map((c) => c.name.split(" ")[0]!))];

function overview(): string {
  const width = Math.max(...COMMANDS.map((c) => c.name.length));
  return [
    "Usage: npm run -s admin -- <command> [options] [--json]",
    "",
    "Commands:",
    ...COMMANDS.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`),
    "",
    "Options of every command:",
    '  --json   print exactly one JSON object on stdout (errors too: {"error": {"code", "message"}})',
    "  --help   show a command's options",
    "",
    "`npm run -s admin -- <command> --help` shows the command's options. It uses DYNAMODB_ENDPOINT,",
    "else DYNAMODB_PORT when set (an error when nothing answers there), else the DynamoDB of the local",
    "stack running on DATA_DIR, else port 8000, else starts DynamoDB Local on DATA_DIR (never while",
    "something else has it open). On a DynamoDB it did not start, TABLE_NAME's table must exist.",
  ].join("\n");
}

function commandHelp(command: Command): string {
  return [
    `Usage: npm run -s admin -- ${command.name}${command.synopsis ? ` ${command.synopsis}` : ""} [--json]`,
    "",
    command.summary,
    "",
    `--json prints: ${command.output}`,
  ].join("\n");
}

interface Parsed {
  words: string[];
  values: Map<string, string>;
  /** Flags given without a value (reported once the command is known: an unknown flag says so first). */
  missing: string[];
  json: boolean;
  help: boolean;
}

function parseArgs(argv: string[]): Parsed {
  const words: string[] = [];
  const values = new Map<string, string>();
  const missing: string[] = [];
  let json = false;
  let help = false;
  let problem: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === "--json") json = true;
    else if (arg === "--help" || arg === "-h") help = true;
    else if (arg.startsWith("--")) {
      const equals = arg.indexOf("=");
      const name = equals === -1 ? arg.slice(2) : arg.slice(2, equals);
      let value: string | undefined;
      if (equals !== -1) value = arg.slice(equals + 1);
      else if (i + 1 < argv.length && !argv[i + 1]!.startsWith("--")) value = argv[++i];
      if (value === undefined) missing.push(name);
      else if (values.has(name)) problem ??= `--${name} is given twice.`;
      else values.set(name, value);
    } else if (arg.startsWith("-") && arg !== "-") problem ??= `Unknown option ${arg}.`;
    else words.push(arg);
  }
  // Problems are reported after the whole line is read, so --json and --help still count.
  if (problem) throw Object.assign(new UsageError(problem), { parsed: { words, values, missing, json, help } });
  return { words, values, missing, json, help };
}

const wordsOf = (command: Command) => command.name.split(" ").length;

function findCommand(words: string[]): Command | undefined {
  return COMMANDS.find((c) => c.name === words.slice(0, wordsOf(c)).join(" "));
}

/** Help for what the words name: a command, a group's commands, or everything. */
function helpFor(words: string[]): string {
  const command = findCommand(words);
  if (command) return commandHelp(command);
  const group = COMMANDS.filter((c) => c.name.split(" ")[0] === words[0]);
  if (group.length > 0)
    return [
      `Commands of ${words[0]}:`,
      ...group.map((c) => `  ${c.name} ${c.synopsis.split("\n")[0]}`.trimEnd()),
      "",
      "Add --help to a command for its options.",
    ].join("\n");
  return overview();
}

/** The command the words name, with only its own flags: checked without loading any domain code. */
function resolveCommand(parsed: Parsed): Command {
  const { words, values } = parsed;
  if (words.length === 0) throw new UsageError("No command given.");
  const command = findCommand(words);
  if (!command) {
    const known = GROUPS.includes(words[0]!)
      ? ` ${words[0]} takes: ${COMMANDS.filter((c) => c.name.startsWith(`${words[0]} `))
          .map((c) => c.name.split(" ")[1])
          .join(", ")}.`
      : "";
    throw new UsageError(`Unknown command: ${words.join(" ")}.${known}`);
  }
  if (words.length > wordsOf(command)) throw new UsageError(`Unexpected argument: ${words[wordsOf(command)]}.`);
  for (const name of [...values.keys(), ...parsed.missing]) {
    if (!command.flags.includes(name)) throw new UsageError(`Unknown option --${name} for ${command.name} (see ${command.name} --help).`);
  }
  if (parsed.missing.length > 0) throw new UsageError(`--${parsed.missing[0]} needs a value.`);
  return command;
}

/** What connect() started for this command, stopped when it ends. */
interface OwnDatabase {
  stop: () => Promise<void>;
}

/** The DynamoDB of the process that holds DATA_DIR's lock, or why it cannot be used. */
async function useLockHolder(dataDir: string, held: DataDirLockInfo): Promise<void> {
  if (held.holder === "admin CLI") {
    throw new DatabaseUnavailable(
      `Another admin command (pid ${held.pid}) has DATA_DIR ${dataDir} open with its own DynamoDB Local; run this one again when it has finished.`,
    );
  }
  if (!(await portAnswers(held.dynamodb_port))) {
    throw new DatabaseUnavailable(
      `The local stack (npm start, pid ${held.pid}) has DATA_DIR ${dataDir} open, but its DynamoDB Local on port ${held.dynamodb_port} does not answer ` +
        "(still starting?). Run the command again once it prints `listening on`, or stop it; a second DynamoDB Local on its data would break it.",
    );
  }
  applyLocalEnvironment(`http://127.0.0.1:${held.dynamodb_port}`, ADMIN_ENV);
}

/** The admin CLI signs no cursor: it never creates the local cursor secret. */
const ADMIN_ENV = { createCursorSecret: false } as const;

async function connect(): Promise<OwnDatabase | undefined> {
  const configured = process.env.DYNAMODB_ENDPOINT;
  if (configured === "aws") {
    delete process.env.DYNAMODB_ENDPOINT;
    return undefined;
  }
  if (configured) {
    applyLocalEnvironment(configured, ADMIN_ENV);
    return undefined;
  }
  const portIsSet = process.env.DYNAMODB_PORT !== undefined;
  const port = localEnv.dynamoPort();
  const dataDir = localEnv.dataDir();
  if (portIsSet) {
    // The operator named a DynamoDB: never another one in its place (a stack that died would
    // otherwise send the command to DATA_DIR's data without a word).
    if (!(await portAnswers(port))) {
      throw new DatabaseUnavailable(`No DynamoDB listens on DYNAMODB_PORT=${port}; start that stack, or leave DYNAMODB_PORT unset to use DATA_DIR ${dataDir}.`);
    }
    applyLocalEnvironment(`http://127.0.0.1:${port}`, ADMIN_ENV);
    return undefined;
  }
  const held = dataDir === "memory" ? undefined : liveDataDirLock(dataDir);
  if (held) {
    await useLockHolder(dataDir, held);
    return undefined;
  }
  if (await portAnswers(port)) {
    applyLocalEnvironment(`http://127.0.0.1:${port}`, ADMIN_ENV);
    return undefined;
  }
  if (dataDir === "memory") {
    throw new DatabaseUnavailable(`No DynamoDB listens on port ${port}; start the local stack (npm start) first, or set DYNAMODB_PORT.`);
  }
  const dynamoPort = await freePort();
  const claimed = acquireDataDirLock(dataDir, { holder: "admin CLI", dynamodb_port: dynamoPort });
  if ("heldBy" in claimed) {
    // A stack started on DATA_DIR since the check above.
    await useLockHolder(dataDir, claimed.heldBy);
    return undefined;
  }
  try {
    const local = await startDynamoLocal({ port: dynamoPort, dataDir });
    applyLocalEnvironment(local.endpoint, ADMIN_ENV);
    return {
      stop: async () => {
        await local.stop();
        claimed.lock.release();
      },
    };
  } catch (error) {
    claimed.lock.release();
    throw new DatabaseUnavailable((error as Error).message);
  }
}

/** The AWS SDK's error inside ElectroDB's wrapper (its `cause`), else the error itself. */
function awsErrorOf(error: unknown): Error | undefined {
  let current = error as (Error & { cause?: unknown }) | undefined;
  for (let depth = 0; current && depth < 5; depth++) {
    if (AWS_ACCESS_ERRORS.includes(current.name)) return current;
    current = current.cause as (Error & { cause?: unknown }) | undefined;
  }
  return undefined;
}

const AWS_ACCESS_ERRORS = ["ResourceNotFoundException", "CredentialsProviderError", "UnrecognizedClientException", "AccessDeniedException"];

function errorCode(error: unknown): { code: string; exit: number } {
  if (error instanceof UsageError) return { code: "invalid_arguments", exit: 2 };
  if (error instanceof DatabaseUnavailable) return { code: "database_unavailable", exit: 1 };
  if (error instanceof AdminError) return { code: /^No such /.test(error.message) ? "not_found" : "invalid_input", exit: 1 };
  const name = (error as Error)?.name ?? "";
  const cause = (error as { code?: string })?.code ?? "";
  if (/ECONNREFUSED|ECONNRESET|ETIMEDOUT|ENOTFOUND|Region is missing/.test(`${cause} ${(error as Error)?.message}`) || name === "TimeoutError") {
    return { code: "database_unavailable", exit: 1 };
  }
  // Against AWS: a wrong table or region, or no credentials, is the database being unreachable.
  if (awsErrorOf(error)) return { code: "database_unavailable", exit: 1 };
  return { code: "internal_error", exit: 1 };
}

/** The message of a failure, with what to check when it came from AWS. */
function messageOf(error: unknown): string {
  // The domain's own message already says what is wrong (its cause may be an AWS error).
  if (error instanceof AdminError) return error.message;
  const aws = awsErrorOf(error);
  const message = aws?.message ?? (error as Error)?.message ?? String(error);
  const name = aws?.name ?? "";
  const table = process.env.TABLE_NAME ?? "(TABLE_NAME unset)";
  const region = process.env.AWS_REGION ?? process.env.AWS_DEFAULT_REGION ?? "(AWS_REGION unset)";
  if (name === "ResourceNotFoundException")
    return `${message}: no table ${table} in region ${region}; set TABLE_NAME to the stack's TableName output and AWS_REGION to its region.`;
  if (name === "CredentialsProviderError")
    return `${message}: no AWS credentials found; configure them (AWS_PROFILE, or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY).`;
  if (name === "UnrecognizedClientException" || name === "AccessDeniedException")
    return `${message}: the AWS credentials are invalid or lack access to table ${table} in ${region}.`;
  if (/Region is missing/.test(message)) return "No AWS region is set (the AWS SDK says: Region is missing): set AWS_REGION to the stack's region.";
  return message;
}

function printResult(io: AdminIo, command: Command, result: Result, json: boolean): void {
  if (json) {
    io.out(`${JSON.stringify(result)}\n`);
    return;
  }
  if (command.print) {
    io.out(`${command.print(result)}\n`);
    return;
  }
  for (const [key, value] of Object.entries(result)) {
    if (Array.isArray(value)) {
      io.out(`${key}: ${value.length}\n`);
      for (const row of value) {
        const fields = Object.entries(row as Record<string, unknown>)
          .filter(([, v]) => v !== null && !(Array.isArray(v) && v.length === 0))
          .map(([k, v]) => `${k}=${Array.isArray(v) ? v.join(",") : String(v)}`);
        io.out(`  ${fields.join("  ")}\n`);
      }
    } else {
      io.out(`${key}: ${value}\n`);
    }
  }
}

/** Where the CLI writes: standard output (results, `--json` objects) and standard error. */
export interface AdminIo {
  out(text: string): void;
  err(text: string): void;
}

const PROCESS_IO: AdminIo = { out: (text) => process.stdout.write(text), err: (text) => process.stderr.write(text) };

/**
 * Runs one CLI command (`args`: what follows `npm run -s admin --`) and returns its exit code:
 * 0, 1 (a failure) or 2 (an argument error). scripts/admin/cli.ts runs it for the process;
 * the tests run it in their own process with `io` capturing the output.
 */
export async function runAdminCli(args: readonly string[], io: AdminIo = PROCESS_IO): Promise<number> {
  let parsed: Parsed;
  let parseProblem: UsageError | undefined;
  try {
    parsed = parseArgs([...args]);
  } catch (error) {
    parseProblem = error as UsageError;
    parsed = (error as UsageError & { parsed: Parsed }).parsed;
  }
  const { json } = parsed;
  const fail = (error: unknown): number => {
    const { code, exit } = errorCode(error);
    const message = messageOf(error);
    if (json) io.out(`${JSON.stringify({ error: { code, message } })}\n`);
    else io.err(`error: ${message}\n${code === "invalid_arguments" ? "Run with --help for usage.\n" : ""}`);
    return exit;
  };

  if (parsed.help || parsed.words[0] === "help") {
    const words = parsed.words[0] === "help" ? parsed.words.slice(1) : parsed.words;
    // Help for a command that does not exist is an argument error like the command itself.
    if (words.length > 0 && !findCommand(words) && !COMMANDS.some((c) => c.name.split(" ")[0] === words[0])) {
      return fail(new UsageError(`Unknown command: ${words.join(" ")}.`));
    }
    const text = helpFor(words);
    if (json) io.out(`${JSON.stringify({ help: text })}\n`);
    else io.out(`${text}\n`);
    return 0;
  }
  if (parseProblem) return fail(parseProblem);
  if (parsed.words.length === 0 && !json) {
    io.err(`${overview()}\n`);
    return 2;
  }

  // Every argument is checked before any database is started or contacted.
  let command: Command;
  try {
    command = resolveCommand(parsed);
  } catch (error) {
    return fail(error);
  }
  const admin: Admin = await import("../../lib/domain/admin/service.js");
  let action: Action;
  try {
    action = command.prepare(new Flags(parsed.values, admin));
  } catch (error) {
    return fail(error instanceof AdminError ? new UsageError(error.message) : error);
  }

  if (command.database === false) {
    printResult(io, command, await action(admin), json);
    return 0;
  }
  let local: OwnDatabase | undefined;
  try {
    local = await connect();
    const { ensureTable, missingTable } = await import("../../lib/db/create-table.js");
    const { createDynamoClient } = await import("../../lib/db/client.js");
    const { tableName } = await import("../../lib/db/table.js");
    if (process.env.DYNAMODB_ENDPOINT) {
      const client = createDynamoClient();
      let missing: { others: string[] } | undefined;
      try {
        // Its own DynamoDB Local on DATA_DIR: the table is made as npm start makes it. Another's
        // (a running stack, an endpoint): the table must be there; a TABLE_NAME that differs
        // from the stack's would otherwise write where the API never reads.
        if (local) await ensureTable(client, tableName());
        else missing = await missingTable(client, tableName());
      } catch (error) {
        throw new DatabaseUnavailable(`DynamoDB at ${process.env.DYNAMODB_ENDPOINT} did not answer: ${(error as Error).message}`);
      } finally {
        client.destroy();
      }
      if (missing) {
        const others = missing.others.length > 0 ? `it has ${missing.others.join(", ")}` : "it has no table";
        throw new DatabaseUnavailable(
          `DynamoDB at ${process.env.DYNAMODB_ENDPOINT} has no table ${tableName()} (${others}); set TABLE_NAME to the table the stack uses, or start the stack first (npm start makes its table).`,
        );
      }
    }
    printResult(io, command, await action(admin), json);
    return 0;
  } catch (error) {
    return fail(error);
  } finally {
    await local?.stop();
  }
}
