/**
 * Tasks added to live routes at a city's scale (issue 54, X30 of contract 4.11), through the service's path: the city
 * day of bench/routing-scale.ts (2 000 tasks, 200 vans) is built and applied (X23), half of its runsheets are given to
 * drivers (P7, X16) who do the first third of their stops (X20: pickups `picked_up`, drop-offs `delivered`) and send
 * a fix where they stand (L1); then 100 new tasks of the same city are inserted (X30 dry run, `time_limit_s` 5).
 *
 * The day lies after the bench's clock (its first instant the UTC midnight two days on), so every window is still
 * open: the drivers' work is done early, and each runsheet under way starts from its driver's fix at the request.
 *
 * Prints: the answer judged by the independent checker from the live state (bench/vrp/checker.ts `live`: each
 * runsheet under way from its driver's position no earlier than the request, its loads on board, its stops done
 * counted; the others from their van's depot and shift), how many tasks were planned (and why not the others), the
 * kilometres the insertion adds to the routes it changes (each against the same route's remaining stops before), and
 * a re-build beside it: what is left of the runsheets the insertion changed, with the new tasks, as an X23 dry run on
 * their vans from where they stand, a task on board as a pickup at its van's position (a looser problem than the
 * insertion's: a task on board may change van, a route its order). What is left of the whole day can pass X23's
 * 2 000 tasks, so the re-build takes the changed routes only. Wall time against the bound of 4.10 (`time_limit_s` +
 * 30 s).
 *
 * Alone: `npx tsx bench/routing-insertion.ts [--time-limit 5] [--rebuild-limit 30]` (ROUTING_SCALE_TASKS,
 * ROUTING_SCALE_VEHICLES, ROUTING_INSERT_TASKS scale it).
 */
import './env.ts';
import { mapLimited } from '#shared/concurrency';
import { stopBenchHost } from './host.ts';
import { call } from './http.ts';
import { cityDay } from './routing-scale.ts';
import {
  checkRouteBuild,
  checkTaskOf,
  expandVehicles,
  type LiveRunsheet,
  type Point,
  plannedMetres,
  type RequestVehicle,
  type ResultRunsheet,
} from './vrp/checker.ts';
import { type RoutingRow, routingCsv } from './vrp/csv.ts';
import { routingSession } from './vrp/service.ts';

const TASKS = Number(process.env['ROUTING_SCALE_TASKS'] ?? 2000);
const VEHICLES = Number(process.env['ROUTING_SCALE_VEHICLES'] ?? 200);
const NEW_TASKS = Number(process.env['ROUTING_INSERT_TASKS'] ?? 100);
const TRAVEL = { speed_kmh: 30, detour_factor: 1.3 };
/** Drivers working at once while the morning is played. */
const DRIVERS_AT_ONCE = 8;

const km = (m: number) => (m / 1000).toFixed(1);

export async function benchRoutingInsertion(options: { timeLimitS?: number; rebuildLimitS?: number } = {}) {
  const timeLimitS = options.timeLimitS ?? 5;
  const rebuildLimitS = options.rebuildLimitS ?? 30;
  const dayMs = Math.ceil(Date.now() / 86_400_000) * 86_400_000 + 86_400_000;
  const range = { start: new Date(dayMs).toISOString(), end: new Date(dayMs + 7 * 86_400_000).toISOString() };
  const day = cityDay(TASKS + NEW_TASKS, VEHICLES, dayMs);
  const morningRows = day.rows.slice(0, TASKS);
  const afternoonRows = day.rows.slice(TASKS);
  const fleet = expandVehicles(day.vehicles);
  console.log(
    `\n## Tasks added to live routes: ${TASKS} tasks built on ${fleet.size} vans, half the routes a third done, ${NEW_TASKS} new tasks, X30 dry run at time_limit_s ${timeLimitS}`,
  );
  const session = await routingSession('routing-insertion');
  const morning = await session.importTasks(routingCsv(morningRows), 'van_1.7m', range);
  const planning = await session.newPlanning('City day, live');
  const { build: built } = await session.build(planning.id, {
    import_job_id: morning.importJobId,
    vehicles: day.vehicles,
    time_limit_s: timeLimitS,
    version_rev: planning.versionRev,
  });
  if (built.status !== 'completed' || !built.result) throw new Error(`the day's build ${built.status}`);
  const routes = built.result.runsheets as (ResultRunsheet & { id: string })[];
  console.log(
    `the day built and applied: ${built.result.summary.planned} tasks on ${routes.length} runsheets, ${km(built.result.summary.total_distance_m)} km`,
  );

  // The morning: half the runsheets given to drivers, who do the first third of their stops and say where they are.
  const underWay = routes.slice(0, Math.floor(routes.length / 2));
  const drivers = await session.drivers(underWay.length);
  await session.must('POST', `/v1/plannings/${planning.id}/drivers`, { drivers: drivers.map((d) => ({ id: d.id })) });
  const doneOf = new Map<string, number>();
  await mapLimited(underWay, DRIVERS_AT_ONCE, async (rs, k) => {
    const driver = drivers[k]!;
    await session.must('POST', `/v1/plannings/${planning.id}/runsheets/${encodeURIComponent(rs.id)}/assign`, {
      driver_id: driver.id,
    });
    const done = Math.max(1, Math.floor(rs.stops.length / 3));
    for (const stop of rs.stops.slice(0, done)) {
      const reply = await call(
        session.base,
        'POST',
        `/v1/driver/runsheets/${encodeURIComponent(rs.id)}/tasks/${stop.task_id}/events`,
        driver.token,
        { type: stop.kind === 'pickup' ? 'picked_up' : 'delivered', happened_at_utc: new Date().toISOString() },
      );
      if (reply.status !== 201) throw new Error(`X20 answered ${reply.status} ${JSON.stringify(reply.body)}`);
    }
    const last = rs.stops[done - 1]!;
    const fix = await call(session.base, 'PUT', '/v1/driver/location', driver.token, {
      latitude: last.latitude,
      longitude: last.longitude,
      client_time_utc: new Date().toISOString(),
    });
    if (fix.status !== 200) throw new Error(`L1 answered ${fix.status} ${JSON.stringify(fix.body)}`);
    doneOf.set(rs.id, done);
  });

  // The afternoon: new tasks, inserted (a dry run), judged from the live state.
  const afternoon = await session.importTasks(routingCsv(afternoonRows), 'van_1.7m', range);
  const { version_rev } = await session.must<{ version_rev: string }>('GET', `/v1/plannings/${planning.id}`);
  const askedAt = Date.now();
  const { build: inserted, wallMs } = await session.build(
    planning.id,
    {
      import_job_id: afternoon.importJobId,
      time_limit_s: timeLimitS,
      dry_run: true,
      version_rev,
    },
    250,
    'routes/insertions',
  );
  if (inserted.status !== 'completed' || !inserted.result)
    throw new Error(`the insertion ${inserted.status}: ${JSON.stringify(inserted.error)}`);
  const result = inserted.result;

  const driverOf = new Map(underWay.map((rs, k) => [rs.id, drivers[k]!.id]));
  const live = new Map<string, LiveRunsheet>();
  const before = new Map<string, number>();
  const remainingOf = new Map<string, ResultRunsheet['stops']>();
  for (const rs of routes) {
    const vehicle = fleet.get(rs.vehicle_id)!;
    const done = doneOf.get(rs.id) ?? 0;
    const doneStops = rs.stops.slice(0, done);
    const remaining = rs.stops.slice(done);
    const picked = new Set(doneStops.filter((s) => s.kind === 'pickup').map((s) => s.task_id));
    const dropped = new Set(doneStops.filter((s) => s.kind === 'dropoff').map((s) => s.task_id));
    const last = doneStops.at(-1);
    const start: Point = last ? { latitude: last.latitude, longitude: last.longitude } : vehicle.start;
    live.set(rs.id, {
      vehicleId: rs.vehicle_id,
      driverId: driverOf.get(rs.id) ?? null,
      start,
      notBeforeMs: last ? askedAt : Math.max(askedAt, Date.parse(vehicle.shift_start_utc)),
      onBoard: [...picked].filter((id) => !dropped.has(id)),
      tasksDone: [...dropped].length,
      stopsDone: done,
    });
    // What is left of the route before the insertion: from where it starts, its remaining stops, home.
    let metres = 0;
    let at = start;
    for (const stop of remaining) {
      metres += plannedMetres(at, stop, TRAVEL);
      at = stop;
    }
    before.set(rs.id, metres + plannedMetres(at, vehicle.end ?? vehicle.start, TRAVEL));
    remainingOf.set(rs.id, remaining);
  }
  const asked = new Set(afternoon.tasks.map((t) => t.id));
  const checkTasks = [...morning.tasks, ...afternoon.tasks].map((task) => checkTaskOf(task, 'van_1.7m'));
  const violations = checkRouteBuild({
    tasks: checkTasks,
    vehicles: day.vehicles,
    travel: TRAVEL,
    result,
    live: { runsheets: live, asked },
  });
  const liveIds = new Set(routes.map((r) => r.id));
  const changed = result.runsheets.filter((r) => r.id !== undefined && liveIds.has(r.id));
  const addedM =
    changed.reduce((sum, r) => sum + r.planned_distance_m - before.get(r.id!)!, 0) +
    result.runsheets.filter((r) => !changed.includes(r)).reduce((sum, r) => sum + r.planned_distance_m, 0);
  const remainingBeforeM = [...before.values()].reduce((a, b) => a + b, 0);
  const codes = new Map<string, number>();
  for (const entry of result.unplanned) codes.set(entry.code, (codes.get(entry.code) ?? 0) + 1);
  const changedUnderWay = changed.filter((r) => driverOf.has(r.id!)).length;

  console.log(
    `insertion: ${result.summary.planned}/${asked.size} planned` +
      (codes.size ? ` (unplanned: ${[...codes].map(([code, n]) => `${code} ${n}`).join(', ')})` : '') +
      `, ${changed.length} of ${routes.length} runsheets changed (${changedUnderWay} under way), checker ${violations.length === 0 ? 'ok' : `${violations.length} violations`}`,
  );
  for (const violation of violations.slice(0, 5)) console.log(`    ${violation.rule}: ${violation.message}`);
  console.log(
    `added: ${km(addedM)} km for ${result.summary.planned} tasks (${(addedM / 1000 / Math.max(1, result.summary.planned)).toFixed(2)} km a task); ` +
      `the day's remaining routes ${km(remainingBeforeM)} km → ${km(remainingBeforeM + addedM)} km`,
  );
  console.log(
    `wall time ${(wallMs / 1000).toFixed(1)} s (bound ${timeLimitS + 30} s), solve ${(result.summary.solve_ms / 1000).toFixed(1)} s, stopped ${result.summary.stopped}`,
  );

  // The re-build beside it: what is left of the runsheets the insertion changed, with the new tasks, planned again
  // from scratch on their vans (X23 takes at most 2 000 tasks, which what is left of the whole day can pass: a third
  // of half the routes done leaves most of its tasks still to deliver). A task on board is picked up where its van stands.
  const refOf = new Map(morning.tasks.map((t) => [t.id, t.task_ref]));
  const rowOf = new Map(day.rows.map((row) => [row.ref, row]));
  const rebuildRows: RoutingRow[] = [...afternoonRows];
  const rebuildFleet: RequestVehicle[] = [];
  for (const rs of routes.filter((r) => changed.some((c) => c.id === r.id))) {
    const state = live.get(rs.id)!;
    const onBoard = new Set(state.onBoard);
    for (const stop of remainingOf.get(rs.id)!) {
      if (stop.kind === 'dropoff' && onBoard.has(stop.task_id)) {
        const row = rowOf.get(refOf.get(stop.task_id)!)!;
        rebuildRows.push({ ...row, from: state.start, fromOpenMs: dayMs, fromCloseMs: row.toCloseMs, fromServiceS: 0 });
      } else if (stop.kind === 'pickup') rebuildRows.push(rowOf.get(refOf.get(stop.task_id)!)!);
    }
    const vehicle = fleet.get(rs.vehicle_id)!;
    rebuildFleet.push({
      id: rs.vehicle_id,
      start: state.start,
      end: vehicle.end === undefined ? vehicle.start : vehicle.end,
      shift_start_utc: vehicle.shift_start_utc,
      shift_end_utc: vehicle.shift_end_utc,
      ...(vehicle.capacity ? { capacity: vehicle.capacity } : {}),
    });
  }
  const changedBeforeM = changed.reduce((sum, r) => sum + before.get(r.id!)!, 0);
  const changedAfterM = changed.reduce((sum, r) => sum + r.planned_distance_m, 0);
  const rest = await session.importTasks(routingCsv(rebuildRows), 'van_1.7m', range);
  const other = await session.newPlanning('City day, re-built');
  const { build: rebuilt, wallMs: rebuildMs } = await session.build(other.id, {
    import_job_id: rest.importJobId,
    vehicles: rebuildFleet,
    time_limit_s: rebuildLimitS,
    dry_run: true,
    version_rev: other.versionRev,
  });
  const rebuildResult = rebuilt.result;
  if (rebuilt.status !== 'completed' || !rebuildResult)
    console.log(`re-build: ${rebuilt.status} ${JSON.stringify(rebuilt.error)}`);
  else
    console.log(
      `re-build of the ${changed.length} changed runsheets' ${rebuildRows.length - afternoonRows.length} tasks left and the ${afternoonRows.length} new ` +
        `(X23 dry run on their ${rebuildFleet.length} vans at time_limit_s ${rebuildLimitS}, ${(rebuildMs / 1000).toFixed(1)} s): ` +
        `${km(rebuildResult.summary.total_distance_m)} km, ${rebuildResult.summary.planned} planned, against the insertion's ` +
        `${km(changedAfterM)} km (${km(changedBeforeM)} km before it): the re-build adds ${km(rebuildResult.summary.total_distance_m - changedBeforeM)} km, ` +
        `the insertion ${km(changedAfterM - changedBeforeM)} km`,
    );
  return {
    planned: result.summary.planned,
    asked: asked.size,
    addedKm: addedM / 1000,
    wallS: wallMs / 1000,
    feasible: violations.length === 0,
    changedKm: changedAfterM / 1000,
    changedBeforeKm: changedBeforeM / 1000,
    rebuildKm: rebuildResult ? rebuildResult.summary.total_distance_m / 1000 : Number.NaN,
  };
}

if (process.argv[1]?.endsWith('routing-insertion.ts')) {
  const args = process.argv.slice(2);
  const option = (name: string) => {
    const at = args.indexOf(name);
    return at >= 0 ? Number(args[at + 1]) : undefined;
  };
  const timeLimitS = option('--time-limit');
  const rebuildLimitS = option('--rebuild-limit');
  await benchRoutingInsertion({
    ...(timeLimitS ? { timeLimitS } : {}),
    ...(rebuildLimitS ? { rebuildLimitS } : {}),
  });
  await stopBenchHost();
}
