/**
 * Driver locations (L1–L4). One item per driver holds the newest fix; a conditional write on `version` decides
 * between concurrent updates, and a fix older than the stored one is ignored. The item carries two index entries
 * (the driver's organisation, and everybody) in precision-5 partitions sorted by precision-9 geohash. A cell
 * directory counts drivers per scope at precision 3 and 5, so that a nearest search with nothing nearby can go
 * straight to the occupied cells instead of walking empty ones.
 */
import {
  BatchWriteCommand,
  GetCommand,
  QueryCommand,
  type QueryCommandInput,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { getUser } from '#shared/accounts/users';
import { type Caller, hasRole, isSysAdmin } from '#shared/auth/caller';
import { clock, toUtcIso } from '#shared/clock';
import { db, isConditionalFailure, locationsTableName, type TransactItem, transactWrite } from '#shared/db/client';
import { forbidden, invalidField, notFound } from '#shared/http/problems';
import { newObjectId } from '#shared/ids';
import {
  type Box,
  cellBox,
  distanceM,
  distanceToBoxM,
  encode,
  neighbours,
  PARTITION_PRECISION,
  POLAR_LATITUDE,
  type Point,
  partitionOf,
  planRadius,
  SORT_PRECISION,
} from '#shared/locations/geo';

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

const ALL = 'ALL';
const FREELANCE = 'FREE';
const locationKey = (driverId: string) => ({ PK: `LOC#${driverId}`, SK: 'CURRENT' });
const scopeOf = (orgId: string | null) => orgId ?? FREELANCE;
const coarseOf = (partition: string) => (partition.startsWith('polar-') ? partition : partition.slice(0, 3));

/** How far ahead of the server a device clock may be before a fix is refused. */
const MAX_CLOCK_SKEW_MS = 10 * 60 * 1000;

function indexEntries(location: LocationRecord) {
  const point = { latitude: location.latitude, longitude: location.longitude };
  const partition = partitionOf(point);
  const sort = `${encode(point, SORT_PRECISION)}#${location.user_id}`;
  return {
    GEOORG_PK: `${scopeOf(location.org_id)}#${partition}`,
    GEOORG_SK: sort,
    GEOALL_PK: `${ALL}#${partition}`,
    GEOALL_SK: sort,
  };
}

/** Directory counter changes for a location moving from `before` to `after` (either may be absent). */
function directoryChanges(before: LocationRecord | undefined, after: LocationRecord): TransactItem[] {
  const placements = (location: LocationRecord | undefined) => {
    if (!location) return [];
    const partition = partitionOf(location);
    return [scopeOf(location.org_id), ALL].flatMap((scope) => {
      const coarse = coarseOf(partition);
      const entries = [{ PK: `CELLS#${scope}`, SK: coarse }];
      if (!partition.startsWith('polar-')) entries.push({ PK: `CELLS#${scope}#${coarse}`, SK: partition });
      return entries.map((key) => `${key.PK}|${key.SK}`);
    });
  };
  const old = new Set(placements(before));
  const next = new Set(placements(after));
  const changes: TransactItem[] = [];
  for (const key of new Set([...old, ...next])) {
    const delta = (next.has(key) ? 1 : 0) - (old.has(key) ? 1 : 0);
    if (delta === 0) continue;
    const [PK, SK] = key.split('|') as [string, string];
    changes.push({
      Update: {
        TableName: locationsTableName(),
        Key: { PK, SK },
        UpdateExpression: 'ADD n :delta',
        ExpressionAttributeValues: { ':delta': delta },
      },
    });
  }
  return changes;
}

async function readLocation(driverId: string): Promise<LocationRecord | undefined> {
  const out = await db().send(new GetCommand({ TableName: locationsTableName(), Key: locationKey(driverId) }));
  return out.Item ? toRecord(out.Item) : undefined;
}

/** L1. Returns whether the fix was stored (false: it was older than the stored one, and ignored). */
export async function recordFix(caller: Caller, fix: Fix): Promise<boolean> {
  const clientTime = toUtcIso(fix.client_time_utc);
  if (Date.parse(clientTime) > clock.nowMs() + MAX_CLOCK_SKEW_MS) {
    throw invalidField('client_time_utc', 'is more than 10 minutes ahead of the server clock');
  }
  const driver = await getUser(caller.id);
  if (!driver || driver.deleted_at) throw notFound('driver');
  for (let attempt = 0; attempt < 3; attempt++) {
    const current = await readLocation(caller.id);
    if (current && Date.parse(current.client_time_utc) >= Date.parse(clientTime)) return false;
    const next: LocationRecord = {
      id: newObjectId(),
      user_id: caller.id,
      device_id: fix.device_id ?? null,
      latitude: fix.latitude,
      longitude: fix.longitude,
      altitude: fix.altitude ?? null,
      client_time_utc: clientTime,
      client_timezone: fix.client_timezone ?? null,
      server_time: clock.nowIso(),
      version: (current?.version ?? 0) + 1,
      org_id: driver.org_id,
      service_types: driver.driver_profile?.service_types ?? [],
    };
    try {
      await transactWrite([
        {
          Put: {
            TableName: locationsTableName(),
            Item: { ...locationKey(caller.id), ...indexEntries(next), entity: 'location', ...next },
            ...(current
              ? {
                  ConditionExpression: 'version = :version',
                  ExpressionAttributeValues: { ':version': current.version },
                }
              : { ConditionExpression: 'attribute_not_exists(PK)' }),
          },
        },
        ...directoryChanges(current, next),
      ]);
      return true;
    } catch (error) {
      // Another fix of this driver landed first: read again and compare with that one.
      if (!isConditionalFailure(error)) throw error;
    }
  }
  return false;
}

/** Current positions of some drivers (the planning job ranks its candidates by them). */
export async function currentPositions(driverIds: string[]): Promise<Map<string, Point>> {
  const found = new Map<string, Point>();
  await inParallel(
    driverIds.map((id) => async () => {
      const location = await readLocation(id);
      if (location) found.set(id, { latitude: location.latitude, longitude: location.longitude });
    }),
    16,
  );
  return found;
}

/** A21 keeps the copy of the driver's service types on the location current. */
export async function syncServiceTypes(driverId: string, serviceTypes: string[]): Promise<void> {
  await db()
    .send(
      new UpdateCommand({
        TableName: locationsTableName(),
        Key: locationKey(driverId),
        UpdateExpression: 'SET service_types = :types',
        ConditionExpression: 'attribute_exists(PK)',
        ExpressionAttributeValues: { ':types': serviceTypes },
      }),
    )
    .catch((error: unknown) => {
      if (!isConditionalFailure(error)) throw error;
    });
}

export interface LocationView extends Omit<LocationRecord, 'org_id' | 'service_types'> {
  age_s: number;
  distance_m?: number;
}

function view(location: LocationRecord, distance?: number): LocationView {
  const { org_id: _org, service_types: _types, ...rest } = location;
  return {
    ...rest,
    age_s: Math.max(0, Math.round((clock.nowMs() - Date.parse(location.server_time)) / 1000)),
    ...(distance === undefined ? {} : { distance_m: Math.round(distance * 10) / 10 }),
  };
}

/** L2: SysAdmin any driver; OrgAdmin and OrgTransporter their organisation's drivers; a driver themself. */
export async function readDriverLocation(caller: Caller, driverId: string): Promise<LocationView> {
  const location = await readLocation(driverId);
  const visible =
    location &&
    (isSysAdmin(caller) ||
      caller.id === driverId ||
      (hasRole(caller, 'OrgAdmin', 'OrgTransporter') && caller.orgId !== null && location.org_id === caller.orgId));
  if (!visible) throw notFound('driver location');
  return view(location);
}

export interface SearchFilters {
  maxAgeS: number;
  serviceType?: string | undefined;
}

/** DynamoDB work done by one search: for the benchmarks and the tests. */
export interface SearchStats {
  queries: number;
  itemsRead: number;
}

/** Which index and scope a caller searches: SysAdmin everybody, the others their own organisation. */
function searchScope(caller: Caller): { index: 'GeoAll' | 'GeoOrg'; scope: string } {
  if (isSysAdmin(caller)) return { index: 'GeoAll', scope: ALL };
  if (!caller.orgId) throw forbidden('your account belongs to no organisation');
  return { index: 'GeoOrg', scope: caller.orgId };
}

async function queryAll(input: QueryCommandInput, stats: SearchStats): Promise<Record<string, unknown>[]> {
  const items: Record<string, unknown>[] = [];
  let cursor: Record<string, unknown> | undefined;
  do {
    const out = await db().send(new QueryCommand({ ...input, ExclusiveStartKey: cursor }));
    stats.queries++;
    stats.itemsRead += out.ScannedCount ?? out.Items?.length ?? 0;
    items.push(...(out.Items ?? []));
    cursor = out.LastEvaluatedKey;
  } while (cursor);
  return items;
}

function cellQuery(index: 'GeoAll' | 'GeoOrg', scope: string, partition: string, prefix?: string): QueryCommandInput {
  const pk = index === 'GeoAll' ? 'GEOALL_PK' : 'GEOORG_PK';
  const sk = index === 'GeoAll' ? 'GEOALL_SK' : 'GEOORG_SK';
  return {
    TableName: locationsTableName(),
    IndexName: index,
    KeyConditionExpression: prefix ? '#pk = :pk AND begins_with(#sk, :prefix)' : '#pk = :pk',
    ExpressionAttributeNames: { '#pk': pk, ...(prefix ? { '#sk': sk } : {}) },
    ExpressionAttributeValues: { ':pk': `${scope}#${partition}`, ...(prefix ? { ':prefix': prefix } : {}) },
  };
}

function matches(location: LocationRecord, filters: SearchFilters): boolean {
  if (clock.nowMs() - Date.parse(location.server_time) > filters.maxAgeS * 1000) return false;
  return filters.serviceType === undefined || location.service_types.includes(filters.serviceType);
}

/** Runs `tasks` with at most `limit` in flight. */
async function inParallel<T>(tasks: (() => Promise<T>)[], limit: number): Promise<T[]> {
  const results: T[] = new Array(tasks.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, tasks.length) }, async () => {
      while (next < tasks.length) {
        const index = next++;
        results[index] = await tasks[index]!();
      }
    }),
  );
  return results;
}

/** L4: every visible driver within `radiusM`, nearest first. */
export async function driversWithin(
  caller: Caller,
  centre: Point,
  radiusM: number,
  filters: SearchFilters,
  stats: SearchStats = { queries: 0, itemsRead: 0 },
): Promise<LocationView[]> {
  const { index, scope } = searchScope(caller);
  const plan = planRadius(centre, radiusM);
  const batches = await inParallel(
    plan.queries.map((query) => () => queryAll(cellQuery(index, scope, query.partition, query.prefix), stats)),
    16,
  );
  const found: { location: LocationRecord; distance: number }[] = [];
  for (const item of batches.flat()) {
    const location = toRecord(item);
    const distance = distanceM(centre, location);
    if (distance <= radiusM && matches(location, filters)) found.push({ location, distance });
  }
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
  kind: 'fine' | 'coarse' | 'partition';
  cell: string;
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

/** Nearby first: cells of this precision around the point, best first, while the search stays within this reach. */
const FINE_PRECISION = 7;
const FINE_REACH_M = 3000;
const FINE_MAX_CELLS = 64;
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
/** How many drivers of `scope` the directory counts in the partition holding `point`. */
async function partitionCount(scope: string, point: Point, stats: SearchStats): Promise<number> {
  const partition = partitionOf(point);
  const out = await db().send(
    new GetCommand({
      TableName: locationsTableName(),
      Key: { PK: `CELLS#${scope}#${coarseOf(partition)}`, SK: partition },
      ProjectionExpression: 'n',
    }),
  );
  stats.queries++;
  stats.itemsRead++;
  return Number(out.Item?.['n'] ?? 0);
}

export async function nearestDriver(
  caller: Caller,
  point: Point,
  filters: SearchFilters,
  stats: SearchStats = { queries: 0, itemsRead: 0 },
): Promise<LocationView | undefined> {
  const { index, scope } = searchScope(caller);
  let best: { location: LocationRecord; distance: number } | undefined;
  const consider = (items: Record<string, unknown>[]) => {
    for (const item of items) {
      const location = toRecord(item);
      if (!matches(location, filters)) continue;
      const distance = distanceM(point, location);
      if (
        !best ||
        distance < best.distance ||
        (distance === best.distance && location.user_id < best.location.user_id)
      ) {
        best = { location, distance };
      }
    }
  };
  const readRegion = async (region: Region) => {
    if (region.cell.startsWith('polar-') || region.cell.length === PARTITION_PRECISION) {
      consider(await queryAll(cellQuery(index, scope, region.cell), stats));
    } else {
      consider(await queryAll(cellQuery(index, scope, region.cell.slice(0, PARTITION_PRECISION), region.cell), stats));
    }
  };

  // Stage 1: fine cells around the point, when its partition is crowded.
  if (Math.abs(point.latitude) < POLAR_LATITUDE && (await partitionCount(scope, point, stats)) > SPARSE_PARTITION) {
    const queue = new RegionQueue();
    const start = encode(point, FINE_PRECISION);
    const seen = new Set([start]);
    queue.push({ bound: 0, kind: 'fine', cell: start });
    let visited = 0;
    for (;;) {
      const region = queue.peek();
      if (!region) break;
      if (best && region.bound >= best.distance) return view(best.location, best.distance);
      if (region.bound > FINE_REACH_M || visited >= FINE_MAX_CELLS) break;
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
  for (const item of await queryAll(
    {
      TableName: locationsTableName(),
      KeyConditionExpression: 'PK = :pk',
      ExpressionAttributeValues: { ':pk': `CELLS#${scope}` },
    },
    stats,
  )) {
    if (Number(item['n']) <= 0) continue;
    const cell = String(item['SK']);
    queue.push({ bound: boundOf(point, cell), kind: cell.startsWith('polar-') ? 'partition' : 'coarse', cell });
  }
  for (;;) {
    const region = queue.pop();
    if (!region || (best && region.bound >= best.distance)) break;
    if (region.kind === 'coarse') {
      for (const item of await queryAll(
        {
          TableName: locationsTableName(),
          KeyConditionExpression: 'PK = :pk',
          ExpressionAttributeValues: { ':pk': `CELLS#${scope}#${region.cell}` },
        },
        stats,
      )) {
        if (Number(item['n']) > 0) {
          const cell = String(item['SK']);
          queue.push({ bound: boundOf(point, cell), kind: 'partition', cell });
        }
      }
    } else {
      await readRegion(region);
    }
  }
  return best
    ? view((best as { location: LocationRecord }).location, (best as { distance: number }).distance)
    : undefined;
}

const KEY_ATTRIBUTES = /^(PK|SK|GEOORG_PK|GEOORG_SK|GEOALL_PK|GEOALL_SK|entity)$/;

function toRecord(item: Record<string, unknown>): LocationRecord {
  return Object.fromEntries(
    Object.entries(item).filter(([key]) => !KEY_ATTRIBUTES.test(key)),
  ) as unknown as LocationRecord;
}

/**
 * Loads many fixes at once (benchmarks, property tests, imports from another system): the same items and
 * directory counts as L1 writes, in batches. Each driver must appear once and must not have a location yet.
 */
export async function importLocations(locations: LocationRecord[]): Promise<void> {
  const counts = new Map<string, number>();
  for (const location of locations) {
    for (const change of directoryChanges(undefined, location)) {
      const key = change.Update!.Key as { PK: string; SK: string };
      const id = `${key.PK}|${key.SK}`;
      counts.set(id, (counts.get(id) ?? 0) + 1);
    }
  }
  const items = locations.map((location) => ({
    ...locationKey(location.user_id),
    ...indexEntries(location),
    entity: 'location',
    ...location,
  }));
  await inParallel(
    Array.from({ length: Math.ceil(items.length / 25) }, (_, i) => async () => {
      let pending = items.slice(i * 25, i * 25 + 25).map((Item) => ({ PutRequest: { Item } }));
      while (pending.length > 0) {
        const out = await db().send(new BatchWriteCommand({ RequestItems: { [locationsTableName()]: pending } }));
        pending = (out.UnprocessedItems?.[locationsTableName()] ?? []) as typeof pending;
      }
    }),
    8,
  );
  await inParallel(
    [...counts].map(([id, n]) => async () => {
      const [PK, SK] = id.split('|') as [string, string];
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
 * Stores newer fixes of drivers that already have a location, in batches, without L1's reads and conditions: the
 * live positions benchmark's load (1 000 drivers a second). The directory is left as it is, so each fix must stay
 * in its driver's precision-5 partition.
 */
export async function storeFixes(locations: LocationRecord[]): Promise<void> {
  const items = locations.map((location) => ({
    ...locationKey(location.user_id),
    ...indexEntries(location),
    entity: 'location',
    ...location,
  }));
  await inParallel(
    Array.from({ length: Math.ceil(items.length / 25) }, (_, i) => async () => {
      let pending = items.slice(i * 25, i * 25 + 25).map((Item) => ({ PutRequest: { Item } }));
      while (pending.length > 0) {
        const out = await db().send(new BatchWriteCommand({ RequestItems: { [locationsTableName()]: pending } }));
        pending = (out.UnprocessedItems?.[locationsTableName()] ?? []) as typeof pending;
      }
    }),
    8,
  );
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
  if (typeof item['PK'] !== 'string' || !item['PK'].startsWith('LOC#') || item['SK'] !== 'CURRENT') return undefined;
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
