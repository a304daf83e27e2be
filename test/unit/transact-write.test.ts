import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { transactWrite } from '../../shared/db/client.ts';

const cancelled = (code: string) =>
  new TransactionCanceledException({
    message: 'cancelled',
    $metadata: {},
    CancellationReasons: [{ Code: 'None' }, { Code: code }],
  });

describe('transactWrite', () => {
  const ddb = mockClient(DynamoDBDocumentClient);
  beforeEach(() => {
    ddb.reset();
    process.env['AWS_REGION'] = 'eu-west-1';
  });

  it('retries a transaction cancelled by a conflict on a shared item', async () => {
    ddb.on(TransactWriteCommand).rejectsOnce(cancelled('TransactionConflict')).resolves({});
    await transactWrite([{ Put: { TableName: 't', Item: { PK: 'a' } } }]);
    expect(ddb.commandCalls(TransactWriteCommand)).toHaveLength(2);
  });

  it('never retries a failed condition: that is the caller’s answer', async () => {
    ddb.on(TransactWriteCommand).rejects(cancelled('ConditionalCheckFailed'));
    await expect(transactWrite([{ Put: { TableName: 't', Item: { PK: 'a' } } }])).rejects.toThrow(
      TransactionCanceledException,
    );
    expect(ddb.commandCalls(TransactWriteCommand)).toHaveLength(1);
  });
});
