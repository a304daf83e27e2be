/**
 * Geometry for the location index: great-circle distances, the exact distance from a point to a geohash cell, and
 * the plan of which cells a circle touches. Pure functions, no I/O.
 *
 * Partitions are geohash cells of precision 5 (about 4.9 km × 4.9 km at the equator), so no partition holds a whole
 * city; sort keys begin with the precision-6 geohash (about 1.2 km × 0.6 km: coarse, so that a moving driver's index
 * entry stays put for minutes), so a precision-6 cell is a `begins_with`; nothing finer can be, the index knows a
 * position only to its precision-6 cell. Beyond ±80° latitude, where geohash cells become slivers, every location of
 * a hemisphere shares one polar partition.
 */
import ngeohash from 'ngeohash';

export const EARTH_RADIUS_M = 6_371_008.8;
export const PARTITION_PRECISION = 5;
export const SORT_PRECISION = 6;
export const POLAR_LATITUDE = 80;

const rad = (deg: number) => (deg * Math.PI) / 180;

export interface Point {
  latitude: number;
  longitude: number;
}

export interface Box {
  minLat: number;
  minLon: number;
  maxLat: number;
  maxLon: number;
}

/** Haversine distance in metres. */
export function distanceM(a: Point, b: Point): number {
  const dLat = rad(b.latitude - a.latitude);
  const dLon = rad(b.longitude - a.longitude);
  const h = Math.sin(dLat / 2) ** 2 + Math.cos(rad(a.latitude)) * Math.cos(rad(b.latitude)) * Math.sin(dLon / 2) ** 2;
  return 2 * EARTH_RADIUS_M * Math.asin(Math.min(1, Math.sqrt(h)));
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

/** The partition a location is stored under: its precision-5 cell, or its hemisphere's polar partition. */
export function partitionOf(p: Point): string {
  if (p.latitude >= POLAR_LATITUDE) return 'polar-N';
  if (p.latitude <= -POLAR_LATITUDE) return 'polar-S';
  return encode(p, PARTITION_PRECISION);
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

/** One DynamoDB Query of the plan: a partition, and within it the cells' common prefix (none: the whole partition). */
export interface CellQuery {
  partition: string;
  prefix?: string;
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

/** The plan's precisions: a partition, or a cell of the sort key's precision (a finer prefix would match nothing). */
const PLAN_PRECISIONS = [PARTITION_PRECISION, SORT_PRECISION] as const;
const GOOD_RATIO = 2.5;
const MAX_CELLS = 2000;

/** The geohash grid at a precision: cell height and width in degrees. */
function grid(precision: number) {
  const bits = 5 * precision;
  return {
    height: 180 / 2 ** Math.floor(bits / 2),
    width: 360 / 2 ** Math.ceil(bits / 2),
    columns: 2 ** Math.ceil(bits / 2),
  };
}

const deg = (radians: number) => (radians * 180) / Math.PI;

/**
 * The cells at `precision` that come within `radiusM` of `centre`, outside the polar caps: the rows of the circle's
 * latitude span, each across the circle's widest longitude span, kept when their exact distance is within the
 * radius; and which polar partitions the circle reaches. Undefined when there would be more than `limit` cells.
 */
function cellsWithin(centre: Point, radiusM: number, precision: number, limit: number) {
  const angular = radiusM / EARTH_RADIUS_M;
  const polar = new Set<Hemisphere>();
  if (centre.latitude + deg(angular) >= POLAR_LATITUDE) polar.add('N');
  if (centre.latitude - deg(angular) <= -POLAR_LATITUDE) polar.add('S');
  const rowMin = Math.max(centre.latitude - deg(angular), -POLAR_LATITUDE);
  const rowMax = Math.min(centre.latitude + deg(angular), POLAR_LATITUDE);
  const containsPole = angular >= Math.PI / 2 - Math.abs(rad(centre.latitude));
  const halfLon = containsPole ? 180 : deg(Math.asin(Math.min(1, Math.sin(angular) / Math.cos(rad(centre.latitude)))));
  const { height, width, columns } = grid(precision);
  const cells: string[] = [];
  let area = 0;
  if (rowMin > rowMax) return { cells, polar, area };
  const firstRow = Math.floor((rowMin + 90) / height);
  const lastRow = Math.min(Math.floor((rowMax + 90) / height), 2 ** Math.floor((5 * precision) / 2) - 1);
  const firstColumn = halfLon >= 180 ? 0 : Math.floor((centre.longitude - halfLon + 180) / width);
  const lastColumn = halfLon >= 180 ? columns - 1 : Math.floor((centre.longitude + halfLon + 180) / width);
  if ((lastRow - firstRow + 1) * Math.min(columns, lastColumn - firstColumn + 1) > limit * 4) return undefined;
  for (let row = firstRow; row <= lastRow; row++) {
    const latitude = -90 + (row + 0.5) * height;
    for (let column = firstColumn; column <= lastColumn && column < firstColumn + columns; column++) {
      const wrapped = ((column % columns) + columns) % columns;
      const hash = ngeohash.encode(latitude, -180 + (wrapped + 0.5) * width, precision);
      const box = cellBox(hash);
      if (distanceToBoxM(centre, box) > radiusM) continue;
      cells.push(hash);
      area += boxAreaM2(box);
      if (cells.length > limit) return undefined;
    }
  }
  return { cells, polar, area };
}

/**
 * The Queries that find every location within `radiusM` of `centre`: the coarsest cell precision (5 or 6) whose
 * cells cover at most 2.5 times the circle's area, so that a search reads few items per item it returns without
 * needing many Queries. A polar partition, when the circle reaches a cap, is read whole.
 */
export function planRadius(centre: Point, radiusM: number): Plan {
  // Precision 5 is always complete (partitions cannot be coarser); finer ones only while they stay small.
  let precision = 5;
  let found = cellsWithin(centre, radiusM, 5, Number.POSITIVE_INFINITY)!;
  for (const finer of PLAN_PRECISIONS.slice(1)) {
    if (found.area / capAreaM2(radiusM) <= GOOD_RATIO) break;
    const candidate = cellsWithin(centre, radiusM, finer, MAX_CELLS);
    if (!candidate) break;
    precision = finer;
    found = candidate;
  }
  const queries: CellQuery[] = found.cells.map((cell) => ({
    partition: cell.slice(0, PARTITION_PRECISION),
    ...(cell.length > PARTITION_PRECISION ? { prefix: cell } : {}),
  }));
  for (const hemisphere of found.polar) queries.push({ partition: `polar-${hemisphere}` });
  return { precision, queries, areaRatio: found.area / capAreaM2(radiusM) };
}
