/**
 * The route-planning solver run directly (no service) on the Solomon and Li & Lim instances of `../shared/vrp/`,
 * mapped as the service maps them (1 unit = 1 km at 60 km/h: metres ×1000, seconds ×60; Solomon's customers as tasks
 * picked up at the depot at the shift's first instant). Each answer is checked here, independently of the solver
 * (times, windows, loads, shifts recomputed from the stop order), and its distance recomputed from the instance's own
 * coordinates. Prints per instance: distance, vehicles, gap to the best known, seconds, VROOM's gap; then the means.
 *
 * `npx tsx bench/routing-solver.ts [--limit=10] [--only=C101,lr101] [--seed=1] [--objective=distance]`
 */
import { cpus, loadavg } from 'node:os';
import type { RoutingProblem, RoutingSolution, TaskSpec, VehicleSpec } from '#shared/routing/solver/index';
import { solve } from '#shared/routing/solver/index';
import { loadVrpInstances, type VrpInstance } from './vrp/instances.ts';

const UNLIMITED = Number.POSITIVE_INFINITY;
const TOLERANCE = 1e-6;

/** The instance as the service would hand it to the solver. */
export function problemOf(instance: VrpInstance, objective: 'distance' | 'vehicles' = 'distance'): RoutingProblem {
  const { nodes } = instance;
  const size = nodes.length;
  const distanceM = new Float64Array(size * size);
  const durationS = new Float64Array(size * size);
  for (let a = 0; a < size; a++)
    for (let b = 0; b < size; b++) {
      const e = Math.hypot(nodes[a]!.x - nodes[b]!.x, nodes[a]!.y - nodes[b]!.y);
      distanceM[a * size + b] = e * 1000;
      durationS[a * size + b] = e * 60;
    }
  const depot = nodes[0]!;
  const stop = (i: number) => ({
    location: i,
    open: nodes[i]!.ready * 60,
    close: nodes[i]!.due * 60,
    serviceS: nodes[i]!.service * 60,
  });
  const tasks: TaskSpec[] =
    instance.family === 'solomon'
      ? nodes.slice(1).map((node, k) => ({
          id: `c${node.id}`,
          pickup: { location: 0, open: depot.ready * 60, close: depot.ready * 60, serviceS: 0 },
          dropoff: stop(k + 1),
          load: { weight: node.demand, volume: 0, items: 0 },
        }))
      : instance.pairs.map(({ pickup, delivery }) => ({
          id: `p${nodes[pickup]!.id}`,
          pickup: stop(pickup),
          dropoff: stop(delivery),
          load: { weight: nodes[pickup]!.demand, volume: 0, items: 0 },
        }));
  const vehicles: VehicleSpec[] = Array.from({ length: instance.vehicles }, (_, i) => ({
    id: `v${i + 1}`,
    start: 0,
    end: 0,
    shiftStart: depot.ready * 60,
    shiftEnd: depot.due * 60,
    capacity: { weight: instance.capacity, volume: UNLIMITED, items: UNLIMITED },
    maxStops: 400,
  }));
  return { matrix: { size, distanceM, durationS }, tasks, vehicles, objective };
}

/**
 * Checks every constraint from the stop order alone; returns the problems found and the distance in instance units
 * recomputed from the coordinates.
 */
export function checkSolution(
  instance: VrpInstance,
  problem: RoutingProblem,
  solution: RoutingSolution,
): { errors: string[]; distance: number; vehicles: number } {
  const errors: string[] = [];
  const { nodes } = instance;
  const units = (a: number, b: number) => Math.hypot(nodes[a]!.x - nodes[b]!.x, nodes[a]!.y - nodes[b]!.y);
  const seen = new Map<number, number>();
  let distance = 0;
  for (const route of solution.routes) {
    const vehicle = problem.vehicles[route.vehicle]!;
    let time = vehicle.shiftStart;
    if (route.departure < vehicle.shiftStart - TOLERANCE) errors.push(`v${route.vehicle} leaves before its shift`);
    time = Math.max(time, route.departure);
    let at = vehicle.start;
    let weight = 0;
    const picked = new Set<number>();
    for (const stop of route.stops) {
      const task = problem.tasks[stop.task]!;
      const spec = stop.kind === 'pickup' ? task.pickup : task.dropoff;
      time += units(at, spec.location) * 60;
      distance += units(at, spec.location);
      time = Math.max(time, spec.open);
      if (time > spec.close + TOLERANCE)
        errors.push(`task ${stop.task} ${stop.kind} starts ${time} after ${spec.close}`);
      if (Math.abs(time - stop.start) > TOLERANCE)
        errors.push(`task ${stop.task} ${stop.kind}: start ${stop.start} ≠ ${time}`);
      time += spec.serviceS;
      at = spec.location;
      if (stop.kind === 'pickup') {
        if (picked.has(stop.task) || seen.has(stop.task)) errors.push(`task ${stop.task} picked up twice`);
        picked.add(stop.task);
        weight += task.load.weight;
      } else {
        if (!picked.has(stop.task)) errors.push(`task ${stop.task} dropped before its pickup`);
        picked.delete(stop.task);
        seen.set(stop.task, route.vehicle);
        weight -= task.load.weight;
      }
      if (weight > vehicle.capacity.weight + TOLERANCE) errors.push(`v${route.vehicle} carries ${weight}`);
    }
    if (picked.size > 0) errors.push(`v${route.vehicle} never drops ${[...picked].join(',')}`);
    if (vehicle.end !== null) {
      time += units(at, vehicle.end) * 60;
      distance += units(at, vehicle.end);
    }
    if (time > vehicle.shiftEnd + TOLERANCE) errors.push(`v${route.vehicle} back at ${time} after ${vehicle.shiftEnd}`);
  }
  const unplanned = new Set(solution.unplanned.map((u) => u.task));
  for (let t = 0; t < problem.tasks.length; t++)
    if (!seen.has(t) && !unplanned.has(t)) errors.push(`task ${t} neither planned nor unplanned`);
  if (unplanned.size > 0) errors.push(`${unplanned.size} unplanned`);
  if (Math.abs(distance * 1000 - solution.distanceM) > 1e-3 * Math.max(1, distance))
    errors.push(`distance ${solution.distanceM} m ≠ ${distance * 1000} m`);
  return { errors, distance, vehicles: solution.routes.length };
}

function pct(x: number): string {
  return `${x >= 0 ? ' ' : ''}${x.toFixed(2)} %`;
}

export function benchRoutingSolver(
  args: { limitS?: number; only?: string[]; seed?: number; objective?: 'distance' | 'vehicles' } = {},
): void {
  const limitS = args.limitS ?? 10;
  const instances = loadVrpInstances(args.only ? { names: args.only } : {});
  const load = () => loadavg()[0]!.toFixed(2);
  console.log(
    `\n## Route-planning solver, direct (${limitS} s per instance, seed ${args.seed ?? 1}, ${cpus().length} cores, load ${load()} at start)`,
  );
  console.log('instance  distance   veh  best known   gap        s      iterations  VROOM gap  check');
  const gaps: Record<string, { ours: number[]; vroom: number[] }> = {
    solomon: { ours: [], vroom: [] },
    lilim: { ours: [], vroom: [] },
  };
  for (const instance of instances) {
    const problem = problemOf(instance, args.objective ?? 'distance');
    const began = performance.now();
    const solution = solve(problem, {
      seed: args.seed ?? 1,
      now: () => performance.now(),
      deadlineMs: performance.now() + limitS * 1000,
    });
    const seconds = (performance.now() - began) / 1000;
    const { errors, distance, vehicles } = checkSolution(instance, problem, solution);
    const bks = instance.bestKnownDistance ?? Number.NaN;
    const gap = ((distance - bks) / bks) * 100;
    gaps[instance.family]!.ours.push(gap);
    if (instance.vroom) gaps[instance.family]!.vroom.push(instance.vroom.gapPercent);
    console.log(
      `${instance.name.padEnd(8)} ${distance.toFixed(2).padStart(9)} ${String(vehicles).padStart(4)}  ${bks.toFixed(2).padStart(9)}  ${pct(gap).padStart(8)} ${seconds.toFixed(1).padStart(6)} ${String(solution.iterations).padStart(12)}   ${instance.vroom ? pct(instance.vroom.gapPercent).padStart(8) : '       -'}  ${errors.length === 0 ? 'ok' : errors.slice(0, 3).join('; ')}`,
    );
  }
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
  for (const [family, g] of Object.entries(gaps))
    if (g.ours.length > 0)
      console.log(
        `mean gap ${family.padEnd(8)} ${pct(mean(g.ours))} (VROOM ${pct(mean(g.vroom))}) over ${g.ours.length}`,
      );
  console.log(`load at end ${load()}`);
}

if (process.argv[1]?.endsWith('routing-solver.ts')) {
  const arg = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1];
  benchRoutingSolver({
    limitS: Number(arg('limit') ?? 10),
    ...(arg('only') ? { only: arg('only')!.split(',') } : {}),
    seed: Number(arg('seed') ?? 1),
    objective: (arg('objective') as 'distance' | 'vehicles' | undefined) ?? 'distance',
  });
}
