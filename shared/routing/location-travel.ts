/**
 * The road adapter of the travel port (travel.ts): distances and durations along the road network from Amazon
 * Location Service's route matrices (`geo-routes:CalculateRouteMatrix`), as ses-mail.ts is the mail port's cloud
 * adapter. travel-model.ts picks it per deployment; docs/routing.md says what it costs and how to turn it on.
 *
 * One call answers at most 500 origins, 500 destinations and 160 000 pairs when the request names a boundary
 * geometry (with `Unbounded` only 15 × 100 and 100 pairs), so the matrix of the distinct points is asked for in
 * square tiles of at most 400 × 400 within one circle around all the points (radius at most 200 km). Every call
 * departs at the same time: the build's earliest shift start, or now for ETAs. A pair the road network cannot answer
 * (a point off the map, out of the circle, on an island with no ferry) takes the straight-line leg of the build's
 * travel settings, so that one bad address never fails a 2 000-task build; the pairs so taken are logged as a warning.
 * More than ROAD_MATRIX_MAX_POINTS distinct points (a bill of a million routes) are planned on the straight line, with
 * a warning. A throttled or failing call throws the SDK's error, which isDependencyFailure (shared/aws/faults.ts) counts as a
 * dependency's fault: the route worker hands the build back to the queue uncounted.
 */
import type { GeoRoutesClient, RouteMatrixEntry } from '@aws-sdk/client-geo-routes';
import { wire } from '#shared/aws/wire';
import { mapLimited } from '#shared/concurrency';
import { logger } from '#shared/log';
import type { TravelMatrix } from '#shared/routing/solver/model';
import {
  dedupe,
  greatCircleM,
  type Point,
  straightLineLeg,
  type TravelPort,
  type TravelSettings,
} from '#shared/routing/travel';

/** Origins (and destinations) per call: 400 × 400 = 160 000, the per-call bound with a boundary geometry. */
export const MATRIX_TILE_POINTS = 400;
/** The routing boundary's largest radius (the API's bound on a circle). */
export const BOUNDARY_MAX_RADIUS_M = 200_000;
/** Room around the farthest point, so that a road may leave the points' hull on its way. */
export const BOUNDARY_MARGIN_M = 10_000;
/** Calls in flight at once: the account's default quota is 5 route-matrix requests a second. */
export const MATRIX_CALLS_IN_FLIGHT = 4;
/**
 * The most distinct points asked of the road network for one matrix: Amazon Location bills every pair, so n points
 * cost n² routes (1 000 points: a million). A larger problem is planned on the straight line, with a warning, rather
 * than run up a bill nobody chose (docs/routing.md "Road travel times").
 */
export const ROAD_MATRIX_MAX_POINTS = 1_000;

export interface LocationTravelOptions {
  /** The build's (or the runsheet's) straight-line settings: the leg a pair without a road route takes. */
  readonly settings: TravelSettings;
  /** ISO 8601 departure of every leg (traffic is predicted for it); without it, the calls depart now. */
  readonly departureTime?: string | undefined;
  /** At most this many distinct points go to the road network (default ROAD_MATRIX_MAX_POINTS). */
  readonly maxPoints?: number;
  /** For tests; by default the client is made on the first matrix. */
  readonly client?: GeoRoutesClient;
}

/** The circle every call routes within: around the middle of the points' box, reaching the farthest with a margin. */
export function routingCircle(points: readonly Point[]): { center: Point; radiusM: number } {
  const lats = points.map((p) => p.latitude);
  const lons = points.map((p) => p.longitude);
  const center = {
    latitude: (Math.min(...lats) + Math.max(...lats)) / 2,
    longitude: (Math.min(...lons) + Math.max(...lons)) / 2,
  };
  const farthest = Math.max(...points.map((p) => greatCircleM(center, p)));
  return { center, radiusM: Math.min(BOUNDARY_MAX_RADIUS_M, Math.ceil(farthest) + BOUNDARY_MARGIN_M) };
}

/** The index ranges `[start, end)` that cut `n` points into as few near-equal slices of at most `size` as can be. */
export function slices(n: number, size = MATRIX_TILE_POINTS): [number, number][] {
  const count = Math.ceil(n / size);
  const each = Math.ceil(n / count);
  return Array.from({ length: count }, (_, k) => [k * each, Math.min(n, (k + 1) * each)]);
}

type Sdk = typeof import('@aws-sdk/client-geo-routes');

/** The road travel port of Amazon Location Service (see the file's opening comment). */
export function amazonLocationTravel(options: LocationTravelOptions): TravelPort {
  let sdk: Promise<{ client: GeoRoutesClient; Command: Sdk['CalculateRouteMatrixCommand'] }> | undefined;
  // Loaded on the first matrix: a function that never asks for one does not load the client at cold start.
  const load = () =>
    (sdk ??= import('@aws-sdk/client-geo-routes').then((geo) => ({
      client: options.client ?? new geo.GeoRoutesClient(wire('routeMatrix')),
      Command: geo.CalculateRouteMatrixCommand,
    })));
  return {
    async matrix(points) {
      const { distinct, indexOf } = dedupe(points);
      const n = distinct.length;
      const distanceM = new Float64Array(n * n);
      const durationS = new Float64Array(n * n);
      const matrix: TravelMatrix = { size: n, distanceM, durationS };
      if (n < 2) return { source: { built: matrix }, indexOf };
      const maxPoints = options.maxPoints ?? ROAD_MATRIX_MAX_POINTS;
      if (n > maxPoints) {
        logger.warn('road travel: too many points for the road network; the straight line is used', {
          points: n,
          max_points: maxPoints,
        });
        // Built in the solver's thread, as the straight-line model always is.
        return { source: { straightLine: { points: distinct, settings: options.settings } }, indexOf };
      }
      const { client, Command } = await load();
      const { center, radiusM } = routingCircle(distinct);
      const position = (p: Point) => ({ Position: [p.longitude, p.latitude] });
      const tiles = slices(n).flatMap((from) => slices(n).map((to) => ({ from, to })));
      const unrouted: { i: number; j: number; code: string }[] = [];
      await mapLimited(tiles, MATRIX_CALLS_IN_FLIGHT, async ({ from, to }) => {
        const out = await client.send(
          new Command({
            Origins: distinct.slice(from[0], from[1]).map(position),
            Destinations: distinct.slice(to[0], to[1]).map(position),
            ...(options.departureTime ? { DepartureTime: options.departureTime } : { DepartNow: true }),
            TravelMode: 'Car',
            RoutingBoundary: {
              Geometry: { Circle: { Center: [center.longitude, center.latitude], Radius: radiusM } },
            },
          }),
        );
        for (let i = from[0]; i < from[1]; i++)
          for (let j = to[0]; j < to[1]; j++) {
            if (i === j) continue; // equal coordinates are 0 m and 0 s apart, as in the straight-line model
            const entry: RouteMatrixEntry | undefined = out.RouteMatrix?.[i - from[0]]?.[j - to[0]];
            if (entry && !entry.Error && entry.Distance !== undefined && entry.Duration !== undefined) {
              distanceM[i * n + j] = entry.Distance;
              durationS[i * n + j] = entry.Duration;
            } else unrouted.push({ i, j, code: entry?.Error ?? 'Missing' });
          }
      });
      if (unrouted.length > 0) {
        const codes: Record<string, number> = {};
        for (const { i, j, code } of unrouted) {
          const { metres, seconds } = straightLineLeg(options.settings, distinct[i]!, distinct[j]!);
          distanceM[i * n + j] = metres;
          durationS[i * n + j] = seconds;
          codes[code] = (codes[code] ?? 0) + 1;
        }
        logger.warn('road travel: pairs without a road route take the straight-line leg', {
          pairs: unrouted.length,
          of: n * (n - 1),
          codes,
        });
      }
      return { source: { built: matrix }, indexOf };
    },
  };
}
