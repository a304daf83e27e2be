/**
 * Partition keys spread over a fixed number of shards, so that no key is shared by the whole service (or by a whole
 * planning) on a write path (issue 45, docs/indexes.md "Shards"). A partition key takes at most 1 000 WCU/s in
 * DynamoDB, a table's and an index's alike, and a key whose sort key follows time is never split for heat: a write
 * path's key must be spread by an id, and its readers read every shard (Queries in parallel, merged).
 *
 * The shard of an id is a stable hash of it (FNV-1a), so an item always lands in the same shard and an update finds
 * the key it was written under again. The sweeps' lists of a dispatch day are spread by organisation instead
 * (`orgSweepPartition`).
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
 * Shards of a sweep's work list in GSI3 that no dispatch day writes (`OUTBOX`, mail held at registration):
 * `<sweep>#<n>`. A sweep reads all of them at once; each takes 1 000 WCU/s, so the list takes 8 000.
 */
export const SWEEP_SHARDS = 8;

/** The GSI3 partition key of a sweep's entry for `id` (`OUTBOX#3`). */
export const sweepPartition = (sweep: string, id: string) => `${sweep}#${shardOf(id, SWEEP_SHARDS)}`;

/** Every partition key of a sweep's work list. */
export const sweepPartitions = (sweep: string) => Array.from({ length: SWEEP_SHARDS }, (_, n) => `${sweep}#${n}`);

/**
 * The sweeps' work lists that a dispatch day writes (`WAVEPLANS`, `OFFERS`, `ACTIVEJOBS`) are one partition key an
 * organisation, `<sweep>#<org>`: no write of a day touches a key another organisation writes, so one organisation's
 * day takes a list's 1 000 WCU/s to itself, however many dispatch at once. The sweeps find the lists through the
 * organisations' own listing (GSI1 `ORGS`, written only when SysAdmin creates one): a sweep's reads grow with the
 * number of organisations, not with their activity (docs/indexes.md "Shards").
 */
export const orgSweepPartition = (sweep: string, orgId: string) => `${sweep}#${orgId}`;

/** The GSI1 partition key of the organisations' listing (shared/accounts/organisations.ts). */
export const ORGS = 'ORGS';
/** Organisations' lists a sweep reads at once. */
const ORG_LISTS_AT_ONCE = 16;

/**
 * Every organisation's id, from its listing (keys only, every page). A sweep reads it afresh each run (the local
 * host's and the cloud's schedule share it between the run's three sweeps), so a new organisation is swept from the
 * next run on.
 */
export async function sweptOrganisations(): Promise<string[]> {
  const keys = await queryAll<{ PK: string }>({
    TableName: mainTableName(),
    IndexName: 'GSI1',
    KeyConditionExpression: 'GSI1PK = :orgs',
    ExpressionAttributeValues: { ':orgs': ORGS },
    ProjectionExpression: 'PK',
  });
  return keys.map((key) => key.PK.slice('ORG#'.length));
}

/**
 * Each organisation's list of a sweep read at once (`ORG_LISTS_AT_ONCE`), every page, the items concatenated with
 * the organisation they were read under. `orgs`: the run's organisations, read when not given.
 */
export async function orgListEntries<T = Record<string, unknown>>(
  sweep: string,
  input: Omit<QueryCommandInput, 'KeyConditionExpression'>,
  orgs?: readonly string[],
): Promise<{ orgId: string; item: T }[]> {
  const each = await mapLimited(orgs ?? (await sweptOrganisations()), ORG_LISTS_AT_ONCE, async (orgId) => {
    const items = await queryAll<T>({
      ...input,
      KeyConditionExpression: 'GSI3PK = :pk',
      ExpressionAttributeValues: { ...input.ExpressionAttributeValues, ':pk': orgSweepPartition(sweep, orgId) },
    });
    return items.map((item) => ({ orgId, item }));
  });
  return each.flat();
}

/**
 * The entries due before `before` (GSI3SK `<`) of the lists `partitions`, read at `inFlight` at once: up to `limit`
 * of each, merged in sort-key order and cut to `limit`. `full` says some list had more than it read.
 */
async function dueEntriesOf(
  partitions: readonly string[],
  inFlight: number,
  before: string,
  limit: number,
): Promise<{ items: Record<string, unknown>[]; full: boolean }> {
  let full = false;
  const pages = await mapLimited(partitions, inFlight, async (partition) => {
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

/** The entries of a sharded sweep list (`sweepPartition`) due before `before`, every shard read at once. */
export const dueEntries = (sweep: string, before: string, limit: number) =>
  dueEntriesOf(sweepPartitions(sweep), SWEEP_SHARDS, before, limit);

/**
 * The entries of an organisations' sweep list (`orgSweepPartition`) due before `before`: the organisations' listing
 * (or the run's `orgs`), then each organisation's list, `ORG_LISTS_AT_ONCE` at once, merged and cut to `limit`.
 */
export async function dueEntriesByOrg(sweep: string, before: string, limit: number, orgs?: readonly string[]) {
  const partitions = (orgs ?? (await sweptOrganisations())).map((orgId) => orgSweepPartition(sweep, orgId));
  return dueEntriesOf(partitions, ORG_LISTS_AT_ONCE, before, limit);
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
