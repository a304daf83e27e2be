/**
 * PLACEHOLDER until the solver helper's SOLVER v1 lands on main (it replaces this file whole): a plain cheapest
 * insertion, feasible by the model of contract 4.10, so that the service around the solver can be run and tested.
 */
import type {
  PlannedRoute,
  PlannedStop,
  RoutingProblem,
  RoutingSolution,
  SolveOptions,
  UnplannedCode,
} from './model.ts';

export type * from './model.ts';

type Visit = { task: number; kind: 'pickup' | 'dropoff' };

function evaluate(problem: RoutingProblem, v: number, visits: Visit[]): PlannedRoute | undefined {
  const { matrix, tasks } = problem;
  const vehicle = problem.vehicles[v]!;
  const n = matrix.size;
  if (visits.length > vehicle.maxStops) return undefined;
  let at = vehicle.start;
  let time = vehicle.shiftStart;
  let distance = 0;
  const load = { weight: 0, volume: 0, items: 0 };
  const peak = { weight: 0, volume: 0, items: 0 };
  const stops: PlannedStop[] = [];
  for (const visit of visits) {
    const task = tasks[visit.task]!;
    const spec = visit.kind === 'pickup' ? task.pickup : task.dropoff;
    const d = matrix.distanceM[at * n + spec.location]!;
    const arrival = time + matrix.durationS[at * n + spec.location]!;
    const start = Math.max(arrival, spec.open);
    if (start > spec.close) return undefined;
    const sign = visit.kind === 'pickup' ? 1 : -1;
    load.weight += sign * task.load.weight;
    load.volume += sign * task.load.volume;
    load.items += sign * task.load.items;
    if (
      load.weight > vehicle.capacity.weight + 1e-9 ||
      load.volume > vehicle.capacity.volume + 1e-9 ||
      load.items > vehicle.capacity.items
    )
      return undefined;
    peak.weight = Math.max(peak.weight, load.weight);
    peak.volume = Math.max(peak.volume, load.volume);
    peak.items = Math.max(peak.items, load.items);
    distance += d;
    time = start + spec.serviceS;
    stops.push({ ...visit, location: spec.location, arrival, start, departure: time, distanceFromPreviousM: d });
    at = spec.location;
  }
  let arrival = time;
  if (vehicle.end !== null) {
    distance += matrix.distanceM[at * n + vehicle.end]!;
    arrival = time + matrix.durationS[at * n + vehicle.end]!;
  }
  if (arrival > vehicle.shiftEnd) return undefined;
  return {
    vehicle: v,
    stops,
    departure: vehicle.shiftStart,
    arrival,
    distanceM: distance,
    durationS: arrival - vehicle.shiftStart,
    peakLoad: peak,
  };
}

const takes = (problem: RoutingProblem, v: number, t: number) => {
  const types = problem.vehicles[v]!.serviceTypes;
  const type = problem.tasks[t]!.serviceType;
  return !types || !type || types.includes(type);
};

export function solve(problem: RoutingProblem, _options: SolveOptions): RoutingSolution {
  const plans: Visit[][] = problem.vehicles.map(() => []);
  const routes: (PlannedRoute | undefined)[] = problem.vehicles.map(() => undefined);
  const unplanned: { task: number; code: UnplannedCode }[] = [];
  problem.tasks.forEach((task, t) => {
    let best: { v: number; visits: Visit[]; route: PlannedRoute; cost: number } | undefined;
    problem.vehicles.forEach((_, v) => {
      if (!takes(problem, v, t)) return;
      const base = plans[v]!;
      const before = routes[v]?.distanceM ?? 0;
      for (let i = 0; i <= base.length; i++)
        for (let j = i; j <= base.length; j++) {
          const visits = [...base.slice(0, i), { task: t, kind: 'pickup' as const }, ...base.slice(i, j)];
          visits.push({ task: t, kind: 'dropoff' }, ...base.slice(j));
          const route = evaluate(problem, v, visits);
          if (!route) continue;
          const cost = route.distanceM - before;
          if (!best || cost < best.cost) best = { v, visits, route, cost };
        }
    });
    if (best) {
      plans[best.v] = best.visits;
      routes[best.v] = best.route;
      return;
    }
    const vs = problem.vehicles.map((_, v) => v);
    const typed = vs.filter((v) => takes(problem, v, t));
    const cap = (v: number) => {
      const c = problem.vehicles[v]!.capacity;
      return task.load.weight <= c.weight && task.load.volume <= c.volume && task.load.items <= c.items;
    };
    const code: UnplannedCode =
      typed.length === 0
        ? 'service_type'
        : !typed.some(cap)
          ? 'capacity'
          : typed.some(
                (v) =>
                  cap(v) &&
                  evaluate(problem, v, [
                    { task: t, kind: 'pickup' },
                    { task: t, kind: 'dropoff' },
                  ]),
              )
            ? 'not_enough_vehicles'
            : 'time_window';
    unplanned.push({ task: t, code });
  });
  const used = routes.filter((r): r is PlannedRoute => r !== undefined && r.stops.length > 0);
  return {
    routes: used,
    unplanned,
    distanceM: used.reduce((s, r) => s + r.distanceM, 0),
    durationS: used.reduce((s, r) => s + r.durationS, 0),
    stopped: 'converged',
    iterations: 1,
  };
}
