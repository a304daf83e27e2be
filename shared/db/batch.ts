/** Whole items written with BatchWriteItem, 25 a call. */
import { BatchWriteCommand } from '@aws-sdk/lib-dynamodb';
import { mapLimited } from '#shared/concurrency';
import { db } from '#shared/db/client';

/** Gives up on a batch DynamoDB keeps leaving unprocessed (throttled) after this many tries, backing off between. */
const MAX_TRIES = 10;

/**
 * Puts every item, 25 a BatchWriteItem with `inFlight` calls at a time (1: in order); what a call leaves unprocessed
 * is sent again, with a growing pause, before that call counts as done. Unconditional: for items nothing else can
 * have written, or whose rewrite changes nothing. With `perSecond`, a batch starts no sooner than its place in a
 * steady `perSecond` items a second from the first (a pace that keeps each partition key under a rate).
 */
export async function putAll(
  tableName: string,
  items: Record<string, unknown>[],
  inFlight = 1,
  perSecond = Number.POSITIVE_INFINITY,
): Promise<void> {
  const batches = Array.from({ length: Math.ceil(items.length / 25) }, (_, i) => items.slice(i * 25, i * 25 + 25));
  const started = performance.now();
  await mapLimited(batches, inFlight, async (batch, index) => {
    const wait = started + ((index * 25) / perSecond) * 1000 - performance.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    let requests = batch.map((Item) => ({ PutRequest: { Item } }));
    for (let attempt = 0; requests.length > 0; attempt++) {
      if (attempt >= MAX_TRIES)
        throw new Error(`DynamoDB left ${requests.length} writes unprocessed ${MAX_TRIES} times`);
      if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, Math.min(1000, 25 * 2 ** attempt)));
      const out = await db().send(new BatchWriteCommand({ RequestItems: { [tableName]: requests } }));
      requests = (out.UnprocessedItems?.[tableName] ?? []) as typeof requests;
    }
  });
}
