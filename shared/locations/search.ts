/**
 * The geo index's search: the candidate cells' Queries over the index's shards (counted: `SearchStats`), candidates
 * from their entries (the precision-6 cell bounds the position, `geo_time` the age), then the candidates' items read
 * to answer and filter exactly. `driversWithin` is L4, `driversIndexedNear` the dispatch's read of the drivers near a
 * runsheet (the index alone, within a radius). L3, the nearest driver: shared/locations/nearest.ts.
 */
import { BatchGetCommand, type QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import { type Caller, isSysAdmin } from '#shared/auth/caller';
import { clock } from '#shared/clock';
import { db, locationsTableName, queryAll } from '#shared/db/client';
import { forbidden } from '#shared/errors';
import {
  cellBox,
  distanceM,
  distanceToBoxM,
  GEO_SHARDS,
  type Point,
  planRadius,
  SORT_PRECISION,
} from '#shared/locations/geo';
import {
  GEO_TIME_GRANULARITY_S,
  inParallel,
  type LocationRecord,
  type LocationView,
  locationKey,
  toRecord,
  view,
} from '#shared/locations/locations';

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
export function searchScope(caller: Caller): string | undefined {
  if (isSysAdmin(caller)) return undefined;
  if (!caller.orgId) throw forbidden('your account belongs to no organisation');
  return caller.orgId;
}

export async function queryCounted(input: QueryCommandInput, stats: SearchStats): Promise<Record<string, unknown>[]> {
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
export async function readCells(
  partition: string,
  first: string | undefined,
  last: string | undefined,
  stats: SearchStats,
) {
  const queries = cellQueries(partition, first, last);
  stats.indexQueries += queries.length;
  return (await Promise.all(queries.map((query) => queryCounted(query, stats)))).flat();
}

export function matches(location: LocationRecord, orgId: string | undefined, filters: SearchFilters): boolean {
  if (orgId !== undefined && location.org_id !== orgId) return false;
  if (clock.nowMs() - Date.parse(location.server_time) > filters.maxAgeS * 1000) return false;
  return filters.serviceType === undefined || location.service_types.includes(filters.serviceType);
}

const DISTANCE_SLACK_M = 0.001;

/** An index entry: who, and where and when to within its precision-6 cell and its granule. */
export interface Candidate {
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
export function candidateOf(
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
export const itemKeyOf = (item: { orgId: string | null; userId: string }) => `${item.orgId ?? ''}|${item.userId}`;
const recordKeyOf = (location: LocationRecord) =>
  itemKeyOf({ orgId: location.org_id ?? null, userId: location.user_id });

/** The current items of some candidates (BatchGetItem, 100 keys a call), by item key (`itemKeyOf`). */
export async function readLocations(candidates: Candidate[], stats: SearchStats): Promise<Map<string, LocationRecord>> {
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
