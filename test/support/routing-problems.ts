/**
 * For the solver's unit tests: seeded random pickup-and-delivery problems on a plane, a checker that recomputes every
 * constraint from a solution's stop order (independent of the solver's bookkeeping), and an exact optimum by dynamic
 * programming over (each task not picked / on board / delivered, last stop) with Pareto labels (distance, time), for
 * every split of the tasks among the vehicles: brute force, for up to 8 tasks.
 */

import { buildInstance } from '../../shared/routing/solver/instance.ts';
import type { RoutingProblem, RoutingSolution, TaskSpec, VehicleSpec } from '../../shared/routing/solver/model.ts';
import { bestInsertion, insertAt } from '../../shared/routing/solver/route.ts';
import { Solution } from '../../shared/routing/solver/solution.ts';
import { seededRandom } from './random.ts';

export interface PlaneProblem extends RoutingProblem {
  readonly points: readonly (readonly [number, number])[];
}

/** Locations on a plane (km); travel 1 km = 1 000 m, at 60 km/h (60 s). Location 0 is the depot. */
export function planeMatrix(points: readonly (readonly [number, number])[]) {
  const size = points.length;
  const distanceM = new Float64Array(size * size);
  const durationS = new Float64Array(size * size);
  for (let a = 0; a < size; a++)
    for (let b = 0; b < size; b++) {
      const e = Math.hypot(points[a]![0] - points[b]![0], points[a]![1] - points[b]![1]);
      distanceM[a * size + b] = Math.round(e * 1000);
      durationS[a * size + b] = Math.round(e * 60);
    }
  return { size, distanceM, durationS };
}

export interface RandomProblemOptions {
  tasks: number;
  vehicles: number;
  /** Width of the square (km). */
  side?: number;
  /** Window width (s); Infinity: open all day. */
  window?: number;
  capacity?: number;
  maxLoad?: number;
  objective?: 'distance' | 'vehicles';
  horizon?: number;
  service?: number;
  /** Every pickup at the depot at the shift's first instant, as a VRPTW (Solomon) instance maps to this model. */
  depotPickups?: boolean;
}

export function randomProblem(seed: number, o: RandomProblemOptions): PlaneProblem {
  const random = seededRandom(seed);
  const side = o.side ?? 20;
  const horizon = o.horizon ?? 8 * 3600;
  const points: [number, number][] = [[side / 2, side / 2]];
  const tasks: TaskSpec[] = [];
  for (let t = 0; t < o.tasks; t++) {
    const p = points.push([random() * side, random() * side]) - 1;
    const d = points.push([random() * side, random() * side]) - 1;
    const width = o.window ?? Number.POSITIVE_INFINITY;
    const open1 = Number.isFinite(width) ? Math.floor(random() * (horizon / 2)) : 0;
    const open2 = Number.isFinite(width) ? open1 + Math.floor(random() * (horizon / 3)) : 0;
    const service = o.service ?? 120;
    tasks.push({
      id: `t${t}`,
      pickup: o.depotPickups
        ? { location: 0, open: 0, close: 0, serviceS: 0 }
        : { location: p, open: open1, close: Number.isFinite(width) ? open1 + width : horizon, serviceS: service },
      dropoff: { location: d, open: open2, close: Number.isFinite(width) ? open2 + width : horizon, serviceS: service },
      load: { weight: 1 + Math.floor(random() * (o.maxLoad ?? 3)), volume: 0, items: 1 },
    });
  }
  const vehicles: VehicleSpec[] = Array.from({ length: o.vehicles }, (_, v) => ({
    id: `v${v}`,
    start: 0,
    end: 0,
    shiftStart: 0,
    shiftEnd: horizon,
    capacity: {
      weight: o.capacity ?? Number.POSITIVE_INFINITY,
      volume: Number.POSITIVE_INFINITY,
      items: Number.POSITIVE_INFINITY,
    },
    maxStops: 400,
  }));
  return { matrix: planeMatrix(points), tasks, vehicles, objective: o.objective ?? 'distance', points };
}

const TOLERANCE = 1e-6;

/**
 * Every constraint of 4.10 recomputed from the stop order and the problem alone: the errors found (none when
 * feasible) and the distance recomputed from the matrix.
 */
export function checkRouting(
  problem: RoutingProblem,
  solution: RoutingSolution,
): { errors: string[]; distanceM: number } {
  const errors: string[] = [];
  const { size, distanceM: D, durationS: T } = problem.matrix;
  const placed = new Map<number, number>();
  let total = 0;
  const usedVehicles = new Set<number>();
  for (const route of solution.routes) {
    if (usedVehicles.has(route.vehicle)) errors.push(`vehicle ${route.vehicle} has two routes`);
    usedVehicles.add(route.vehicle);
    const vehicle = problem.vehicles[route.vehicle]!;
    if (route.stops.length > vehicle.maxStops) errors.push(`vehicle ${route.vehicle}: ${route.stops.length} stops`);
    if (route.departure < vehicle.shiftStart - TOLERANCE) errors.push(`vehicle ${route.vehicle} leaves early`);
    let time = route.departure;
    let at = vehicle.start;
    let distance = 0;
    const onBoard = [0, 0, 0];
    const picked = new Set<number>();
    for (const stop of route.stops) {
      const task = problem.tasks[stop.task]!;
      const spec = stop.kind === 'pickup' ? task.pickup : task.dropoff;
      if (stop.location !== spec.location) errors.push(`task ${stop.task} ${stop.kind} at the wrong place`);
      const types = vehicle.serviceTypes;
      if (types && (task.serviceType === undefined || !types.includes(task.serviceType)))
        errors.push(`vehicle ${route.vehicle} cannot take task ${stop.task}'s type`);
      const leg = D[at * size + spec.location]!;
      distance += leg;
      if (Math.abs(leg - stop.distanceFromPreviousM) > 1e-6) errors.push(`task ${stop.task}: leg distance`);
      time += T[at * size + spec.location]!;
      if (Math.abs(time - stop.arrival) > TOLERANCE) errors.push(`task ${stop.task} ${stop.kind}: arrival`);
      time = Math.max(time, spec.open);
      if (Math.abs(time - stop.start) > TOLERANCE) errors.push(`task ${stop.task} ${stop.kind}: start`);
      if (time > spec.close + TOLERANCE) errors.push(`task ${stop.task} ${stop.kind} after its window`);
      time += spec.serviceS;
      if (Math.abs(time - stop.departure) > TOLERANCE) errors.push(`task ${stop.task} ${stop.kind}: departure`);
      at = spec.location;
      const sign = stop.kind === 'pickup' ? 1 : -1;
      if (stop.kind === 'pickup') {
        if (picked.has(stop.task) || placed.has(stop.task)) errors.push(`task ${stop.task} picked up twice`);
        picked.add(stop.task);
      } else {
        if (!picked.has(stop.task)) errors.push(`task ${stop.task} dropped off before its pickup`);
        picked.delete(stop.task);
        placed.set(stop.task, route.vehicle);
      }
      onBoard[0]! += sign * task.load.weight;
      onBoard[1]! += sign * task.load.volume;
      onBoard[2]! += sign * task.load.items;
      const cap = vehicle.capacity;
      if (onBoard[0]! > cap.weight + 1e-9 || onBoard[1]! > cap.volume + 1e-9 || onBoard[2]! > cap.items + 1e-9)
        errors.push(`vehicle ${route.vehicle} over capacity at task ${stop.task}`);
    }
    if (picked.size > 0) errors.push(`vehicle ${route.vehicle} keeps ${[...picked].join(', ')} on board`);
    if (vehicle.end !== null) {
      distance += D[at * size + vehicle.end]!;
      time += T[at * size + vehicle.end]!;
    }
    if (time > vehicle.shiftEnd + TOLERANCE) errors.push(`vehicle ${route.vehicle} back after its shift`);
    if (Math.abs(time - route.arrival) > TOLERANCE) errors.push(`vehicle ${route.vehicle}: arrival`);
    if (Math.abs(distance - route.distanceM) > 1e-6) errors.push(`vehicle ${route.vehicle}: distance`);
    total += distance;
  }
  const unplanned = new Set(solution.unplanned.map((u) => u.task));
  for (let t = 0; t < problem.tasks.length; t++) {
    if (placed.has(t) && unplanned.has(t)) errors.push(`task ${t} both planned and unplanned`);
    if (!placed.has(t) && !unplanned.has(t)) errors.push(`task ${t} missing`);
  }
  if (Math.abs(total - solution.distanceM) > 1e-6) errors.push('total distance');
  return { errors, distanceM: total };
}

/** The least distance of one vehicle serving exactly `tasks` (Infinity when it cannot), by labelled DP. */
function bestSingle(problem: RoutingProblem, v: number, tasks: readonly number[]): number {
  if (tasks.length === 0) return 0;
  const vehicle = problem.vehicles[v]!;
  const { size, distanceM: D, durationS: T } = problem.matrix;
  const n = tasks.length;
  const pow = tasks.map((_, i) => 3 ** i);
  const full = pow.reduce((a, p) => a + 2 * p, 0);
  // Labels: key state * (2n+1) + last (0 = start, 1 + 2i pickup of i, 2 + 2i drop-off of i) → [distance, time][].
  type Label = [number, number];
  let layer = new Map<number, Label[]>([[0, [[0, vehicle.shiftStart]]]]);
  const locOf = (last: number) => {
    if (last === 0) return vehicle.start;
    const task = problem.tasks[tasks[(last - 1) >> 1]!]!;
    return (last - 1) % 2 === 0 ? task.pickup.location : task.dropoff.location;
  };
  const add = (map: Map<number, Label[]>, key: number, label: Label) => {
    const list = map.get(key) ?? [];
    if (list.some(([d, t]) => d <= label[0] && t <= label[1])) return;
    const kept = list.filter(([d, t]) => !(label[0] <= d && label[1] <= t));
    kept.push(label);
    map.set(key, kept);
  };
  for (let step = 0; step < 2 * n; step++) {
    const next = new Map<number, Label[]>();
    for (const [key, labels] of layer) {
      const state = Math.floor(key / (2 * n + 1));
      const last = key % (2 * n + 1);
      const from = locOf(last);
      const load = [0, 0, 0];
      for (let i = 0; i < n; i++)
        if (Math.floor(state / pow[i]!) % 3 === 1) {
          const l = problem.tasks[tasks[i]!]!.load;
          load[0]! += l.weight;
          load[1]! += l.volume;
          load[2]! += l.items;
        }
      for (let i = 0; i < n; i++) {
        const s = Math.floor(state / pow[i]!) % 3;
        if (s === 2) continue;
        const task = problem.tasks[tasks[i]!]!;
        const spec = s === 0 ? task.pickup : task.dropoff;
        if (s === 0) {
          const c = vehicle.capacity;
          if (
            load[0]! + task.load.weight > c.weight ||
            load[1]! + task.load.volume > c.volume ||
            load[2]! + task.load.items > c.items
          )
            continue;
        }
        const to = spec.location;
        for (const [d, t] of labels) {
          const start = Math.max(spec.open, t + T[from * size + to]!);
          if (start > spec.close) continue;
          add(next, (state + pow[i]!) * (2 * n + 1) + 1 + 2 * i + s, [d + D[from * size + to]!, start + spec.serviceS]);
        }
      }
    }
    layer = next;
  }
  let best = Number.POSITIVE_INFINITY;
  for (const [key, labels] of layer) {
    if (Math.floor(key / (2 * n + 1)) !== full) continue;
    const from = locOf(key % (2 * n + 1));
    for (const [d, t] of labels) {
      const back = vehicle.end === null ? 0 : T[from * size + vehicle.end]!;
      if (t + back > vehicle.shiftEnd) continue;
      best = Math.min(best, d + (vehicle.end === null ? 0 : D[from * size + vehicle.end]!));
    }
  }
  return best;
}

/**
 * The optimum with every task planned: least distance (objective `distance`), or fewest vehicles then least
 * distance (`vehicles`); Infinity when no plan takes every task. Enumerates every split of the tasks among vehicles.
 */
export function bruteForce(problem: RoutingProblem): { distanceM: number; vehicles: number } {
  const n = problem.tasks.length;
  const m = problem.vehicles.length;
  const memo = new Map<string, number>();
  const single = (v: number, tasks: number[]) => {
    const key = `${v}:${tasks.join(',')}`;
    let value = memo.get(key);
    if (value === undefined) {
      value = bestSingle(problem, v, tasks);
      memo.set(key, value);
    }
    return value;
  };
  let best = { distanceM: Number.POSITIVE_INFINITY, vehicles: Number.POSITIVE_INFINITY };
  const assign = new Array<number>(n).fill(0);
  const total = m ** n;
  for (let code = 0; code < total; code++) {
    let c = code;
    for (let t = 0; t < n; t++) {
      assign[t] = c % m;
      c = Math.floor(c / m);
    }
    let distance = 0;
    let used = 0;
    for (let v = 0; v < m && distance < Number.POSITIVE_INFINITY; v++) {
      const mine = assign.flatMap((a, t) => (a === v ? [t] : []));
      if (mine.length > 0) used++;
      distance += single(v, mine);
    }
    if (distance === Number.POSITIVE_INFINITY) continue;
    const better =
      problem.objective === 'vehicles'
        ? used < best.vehicles || (used === best.vehicles && distance < best.distanceM)
        : distance < best.distanceM;
    if (better) best = { distanceM: distance, vehicles: used };
  }
  return best;
}

/**
 * A generated day in one city (a 40 km square, times in seconds from 06:00): pickups at a few dozen hubs (shops,
 * warehouses), drop-offs clustered around residential centres, pickup windows of 1–3 h through the day and drop-off
 * windows of 2–4 h opening with them, 2–5 min of service, vehicles at four depots with 9–10 h shifts and 600 kg / 60
 * items of room. Equal coordinates share one location, as the worker builds them.
 */
export function cityDay(
  seed: number,
  tasks: number,
  vehicles: number,
  objective: 'distance' | 'vehicles' = 'distance',
): PlaneProblem {
  const random = seededRandom(seed);
  const side = 40;
  const gauss = () => Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
  const clamp = (x: number) => Math.min(side, Math.max(0, x));
  const centres = Array.from({ length: 12 }, () => [4 + random() * (side - 8), 4 + random() * (side - 8)] as const);
  const near = (c: readonly [number, number], spread: number) =>
    [clamp(c[0] + gauss() * spread), clamp(c[1] + gauss() * spread)] as [number, number];
  const hubs = Array.from({ length: Math.max(4, Math.round(tasks / 40)) }, () =>
    near(centres[Math.floor(random() * centres.length)]!, 3),
  );
  const depots = Array.from({ length: 4 }, () => near(centres[Math.floor(random() * centres.length)]!, 2));
  const points: [number, number][] = [];
  const index = new Map<string, number>();
  const at = (p: readonly [number, number]) => {
    const key = `${p[0]},${p[1]}`;
    let i = index.get(key);
    if (i === undefined) {
      i = points.push([p[0], p[1]]) - 1;
      index.set(key, i);
    }
    return i;
  };
  const depotAt = depots.map(at);
  const day = 14 * 3600;
  const list: TaskSpec[] = [];
  for (let t = 0; t < tasks; t++) {
    const hub = hubs[Math.floor(random() * hubs.length)]!;
    const home = near(centres[Math.floor(random() * centres.length)]!, 2.5);
    const open1 = Math.floor(random() * (day - 6 * 3600));
    const width1 = 3600 + Math.floor(random() * 2) * 3600 * (random() < 0.3 ? 2 : 1);
    const open2 = open1 + Math.floor(random() * 3600);
    const width2 = 2 * 3600 + Math.floor(random() * 3) * 3600;
    list.push({
      id: `t${t}`,
      pickup: { location: at(hub), open: open1, close: open1 + width1, serviceS: 120 },
      dropoff: {
        location: at(home),
        open: open2,
        close: open2 + width2,
        serviceS: 180 + Math.floor(random() * 3) * 60,
      },
      load: { weight: 1 + Math.floor(random() * 20), volume: 0, items: 1 + Math.floor(random() * 3) },
    });
  }
  const fleet: VehicleSpec[] = Array.from({ length: vehicles }, (_, v) => {
    const start = Math.floor(random() * 4) * 3600;
    return {
      id: `v${v}`,
      start: depotAt[v % depotAt.length]!,
      end: depotAt[v % depotAt.length]!,
      shiftStart: start,
      shiftEnd: start + 9 * 3600 + Math.floor(random() * 2) * 3600,
      capacity: { weight: 600, volume: Number.POSITIVE_INFINITY, items: 60 },
      maxStops: 400,
    };
  });
  // 30 km/h in the city: 1 km = 120 s.
  const matrix = planeMatrix(points);
  for (let i = 0; i < matrix.durationS.length; i++) matrix.durationS[i] = matrix.durationS[i]! * 2;
  return { matrix, tasks: list, vehicles: fleet, objective, points };
}

/**
 * The distance of vehicle v driving `order` (node 2t: task t's pickup, 2t + 1: its drop-off), recomputed from the
 * problem's own specs; Infinity when any constraint breaks. The solver's unit tests' brute force judges moves by it.
 */
export function replay(problem: RoutingProblem, v: number, order: readonly number[]): number {
  const vehicle = problem.vehicles[v]!;
  const { size, distanceM: D, durationS: T } = problem.matrix;
  let at = vehicle.start;
  let time = vehicle.shiftStart;
  let distance = 0;
  let weight = 0;
  let items = 0;
  const picked = new Set<number>();
  if (order.length > vehicle.maxStops) return Number.POSITIVE_INFINITY;
  if (order.length === 0) return 0;
  for (const node of order) {
    const task = problem.tasks[node >> 1]!;
    const spec = node & 1 ? task.dropoff : task.pickup;
    if (node & 1 && !picked.has(node >> 1)) return Number.POSITIVE_INFINITY;
    picked.add(node >> 1);
    distance += D[at * size + spec.location]!;
    time = Math.max(spec.open, time + T[at * size + spec.location]!);
    if (time > spec.close + 1e-6) return Number.POSITIVE_INFINITY;
    time += spec.serviceS;
    const sign = node & 1 ? -1 : 1;
    weight += sign * task.load.weight;
    items += sign * task.load.items;
    if (weight > vehicle.capacity.weight + 1e-9 || items > vehicle.capacity.items + 1e-9)
      return Number.POSITIVE_INFINITY;
    at = spec.location;
  }
  if (vehicle.end !== null) {
    distance += D[at * size + vehicle.end]!;
    time += T[at * size + vehicle.end]!;
  }
  return time > vehicle.shiftEnd + 1e-6 ? Number.POSITIVE_INFINITY : distance;
}

/** A first solution spread over the vehicles: each task at its cheapest place, a new vehicle at half price. */
export function spreadSolution(problem: RoutingProblem) {
  const inst = buildInstance(problem);
  const solution = new Solution(inst);
  const out = { cost: 0, i: 0, j: 0 };
  for (let t = 0; t < problem.tasks.length; t++) {
    let best = { cost: Number.POSITIVE_INFINITY, r: -1, i: 0, j: 0 };
    for (let r = 0; r < problem.vehicles.length; r++) {
      bestInsertion(inst, solution.routes[r]!, t, 0, out);
      const cost = solution.routes[r]!.nodes.length === 0 ? out.cost * 0.5 : out.cost;
      if (cost < best.cost) best = { cost, r, i: out.i, j: out.j };
    }
    if (best.r < 0) continue;
    insertAt(solution.routes[best.r]!, t, best.i, best.j);
    if (!solution.refresh(best.r)) throw new Error(`task ${t} put where its route does not replay`);
  }
  return { inst, solution };
}
