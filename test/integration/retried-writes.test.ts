/**
 * A conditional write whose answer is lost (the connection resets after DynamoDB applied it) is retried by the SDK;
 * the retry must not fail its own condition (shared/db/client.ts, ownRetriedWrites). Found by the chaos run: X2
 * answered 500, and a worker's claim thought another worker held the job it had just taken.
 */
import { GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { startFaultProxy } from '../support/fault-proxy.ts';
import { useLocalServices } from '../support/local.ts';

await useLocalServices();
const proxy = await startFaultProxy(inject('endpoints').dynamodb, 'dynamodb');
process.env['DYNAMODB_ENDPOINT'] = proxy.url;
const { db, mainTableName } = await import('../../shared/db/client.ts');
const { createOrganisation } = await import('../../shared/accounts/organisations.ts');

afterAll(() => proxy.close());

const read = async (PK: string) =>
  (await db().send(new GetCommand({ TableName: mainTableName(), Key: { PK, SK: 'X' } }))).Item;

describe('a conditional write whose answer was lost', () => {
  it('a create-if-absent Put succeeds once (it was X2’s 500)', async () => {
    await proxy.set('reset', 1, ['PutItem'], 0, 1);
    const org = await createOrganisation({ name: 'Reset Ltd', kind: 'merchant' });
    expect(proxy.counts.reset).toBeGreaterThanOrEqual(1);
    const stored = await db().send(
      new GetCommand({ TableName: mainTableName(), Key: { PK: `ORG#${org.id}`, SK: 'PROFILE' } }),
    );
    expect(stored.Item).toMatchObject({ id: org.id, name: 'Reset Ltd' });
  });

  it('a conditional Update succeeds and answers the item as it stands', async () => {
    await db().send(new PutCommand({ TableName: mainTableName(), Item: { PK: 'claim', SK: 'X', status: 'queued' } }));
    const before = proxy.counts.reset;
    await proxy.set('reset', 1, ['UpdateItem'], 0, 1);
    const out = await db().send(
      new UpdateCommand({
        TableName: mainTableName(),
        Key: { PK: 'claim', SK: 'X' },
        UpdateExpression: 'SET #s = :to',
        ConditionExpression: '#s = :from',
        ExpressionAttributeNames: { '#s': 'status' },
        ExpressionAttributeValues: { ':from': 'queued', ':to': 'processing' },
        ReturnValues: 'ALL_NEW',
      }),
    );
    expect(proxy.counts.reset).toBe(before + 1);
    expect(out.Attributes).toMatchObject({ PK: 'claim', status: 'processing' });
    expect((await read('claim'))?.['status']).toBe('processing');
  });

  it('an ADD without a SET clause counts once', async () => {
    await db().send(new PutCommand({ TableName: mainTableName(), Item: { PK: 'counter', SK: 'X', hits: 0 } }));
    await proxy.set('reset', 1, ['UpdateItem'], 0, 1);
    await db().send(
      new UpdateCommand({
        TableName: mainTableName(),
        Key: { PK: 'counter', SK: 'X' },
        UpdateExpression: 'ADD hits :one',
        ConditionExpression: 'attribute_exists(PK)',
        ExpressionAttributeValues: { ':one': 1 },
      }),
    );
    expect((await read('counter'))?.['hits']).toBe(1);
  });

  it('an Update asking for UPDATED_NEW gets the new values, not an empty answer', async () => {
    await db().send(new PutCommand({ TableName: mainTableName(), Item: { PK: 'tally', SK: 'X', n: 4 } }));
    await proxy.set('reset', 1, ['UpdateItem'], 0, 1);
    const out = await db().send(
      new UpdateCommand({
        TableName: mainTableName(),
        Key: { PK: 'tally', SK: 'X' },
        UpdateExpression: 'ADD n :one',
        ExpressionAttributeValues: { ':one': 1 },
        ReturnValues: 'UPDATED_NEW',
      }),
    );
    expect(out.Attributes?.['n']).toBe(5);
    expect((await read('tally'))?.['n']).toBe(5);
  });

  it('an Update asking for its old image fails loudly instead of answering as if there had been nothing', async () => {
    await db().send(new PutCommand({ TableName: mainTableName(), Item: { PK: 'old', SK: 'X', name: 'kept' } }));
    await proxy.set('reset', 1, ['UpdateItem'], 0, 1);
    await expect(
      db().send(
        new UpdateCommand({
          TableName: mainTableName(),
          Key: { PK: 'old', SK: 'X' },
          UpdateExpression: 'SET claimed = :yes',
          ConditionExpression: 'attribute_not_exists(claimed)',
          ExpressionAttributeValues: { ':yes': true },
          ReturnValues: 'ALL_OLD',
        }),
      ),
    ).rejects.toThrow(/old image is gone/);
    expect(await read('old')).toMatchObject({ name: 'kept', claimed: true });
  });

  it('a condition that fails on someone else’s write still fails', async () => {
    await proxy.set('pass');
    await db().send(new PutCommand({ TableName: mainTableName(), Item: { PK: 'taken', SK: 'X', by: 'other' } }));
    await expect(
      db().send(
        new PutCommand({
          TableName: mainTableName(),
          Item: { PK: 'taken', SK: 'X', by: 'me' },
          ConditionExpression: 'attribute_not_exists(PK)',
        }),
      ),
    ).rejects.toMatchObject({ name: 'ConditionalCheckFailedException' });
    await expect(
      db().send(
        new UpdateCommand({
          TableName: mainTableName(),
          Key: { PK: 'taken', SK: 'X' },
          UpdateExpression: 'SET #by = :me',
          ConditionExpression: '#by = :me',
          ExpressionAttributeNames: { '#by': 'by' },
          ExpressionAttributeValues: { ':me': 'me' },
        }),
      ),
    ).rejects.toMatchObject({ name: 'ConditionalCheckFailedException' });
    expect((await read('taken'))?.['by']).toBe('other');
  });
});
