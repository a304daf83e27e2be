/**
 * The route-planning solver run directly (no service) on the Solomon and Li & Lim instances of `../shared/vrp/`,
 * mapped as the service maps them (1 unit = 1 km at 60 km/h: metres ×1000, seconds ×60; Solomon's customers as tasks
 * picked up at the depot at the shift's first instant). Each answer is checked here, independently of the solver
 * (times, windows, loads, shifts recomputed from the stop order), and its distance recomputed from the instance's own
 * coordinates. Prints per instance: distance, vehicles, gap to the best known, seconds, VROOM's gap; then the means.
 *
 * `npx tsx bench/routing-solver.ts [--limit=10] [--only=C101,lr101] [--seed=1] [--objective=distance]
 * [--clock=cpu] [--set=homberger]`; with
 * `--scale=5,60` it runs a generated city day of 2 000 tasks and 200 vehicles at each limit instead.
 */
import { cpus, loadavg } from 'node:os';
import type { RoutingProblem, RoutingSolution, TaskSpec, VehicleSpec } from '#shared/routing/solver/index';
import { solve } from '#shared/routing/solver/index';
import { LARGE } from '#shared/routing/solver/search';
import { checkRouting, cityDay } from '../test/support/routing-problems.ts';
import { loadVrpInstances, type VrpInstance } from './vrp/instances.ts';

const UNLIMITED = Number.POSITIVE_INFINITY;

/**
 * The solver's clock: wall time, or this process's CPU time (`cpu`: "n seconds on one core" on a machine others load
 * too; the run then takes longer than its limit in wall time).
 */
export type BenchClock = 'wall' | 'cpu';
function clockOf(kind: BenchClock): () => number {
  if (kind === 'wall') return () => performance.now();
  return () => {
    const { user, system } = process.cpuUsage();
    return (user + system) / 1000;
  };
}
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
): { errors: string[]; distance: number; truncated: number; vehicles: number } {
  const errors: string[] = [];
  const { nodes } = instance;
  const units = (a: number, b: number) => Math.hypot(nodes[a]!.x - nodes[b]!.x, nodes[a]!.y - nodes[b]!.y);
  // DIMACS's convention (the homberger best known figures): each edge's length truncated to one decimal.
  const cut = (a: number, b: number) => Math.floor(units(a, b) * 10) / 10;
  const seen = new Map<number, number>();
  let distance = 0;
  let truncated = 0;
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
      truncated += cut(at, spec.location);
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
      truncated += cut(at, vehicle.end);
    }
    if (time > vehicle.shiftEnd + TOLERANCE) errors.push(`v${route.vehicle} back at ${time} after ${vehicle.shiftEnd}`);
  }
  const unplanned = new Set(solution.unplanned.map((u) => u.task));
  for (let t = 0; t < problem.tasks.length; t++)
    if (!seen.has(t) && !unplanned.has(t)) errors.push(`task ${t} neither planned nor unplanned`);
  if (unplanned.size > 0) errors.push(`${unplanned.size} unplanned`);
  if (Math.abs(distance * 1000 - solution.distanceM) > 1e-3 * Math.max(1, distance))
    errors.push(`distance ${solution.distanceM} m ≠ ${distance * 1000} m`);
  return { errors, distance, truncated, vehicles: solution.routes.length };
}

function pct(x: number): string {
  return `${x >= 0 ? ' ' : ''}${x.toFixed(2)} %`;
}

export function benchRoutingSolver(
  args: {
    limitS?: number;
    only?: string[];
    seed?: number;
    objective?: 'distance' | 'vehicles';
    clock?: BenchClock;
    set?: 'classic' | 'homberger';
  } = {},
): void {
  const now = clockOf(args.clock ?? 'wall');
  const limitS = args.limitS ?? 10;
  const homberger = args.set === 'homberger';
  const instances = loadVrpInstances({ ...(args.only ? { names: args.only } : {}), set: args.set ?? 'classic' });
  const load = () => loadavg()[0]!.toFixed(2);
  console.log(
    `\n## Route-planning solver, direct (${limitS} s ${args.clock === 'cpu' ? 'of CPU' : 'wall'} per instance, seed ${args.seed ?? 1}, ${cpus().length} cores, load ${load()} at start)`,
  );
  console.log(
    homberger
      ? 'instance   DIMACS dist  veh  best known (veh)    gap        s  cpu s  iterations  VROOM -x0 (veh)  VROOM -x5 (veh)  check'
      : 'instance  distance   veh  best known   gap        s  cpu s  iterations  VROOM gap  check',
  );
  const gaps: Record<string, { ours: number[]; vroom: number[] }> = {
    solomon: { ours: [], vroom: [] },
    lilim: { ours: [], vroom: [] },
  };
  for (const instance of instances) {
    const problem = problemOf(instance, args.objective ?? 'distance');
    const began = performance.now();
    const cpuBefore = process.cpuUsage();
    let finish: { fromM: number; toM: number } | undefined;
    const solution = solve(problem, {
      seed: args.seed ?? 1,
      now,
      deadlineMs: now() + limitS * 1000,
      onFinish: (done) => {
        finish = done;
      },
    });
    const seconds = (performance.now() - began) / 1000;
    const cpu = process.cpuUsage(cpuBefore);
    const cpuSeconds = (cpu.user + cpu.system) / 1e6;
    const { errors, distance, truncated, vehicles } = checkSolution(instance, problem, solution);
    const bks = instance.bestKnownDistance ?? Number.NaN;
    if (homberger) {
      const gap = ((truncated - bks) / bks) * 100;
      const g = gaps[instance.family]!;
      g.ours.push(gap);
      const vr = (x: VrpInstance['vroom']) =>
        x ? `${pct(x.gapPercent).padStart(8)} (${String(x.vehicles).padStart(3)})` : '         -     ';
      if (instance.vroomX0) g.vroom.push(instance.vroomX0.gapPercent);
      console.log(
        `${instance.name.padEnd(9)} ${truncated.toFixed(1).padStart(11)} ${String(vehicles).padStart(4)}  ${bks.toFixed(1).padStart(10)} (${String(instance.bestKnown?.vehicles ?? '?').padStart(3)})  ${pct(gap).padStart(8)} ${seconds.toFixed(1).padStart(6)} ${cpuSeconds.toFixed(1).padStart(6)} ${String(solution.iterations).padStart(11)}  ${vr(instance.vroomX0)}  ${vr(instance.vroom)}  ${errors.length === 0 ? 'ok' : errors.slice(0, 3).join('; ')}${finish ? `  finish ${(finish.fromM / 1000).toFixed(0)} → ${(finish.toM / 1000).toFixed(0)}` : ''}`,
      );
      continue;
    }
    const gap = ((distance - bks) / bks) * 100;
    gaps[instance.family]!.ours.push(gap);
    if (instance.vroom) gaps[instance.family]!.vroom.push(instance.vroom.gapPercent);
    console.log(
      `${instance.name.padEnd(8)} ${distance.toFixed(2).padStart(9)} ${String(vehicles).padStart(4)}  ${bks.toFixed(2).padStart(9)}  ${pct(gap).padStart(8)} ${seconds.toFixed(1).padStart(6)} ${cpuSeconds.toFixed(1).padStart(6)} ${String(solution.iterations).padStart(11)}   ${instance.vroom ? pct(instance.vroom.gapPercent).padStart(8) : '       -'}  ${errors.length === 0 ? 'ok' : errors.slice(0, 3).join('; ')}`,
    );
  }
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
  for (const [family, g] of Object.entries(gaps))
    if (g.ours.length > 0)
      console.log(
        `mean gap ${family.padEnd(8)} ${pct(mean(g.ours))} (VROOM${homberger ? ' -x 0' : ''} ${pct(mean(g.vroom))}) over ${g.ours.length}`,
      );
  console.log(`load at end ${load()}`);
}

/**
 * A generated city day (2 000 tasks, 200 vehicles, `cityDay` of the tests) at each time limit: distance, vehicles,
 * unplanned, iterations, seconds including the construction, and the process's peak RSS so far.
 */
export function benchRoutingScale(
  args: { limitsS?: readonly number[]; tasks?: number; vehicles?: number; clock?: BenchClock } = {},
): void {
  const now = clockOf(args.clock ?? 'wall');
  const tasks = args.tasks ?? 2000;
  const vehicles = args.vehicles ?? 200;
  const problem = cityDay(1, tasks, vehicles);
  console.log(
    `\n## Route-planning solver at scale: a city day of ${tasks} tasks, ${vehicles} vehicles (${problem.matrix.size} locations), load ${loadavg()[0]!.toFixed(2)}`,
  );
  console.log('limit s   distance km   vehicles  unplanned  iterations  seconds  peak RSS MB  check');
  for (const limitS of args.limitsS ?? [5, 60]) {
    const began = performance.now();
    const solution = solve(problem, { seed: 1, now, deadlineMs: now() + limitS * 1000 });
    const seconds = (performance.now() - began) / 1000;
    const { errors } = checkRouting(problem, solution);
    console.log(
      `${String(limitS).padStart(7)} ${(solution.distanceM / 1000).toFixed(1).padStart(13)} ${String(solution.routes.length).padStart(10)} ${String(solution.unplanned.length).padStart(10)} ${String(solution.iterations).padStart(11)} ${seconds.toFixed(1).padStart(8)} ${(process.resourceUsage().maxRSS / 1024).toFixed(0).padStart(12)}  ${errors.length === 0 ? 'ok' : errors.slice(0, 3).join('; ')}`,
    );
  }
}

if (process.argv[1]?.endsWith('routing-solver.ts')) {
  const arg = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1];
  const clock = arg('clock') === 'cpu' ? 'cpu' : 'wall';
  // Ablation of the large-problem parts (docs/routing.md): --ablate=inter,minimise,consolidate switches them off;
  // --share=0.5 and --lambda=1 set the consolidation phase.
  // --parts=on: every part on (inter-route moves, route minimisation, a priced half at 30 tasks an iteration and
  // 0.5 % annealing), as measured in docs/routing.md; the solver's default is the search without them.
  if (arg('parts') === 'on')
    Object.assign(LARGE, { inter: true, minimise: true, consolidate: 0.5, qMax: 30, startWorse: 0.005 });
  for (const part of arg('ablate')?.split(',') ?? []) {
    if (part === 'inter') LARGE.inter = false;
    else if (part === 'minimise') LARGE.minimise = false;
    else if (part === 'consolidate') LARGE.consolidate = 0;
    else throw new Error(`--ablate: no part ${part}`);
  }
  if (arg('share')) LARGE.consolidate = Number(arg('share'));
  if (arg('lambda')) LARGE.lambda = Number(arg('lambda'));
  if (arg('qmax')) LARGE.qMax = Number(arg('qmax'));
  if (arg('worse')) LARGE.startWorse = Number(arg('worse'));
  // --delivery=off: no delivery-only moves of depot loads; --fleet=on|off: the ALNS's repair kept to the current fleet.
  if (arg('delivery')) LARGE.delivery = arg('delivery') !== 'off';
  if (arg('fleet')) LARGE.fleet = arg('fleet') === 'on';
  if (arg('polish')) LARGE.polish = Number(arg('polish'));
  if (arg('seeds')) LARGE.seeds = arg('seeds') === 'on';
  // --starts=4: first plans built and taken to their local optimum (the best kept), within --start-share of the time.
  if (arg('starts')) LARGE.starts = Number(arg('starts'));
  if (arg('start-share')) LARGE.startShare = Number(arg('start-share'));
  // --finish=0.05: the share of the time kept at the end for the richer moves on the best plan.
  if (arg('finish')) LARGE.finish = Number(arg('finish'));
  // --moves=-cross,-intra,-reverse: the delivery moves without cross-exchange, moves within a route, reversed runs;
  // --moves=first,best,every: the richer kinds on the first plans, each new best, every polished candidate too (else
  // only on the best plan in the time's last share, --finish).
  for (const kind of arg('moves')?.split(',') ?? []) {
    if (kind === '-cross') LARGE.cross = false;
    else if (kind === '-intra') LARGE.intra = false;
    else if (kind === '-reverse') LARGE.reverse = false;
    else if (kind === 'every') LARGE.richEvery = true;
    else if (kind === 'best') LARGE.richBest = true;
    else if (kind === 'first') LARGE.richFirst = true;
    else throw new Error(`--moves: no kind ${kind}`);
  }
  if (
    process.argv.some(
      (a) =>
        a.startsWith('--ablate') ||
        a.startsWith('--parts') ||
        a.startsWith('--share') ||
        a.startsWith('--lambda') ||
        a.startsWith('--qmax') ||
        a.startsWith('--worse') ||
        a.startsWith('--delivery') ||
        a.startsWith('--fleet') ||
        a.startsWith('--polish') ||
        a.startsWith('--seeds') ||
        a.startsWith('--moves') ||
        a.startsWith('--starts') ||
        a.startsWith('--start-share') ||
        a.startsWith('--finish'),
    )
  )
    console.log(`large-problem parts: ${JSON.stringify(LARGE)}`);
  if (arg('scale')) benchRoutingScale({ limitsS: arg('scale')!.split(',').map(Number), clock });
  else
    benchRoutingSolver({
      limitS: Number(arg('limit') ?? 10),
      ...(arg('only') ? { only: arg('only')!.split(',') } : {}),
      seed: Number(arg('seed') ?? 1),
      objective: (arg('objective') as 'distance' | 'vehicles' | undefined) ?? 'distance',
      clock,
      set: arg('set') === 'homberger' ? 'homberger' : 'classic',
    });
}
