/**
 * What DynamoDB answered, however the SDK or ElectroDB wrapped it. A leaf module (it imports
 * nothing), so the storage modules that test errors form no import cycle through it.
 */

/** Whether the error is a failed condition (`ConditionalCheckFailedException`). */
export function isConditionalFailure(error: unknown): boolean {
  return isDynamoError(error, "ConditionalCheckFailedException");
}

/** Whether DynamoDB answered `name` (e.g. `TransactionConflictException`), however ElectroDB wrapped it. */
export function isDynamoError(error: unknown, name: string): boolean {
  let current: unknown = error;
  for (let depth = 0; current && depth < 5; depth++) {
    if ((current as { name?: string }).name === name) return true;
    current = (current as { cause?: unknown }).cause;
  }
  return false;
}
