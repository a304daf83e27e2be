/**
 * X30 (contract 4.11): tasks added to the live routes. The same solver as X23 (shared/routing/solver/), handed the day
 * as it stands (its starting state: solver/starting-state.ts):
 * - the live runsheets (those X30 named, else every runsheet of imported tasks not completed or cancelled with at most
 *   199 tasks), each one vehicle: its build's vehicle (stored on it by the apply, `vehicle`), or for a hand-made one
 *   no capacity limit and a shift from now to the latest window end of the tasks in play (the planning's day);
 * - what is left of each, as its ETAs read it (planning/etas.ts `remainingStops`: its planned order less the stops
 *   done, a hand-made one in task order), as the route to start from; every task of it pinned to its vehicle, a task
 *   picked up and not dropped off on board from the start;
 * - the route starts from the assigned driver's last position at the later of its fix's time and now (a fix at most
 *   FIX_MAX_AGE_MS old, as the ETAs take it); without one (or not yet assigned) from its vehicle's start at the later
 *   of its shift's start and now, and a hand-made runsheet from its first stop left, now;
 * - the tasks asked for, as X23 reads them; `vehicles[]` as X23's, new routes for tasks that fit nowhere (objective
 *   `vehicles`: a new vehicle is used only where the live ones cannot take a task).
 * The result is 4.10's: each runsheet the search added to with its whole remaining stop list and `added[]`, new
 * runsheets as X23 makes them, `unplanned[]` for the tasks asked for. apply-insertion.ts applies it.
 */
import { mapLimited } from '#shared/concurrency';
import { getAll, mainTableName, queryAll } from '#shared/db/client';
import { currentFixes } from '#shared/locations/positions';
import { logger } from '#shared/log';
import { dispatchRecords, type RunsheetStatusView } from '#shared/planning/dispatch-records';
import { DEFAULT_TRAVEL, type EtaStop, FIX_MAX_AGE_MS, remainingStops } from '#shared/planning/etas';
import { assignKey, progressPrefix, runsheetKey } from '#shared/planning/keys';
import type { TaskStatus } from '#shared/planning/lifecycle';
import { planningContents, runsheetTasksOf } from '#shared/planning/planning-records';
import type { RouteBuild } from '#shared/routing/builds';
import { builtRunsheetId } from '#shared/routing/keys';
import { type BuildTask, expandVehicles, loadOf, round, routeView } from '#shared/routing/problem';
import type { BuildResult, VehicleInput } from '#shared/routing/schemas';
import { MAX_RUNSHEET_TASKS, ROUTE_DEFAULTS } from '#shared/routing/schemas';
import type { InitialRoute, RoutingSolution, TaskSpec, VehicleSpec } from '#shared/routing/solver/model';
import type { Point, ProblemToSolve, TravelPort, TravelSettings } from '#shared/routing/travel';

/** Live runsheets whose progress an insertion reads at once. */
const PROGRESS_READS_AT_ONCE = 16;

type Task = Record<string, unknown> & { id: string };

/** A built runsheet's vehicle as the apply stores it on the runsheet (apply.ts): X23's vehicle, its count expanded. */
export type StoredVehicle = Omit<VehicleInput, 'count' | 'driver_id'>;

/** A live runsheet as X30 reads it: its item, its status, what is left of it and where it starts from. */
export interface LiveRoute {
  id: string;
  name: string;
  tasks: Task[];
  taskIds: string[];
  stops: Record<string, unknown>[] | undefined;
  travel: (TravelSettings & { model?: string }) | undefined;
  vehicle: StoredVehicle | undefined;
  status: RunsheetStatusView['status'];
  driverId: string | undefined;
  /** The stops still to do, in the order the driver takes them (etas.ts). */
  remaining: EtaStop[];
  /** Tasks whose both stops are done. */
  doneTasks: number;
  /** Stops done (pickups and drop-offs). */
  doneStops: number;
  /** The driver's last fix at most FIX_MAX_AGE_MS old, when assigned. */
  fix: (Point & { server_time: string }) | undefined;
}

/** The runsheets X30 adds to (see the module's note), each as it stands now. */
export async function readLiveRoutes(build: RouteBuild, nowMs: number): Promise<LiveRoute[]> {
  const planId = build.planning_id;
  const named = build.request.runsheet_ids;
  const ids = named ?? (await planningContents(planId, true)).runsheets.map((r) => r.id);
  if (ids.length === 0) return [];
  const [items, statusOf] = await Promise.all([
    getAll(
      mainTableName(),
      ids.map((id) => runsheetKey(planId, id)),
      { ConsistentRead: true },
    ),
    dispatchRecords(planId, ids, true),
  ]);
  const live = items.filter((item) => {
    const { status } = statusOf(String(item['id']));
    if (status === 'completed' || status === 'cancelled' || !Array.isArray(item['task_ids'])) return false;
    // By default a runsheet that is full but for one task is left alone: it could take no more than one (P5's bound).
    return named !== undefined || (item['task_ids'] as unknown[]).length < MAX_RUNSHEET_TASKS;
  });
  const driverOf = (id: string) => {
    const status = statusOf(id);
    return status.status === 'assigned' || status.status === 'in_progress' ? status.assigned_driver.id : undefined;
  };
  const drivers = live.flatMap((item) => driverOf(String(item['id'])) ?? []);
  const [fixes, progresses] = await Promise.all([
    drivers.length > 0 ? currentFixes(build.org_id, drivers) : new Map<string, Point & { server_time: string }>(),
    // Each live runsheet's progress: one Query each, a few at a time (a planning may hold hundreds under way).
    mapLimited(live, PROGRESS_READS_AT_ONCE, async (item) => {
      const id = String(item['id']);
      if (!driverOf(id)) return new Map<string, TaskStatus>();
      const key = assignKey(planId, id);
      const found = await queryAll<{ task_id: string; status: TaskStatus }>({
        TableName: mainTableName(),
        ConsistentRead: true,
        KeyConditionExpression: 'PK = :pk AND begins_with(SK, :progress)',
        ExpressionAttributeValues: { ':pk': key.PK, ':progress': progressPrefix(id) },
        ProjectionExpression: 'task_id, #status',
        ExpressionAttributeNames: { '#status': 'status' },
      });
      return new Map(found.map((p) => [p.task_id, p.status]));
    }),
  ]);
  return live.map((item, k) => {
    const id = String(item['id']);
    const tasks = runsheetTasksOf(item) as Task[];
    const stops = Array.isArray(item['stops']) ? (item['stops'] as Record<string, unknown>[]) : undefined;
    const statuses = progresses[k]!;
    const status = (taskId: string) => statuses.get(taskId) ?? ('pending' as const);
    const remaining = remainingStops(tasks, stops, status);
    const driverId = driverOf(id);
    const fix = driverId ? fixes.get(driverId) : undefined;
    const fresh = fix && nowMs - Date.parse(fix.server_time) <= FIX_MAX_AGE_MS ? fix : undefined;
    return {
      id,
      name: typeof item['name'] === 'string' ? item['name'] : id,
      tasks,
      taskIds: item['task_ids'] as string[],
      stops,
      travel: item['travel'] as LiveRoute['travel'],
      vehicle: item['vehicle'] as StoredVehicle | undefined,
      status: statusOf(id).status,
      driverId,
      remaining,
      doneTasks: tasks.filter((t) => ['delivered', 'failed'].includes(status(t.id))).length,
      doneStops: 2 * tasks.length - remaining.length,
      fix: fresh,
    };
  });
}

/** The travel the insertion drives with: the live runsheets' own when they agree, else 4.10's default. */
export function liveTravel(routes: readonly LiveRoute[]): TravelSettings {
  const [first] = routes;
  const settings = first?.travel ?? DEFAULT_TRAVEL;
  const same = routes.every(
    (r) =>
      (r.travel?.speed_kmh ?? DEFAULT_TRAVEL.speed_kmh) === settings.speed_kmh &&
      (r.travel?.detour_factor ?? DEFAULT_TRAVEL.detour_factor) === settings.detour_factor,
  );
  return same ? { speed_kmh: settings.speed_kmh, detour_factor: settings.detour_factor } : DEFAULT_TRAVEL;
}

export interface LivePrepared {
  problem: ProblemToSolve;
  /** Epoch ms of the problem's time 0: now. */
  baseMs: number;
  /** The live routes given to the solver, vehicle k = routes[k]; then the new vehicles. */
  routes: LiveRoute[];
  vehicles: { id: string; entry: VehicleInput }[];
  /** The tasks asked for, given to the solver after the live routes' own (task index `firstNew` on). */
  asked: BuildTask[];
  firstNew: number;
  noCoordinates: BuildTask[];
  points: Point[];
}

const pointOf = (address: unknown): Point | undefined => {
  const a = address as { latitude?: unknown; longitude?: unknown } | null | undefined;
  return typeof a?.latitude === 'number' && typeof a.longitude === 'number'
    ? { latitude: a.latitude, longitude: a.longitude }
    : undefined;
};

/** A window bound no stop reaches (seconds from now): open since, or open until, the problem's horizon. */
const LONG_AGO = -1e7;
const FAR_AHEAD = 1e8;

/** The solver's problem from the live routes and the tasks asked for (see the module's note). */
export async function prepareLive(
  build: RouteBuild,
  liveRoutes: LiveRoute[],
  asked: BuildTask[],
  nowMs: number,
  travel: TravelPort,
): Promise<LivePrepared> {
  const baseMs = nowMs;
  const rel = (ms: number | undefined, fallback: number) => (ms === undefined ? fallback : (ms - baseMs) / 1000);
  const at = (iso: unknown) => (Date.parse(String(iso)) - baseMs) / 1000;
  const points: Point[] = [];
  const place = (p: Point) => points.push(p) - 1;
  // A route whose stop left has no coordinates cannot be driven by the model: it is left as it is.
  const routes = liveRoutes.filter((route) => {
    const ok =
      route.remaining.every((stop) => stop.point) && (route.remaining.length > 0 || route.fix || route.vehicle);
    if (!ok)
      logger.info('a live runsheet X30 cannot route is left as it is', { build_id: build.id, runsheet_id: route.id });
    return ok;
  });
  const newTasks: { task: BuildTask; from: number; to: number }[] = [];
  const noCoordinates: BuildTask[] = [];
  for (const task of asked) {
    const from = pointOf(task.item['from_address']);
    const to = pointOf(task.item['to_address']);
    if (!from || !to) noCoordinates.push(task);
    else newTasks.push({ task, from: place(from), to: place(to) });
  }
  // The end of the planning's day for a hand-made runsheet: the latest window end of the tasks in play.
  let dayEnd = 24 * 3600;
  for (const route of routes)
    for (const stop of route.remaining)
      if (stop.closesMs !== undefined) dayEnd = Math.max(dayEnd, rel(stop.closesMs, 0));
  for (const { task } of newTasks) {
    const to = task.item['to_time_window'] as { end_time_utc?: string } | undefined;
    if (to?.end_time_utc) dayEnd = Math.max(dayEnd, at(to.end_time_utc));
  }

  type Spot = { start: number; end: number | null; shiftStart: number; shiftEnd: number };
  const liveSpots: Spot[] = routes.map((route) => {
    const v = route.vehicle;
    const fixMs = route.fix ? Date.parse(route.fix.server_time) : undefined;
    const from: Point = route.fix ?? v?.start ?? route.remaining[0]!.point!;
    const since = fixMs ?? (v ? Date.parse(v.shift_start_utc) : baseMs);
    return {
      start: place(from),
      end: v ? (v.end === null ? null : place(v.end ?? v.start)) : null,
      shiftStart: Math.max(0, rel(since, 0)),
      shiftEnd: v ? at(v.shift_end_utc) : dayEnd,
    };
  });
  const stopSpots = routes.map((route) => route.remaining.map((stop) => place(stop.point!)));
  const vehicles = expandVehicles(build.request.vehicles);
  const newSpots: Spot[] = vehicles.map(({ entry }) => ({
    start: place(entry.start),
    end: entry.end === null ? null : place(entry.end ?? entry.start),
    shiftStart: Math.max(0, at(entry.shift_start_utc)),
    shiftEnd: at(entry.shift_end_utc),
  }));
  const { source, indexOf } = await travel.matrix(points);

  const specs: TaskSpec[] = [];
  const initial: InitialRoute[] = [];
  routes.forEach((route, v) => {
    const byId = new Map(route.tasks.map((t) => [t.id, t]));
    const indexOfTask = new Map<string, number>();
    const stops: InitialRoute['stops'][number][] = [];
    route.remaining.forEach((stop, k) => {
      const location = indexOf[stopSpots[v]![k]!]!;
      const spec = {
        location,
        open: rel(stop.opensMs, LONG_AGO),
        close: rel(stop.closesMs, FAR_AHEAD),
        serviceS: stop.serviceS,
      };
      let t = indexOfTask.get(stop.taskId);
      if (t === undefined) {
        t = specs.length;
        indexOfTask.set(stop.taskId, t);
        // A drop-off first named (its pickup done): on board; its pickup is the solver's to make (starting-state.ts).
        specs.push({
          id: stop.taskId,
          pickup: spec,
          dropoff: spec,
          load: loadOf(byId.get(stop.taskId) ?? {}),
          vehicles: [v],
          ...(stop.kind === 'dropoff' ? { onBoard: v } : {}),
        });
      } else specs[t] = { ...specs[t]!, [stop.kind]: spec };
      stops.push({ task: t, kind: stop.kind });
    });
    initial.push({ vehicle: v, stops });
  });
  const firstNew = specs.length;
  for (const { task, from, to } of newTasks) {
    const fromWindow = task.item['from_time_window'] as { start_time_utc: string; end_time_utc: string };
    const toWindow = task.item['to_time_window'] as { start_time_utc: string; end_time_utc: string };
    const pickupS = task.item['from_service_s'];
    const dropoffS = task.item['to_service_s'];
    specs.push({
      id: String(task.item['id']),
      pickup: {
        location: indexOf[from]!,
        open: at(fromWindow.start_time_utc),
        close: at(fromWindow.end_time_utc),
        serviceS: typeof pickupS === 'number' ? pickupS : ROUTE_DEFAULTS.pickup_s,
      },
      dropoff: {
        location: indexOf[to]!,
        open: at(toWindow.start_time_utc),
        close: at(toWindow.end_time_utc),
        serviceS: typeof dropoffS === 'number' ? dropoffS : ROUTE_DEFAULTS.dropoff_s,
      },
      load: loadOf(task.item),
      serviceType: task.serviceType,
    });
  }
  const unlimited = {
    weight: Number.POSITIVE_INFINITY,
    volume: Number.POSITIVE_INFINITY,
    items: Number.POSITIVE_INFINITY,
  };
  const capacityOf = (entry: Pick<VehicleInput, 'capacity'> | undefined) => ({
    weight: entry?.capacity?.weight_kg ?? unlimited.weight,
    volume: entry?.capacity?.volume_m3 ?? unlimited.volume,
    items: entry?.capacity?.items ?? unlimited.items,
  });
  const spec = (id: string, spot: Spot): Omit<VehicleSpec, 'capacity' | 'maxStops'> => ({
    id,
    start: indexOf[spot.start]!,
    end: spot.end === null ? null : indexOf[spot.end]!,
    shiftStart: spot.shiftStart,
    shiftEnd: Math.max(spot.shiftEnd, spot.shiftStart),
  });
  const vehicleSpecs: VehicleSpec[] = [
    ...routes.map((route, v) => {
      const onBoard = new Set(
        route.remaining
          .filter((s, k) => s.kind === 'dropoff' && !route.remaining.slice(0, k).some((o) => o.taskId === s.taskId))
          .map((s) => s.taskId),
      ).size;
      // P5's bound on the whole runsheet (tasks done count), the vehicle's max_stops less the stops done; an on-board
      // task's pickup is a stop of the solver's route (starting-state.ts) and is counted back.
      const maxStops = Math.min(
        2 * (MAX_RUNSHEET_TASKS - route.doneTasks),
        (route.vehicle?.max_stops ?? 2 * MAX_RUNSHEET_TASKS) - route.doneStops + onBoard,
      );
      return {
        ...spec(route.id, liveSpots[v]!),
        capacity: route.vehicle ? capacityOf(route.vehicle) : unlimited,
        serviceTypes: route.vehicle?.service_types,
        maxStops: Math.max(0, maxStops),
      };
    }),
    ...vehicles.map(({ id, entry }, k) => ({
      ...spec(id, newSpots[k]!),
      capacity: capacityOf(entry),
      serviceTypes: entry.service_types,
      maxStops: Math.min(entry.max_stops ?? 2 * MAX_RUNSHEET_TASKS, 2 * MAX_RUNSHEET_TASKS),
    })),
  ];
  const rows: Point[] = [];
  points.forEach((p, i) => {
    rows[indexOf[i]!] = p;
  });
  return {
    problem: {
      travel: source,
      tasks: specs,
      vehicles: vehicleSpecs,
      // New vehicles only where the live ones cannot take a task (their routes count once, whatever they hold).
      objective: vehicles.length > 0 ? 'vehicles' : 'distance',
      initial,
    },
    baseMs,
    routes,
    vehicles,
    asked: newTasks.map((t) => t.task),
    firstNew,
    noCoordinates,
    points: rows,
  };
}

const UNPLANNED_DETAIL: Record<BuildResult['unplanned'][number]['code'], string> = {
  no_coordinates:
    'its pickup or drop-off address has no coordinates: import it with from_latitude/from_longitude and to_latitude/to_longitude',
  time_window:
    'no live route (nor vehicle given) can reach its pickup and drop-off within their time windows from where it is now, even with this task alone',
  capacity: 'its load (weight, volume or items) is more than any live route’s vehicle (or vehicle given) can carry',
  service_type: 'no live route’s vehicle (nor vehicle given) takes its service type',
  not_enough_vehicles:
    'it fits no live route together with what that route holds already: add vehicles[] for new routes, or name other runsheets',
};

/** Contract 4.11's result: the runsheets added to (whole remaining stops, `added[]`), new ones, the tasks left out. */
export function toLiveResult(
  build: RouteBuild,
  prepared: LivePrepared,
  solution: RoutingSolution,
  solveMs: number,
): BuildResult {
  const { problem, routes, firstNew } = prepared;
  // A live route must still drop off every task of its own (each pinned to it, those on board with them). One that
  // lost one (the search left it out) is answered as it was: the runsheet keeps its order, its new tasks unplanned.
  const kept = new Set<number>();
  const lostNew: number[] = [];
  for (const route of solution.routes) {
    if (route.vehicle >= routes.length) continue;
    const dropped = new Set(route.stops.filter((s) => s.kind === 'dropoff').map((s) => s.task));
    const own = problem.tasks.flatMap((t, k) => (k < firstNew && t.vehicles?.[0] === route.vehicle ? [k] : []));
    if (own.every((k) => dropped.has(k))) continue;
    kept.add(route.vehicle);
    lostNew.push(...new Set(route.stops.filter((s) => s.task >= firstNew).map((s) => s.task)));
    logger.warn('an insertion’s route left out a task of its own: answered as it was', {
      build_id: build.id,
      runsheet_id: routes[route.vehicle]!.id,
    });
  }
  const runsheets = solution.routes.flatMap((route) => {
    if (kept.has(route.vehicle)) return [];
    const added = [
      ...new Set(route.stops.filter((stop) => stop.task >= firstNew).map((stop) => problem.tasks[stop.task]!.id)),
    ];
    if (added.length === 0) return [];
    const live = route.vehicle < routes.length ? routes[route.vehicle]! : undefined;
    const vehicle = live ? undefined : prepared.vehicles[route.vehicle - routes.length]!;
    const driverId = live ? live.driverId : vehicle!.entry.driver_id;
    return [
      {
        id: live ? live.id : builtRunsheetId(build.id, vehicle!.id),
        name: live ? live.name : vehicle!.id,
        vehicle_id: live ? (live.vehicle?.id ?? live.id) : vehicle!.id,
        ...(driverId ? { driver_id: driverId } : {}),
        ...routeView(prepared, route),
        added,
      },
    ];
  });
  const unplanned = [
    ...prepared.noCoordinates.map((task) => ({
      task_id: String(task.item['id']),
      code: 'no_coordinates' as const,
      detail: UNPLANNED_DETAIL.no_coordinates,
    })),
    ...solution.unplanned
      .filter((u) => u.task >= firstNew)
      .map((u) => ({ task_id: problem.tasks[u.task]!.id, code: u.code, detail: UNPLANNED_DETAIL[u.code] })),
    ...lostNew.map((k) => ({
      task_id: problem.tasks[k]!.id,
      code: 'not_enough_vehicles' as const,
      detail: UNPLANNED_DETAIL.not_enough_vehicles,
    })),
  ];
  return {
    runsheets,
    unplanned,
    summary: {
      tasks: build.task_count,
      planned: build.task_count - unplanned.length,
      unplanned: unplanned.length,
      vehicles_used: runsheets.length,
      total_distance_m: round(runsheets.reduce((sum, r) => sum + r.planned_distance_m, 0)),
      total_duration_s: round(runsheets.reduce((sum, r) => sum + r.planned_duration_s, 0)),
      solve_ms: Math.round(solveMs),
      stopped: solution.stopped,
    },
  };
}
