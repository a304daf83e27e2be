/**
 * An independent checker of a route build's result (contract 4.10), written apart from the solver and the worker and
 * importing nothing of `shared/routing/`: a solver is tested against the model, never against its own idea of
 * feasible. Given the tasks as the service knows them (coordinates, windows, service seconds, loads after units, the
 * import job's service type), the vehicles and travel of the X23 request and the `route_build.result`, it recomputes
 * every leg from the result's own coordinates and times and answers each broken rule as a violation (none: the result
 * is feasible and its figures add up).
 */

/** The sphere of 4.10. */
const EARTH_RADIUS_M = 6_371_008.8;
/** The bound of P5: a runsheet holds at most 200 tasks (400 stops). */
const RUNSHEET_TASKS = 200;
const UNPLANNED_CODES = ['no_coordinates', 'time_window', 'capacity', 'service_type', 'not_enough_vehicles'] as const;
const DIMENSIONS = ['weight_kg', 'volume_m3', 'items'] as const;
type Dimension = (typeof DIMENSIONS)[number];

export interface Point {
  latitude: number;
  longitude: number;
}

/** One stop of a task as the service knows it: times in epoch milliseconds. */
export interface CheckStop {
  point: Point | null;
  openMs: number;
  closeMs: number;
  serviceS: number;
}

export interface CheckTask {
  id: string;
  pickup: CheckStop;
  dropoff: CheckStop;
  load: Partial<Record<Dimension, number>>;
  serviceType?: string | null | undefined;
}

/** A vehicle entry of the X23 body, as sent. */
export interface RequestVehicle {
  id: string;
  count?: number;
  driver_id?: string;
  start: Point;
  end?: Point | null;
  shift_start_utc: string;
  shift_end_utc: string;
  capacity?: Partial<Record<Dimension, number>>;
  service_types?: string[];
  max_stops?: number;
}

export interface Travel {
  speed_kmh: number;
  detour_factor: number;
}

export interface ResultStop {
  task_id: string;
  kind: 'pickup' | 'dropoff';
  latitude: number;
  longitude: number;
  arrival_utc: string;
  start_utc: string;
  departure_utc: string;
  distance_from_previous_m: number;
}

export interface ResultRunsheet {
  id?: string;
  name?: string;
  vehicle_id: string;
  driver_id?: string | null;
  planned_start_utc: string;
  planned_end_utc: string;
  planned_distance_m: number;
  planned_duration_s: number;
  peak_load?: Partial<Record<Dimension, number | null>>;
  stops: ResultStop[];
}

export interface RouteBuildResult {
  runsheets: ResultRunsheet[];
  unplanned: { task_id: string; code: string; detail: string }[];
  summary: {
    tasks: number;
    planned: number;
    unplanned: number;
    vehicles_used: number;
    total_distance_m: number;
    total_duration_s: number;
    solve_ms: number;
    stopped: string;
  };
}

export type Rule =
  | 'unknown_task'
  | 'planned_twice'
  | 'pickup_order'
  | 'vehicle'
  | 'coordinates'
  | 'window'
  | 'travel'
  | 'service_start'
  | 'departure'
  | 'shift_start'
  | 'shift_end'
  | 'capacity'
  | 'service_type'
  | 'max_stops'
  | 'runsheet_tasks'
  | 'distance'
  | 'runsheet_figures'
  | 'summary'
  | 'unaccounted'
  | 'unplanned_code';

export interface Violation {
  rule: Rule;
  message: string;
}

/**
 * A runsheet under way, as an insertion (X30, contract 4.11) starts from it: where and when its route may start (the
 * driver's last position at the later of its fix's time and the request; else its vehicle's start and shift), the
 * tasks on board (picked up, their drop-off still to do: the result names only their drop-off), and what is done.
 */
export interface LiveRunsheet {
  /** The vehicle the runsheet keeps (an id of `vehicles`), its assigned driver (or none). */
  vehicleId: string;
  driverId?: string | null;
  start: Point;
  /** The route leaves `start` no earlier than this (epoch ms). */
  notBeforeMs: number;
  onBoard: readonly string[];
  /** Tasks whose both stops are done, and stops done (pickups of on-board tasks among them). */
  tasksDone: number;
  stopsDone: number;
}

/** The live state an insertion's result is judged from: its runsheets by id, and the tasks the insertion was asked. */
export interface LiveState {
  runsheets: ReadonlyMap<string, LiveRunsheet>;
  asked: ReadonlySet<string>;
}

export interface CheckInput {
  tasks: readonly CheckTask[];
  vehicles: readonly RequestVehicle[];
  travel: Travel;
  result: RouteBuildResult;
  /**
   * An insertion's result (X30): a runsheet named here starts from its live state (its stops done absent, its loads on
   * board), every other one is a new route of `vehicles`; only the asked tasks must be accounted for.
   */
  live?: LiveState;
  /** Slack for rounded times (the result's instants are ISO strings): 1 s unless told. */
  toleranceS?: number;
}

/** The planned distance of 4.10: great-circle on the 6 371 008.8 m sphere × detour; 0 between equal coordinates. */
export function plannedMetres(a: Point, b: Point, travel: Travel): number {
  if (a.latitude === b.latitude && a.longitude === b.longitude) return 0;
  const rad = Math.PI / 180;
  const dLat = (b.latitude - a.latitude) * rad;
  const dLon = (b.longitude - a.longitude) * rad;
  const h = Math.sin(dLat / 2) ** 2 + Math.cos(a.latitude * rad) * Math.cos(b.latitude * rad) * Math.sin(dLon / 2) ** 2;
  return 2 * EARTH_RADIUS_M * Math.asin(Math.min(1, Math.sqrt(h))) * travel.detour_factor;
}

export const plannedSeconds = (metres: number, travel: Travel) => (metres * 3.6) / travel.speed_kmh;

/** The vehicles of the request one by one: an entry with `count` is `<id>-1` … `<id>-<count>`. */
export function expandVehicles(vehicles: readonly RequestVehicle[]): Map<string, RequestVehicle> {
  const byId = new Map<string, RequestVehicle>();
  for (const vehicle of vehicles) {
    if (vehicle.count === undefined) byId.set(vehicle.id, vehicle);
    else for (let i = 1; i <= vehicle.count; i++) byId.set(`${vehicle.id}-${i}`, vehicle);
  }
  return byId;
}

const endOf = (vehicle: RequestVehicle): Point | null => (vehicle.end === undefined ? vehicle.start : vehicle.end);
const capacityOf = (vehicle: RequestVehicle, dimension: Dimension) =>
  vehicle.capacity?.[dimension] ?? Number.POSITIVE_INFINITY;
const takesType = (vehicle: RequestVehicle, task: CheckTask) =>
  vehicle.service_types === undefined || (task.serviceType != null && vehicle.service_types.includes(task.serviceType));
const fitsCapacity = (vehicle: RequestVehicle, task: CheckTask) =>
  DIMENSIONS.every((d) => (task.load[d] ?? 0) <= capacityOf(vehicle, d) + 1e-9);
const maxStopsOf = (vehicle: RequestVehicle) => Math.min(vehicle.max_stops ?? 2 * RUNSHEET_TASKS, 2 * RUNSHEET_TASKS);

/** Whether `vehicle` could serve `task` with nothing else on board: the test behind `time_window` and its peers. */
function servesAlone(vehicle: RequestVehicle, task: CheckTask, travel: Travel): boolean {
  const { pickup, dropoff } = task;
  if (!pickup.point || !dropoff.point) return false;
  if (!takesType(vehicle, task) || !fitsCapacity(vehicle, task) || maxStopsOf(vehicle) < 2) return false;
  const leg = (a: Point, b: Point) => plannedSeconds(plannedMetres(a, b, travel), travel) * 1000;
  const shiftStart = Date.parse(vehicle.shift_start_utc);
  const pickupStart = Math.max(shiftStart + leg(vehicle.start, pickup.point), pickup.openMs);
  if (pickupStart > pickup.closeMs) return false;
  const dropoffStart = Math.max(
    pickupStart + pickup.serviceS * 1000 + leg(pickup.point, dropoff.point),
    dropoff.openMs,
  );
  if (dropoffStart > dropoff.closeMs) return false;
  const done = dropoffStart + dropoff.serviceS * 1000;
  const end = endOf(vehicle);
  return (end ? done + leg(dropoff.point, end) : done) <= Date.parse(vehicle.shift_end_utc);
}

/** Every rule of 4.10 the result breaks; an empty list for a feasible result whose figures add up. */
export function checkRouteBuild(input: CheckInput): Violation[] {
  const { tasks, travel, result } = input;
  const tolMs = (input.toleranceS ?? 1) * 1000;
  const violations: Violation[] = [];
  const fail = (rule: Rule, message: string) => violations.push({ rule, message });
  const taskById = new Map(tasks.map((task) => [task.id, task]));
  const vehicleById = expandVehicles(input.vehicles);
  const plannedBy = new Map<string, string>();
  const usedVehicles = new Set<string>();
  let totalDistance = 0;
  let totalDuration = 0;

  for (const [r, runsheet] of result.runsheets.entries()) {
    const where = `runsheet ${r} (${runsheet.vehicle_id})`;
    const live = runsheet.id === undefined ? undefined : input.live?.runsheets.get(runsheet.id);
    if (live && live.vehicleId !== runsheet.vehicle_id)
      fail('vehicle', `${where}: the live runsheet's vehicle is ${live.vehicleId}`);
    const vehicle = vehicleById.get(runsheet.vehicle_id);
    if (!vehicle) {
      // Nothing of the route can be judged without its vehicle; its tasks count as planned here.
      fail('vehicle', `${where}: no vehicle of the request has this id`);
      for (const stop of runsheet.stops) plannedBy.set(stop.task_id, where);
      totalDistance += runsheet.planned_distance_m;
      totalDuration += runsheet.planned_duration_s;
      continue;
    }
    if (usedVehicles.has(runsheet.vehicle_id)) fail('vehicle', `${where}: the vehicle drives two runsheets`);
    usedVehicles.add(runsheet.vehicle_id);
    const driver = live ? (live.driverId ?? undefined) : vehicle.driver_id;
    if ((runsheet.driver_id ?? undefined) !== driver)
      fail('vehicle', `${where}: driver ${runsheet.driver_id} is not the vehicle's ${driver}`);

    const shiftStart = live ? live.notBeforeMs : Date.parse(vehicle.shift_start_utc);
    const shiftEnd = Date.parse(vehicle.shift_end_utc);
    const routeStart = Date.parse(runsheet.planned_start_utc);
    const routeEnd = Date.parse(runsheet.planned_end_utc);
    if (!(routeStart >= shiftStart - tolMs))
      fail(
        'shift_start',
        `${where}: leaves at ${runsheet.planned_start_utc}, before ${live ? 'its live start' : 'its shift starts'}`,
      );

    const onBoard = new Map<string, CheckTask>();
    const load: Record<Dimension, number> = { weight_kg: 0, volume_m3: 0, items: 0 };
    const peak: Record<Dimension, number> = { weight_kg: 0, volume_m3: 0, items: 0 };
    const seenHere = new Set<string>();
    let previous: Point = live?.start ?? vehicle.start;
    let previousDeparture = routeStart;
    let distance = 0;
    // A live runsheet's loads on board count from its start; their pickups are done (not in the result).
    for (const id of live?.onBoard ?? []) {
      const task = taskById.get(id);
      if (!task) {
        fail('unknown_task', `${where}: task ${id} on board is not among the tasks given`);
        continue;
      }
      plannedBy.set(id, where);
      seenHere.add(`pickup ${id}`);
      onBoard.set(id, task);
      for (const d of DIMENSIONS) {
        load[d] += task.load[d] ?? 0;
        peak[d] = Math.max(peak[d], load[d]);
        if (load[d] > capacityOf(vehicle, d) + 1e-9)
          fail(
            'capacity',
            `${where}: ${d} on board ${load[d]} at the start, over the capacity ${capacityOf(vehicle, d)}`,
          );
      }
    }

    const stopsBound = maxStopsOf(vehicle) - (live?.stopsDone ?? 0);
    if (runsheet.stops.length > stopsBound)
      fail('max_stops', `${where}: ${runsheet.stops.length} stops left, more than ${stopsBound}`);

    for (const [s, stop] of runsheet.stops.entries()) {
      const at = `${where} stop ${s} (${stop.kind} of ${stop.task_id})`;
      const task = taskById.get(stop.task_id);
      if (!task) {
        fail('unknown_task', `${at}: no such task among the build's tasks`);
        continue;
      }
      const spec = stop.kind === 'pickup' ? task.pickup : task.dropoff;
      const point = { latitude: stop.latitude, longitude: stop.longitude };
      if (!spec.point) fail('coordinates', `${at}: the task's address has no coordinates`);
      else if (spec.point.latitude !== point.latitude || spec.point.longitude !== point.longitude)
        fail('coordinates', `${at}: planned at ${point.latitude},${point.longitude}, not at the task's address`);

      // Who carries what: pickup once, before its drop-off, by this runsheet.
      if (stop.kind === 'pickup') {
        const elsewhere = plannedBy.get(task.id);
        if (elsewhere !== undefined || seenHere.has(`pickup ${task.id}`))
          fail('planned_twice', `${at}: the task is also planned in ${elsewhere ?? 'this runsheet'}`);
        plannedBy.set(task.id, where);
        seenHere.add(`pickup ${task.id}`);
        onBoard.set(task.id, task);
        for (const d of DIMENSIONS) {
          load[d] += task.load[d] ?? 0;
          peak[d] = Math.max(peak[d], load[d]);
          if (load[d] > capacityOf(vehicle, d) + 1e-9)
            fail('capacity', `${at}: ${d} on board ${load[d]} over the capacity ${capacityOf(vehicle, d)}`);
        }
        if (!takesType(vehicle, task))
          fail('service_type', `${at}: the vehicle does not take service type ${task.serviceType ?? '(none)'}`);
      } else {
        if (seenHere.has(`dropoff ${task.id}`)) fail('planned_twice', `${at}: a second drop-off of the task`);
        seenHere.add(`dropoff ${task.id}`);
        if (!onBoard.delete(task.id)) fail('pickup_order', `${at}: dropped off without its pickup before it here`);
        else for (const d of DIMENSIONS) load[d] -= task.load[d] ?? 0;
      }

      // Time: arrival after the leg, service at max(arrival, open) within the window, departure after the service.
      const metres = plannedMetres(previous, point, travel);
      distance += metres;
      if (Math.abs(stop.distance_from_previous_m - metres) > 1 + metres * 1e-6)
        fail('distance', `${at}: distance_from_previous_m ${stop.distance_from_previous_m}, recomputed ${metres}`);
      const arrival = Date.parse(stop.arrival_utc);
      const start = Date.parse(stop.start_utc);
      const departure = Date.parse(stop.departure_utc);
      const earliest = previousDeparture + plannedSeconds(metres, travel) * 1000;
      if (!(arrival >= earliest - tolMs))
        fail('travel', `${at}: arrives ${stop.arrival_utc}, before ${new Date(earliest).toISOString()}`);
      if (!(Math.abs(start - Math.max(arrival, spec.openMs)) <= tolMs))
        fail('service_start', `${at}: service starts ${stop.start_utc}, not at max(arrival, window open)`);
      if (!(start >= spec.openMs - tolMs && start <= spec.closeMs + tolMs))
        fail('window', `${at}: service starts ${stop.start_utc}, outside its window`);
      if (!(Math.abs(departure - (start + spec.serviceS * 1000)) <= tolMs))
        fail('departure', `${at}: leaves ${stop.departure_utc}, not after ${spec.serviceS} s of service`);
      previous = point;
      previousDeparture = departure;
    }
    for (const task of onBoard.values())
      fail('pickup_order', `${where}: task ${task.id} picked up and never dropped off`);

    const tasksHere =
      runsheet.stops.filter((stop) => stop.kind === 'pickup').length +
      (live ? live.onBoard.length + live.tasksDone : 0);
    if (tasksHere > RUNSHEET_TASKS) fail('runsheet_tasks', `${where}: ${tasksHere} tasks, over ${RUNSHEET_TASKS}`);

    const end = endOf(vehicle);
    let done = previousDeparture;
    if (end) {
      const metres = plannedMetres(previous, end, travel);
      distance += metres;
      done += plannedSeconds(metres, travel) * 1000;
    }
    if (!(routeEnd >= done - tolMs))
      fail('shift_end', `${where}: planned_end_utc ${runsheet.planned_end_utc} before the route is done`);
    if (!(Math.max(done, routeEnd) <= shiftEnd + tolMs))
      fail('shift_end', `${where}: done at ${new Date(done).toISOString()}, after its shift ends`);
    if (Math.abs(runsheet.planned_distance_m - distance) > 1 + runsheet.stops.length + distance * 1e-6)
      fail('distance', `${where}: planned_distance_m ${runsheet.planned_distance_m}, recomputed ${distance}`);
    if (Math.abs(runsheet.planned_duration_s * 1000 - (routeEnd - routeStart)) > tolMs)
      fail('runsheet_figures', `${where}: planned_duration_s is not planned_end_utc − planned_start_utc`);
    for (const d of DIMENSIONS) {
      const stated = runsheet.peak_load?.[d];
      // The service rounds a peak weight to grams (3 digits): a gram of slack.
      if (stated != null && Math.abs(stated - peak[d]) > 1e-3 + 1e-6 * peak[d])
        fail('runsheet_figures', `${where}: peak_load.${d} ${stated}, recomputed ${peak[d]}`);
    }
    totalDistance += runsheet.planned_distance_m;
    totalDuration += runsheet.planned_duration_s;
  }

  // Every task once: planned, or unplanned with a code that is true of it.
  const unplannedIds = new Set<string>();
  for (const entry of result.unplanned) {
    const task = taskById.get(entry.task_id);
    const at = `unplanned ${entry.task_id} (${entry.code})`;
    if (!task) {
      fail('unknown_task', `${at}: no such task among the build's tasks`);
      continue;
    }
    if (unplannedIds.has(task.id)) fail('planned_twice', `${at}: listed twice`);
    unplannedIds.add(task.id);
    if (plannedBy.has(task.id)) fail('planned_twice', `${at}: also planned in ${plannedBy.get(task.id)}`);
    const reason = untrueReason(entry.code, task, [...vehicleById.values()], travel);
    if (reason) fail('unplanned_code', `${at}: ${reason}`);
    if (!entry.detail) fail('unplanned_code', `${at}: no detail`);
  }
  // An insertion accounts for the tasks it was asked (the live runsheets' own are planned where they are).
  const accounted = input.live ? tasks.filter((task) => input.live!.asked.has(task.id)) : tasks;
  for (const task of accounted) {
    if (!plannedBy.has(task.id) && !unplannedIds.has(task.id))
      fail('unaccounted', `task ${task.id}: neither planned nor unplanned`);
  }

  const { summary } = result;
  const expect = (name: string, stated: number, actual: number, slack = 0) => {
    if (!(Math.abs(stated - actual) <= slack)) fail('summary', `summary.${name} ${stated}, recomputed ${actual}`);
  };
  expect('tasks', summary.tasks, accounted.length);
  expect('planned', summary.planned, accounted.filter((task) => plannedBy.has(task.id)).length);
  expect('unplanned', summary.unplanned, result.unplanned.length);
  expect('vehicles_used', summary.vehicles_used, result.runsheets.length);
  expect('total_distance_m', summary.total_distance_m, totalDistance, 1 + result.runsheets.length);
  expect('total_duration_s', summary.total_duration_s, totalDuration, 1 + result.runsheets.length);
  if (summary.stopped !== 'time_limit' && summary.stopped !== 'converged')
    fail('summary', `summary.stopped ${summary.stopped}`);
  return violations;
}

/** Why an unplanned code is not true of the task (undefined: it is). */
function untrueReason(code: string, task: CheckTask, vehicles: RequestVehicle[], travel: Travel): string | undefined {
  if (!(UNPLANNED_CODES as readonly string[]).includes(code)) return 'not a code of 4.10';
  const located = Boolean(task.pickup.point && task.dropoff.point);
  if (code === 'no_coordinates') return located ? 'both its addresses have coordinates' : undefined;
  if (!located) return 'an address without coordinates is no_coordinates';
  if (code === 'capacity')
    return vehicles.some((vehicle) => fitsCapacity(vehicle, task)) ? 'a vehicle has the capacity' : undefined;
  if (code === 'service_type')
    return vehicles.some((vehicle) => takesType(vehicle, task)) ? 'a vehicle takes its service type' : undefined;
  const alone = vehicles.some((vehicle) => servesAlone(vehicle, task, travel));
  if (code === 'time_window') return alone ? 'a vehicle could serve it alone in time' : undefined;
  return alone ? undefined : 'no vehicle could serve it even alone';
}

const KG_PER = { kg: 1, g: 0.001, lb: 0.45359237 } as Record<string, number>;
const M3_PER = { m3: 1, cm3: 1e-6, ft3: 0.028316846592 } as Record<string, number>;

/** An X10/X11 task as the checker reads it, with the X23 body's default service seconds. */
export interface ListedTask {
  id: string;
  from_address: { latitude?: number; longitude?: number };
  to_address: { latitude?: number; longitude?: number };
  from_time_window: { start_time_utc: string; end_time_utc: string };
  to_time_window: { start_time_utc: string; end_time_utc: string };
  total_item_weight: number | null;
  total_weight_unit: string | null;
  total_item_volume: number | null;
  total_volume_unit: string | null;
  total_item_count: number | null;
  from_service_s?: number | null;
  to_service_s?: number | null;
}

export function checkTaskOf(
  task: ListedTask,
  serviceType: string | null,
  serviceDefaults: { pickup?: number; dropoff?: number } = {},
): CheckTask {
  const point = (address: ListedTask['from_address']) =>
    address.latitude === undefined || address.longitude === undefined
      ? null
      : { latitude: address.latitude, longitude: address.longitude };
  const stop = (
    address: ListedTask['from_address'],
    window: ListedTask['from_time_window'],
    serviceS: number,
  ): CheckStop => ({
    point: point(address),
    openMs: Date.parse(window.start_time_utc),
    closeMs: Date.parse(window.end_time_utc),
    serviceS,
  });
  return {
    id: task.id,
    pickup: stop(task.from_address, task.from_time_window, task.from_service_s ?? serviceDefaults.pickup ?? 120),
    dropoff: stop(task.to_address, task.to_time_window, task.to_service_s ?? serviceDefaults.dropoff ?? 180),
    load: {
      weight_kg: (task.total_item_weight ?? 0) * (KG_PER[task.total_weight_unit ?? 'kg'] ?? 1),
      volume_m3: (task.total_item_volume ?? 0) * (M3_PER[task.total_volume_unit ?? 'm3'] ?? 1),
      items: task.total_item_count ?? 0,
    },
    serviceType,
  };
}
