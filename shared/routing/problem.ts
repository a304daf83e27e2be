/**
 * From a build's request and its tasks to the solver's problem, and from the solver's solution to the result of
 * contract 4.10. Pure but for the travel port it is handed (which answers the matrix, or its recipe for the solver's
 * thread).
 */
import type { RouteBuild } from '#shared/routing/builds';
import { builtRunsheetId } from '#shared/routing/keys';
import type { BuildResult, VehicleInput } from '#shared/routing/schemas';
import { MAX_RUNSHEET_TASKS } from '#shared/routing/schemas';
import type { Load, MissedWindow, RoutingSolution, TaskSpec, VehicleSpec } from '#shared/routing/solver/model';
import type { Point, ProblemToSolve, TravelPort } from '#shared/routing/travel';

type Stored = Record<string, unknown>;

/** A task as the build reads it: the stored item, and its import job's service type. */
export interface BuildTask {
  item: Stored;
  serviceType?: string | undefined;
}

const KG: Record<string, number> = { kg: 1, g: 0.001, lb: 0.45359237 };
const M3: Record<string, number> = { m3: 1, cm3: 1e-6, ft3: 0.028316846592 };

/** The task's load in kg, m³ and items (4.10: after their units). */
export function loadOf(item: Stored): Load {
  const weight = Number(item['total_item_weight'] ?? 0) * (KG[String(item['total_weight_unit'] ?? 'kg')] ?? 1);
  const volume = Number(item['total_item_volume'] ?? 0) * (M3[String(item['total_volume_unit'] ?? 'm3')] ?? 1);
  return { weight, volume, items: Number(item['total_item_count'] ?? 0) };
}

const pointOf = (address: unknown): Point | undefined => {
  const a = address as { latitude?: unknown; longitude?: unknown } | null | undefined;
  return typeof a?.latitude === 'number' && typeof a.longitude === 'number'
    ? { latitude: a.latitude, longitude: a.longitude }
    : undefined;
};

/** Each vehicle entry expanded by `count` (ids `<id>-1` … `<id>-<count>`), with its entry. */
export function expandVehicles(vehicles: readonly VehicleInput[]) {
  return vehicles.flatMap((entry) =>
    entry.count === undefined
      ? [{ id: entry.id, entry }]
      : Array.from({ length: entry.count }, (_, k) => ({ id: `${entry.id}-${k + 1}`, entry })),
  );
}

export interface Prepared {
  /** The solver's problem, its matrix still a source (built in the solver's thread: travel.ts). */
  problem: ProblemToSolve;
  /** Epoch ms of the problem's time 0. */
  baseMs: number;
  /** The tasks given to the solver, in its order; the others are unplanned for want of coordinates. */
  planned: BuildTask[];
  noCoordinates: BuildTask[];
  /** Each matrix row's coordinates. */
  points: Point[];
  vehicles: { id: string; entry: VehicleInput }[];
}

export async function prepareProblem(build: RouteBuild, tasks: BuildTask[], travel: TravelPort): Promise<Prepared> {
  const { request } = build;
  const vehicles = expandVehicles(request.vehicles);
  const baseMs = Math.min(...request.vehicles.map((v) => Date.parse(v.shift_start_utc)));
  const at = (iso: unknown) => (Date.parse(String(iso)) - baseMs) / 1000;
  const points: Point[] = [];
  const place = (p: Point) => points.push(p) - 1;
  const vehicleSpots = vehicles.map(({ entry }) => ({
    start: place(entry.start),
    end: entry.end === null ? null : place(entry.end ?? entry.start),
  }));
  const planned: BuildTask[] = [];
  const noCoordinates: BuildTask[] = [];
  const taskSpots: { from: number; to: number }[] = [];
  for (const task of tasks) {
    const from = pointOf(task.item['from_address']);
    const to = pointOf(task.item['to_address']);
    if (!from || !to) {
      noCoordinates.push(task);
      continue;
    }
    planned.push(task);
    taskSpots.push({ from: place(from), to: place(to) });
  }
  const { source, indexOf } = await travel.matrix(points);
  const specs: TaskSpec[] = planned.map((task, i) => {
    const from = task.item['from_time_window'] as { start_time_utc: string; end_time_utc: string };
    const to = task.item['to_time_window'] as { start_time_utc: string; end_time_utc: string };
    const pickupS = task.item['from_service_s'];
    const dropoffS = task.item['to_service_s'];
    return {
      id: String(task.item['id']),
      pickup: {
        location: indexOf[taskSpots[i]!.from]!,
        open: at(from.start_time_utc),
        close: at(from.end_time_utc),
        serviceS: typeof pickupS === 'number' ? pickupS : request.service_s.pickup,
      },
      dropoff: {
        location: indexOf[taskSpots[i]!.to]!,
        open: at(to.start_time_utc),
        close: at(to.end_time_utc),
        serviceS: typeof dropoffS === 'number' ? dropoffS : request.service_s.dropoff,
      },
      load: loadOf(task.item),
      serviceType: task.serviceType,
    };
  });
  const vehicleSpecs: VehicleSpec[] = vehicles.map(({ id, entry }, k) => ({
    id,
    start: indexOf[vehicleSpots[k]!.start]!,
    end: vehicleSpots[k]!.end === null ? null : indexOf[vehicleSpots[k]!.end!]!,
    shiftStart: at(entry.shift_start_utc),
    shiftEnd: at(entry.shift_end_utc),
    capacity: {
      weight: entry.capacity?.weight_kg ?? Number.POSITIVE_INFINITY,
      volume: entry.capacity?.volume_m3 ?? Number.POSITIVE_INFINITY,
      items: entry.capacity?.items ?? Number.POSITIVE_INFINITY,
    },
    serviceTypes: entry.service_types,
    maxStops: Math.min(entry.max_stops ?? 2 * MAX_RUNSHEET_TASKS, 2 * MAX_RUNSHEET_TASKS),
  }));
  // Each matrix row's coordinates, for the stops of the result.
  const rows: Point[] = [];
  points.forEach((p, i) => {
    rows[indexOf[i]!] = p;
  });
  return {
    problem: { travel: source, tasks: specs, vehicles: vehicleSpecs, objective: request.objective },
    baseMs,
    planned,
    noCoordinates,
    points: rows,
    vehicles,
  };
}

const DETAIL: Record<BuildResult['unplanned'][number]['code'], string> = {
  no_coordinates:
    'its pickup or drop-off address has no coordinates: import it with from_latitude/from_longitude and to_latitude/to_longitude',
  time_window:
    'no vehicle can reach its pickup and drop-off within their time windows and its shift, even with this task alone',
  capacity: 'its load (weight, volume or items) is more than any vehicle can carry',
  service_type: 'no vehicle takes its service type (give a vehicle its import job’s service type)',
  not_enough_vehicles:
    'it could be served, but not together with the other tasks: add vehicles, lengthen shifts or widen its windows',
};

/** A `time_window` task's detail: which window (or the shift's end) no vehicle meets, even with the task alone. */
const MISSED_DETAIL: Record<MissedWindow, string> = {
  pickup:
    'no vehicle can reach its pickup before its pickup window (from_end_time_utc) closes, even with this task alone',
  dropoff:
    'no vehicle can reach its drop-off before its drop-off window (to_end_time_utc) closes after the pickup, even with this task alone',
  shift_end:
    'its pickup and drop-off windows can be met, but no vehicle is back by its shift’s end afterwards, even with this task alone',
};

export const round = (n: number, digits = 0) => {
  const f = 10 ** digits;
  return Math.round(n * f) / f;
};

/**
 * A solved route as contract 4.10's result shows it (X23's runsheets and X30's alike): its planned times, distance,
 * duration and peak load, and its stops with their coordinates and times.
 */
export function routeView(
  prepared: Pick<Prepared, 'problem' | 'baseMs' | 'points'>,
  route: RoutingSolution['routes'][number],
) {
  const iso = (s: number) => new Date(prepared.baseMs + Math.round(s * 1000)).toISOString();
  return {
    planned_start_utc: iso(route.departure),
    planned_end_utc: iso(route.arrival),
    planned_distance_m: round(route.distanceM),
    planned_duration_s: round(route.durationS),
    peak_load: {
      weight_kg: round(route.peakLoad.weight, 3),
      volume_m3: round(route.peakLoad.volume, 6),
      items: route.peakLoad.items,
    },
    stops: route.stops.map((stop) => {
      const point = prepared.points[stop.location]!;
      return {
        task_id: prepared.problem.tasks[stop.task]!.id,
        kind: stop.kind,
        latitude: point.latitude,
        longitude: point.longitude,
        arrival_utc: iso(stop.arrival),
        start_utc: iso(stop.start),
        departure_utc: iso(stop.departure),
        distance_from_previous_m: round(stop.distanceFromPreviousM),
      };
    }),
  };
}

/** The result of contract 4.10 from the solver's solution. */
export function toResult(
  build: RouteBuild,
  prepared: Prepared,
  solution: RoutingSolution,
  solveMs: number,
  tasksAsked: number,
): BuildResult {
  const { problem } = prepared;
  const runsheets = solution.routes.map((route) => {
    const vehicle = prepared.vehicles[route.vehicle]!;
    return {
      id: builtRunsheetId(build.id, vehicle.id),
      name: vehicle.id,
      vehicle_id: vehicle.id,
      ...(vehicle.entry.driver_id ? { driver_id: vehicle.entry.driver_id } : {}),
      ...routeView(prepared, route),
    };
  });
  const unplanned = [
    ...prepared.noCoordinates.map((task) => ({
      task_id: String(task.item['id']),
      code: 'no_coordinates' as const,
      detail: DETAIL.no_coordinates,
    })),
    ...solution.unplanned.map((u) => ({
      task_id: problem.tasks[u.task]!.id,
      code: u.code,
      detail: u.missed ? MISSED_DETAIL[u.missed] : DETAIL[u.code],
    })),
  ];
  return {
    runsheets,
    unplanned,
    summary: {
      tasks: tasksAsked,
      planned: tasksAsked - unplanned.length,
      unplanned: unplanned.length,
      vehicles_used: runsheets.length,
      total_distance_m: round(solution.distanceM),
      total_duration_s: round(solution.durationS),
      solve_ms: Math.round(solveMs),
      stopped: solution.stopped,
    },
  };
}
