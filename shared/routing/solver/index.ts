/**
 * Route planning's solver (contract 4.10): `solve(problem, options)` plans as many tasks as it can and, among those
 * plans, the least total distance (or, for objective `vehicles`, the fewest vehicles first). Pure: no I/O, no clock but
 * `options.now`, every random choice from `options.seed`, so a seed and an iteration budget replay a run exactly.
 * See docs/routing.md, "The solver", for the algorithm and the constraint checks.
 */
import { buildInstance, type Instance } from './instance.ts';
import type { Load, PlannedRoute, PlannedStop, RoutingProblem, RoutingSolution, SolveOptions } from './model.ts';
import { Random } from './random.ts';
import { search } from './search.ts';
import type { Solution } from './solution.ts';
import { keepUnchangedOrder, warmStart, withoutOnBoardPickups, withStartingState } from './starting-state.ts';

export type * from './model.ts';

export function solve(problem: RoutingProblem, options: SolveOptions): RoutingSolution {
  // A day under way (X30): on-board tasks and starting routes in the search's own terms (starting-state.ts).
  const started = withStartingState(problem);
  const inst = buildInstance(started);
  const random = new Random(options.seed);
  const initial = started.initial ? warmStart(inst, started.initial) : undefined;
  const { best, iterations, stopped } = search(inst, started.objective, options, random, initial);
  if (started.initial) keepUnchangedOrder(best, started.initial);
  return withoutOnBoardPickups(started, solutionOf(inst, best, iterations, stopped));
}

function solutionOf(
  inst: Instance,
  best: Solution,
  iterations: number,
  stopped: RoutingSolution['stopped'],
): RoutingSolution {
  const { dist, dur, size, loc, open, service, load } = inst;
  const routes: PlannedRoute[] = [];
  let distanceM = 0;
  let durationS = 0;
  for (const route of best.routes) {
    const { nodes } = route;
    if (nodes.length === 0) continue;
    const v = route.vehicle;
    const start = inst.vStart[v]!;
    const end = inst.vEnd[v]!;
    const departure = latestDeparture(inst, nodes, v);
    let time = departure;
    let prev = start;
    let distance = 0;
    const peak = [0, 0, 0];
    const onBoard = [0, 0, 0];
    const stops: PlannedStop[] = [];
    for (const node of nodes) {
      const l = loc[node]!;
      const leg = dist[prev * size + l]!;
      const arrival = time + dur[prev * size + l]!;
      const begin = Math.max(arrival, open[node]!);
      const task = node >> 1;
      const sign = node & 1 ? -1 : 1;
      for (let d = 0; d < 3; d++) {
        onBoard[d]! += sign * load[3 * task + d]!;
        peak[d] = Math.max(peak[d]!, onBoard[d]!);
      }
      stops.push({
        task,
        kind: node & 1 ? 'dropoff' : 'pickup',
        location: l,
        arrival,
        start: begin,
        departure: begin + service[node]!,
        distanceFromPreviousM: leg,
      });
      distance += leg;
      time = begin + service[node]!;
      prev = l;
    }
    let arrival = time;
    if (end >= 0) {
      distance += dist[prev * size + end]!;
      arrival = time + dur[prev * size + end]!;
    }
    const peakLoad: Load = { weight: peak[0]!, volume: peak[1]!, items: peak[2]! };
    routes.push({
      vehicle: v,
      stops,
      departure,
      arrival,
      distanceM: distance,
      durationS: arrival - departure,
      peakLoad,
    });
    distanceM += distance;
    durationS += arrival - departure;
  }
  const unplanned: RoutingSolution['unplanned'][number][] = [];
  for (let t = 0; t < inst.tasks; t++) {
    if (best.taskRoute[t]! >= 0) continue;
    const missed = inst.missed[t];
    unplanned.push({ task: t, code: inst.impossible[t] ?? 'not_enough_vehicles', ...(missed ? { missed } : {}) });
  }
  return { routes, unplanned, distanceM, durationS, stopped, iterations };
}

/**
 * Contract 4.10's `planned_start_utc`: the latest departure that delays none of the route's stops past its window and
 * the route's end not at all, so a vehicle does not leave early to wait (Savelsbergh's forward time slack, bounded by
 * the waiting on the way). From the schedule that leaves at the shift's start: the waiting up to a stop (`waited`) is
 * delay a later departure absorbs there; a stop before the last wait starts later by the delay not yet absorbed, which
 * its window's close bounds (close - start + waited), and no stop after the last wait moves.
 */
function latestDeparture(inst: Instance, nodes: readonly number[], v: number): number {
  const { dur, size, loc, open, close, service } = inst;
  let time = inst.shiftStart[v]!;
  let prev = inst.vStart[v]!;
  let waited = 0;
  let slack = Number.POSITIVE_INFINITY;
  for (const node of nodes) {
    const arrival = time + dur[prev * size + loc[node]!]!;
    const begin = Math.max(arrival, open[node]!);
    waited += begin - arrival;
    slack = Math.min(slack, waited + Math.max(0, close[node]! - begin));
    time = begin + service[node]!;
    prev = loc[node]!;
  }
  return inst.shiftStart[v]! + Math.max(0, Math.min(slack, waited));
}
