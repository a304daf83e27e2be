/**
 * L3, the closest visible driver: best-first over regions of the geo index in order of their least distance from the
 * point (`RegionQueue`), first small cells around it, then the occupied cells of the cell directory
 * (`occupiedRegions`), which reach any distance; a search stops only when no unvisited region can hold a closer driver, or at its index
 * Query bound. The candidates and their reads are shared/locations/search.ts's.
 */
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import type { Caller } from '#shared/auth/caller';
import { db, locationsTableName } from '#shared/db/client';
import {
  type Box,
  cellBox,
  directoryCellOf,
  distanceM,
  distanceToBoxM,
  encode,
  GEO_SHARDS,
  MAX_INDEX_QUERIES,
  neighbours,
  POLAR_LATITUDE,
  type Point,
  partitionOfCell,
  SORT_PRECISION,
} from '#shared/locations/geo';
import { coarseOf, type LocationRecord, type LocationView, TOP_KEYS, view } from '#shared/locations/locations';
import {
  type Candidate,
  candidateOf,
  itemKeyOf,
  matches,
  queryCounted,
  readCells,
  readLocations,
  type SearchFilters,
  type SearchStats,
  searchScope,
} from '#shared/locations/search';
import { logger } from '#shared/log';

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
