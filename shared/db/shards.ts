/**
 * Partition keys spread over a fixed number of shards, so that no key is shared by the whole service (or by a whole
 * planning) on a write path (issue 45, docs/indexes.md "Shards"). A partition key takes at most 1 000 WCU/s in
 * DynamoDB, a table's and an index's alike, and a key whose sort key follows time is never split for heat: a write
 * path's key must be spread by an id, and its readers read every shard (Queries in parallel, merged).
 *
 * The shard of an id is a stable hash of it (FNV-1a), so an item always lands in the same shard and an update finds
 * the key it was written under again.
 */
import { QueryCommand, type QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import { mapLimited } from '#shared/concurrency';
import { db, mainTableName, queryAll } from '#shared/db/client';

/** The shard of `id` among `shards` (FNV-1a over its UTF-16 code units). */
export function shardOf(id: string, shards: number): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < id.length; i++) {
    hash ^= id.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash % shards;
}

/**
 * Shards of each sweep's work list in GSI3 (`OFFERS`, `ACTIVEJOBS`, `OUTBOX`, and `WAVEPLANS`, the wave worker's
 * registry of plannings: each has its own wave list, shared/planning/wave-plans.ts): `<sweep>#<n>`. A sweep reads all
 * of them at once; each takes 1 000 WCU/s, so the list takes 8 000.
 */
export const SWEEP_SHARDS = 8;

/** The GSI3 partition key of a sweep's entry for `id` (`WAVES#3`). */
export const sweepPartition = (sweep: string, id: string) => `${sweep}#${shardOf(id, SWEEP_SHARDS)}`;

/** Every partition key of a sweep's work list. */
export const sweepPartitions = (sweep: string) => Array.from({ length: SWEEP_SHARDS }, (_, n) => `${sweep}#${n}`);

/**
 * The entries of a sweep due before `before` (GSI3SK `<`), every shard read at once: up to `limit` of each shard,
 * merged in sort-key order and cut to `limit`. `full` says some shard had more than it read.
 */
export async function dueEntries(
  sweep: string,
  before: string,
  limit: number,
): Promise<{ items: Record<string, unknown>[]; full: boolean }> {
  let full = false;
  const pages = await mapLimited(sweepPartitions(sweep), SWEEP_SHARDS, async (partition) => {
    const out = await db().send(
      new QueryCommand({
        TableName: mainTableName(),
        IndexName: 'GSI3',
        KeyConditionExpression: 'GSI3PK = :pk AND GSI3SK < :before',
        ExpressionAttributeValues: { ':pk': partition, ':before': before },
        Limit: limit,
      }),
    );
    if (out.LastEvaluatedKey) full = true;
    return out.Items ?? [];
  });
  const items = pages.flat().sort((a, b) => (String(a['GSI3SK']) < String(b['GSI3SK']) ? -1 : 1));
  if (items.length > limit) full = true;
  return { items: items.slice(0, limit), full };
}

/**
 * A Query run once for each partition key in `partitions` (bound to `:pk` in its key condition), all at once, every
 * page of each; the items concatenated in the order of `partitions`.
 */
export async function queryPartitions<T = Record<string, unknown>>(
  partitions: readonly string[],
  input: QueryCommandInput,
): Promise<T[]> {
  const each = await mapLimited([...partitions], partitions.length, (pk) =>
    queryAll<T>({ ...input, ExpressionAttributeValues: { ...input.ExpressionAttributeValues, ':pk': pk } }),
  );
  return each.flat();
}

/**
 * Shards of each whole-service listing newest first (GSI2 `PLANNINGS`, `NOTIFS`, `IMPORTS`; users have their own,
 * shared/accounts/users.ts): `<listing>#<n>` by the record's id. A page reads every shard and merges them
 * (`queryMergedPage` in shared/db/paging.ts).
 */
export const LISTING_SHARDS = 4;
export const listingPartition = (listing: string, id: string) => `${listing}#${shardOf(id, LISTING_SHARDS)}`;
export const listingPartitions = (listing: string) =>
  Array.from({ length: LISTING_SHARDS }, (_, n) => `${listing}#${n}`);
