import { inject } from "vitest";

// Connected tests refuse to run without the suite's DynamoDB Local (never a mock).
const endpoint = inject("dynamoEndpoint");
if (!endpoint) throw new Error("Integration tests need the DynamoDB Local endpoint from the global setup.");
process.env.DYNAMODB_ENDPOINT = endpoint;
