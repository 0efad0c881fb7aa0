import { describe, expect, it } from "vitest";
import { PRICES, costPerMillion, costTable, transactionWriteUnits, type RequestProfile } from "../../scripts/bench/cost-model.js";

const profile: RequestProfile = { name: "GET /x", durationMs: 20, memoryMb: 1024, readUnits: 3, writeUnits: 2, logBytes: 0 };

describe("cost model", () => {
  it("states us-east-1 prices and their date", () => {
    expect(PRICES).toMatchObject({
      region: "us-east-1",
      apiGatewayHttpPerMillion: 1,
      lambdaArmPerGbSecond: 0.0000133334,
      lambdaPerMillionRequests: 0.2,
      dynamoReadPerMillionUnits: 0.125,
      dynamoWritePerMillionUnits: 0.625,
    });
    expect(PRICES.asOf).toMatch(/^\d{4}-\d{2}-\d{2}$/);
  });

  it("prices a million requests: API Gateway, Lambda requests and GB-seconds, DynamoDB units", () => {
    const cost = costPerMillion(profile);
    expect(cost.apiGateway).toBe(1);
    expect(cost.lambdaRequests).toBe(0.2);
    // 1 GB x 0.020 s x 1e6 = 20,000 GB-s
    expect(cost.lambdaDuration).toBeCloseTo(20_000 * 0.0000133334, 10);
    expect(cost.dynamoReads).toBeCloseTo(0.375, 10);
    expect(cost.dynamoWrites).toBeCloseTo(1.25, 10);
    expect(cost.logs).toBe(0);
    expect(cost.total).toBeCloseTo(1 + 0.2 + 0.266668 + 0.375 + 1.25, 6);
  });

  it("bills Lambda duration in whole milliseconds, rounded up, and scales with memory", () => {
    expect(costPerMillion({ ...profile, durationMs: 12.1 }).lambdaDuration).toBeCloseTo(13_000 * 0.0000133334, 10);
    expect(costPerMillion({ ...profile, memoryMb: 512 }).lambdaDuration).toBeCloseTo(10_000 * 0.0000133334, 10);
  });

  it("prices log ingestion per GB (2^30 bytes)", () => {
    expect(costPerMillion({ ...profile, logBytes: 1074 }).logs).toBeCloseTo(((1074 * 1e6) / 2 ** 30) * 0.5, 10);
  });

  it("models a 100-item transaction of ~1 KB items at 2 WRU per KB per item", () => {
    expect(transactionWriteUnits(100, 1)).toBe(200);
    expect(transactionWriteUnits(100, 0.6)).toBe(200);
    expect(transactionWriteUnits(10, 1.5)).toBe(40);
    expect(costPerMillion({ ...profile, readUnits: 0, writeUnits: transactionWriteUnits(100, 1) }).dynamoWrites).toBeCloseTo(125, 10);
  });

  it("prints the prices, the date and a row per profile, marking modelled ones", () => {
    const table = costTable([profile, { ...profile, name: "doc", modelled: "from a 100-item transaction" }]);
    expect(table).toContain("us-east-1");
    expect(table).toContain(PRICES.asOf);
    expect(table).toContain("| GET /x | 20 | 1024 | 3 | 2 | 0 |");
    expect(table).toContain("**$3.092**");
    expect(table).toContain("doc (modelled)");
    expect(table).toContain("- doc: from a 100-item transaction");
  });
});
