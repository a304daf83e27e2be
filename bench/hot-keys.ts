/**
 * Hot partitions (issue 45): K organisations' dispatch days at once against the local host, through a proxy in front
 * of DynamoDB that tallies every write per partition key value, the table's and each index's
 * (test/support/key-tally-proxy.ts). Prints the hottest keys, their share of all writes and their busiest second, for
 * K = 1 and K = 8; then one big planning's job (1 000 runsheets × 1 500 drivers, 5 candidates) and its busiest key
 * second. Goals: the hottest key's share at K = 8 at most 1/8 of the hottest at K = 1 (within noise) for every key but a
 * planning's own (`BPLAN#<plan>#<n>`, `WAVES#<plan>#<n>`), and no key over 300 writes in one second during the big job.
 *
 * Runs in a child process of its own (`npm run bench` starts it): the functions' DynamoDB client is made once a
 * process, and this one must point at the proxy. Smaller runs: HOT_KEYS_RUNSHEETS, HOT_KEYS_DRIVERS (a day's, default
 * 30 and 45), HOT_KEYS_BIG_RUNSHEETS, HOT_KEYS_BIG_DRIVERS (default 1 000 and 1 500; 0 runsheets: no job); `npx tsx bench/hot-keys.ts`.
 */
import './env.ts';
import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT } from '#lib/paths';
import { type KeyTallyProxy, type KeyWrite, startKeyTallyProxy } from '../test/support/key-tally-proxy.ts';
import { benchOrganisation, call as httpCall } from './http.ts';

const RUNSHEETS = Number(process.env['HOT_KEYS_RUNSHEETS'] ?? 30);
const DRIVERS = Number(process.env['HOT_KEYS_DRIVERS'] ?? 45);
const BIG_RUNSHEETS = Number(process.env['HOT_KEYS_BIG_RUNSHEETS'] ?? 1000);
const BIG_DRIVERS = Number(process.env['HOT_KEYS_BIG_DRIVERS'] ?? 1500);
const SETTINGS = { max_candidates: 3, offer_ttl_s: 6, max_waves: 3, max_runsheets_per_driver: 1 };
/** A day is called off after this long, whatever is still offered. */
const DAY_LIMIT_MS = 120_000;
/** The busiest second any key may take in the big job. */
const SECOND_LIMIT = 300;
/** A planning's own keys: the share goal leaves them out (they grow with the planning, not the service). */
const PLANNING_OWN = /^(PK=BPLAN#|GSI3PK=WAVES#[0-9a-f]{8}-)/;

/** Starts the bench in a child process and waits for it (npm run bench). */
export async function benchHotKeys(): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'bench', 'hot-keys.ts')], {
      stdio: 'inherit',
      env: process.env,
    });
    child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`bench/hot-keys.ts exited ${code}`))));
  });
}

interface KeyStats {
  key: string;
  writes: number;
  busiest: number;
}

/** The writes of each key (a table's and an index's entries of one value are one partition each), hottest first. */
function hottest(writes: KeyWrite[]): { keys: KeyStats[]; total: number } {
  const byKey = new Map<string, Map<number, number>>();
  for (const w of writes) {
    const name = `${w.where} ${w.key}`;
    const seconds = byKey.get(name) ?? new Map<number, number>();
    seconds.set(w.second, (seconds.get(w.second) ?? 0) + 1);
    byKey.set(name, seconds);
  }
  const keys = [...byKey].map(([key, seconds]) => ({
    key,
    writes: [...seconds.values()].reduce((a, b) => a + b, 0),
    busiest: Math.max(...seconds.values()),
  }));
  keys.sort((a, b) => b.writes - a.writes);
  return { keys, total: writes.length };
}

const pct = (part: number, whole: number) => `${((100 * part) / whole).toFixed(2)} %`;
/** The key with its planning's and organisations' ids shortened, for the table. */
const shown = (key: string) => key.replace(/[0-9a-f]{8}-[0-9a-f-]{27}/g, (id) => `${id.slice(0, 8)}…`);

function printTop(title: string, stats: { keys: KeyStats[]; total: number }, rows = 12) {
  console.log(`\n${title}: ${stats.total} writes over ${stats.keys.length} keys`);
  console.log('| key (table or index, partition key) | writes | share | busiest second |');
  console.log('|---|---|---|---|');
  for (const k of stats.keys.slice(0, rows)) {
    console.log(`| ${shown(k.key)} | ${k.writes} | ${pct(k.writes, stats.total)} | ${k.busiest} |`);
  }
}

async function run() {
  let proxy: KeyTallyProxy | undefined;
  const { startLocal } = await import('#lib/local/start');
  process.env['TOKEN_GENERATION_CACHE_MS'] = '0';
  const host = await startLocal({
    port: 0,
    dataDir: mkdtempSync(join(tmpdir(), 'dispatch-bench-hot-keys-')),
    fresh: true,
    persistent: false,
    adminEmail: 'bench@dispatch.local',
    adminPassword: 'bench-password-123',
    tablePrefix: 'bench-hot-keys-',
    frontDynamoDB: async (endpoint) => {
      proxy = await startKeyTallyProxy(endpoint);
      return proxy.url;
    },
  });
  const { createUser } = await import('#shared/accounts/users');
  const { mapLimited } = await import('#shared/concurrency');
  const { importLocations } = await import('#shared/locations/locations');
  const { addDrivers, addRunsheets, createPlanning, findPlanning } = await import('#shared/planning/plannings');

  const call = (method: string, path: string, token: string, body?: unknown) =>
    httpCall(host.url, method, path, token, body);

  /** An organisation with a planner, `drivers` located drivers and a planning of `runsheets`, made through the domain. */
  const seed = async (name: string, runsheets: number, drivers: number) => {
    const { org, tokenFor, plannerUser } = await benchOrganisation(name);
    const caller = { kind: 'user' as const, id: plannerUser.id, roles: ['OrgAdmin' as const], orgId: org.id };
    const users = await mapLimited(
      Array.from({ length: drivers }, (_, i) => i),
      8,
      (i) =>
        createUser({
          email: `hk${i}.${org.id.slice(0, 8)}@bench.example`,
          name: `Driver ${i}`,
          roles: ['OrgDriver'],
          org_id: org.id,
          confirmed_at: new Date().toISOString(),
        }),
    );
    const now = new Date().toISOString();
    // One city: a 20 km × 20 km box around the centre of Singapore.
    await importLocations(
      users.map((user, i) => ({
        id: `${org.id.slice(0, 8)}${i.toString(16).padStart(16, '0')}`,
        user_id: user.id,
        device_id: null,
        latitude: 1.26 + ((i * 37) % 100) * 0.0018,
        longitude: 103.72 + ((i * 61) % 100) * 0.0018,
        altitude: null,
        client_time_utc: now,
        client_timezone: null,
        server_time: now,
        version: 1,
        org_id: org.id,
        service_types: [],
      })),
    );
    let planning = await createPlanning(caller, name);
    for (let i = 0; i < runsheets; i += 90) {
      planning = await addRunsheets(
        caller,
        planning.id,
        Array.from({ length: Math.min(90, runsheets - i) }, (_, j) => ({
          id: `RS-${i + j}`,
          name: `Runsheet ${i + j}`,
          tasks: [
            {
              id: `t-${i + j}`,
              from_address: { latitude: 1.26 + ((i + j) % 40) * 0.0045, longitude: 103.72 + ((i + j) % 25) * 0.0072 },
            },
          ],
        })),
      );
    }
    for (let i = 0; i < drivers; i += 90) {
      planning = await addDrivers(
        caller,
        planning.id,
        users.slice(i, i + 90).map((d) => ({ id: d.id })),
      );
    }
    const tokens = await mapLimited(users, 8, (user) => tokenFor(user.id, ['OrgDriver']));
    return {
      planId: planning.id,
      versionRev: planning.version_rev,
      planner: await tokenFor(plannerUser.id, ['OrgAdmin']),
      drivers: users.map((user, i) => ({ id: user.id, token: tokens[i]! })),
    };
  };

  /** The day of one organisation: P9, drivers answering their offers (X12, R6/R7) until nothing is offered. */
  const day = async (org: Awaited<ReturnType<typeof seed>>) => {
    const started = Date.now();
    const job = await call('POST', `/v1/plannings/${org.planId}/job`, org.planner, {
      version_rev: org.versionRev,
      ...SETTINGS,
    });
    if (job.status >= 300) throw new Error(`P9 ${job.status} ${JSON.stringify(job.body)}`);
    const answered = new Set<string>();
    const won = new Set<string>();
    let settled = false;
    while (!settled && Date.now() - started < DAY_LIMIT_MS) {
      // Each driver reads their offers and answers each once: accept 40 %, decline 40 %, let it expire 20 %.
      await mapLimited(org.drivers, 4, async (driver, d) => {
        if (won.has(driver.id)) return;
        const polled = await call('GET', '/v1/driver/offers?per_page=50', driver.token);
        for (const offer of ((polled.body['offers'] ?? []) as { id: string; current_state: string }[]).filter(
          (o) => o.current_state === 'broadcasted' && !answered.has(o.id),
        )) {
          answered.add(offer.id);
          const draw = (d * 7919 + answered.size * 104729) % 10;
          if (draw >= 8) continue;
          const action = draw < 4 ? 'accepted' : 'rejected';
          const reply = await call(
            'POST',
            `/v1/broadcast-plans/${org.planId}/pairs/${offer.id}/${action}`,
            driver.token,
            {
              happened_at_utc: new Date().toISOString(),
            },
          );
          if (action === 'accepted' && reply.status === 200) {
            won.add(driver.id);
            break;
          }
        }
      });
      const page = await call('GET', `/v1/plannings/${org.planId}/runsheets?per_page=200`, org.planner);
      const statuses = ((page.body['runsheets'] ?? []) as { status: string }[]).map((r) => r.status);
      settled = statuses.length > 0 && statuses.every((s) => s !== 'offered' && s !== 'open');
      if (!settled) await new Promise((resolve) => setTimeout(resolve, 1000));
    }
    return { won: won.size, seconds: (Date.now() - started) / 1000, settled };
  };

  console.log(
    `\n## Hot partitions (issue 45): K organisations' dispatch days at once, ${RUNSHEETS} runsheets × ${DRIVERS} drivers each; P9 ${JSON.stringify(SETTINGS)}`,
  );
  const shares: Record<number, KeyStats & { share: number }> = {};
  for (const k of [1, 8]) {
    const orgs = await mapLimited(
      Array.from({ length: k }, (_, i) => i),
      2,
      (i) => seed(`Hot keys ${k}.${i}`, RUNSHEETS, DRIVERS),
    );
    proxy!.reset();
    const days = await Promise.all(orgs.map(day));
    const stats = hottest(proxy!.writes);
    printTop(
      `K = ${k}: ${days.reduce((a, d) => a + d.won, 0)} runsheets won, days of ${days.map((d) => `${d.seconds.toFixed(0)} s${d.settled ? '' : ' (called off)'}`).join(', ')}`,
      stats,
    );
    const service = stats.keys.find((key) => !PLANNING_OWN.test(key.key.split(' ')[1]!));
    if (service) shares[k] = { ...service, share: service.writes / stats.total };
    // The keys no organisation owns (no id in them: the sweeps' lists, the wave registry, the listings' shards).
    const shared = stats.keys.find((key) => !/[0-9a-f]{8}-[0-9a-f]{4}-/.test(key.key));
    if (shared) {
      console.log(
        `the hottest key with no id in it: ${shown(shared.key)} ${shared.writes} writes, ${pct(shared.writes, stats.total)}, busiest second ${shared.busiest}`,
      );
    }
  }
  const [one, eight] = [shares[1], shares[8]];
  if (one && eight) {
    console.log(
      `\nthe hottest key but a planning's own: K = 1 ${shown(one.key)} ${pct(one.share, 1)}; K = 8 ${shown(eight.key)} ${pct(eight.share, 1)}; goal ≤ ${pct(one.share / 8, 1)} (1/8 of K = 1, within noise): ${eight.share <= (one.share / 8) * 1.25 ? 'met' : 'NOT MET'}`,
    );
  }

  if (BIG_RUNSHEETS === 0) {
    await host.stop();
    await proxy?.close();
    return;
  }
  console.log(
    `\n## One planning's job: ${BIG_RUNSHEETS} runsheets × ${BIG_DRIVERS} drivers, 5 candidates (${BIG_RUNSHEETS * 5} pairs at most)`,
  );
  const big = await seed('Hot keys big', BIG_RUNSHEETS, BIG_DRIVERS);
  proxy!.reset();
  const started = Date.now();
  const job = await call('POST', `/v1/plannings/${big.planId}/job`, big.planner, {
    version_rev: big.versionRev,
    max_candidates: 5,
    offer_ttl_s: 900,
    max_waves: 1,
    max_runsheets_per_driver: 1,
  });
  if (job.status >= 300) throw new Error(`P9 ${job.status} ${JSON.stringify(job.body)}`);
  for (;;) {
    const current = await findPlanning(big.planId);
    if (current?.job && !['queued', 'processing'].includes(current.job.current_status)) break;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  const stats = hottest(proxy!.writes);
  const busiest = [...stats.keys].sort((a, b) => b.busiest - a.busiest);
  printTop(`the job, ${((Date.now() - started) / 1000).toFixed(1)} s`, { keys: busiest, total: stats.total }, 8);
  const top = busiest[0];
  console.log(
    `busiest key second: ${top ? `${shown(top.key)} ${top.busiest} writes` : 'none'}; goal ≤ ${SECOND_LIMIT}: ${!top || top.busiest <= SECOND_LIMIT ? 'met' : 'NOT MET'}`,
  );
  await host.stop();
  await proxy?.close();
}

if (process.argv[1]?.endsWith('hot-keys.ts')) {
  await run();
  process.exit(0);
}
