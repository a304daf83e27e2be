/**
 * Route planning against the published instances (issue 43), through the service's own path: each of the 14 Solomon
 * VRPTW and 9 Li & Lim PDPTW instances of `../shared/vrp` is imported as a tasks CSV with coordinates and service
 * seconds, built with X23 (`dry_run`, objective `distance`) and read back with X24. Mapped so that distances stay
 * comparable: 1 unit = 1 km (latitude = y / 111.19508 on the 6 371 008.8 m sphere from the instance's middle, longitude
 * stretched east-west so no leg is shorter than the instance's: bench/vrp/mapping.ts `projectionOf`), travel 60 km/h with no detour (1 unit of time = 1 minute), every instant from one base. Solomon: each customer is a task
 * picked up at the depot in a zero-width window at the shift's first instant (no vehicle reloads), its service minutes
 * as `to_service_s`; Li & Lim: pickups and deliveries as given. Vehicles: the instance's fleet at the depot, its
 * capacity as `weight_kg`, its shift the depot's window.
 *
 * Each result is judged twice, never by the solver's own idea of feasible: by the independent checker
 * (bench/vrp/checker.ts: the service's model, recomputed from the result's coordinates and times), and along the
 * returned stop order in the instance's own Euclidean units (its windows, its capacity), whose total distance is the
 * figure compared with the best known (Solomon `<name>_distance`; Li & Lim BKS.json) and with VROOM's
 * (`vroom-x5.txt`: v1.14.0, one thread, `-x 5`).
 *
 * Alone: `npx tsx bench/routing.ts [--time-limit 10] [C101,lr101,…]` (or ROUTING_TIME_LIMIT_S, ROUTING_INSTANCES);
 * `--homberger` runs the six 1 000-customer instances of `../shared/vrp/homberger/` instead (issue 53: gaps by DIMACS's
 * convention, VROOM's `-x 0` beside `-x 5`);
 * `--insertion` runs the insertion case instead (bench/routing-insertion.ts: X30 on a city day under way).
 */
import './env.ts';
import { stopBenchHost } from './host.ts';
import { benchRoutingInsertion } from './routing-insertion.ts';
import { checkRouteBuild, checkTaskOf } from './vrp/checker.ts';
import { routingCsv } from './vrp/csv.ts';
import { loadVrpInstances } from './vrp/instances.ts';
import { euclideanOf, mapInstance, TRAVEL } from './vrp/mapping.ts';
import { routingSession } from './vrp/service.ts';

const mean = (values: number[]) => (values.length ? values.reduce((a, b) => a + b, 0) / values.length : Number.NaN);
const pad = (value: string | number, width: number) => String(value).padStart(width);
/** Percent above the best known; a figure that rounds to zero prints as 0.00, never -0.00. */
const gapOf = (distance: number, best: number | undefined) =>
  best === undefined ? Number.NaN : Math.round((10_000 * (distance - best)) / best) / 100 || 0;

export async function benchRouting(
  options: { timeLimitS?: number; names?: readonly string[]; set?: 'classic' | 'homberger' } = {},
) {
  const timeLimitS = options.timeLimitS ?? Number(process.env['ROUTING_TIME_LIMIT_S'] ?? 10);
  const names = options.names ?? process.env['ROUTING_INSTANCES']?.split(',').filter(Boolean);
  // Gehring & Homberger's 1 000 customers (issue 53): distances by DIMACS's convention, as their best known figures.
  const homberger = options.set === 'homberger';
  const instances = loadVrpInstances({ ...(names ? { names } : {}), ...(homberger ? { set: 'homberger' } : {}) });
  console.log(
    `\n## Route planning on the published instances: X23 dry run at time_limit_s ${timeLimitS}, through the service`,
  );
  const session = await routingSession('routing');
  console.log(
    `${'instance'.padEnd(9)}${pad('distance', 10)}${pad('veh', 5)}${pad('best', 10)}${pad('gap', 8)}${pad('s', 7)}` +
      `${pad('vroom', 10)}${pad('veh', 5)}${pad('gap', 8)}  planned  checker  euclid`,
  );
  const rows: {
    family: string;
    gap: number;
    vroomGap: number;
    seconds: number;
    complete: boolean;
    feasible: boolean;
  }[] = [];
  for (const instance of instances) {
    const mapped = mapInstance(instance);
    const { importJobId, tasks } = await session.importTasks(routingCsv(mapped.rows));
    const planning = await session.newPlanning(`${instance.name}`);
    const body = {
      import_job_id: importJobId,
      vehicles: mapped.vehicles,
      travel: TRAVEL,
      objective: 'distance',
      time_limit_s: timeLimitS,
      dry_run: true,
      version_rev: planning.versionRev,
    };
    const { build, wallMs } = await session.build(planning.id, body);
    const result = build.result;
    if (build.status !== 'completed' || !result) {
      console.log(`${instance.name.padEnd(9)} the build ${build.status}: ${JSON.stringify(build.error)}`);
      rows.push({
        family: instance.family,
        gap: Number.NaN,
        vroomGap: instance.vroom?.gapPercent ?? Number.NaN,
        seconds: wallMs / 1000,
        complete: false,
        feasible: false,
      });
      continue;
    }
    const violations = checkRouteBuild({
      tasks: tasks.map((task) => checkTaskOf(task, 'van_1.7m')),
      vehicles: mapped.vehicles,
      travel: TRAVEL,
      result,
    });
    const refOf = new Map(tasks.map((task) => [task.id, task.task_ref]));
    const demandOf = new Map(mapped.rows.map((row) => [row.ref, row.weightKg ?? 0]));
    const routes = result.runsheets.map((runsheet) =>
      runsheet.stops.map((stop) => {
        const ref = refOf.get(stop.task_id)!;
        const nodes = mapped.nodesOf.get(ref)!;
        const pickup = stop.kind === 'pickup';
        return { node: pickup ? nodes.pickup : nodes.delivery, pickup, demand: demandOf.get(ref)! };
      }),
    );
    const euclid = euclideanOf(instance, routes);
    const distance = homberger ? euclid.truncated : euclid.total;
    const gap = gapOf(distance, instance.bestKnownDistance);
    const complete = result.summary.planned === mapped.rows.length;
    const feasible = violations.length === 0 && euclid.broken.length === 0;
    rows.push({
      family: instance.family,
      gap,
      vroomGap: instance.vroom?.gapPercent ?? Number.NaN,
      seconds: wallMs / 1000,
      complete,
      feasible,
    });
    console.log(
      `${instance.name.padEnd(9)}${pad(distance.toFixed(2), 10)}${pad(result.runsheets.length, 5)}` +
        `${pad(instance.bestKnownDistance?.toFixed(2) ?? '?', 10)}${pad(`${gap.toFixed(2)}%`, 8)}` +
        `${pad((wallMs / 1000).toFixed(1), 7)}${pad(instance.vroom?.distance.toFixed(2) ?? '?', 10)}` +
        `${pad(instance.vroom?.vehicles ?? '?', 5)}${pad(`${instance.vroom?.gapPercent.toFixed(2) ?? '?'}%`, 8)}` +
        `  ${pad(`${result.summary.planned}/${mapped.rows.length}`, 7)}  ${pad(violations.length === 0 ? 'ok' : violations.length, 7)}` +
        `  ${pad(euclid.broken.length === 0 ? 'ok' : euclid.broken.length, 6)}` +
        (instance.vroomX0
          ? `  VROOM -x 0: ${instance.vroomX0.distance.toFixed(1)} (${instance.vroomX0.vehicles}) ${instance.vroomX0.gapPercent.toFixed(2)} %`
          : ''),
    );
    for (const violation of [...violations.map((v) => `${v.rule}: ${v.message}`), ...euclid.broken].slice(0, 3))
      console.log(`           ${violation}`);
  }
  if (homberger) {
    const x0 = instances.flatMap((i) => (i.vroomX0 ? [i.vroomX0.gapPercent] : []));
    console.log(
      `mean homberger (${rows.length}): gap ${mean(rows.map((r) => r.gap)).toFixed(2)} % (VROOM -x 0 ${mean(x0).toFixed(2)} %),` +
        ` ${mean(rows.map((r) => r.seconds)).toFixed(1)} s per instance, ${rows.filter((r) => r.complete).length}/${rows.length} complete,` +
        ` ${rows.filter((r) => r.feasible).length}/${rows.length} feasible`,
    );
    return rows;
  }
  for (const family of ['solomon', 'lilim']) {
    const set = rows.filter((row) => row.family === family);
    if (set.length === 0) continue;
    console.log(
      `mean ${family === 'solomon' ? `Solomon (${set.length})` : `Li & Lim (${set.length})`}: gap ${mean(set.map((r) => r.gap)).toFixed(2)} %` +
        ` (VROOM ${mean(set.map((r) => r.vroomGap)).toFixed(2)} %), ${mean(set.map((r) => r.seconds)).toFixed(1)} s per instance,` +
        ` ${set.filter((r) => r.complete).length}/${set.length} complete, ${set.filter((r) => r.feasible).length}/${set.length} feasible`,
    );
  }
  return rows;
}

if (process.argv[1]?.endsWith('routing.ts') && process.argv.includes('--insertion')) {
  const limitAt = process.argv.indexOf('--time-limit');
  await benchRoutingInsertion(limitAt >= 0 ? { timeLimitS: Number(process.argv[limitAt + 1]) } : {});
  await stopBenchHost();
} else if (process.argv[1]?.endsWith('routing.ts')) {
  const args = process.argv.slice(2);
  const limitAt = args.indexOf('--time-limit');
  const timeLimitS = limitAt >= 0 ? Number(args[limitAt + 1]) : undefined;
  const names = args.filter((arg, i) => !arg.startsWith('--') && (limitAt < 0 || i !== limitAt + 1));
  await benchRouting({
    ...(timeLimitS ? { timeLimitS } : {}),
    ...(args.includes('--homberger') ? { set: 'homberger' as const } : {}),
    ...(names.length ? { names: names.flatMap((n) => n.split(',')) } : {}),
  });
  await stopBenchHost();
}
