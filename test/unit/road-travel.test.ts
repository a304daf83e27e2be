/**
 * Issue 52.5: the road adapter of the travel port (shared/routing/location-travel.ts) against a mocked Amazon
 * Location client: the matrix asked for in tiles within the per-call limits and assembled in the right cells, equal
 * points asked for once, the departure time sent, a throttled call a dependency's fault, an unroutable pair given its
 * straight-line leg; and the deployment's choice of model (shared/routing/travel-model.ts).
 */
import {
  CalculateRouteMatrixCommand,
  type CalculateRouteMatrixRequest,
  GeoRoutesClient,
  InternalServerException,
  ThrottlingException,
} from '@aws-sdk/client-geo-routes';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { isDependencyFailure } from '../../shared/aws/faults.ts';
import { logger } from '../../shared/log.ts';
import {
  amazonLocationTravel,
  BOUNDARY_MAX_RADIUS_M,
  MATRIX_TILE_POINTS,
  routingCircle,
} from '../../shared/routing/location-travel.ts';
import {
  greatCircleM,
  matrixOf,
  type Point,
  type PointMatrix,
  straightLineTravel,
} from '../../shared/routing/travel.ts';
import { earliestShiftStartMs, travelModel, travelPortFor } from '../../shared/routing/travel-model.ts';

/** A port's answer with its matrix built (the straight-line model's recipe is built in the solver's thread). */
async function built(answer: Promise<PointMatrix>) {
  const { source, indexOf } = await answer;
  return { matrix: matrixOf(source), indexOf };
}

process.env['AWS_REGION'] ??= 'eu-west-1';

const settings = { speed_kmh: 30, detour_factor: 1.3 };
const DEPARTURE = '2031-03-04T07:15:00.000Z';

/** `count` distinct points on a grid around Lyon (about 100 m apart), none equal. */
const grid = (count: number): Point[] =>
  Array.from({ length: count }, (_, k) => ({
    latitude: 45.7 + Math.floor(k / 30) * 0.001,
    longitude: 4.8 + (k % 30) * 0.001,
  }));

/** What the fake road network answers for a pair: a distance and a duration from which both points can be read. */
const road = (from: number[], to: number[]) => {
  const key = (p: number[]) => Math.round(p[1]! * 1000) * 1000 + Math.round(p[0]! * 1000);
  return { Distance: key(from) * 10 + (key(to) % 10), Duration: key(to) };
};

/** A client whose matrix answers `road` for every pair, except pairs for which `unroutable` says an error code. */
function fakeNetwork(unroutable: (from: number[], to: number[]) => string | undefined = () => undefined) {
  const geo = mockClient(GeoRoutesClient);
  geo.on(CalculateRouteMatrixCommand).callsFake((input: CalculateRouteMatrixRequest) => ({
    ErrorCount: 0,
    PricingBucket: 'Core',
    RoutingBoundary: input.RoutingBoundary,
    RouteMatrix: input.Origins!.map((o) =>
      input.Destinations!.map((d) => {
        const error = unroutable(o.Position!, d.Position!);
        return error ? { Distance: undefined, Duration: undefined, Error: error } : road(o.Position!, d.Position!);
      }),
    ),
  }));
  return geo;
}

const asked = (geo: ReturnType<typeof fakeNetwork>) =>
  geo.commandCalls(CalculateRouteMatrixCommand).map((call) => call.args[0].input as CalculateRouteMatrixRequest);

afterEach(() => {
  vi.restoreAllMocks();
  delete process.env['TRAVEL_MODEL'];
});

describe('the Amazon Location travel adapter', () => {
  it('asks 700 points in 4 tiles of 350 × 350, within the per-call limits, and puts every answer in its cell', async () => {
    const geo = fakeNetwork();
    const points = grid(700);
    const { matrix, indexOf } = await built(
      amazonLocationTravel({ settings, departureTime: DEPARTURE }).matrix(points),
    );
    const calls = asked(geo);
    expect(calls).toHaveLength(4);
    const slicesOf = (list: 'Origins' | 'Destinations') =>
      calls.map((input) => {
        const first = points.findIndex(
          (p) => p.longitude === input[list]![0]!.Position![0] && p.latitude === input[list]![0]!.Position![1],
        );
        return [first, first + input[list]!.length];
      });
    // Every origin slice meets every destination slice once.
    expect(slicesOf('Origins').map((s, k) => [...s, ...slicesOf('Destinations')[k]!])).toEqual(
      expect.arrayContaining([
        [0, 350, 0, 350],
        [0, 350, 350, 700],
        [350, 700, 0, 350],
        [350, 700, 350, 700],
      ]),
    );
    for (const input of calls) {
      expect(input.Origins!.length).toBeLessThanOrEqual(MATRIX_TILE_POINTS);
      expect(input.Destinations!.length).toBeLessThanOrEqual(MATRIX_TILE_POINTS);
      expect(input.Origins!.length * input.Destinations!.length).toBeLessThanOrEqual(160_000);
      expect(input.RoutingBoundary?.Geometry?.Circle?.Radius).toBeLessThanOrEqual(BOUNDARY_MAX_RADIUS_M);
    }
    expect(matrix.size).toBe(700);
    expect(indexOf).toEqual(points.map((_, k) => k));
    const position = (p: Point) => [p.longitude, p.latitude];
    for (const [i, j] of [
      [0, 1],
      [1, 0],
      [3, 699],
      [699, 3],
      [349, 350],
      [350, 349],
      [420, 512],
    ] as const) {
      const expected = road(position(points[i]!), position(points[j]!));
      expect(matrix.distanceM[i * 700 + j], `${i}→${j}`).toBe(expected.Distance);
      expect(matrix.durationS[i * 700 + j], `${i}→${j}`).toBe(expected.Duration);
    }
    expect(matrix.distanceM[5 * 700 + 5]).toBe(0);
    expect(matrix.durationS[5 * 700 + 5]).toBe(0);
  });

  it('asks for each place once: equal points share a row, and one distinct point needs no call', async () => {
    const geo = fakeNetwork();
    const [a, b, c] = grid(3);
    const { matrix, indexOf } = await built(
      amazonLocationTravel({ settings, departureTime: DEPARTURE }).matrix([a!, b!, { ...a! }, c!, b!]),
    );
    expect(indexOf).toEqual([0, 1, 0, 2, 1]);
    expect(matrix.size).toBe(3);
    const [call] = asked(geo);
    expect(asked(geo)).toHaveLength(1);
    expect(call!.Origins).toHaveLength(3);
    expect(call!.Destinations).toHaveLength(3);
    geo.reset();
    const one = await built(amazonLocationTravel({ settings, departureTime: DEPARTURE }).matrix([a!, { ...a! }]));
    expect(one.matrix.size).toBe(1);
    expect(asked(geo)).toHaveLength(0);
  });

  it('past its most points, asks nothing and plans on the straight line, with a warning', async () => {
    const geo = fakeNetwork();
    const warn = vi.spyOn(logger, 'warn').mockImplementation(() => undefined);
    const points = grid(12);
    const { matrix } = await built(
      amazonLocationTravel({ settings, departureTime: DEPARTURE, maxPoints: 10 }).matrix(points),
    );
    expect(asked(geo)).toHaveLength(0);
    expect(matrix).toEqual((await built(straightLineTravel(settings).matrix(points))).matrix);
    expect(warn).toHaveBeenCalledWith(expect.stringContaining('too many points'), { points: 12, max_points: 10 });
  });

  it('sends the departure time it is given, or departs now without one', async () => {
    const geo = fakeNetwork();
    await built(amazonLocationTravel({ settings, departureTime: DEPARTURE }).matrix(grid(2)));
    await built(amazonLocationTravel({ settings }).matrix(grid(2)));
    const [given, now] = asked(geo);
    expect(given).toMatchObject({ DepartureTime: DEPARTURE, TravelMode: 'Car' });
    expect(given!.DepartNow).toBeUndefined();
    expect(now).toMatchObject({ DepartNow: true });
    expect(now!.DepartureTime).toBeUndefined();
  });

  it('routes within one circle around all the points, at most 200 km', () => {
    const points = grid(60);
    const { center, radiusM } = routingCircle(points);
    for (const p of points) expect(greatCircleM(center, p)).toBeLessThan(radiusM);
    const far = routingCircle([
      { latitude: 48.85, longitude: 2.35 },
      { latitude: 43.3, longitude: 5.37 },
    ]);
    expect(far.radiusM).toBe(BOUNDARY_MAX_RADIUS_M);
  });

  it('a throttled or failing call is a dependency’s fault (the worker retries the build, uncounted)', async () => {
    const geo = mockClient(GeoRoutesClient);
    geo.on(CalculateRouteMatrixCommand).rejects(
      new ThrottlingException({
        message: 'Rate exceeded',
        Message: 'Rate exceeded',
        $metadata: { httpStatusCode: 429 },
      }),
    );
    const throttled = await built(amazonLocationTravel({ settings, departureTime: DEPARTURE }).matrix(grid(5))).catch(
      (error: unknown) => error,
    );
    expect(throttled).toBeInstanceOf(ThrottlingException);
    expect(isDependencyFailure(throttled)).toBe(true);
    geo
      .on(CalculateRouteMatrixCommand)
      .rejects(new InternalServerException({ message: 'boom', Message: 'boom', $metadata: { httpStatusCode: 500 } }));
    const failed = await built(amazonLocationTravel({ settings, departureTime: DEPARTURE }).matrix(grid(5))).catch(
      (error: unknown) => error,
    );
    expect(isDependencyFailure(failed)).toBe(true);
  });

  it('a pair the road network cannot route takes the straight-line leg, and the fallback is logged', async () => {
    const points = grid(4);
    const island = [points[2]!.longitude, points[2]!.latitude];
    const same = (p: number[], q: number[]) => p[0] === q[0] && p[1] === q[1];
    fakeNetwork((from, to) => (same(to, island) ? 'NoRoute' : same(from, island) ? 'OutOfBoundsOrigin' : undefined));
    const warn = vi.spyOn(logger, 'warn').mockImplementation(() => undefined);
    const { matrix } = await built(amazonLocationTravel({ settings, departureTime: DEPARTURE }).matrix(points));
    const straight = (await built(straightLineTravel(settings).matrix(points))).matrix;
    for (const [i, j] of [
      [0, 2],
      [2, 0],
      [3, 2],
    ] as const) {
      expect(matrix.distanceM[i * 4 + j]).toBe(straight.distanceM[i * 4 + j]);
      expect(matrix.durationS[i * 4 + j]).toBe(straight.durationS[i * 4 + j]);
    }
    const routed = road([points[0]!.longitude, points[0]!.latitude], [points[1]!.longitude, points[1]!.latitude]);
    expect(matrix.distanceM[1]).toBe(routed.Distance);
    expect(warn).toHaveBeenCalledWith(expect.stringContaining('straight-line'), {
      pairs: 6,
      of: 12,
      codes: { NoRoute: 3, OutOfBoundsOrigin: 3 },
    });
  });
});

describe('the deployment’s travel model', () => {
  it('is the straight line by default and locally, the road where TRAVEL_MODEL says so, and refuses a stray value', () => {
    expect(travelModel({})).toBe('straight-line');
    expect(travelModel({ TRAVEL_MODEL: 'amazon-location' })).toBe('amazon-location');
    expect(travelModel({ TRAVEL_MODEL: 'amazon-location', DISPATCH_LOCAL: '1' })).toBe('straight-line');
    expect(() => travelModel({ TRAVEL_MODEL: 'osrm' })).toThrow(/straight-line, amazon-location/);
  });

  it('gives a build’s port its earliest shift start as departure, and a departure already past is now', async () => {
    const geo = fakeNetwork();
    process.env['TRAVEL_MODEL'] = 'amazon-location';
    const future = earliestShiftStartMs([{ shift_start_utc: '2031-03-04T08:00:00Z' }, { shift_start_utc: DEPARTURE }]);
    await built(travelPortFor(settings, future).matrix(grid(2)));
    await built(travelPortFor(settings, Date.parse('2001-01-01T00:00:00Z')).matrix(grid(2)));
    const [build, past] = asked(geo);
    expect(build!.DepartureTime).toBe(DEPARTURE);
    expect(Date.parse(past!.DepartureTime!)).toBeGreaterThan(Date.parse('2020-01-01T00:00:00Z'));
    delete process.env['TRAVEL_MODEL'];
    geo.reset();
    const { matrix } = await built(travelPortFor(settings, future).matrix(grid(2)));
    expect(asked(geo)).toHaveLength(0);
    expect(matrix.distanceM[1]).toBe((await built(straightLineTravel(settings).matrix(grid(2)))).matrix.distanceM[1]);
  });
});
