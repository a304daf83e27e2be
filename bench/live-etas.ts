/**
 * Live ETAs and stops at risk under load (issue 52, contract 4.11): DRIVERS drivers, each on a built runsheet of 20
 * stops (10 tasks, `stops[]` and a build's travel, stored as a route build's apply would, then claimed), each sending
 * an L1 every 10 s through the local host for MINUTES, drifting away from their route so that stops turn at risk.
 * Prints: the ETA freshness after a fix (from a fix's answer to an X22 answer whose `eta_updated_at` reflects it, for
 * a sample of fixes: p50/p95/max; the goal p95 ≤ 60 s), the units per fix (every L1's tally: RCU, WCU, and the fixes
 * that checked), and the risk events sent on `planning.<id>` (each once: duplicates by event id counted).
 *
 * `npx tsx bench/live-etas.ts [--drivers=500] [--minutes=5]`; `npm run bench` runs it shorter (1 minute) on a small
 * machine and prints what it ran.
 */
import './env.ts';
import { randomUUID } from 'node:crypto';
import type WebSocket from 'ws';
import { gateway } from '#lib/local/websocket';
import { startBenchHost, subscribedSocket } from './host.ts';
import { benchOrganisation, call } from './http.ts';
import { percentile } from './position-lag-stats.ts';

const FIX_EVERY_MS = 10_000;
const TASKS = 10;
/** X22 reads after a fix, one in this many fixes. */
const SAMPLE_EVERY = 20;

export async function benchLiveEtas(options: { drivers?: number; minutes?: number } = {}) {
  const drivers = options.drivers ?? 500;
  const minutes = options.minutes ?? 1;
  const host = await startBenchHost('live-etas');
  const { putAll } = await import('#shared/db/batch');
  const { mainTableName } = await import('#shared/db/client');
  const { tallyObservers } = await import('#shared/db/capacity');
  const { createUser } = await import('#shared/accounts/users');
  const { assignKey, driverRunsheetKeys, liveRunsheetKeys, runsheetKey } = await import('#shared/planning/keys');
  const { org, tokenFor, plannerUser } = await benchOrganisation('Live ETAs');
  const planner = await tokenFor(plannerUser.id, ['OrgAdmin']);
  const planning = await call(host.url, 'POST', '/v1/plannings', planner, { name: 'Live ETAs' });
  const planId = String(planning.body['id']);

  // The fleet: each driver's route a line of 20 stops from its depot; windows closing from 5 to 64 minutes on (some stops at risk from the start).
  const started = Date.now();
  const at = (minutesOn: number) => new Date(started + minutesOn * 60_000).toISOString();
  const fleet = await Promise.all(
    Array.from({ length: drivers }, async (_, i) => {
      const user = await createUser({
        email: `driver.${i}.${randomUUID().slice(0, 8)}@bench.example`,
        name: `Driver ${i}`,
        roles: ['OrgDriver'],
        org_id: org.id,
        confirmed_at: new Date().toISOString(),
      });
      const depot = { latitude: 1.25 + (i % 25) * 0.008, longitude: 103.65 + Math.floor(i / 25) * 0.01 };
      return { id: user.id, token: await tokenFor(user.id, ['OrgDriver']), depot, runsheet: `RS-${i}` };
    }),
  );
  const items: Record<string, unknown>[] = [];
  for (const [i, driver] of fleet.entries()) {
    const point = (n: number) => ({ latitude: driver.depot.latitude + n * 0.004, longitude: driver.depot.longitude });
    const tasks = Array.from({ length: TASKS }, (_, t) => ({
      id: `${driver.runsheet}-T${t}`,
      task_ref: `LE-${i}-${t}`,
      from_address: { city: 'Singapore', ...point(2 * t) },
      to_address: { city: 'Singapore', ...point(2 * t + 1) },
      from_time_window: { start_time_utc: at(-30), end_time_utc: at(5 + ((i + t) % 10) * 6) },
      to_time_window: { start_time_utc: at(-30), end_time_utc: at(10 + ((i + t) % 10) * 6) },
    }));
    const stops = tasks.flatMap((task, t) => [
      { task_id: task.id, kind: 'pickup', ...point(2 * t) },
      { task_id: task.id, kind: 'dropoff', ...point(2 * t + 1) },
    ]);
    items.push({
      ...runsheetKey(planId, driver.runsheet),
      entity: 'runsheet',
      id: driver.runsheet,
      tasks,
      stops,
      travel: { speed_kmh: 30, detour_factor: 1.3 },
    });
    items.push({
      ...assignKey(planId, driver.runsheet),
      ...driverRunsheetKeys(driver.id, driver.runsheet, planId),
      ...liveRunsheetKeys(org.id, driver.id, driver.runsheet),
      entity: 'runsheet_assignment',
      pair_id: randomUUID(),
      driver_id: driver.id,
      driver_name: `Driver ${i}`,
      assigned_at: new Date().toISOString(),
      happened_at_utc: new Date().toISOString(),
    });
  }
  await putAll(mainTableName(), items, 8);

  const seen = new Map<string, number>();
  const socket: WebSocket = await subscribedSocket(host.url, planner, `planning.${planId}`);
  socket.on('message', (data) => {
    const frame = JSON.parse(data.toString()) as { name?: string; id?: string };
    if (frame.name === 'task.late_risk' || frame.name === 'task.back_on_time') {
      seen.set(`${frame.name} ${frame.id}`, (seen.get(`${frame.name} ${frame.id}`) ?? 0) + 1);
    }
  });
  const units = { fixes: 0, rcu: 0, wcu: 0, checks: 0 };
  const observe = (tally: { calls: number; rcu: number; wcu: number }, label: string) => {
    if (label !== 'L1') return;
    units.fixes++;
    units.rcu += tally.rcu;
    units.wcu += tally.wcu;
    if (tally.calls > 2) units.checks++;
  };
  tallyObservers.add(observe);

  // Each driver's fix every 10 s, the fleet spread over the period; a driver drifts 60 m a fix off its route.
  const freshness: number[] = [];
  const answers = { fixes: 0, failed: 0 };
  const rounds = Math.max(1, Math.round((minutes * 60_000) / FIX_EVERY_MS));
  const loopStart = Date.now();
  let sent = 0;
  const sendOne = async (driver: (typeof fleet)[number], round: number, index: number) => {
    const position = {
      latitude: driver.depot.latitude - round * 0.0005,
      longitude: driver.depot.longitude - round * 0.0003,
    };
    const sentAt = Date.now();
    const fix = await call(host.url, 'PUT', '/v1/driver/location', driver.token, {
      ...position,
      client_time_utc: new Date(sentAt).toISOString(),
    });
    if (fix.status !== 200) answers.failed++;
    answers.fixes++;
    if ((sent + index) % SAMPLE_EVERY !== 0) return;
    // Read X22 until it reckons from this fix (its `eta_updated_at` at or after the fix was sent).
    for (;;) {
      const read = await call(host.url, 'GET', `/v1/plannings/${planId}/runsheets/${driver.runsheet}`, planner);
      const runsheet = read.body['runsheet'] as { eta_updated_at?: string | null } | undefined;
      const reckoned = runsheet?.eta_updated_at ? Date.parse(runsheet.eta_updated_at) : 0;
      if (reckoned >= sentAt || Date.now() - sentAt > 120_000) {
        freshness.push(Date.now() - sentAt);
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  };
  for (let round = 0; round < rounds; round++) {
    const roundStart = loopStart + round * FIX_EVERY_MS;
    await Promise.all(
      fleet.map(async (driver, index) => {
        // The fleet spread over the 10 s.
        await new Promise((resolve) =>
          setTimeout(resolve, Math.max(0, roundStart + (index / drivers) * FIX_EVERY_MS - Date.now())),
        );
        await sendOne(driver, round, index);
      }),
    );
    sent += drivers;
  }
  const elapsed = (Date.now() - loopStart) / 1000;
  await new Promise((resolve) => setTimeout(resolve, 2000));
  tallyObservers.delete(observe);
  socket.close();

  const events = [...seen.keys()];
  const duplicates = [...seen.values()].filter((n) => n > 1).length;
  const count = (name: string) => events.filter((key) => key.startsWith(`${name} `)).length;
  console.log(
    `\n## Live ETAs and stops at risk: ${drivers} drivers on built runsheets of ${2 * TASKS} stops, an L1 every ${FIX_EVERY_MS / 1000} s, ${rounds} rounds (${minutes} min asked, ${elapsed.toFixed(0)} s taken)`,
  );
  console.log(
    `fixes: ${answers.fixes} sent, ${answers.failed} not answered 200; ${(answers.fixes / elapsed).toFixed(0)}/s (asked ${(drivers / (FIX_EVERY_MS / 1000)).toFixed(0)}/s)`,
  );
  console.log(
    `ETA freshness after a fix (fix sent → an X22 answer reckoned from it; ${freshness.length} sampled): p50 ${percentile(freshness, 50)} ms  p95 ${percentile(freshness, 95)} ms  max ${Math.max(...freshness)} ms (goal p95 ≤ 60 000 ms)`,
  );
  const perFix = (n: number) => (units.fixes ? n / units.fixes : 0).toFixed(3);
  console.log(
    `units per fix: ${perFix(units.rcu)} RCU, ${perFix(units.wcu)} WCU (${units.fixes} L1 tallied; ${units.checks} checked stops at risk: ${perFix(units.checks)} a fix; a fix without a check: 0.5 RCU, 1 WCU)`,
  );
  console.log(
    `risk events on planning.<id>: ${count('task.late_risk')} task.late_risk, ${count('task.back_on_time')} task.back_on_time; sent more than once: ${duplicates}`,
  );
  await gateway.idle();
}

if (process.argv[1]?.endsWith('live-etas.ts')) {
  const flag = (name: string) => process.argv.find((arg) => arg.startsWith(`--${name}=`))?.split('=')[1];
  const { stopBenchHost } = await import('./host.ts');
  await benchLiveEtas({ drivers: Number(flag('drivers') ?? 500), minutes: Number(flag('minutes') ?? 5) });
  await stopBenchHost();
}
