/**
 * The solver handed a day already under way (contract 4.11, X30): the same search, another starting state. Three
 * inputs of the problem say it, and this module turns them into what the search already knows, so that the search
 * itself (its insertion, removals, local search) is the one X23 runs:
 * - a vehicle starts where and when it is (`VehicleSpec.start`, `shiftStart`: the driver's last position at the later
 *   of its fix's time and now), which the model held already;
 * - a task pinned to vehicles (`TaskSpec.vehicles`: a live runsheet's own task) may go on those alone (instance.ts);
 * - a task on board (`TaskSpec.onBoard`: picked up, not yet dropped off) is given a pickup of its own at its vehicle's
 *   start, at the start's time, taking no time, pinned to that vehicle: the load is on board from the start, the
 *   drop-off is by that vehicle, and no other stop can come before it (its window is the start's instant). The
 *   solution names no such pickup (`withoutOnBoardPickups`);
 * - `problem.initial` (the live routes' remaining stops in order) is the first solution (`warmStart`) instead of
 *   regret insertion from empty routes; a route that ends with the tasks it began with keeps its order
 *   (`keepUnchangedOrder`): the search may reorder a route it adds to, never one it leaves alone.
 */
import type { Instance } from './instance.ts';
import type { InitialRoute, RoutingProblem, RoutingSolution, TaskSpec } from './model.ts';
import { Solution } from './solution.ts';

/**
 * The problem with every on-board task's pickup made a pickup at its vehicle's start, the starting routes so, and what
 * a starting route misses already from its start relaxed to what it keeps (`relaxLate`).
 */
export function withStartingState(problem: RoutingProblem): RoutingProblem {
  return problem.initial ? relaxLate(withOnBoardPickups(problem)) : withOnBoardPickups(problem);
}

function withOnBoardPickups(problem: RoutingProblem): RoutingProblem {
  if (!problem.tasks.some((task) => task.onBoard !== undefined)) return problem;
  const tasks: TaskSpec[] = problem.tasks.map((task) => {
    if (task.onBoard === undefined) return task;
    const vehicle = problem.vehicles[task.onBoard];
    if (!vehicle) throw new Error(`task ${task.id} is on board vehicle ${task.onBoard}, which the problem has not`);
    return {
      ...task,
      pickup: { location: vehicle.start, open: vehicle.shiftStart, close: vehicle.shiftStart, serviceS: 0 },
      vehicles: [task.onBoard],
    };
  });
  const initial = problem.initial?.map((route) => {
    const carried = route.stops.filter((stop) => problem.tasks[stop.task]?.onBoard === route.vehicle);
    const named = new Set(carried.map((stop) => stop.task));
    // The on-board tasks' pickups first (each once), then the route as given less any pickup of theirs.
    return {
      vehicle: route.vehicle,
      stops: [
        ...[...named].map((task) => ({ task, kind: 'pickup' as const })),
        ...route.stops.filter((stop) => !(named.has(stop.task) && stop.kind === 'pickup')),
      ],
    };
  });
  return { ...problem, tasks, ...(initial ? { initial } : {}) };
}

/**
 * A day under way can be late already: a driver behind plan reaches a stop of their route after its window closes,
 * back after the shift's end, or (a hand-made runsheet) carries more than the vehicle's room. Driven in its starting
 * order from the vehicle's start, each window a starting route misses closes when the route reaches it, its vehicle's
 * shift ends when the route does, and its room is the route's peak load: the starting route is feasible, and no
 * insertion may make any of its stops later than it is already (nor a late one later still).
 */
function relaxLate(problem: RoutingProblem): RoutingProblem {
  const { size, durationS } = problem.matrix;
  const tasks = problem.tasks.slice();
  const vehicles = problem.vehicles.slice();
  for (const route of problem.initial ?? []) {
    const vehicle = vehicles[route.vehicle];
    if (!vehicle || route.stops.length === 0) continue;
    let at = vehicle.start;
    let time = vehicle.shiftStart;
    const load = [0, 0, 0];
    const peak = [0, 0, 0];
    for (const stop of route.stops) {
      const task = tasks[stop.task];
      if (!task) continue;
      const spec = task[stop.kind];
      time = Math.max(spec.open, time + durationS[at * size + spec.location]!);
      if (time > spec.close) tasks[stop.task] = { ...task, [stop.kind]: { ...spec, close: time } };
      time += spec.serviceS;
      const sign = stop.kind === 'pickup' ? 1 : -1;
      const q = [task.load.weight, task.load.volume, task.load.items];
      for (let d = 0; d < 3; d++) {
        load[d]! += sign * q[d]!;
        peak[d] = Math.max(peak[d]!, load[d]!);
      }
      at = spec.location;
    }
    if (vehicle.end !== null) time += durationS[at * size + vehicle.end]!;
    const { capacity } = vehicle;
    vehicles[route.vehicle] = {
      ...vehicle,
      shiftEnd: Math.max(vehicle.shiftEnd, time),
      capacity: {
        weight: Math.max(capacity.weight, peak[0]!),
        volume: Math.max(capacity.volume, peak[1]!),
        items: Math.max(capacity.items, peak[2]!),
      },
    };
  }
  return { ...problem, tasks, vehicles };
}

const nodesOf = (route: InitialRoute) => route.stops.map((stop) => 2 * stop.task + (stop.kind === 'dropoff' ? 1 : 0));

/**
 * The first solution: the starting routes as given. A task named twice, or a route on a vehicle that is not the
 * problem's, is the caller's mistake: thrown. A route that breaks a window from its start is kept as it is (the
 * caller relaxes what is late already, shared/routing/live.ts), so that the search still begins from it.
 */
export function warmStart(inst: Instance, initial: readonly InitialRoute[]): Solution {
  const solution = new Solution(inst);
  const seen = new Uint8Array(2 * inst.tasks);
  for (const route of initial) {
    if (route.vehicle < 0 || route.vehicle >= inst.vehicles)
      throw new Error(`a starting route names vehicle ${route.vehicle}, which the problem has not`);
    const nodes = nodesOf(route);
    for (const node of nodes) {
      if (node < 0 || node >= 2 * inst.tasks || seen[node] === 1)
        throw new Error(`a starting route names task ${node >> 1} out of range or twice`);
      seen[node] = 1;
    }
    const target = solution.routes[route.vehicle]!;
    target.nodes.push(...nodes);
    solution.refresh(route.vehicle);
  }
  for (let t = 0; t < inst.tasks; t++)
    if (seen[2 * t] !== seen[2 * t + 1]) throw new Error(`a starting route names one stop of task ${t} alone`);
  solution.dirty.fill(0);
  return solution;
}

/** Puts back the starting order of each route that holds the same tasks it began with (and is feasible in it). */
export function keepUnchangedOrder(best: Solution, initial: readonly InitialRoute[]): void {
  for (const route of initial) {
    const nodes = nodesOf(route);
    const now = best.routes[route.vehicle]!;
    if (now.nodes.length !== nodes.length) continue;
    const held = new Set(now.nodes);
    if (!nodes.every((node) => held.has(node))) continue;
    if (nodes.every((node, k) => now.nodes[k] === node)) continue;
    const searched = now.nodes.slice();
    now.nodes = nodes;
    if (!best.refresh(route.vehicle)) {
      // Infeasible in its own order (it was late before the search): the search's order stands.
      now.nodes = searched;
      best.refresh(route.vehicle);
    }
  }
}

/** The solution as the caller asked it: no stop for the pickup of a task that was on board already. */
export function withoutOnBoardPickups(problem: RoutingProblem, solution: RoutingSolution): RoutingSolution {
  if (!problem.tasks.some((task) => task.onBoard !== undefined)) return solution;
  return {
    ...solution,
    routes: solution.routes.map((route) => ({
      ...route,
      stops: route.stops.filter((stop) => !(stop.kind === 'pickup' && problem.tasks[stop.task]!.onBoard !== undefined)),
    })),
  };
}
