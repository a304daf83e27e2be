/**
 * The real solver on published instances (../shared/vrp), judged by the independent checker (bench/vrp/checker.ts),
 * not by its own bookkeeping: each instance mapped as bench/routing.ts maps it for the service (1 unit = 1 km on the
 * 6 371 008.8 m sphere, 60 km/h), solved for about a second, its solution written as X24's `result` would show it
 * (coordinates, ISO instants) and checked. Feasibility and completeness only: the gap is the benchmark's business.
 */
import { describe, expect, it } from 'vitest';
import {
  type CheckTask,
  checkRouteBuild,
  expandVehicles,
  type Point,
  plannedMetres,
  plannedSeconds,
  type RouteBuildResult,
} from '../../bench/vrp/checker.ts';
import { loadVrpInstances } from '../../bench/vrp/instances.ts';
import { mapInstance, projectionOf, TRAVEL } from '../../bench/vrp/mapping.ts';
import { type RoutingProblem, solve } from '../../shared/routing/solver/index.ts';

const SOLVE_MS = 1_000;

/** The mapped instance as the solver's problem (times in seconds from the first shift's start), and its tasks. */
function problemOf(name: string) {
  const [instance] = loadVrpInstances({ names: [name] });
  const { rows, vehicles } = mapInstance(instance!);
  const base = Math.min(...vehicles.map((v) => Date.parse(v.shift_start_utc)));
  const points: Point[] = [];
  const index = new Map<string, number>();
  const locationOf = (p: Point) => {
    const key = `${p.latitude},${p.longitude}`;
    if (!index.has(key)) index.set(key, points.push(p) - 1);
    return index.get(key)!;
  };
  const seconds = (ms: number) => (ms - base) / 1000;
  const tasks = rows.map((row) => ({
    id: row.ref,
    pickup: {
      location: locationOf(row.from),
      open: seconds(row.fromOpenMs),
      close: seconds(row.fromCloseMs),
      serviceS: row.fromServiceS,
    },
    dropoff: {
      location: locationOf(row.to),
      open: seconds(row.toOpenMs),
      close: seconds(row.toCloseMs),
      serviceS: row.toServiceS,
    },
    load: { weight: row.weightKg ?? 0, volume: 0, items: 0 },
  }));
  const fleet = [...expandVehicles(vehicles)].map(([id, v]) => ({
    id,
    start: locationOf(v.start),
    end: locationOf(v.end ?? v.start),
    shiftStart: seconds(Date.parse(v.shift_start_utc)),
    shiftEnd: seconds(Date.parse(v.shift_end_utc)),
    capacity: {
      weight: v.capacity?.weight_kg ?? Number.POSITIVE_INFINITY,
      volume: Number.POSITIVE_INFINITY,
      items: Number.POSITIVE_INFINITY,
    },
    maxStops: 400,
  }));
  const size = points.length;
  const distanceM = new Float64Array(size * size);
  const durationS = new Float64Array(size * size);
  for (let a = 0; a < size; a++)
    for (let b = 0; b < size; b++) {
      distanceM[a * size + b] = plannedMetres(points[a]!, points[b]!, TRAVEL);
      durationS[a * size + b] = plannedSeconds(distanceM[a * size + b]!, TRAVEL);
    }
  const problem: RoutingProblem = {
    matrix: { size, distanceM, durationS },
    tasks,
    vehicles: fleet,
    objective: 'distance',
  };
  const checkTasks: CheckTask[] = rows.map((row) => ({
    id: row.ref,
    pickup: { point: row.from, openMs: row.fromOpenMs, closeMs: row.fromCloseMs, serviceS: row.fromServiceS },
    dropoff: { point: row.to, openMs: row.toOpenMs, closeMs: row.toCloseMs, serviceS: row.toServiceS },
    load: { weight_kg: row.weightKg ?? 0 },
  }));
  return { problem, points, base, vehicles, checkTasks };
}

describe('the solver on published instances, judged by the independent checker', () => {
  it.each(['C101', 'R201', 'lrc105'])('%s: every task planned, every stop feasible', (name) => {
    const { problem, points, base, vehicles, checkTasks } = problemOf(name);
    const started = Date.now();
    const solution = solve(problem, { seed: 43, now: () => Date.now(), deadlineMs: started + SOLVE_MS });
    const at = (s: number) => new Date(base + s * 1000).toISOString();
    const result: RouteBuildResult = {
      runsheets: solution.routes.map((route) => ({
        vehicle_id: problem.vehicles[route.vehicle]!.id,
        planned_start_utc: at(route.departure),
        planned_end_utc: at(route.arrival),
        planned_distance_m: route.distanceM,
        planned_duration_s: route.arrival - route.departure,
        peak_load: { weight_kg: route.peakLoad.weight },
        stops: route.stops.map((stop) => ({
          task_id: problem.tasks[stop.task]!.id,
          kind: stop.kind,
          ...points[stop.location]!,
          arrival_utc: at(stop.arrival),
          start_utc: at(stop.start),
          departure_utc: at(stop.departure),
          distance_from_previous_m: stop.distanceFromPreviousM,
        })),
      })),
      unplanned: solution.unplanned.map((entry) => ({
        task_id: problem.tasks[entry.task]!.id,
        code: entry.code,
        detail: entry.code,
      })),
      summary: {
        tasks: problem.tasks.length,
        planned: problem.tasks.length - solution.unplanned.length,
        unplanned: solution.unplanned.length,
        vehicles_used: solution.routes.length,
        total_distance_m: solution.distanceM,
        total_duration_s: solution.routes.reduce((sum, r) => sum + (r.arrival - r.departure), 0),
        solve_ms: Date.now() - started,
        stopped: solution.stopped,
      },
    };
    expect(checkRouteBuild({ tasks: checkTasks, vehicles, travel: TRAVEL, result })).toEqual([]);
    expect(result.unplanned).toEqual([]);
  });
});

describe("the benchmark's mapping onto the sphere", () => {
  it.each(['R1_10_2', 'C2_10_2', 'C101'])(
    '%s: no great-circle leg shorter than the instance’s own, none 0.1 % longer',
    (name) => {
      const [instance] = loadVrpInstances({ names: [name], set: name.includes('_10_') ? 'homberger' : 'classic' });
      const pointOf = projectionOf(instance!);
      const { nodes } = instance!;
      const points = nodes.map(pointOf);
      let shorter = 0;
      let longest = 0;
      // Every pair of the first 300 nodes and every node with the depot: east-west, north-south and diagonal legs.
      const limit = Math.min(nodes.length, 300);
      for (let a = 0; a < limit; a++)
        for (let b = a + 1; b < nodes.length && (a === 0 || b < limit); b++) {
          const plane = Math.hypot(nodes[a]!.x - nodes[b]!.x, nodes[a]!.y - nodes[b]!.y) * 1000;
          if (plane === 0) continue;
          const sphere = plannedMetres(points[a]!, points[b]!, TRAVEL);
          if (sphere < plane - 1e-6) shorter++;
          longest = Math.max(longest, sphere / plane);
        }
      expect(shorter).toBe(0);
      expect(longest).toBeLessThan(1.001);
    },
  );
});
