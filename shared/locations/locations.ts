/**
 * Driver locations (L1–L4). One item per driver holds the newest fix (under 1 KB), with the driver's organisation and
 * service types kept on it (A21 and A25 keep them current), so that a fix in the steady state is ONE conditional
 * UpdateItem: the ordering rule (a fix older than the stored one is ignored) is its condition, not a read before it.
 * One geo index, `Geo`, lists every driver in partitions of precision 4 (3 from ±56.25°, polar caps beyond ±80°) split
 * into GEO_SHARDS shards by driver (no partition key takes a crowded cell's whole write rate), sorted by precision-6
 * geohash; an organisation's search
 * reads the same index and keeps its own drivers. A cell directory counts drivers at precision 3 and 5, so that a
 * nearest search with nothing nearby goes straight to the occupied cells instead of walking empty ones; it changes
 * only on a first fix or a crossing into another precision-5 cell, counting up before the move and down after it, so
 * that a failure between the two can only leave a count too high (a search reads an empty cell), never too low.
 *
 * Capacity (AWS's rules, pinned by test/e2e/capacity.test.ts): a fix 1 WCU for the item and no read; its index
 * entry 2 WCU more when the fix leaves its precision-6 cell (the sort key moves: a delete and a put), 1 when its
 * granule turns; a first fix and a crossing of partition cells at most 6 WCU.
 *
 * The index entry (issues 27.2 and 32) holds only what a fix leaves alone while the driver stays in its precision-6
 * cell (about 1.2 km × 0.6 km) and granule: the keys, the organisation, the service types and `geo_time`, the fix's
 * server time rounded down to GEO_TIME_GRANULARITY_S. Every fix sets them all, in the same one UpdateItem; DynamoDB
 * writes an index entry only when one of its attributes changes, so a fix in the same cell costs the item alone
 * (1 WCU), the entry once a granule (1 WCU more) and a move into another cell 2 WCU more. L3 and L4 choose candidates
 * from the index (the precision-6 cell bounds the position, geo_time the age to within the granule) and then read the
 * candidates' items, whose fix they answer and filter exactly.
 *
 * This file: the item, its keys, its index entry and the cell directory, its view, and the moves A21, A25 and an
 * organisation's changes make of it. Fixes are written by shared/locations/fixes.ts, read by positions.ts, and
 * searched by search.ts (L4, the dispatch's near read) and nearest.ts (L3).
 */
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { getUser } from '#shared/accounts/users';
import { clock } from '#shared/clock';
import { mapLimited } from '#shared/concurrency';
import { db, isConditionalFailure, locationsTableName, type TransactItem } from '#shared/db/client';
import { shardOf as shardOfId } from '#shared/db/shards';
import {
  directoryCellOf,
  encode,
  GEO_SHARDS,
  indexPartitionOf,
  type Point,
  SORT_PRECISION,
} from '#shared/locations/geo';
import { logger } from '#shared/log';

export interface LocationRecord {
  id: string;
  user_id: string;
  device_id: string | null;
  latitude: number;
  longitude: number;
  altitude: number | null;
  client_time_utc: string;
  client_timezone: string | null;
  server_time: string;
  version: number;
  org_id: string | null;
  service_types: string[];
}

/**
 * The key of a driver's location item. An organisation's drivers share one partition key, so that their writes ride
 * one partition and hence one shard of the table's stream: a dispatcher gets one `driver.location` frame per batch
 * window however many shards the stream has (docs/live-operations.md). A freelance driver keeps a key of its own.
 */
export const locationKey = (driverId: string, orgId: string | null) =>
  orgId ? { PK: `LOCS#${orgId}`, SK: driverId } : { PK: `LOC#${driverId}`, SK: 'CURRENT' };
export const coarseOf = (partition: string) => (partition.startsWith('polar-') ? partition : partition.slice(0, 3));

/**
 * G: the index entry's time (`geo_time`) is a fix's server time rounded down to this many seconds. A driver staying in
 * its precision-6 cell rewrites the entry once in G: at the uploader's one X13 every 30 s, 1 + 30/G WCU an upload
 * (1.1 at 300 s; 1.5 at 60 s, issue 27.2's G). L3 and L4 take as candidates the entries whose geo_time is less than
 * `max_age_s` + G old (a driver whose newest fix is within `max_age_s` always is one) and keep, from the candidates'
 * items, those whose real `server_time` is within `max_age_s`: their answers are exact, and only their candidate
 * reads grow with G: by the drivers whose last fix is between `max_age_s` and `max_age_s` + G old (none while a
 * fleet uploads; at the default max_age_s of a day, 300 s more is 0.3 %). docs/live-operations.md.
 */
export const GEO_TIME_GRANULARITY_S = 300;

/** A server time (ISO) rounded down to the index's granule: the `geo_time` of the entry. */
export function geoTimeOf(serverTime: string): string {
  const granule = GEO_TIME_GRANULARITY_S * 1000;
  return new Date(Math.floor(Date.parse(serverTime) / granule) * granule).toISOString();
}

/** FNV-1a of the driver id: a stable shard for each driver. */
export const shardOf = (driverId: string): number => shardOfId(driverId, GEO_SHARDS);

/** Shards per geo index partition (its reasons beside it, in geo.ts). */
export { GEO_SHARDS };

/**
 * The directory's top level (precision-3 counts and polar caps) is spread over `TOP_SHARDS` keys by cell,
 * `CELLS#TOP#<n>` (issue 45: no key every new cell writes); L3 reads them all. A precision-3 cell's precision-5 counts
 * are `CELLS#ALL#<p3>`.
 */
const TOP_SHARDS = 4;
const topKey = (cell: string) => `CELLS#TOP#${shardOfId(cell, TOP_SHARDS)}`;
export const TOP_KEYS = Array.from({ length: TOP_SHARDS }, (_, n) => `CELLS#TOP#${n}`);

/**
 * The keys of a driver at a point: its directory cell (`cell`), and its index entry's `<partition>#<shard>` (a
 * precision-4 or precision-3 cell, or a polar cap: geo.ts `indexPartitionOf`) and `<precision-6 geohash>#<driver>`.
 * The partition is a prefix of the precision-6 cell (but at ±80°), so the entry's key changes only with its sort key.
 */
export function geoKeys(driverId: string, point: Point) {
  return {
    cell: directoryCellOf(point),
    GEO_PK: `${indexPartitionOf(point)}#${shardOf(driverId)}`,
    GEO_SK: `${encode(point, SORT_PRECISION)}#${driverId}`,
  };
}

/** The directory entries that count a driver in a partition cell: its precision-3 cell, and the cell itself. */
export function directoryEntries(cell: string): string[] {
  if (cell.startsWith('polar-')) return [`${topKey(cell)}|${cell}`];
  return [`${topKey(coarseOf(cell))}|${coarseOf(cell)}`, `CELLS#ALL#${coarseOf(cell)}|${cell}`];
}

export async function adjustDirectory(entries: string[], delta: number): Promise<void> {
  await Promise.all(
    entries.map((entry) => {
      const [PK, SK] = entry.split('|') as [string, string];
      return db().send(
        new UpdateCommand({
          TableName: locationsTableName(),
          Key: { PK, SK },
          UpdateExpression: 'ADD n :delta',
          ExpressionAttributeValues: { ':delta': delta },
        }),
      );
    }),
  );
}

/** A count going down after its driver moved on: a failure only leaves it high, which costs a search one read. */
export async function releaseDirectory(entries: string[]): Promise<void> {
  if (entries.length === 0) return;
  await adjustDirectory(entries, -1).catch((error: unknown) =>
    logger.warn('cell directory count left high', { entries, error: (error as Error)?.message ?? String(error) }),
  );
}

export async function readLocation(driverId: string, orgId: string | null): Promise<LocationRecord | undefined> {
  const out = await db().send(new GetCommand({ TableName: locationsTableName(), Key: locationKey(driverId, orgId) }));
  return out.Item ? toRecord(out.Item) : undefined;
}

/** The driver's organisation as its profile says now (a consistent read); undefined: no such driver. */
export async function currentOrganisation(driverId: string): Promise<string | null | undefined> {
  const driver = await getUser(driverId, { consistent: true });
  return driver ? (driver.org_id ?? null) : undefined;
}

/** Sets a copy of the driver's own attributes on its location, if it has one. */
async function syncDriver(
  driverId: string,
  orgId: string | null,
  attribute: 'service_types',
  value: unknown,
): Promise<void> {
  await db()
    .send(
      new UpdateCommand({
        TableName: locationsTableName(),
        Key: locationKey(driverId, orgId),
        UpdateExpression: 'SET #attribute = :value',
        ConditionExpression: 'attribute_exists(PK)',
        ExpressionAttributeNames: { '#attribute': attribute },
        ExpressionAttributeValues: { ':value': value },
      }),
    )
    .catch((error: unknown) => {
      if (!isConditionalFailure(error)) throw error;
    });
}

/** A21 keeps the copy of the driver's service types on the location current (`orgId`: the driver's organisation). */
export const syncServiceTypes = (driverId: string, orgId: string | null, serviceTypes: string[]) =>
  syncDriver(driverId, orgId, 'service_types', serviceTypes);

/**
 * A25: the transaction items that move a driver's location from the key of organisation `from` (null: freelance) to
 * the key of `to`, with its copy of the organisation, for the caller to commit with the user's own change (one
 * TransactWriteItems: the profile and the item's key change together, see `recordFix`). The old item is deleted only
 * if its version is still the one read (a fix stored meanwhile cancels the transaction, and the caller reads again:
 * no fix is lost) and the new one is put only where none is (none is duplicated). No location: a check that none
 * appeared meanwhile under the old key. The old organisation can never read the driver's position again: it is gone
 * from its key, and from its searches (the index entry's org_id changes with the item). `serviceTypes`: the profile's,
 * as the caller's transaction saves it (an A21 whose copy reached the old key just before the move is not lost).
 */
export async function organisationMove(
  driverId: string,
  from: string | null,
  to: string,
  serviceTypes: string[] | undefined,
): Promise<TransactItem[]> {
  const table = locationsTableName();
  const oldKey = locationKey(driverId, from);
  const out = await db().send(new GetCommand({ TableName: table, Key: oldKey, ConsistentRead: true }));
  if (!out.Item) {
    return [{ ConditionCheck: { TableName: table, Key: oldKey, ConditionExpression: 'attribute_not_exists(PK)' } }];
  }
  return [
    {
      Delete: {
        TableName: table,
        Key: oldKey,
        ConditionExpression: '#version = :version',
        ExpressionAttributeNames: { '#version': 'version' },
        ExpressionAttributeValues: { ':version': out.Item['version'] },
      },
    },
    {
      Put: {
        TableName: table,
        // Everything else as it was: the fix, its version, the index keys (the position has not changed).
        Item: {
          ...out.Item,
          ...locationKey(driverId, to),
          org_id: to,
          ...(serviceTypes ? { service_types: serviceTypes } : {}),
        },
        ConditionExpression: 'attribute_not_exists(PK)',
      },
    },
  ];
}

export interface LocationView extends Omit<LocationRecord, 'org_id' | 'service_types'> {
  age_s: number;
  distance_m?: number;
}

export function view(location: LocationRecord, distance?: number): LocationView {
  // Member by member: whatever else the stored record holds (its organisation, service types) stays in storage.
  return {
    id: location.id,
    user_id: location.user_id,
    device_id: location.device_id,
    latitude: location.latitude,
    longitude: location.longitude,
    altitude: location.altitude,
    client_time_utc: location.client_time_utc,
    client_timezone: location.client_timezone,
    server_time: location.server_time,
    version: location.version,
    age_s: Math.max(0, Math.round((clock.nowMs() - Date.parse(location.server_time)) / 1000)),
    ...(distance === undefined ? {} : { distance_m: Math.round(distance * 10) / 10 }),
  };
}

/** Runs the thunks with at most `limit` in flight (shared/concurrency.ts), results in their order. */
export const inParallel = <T>(tasks: (() => Promise<T>)[], limit: number): Promise<T[]> =>
  mapLimited(tasks, limit, (task) => task());

/** Keys, the cell, and the write stamp of shared/db/client.ts: never part of a location's view. */
const KEY_ATTRIBUTES = /^(PK|SK|GEO_PK|GEO_SK|geo_time|cell|entity|_w)$/;

export function toRecord(item: Record<string, unknown>): LocationRecord {
  return Object.fromEntries(
    Object.entries(item).filter(([key]) => !KEY_ATTRIBUTES.test(key)),
  ) as unknown as LocationRecord;
}

/** The stored item of a location. */
export const locationItem = (location: LocationRecord) => ({
  ...locationKey(location.user_id, location.org_id),
  ...geoKeys(location.user_id, location),
  geo_time: geoTimeOf(location.server_time),
  entity: 'location',
  ...location,
});
