/**
 * Route planning at a city's scale (issue 43): a generated day of 2 000 tasks and 200 vehicles in one city, built
 * through the service's path (CSV import, X23 dry run, X24) at `time_limit_s` 5, 10, 30 and 60, so that a planner can
 * see what a longer search buys. Pickups are clustered at a few hubs and merchants, drop-offs spread around
 * neighbourhoods, windows are a merchant's collection slots and two-hour delivery slots, loads parcels to furniture.
 * Prints per time limit: total distance, vehicles, planned and unplanned (by code), wall time (the contract's bound is
 * time_limit_s + 30 s) and the peak RSS of the process that solved, each result judged by the independent checker.
 *
 * Alone: `npx tsx bench/routing-scale.ts [5,10,30,60]` (ROUTING_SCALE_TASKS, ROUTING_SCALE_VEHICLES scale it down).
 */
import './env.ts';
import { seededRandom } from '../test/support/random.ts';
import { stopBenchHost } from './host.ts';
import { checkRouteBuild, checkTaskOf, type Point, type RequestVehicle } from './vrp/checker.ts';
import { type RoutingRow, routingCsv } from './vrp/csv.ts';
import { routingSession } from './vrp/service.ts';

const TASKS = Number(process.env['ROUTING_SCALE_TASKS'] ?? 2000);
const VEHICLES = Number(process.env['ROUTING_SCALE_VEHICLES'] ?? 200);
const DAY = Date.parse('2026-12-01T00:00:00Z');
const SEED = 43;

/**
 * A seeded day in a 25 km × 18 km city: its tasks and its fleet. `day`: its first instant (Singapore's day in UTC:
 * 08:00 local is 00:00Z). The same seed gives the same first rows whatever the count: a longer day is a shorter one
 * and more tasks after it.
 */
export function cityDay(tasks = TASKS, vehicles = VEHICLES, day = DAY) {
  const hour = (h: number) => day + h * 3_600_000;
  const random = seededRandom(SEED);
  const centre = { latitude: 1.35, longitude: 103.82 };
  const around = (p: Point, km: number): Point => {
    // Box-Muller: a neighbourhood is denser at its heart.
    const r = km * Math.sqrt(-2 * Math.log(1 - random()));
    const angle = 2 * Math.PI * random();
    return {
      latitude: +(p.latitude + (r * Math.sin(angle)) / 111.2).toFixed(6),
      longitude: +(p.longitude + (r * Math.cos(angle)) / 111.2).toFixed(6),
    };
  };
  const inCity = (): Point => ({
    latitude: +(centre.latitude + (random() - 0.5) * 0.16).toFixed(6),
    longitude: +(centre.longitude + (random() - 0.5) * 0.22).toFixed(6),
  });
  const hubs = Array.from({ length: 4 }, inCity);
  const merchants = Array.from({ length: 12 }, inCity);
  const neighbourhoods = Array.from({ length: 24 }, inCity);
  const rows: RoutingRow[] = Array.from({ length: tasks }, (_, i) => {
    // Most parcels leave the hubs; the rest a merchant's shop, collected in its two-hour slot.
    const fromHub = random() < 0.7;
    const from = fromHub
      ? hubs[Math.floor(random() * hubs.length)]!
      : merchants[Math.floor(random() * merchants.length)]!;
    const collect = fromHub ? 0 : 1 + Math.floor(random() * 6);
    const to = around(neighbourhoods[Math.floor(random() * neighbourhoods.length)]!, 1.2);
    const slot = Math.max(collect + 1, 1 + Math.floor(random() * 10));
    const bulky = random() < 0.05;
    return {
      ref: `D${String(i).padStart(5, '0')}`,
      from,
      to,
      fromOpenMs: hour(collect),
      fromCloseMs: hour(fromHub ? 4 : collect + 2),
      toOpenMs: hour(slot),
      toCloseMs: hour(slot + 2),
      fromServiceS: fromHub ? 60 : 180,
      toServiceS: bulky ? 600 : 120 + Math.floor(random() * 120),
      weightKg: bulky ? 40 + Math.floor(random() * 60) : +(0.3 + random() * 12).toFixed(1),
      volumeM3: bulky ? +(0.4 + random() * 0.8).toFixed(2) : +(0.002 + random() * 0.05).toFixed(3),
    };
  });
  const perHub = Math.floor(vehicles / hubs.length);
  const fleet: RequestVehicle[] = hubs.map((start, h) => ({
    id: `hub${h}-van`,
    count: h === hubs.length - 1 ? vehicles - perHub * (hubs.length - 1) : perHub,
    start,
    shift_start_utc: new Date(hour(0)).toISOString(),
    shift_end_utc: new Date(hour(12)).toISOString(),
    capacity: { weight_kg: 600, volume_m3: 4 },
  }));
  return { rows, vehicles: fleet };
}

/**
 * The local host solves in a worker thread of this very process (shared/routing/solve-runner.ts), so the solving
 * process's memory is this one's: its resident set sampled every 100 ms while a build runs gives that build's peak
 * (the process's own high-water mark, `maxRSS`, never goes down, so it can only say the peak so far).
 */
function sampleRss() {
  let peak = process.memoryUsage.rss();
  const timer = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage.rss());
  }, 100);
  return () => {
    clearInterval(timer);
    return Math.max(peak, process.memoryUsage.rss()) / 2 ** 20;
  };
}

export async function benchRoutingScale(limits: readonly number[] = [5, 10, 30, 60]) {
  const day = cityDay();
  console.log(
    `\n## Route planning at scale: ${day.rows.length} tasks, ${day.vehicles.reduce((n, v) => n + (v.count ?? 1), 0)} vehicles in one city, X23 dry run through the service`,
  );
  const session = await routingSession('routing-scale');
  const importStarted = performance.now();
  const { importJobId, tasks } = await session.importTasks(routingCsv(day.rows));
  console.log(`imported in ${((performance.now() - importStarted) / 1000).toFixed(1)} s`);
  const checkTasks = tasks.map((task) => checkTaskOf(task, 'van_1.7m'));
  const planning = await session.newPlanning('City day');
  console.log(
    `${'time_limit_s'.padEnd(13)}${'distance km'.padStart(12)}${'vehicles'.padStart(9)}${'planned'.padStart(8)}` +
      `${'unplanned'.padStart(10)}${'wall s'.padStart(8)}${'bound s'.padStart(8)}${'peak RSS MiB'.padStart(13)}  checker`,
  );
  const lines = [];
  for (const limit of limits) {
    const peakRss = sampleRss();
    const { build, wallMs } = await session.build(planning.id, {
      import_job_id: importJobId,
      vehicles: day.vehicles,
      time_limit_s: limit,
      dry_run: true,
      version_rev: planning.versionRev,
    });
    const peakRssMb = peakRss();
    const result = build.result;
    if (build.status !== 'completed' || !result) {
      console.log(`${String(limit).padEnd(13)}the build ${build.status}: ${JSON.stringify(build.error)}`);
      continue;
    }
    const violations = checkRouteBuild({
      tasks: checkTasks,
      vehicles: day.vehicles,
      travel: { speed_kmh: 30, detour_factor: 1.3 },
      result,
    });
    const codes = new Map<string, number>();
    for (const entry of result.unplanned) codes.set(entry.code, (codes.get(entry.code) ?? 0) + 1);
    const line = {
      limit,
      distanceKm: result.summary.total_distance_m / 1000,
      vehicles: result.summary.vehicles_used,
      planned: result.summary.planned,
      unplanned: result.summary.unplanned,
      wallS: wallMs / 1000,
      peakRssMb,
      feasible: violations.length === 0,
    };
    lines.push(line);
    console.log(
      `${String(limit).padEnd(13)}${line.distanceKm.toFixed(1).padStart(12)}${String(line.vehicles).padStart(9)}` +
        `${String(line.planned).padStart(8)}${String(line.unplanned).padStart(10)}${line.wallS.toFixed(1).padStart(8)}` +
        `${String(limit + 30).padStart(8)}${line.peakRssMb.toFixed(0).padStart(13)}  ${violations.length === 0 ? 'ok' : `${violations.length} violations`}` +
        (codes.size ? `  (unplanned: ${[...codes].map(([code, n]) => `${code} ${n}`).join(', ')})` : ''),
    );
    for (const violation of violations.slice(0, 3)) console.log(`    ${violation.rule}: ${violation.message}`);
  }
  const first = lines[0];
  if (first)
    for (const line of lines.slice(1))
      console.log(
        `${line.limit} s against ${first.limit} s: distance ${((100 * (line.distanceKm - first.distanceKm)) / first.distanceKm).toFixed(1)} %, vehicles ${line.vehicles - first.vehicles}`,
      );
  return lines;
}

if (process.argv[1]?.endsWith('routing-scale.ts')) {
  const limits = process.argv[2]?.split(',').map(Number);
  await benchRoutingScale(limits);
  await stopBenchHost();
}
