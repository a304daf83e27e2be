/**
 * The yardstick the write-heavy benchmarks print beside their own rate: `count` copies of one of their own items
 * (`sample`, under other keys and without index attributes) written with plain BatchWriteItem calls of 25 (one call at a time, unprocessed items resent), on the same emulator and table
 * in the same run, so that the ratio does not depend on the machine or its load.
 */
import { randomUUID } from 'node:crypto';
import { BatchWriteCommand } from '@aws-sdk/lib-dynamodb';
import { db, mainTableName } from '#shared/db/client';

export async function rawBatchWriteRate(count: number, sample: Record<string, unknown>): Promise<number> {
  const run = randomUUID();
  const unindexed = Object.fromEntries(Object.entries(sample).filter(([name]) => !name.startsWith('GSI')));
  const started = performance.now();
  for (let i = 0; i < count; i += 25) {
    let requests = Array.from({ length: Math.min(25, count - i) }, (_, j) => ({
      PutRequest: { Item: { ...unindexed, PK: `BENCHRAW#${run}#${i + j}`, SK: 'raw', entity: 'bench_raw' } },
    }));
    while (requests.length > 0) {
      const answer = await db().send(new BatchWriteCommand({ RequestItems: { [mainTableName()]: requests } }));
      requests = (answer.UnprocessedItems?.[mainTableName()] ?? []) as typeof requests;
    }
  }
  return count / ((performance.now() - started) / 1000);
}
