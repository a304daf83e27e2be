import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, TransactWriteCommand, type TransactWriteCommandInput } from '@aws-sdk/lib-dynamodb';
import { isDependencyFailure } from '#shared/aws/faults';
import { wire } from '#shared/aws/wire';
import { config } from '#shared/config';
import { recordCapacity } from '#shared/db/capacity';

let documentClient: DynamoDBDocumentClient | undefined;
let rawClient: DynamoDBClient | undefined;

/** The plain client, for libraries that want one (Powertools idempotency). */
export function rawDb(): DynamoDBClient {
  if (!rawClient) {
    const endpoint = config.dynamodbEndpoint;
    rawClient = recordCapacity(new DynamoDBClient({ ...wire('dynamodb'), ...(endpoint ? { endpoint } : {}) }));
  }
  return rawClient;
}

/** One client per container, created on first use so that tests and the local host can set the endpoint first. */
export function db(): DynamoDBDocumentClient {
  if (!documentClient) {
    documentClient = DynamoDBDocumentClient.from(rawDb(), {
      marshallOptions: { removeUndefinedValues: true, convertClassInstanceToMap: false },
    });
  }
  return documentClient;
}

/** The main table's name, read when first needed (fails loudly if the variable is missing). */
export const mainTableName = (): string => process.env['MAIN_TABLE'] ?? missing('MAIN_TABLE');
export const connectionsTableName = (): string => process.env['CONNECTIONS_TABLE'] ?? missing('CONNECTIONS_TABLE');
export const locationsTableName = (): string => process.env['LOCATIONS_TABLE'] ?? missing('LOCATIONS_TABLE');

function missing(name: string): never {
  throw new Error(`missing required environment variable ${name}`);
}

/** A condition did not hold (a domain outcome). A transaction cancelled by throttling or a conflict is not one. */
export function isConditionalFailure(error: unknown): boolean {
  const name = (error as { name?: string } | undefined)?.name;
  if (name === 'ConditionalCheckFailedException') return true;
  return name === 'TransactionCanceledException' && !isDependencyFailure(error);
}

/** For a cancelled transaction: which of its items failed their condition (by index). */
export function cancelledIndexes(error: unknown): number[] {
  const reasons = (error as { CancellationReasons?: { Code?: string }[] }).CancellationReasons ?? [];
  return reasons.flatMap((reason, index) => (reason.Code === 'ConditionalCheckFailed' ? [index] : []));
}

/** True when a transaction was cancelled only because another one held one of its items (transient). */
function isTransactionConflict(error: unknown): boolean {
  const reasons = (error as { CancellationReasons?: { Code?: string }[] }).CancellationReasons ?? [];
  return (
    reasons.some((reason) => reason.Code === 'TransactionConflict') &&
    !reasons.some((reason) => reason.Code === 'ConditionalCheckFailed')
  );
}

/**
 * TransactWriteItems with retries for transaction conflicts: two transactions touching one item (a shared counter,
 * say) cancel each other for a moment, which is not the caller's fault and not a 409.
 */
export async function transactWrite(items: NonNullable<TransactWriteCommandInput['TransactItems']>): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    try {
      await db().send(new TransactWriteCommand({ TransactItems: items }));
      return;
    } catch (error) {
      if (attempt >= 5 || !isTransactionConflict(error)) throw error;
      await new Promise((resolve) => setTimeout(resolve, 10 * 2 ** attempt * (0.5 + Math.random())));
    }
  }
}

export type TransactItem = NonNullable<TransactWriteCommandInput['TransactItems']>[number];
