/**
 * The independent checker of route builds (bench/vrp/checker.ts): a correct small result passes, and every rule of
 * contract 4.10 broken on purpose is caught, one case each.
 */
import { describe, expect, it } from 'vitest';
import {
  type CheckTask,
  checkRouteBuild,
  checkTaskOf,
  type LiveRunsheet,
  type LiveState,
  type Point,
  plannedMetres,
  plannedSeconds,
  type RequestVehicle,
  type ResultRunsheet,
  type RouteBuildResult,
  type Rule,
} from '../../bench/vrp/checker.ts';

const BASE = Date.parse('2026-12-01T08:00:00Z');
const minutes = (m: number) => BASE + m * 60_000;
const iso = (ms: number) => new Date(ms).toISOString();
const TRAVEL = { speed_kmh: 30, detour_factor: 1.3 };
const DEPOT = { latitude: 1.3, longitude: 103.8 };
const MERCHANT = { latitude: 1.3, longitude: 103.81 };

function task(id: string, to: Point, load: number, from: Point = MERCHANT): CheckTask {
  return {
    id,
    pickup: { point: from, openMs: minutes(0), closeMs: minutes(120), serviceS: 120 },
    dropoff: { point: to, openMs: minutes(30), closeMs: minutes(180), serviceS: 180 },
    load: { weight_kg: load, items: 1 },
    serviceType: 'van',
  };
}

const TASKS = [
  task('A', { latitude: 1.31, longitude: 103.82 }, 10),
  task('B', { latitude: 1.32, longitude: 103.8 }, 10),
  task('C', { latitude: 1.33, longitude: 103.79 }, 500),
];
const VEHICLES: RequestVehicle[] = [
  {
    id: 'van',
    count: 2,
    start: DEPOT,
    shift_start_utc: iso(minutes(0)),
    shift_end_utc: iso(minutes(240)),
    capacity: { weight_kg: 100 },
  },
];

/** A runsheet scheduled as 4.10 says, leaving the start at the shift's start: the test's own arithmetic. */
function runsheet(
  vehicleId: string,
  order: [string, 'pickup' | 'dropoff'][],
  tasks = TASKS,
  from: { point: Point; ms: number; load: number } = { point: DEPOT, ms: minutes(0), load: 0 },
): ResultRunsheet {
  let at: Point = from.point;
  let clock = from.ms;
  let distance = 0;
  let load = from.load;
  let peak = load;
  const stops = order.map(([id, kind]) => {
    const t = tasks.find((candidate) => candidate.id === id)!;
    const spec = kind === 'pickup' ? t.pickup : t.dropoff;
    const metres = plannedMetres(at, spec.point!, TRAVEL);
    const arrival = clock + plannedSeconds(metres, TRAVEL) * 1000;
    const start = Math.max(arrival, spec.openMs);
    clock = start + spec.serviceS * 1000;
    distance += metres;
    at = spec.point!;
    load += kind === 'pickup' ? t.load.weight_kg! : -t.load.weight_kg!;
    peak = Math.max(peak, load);
    return {
      task_id: id,
      kind,
      latitude: at.latitude,
      longitude: at.longitude,
      arrival_utc: iso(arrival),
      start_utc: iso(start),
      departure_utc: iso(clock),
      distance_from_previous_m: metres,
    };
  });
  const home = plannedMetres(at, DEPOT, TRAVEL);
  const end = clock + plannedSeconds(home, TRAVEL) * 1000;
  return {
    id: `rs-${vehicleId}`,
    name: vehicleId,
    vehicle_id: vehicleId,
    planned_start_utc: iso(from.ms),
    planned_end_utc: iso(end),
    planned_distance_m: distance + home,
    planned_duration_s: (end - from.ms) / 1000,
    peak_load: { weight_kg: peak, items: null },
    stops,
  };
}

function resultOf(runsheets: ResultRunsheet[], unplanned = [{ task_id: 'C', code: 'capacity', detail: 'Too heavy.' }]) {
  const planned = new Set(runsheets.flatMap((r) => r.stops.map((s) => s.task_id))).size;
  return {
    runsheets,
    unplanned,
    summary: {
      tasks: 3,
      planned,
      unplanned: unplanned.length,
      vehicles_used: runsheets.length,
      total_distance_m: runsheets.reduce((sum, r) => sum + r.planned_distance_m, 0),
      total_duration_s: runsheets.reduce((sum, r) => sum + r.planned_duration_s, 0),
      solve_ms: 12,
      stopped: 'converged',
    },
  } satisfies RouteBuildResult;
}

const good = () =>
  resultOf([
    runsheet('van-1', [
      ['A', 'pickup'],
      ['B', 'pickup'],
      ['A', 'dropoff'],
      ['B', 'dropoff'],
    ]),
  ]);

const rulesOf = (result: RouteBuildResult, tasks = TASKS, vehicles = VEHICLES) =>
  [...new Set(checkRouteBuild({ tasks, vehicles, travel: TRAVEL, result }).map((v) => v.rule))].sort();

describe('the route checker', () => {
  it('measures 4.10’s distance: great-circle on the 6 371 008.8 m sphere × detour, 0 between equal points', () => {
    const degree = plannedMetres({ latitude: 0, longitude: 0 }, { latitude: 1, longitude: 0 }, TRAVEL);
    expect(degree / 1.3).toBeCloseTo(111_195.08, 1);
    expect(plannedMetres(MERCHANT, { ...MERCHANT }, TRAVEL)).toBe(0);
    expect(plannedSeconds(30_000, TRAVEL)).toBe(3600);
  });

  it('passes a correct small result, and one task per runsheet on two vehicles', () => {
    expect(checkRouteBuild({ tasks: TASKS, vehicles: VEHICLES, travel: TRAVEL, result: good() })).toEqual([]);
    const split = resultOf([
      runsheet('van-1', [
        ['A', 'pickup'],
        ['A', 'dropoff'],
      ]),
      runsheet('van-2', [
        ['B', 'pickup'],
        ['B', 'dropoff'],
      ]),
    ]);
    expect(rulesOf(split)).toEqual([]);
  });

  const cases: [string, Rule[], () => Rule[]][] = [
    [
      'a stop of a task the build was not given',
      ['unknown_task'],
      () => {
        const result = good();
        result.unplanned.push({ task_id: 'ghost', code: 'capacity', detail: 'x' });
        result.summary.unplanned = 2;
        return rulesOf(result);
      },
    ],
    [
      'a task planned and also unplanned',
      ['planned_twice'],
      () => {
        const result = good();
        result.unplanned.push({ task_id: 'A', code: 'not_enough_vehicles', detail: 'x' });
        result.summary.unplanned = 2;
        return rulesOf(result);
      },
    ],
    [
      'a task planned on two runsheets',
      ['planned_twice'],
      () => {
        const twice = runsheet('van-2', [
          ['A', 'pickup'],
          ['A', 'dropoff'],
        ]);
        const result = resultOf([good().runsheets[0]!, twice]);
        return rulesOf(result);
      },
    ],
    [
      'a drop-off before its pickup',
      ['pickup_order'],
      () => {
        const backwards = runsheet('van-1', [
          ['A', 'dropoff'],
          ['A', 'pickup'],
          ['B', 'pickup'],
          ['B', 'dropoff'],
        ]);
        // The test's own arithmetic would state a peak load for a route that makes no sense: none is stated.
        delete backwards.peak_load;
        return rulesOf(resultOf([backwards]));
      },
    ],
    [
      'a pickup whose drop-off is on another runsheet',
      ['pickup_order'],
      () =>
        rulesOf(
          resultOf([
            runsheet('van-1', [
              ['A', 'pickup'],
              ['B', 'pickup'],
              ['B', 'dropoff'],
            ]),
            runsheet('van-2', [['A', 'dropoff']]),
          ]),
        ),
    ],
    [
      'a vehicle the request does not have',
      ['vehicle'],
      () => {
        const result = good();
        result.runsheets[0]!.vehicle_id = 'van-3';
        return rulesOf(result);
      },
    ],
    [
      'a stop away from its task’s address',
      ['coordinates'],
      () => {
        const moved = TASKS.map((t) =>
          t.id === 'B' ? { ...t, dropoff: { ...t.dropoff, point: { latitude: 1.32, longitude: 103.8001 } } } : t,
        );
        return rulesOf(good(), moved);
      },
    ],
    [
      'a service that starts after its window closes',
      ['window'],
      () => {
        const tight = TASKS.map((t) => (t.id === 'B' ? { ...t, dropoff: { ...t.dropoff, closeMs: minutes(31) } } : t));
        return rulesOf(good(), tight);
      },
    ],
    [
      'an arrival sooner than the leg can be driven',
      ['travel'],
      () => {
        const result = good();
        const stop = result.runsheets[0]!.stops[0]!;
        stop.arrival_utc = result.runsheets[0]!.planned_start_utc;
        stop.start_utc = stop.arrival_utc;
        stop.departure_utc = iso(Date.parse(stop.arrival_utc) + 120_000);
        return rulesOf(result);
      },
    ],
    [
      'a service that waits though its window is open',
      ['service_start'],
      () => {
        const result = good();
        // B's pickup waits a minute for nothing; A's drop-off, next, still waits for its window to open.
        const [, stop, next] = result.runsheets[0]!.stops;
        stop!.start_utc = iso(Date.parse(stop!.arrival_utc) + 60_000);
        stop!.departure_utc = iso(Date.parse(stop!.start_utc) + 120_000);
        next!.arrival_utc = iso(Date.parse(next!.arrival_utc) + 60_000);
        return rulesOf(result);
      },
    ],
    [
      'a departure before the service is done',
      ['departure'],
      () => {
        const result = good();
        const stop = result.runsheets[0]!.stops[3]!;
        stop.departure_utc = stop.start_utc;
        return rulesOf(result);
      },
    ],
    [
      'a route that leaves before its shift starts',
      ['shift_start'],
      () => rulesOf(good(), TASKS, [{ ...VEHICLES[0]!, shift_start_utc: iso(minutes(5)) }]),
    ],
    [
      'a route that ends after its shift',
      ['shift_end'],
      () => rulesOf(good(), TASKS, [{ ...VEHICLES[0]!, shift_end_utc: iso(minutes(45)) }]),
    ],
    [
      'a route done with its stops but home after its shift',
      ['shift_end'],
      () => {
        const result = good();
        const lastDeparture = Date.parse(result.runsheets[0]!.stops[3]!.departure_utc);
        return rulesOf(result, TASKS, [{ ...VEHICLES[0]!, shift_end_utc: iso(lastDeparture + 1_000) }]);
      },
    ],
    [
      'more on board than the capacity',
      ['capacity'],
      () => rulesOf(good(), TASKS, [{ ...VEHICLES[0]!, capacity: { weight_kg: 100, items: 1 } }]),
    ],
    [
      'a vehicle that does not take the task’s service type',
      ['service_type'],
      () => rulesOf(good(), TASKS, [{ ...VEHICLES[0]!, service_types: ['bike'] }]),
    ],
    [
      'more stops than the vehicle’s max_stops',
      ['max_stops'],
      () => rulesOf(good(), TASKS, [{ ...VEHICLES[0]!, max_stops: 3 }]),
    ],
    [
      'more than 200 tasks on one runsheet',
      ['max_stops', 'runsheet_tasks'],
      () => {
        const here = (t: CheckTask): CheckTask => ({
          ...t,
          pickup: { ...t.pickup, serviceS: 0 },
          dropoff: { ...t.dropoff, openMs: minutes(0), serviceS: 0 },
        });
        const many = Array.from({ length: 201 }, (_, i) => here(task(`T${i}`, MERCHANT, 0)));
        const order = many.flatMap((t): [string, 'pickup' | 'dropoff'][] => [
          [t.id, 'pickup'],
          [t.id, 'dropoff'],
        ]);
        const result = resultOf([runsheet('van-1', order, many)], []);
        result.summary.tasks = 201;
        return rulesOf(result, many);
      },
    ],
    [
      'a leg’s distance that is not the model’s',
      ['distance'],
      () => {
        const result = good();
        result.runsheets[0]!.stops[2]!.distance_from_previous_m += 100;
        return rulesOf(result);
      },
    ],
    [
      'a runsheet’s peak load that is not its own',
      ['runsheet_figures'],
      () => {
        const result = good();
        result.runsheets[0]!.peak_load = { weight_kg: 10 };
        return rulesOf(result);
      },
    ],
    [
      'a summary that does not add up',
      ['summary'],
      () => {
        const result = good();
        result.summary.total_distance_m += 500;
        return rulesOf(result);
      },
    ],
    [
      'a task neither planned nor unplanned',
      ['unaccounted'],
      () => {
        const result = resultOf(good().runsheets, []);
        return rulesOf(result);
      },
    ],
    [
      'an unplanned code that is not true of the task',
      ['unplanned_code'],
      () =>
        rulesOf(resultOf(good().runsheets, [{ task_id: 'C', code: 'time_window', detail: 'Too late.' }]), TASKS, [
          ...VEHICLES,
          { ...VEHICLES[0]!, id: 'truck', count: undefined, capacity: { weight_kg: 1000 } },
        ]),
    ],
  ];
  it.each(cases)('catches %s', (_name, expected, rules) => {
    expect(rules()).toEqual(expected);
  });

  it('reads an X10 task: coordinates, windows, service seconds or the defaults, loads after their units', () => {
    const listed = {
      id: 'T1',
      from_address: { latitude: 1.3, longitude: 103.8 },
      to_address: {},
      from_time_window: { start_time_utc: '2026-12-01T08:00:00Z', end_time_utc: '2026-12-01T09:00:00Z' },
      to_time_window: { start_time_utc: '2026-12-01T09:00:00Z', end_time_utc: '2026-12-01T10:00:00Z' },
      total_item_weight: 2000,
      total_weight_unit: 'g',
      total_item_volume: 1,
      total_volume_unit: 'ft3',
      total_item_count: 3,
      from_service_s: 30,
      to_service_s: null,
    };
    expect(checkTaskOf(listed, 'van', { dropoff: 60 })).toEqual({
      id: 'T1',
      pickup: { point: { latitude: 1.3, longitude: 103.8 }, openMs: BASE, closeMs: minutes(60), serviceS: 30 },
      dropoff: { point: null, openMs: minutes(60), closeMs: minutes(120), serviceS: 60 },
      load: { weight_kg: 2, volume_m3: 0.028316846592, items: 3 },
      serviceType: 'van',
    });
  });

  describe('from a live state (an insertion, X30)', () => {
    // Van 1 is under way: at a fix halfway, 20 minutes in, with A on board (its pickup done); B is asked for.
    const FIX = { latitude: 1.305, longitude: 103.81 };
    const live = (overrides: Partial<LiveRunsheet> = {}): LiveState => ({
      runsheets: new Map([
        [
          'rs-van-1',
          {
            vehicleId: 'van-1',
            driverId: 'drv-1',
            start: FIX,
            notBeforeMs: minutes(20),
            onBoard: ['A'],
            tasksDone: 0,
            stopsDone: 1,
            ...overrides,
          },
        ],
      ]),
      asked: new Set(['B']),
    });
    const inserted = (from = { point: FIX, ms: minutes(20), load: 10 }) => {
      const rs = runsheet(
        'van-1',
        [
          ['B', 'pickup'],
          ['A', 'dropoff'],
          ['B', 'dropoff'],
        ],
        TASKS,
        from,
      );
      rs.driver_id = 'drv-1';
      const result = resultOf([rs], []);
      result.summary.tasks = 1;
      result.summary.planned = 1;
      return result;
    };
    const liveRules = (result: RouteBuildResult, state = live()) =>
      [
        ...new Set(
          checkRouteBuild({ tasks: TASKS, vehicles: VEHICLES, travel: TRAVEL, result, live: state }).map((v) => v.rule),
        ),
      ].sort();

    it('passes a route that starts at the driver’s position and time with its load on board', () => {
      expect(
        checkRouteBuild({ tasks: TASKS, vehicles: VEHICLES, travel: TRAVEL, result: inserted(), live: live() }),
      ).toEqual([]);
    });

    it('catches what the live state forbids', () => {
      // Judged as a new route: the on-board drop-off has no pickup, the driver is not the vehicle's.
      expect(rulesOf(inserted())).toEqual(expect.arrayContaining(['pickup_order', 'vehicle']));
      // Leaving before the live start.
      expect(liveRules(inserted({ point: FIX, ms: minutes(10), load: 10 }))).toContain('shift_start');
      // From the depot, not the fix: the first leg is not the one planned.
      expect(liveRules(inserted(), live({ start: DEPOT }))).toContain('distance');
      // More on board than the van carries.
      expect(liveRules(inserted(), live({ onBoard: ['A', 'C'] }))).toContain('capacity');
      // Another driver, another vehicle.
      expect(liveRules(inserted(), live({ driverId: 'drv-2' }))).toEqual(['vehicle']);
      expect(liveRules(inserted(), live({ vehicleId: 'van-2' }))).toContain('vehicle');
      // The stops done count against max_stops and the runsheet's 200 tasks.
      expect(liveRules(inserted(), live({ stopsDone: 398 }))).toEqual(['max_stops']);
      expect(liveRules(inserted(), live({ tasksDone: 199 }))).toEqual(['runsheet_tasks']);
      // An asked task neither planned nor unplanned.
      const asked = live();
      expect(liveRules(inserted(), { ...asked, asked: new Set(['B', 'C']) })).toEqual(['summary', 'unaccounted']);
    });
  });
});
