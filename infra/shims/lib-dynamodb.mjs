/**
 * Stands in for `@aws-sdk/lib-dynamodb` in Lambda bundles (infra/bundling.ts aliases it).
 * ElectroDB loads the package with `require`, which keeps every export (and so every command of
 * `@aws-sdk/client-dynamodb`) in a bundle. This module exports only what ElectroDB and lib/db
 * use, so the bundler drops the rest. Each name comes from the package's own ES module build
 * (a relative path, which the alias does not rewrite).
 */
export {
  BatchGetCommand,
  BatchWriteCommand,
  DeleteCommand,
  DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  ScanCommand,
  TransactGetCommand,
  TransactWriteCommand,
  UpdateCommand,
} from "../../node_modules/@aws-sdk/lib-dynamodb/dist-es/index.js";
