/**
 * The travel port (contract 4.10): how far and how long between two points. The straight-line model is the
 * great-circle distance on a sphere of radius 6 371 008.8 m times `detour_factor`, driven at `speed_kmh`; equal
 * coordinates are 0 m and 0 s apart. A road network (Amazon Location Service's route matrix) can replace it behind the
 * same interface: it answers the matrix for the distinct points, and nothing of the search changes.
 *
 * Where the matrix is built (issue 51 item 2): a model computed from the points alone (the straight-line one) is
 * answered as a recipe, its distinct points and settings, and built in the solver's thread (solve-thread.ts), never
 * on the event loop (a 2 000-task, 500-vehicle build's matrix takes seconds of CPU) and never copied between threads;
 * a matrix read from elsewhere (a road network's API: I/O, not CPU) is answered built.
 */
import type { RoutingProblem, TravelMatrix } from '#shared/routing/solver/model';

export interface Point {
  readonly latitude: number;
  readonly longitude: number;
}

export interface TravelSettings {
  readonly speed_kmh: number;
  readonly detour_factor: number;
}

/** The solver's matrix: built already, or the straight-line model's recipe, which `matrixOf` builds. */
export type MatrixSource =
  | { readonly built: TravelMatrix }
  | { readonly straightLine: { readonly points: readonly Point[]; readonly settings: TravelSettings } };

/** A problem as handed to the solver's thread: its matrix as a source, built there (`matrixOf`). */
export type ProblemToSolve = Omit<RoutingProblem, 'matrix'> & { readonly travel: MatrixSource };

/** The matrix over distinct points, and the index of each point asked for (equal coordinates share one). */
export interface PointMatrix {
  readonly source: MatrixSource;
  /** For each point given, its row in the matrix. */
  readonly indexOf: readonly number[];
}

/** Builds the travel matrix of a list of points (which may repeat). */
export interface TravelPort {
  matrix(points: readonly Point[]): Promise<PointMatrix>;
}

export const EARTH_RADIUS_M = 6_371_008.8;

/** Great-circle distance (haversine) in metres on the 6 371 008.8 m sphere. */
export function greatCircleM(a: Point, b: Point): number {
  if (a.latitude === b.latitude && a.longitude === b.longitude) return 0;
  const rad = Math.PI / 180;
  const dLat = (b.latitude - a.latitude) * rad;
  const dLon = (b.longitude - a.longitude) * rad;
  const h = Math.sin(dLat / 2) ** 2 + Math.cos(a.latitude * rad) * Math.cos(b.latitude * rad) * Math.sin(dLon / 2) ** 2;
  return 2 * EARTH_RADIUS_M * Math.asin(Math.min(1, Math.sqrt(h)));
}

/** Distinct points, each point's index among them (equal coordinates, one index). */
export function dedupe(points: readonly Point[]): { distinct: Point[]; indexOf: number[] } {
  const seen = new Map<string, number>();
  const distinct: Point[] = [];
  const indexOf = points.map((p) => {
    const key = `${p.latitude},${p.longitude}`;
    let index = seen.get(key);
    if (index === undefined) {
      index = distinct.length;
      seen.set(key, index);
      distinct.push({ latitude: p.latitude, longitude: p.longitude });
    }
    return index;
  });
  return { distinct, indexOf };
}

/** One leg of the straight-line model: the planned metres and seconds from `a` to `b` (equal coordinates, 0 and 0). */
export function straightLineLeg(settings: TravelSettings, a: Point, b: Point): { metres: number; seconds: number } {
  const metres = greatCircleM(a, b) * settings.detour_factor;
  return { metres, seconds: metres / ((settings.speed_kmh * 1000) / 3600) };
}

/** The straight-line model's matrix over distinct points (CPU only: built in the solver's thread). */
export function straightLineMatrix(distinct: readonly Point[], settings: TravelSettings): TravelMatrix {
  const n = distinct.length;
  const distanceM = new Float64Array(n * n);
  const durationS = new Float64Array(n * n);
  for (let i = 0; i < n; i++)
    for (let j = i + 1; j < n; j++) {
      const { metres, seconds } = straightLineLeg(settings, distinct[i]!, distinct[j]!);
      distanceM[i * n + j] = distanceM[j * n + i] = metres;
      durationS[i * n + j] = durationS[j * n + i] = seconds;
    }
  return { size: n, distanceM, durationS };
}

/** The matrix of a source: as built, or built now from the straight-line model's recipe. */
export const matrixOf = (source: MatrixSource): TravelMatrix =>
  'built' in source ? source.built : straightLineMatrix(source.straightLine.points, source.straightLine.settings);

/** The straight-line travel model of 4.10: its recipe (the distinct points and the settings), built by the solver. */
export function straightLineTravel(settings: TravelSettings): TravelPort {
  return {
    async matrix(points) {
      const { distinct, indexOf } = dedupe(points);
      return { source: { straightLine: { points: distinct, settings } }, indexOf };
    },
  };
}
