/**
 * A decision's writes as data (issue 56): the items of one DynamoDB transaction with their conditions, naming no
 * table, so that a pure decision (pair-moves.ts, runsheet-moves.ts) can state them and a test can read them; and the
 * one way the shells write them (`writeAll`: one item alone as its own conditional command, more as a transaction,
 * on the main table).
 */
import { DeleteCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { db, mainTableName, type TransactItem, transactWrite } from '#shared/db/client';

type Values = Record<string, unknown>;
type Key = Record<string, string>;

export type Write =
  | { Put: { Item: Record<string, unknown>; ConditionExpression: string; ExpressionAttributeValues?: Values } }
  | {
      Update: {
        Key: Key;
        UpdateExpression: string;
        ConditionExpression?: string;
        ExpressionAttributeValues: Values;
      };
    }
  | { Delete: { Key: Key; ConditionExpression?: string; ExpressionAttributeValues?: Values } }
  | { ConditionCheck: { Key: Key; ConditionExpression: string; ExpressionAttributeValues?: Values } };

/** The writes as a transaction's items on `table`. */
export const onTable = (writes: readonly Write[], table: string): TransactItem[] =>
  writes.map((write) => {
    const [verb, body] = Object.entries(write)[0]!;
    return { [verb]: { TableName: table, ...body } } as TransactItem;
  });

/**
 * Writes a decision's items on the main table: one alone as its own command (a conditional put, update or delete:
 * 1 WCU where a transaction's item costs 2), more as one transaction. A failed condition throws as DynamoDB's does
 * (`isConditionalFailure`; a transaction's `cancelledIndexes` say which).
 */
export async function writeAll(writes: readonly Write[]): Promise<void> {
  const items = onTable(writes, mainTableName());
  if (items.length > 1) {
    await transactWrite(items);
    return;
  }
  const [item] = items;
  if (item?.Put) await db().send(new PutCommand(item.Put));
  else if (item?.Update) await db().send(new UpdateCommand(item.Update));
  else if (item?.Delete) await db().send(new DeleteCommand(item.Delete));
  else throw new Error('a write alone is a put, an update or a delete');
}
