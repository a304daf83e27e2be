/**
 * Geometry for the location index: great-circle distances, the exact distance from a point to a geohash cell, and
 * the plan of which cells a circle touches. Pure functions, no I/O.
 *
 * The index's partitions are geohash cells of precision 4 (about 39 km × 19.5 km at the equator), of precision 3 from
 * ±56.25°, and beyond ±80°, where geohash cells become slivers, one polar partition a hemisphere; sort keys begin with
 * the precision-6 geohash (about 1.2 km × 0.6 km: coarse, so that a moving driver's index entry stays put for
 * minutes), so any run of consecutive cells of a partition is one Query; nothing finer than precision 6 can be, the
 * index knows a position only to its precision-6 cell (docs/indexes.md).
 */
import ngeohash from 'ngeohash';

/** The mean Earth radius (IUGG), in metres. */
export const EARTH_RADIUS_M = 6_371_008.8;

export interface Point {
  latitude: number;
  longitude: number;
}

/** Degrees to radians, computed as the client computes them, so that both give the same figures to the last bit. */
const radians = (degrees: number) => (degrees * Math.PI) / 180;

/**
 * The great-circle (haversine) distance in metres. The service's own: the client package (lib/client/geo.ts) has its
 * copy for the apps, and the service never loads its client; the two give the same figures (test/unit/geo.test.ts).
 */
export function distanceM(from: Point, to: Point): number {
  const halfChord =
    Math.sin(radians(to.latitude - from.latitude) / 2) ** 2 +
    Math.cos(radians(from.latitude)) *
      Math.cos(radians(to.latitude)) *
      Math.sin(radians(to.longitude - from.longitude) / 2) ** 2;
  return 2 * EARTH_RADIUS_M * Math.asin(Math.min(1, Math.sqrt(halfChord)));
}

export const PARTITION_PRECISION = 5;
export const SORT_PRECISION = 6;
export const POLAR_LATITUDE = 80;

const rad = (deg: number) => (deg * Math.PI) / 180;

export interface Box {
  minLat: number;
  minLon: number;
  maxLat: number;
  maxLon: number;
}

/** Signed longitude difference folded into (-180, 180]. */
function lonDelta(from: number, to: number): number {
  let d = (to - from) % 360;
  if (d > 180) d -= 360;
  if (d <= -180) d += 360;
  return d;
}

/**
 * The exact great-circle distance from `p` to the nearest point of a latitude/longitude box. Inside the box's
 * longitudes the nearest point lies on the same meridian; outside them it lies on the nearer meridian edge, at the
 * latitude where the distance to that meridian is least (or at an end of the edge).
 */
export function distanceToBoxM(p: Point, box: Box): number {
  const insideLon =
    box.maxLon - box.minLon >= 360 ||
    (lonDelta(box.minLon, p.longitude) >= 0 && lonDelta(p.longitude, box.maxLon) >= 0);
  if (insideLon) {
    if (p.latitude >= box.minLat && p.latitude <= box.maxLat) return 0;
    const edge = p.latitude < box.minLat ? box.minLat : box.maxLat;
    return distanceM(p, { latitude: edge, longitude: p.longitude });
  }
  let best = Number.POSITIVE_INFINITY;
  for (const edgeLon of [box.minLon, box.maxLon]) {
    const dLon = rad(Math.abs(lonDelta(p.longitude, edgeLon)));
    const candidates = [box.minLat, box.maxLat];
    if (Math.cos(dLon) > 0) {
      const closest = (Math.atan(Math.tan(rad(p.latitude)) / Math.cos(dLon)) * 180) / Math.PI;
      candidates.push(Math.min(box.maxLat, Math.max(box.minLat, closest)));
    }
    for (const latitude of candidates) best = Math.min(best, distanceM(p, { latitude, longitude: edgeLon }));
  }
  return best;
}

export function cellBox(hash: string): Box {
  const [minLat, minLon, maxLat, maxLon] = ngeohash.decode_bbox(hash) as [number, number, number, number];
  return { minLat, minLon, maxLat, maxLon };
}

export const encode = (p: Point, precision: number): string => ngeohash.encode(p.latitude, p.longitude, precision);

export type Hemisphere = 'N' | 'S';

/**
 * The cell directory's cell of a location: its precision-5 cell, or its hemisphere's polar cap. The directory counts
 * drivers per such cell (and per precision-3 cell) so that a nearest search skips empty space; a location item keeps
 * it as `cell`, so that a fix knows when it crosses into another one.
 */
export function directoryCellOf(p: Point): string {
  if (p.latitude >= POLAR_LATITUDE) return 'polar-N';
  if (p.latitude <= -POLAR_LATITUDE) return 'polar-S';
  return encode(p, PARTITION_PRECISION);
}

/**
 * Below this latitude (either hemisphere) the geo index's partitions are precision-4 cells (about 39 km × 19.5 km at
 * the equator, 22 km × 19.5 km here); from it to the polar cap, precision-3 cells (156 km tall, 87 km wide here,
 * 27 km at 80°), so that a partition never gets much narrower than it is tall and a 50 km circle anywhere touches at
 * most about twenty of them. 56.25° is an edge of the precision-3 grid (its rows are 1.40625° tall): no cell of
 * precision 3 or finer lies in both bands.
 */
export const COARSE_PARTITION_LATITUDE = 56.25;

/** The geohash precision of the geo index's partitions at a cell (precision 3 or finer) outside the polar caps. */
function partitionPrecisionAt(cell: string): number {
  const box = cellBox(cell.slice(0, 3));
  return Math.abs((box.minLat + box.maxLat) / 2) >= COARSE_PARTITION_LATITUDE ? 3 : 4;
}

/** The geo index partition holding the part of a cell (precision 3 or finer) outside the polar caps. */
export const partitionOfCell = (cell: string): string => cell.slice(0, partitionPrecisionAt(cell));

/**
 * The geo index partition of a location (before its shard): its hemisphere's polar cap beyond ±80°, else its
 * precision-3 or precision-4 cell (`COARSE_PARTITION_LATITUDE`). A partition is a cell the index sorts by precision-6
 * geohash, so one Query reads any run of consecutive cells inside it (docs/indexes.md).
 */
export function indexPartitionOf(p: Point): string {
  if (p.latitude >= POLAR_LATITUDE) return 'polar-N';
  if (p.latitude <= -POLAR_LATITUDE) return 'polar-S';
  return partitionOfCell(encode(p, SORT_PRECISION));
}

/** The eight (or fewer, at the poles) cells around `hash`, same precision, wrapping at the antimeridian (nearest search). */
export function neighbours(hash: string): string[] {
  const box = cellBox(hash);
  const height = box.maxLat - box.minLat;
  const width = box.maxLon - box.minLon;
  const centre = { latitude: (box.minLat + box.maxLat) / 2, longitude: (box.minLon + box.maxLon) / 2 };
  const out = new Set<string>();
  for (const dy of [-1, 0, 1]) {
    for (const dx of [-1, 0, 1]) {
      if (dx === 0 && dy === 0) continue;
      const latitude = centre.latitude + dy * height;
      if (latitude <= -90 || latitude >= 90) continue;
      let longitude = centre.longitude + dx * width;
      if (longitude > 180) longitude -= 360;
      if (longitude < -180) longitude += 360;
      out.add(ngeohash.encode(latitude, longitude, hash.length));
    }
  }
  out.delete(hash);
  return [...out];
}

/**
 * Shards per partition in the geo index: a driver's entries always land in the same one. A fix that moved an index
 * entry at every fix (2 WCU, a precision-9 sort key before issue 27) took a key's 1 000 WCU/s at 500 fixes a second:
 * 5 000 drivers in one cell sending a fix every 10 s. Two shards keep such a cell at half the limit (docs/scale.md);
 * each search reads every shard of a partition, so more shards would make every L3 and L4 dearer.
 */
export const GEO_SHARDS = 2;

/** API.md 4.9: what one L3 or L4 may spend in geo index Queries (a Query per range and shard), wherever it is. */
export const MAX_INDEX_QUERIES = 100;

/**
 * One geo index Query of a plan (one per shard): a partition, and within it the run of consecutive cells (in geohash
 * order, of the plan's precision) from `first` to `last`; none: the whole partition.
 */
export interface CellQuery {
  partition: string;
  first?: string;
  last?: string;
}

export interface Plan {
  precision: number;
  queries: CellQuery[];
  /** Area of the cells read over the area of the circle: items read per item returned, for an even spread. */
  areaRatio: number;
}

const boxAreaM2 = (box: Box) =>
  EARTH_RADIUS_M ** 2 * Math.abs(Math.sin(rad(box.maxLat)) - Math.sin(rad(box.minLat))) * rad(box.maxLon - box.minLon);

const capAreaM2 = (radiusM: number) => 2 * Math.PI * EARTH_RADIUS_M ** 2 * (1 - Math.cos(radiusM / EARTH_RADIUS_M));

/** A covering of more cells than this is not worked out (CPU): the plan takes the next coarser precision. */
const MAX_CELLS = 1500;

/** The geohash grid at a precision: cell height and width in degrees. */
function grid(precision: number) {
  const bits = 5 * precision;
  return {
    height: 180 / 2 ** Math.floor(bits / 2),
    width: 360 / 2 ** Math.ceil(bits / 2),
    rows: 2 ** Math.floor(bits / 2),
    columns: 2 ** Math.ceil(bits / 2),
  };
}

const deg = (radians: number) => (radians * 180) / Math.PI;

/**
 * The cells at `precision` that come within `radiusM` of `centre`, the polar caps included: the rows of the circle's
 * latitude span, each across the circle's widest longitude span (every longitude when the circle holds a pole), kept
 * when their exact distance is within the radius. Undefined when there would be more than `limit` cells.
 */
function cellsWithin(centre: Point, radiusM: number, precision: number, limit: number): string[] | undefined {
  const angular = radiusM / EARTH_RADIUS_M;
  const latMin = Math.max(centre.latitude - deg(angular), -90);
  const latMax = Math.min(centre.latitude + deg(angular), 90);
  const containsPole = angular >= Math.PI / 2 - Math.abs(rad(centre.latitude));
  const halfLon = containsPole ? 180 : deg(Math.asin(Math.min(1, Math.sin(angular) / Math.cos(rad(centre.latitude)))));
  const { height, width, rows, columns } = grid(precision);
  const firstRow = Math.floor((latMin + 90) / height);
  const lastRow = Math.min(Math.floor((latMax + 90) / height), rows - 1);
  const firstColumn = halfLon >= 180 ? 0 : Math.floor((centre.longitude - halfLon + 180) / width);
  const lastColumn = halfLon >= 180 ? columns - 1 : Math.floor((centre.longitude + halfLon + 180) / width);
  if ((lastRow - firstRow + 1) * Math.min(columns, lastColumn - firstColumn + 1) > limit * 4) return undefined;
  const cells: string[] = [];
  for (let row = firstRow; row <= lastRow; row++) {
    const latitude = -90 + (row + 0.5) * height;
    for (let column = firstColumn; column <= lastColumn && column < firstColumn + columns; column++) {
      const wrapped = ((column % columns) + columns) % columns;
      const hash = ngeohash.encode(latitude, -180 + (wrapped + 0.5) * width, precision);
      if (distanceToBoxM(centre, cellBox(hash)) > radiusM) continue;
      cells.push(hash);
      if (cells.length > limit) return undefined;
    }
  }
  return cells;
}

/** The partitions a cell's locations can be in, each with the cells (at least as fine as it) to read there. */
function placesOf(cell: string, centre: Point, radiusM: number): [string, string][] {
  const box = cellBox(cell);
  const out: [string, string][] = [];
  if (box.maxLat > POLAR_LATITUDE) out.push(['polar-N', cell]);
  if (box.minLat <= -POLAR_LATITUDE) out.push(['polar-S', cell]);
  if (box.minLat < POLAR_LATITUDE && box.maxLat > -POLAR_LATITUDE) {
    if (cell.length >= 3 && cell.length >= partitionPrecisionAt(cell)) out.push([partitionOfCell(cell), cell]);
    else {
      // A cell coarser than the partitions under it: its sub-cells one precision finer that the circle reaches.
      for (const child of BASE32) {
        const sub = cell + child;
        if (distanceToBoxM(centre, cellBox(sub)) <= radiusM) out.push(...placesOf(sub, centre, radiusM));
      }
    }
  }
  return out;
}

const BASE32 = '0123456789bcdefghjkmnpqrstuvwxyz';

/** A geohash as its position on the Z-order curve of its precision (at most 30 bits at precision 6). */
const zIndex = (hash: string) => [...hash].reduce((n, c) => n * 32 + BASE32.indexOf(c), 0);
const fromZ = (z: number, precision: number) => {
  let hash = '';
  for (let i = 0; i < precision; i++, z = Math.floor(z / 32)) hash = BASE32[z % 32] + hash;
  return hash;
};

/** Consecutive cells of one precision in a partition, by their Z-order positions. */
interface Run {
  partition: string;
  precision: number;
  first: number;
  last: number;
}

/**
 * The runs of consecutive cells (in geohash order) that read `cells` of each partition, at most `maxRuns` of them:
 * while there are more, the two runs of a partition with the fewest cells between them become one (it reads the
 * cells between as well). Undefined when the cells lie in more than `maxRuns` partitions.
 */
function runsOf(places: [string, string][], maxRuns: number): Run[] | undefined {
  // A partition's cells are all of one precision: the plan's, or the partition's own where the plan's is coarser.
  const byPartition = new Map<string, { precision: number; cells: number[] }>();
  for (const [partition, cell] of places) {
    const entry = byPartition.get(partition) ?? { precision: cell.length, cells: [] };
    entry.cells.push(zIndex(cell));
    byPartition.set(partition, entry);
  }
  if (byPartition.size > maxRuns) return undefined;
  const runs: Run[] = [];
  const gaps: { at: number; cells: number }[] = [];
  for (const [partition, { precision, cells }] of byPartition) {
    const sorted = [...new Set(cells)].sort((a, b) => a - b);
    for (const z of sorted) {
      const last = runs[runs.length - 1];
      if (last && last.partition === partition && last.last >= z - 1) last.last = z;
      else {
        if (last && last.partition === partition) gaps.push({ at: runs.length, cells: z - last.last - 1 });
        runs.push({ partition, precision, first: z, last: z });
      }
    }
  }
  // Merging the smallest gaps: each merge joins a run to the one before it in its partition.
  const merge = new Set(
    gaps
      .sort((a, b) => a.cells - b.cells || a.at - b.at)
      .slice(0, Math.max(0, runs.length - maxRuns))
      .map((gap) => gap.at),
  );
  const merged: Run[] = [];
  runs.forEach((run, i) => {
    if (merge.has(i)) merged[merged.length - 1]!.last = run.last;
    else merged.push({ ...run });
  });
  return merged;
}

/**
 * The Queries that find every location within `radiusM` of `centre`, at most `MAX_INDEX_QUERIES` of them with the
 * shards (API.md 4.9). The covering cells are the finest the sort key knows (precision 6) when there are few of them,
 * else the next coarser precision that has few enough (a longitude degree is short near the poles, so high latitudes
 * and wide circles take coarser cells); consecutive cells of a partition are one Query (a range of the sort key), and
 * when there are still more Queries than the bound allows, the runs with the fewest cells between them are joined.
 * So a Query never reads outside its partition and every location in the circle is read: the search stays exact.
 */
export function planRadius(centre: Point, radiusM: number, shards = GEO_SHARDS, finest = SORT_PRECISION): Plan {
  const maxRuns = Math.floor(MAX_INDEX_QUERIES / shards);
  for (let precision = finest; precision >= 1; precision--) {
    const cells = cellsWithin(centre, radiusM, precision, MAX_CELLS);
    if (!cells) continue;
    const runs = runsOf(
      cells.flatMap((cell) => placesOf(cell, centre, radiusM)),
      maxRuns,
    );
    if (!runs) continue;
    let area = 0;
    const queries = runs.map((run): CellQuery => {
      const first = fromZ(run.first, run.precision);
      area += (run.last - run.first + 1) * boxAreaM2(cellBox(first));
      const whole =
        !run.partition.startsWith('polar-') &&
        run.last - run.first + 1 === 32 ** (run.precision - run.partition.length);
      return whole
        ? { partition: run.partition }
        : { partition: run.partition, first, last: fromZ(run.last, run.precision) };
    });
    return { precision, queries, areaRatio: area / capAreaM2(radiusM) };
  }
  throw new Error(`no plan of at most ${maxRuns} ranges for ${radiusM} m at ${centre.latitude}, ${centre.longitude}`);
}
