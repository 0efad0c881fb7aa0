/**
 * A cost model per million requests, from what `npm run bench` measures per route (duration,
 * read and write capacity units, log bytes) and list prices.
 *
 * Prices assumed: AWS us-east-1 list prices, as of 2026-11-23 (the DynamoDB on-demand figures are
 * those in force since the 2024-11-01 reduction). No free tier, no Savings Plans, the first
 * volume tier of each service. Re-check https://aws.amazon.com/api-gateway/pricing/,
 * https://aws.amazon.com/lambda/pricing/, https://aws.amazon.com/dynamodb/pricing/on-demand/ and
 * https://aws.amazon.com/cloudwatch/pricing/ before relying on them.
 */
export const PRICES = {
  region: "us-east-1",
  asOf: "2026-11-23",
  /** API Gateway HTTP API, per million requests (first 300 million a month; 512 KB metering steps). */
  apiGatewayHttpPerMillion: 1.0,
  /** Lambda arm64, per GB-second of duration (first 7.5 billion GB-s a month); billed in 1 ms steps. */
  lambdaArmPerGbSecond: 0.0000133334,
  /** Lambda, per million invocations. */
  lambdaPerMillionRequests: 0.2,
  /** DynamoDB on-demand, per million read request units (4 KB strongly consistent; eventually consistent 0.5). */
  dynamoReadPerMillionUnits: 0.125,
  /** DynamoDB on-demand, per million write request units (1 KB; transactional writes cost 2 per KB). */
  dynamoWritePerMillionUnits: 0.625,
  /** CloudWatch Logs, per GB ingested (standard class, first tier). */
  logsPerGbIngested: 0.5,
} as const;

export type Prices = { [K in keyof typeof PRICES]: (typeof PRICES)[K] extends number ? number : string };

/** What one request of a route costs in resources. */
export interface RequestProfile {
  name: string;
  /** Billed duration of the Lambda invocation, in milliseconds (rounded up to the next ms). */
  durationMs: number;
  memoryMb: number;
  /** DynamoDB read request units consumed by the whole request (auth included). */
  readUnits: number;
  /** DynamoDB write request units consumed by the whole request (the auth rate window included). */
  writeUnits: number;
  /** Bytes written to CloudWatch Logs per request (function and access logs). */
  logBytes: number;
  /** Set when a figure is modelled rather than measured: says how. */
  modelled?: string;
}

/** Dollars per million requests, by component. */
export interface CostPerMillion {
  apiGateway: number;
  lambdaRequests: number;
  lambdaDuration: number;
  dynamoReads: number;
  dynamoWrites: number;
  logs: number;
  total: number;
}

/** Lambda memory the API functions are deployed with (infra/stack.ts). */
export const API_FUNCTION_MEMORY_MB = 1024;

/**
 * Log bytes per request besides the function's own request line (estimated): Lambda's JSON
 * platform.start (~120 B) and platform.report (~230 B) events, the API stage's access log line
 * (~330 B), and CloudWatch's 26 B of metadata per event.
 */
export const PLATFORM_AND_ACCESS_LOG_BYTES = 760;

/** Write request units of one TransactWriteItems: 2 per started KB of each item. */
export function transactionWriteUnits(items: number, itemKb: number): number {
  return items * 2 * Math.ceil(itemKb);
}

export function costPerMillion(profile: RequestProfile, prices: Prices = PRICES): CostPerMillion {
  const billedSeconds = Math.ceil(profile.durationMs) / 1000;
  const gbSeconds = (profile.memoryMb / 1024) * billedSeconds;
  const cost = {
    apiGateway: prices.apiGatewayHttpPerMillion,
    lambdaRequests: prices.lambdaPerMillionRequests,
    lambdaDuration: gbSeconds * 1_000_000 * prices.lambdaArmPerGbSecond,
    dynamoReads: profile.readUnits * prices.dynamoReadPerMillionUnits,
    dynamoWrites: profile.writeUnits * prices.dynamoWritePerMillionUnits,
    // 1e6 requests x bytes = bytes per million; CloudWatch bills GB of 2^30 bytes.
    logs: ((profile.logBytes * 1_000_000) / 2 ** 30) * prices.logsPerGbIngested,
  };
  return { ...cost, total: Object.values(cost).reduce((sum, value) => sum + value, 0) };
}

const dollars = (value: number) => `$${value.toFixed(value < 10 ? 3 : 2)}`;

/** A markdown table of the cost per million requests of each profile, with the prices and notes. */
export function costTable(profiles: readonly RequestProfile[], prices: Prices = PRICES): string {
  const lines = [
    `Modelled AWS cost per million requests (${prices.region} list prices as of ${prices.asOf}; no free tier)`,
    `Prices: API Gateway HTTP API $${prices.apiGatewayHttpPerMillion}/M requests; Lambda arm64 $${prices.lambdaArmPerGbSecond}/GB-s + $${prices.lambdaPerMillionRequests}/M requests; ` +
      `DynamoDB on-demand $${prices.dynamoReadPerMillionUnits}/M RRU, $${prices.dynamoWritePerMillionUnits}/M WRU; CloudWatch Logs $${prices.logsPerGbIngested}/GB ingested.`,
    "| request | ms | MB | RRU | WRU | log B | API GW | Lambda req | Lambda GB-s | DDB reads | DDB writes | logs | total |",
    "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
  ];
  for (const profile of profiles) {
    const cost = costPerMillion(profile, prices);
    lines.push(
      `| ${profile.name}${profile.modelled ? " (modelled)" : ""} | ${Math.ceil(profile.durationMs)} | ${profile.memoryMb} | ${round(profile.readUnits)} | ${round(profile.writeUnits)} | ${Math.round(profile.logBytes)} | ` +
        `${dollars(cost.apiGateway)} | ${dollars(cost.lambdaRequests)} | ${dollars(cost.lambdaDuration)} | ${dollars(cost.dynamoReads)} | ${dollars(cost.dynamoWrites)} | ${dollars(cost.logs)} | **${dollars(cost.total)}** |`,
    );
  }
  for (const profile of profiles.filter((p) => p.modelled)) lines.push(`- ${profile.name}: ${profile.modelled}`);
  return `${lines.join("\n")}\n`;
}

const round = (value: number) => Math.round(value * 100) / 100;
