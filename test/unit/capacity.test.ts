/** The capacity tally: single, batch and transaction responses, reads and writes, and the per-request scope. */
import { DynamoDBClient, GetItemCommand, TransactWriteItemsCommand } from '@aws-sdk/client-dynamodb';
import { describe, expect, it } from 'vitest';
import { addConsumed, currentTally, recordCapacity, type Tally, withCapacity } from '../../shared/db/capacity.ts';

describe('capacity tally', () => {
  it('adds read and write units from single, batch and transaction responses', () => {
    const tally: Tally = { calls: 0, rcu: 0, wcu: 0 };
    addConsumed(tally, 'GetItemCommand', { CapacityUnits: 0.5, ReadCapacityUnits: 0.5 });
    addConsumed(tally, 'TransactWriteItemsCommand', [
      { CapacityUnits: 4, WriteCapacityUnits: 4 },
      { CapacityUnits: 2, WriteCapacityUnits: 2 },
    ]);
    addConsumed(tally, 'PutItemCommand', { CapacityUnits: 1 });
    addConsumed(tally, 'QueryCommand', { CapacityUnits: 1.5 });
    addConsumed(tally, 'DeleteItemCommand', undefined);
    expect(tally).toEqual({ calls: 5, rcu: 2, wcu: 7 });
  });

  it('asks every call for INDEXES and counts it in the request scope only', async () => {
    const seen: Record<string, unknown>[] = [];
    const client = recordCapacity(
      new DynamoDBClient({
        region: 'us-east-1',
        endpoint: 'http://127.0.0.1:1',
        credentials: { accessKeyId: 'x', secretAccessKey: 'x' },
      }),
    );
    client.middlewareStack.add(
      (_next, context) => async (args) => {
        seen.push({ ...(args.input as object) });
        const name = (context as { commandName?: string }).commandName;
        const consumed =
          name === 'GetItemCommand'
            ? { TableName: 't', CapacityUnits: 0.5, ReadCapacityUnits: 0.5 }
            : [{ TableName: 't', CapacityUnits: 6, WriteCapacityUnits: 6 }];
        return { output: { $metadata: {}, ConsumedCapacity: consumed }, response: {} };
      },
      { step: 'serialize', name: 'fakeServer' },
    );
    const { tally } = await withCapacity(async () => {
      await client.send(new GetItemCommand({ TableName: 't', Key: { pk: { S: 'a' } } }));
      await client.send(
        new TransactWriteItemsCommand({
          TransactItems: [{ Put: { TableName: 't', Item: { pk: { S: 'a' } } } }],
        }),
      );
      expect(currentTally()?.calls).toBe(2);
    });
    expect(tally).toEqual({ calls: 2, rcu: 0.5, wcu: 6 });
    expect(seen.map((input) => input['ReturnConsumedCapacity'])).toEqual(['INDEXES', 'INDEXES']);
    await client.send(new GetItemCommand({ TableName: 't', Key: { pk: { S: 'a' } } }));
    expect(currentTally()).toBeUndefined();
  });
});
