/**
 * A listing page read through a keys-only index (GSI1/GSI2) fetches its records from the table
 * (shared/db/paging.ts). The index and the table are read at two moments: a record may be not yet visible to an
 * eventually consistent read, gone, or moved out of the listing in between.
 */

import { randomUUID } from 'node:crypto';
import { DeleteCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { useLocalServices } from '../support/local.ts';

await useLocalServices();
const { withMiddleware } = await import('../support/middleware.ts');
const { db, mainTableName } = await import('../../shared/db/client.ts');
const { queryPage } = await import('../../shared/db/paging.ts');

/** Four records listed under one GSI1 partition, in order a, b, c, d. */
async function listing() {
  const partition = `LIST#${randomUUID()}`;
  for (const name of ['a', 'b', 'c', 'd']) {
    await db().send(
      new PutCommand({
        TableName: mainTableName(),
        Item: { PK: `REC#${partition}#${name}`, SK: 'PROFILE', GSI1PK: partition, GSI1SK: name, name },
      }),
    );
  }
  return partition;
}

const page = (partition: string) =>
  queryPage(
    {
      TableName: mainTableName(),
      IndexName: 'GSI1',
      KeyConditionExpression: 'GSI1PK = :pk',
      ExpressionAttributeValues: { ':pk': partition },
    },
    { page: 1, perPage: 10 },
    (item) => String(item['name']),
  );

describe('a listing page read through a keys-only index', () => {
  it('leaves out a record deleted or moved out of the listing after the index was read', async () => {
    const partition = await listing();
    const names = await withMiddleware(
      'change-between',
      (next, context) => async (args) => {
        const out = await next(args);
        if (context.commandName === 'QueryCommand') {
          await db().send(
            new DeleteCommand({ TableName: mainTableName(), Key: { PK: `REC#${partition}#b`, SK: 'PROFILE' } }),
          );
          await db().send(
            new UpdateCommand({
              TableName: mainTableName(),
              Key: { PK: `REC#${partition}#c`, SK: 'PROFILE' },
              UpdateExpression: 'SET GSI1PK = :elsewhere',
              ExpressionAttributeValues: { ':elsewhere': `${partition}-other` },
            }),
          );
        }
        return out;
      },
      () => page(partition),
    );
    expect(names.items).toEqual(['a', 'd']);
  });

  it('asks once more, consistently, for a record the first read did not find yet', async () => {
    const partition = await listing();
    const consistent: boolean[] = [];
    const names = await withMiddleware(
      'lagging-replica',
      (next, context) => async (args) => {
        const out = (await next(args)) as { output: { Responses?: Record<string, Record<string, unknown>[]> } };
        if (context.commandName === 'BatchGetItemCommand') {
          const read = Object.values(
            (args.input as { RequestItems: Record<string, { ConsistentRead?: boolean }> }).RequestItems,
          )[0]!;
          consistent.push(read.ConsistentRead === true);
          // The eventually consistent read answers from a replica that has not seen `a` yet.
          if (!read.ConsistentRead) {
            const responses = out.output.Responses!;
            for (const table of Object.keys(responses)) {
              responses[table] = responses[table]!.filter((item) => item['name'] !== 'a');
            }
          }
        }
        return out;
      },
      () => page(partition),
    );
    expect(consistent).toEqual([false, true]);
    expect(names.items).toEqual(['a', 'b', 'c', 'd']);
  });
});

describe('a BatchGetItem that DynamoDB keeps leaving unprocessed', () => {
  it('gives up after a bounded wait with a throttling error (a 503 for a request, an uncounted retry for a worker)', async () => {
    const { getAll } = await import('../../shared/db/client.ts');
    const { isDependencyFailure } = await import('../../shared/aws/faults.ts');
    let calls = 0;
    const failure = await withMiddleware(
      'always-unprocessed',
      (next, context) => async (args) => {
        if (context.commandName !== 'BatchGetItemCommand') return next(args);
        calls++;
        const request = (args.input as { RequestItems: Record<string, unknown> }).RequestItems;
        return { output: { $metadata: {}, Responses: {}, UnprocessedKeys: request }, response: {} };
      },
      () => getAll(mainTableName(), [{ PK: 'x', SK: 'y' }]).catch((error: unknown) => error),
    );
    expect(calls).toBe(6);
    expect(isDependencyFailure(failure)).toBe(true);
  });
});
