import { randomUUID } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import { type AttributeValue, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  BatchGetCommand,
  type BatchGetCommandInput,
  type BatchGetCommandOutput,
  DynamoDBDocumentClient,
  QueryCommand,
  type QueryCommandInput,
  type QueryCommandOutput,
  TransactWriteCommand,
  type TransactWriteCommandInput,
} from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { isDependencyFailure } from '#shared/aws/faults';
import { wire } from '#shared/aws/wire';
import { config } from '#shared/config';
import { recordCapacity } from '#shared/db/capacity';
import { holdsSeededId } from '#shared/ids';

let documentClient: DynamoDBDocumentClient | undefined;
let rawClient: DynamoDBClient | undefined;

/** The plain client, for libraries that want one (Powertools idempotency). */
export function rawDb(): DynamoDBClient {
  if (!rawClient) {
    const endpoint = config.dynamodbEndpoint;
    rawClient = recordCapacity(new DynamoDBClient({ ...wire('dynamodb'), ...(endpoint ? { endpoint } : {}) }));
    rawClient.middlewareStack.add(ownRetriedWrites as never, {
      step: 'serialize',
      priority: 'high',
      name: 'ownRetriedWrites',
    });
  }
  return rawClient;
}

/** The attribute a conditional update stamps with its own token (see ownRetriedWrites). */
export const WRITE_TOKEN = '_w';

type Input = Record<string, unknown> & {
  ConditionExpression?: string;
  UpdateExpression?: string;
  Item?: Record<string, unknown>;
  ExpressionAttributeNames?: Record<string, string>;
  ExpressionAttributeValues?: Record<string, unknown>;
  ReturnValues?: string;
  ReturnValuesOnConditionCheckFailure?: string;
};

/**
 * An UpdateItem asking for its old image (ALL_OLD, UPDATED_OLD) was applied, but its answer was lost and the SDK's
 * retry met the write itself: the item as it stands is the new one, the old image is gone. A caller that can go on
 * without the old image (X13's replaced fix time) catches this; any other fails loudly.
 */
export class OldImageLostError extends Error {
  override readonly name = 'OldImageLostError';
  constructor(returned: string) {
    super(`an UpdateItem asking for ${returned} was applied but its answer was lost: the old image is gone`);
  }
}

/**
 * A write whose answer was lost (the connection reset after DynamoDB had applied it) is retried by the SDK. A
 * conditional one then fails its own condition: without this, "create if absent" would answer 409 (or 500) for a
 * write that happened, and a claim would think another worker holds what it took itself; an update such as
 * `ADD attempts :one` would apply twice. So every conditional PutItem asks for the item as it stands when its
 * condition fails, and a failure on exactly our Put is our own earlier attempt. Every UpdateItem stamps the item with
 * its own token (`_w`) and adds "not already stamped by me" to its condition: its retry after a lost answer fails on
 * our token, which counts as success (an update asking for ALL_NEW gets the item as it stands). Transactions need
 * none of this: the SDK gives each one a ClientRequestToken, which makes DynamoDB treat its retries as one.
 */
// biome-ignore lint/suspicious/noExplicitAny: the middleware signature is generic over every command.
const ownRetriedWrites = (next: any, context: { commandName?: string }) => async (args: { input: Input }) => {
  const command = context.commandName;
  const input = args.input;
  const applies =
    (command === 'PutItemCommand' && input.ConditionExpression) ||
    (command === 'UpdateItemCommand' && input.UpdateExpression);
  if (!applies) return next(args);
  const token = randomUUID();
  // The document client marshals after this middleware (its input is plain values); a raw client's is marshalled.
  const marshalled = typeof Object.values(input['Key'] ?? input.Item ?? {})[0] === 'object';
  const sent: Input = { ...input, ReturnValuesOnConditionCheckFailure: 'ALL_OLD' };
  if (command === 'UpdateItemCommand' && input.UpdateExpression) {
    const expression = input.UpdateExpression;
    // The SET keyword: at the start or after whitespace, followed by whitespace (not `#set`, `:set`, `reset`).
    const set = /(^|\s)SET\s/i.exec(expression);
    const at = set ? set.index + set[0].length : 0;
    sent.UpdateExpression = set
      ? `${expression.slice(0, at)}#ownWrite = :ownWrite, ${expression.slice(at)}`
      : `SET #ownWrite = :ownWrite ${expression}`;
    sent.ExpressionAttributeNames = { ...input.ExpressionAttributeNames, '#ownWrite': WRITE_TOKEN };
    sent.ExpressionAttributeValues = {
      ...input.ExpressionAttributeValues,
      ':ownWrite': marshalled ? { S: token } : token,
    };
    const notYet = '(attribute_not_exists(#ownWrite) OR #ownWrite <> :ownWrite)';
    sent.ConditionExpression = input.ConditionExpression ? `(${input.ConditionExpression}) AND ${notYet}` : notYet;
  }
  try {
    return await next({ ...args, input: sent });
  } catch (error) {
    const e = error as { name?: string; Item?: Record<string, AttributeValue>; $metadata?: unknown };
    if (e.name !== 'ConditionalCheckFailedException' || !e.Item) throw error;
    const ours =
      command === 'PutItemCommand'
        ? createdEarlier(input.Item ?? {}) ||
          (marshalled
            ? isDeepStrictEqual(e.Item, input.Item)
            : isDeepStrictEqual(unmarshall(e.Item), JSON.parse(JSON.stringify(input.Item))))
        : e.Item[WRITE_TOKEN]?.S === token;
    if (!ours) throw error;
    const returned = command === 'UpdateItemCommand' ? input.ReturnValues : undefined;
    // The item as it stands answers ALL_NEW (and UPDATED_NEW: the new values, with the rest of the item). The old
    // image is gone: an empty answer would pass for "there was nothing" (a claim's task answered as nulls), so
    // ALL_OLD / UPDATED_OLD fail loudly here; ask for the new image instead.
    if (returned === 'ALL_OLD' || returned === 'UPDATED_OLD') {
      throw new OldImageLostError(returned);
    }
    return {
      output: {
        $metadata: e.$metadata ?? {},
        ...(returned === 'ALL_NEW' || returned === 'UPDATED_NEW'
          ? { Attributes: marshalled ? e.Item : unmarshall(e.Item) }
          : {}),
      },
      response: {},
    };
  }
};

/**
 * A Put whose key holds an id drawn from the request's idempotency seed (shared/ids.ts) finds, when its condition
 * fails, the record written by an earlier request with the same operation, caller, Idempotency-Key and body, whose
 * answer was lost: that record is this create's, and it is answered rather than made twice or refused.
 */
function createdEarlier(item: Record<string, unknown>): boolean {
  return ['PK', 'SK'].some((name) => {
    const value = item[name];
    const text = typeof value === 'string' ? value : (value as { S?: string } | undefined)?.S;
    return typeof text === 'string' && holdsSeededId(text);
  });
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

/**
 * Every item a Query finds, page after page (for partitions read whole: a planning's items, a channel's
 * subscribers). `onPage` sees each page's answer (a search counts what it read).
 */
export async function queryAll<T = Record<string, unknown>>(
  input: QueryCommandInput,
  onPage?: (out: QueryCommandOutput) => void,
): Promise<T[]> {
  const items: T[] = [];
  let cursor: Record<string, unknown> | undefined;
  do {
    const out = await db().send(new QueryCommand({ ...input, ExclusiveStartKey: cursor }));
    onPage?.(out);
    items.push(...((out.Items ?? []) as T[]));
    cursor = out.LastEvaluatedKey;
  } while (cursor);
  return items;
}

/**
 * The items at `keys` in one table, by BatchGetItem (100 keys a call); keys DynamoDB leaves unprocessed are asked for
 * again after a short pause. An item that does not exist is absent from the answer, whose order is DynamoDB's.
 */
export async function getAll<T = Record<string, unknown>>(
  table: string,
  keys: Record<string, unknown>[],
  read: Omit<NonNullable<BatchGetCommandInput['RequestItems']>[string], 'Keys'> = {},
): Promise<T[]> {
  const items: T[] = [];
  for (let i = 0; i < keys.length; i += 100) {
    let batch: Record<string, unknown>[] | undefined = keys.slice(i, i + 100);
    for (let round = 0; batch && batch.length > 0; round++) {
      // Unprocessed keys are DynamoDB throttling the read: a bounded wait, then a throttling error (a 503 for a
      // request, a retry uncounted for a worker: isDependencyFailure).
      if (round >= 6) {
        throw Object.assign(new Error(`BatchGetItem left ${batch.length} keys unprocessed after ${round} rounds`), {
          name: 'ThrottlingException',
        });
      }
      if (round > 0) await new Promise((resolve) => setTimeout(resolve, Math.min(1000, 25 * 2 ** round)));
      const out: BatchGetCommandOutput = await db().send(
        new BatchGetCommand({ RequestItems: { [table]: { ...read, Keys: batch } } }),
      );
      items.push(...((out.Responses?.[table] ?? []) as T[]));
      batch = out.UnprocessedKeys?.[table]?.Keys;
    }
  }
  return items;
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
 * A transaction cancelled only because its Puts of records keyed by ids drawn from the request's idempotency seed
 * already exist: an earlier request with the same key wrote all of it (a transaction is atomic), and lost its answer.
 * A claim that names such a record (an e-mail claim holding the seeded user id) fails with it: the record keyed by
 * the seeded id exists only because the earlier attempt's transaction, claim included, was applied.
 */
function earlierTransaction(items: NonNullable<TransactWriteCommandInput['TransactItems']>, error: unknown): boolean {
  const reasons = (error as { CancellationReasons?: { Code?: string }[] }).CancellationReasons ?? [];
  let failedOnCreate = false;
  for (const [i, reason] of reasons.entries()) {
    if (!reason.Code || reason.Code === 'None') continue;
    const put = items[i]?.Put;
    if (reason.Code !== 'ConditionalCheckFailed' || !put) return false;
    if (createdEarlier(put.Item ?? {})) failedOnCreate = true;
    else if (!namesSeededRecord(put.Item ?? {})) return false;
  }
  return failedOnCreate;
}

/** True when a non-key attribute of the item holds an id drawn from the request's seed (a claim naming a record). */
function namesSeededRecord(item: Record<string, unknown>): boolean {
  return Object.entries(item).some(
    ([name, value]) => name !== 'PK' && name !== 'SK' && typeof value === 'string' && holdsSeededId(value),
  );
}

/**
 * TransactWriteItems with retries for transaction conflicts: two transactions touching one item (a shared counter,
 * say) cancel each other for a moment, which is not the caller's fault and not a 409.
 */
export async function transactWrite(
  items: NonNullable<TransactWriteCommandInput['TransactItems']>,
): Promise<'written' | 'earlier'> {
  for (let attempt = 0; ; attempt++) {
    try {
      await db().send(new TransactWriteCommand({ TransactItems: items }));
      return 'written';
    } catch (error) {
      if (earlierTransaction(items, error)) return 'earlier';
      if (attempt >= 5 || !isTransactionConflict(error)) throw error;
      await new Promise((resolve) => setTimeout(resolve, 10 * 2 ** attempt * (0.5 + Math.random())));
    }
  }
}

export type TransactItem = NonNullable<TransactWriteCommandInput['TransactItems']>[number];
