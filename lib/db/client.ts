import { DynamoDBClient, type DynamoDBClientConfig } from "@aws-sdk/client-dynamodb";
import { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import { localDynamo } from "../core/config.js";
import { currentDbUsage } from "./metrics.js";

interface CapacityEntry {
  CapacityUnits?: number;
  ReadCapacityUnits?: number;
  WriteCapacityUnits?: number;
}

function addCapacity(output: Record<string, unknown> | undefined, commandName: string): void {
  const usage = currentDbUsage();
  if (!usage) return;
  usage.calls += 1;
  usage.commands.push(commandName.replace(/Command$/, ""));
  const consumed = output?.ConsumedCapacity as CapacityEntry | CapacityEntry[] | undefined;
  const entries = Array.isArray(consumed) ? consumed : consumed ? [consumed] : [];
  for (const entry of entries) {
    const reads = entry.ReadCapacityUnits ?? 0;
    const writes = entry.WriteCapacityUnits ?? 0;
    if (reads || writes) {
      usage.readCapacity += reads;
      usage.writeCapacity += writes;
    } else if (entry.CapacityUnits) {
      // Single-item calls report only a total; attribute it by the command's kind.
      if (/Get|Query|Scan/.test(commandName)) usage.readCapacity += entry.CapacityUnits;
      else usage.writeCapacity += entry.CapacityUnits;
    }
  }
}

function clientConfig(): DynamoDBClientConfig {
  const local = localDynamo();
  if (!local) return { maxAttempts: 3 };
  return {
    endpoint: local.endpoint,
    region: local.region,
    // DynamoDB Local accepts any credentials; letters and digits only.
    credentials: { accessKeyId: "local", secretAccessKey: "local" },
    maxAttempts: 3,
  };
}

/**
 * Builds the DynamoDB client used everywhere. Every call asks for consumed capacity and is
 * counted into the usage of the request that made it (see `withDbUsage`).
 */
export function createDynamoClient(): DynamoDBClient {
  const client = new DynamoDBClient(clientConfig());
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const input = args.input as Record<string, unknown>;
      if (input && !("ReturnConsumedCapacity" in input)) input.ReturnConsumedCapacity = "TOTAL";
      try {
        const result = await next(args);
        addCapacity(result.output as unknown as Record<string, unknown>, String(context.commandName));
        return result;
      } catch (error) {
        addCapacity(undefined, String(context.commandName));
        throw error;
      }
    },
    { step: "initialize", name: "countDynamoUsage" },
  );
  return client;
}

let documentClient: DynamoDBDocumentClient | undefined;

/**
 * How a stored number reads: a JS number, except an integer beyond 2^53 (a customer's lifetime
 * revenue in ten-thousandths, which DynamoDB ADDs exactly, may grow there), which reads as its
 * exact digits, a string, instead of failing the read. `moneyFromMinor` takes either.
 */
export function readNumber(value: string): number | string {
  const number = Number(value);
  return Number.isInteger(number) && !Number.isSafeInteger(number) ? value : number;
}

/** The shared document client (created on first use so a handler's import does no work). */
export function getDocumentClient(): DynamoDBDocumentClient {
  documentClient ??= DynamoDBDocumentClient.from(createDynamoClient(), {
    marshallOptions: { removeUndefinedValues: true, convertEmptyValues: false },
    unmarshallOptions: { wrapNumbers: readNumber },
  });
  return documentClient;
}
