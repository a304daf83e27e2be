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
 */
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { BatchGetCommand, GetCommand, PutCommand, type QueryCommandInput, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { getUser } from '#shared/accounts/users';
import { type Caller, hasRole, hasScope, isSysAdmin } from '#shared/auth/caller';
import { clock, toUtcIso } from '#shared/clock';
import { mapLimited } from '#shared/concurrency';
import { putAll } from '#shared/db/batch';
import {
  db,
  getAll,
  isConditionalFailure,
  locationsTableName,
  OldImageLostError,
  queryAll,
  type TransactItem,
  transactWrite,
} from '#shared/db/client';
import { shardOf as shardOfId } from '#shared/db/shards';
import { forbidden, invalidAt, notFound } from '#shared/errors';
import { newObjectId } from '#shared/ids';
import {
  type Box,
  cellBox,
  directoryCellOf,
  distanceM,
  distanceToBoxM,
  encode,
  GEO_SHARDS,
  indexPartitionOf,
  MAX_INDEX_QUERIES,
  neighbours,
  POLAR_LATITUDE,
  type Point,
  partitionOfCell,
  planRadius,
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

export interface Fix {
  device_id?: string | null | undefined;
  latitude: number;
  longitude: number;
  altitude?: number | null | undefined;
  client_time_utc: string;
  client_timezone?: string | null | undefined;
}

/**
 * The key of a driver's location item. An organisation's drivers share one partition key, so that their writes ride
 * one partition and hence one shard of the table's stream: a dispatcher gets one `driver.location` frame per batch
 * window however many shards the stream has (docs/live-operations.md). A freelance driver keeps a key of its own.
 */
export const locationKey = (driverId: string, orgId: string | null) =>
  orgId ? { PK: `LOCS#${orgId}`, SK: driverId } : { PK: `LOC#${driverId}`, SK: 'CURRENT' };
const coarseOf = (partition: string) => (partition.startsWith('polar-') ? partition : partition.slice(0, 3));

/** How far ahead of the server a device clock may be before a fix is refused. */
const MAX_CLOCK_SKEW_MS = 10 * 60 * 1000;

/** Shards per geo index partition (its reasons beside it, in geo.ts). */
export { GEO_SHARDS };

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

/**
 * The directory's top level (precision-3 counts and polar caps) is spread over `TOP_SHARDS` keys by cell,
 * `CELLS#TOP#<n>` (issue 45: no key every new cell writes); L3 reads them all. A precision-3 cell's precision-5 counts
 * are `CELLS#ALL#<p3>`.
 */
const TOP_SHARDS = 4;
const topKey = (cell: string) => `CELLS#TOP#${shardOfId(cell, TOP_SHARDS)}`;
const TOP_KEYS = Array.from({ length: TOP_SHARDS }, (_, n) => `CELLS#TOP#${n}`);

/**
 * The keys of a driver at a point: its directory cell (`cell`), and its index entry's `<partition>#<shard>` (a
 * precision-4 or precision-3 cell, or a polar cap: geo.ts `indexPartitionOf`) and `<precision-6 geohash>#<driver>`.
 * The partition is a prefix of the precision-6 cell (but at ±80°), so the entry's key changes only with its sort key.
 */
function geoKeys(driverId: string, point: Point) {
  return {
    cell: directoryCellOf(point),
    GEO_PK: `${indexPartitionOf(point)}#${shardOf(driverId)}`,
    GEO_SK: `${encode(point, SORT_PRECISION)}#${driverId}`,
  };
}

/** The directory entries that count a driver in a partition cell: its precision-3 cell, and the cell itself. */
function directoryEntries(cell: string): string[] {
  if (cell.startsWith('polar-')) return [`${topKey(cell)}|${cell}`];
  return [`${topKey(coarseOf(cell))}|${coarseOf(cell)}`, `CELLS#ALL#${coarseOf(cell)}|${cell}`];
}

async function adjustDirectory(entries: string[], delta: number): Promise<void> {
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
async function releaseDirectory(entries: string[]): Promise<void> {
  if (entries.length === 0) return;
  await adjustDirectory(entries, -1).catch((error: unknown) =>
    logger.warn('cell directory count left high', { entries, error: (error as Error)?.message ?? String(error) }),
  );
}

type Fields = Omit<LocationRecord, 'user_id' | 'version' | 'org_id' | 'service_types'>;

/** What a conditional UpdateItem found instead, when its condition failed (undefined: no location yet). */
function conditionFailureItem(error: unknown): LocationRecord | undefined {
  const item = (error as { Item?: Record<string, unknown> }).Item;
  if (!item) return undefined;
  // The exception carries the item as DynamoDB sent it; the document client does not translate errors.
  const plain =
    typeof item['PK'] === 'object'
      ? unmarshall(item as Record<string, AttributeValue>)
      : (item as Record<string, unknown>);
  return toRecord(plain);
}

/**
 * Stores a newer fix of a driver whose location is in `expectedCell`: one UpdateItem, its condition the ordering rule.
 * The server time of the fix it replaced once stored, or what is stored instead (undefined: no location yet).
 */
async function moveIfNewer(
  driverId: string,
  orgId: string | null,
  fields: Fields,
  point: Point,
  expectedCell: string,
): Promise<{ previousServerTime: string | undefined } | LocationRecord | undefined> {
  const values: Record<string, unknown> = {
    ...fields,
    ...geoKeys(driverId, point),
    geo_time: geoTimeOf(fields.server_time),
  };
  const names = Object.keys(values);
  try {
    const out = await db().send(
      new UpdateCommand({
        TableName: locationsTableName(),
        Key: locationKey(driverId, orgId),
        UpdateExpression: `SET ${names.map((name) => `#${name} = :${name}`).join(', ')} ADD #version :one`,
        ConditionExpression: 'attribute_exists(PK) AND #client_time_utc < :client_time_utc AND #cell = :expected',
        ExpressionAttributeNames: Object.fromEntries([...names, 'version'].map((name) => [`#${name}`, name])),
        ExpressionAttributeValues: {
          ...Object.fromEntries(names.map((name) => [`:${name}`, values[name]])),
          ':one': 1,
          ':expected': expectedCell,
        },
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        // The replaced fix's time (free: a write's return values cost no read unit): the risk check's due mark.
        ReturnValues: 'UPDATED_OLD',
      }),
    );
    return { previousServerTime: out.Attributes?.['server_time'] as string | undefined };
  } catch (error) {
    // Stored, its answer lost: the replaced fix's time with it. The risk check after the fix then waits for the
    // minute's sweep (planning/late-risk.ts), which checks every runsheet under way anyway.
    if (error instanceof OldImageLostError) return { previousServerTime: undefined };
    if (!isConditionalFailure(error)) throw error;
    return conditionFailureItem(error);
  }
}

async function readLocation(driverId: string, orgId: string | null): Promise<LocationRecord | undefined> {
  const out = await db().send(new GetCommand({ TableName: locationsTableName(), Key: locationKey(driverId, orgId) }));
  return out.Item ? toRecord(out.Item) : undefined;
}

/** A fix's client time as stored (UTC ISO), refused at `path` when it is too far ahead of the server's clock. */
function clientTimeOf(fix: Fix, path: string): string {
  const clientTime = toUtcIso(fix.client_time_utc);
  if (Date.parse(clientTime) > clock.nowMs() + MAX_CLOCK_SKEW_MS) {
    throw invalidAt(path, 'is more than 10 minutes ahead of the server clock');
  }
  return clientTime;
}

/**
 * X13: a phone's buffer of fixes. Every fix is checked first (one bad fix refuses the batch at its path and stores
 * nothing); then only the newest is offered to L1's write, so a batch costs what one fix costs. `accepted` is 1 when
 * that fix was stored (0 when the stored fix is as new or newer); every other fix is `ignored`.
 */
export async function recordFixes(
  caller: Caller,
  fixes: Fix[],
): Promise<{ accepted: number; ignored: number; stored: StoredFix | undefined }> {
  let newest: { fix: Fix; at: number } | undefined;
  fixes.forEach((fix, i) => {
    const at = Date.parse(clientTimeOf(fix, `fixes[${i}].client_time_utc`));
    // Equal client times: the later one in the buffer wins (a phone appends in the order it took them).
    if (!newest || at >= newest.at) newest = { fix, at };
  });
  if (!newest) return { accepted: 0, ignored: 0, stored: undefined };
  const stored = await storeFix(caller, newest.fix);
  const accepted = stored ? 1 : 0;
  return { accepted, ignored: fixes.length - accepted, stored };
}

/**
 * A fix the service stored: whose, where and when (its `server_time`), and the server time of the fix it replaced
 * (undefined for a driver's first): what the risk check after it (planning/late-risk.ts) needs, without a read.
 */
export interface StoredFix {
  driverId: string;
  fix: Point & { server_time: string };
  previousServerTime: string | undefined;
}

/**
 * L1. Returns whether the fix was stored (false: it was not newer than the stored one, and is ignored).
 *
 * The item is keyed by the driver's organisation. The write goes first under the token's (the steady state: one
 * UpdateItem); the token may be older than the driver's move into an organisation (A25), and then no item is there:
 * the first-fix path reads the driver's profile, and when its organisation is not the token's the write goes again
 * under the profile's, never a new item under the token's. A25 moves the item and changes the profile in one
 * transaction, so the profile and the item's key never disagree: a stale token cannot bring the item back under the
 * organisation it was moved out of.
 */
export async function recordFix(caller: Caller, fix: Fix): Promise<boolean> {
  return (await storeFix(caller, fix)) !== undefined;
}

/** L1 as `recordFix`, answering the fix stored (undefined: ignored, not newer than the stored one). */
export async function storeFix(caller: Caller, fix: Fix): Promise<StoredFix | undefined> {
  const clientTime = clientTimeOf(fix, 'client_time_utc');
  const point = { latitude: fix.latitude, longitude: fix.longitude };
  const cell = directoryCellOf(point);
  const fields: Fields = {
    id: newObjectId(),
    device_id: fix.device_id ?? null,
    latitude: fix.latitude,
    longitude: fix.longitude,
    altitude: fix.altitude ?? null,
    client_time_utc: clientTime,
    client_timezone: fix.client_timezone ?? null,
    server_time: clock.nowIso(),
  };
  const storedFix = { driverId: caller.id, fix: { ...point, server_time: fields.server_time } };
  let expectedCell = cell;
  let orgId = caller.orgId;
  for (let attempt = 0; attempt < 4; attempt++) {
    // The steady state: a newer fix within the stored partition cell.
    const found = await moveIfNewer(caller.id, orgId, fields, point, expectedCell);
    if (found && 'previousServerTime' in found) {
      if (expectedCell !== cell) await releaseDirectory(leaving(expectedCell, cell));
      return { ...storedFix, previousServerTime: found.previousServerTime };
    }
    if (expectedCell !== cell) await releaseDirectory(leaving(cell, expectedCell)); // the crossing lost a race
    if (!found) {
      const first = await storeFirstFix(caller.id, orgId, fields, point);
      if (first === 'stored') return { ...storedFix, previousServerTime: undefined };
      // The driver's organisation is not the token's (a token minted before A25): its item is under the profile's.
      if (first !== 'lost') orgId = first.orgId;
      continue;
    }
    if (Date.parse(found.client_time_utc) >= Date.parse(clientTime)) return undefined;
    // A crossing into another partition cell: count the driver in the new cells first, then move.
    const stored = directoryCellOf(found);
    await adjustDirectory(leaving(cell, stored), +1);
    expectedCell = stored;
  }
  return undefined;
}

/** The directory entries of `from` that `to` does not share. */
function leaving(from: string, to: string): string[] {
  const kept = new Set(directoryEntries(to));
  return directoryEntries(from).filter((entry) => !kept.has(entry));
}

/**
 * A driver's first fix: the organisation and service types come from the user, once. 'lost': another one won; the
 * organisation when it is not `orgId`, the one the caller looked under (nothing is written then).
 */
async function storeFirstFix(
  driverId: string,
  orgId: string | null,
  fields: Fields,
  point: Point,
): Promise<'stored' | 'lost' | { orgId: string | null }> {
  // A consistent read: an A25 that moved the item has committed by the time the caller's write found nothing, and its
  // new organisation must be the one read here (an eventually consistent read could still answer the old one).
  const driver = await getUser(driverId, { consistent: true });
  if (!driver || driver.deleted_at) throw notFound('driver');
  if ((driver.org_id ?? null) !== orgId) return { orgId: driver.org_id ?? null };
  const location: LocationRecord = {
    ...fields,
    user_id: driverId,
    version: 1,
    org_id: driver.org_id,
    service_types: driver.driver_profile?.service_types ?? [],
  };
  const entries = directoryEntries(directoryCellOf(point));
  await adjustDirectory(entries, +1);
  try {
    await db().send(
      new PutCommand({
        TableName: locationsTableName(),
        Item: {
          ...locationKey(driverId, location.org_id),
          ...geoKeys(driverId, point),
          geo_time: geoTimeOf(fields.server_time),
          entity: 'location',
          ...location,
        },
        ConditionExpression: 'attribute_not_exists(PK)',
      }),
    );
  } catch (error) {
    if (!isConditionalFailure(error)) throw error;
    await releaseDirectory(entries);
    return 'lost';
  }
  // An A25 that committed between the read above and the put found no item to move (its check passed before the put),
  // so the item would stay under a key the profile no longer names, its organisation blind to the driver. Read the
  // profile again: if it moved on, move the item as A25 would have (an A25 that did see the item has moved it, and
  // this move then finds nothing and stops).
  const after = await currentOrganisation(driverId);
  if (after !== undefined && after !== null && after !== location.org_id) {
    try {
      await transactWrite(await organisationMove(driverId, location.org_id, after, undefined));
    } catch (error) {
      if (!isConditionalFailure(error)) throw error;
    }
  }
  return 'stored';
}

/** The driver's organisation as its profile says now (a consistent read); undefined: no such driver. */
async function currentOrganisation(driverId: string): Promise<string | null | undefined> {
  const driver = await getUser(driverId, { consistent: true });
  return driver ? (driver.org_id ?? null) : undefined;
}

/**
 * Current positions of some drivers of an organisation or freelance (the planning job ranks its candidates by them):
 * each under the organisation's key, and under its own when it is not there (a freelance driver).
 */
export async function currentPositions(orgId: string, driverIds: string[]): Promise<Map<string, Point>> {
  return currentFixes(orgId, driverIds);
}

/**
 * Each driver's current position and when the service stored it (`server_time`): what dispatch judges freshness by.
 * Batched (the wave worker reads a planning's drivers every sweep: 700 drivers are 7 calls, not 700): the
 * organisation's fixes first, then the freelance fixes of those without one (only those, `orgId` null).
 */
export async function currentFixes(
  orgId: string | null,
  driverIds: string[],
): Promise<Map<string, Point & { server_time: string }>> {
  const found = new Map<string, Point & { server_time: string }>();
  const read = async (ids: string[], owner: string | null) => {
    const items = await getAll(
      locationsTableName(),
      ids.map((id) => locationKey(id, owner)),
    );
    for (const item of items) {
      const location = toRecord(item);
      found.set(location.user_id, {
        latitude: location.latitude,
        longitude: location.longitude,
        server_time: location.server_time,
      });
    }
  };
  const unique = [...new Set(driverIds)];
  if (orgId !== null) await read(unique, orgId);
  await read(
    unique.filter((id) => !found.has(id)),
    null,
  );
  return found;
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

function view(location: LocationRecord, distance?: number): LocationView {
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

/**
 * L2: SysAdmin any driver; OrgAdmin, OrgTransporter and a partner with `locations:read` their organisation's drivers;
 * a driver themself.
 */
export async function readDriverLocation(caller: Caller, driverId: string): Promise<LocationView> {
  const orgId = await organisationOf(caller, driverId);
  const location = orgId === undefined ? undefined : await readLocation(driverId, orgId);
  const visible =
    location &&
    (isSysAdmin(caller) ||
      caller.id === driverId ||
      (watchesOrganisation(caller) && caller.orgId !== null && location.org_id === caller.orgId));
  if (!visible) throw notFound('driver location');
  return view(location);
}

/**
 * The organisation whose key L2 reads: an OrgAdmin's or OrgTransporter's own (tenancy by the key: another
 * organisation's driver is not there); SysAdmin and a driver reading themself the driver's profile's (one consistent GetItem:
 * a driver's token may be older than its move into an organisation, and right after A25 the move must be seen). Undefined: nothing to read (404).
 */
async function organisationOf(caller: Caller, driverId: string): Promise<string | null | undefined> {
  if (isSysAdmin(caller) || caller.id === driverId) return currentOrganisation(driverId);
  return watchesOrganisation(caller) && caller.orgId !== null ? caller.orgId : undefined;
}

/** Who reads their organisation's drivers' locations: OrgAdmin, OrgTransporter, a partner with `locations:read`. */
const watchesOrganisation = (caller: Caller): boolean =>
  hasRole(caller, 'OrgAdmin', 'OrgTransporter') || hasScope(caller, 'locations:read');

export interface SearchFilters {
  maxAgeS: number;
  serviceType?: string | undefined;
}

/** DynamoDB work done by one search: for the benchmarks and the tests. */
export interface SearchStats {
  /** Every call: Queries (index and directory, each page), GetItem, BatchGetItem. */
  queries: number;
  /** Of those, the geo index's Queries: at most MAX_INDEX_QUERIES a search (API.md 4.9), pages of 1 MB aside. */
  indexQueries: number;
  itemsRead: number;
}

/**
 * Whose drivers a caller finds: SysAdmin everybody's (undefined), the others their own organisation's, kept from the
 * one geo index (an organisation's search reads the other organisations' drivers of the cells it visits).
 */
function searchScope(caller: Caller): string | undefined {
  if (isSysAdmin(caller)) return undefined;
  if (!caller.orgId) throw forbidden('your account belongs to no organisation');
  return caller.orgId;
}

async function queryCounted(input: QueryCommandInput, stats: SearchStats): Promise<Record<string, unknown>[]> {
  return queryAll(input, (out) => {
    stats.queries++;
    stats.itemsRead += out.ScannedCount ?? out.Items?.length ?? 0;
  });
}

/**
 * The Queries that read a geo index partition, or the run of its cells from `first` to `last` (geohashes of one
 * precision, in geohash order: a sort key begins with its precision-6 geohash, and '~' sorts after every geohash
 * character and '#'): one per shard.
 */
function cellQueries(partition: string, first?: string, last?: string): QueryCommandInput[] {
  let condition = 'GEO_PK = :pk';
  let range: Record<string, string> = {};
  if (first !== undefined && (last === undefined || last === first)) {
    condition = 'GEO_PK = :pk AND begins_with(GEO_SK, :prefix)';
    range = { ':prefix': first };
  } else if (first !== undefined) {
    condition = 'GEO_PK = :pk AND GEO_SK BETWEEN :first AND :last';
    range = { ':first': first, ':last': `${last}~` };
  }
  return Array.from({ length: GEO_SHARDS }, (_, shard) => ({
    TableName: locationsTableName(),
    IndexName: 'Geo',
    KeyConditionExpression: condition,
    ExpressionAttributeValues: { ':pk': `${partition}#${shard}`, ...range },
  }));
}

/** Every entry of a geo index partition (or of its cells from `first` to `last`), its shards read in parallel. */
async function readCells(partition: string, first: string | undefined, last: string | undefined, stats: SearchStats) {
  const queries = cellQueries(partition, first, last);
  stats.indexQueries += queries.length;
  return (await Promise.all(queries.map((query) => queryCounted(query, stats)))).flat();
}

function matches(location: LocationRecord, orgId: string | undefined, filters: SearchFilters): boolean {
  if (orgId !== undefined && location.org_id !== orgId) return false;
  if (clock.nowMs() - Date.parse(location.server_time) > filters.maxAgeS * 1000) return false;
  return filters.serviceType === undefined || location.service_types.includes(filters.serviceType);
}

const DISTANCE_SLACK_M = 0.001;

/** An index entry: who, and where and when to within its precision-6 cell and its granule. */
interface Candidate {
  userId: string;
  /** The driver's organisation, as the entry projects it: with userId, the key of its item. */
  orgId: string | null;
  /** The least and the greatest distance from the search point the driver's position can be (it is in the cell). */
  least: number;
  most: number;
}

/**
 * The index entry as a candidate for a search from `point`, or undefined when it cannot match: another organisation,
 * not the service type, or a geo_time so old that its real fix is older than `max_age_s` whatever it is.
 */
function candidateOf(
  item: Record<string, unknown>,
  point: Point,
  orgId: string | undefined,
  filters: SearchFilters,
): Candidate | undefined {
  if (orgId !== undefined && item['org_id'] !== orgId) return undefined;
  const serviceTypes = (item['service_types'] as string[] | undefined) ?? [];
  if (filters.serviceType !== undefined && !serviceTypes.includes(filters.serviceType)) return undefined;
  // The real server time is in [geo_time, geo_time + G): its age is more than this. An entry written before geo_time
  // existed has none: its age is unknown here, and its item decides.
  if (item['geo_time'] !== undefined) {
    const leastAgeMs = clock.nowMs() - Date.parse(String(item['geo_time'])) - GEO_TIME_GRANULARITY_S * 1000;
    if (!(leastAgeMs < filters.maxAgeS * 1000)) return undefined;
  }
  const cell = String(item['GEO_SK']).slice(0, SORT_PRECISION);
  const box = cellBox(cell);
  const centre = { latitude: (box.minLat + box.maxLat) / 2, longitude: (box.minLon + box.maxLon) / 2 };
  const corners = [
    { latitude: box.minLat, longitude: box.minLon },
    { latitude: box.minLat, longitude: box.maxLon },
    { latitude: box.maxLat, longitude: box.minLon },
    { latitude: box.maxLat, longitude: box.maxLon },
  ];
  const halfDiagonal = Math.max(...corners.map((corner) => distanceM(centre, corner)));
  // A millimetre of slack each way: rounding in the distances only widens the candidates, never drops one.
  return {
    userId: String(item['user_id']),
    orgId: typeof item['org_id'] === 'string' && item['org_id'] ? item['org_id'] : null,
    least: distanceToBoxM(point, box) - DISTANCE_SLACK_M,
    most: distanceM(point, centre) + halfDiagonal + DISTANCE_SLACK_M,
  };
}

/** A location item's identity: its organisation and driver (a driver's item and its index entry share it). */
const itemKeyOf = (item: { orgId: string | null; userId: string }) => `${item.orgId ?? ''}|${item.userId}`;
const recordKeyOf = (location: LocationRecord) =>
  itemKeyOf({ orgId: location.org_id ?? null, userId: location.user_id });

/** The current items of some candidates (BatchGetItem, 100 keys a call), by item key (`itemKeyOf`). */
async function readLocations(candidates: Candidate[], stats: SearchStats): Promise<Map<string, LocationRecord>> {
  const found = new Map<string, LocationRecord>();
  const unique = [...new Map(candidates.map((c) => [itemKeyOf(c), locationKey(c.userId, c.orgId)])).values()];
  await inParallel(
    Array.from({ length: Math.ceil(unique.length / 100) }, (_, i) => async () => {
      let keys: Record<string, unknown>[] | undefined = unique.slice(i * 100, i * 100 + 100);
      while (keys && keys.length > 0) {
        const out = await db().send(new BatchGetCommand({ RequestItems: { [locationsTableName()]: { Keys: keys } } }));
        stats.queries++;
        for (const item of out.Responses?.[locationsTableName()] ?? []) {
          stats.itemsRead++;
          const location = toRecord(item);
          found.set(recordKeyOf(location), location);
        }
        keys = out.UnprocessedKeys?.[locationsTableName()]?.Keys as Record<string, unknown>[] | undefined;
      }
    }),
    8,
  );
  return found;
}

/** Runs the thunks with at most `limit` in flight (shared/concurrency.ts), results in their order. */
const inParallel = <T>(tasks: (() => Promise<T>)[], limit: number): Promise<T[]> =>
  mapLimited(tasks, limit, (task) => task());

/** The index entries that can be within `radiusM` of `centre` and match the filters: L4's candidates. */
async function radiusCandidates(
  centre: Point,
  radiusM: number,
  orgId: string | undefined,
  filters: SearchFilters,
  stats: SearchStats,
  finest = SORT_PRECISION,
): Promise<Candidate[]> {
  const plan = planRadius(centre, radiusM, GEO_SHARDS, finest);
  const inputs = plan.queries.flatMap((query) => cellQueries(query.partition, query.first, query.last));
  stats.indexQueries += inputs.length;
  const batches = await inParallel(
    inputs.map((input) => () => queryCounted(input, stats)),
    16,
  );
  return batches
    .flat()
    .map((item) => candidateOf(item, centre, orgId, filters))
    .filter((candidate): candidate is Candidate => candidate !== undefined && candidate.least <= radiusM);
}

/**
 * X17 (issue 45): the drivers of organisation `orgId`, or freelance, whose index entry says they may be within
 * `radiusM` of `centre` with a fix at most `maxAgeS` old (every such driver whose current fix is, the index lagging its
 * items aside, as for L4), each with the least distance its cell allows, least first. From the index alone: which of
 * them matter, and their items, are the caller's to read. `finest`: the finest cells its Queries range over (fewer
 * Queries of coarser cells read more entries: planRadius).
 */
export async function driversIndexedNear(
  centre: Point,
  radiusM: number,
  maxAgeS: number,
  orgId: string,
  finest = SORT_PRECISION,
): Promise<{ id: string; least: number }[]> {
  const stats = { queries: 0, indexQueries: 0, itemsRead: 0 };
  const found = new Map<string, number>();
  for (const candidate of await radiusCandidates(centre, radiusM, undefined, { maxAgeS }, stats, finest)) {
    if (candidate.orgId !== orgId && candidate.orgId !== null) continue;
    found.set(candidate.userId, Math.min(candidate.least, found.get(candidate.userId) ?? candidate.least));
  }
  return [...found].map(([id, least]) => ({ id, least })).sort((a, b) => a.least - b.least);
}

/** L4: every visible driver within `radiusM`, nearest first. */
export async function driversWithin(
  caller: Caller,
  centre: Point,
  radiusM: number,
  filters: SearchFilters,
  stats: SearchStats = { queries: 0, indexQueries: 0, itemsRead: 0 },
): Promise<LocationView[]> {
  const orgId = searchScope(caller);
  const candidates = await radiusCandidates(centre, radiusM, orgId, filters, stats);
  const locations = await readLocations(candidates, stats);
  // One answer per driver: were a driver's item under two keys for a moment (an A25 move the index has not caught up
  // with), the newer fix.
  const byDriver = new Map<string, { location: LocationRecord; distance: number }>();
  for (const location of locations.values()) {
    const distance = distanceM(centre, location);
    if (!(distance <= radiusM && matches(location, orgId, filters))) continue;
    const seen = byDriver.get(location.user_id);
    if (!seen || seen.location.server_time < location.server_time)
      byDriver.set(location.user_id, { location, distance });
  }
  const found = [...byDriver.values()];
  found.sort((a, b) => a.distance - b.distance || a.location.user_id.localeCompare(b.location.user_id));
  return found.map(({ location, distance }) => view(location, distance));
}

const POLAR_BOX: Record<'polar-N' | 'polar-S', Box> = {
  'polar-N': { minLat: POLAR_LATITUDE, maxLat: 90, minLon: -180, maxLon: 180 },
  'polar-S': { minLat: -90, maxLat: -POLAR_LATITUDE, minLon: -180, maxLon: 180 },
};

/** A best-first queue entry: a region and the least distance anything in it can be from the search point. */
interface Region {
  bound: number;
  /** fine: a precision-6 cell; coarse: a precision-3 cell of the directory; cell: a precision-5 cell; partition: a
   * polar cap; run: the occupied precision-5 cells of one index partition, from `cell` to `last`. */
  kind: 'fine' | 'coarse' | 'cell' | 'partition' | 'run';
  cell: string;
  last?: string;
}

class RegionQueue {
  private readonly items: Region[] = [];
  push(region: Region) {
    this.items.push(region);
    let i = this.items.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (this.items[parent]!.bound <= this.items[i]!.bound) break;
      [this.items[parent], this.items[i]] = [this.items[i]!, this.items[parent]!];
      i = parent;
    }
  }
  pop(): Region | undefined {
    const top = this.items[0];
    const last = this.items.pop();
    if (this.items.length > 0 && last) {
      this.items[0] = last;
      let i = 0;
      for (;;) {
        const left = 2 * i + 1;
        const right = left + 1;
        let smallest = i;
        if (left < this.items.length && this.items[left]!.bound < this.items[smallest]!.bound) smallest = left;
        if (right < this.items.length && this.items[right]!.bound < this.items[smallest]!.bound) smallest = right;
        if (smallest === i) break;
        [this.items[smallest], this.items[i]] = [this.items[i]!, this.items[smallest]!];
        i = smallest;
      }
    }
    return top;
  }
  peek(): Region | undefined {
    return this.items[0];
  }
}

const boundOf = (point: Point, cell: string) =>
  cell.startsWith('polar-')
    ? distanceToBoxM(point, POLAR_BOX[cell as 'polar-N' | 'polar-S'])
    : distanceToBoxM(point, cellBox(cell));

/**
 * Nearby first: cells of this precision around the point, best first, while the search stays within this reach. The
 * sort key's precision: a finer cell is no `begins_with` of it.
 */
const FINE_PRECISION = SORT_PRECISION;
const FINE_REACH_M = 3000;
const FINE_MAX_CELLS = 16;
/**
 * Stage 1 pays one Query per fine cell, which only beats reading the point's whole partition when that partition is
 * crowded. At or below this many drivers in it, the search starts from the directory (one Query reads them all).
 */
const SPARSE_PARTITION = 100;

/**
 * L3: the closest visible driver. First best-first over small cells around the point (cheap when a driver is
 * near); if that ends without a proven answer, best-first over the occupied cells of the directory (precision 3,
 * then 5), which reaches any distance. Each stage stops only when no unvisited region can hold anything closer.
 */
/** How many drivers the directory counts in the partition holding `point`. */
async function partitionCount(point: Point, stats: SearchStats): Promise<number> {
  const partition = directoryCellOf(point);
  const out = await db().send(
    new GetCommand({
      TableName: locationsTableName(),
      Key: { PK: `CELLS#ALL#${coarseOf(partition)}`, SK: partition },
      ProjectionExpression: 'n',
    }),
  );
  stats.queries++;
  stats.itemsRead++;
  return Number(out.Item?.['n'] ?? 0);
}

/** L3 reads its candidates' items this many at a time (BatchGetItem takes 100 keys). */
const CANDIDATE_BATCH = 100;

export async function nearestDriver(
  caller: Caller,
  point: Point,
  filters: SearchFilters,
  stats: SearchStats = { queries: 0, indexQueries: 0, itemsRead: 0 },
): Promise<LocationView | undefined> {
  const orgId = searchScope(caller);
  // Every candidate whose item has been read (matching or not) is settled: later rounds search the index without it,
  // and the nearest matching one found so far is `best`. A round ends with an answer when `best` is within the
  // round's bound (nothing unsettled outside its candidates is nearer); otherwise it read at least one unsettled
  // candidate (the first in order has least ≤ bound < best), so rounds end. A candidate can be settled yet beyond its
  // entry's cell (an item that moved before the index caught up): its true distance counts, its entry no longer does.
  const settled = new Set<string>();
  let best: { location: LocationRecord; distance: number } | undefined;
  for (;;) {
    const { candidates, bound, cut } = await nearestCandidates(point, orgId, filters, settled, stats);
    if (candidates.length === 0) return best && view(best.location, best.distance);
    // Issue 27: a candidate's cell spans up to ~1.4 km, so there can be many. Their items are read least distance
    // first, a BatchGetItem of CANDIDATE_BATCH at a time, until the next one's least distance is beyond the nearest
    // matching driver found: it cannot be nearer (nor as near), so it is not read.
    const ordered = [...new Map(candidates.map((candidate) => [itemKeyOf(candidate), candidate])).values()].sort(
      (a, b) => a.least - b.least,
    );
    for (let start = 0; start < ordered.length; start += CANDIDATE_BATCH) {
      const batch = ordered.slice(start, start + CANDIDATE_BATCH).filter((c) => !best || c.least <= best.distance);
      if (batch.length === 0) break;
      const locations = await readLocations(batch, stats);
      for (const candidate of batch) {
        settled.add(itemKeyOf(candidate));
        const location = locations.get(itemKeyOf(candidate));
        if (!location || !matches(location, orgId, filters)) continue;
        const distance = distanceM(point, location);
        if (
          !best ||
          distance < best.distance ||
          (distance === best.distance && location.user_id < best.location.user_id)
        ) {
          best = { location, distance };
        }
      }
    }
    if (best && best.distance <= bound) return view(best.location, best.distance);
    if (cut) {
      // API.md 4.9: the search has spent its Queries before it could prove an answer (docs/indexes.md says when).
      logger.warn('L3 stopped at its index Query bound', { indexQueries: stats.indexQueries, bound });
      return best && view(best.location, best.distance);
    }
  }
}

/**
 * The best-first search over the index: every candidate that can be the nearest (its least distance is at most the
 * smallest greatest distance of any candidate), proven by visiting every region that could hold a closer one.
 */
async function nearestCandidates(
  point: Point,
  orgId: string | undefined,
  filters: SearchFilters,
  excluded: Set<string>,
  stats: SearchStats,
): Promise<{ candidates: Candidate[]; bound: number; cut?: true }> {
  const candidates: Candidate[] = [];
  // The least of the candidates' greatest distances: the nearest driver is at most this far.
  let best: { distance: number } | undefined;
  const consider = (items: Record<string, unknown>[]) => {
    for (const item of items) {
      const candidate = candidateOf(item, point, orgId, filters);
      if (!candidate || excluded.has(itemKeyOf(candidate))) continue;
      candidates.push(candidate);
      if (!best || candidate.most < best.distance) best = { distance: candidate.most };
    }
  };
  const finish = () => ({
    candidates: candidates.filter((candidate) => best && candidate.least <= best.distance),
    bound: best?.distance ?? Number.POSITIVE_INFINITY,
  });
  // API.md 4.9: the request's index Queries, over every round of nearestDriver, stay within MAX_INDEX_QUERIES. A
  // search that would need more ends with what it has, its bound the least distance it has not searched (`cut`).
  const affordable = () => stats.indexQueries + GEO_SHARDS <= MAX_INDEX_QUERIES;
  const cut = (region: Region) => ({
    candidates: candidates.filter((candidate) => !best || candidate.least <= best.distance),
    bound: Math.min(region.bound, best?.distance ?? Number.POSITIVE_INFINITY),
    cut: true as const,
  });
  const readRegion = async (region: Region) => {
    if (region.kind === 'partition') consider(await readCells(region.cell, undefined, undefined, stats));
    else consider(await readCells(partitionOfCell(region.cell), region.cell, region.last ?? region.cell, stats));
  };

  // Stage 1: fine cells around the point, when its partition is crowded.
  if (Math.abs(point.latitude) < POLAR_LATITUDE && (await partitionCount(point, stats)) > SPARSE_PARTITION) {
    const queue = new RegionQueue();
    const start = encode(point, FINE_PRECISION);
    const seen = new Set([start]);
    queue.push({ bound: 0, kind: 'fine', cell: start });
    let visited = 0;
    for (;;) {
      const region = queue.peek();
      if (!region) break;
      if (best && region.bound > best.distance) return finish();
      if (region.bound > FINE_REACH_M || visited >= FINE_MAX_CELLS) break;
      if (!affordable()) return cut(region);
      queue.pop();
      visited++;
      await readRegion(region);
      for (const cell of neighbours(region.cell)) {
        const box = cellBox(cell);
        const polar = box.maxLat > POLAR_LATITUDE ? 'polar-N' : box.minLat < -POLAR_LATITUDE ? 'polar-S' : undefined;
        if (polar && !seen.has(polar)) {
          seen.add(polar);
          queue.push({ bound: boundOf(point, polar), kind: 'partition', cell: polar });
        }
        if (seen.has(cell) || box.minLat >= POLAR_LATITUDE || box.maxLat <= -POLAR_LATITUDE) continue;
        seen.add(cell);
        queue.push({ bound: distanceToBoxM(point, box), kind: 'fine', cell });
      }
    }
  }

  // Stage 2: the directory of occupied cells.
  const queue = new RegionQueue();
  const tops = await Promise.all(
    TOP_KEYS.map((pk) =>
      queryCounted(
        {
          TableName: locationsTableName(),
          KeyConditionExpression: 'PK = :pk',
          ExpressionAttributeValues: { ':pk': pk },
        },
        stats,
      ),
    ),
  );
  for (const item of tops.flat()) {
    if (Number(item['n']) <= 0) continue;
    const cell = String(item['SK']);
    queue.push({ bound: boundOf(point, cell), kind: cell.startsWith('polar-') ? 'partition' : 'coarse', cell });
  }
  // The crowded cells queued, by index partition, and their bounds: when there are more of them within reach than the
  // Queries left can read one by one (near a pole every cell of a row is as near as the others), the popped cell's
  // partition is read as one run of its queued cells instead.
  const pending = new Map<string, Map<string, number>>();
  const pendingWithin = (limit: number) =>
    [...pending.values()].reduce((sum, cells) => sum + [...cells.values()].filter((b) => b <= limit).length, 0);
  for (;;) {
    const region = queue.pop();
    if (!region || (best && region.bound > best.distance)) break;
    if (region.kind === 'coarse') {
      const occupied = (
        await queryCounted(
          {
            TableName: locationsTableName(),
            KeyConditionExpression: 'PK = :pk',
            ExpressionAttributeValues: { ':pk': `CELLS#ALL#${region.cell}` },
          },
          stats,
        )
      ).filter((item) => Number(item['n']) > 0);
      for (const found of occupiedRegions(point, occupied)) {
        if (found.kind === 'cell') {
          const cells = pending.get(partitionOfCell(found.cell)) ?? new Map<string, number>();
          cells.set(found.cell, found.bound);
          pending.set(partitionOfCell(found.cell), cells);
        }
        queue.push(found);
      }
      continue;
    }
    if (!affordable()) return cut(region);
    if (region.kind !== 'cell') {
      await readRegion(region);
      continue;
    }
    const cells = pending.get(partitionOfCell(region.cell));
    if (!cells?.has(region.cell)) continue; // read already, in a run of its partition
    const left = (MAX_INDEX_QUERIES - stats.indexQueries) / GEO_SHARDS;
    if (pendingWithin(best?.distance ?? Number.POSITIVE_INFINITY) > left && cells.size > 1) {
      const sorted = [...cells.keys()].sort();
      cells.clear();
      await readRegion({ ...region, kind: 'run', cell: sorted[0]!, last: sorted[sorted.length - 1]! });
    } else {
      cells.delete(region.cell);
      await readRegion(region);
    }
  }
  return finish();
}

/**
 * The regions of a precision-3 cell's occupied precision-5 cells (its directory entries with a count above 0). The
 * occupied cells of one index partition that hold few drivers between them are one region, read by one Query a shard
 * (the run of the partition's cells from the first to the last: the cells between hold no entry, or are among these):
 * where precision-5 cells are slivers (high latitudes) a search reaches many of them at once. A crowded cell is a
 * region of its own, so that a search reads no more of the crowd than its answer needs.
 */
function occupiedRegions(point: Point, occupied: Record<string, unknown>[]): Region[] {
  const byPartition = new Map<string, { cell: string; n: number }[]>();
  for (const item of occupied) {
    const cell = String(item['SK']);
    const list = byPartition.get(partitionOfCell(cell)) ?? [];
    list.push({ cell, n: Number(item['n']) });
    byPartition.set(partitionOfCell(cell), list);
  }
  const regions: Region[] = [];
  for (const cells of byPartition.values()) {
    const bounds = cells.map(({ cell }) => boundOf(point, cell));
    if (cells.length > 1 && cells.reduce((sum, { n }) => sum + n, 0) <= SPARSE_PARTITION) {
      const sorted = cells.map(({ cell }) => cell).sort();
      regions.push({ bound: Math.min(...bounds), kind: 'run', cell: sorted[0]!, last: sorted[sorted.length - 1]! });
    } else {
      for (const [i, { cell }] of cells.entries()) regions.push({ bound: bounds[i]!, kind: 'cell', cell });
    }
  }
  return regions;
}

/** Keys, the cell, and the write stamp of shared/db/client.ts: never part of a location's view. */
const KEY_ATTRIBUTES = /^(PK|SK|GEO_PK|GEO_SK|geo_time|cell|entity|_w)$/;

function toRecord(item: Record<string, unknown>): LocationRecord {
  return Object.fromEntries(
    Object.entries(item).filter(([key]) => !KEY_ATTRIBUTES.test(key)),
  ) as unknown as LocationRecord;
}

/** The stored item of a location. */
const locationItem = (location: LocationRecord) => ({
  ...locationKey(location.user_id, location.org_id),
  ...geoKeys(location.user_id, location),
  geo_time: geoTimeOf(location.server_time),
  entity: 'location',
  ...location,
});

/** Whole location items, 25 a BatchWriteItem, 8 calls in flight (shared/db/batch.ts). */
const putInBatches = (items: Record<string, unknown>[]) => putAll(locationsTableName(), items, 8);

/** A driver's location as `importLocations` stores it: a fix at `point` received now (bulk loads, benches, tests). */
export function locationAt(userId: string, point: Point, orgId: string | null = null): LocationRecord {
  const now = clock.nowIso();
  return {
    id: newObjectId(),
    user_id: userId,
    device_id: null,
    latitude: point.latitude,
    longitude: point.longitude,
    altitude: null,
    client_time_utc: now,
    client_timezone: null,
    server_time: now,
    version: 1,
    org_id: orgId,
    service_types: [],
  };
}

/**
 * Loads many fixes at once (benchmarks, property tests, imports from another system): the same items and
 * directory counts as L1 writes, in batches. Each driver must appear once and must not have a location yet.
 */
export async function importLocations(locations: LocationRecord[]): Promise<void> {
  const counts = new Map<string, number>();
  for (const location of locations) {
    for (const entry of directoryEntries(directoryCellOf(location))) counts.set(entry, (counts.get(entry) ?? 0) + 1);
  }
  await putInBatches(locations.map(locationItem));
  await inParallel(
    [...counts].map(([entry, n]) => async () => {
      const [PK, SK] = entry.split('|') as [string, string];
      await db().send(
        new UpdateCommand({
          TableName: locationsTableName(),
          Key: { PK, SK },
          UpdateExpression: 'ADD n :n',
          ExpressionAttributeValues: { ':n': n },
        }),
      );
    }),
    8,
  );
}

/**
 * Stores newer fixes of drivers that already have a location, in batches, without L1's conditions: the live
 * positions benchmark's load (1 000 drivers a second). The directory is left as it is, so each fix must stay in its
 * driver's precision-5 partition.
 */
export async function storeFixes(locations: LocationRecord[]): Promise<void> {
  await putInBatches(locations.map(locationItem));
}

/** One driver in a `driver.location` event (API.md 4.3). */
export interface LivePosition {
  user_id: string;
  latitude: number;
  longitude: number;
  altitude: number | null;
  client_time_utc: string;
  server_time: string;
  version: number;
}

/**
 * The stored location item (as a stream record's new image carries it) → its organisation and the event's view of
 * it; undefined for anything that is not a driver's current location (the cell directory). Extra attributes are
 * ignored; only the fields below are relied on.
 */
export function livePositionOf(
  item: Record<string, unknown>,
): { orgId: string | null; position: LivePosition } | undefined {
  if (typeof item['PK'] !== 'string' || typeof item['SK'] !== 'string') return undefined;
  const located = item['PK'].startsWith('LOCS#') || (item['PK'].startsWith('LOC#') && item['SK'] === 'CURRENT');
  if (!located) return undefined;
  const record = toRecord(item);
  if (typeof record.user_id !== 'string' || typeof record.latitude !== 'number') return undefined;
  return {
    orgId: typeof record.org_id === 'string' && record.org_id ? record.org_id : null,
    position: {
      user_id: record.user_id,
      latitude: record.latitude,
      longitude: record.longitude,
      altitude: record.altitude ?? null,
      client_time_utc: record.client_time_utc,
      server_time: record.server_time,
      version: Number(record.version),
    },
  };
}
