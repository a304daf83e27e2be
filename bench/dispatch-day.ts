/**
 * A dispatch day (issue 34, contract 4.7) played over HTTP against the local host: 500 runsheets and 700 drivers in
 * one city, some drivers off duty (X15), some with a service type the runsheets do not have (A21 against P5's
 * `service_type`), one job (P9: 3 candidates, short offers, 3 waves). Drivers learn of offers from the planning's
 * `pair.broadcast` events (the push that wakes their app), read them with X12 and answer with R6/R7: each
 * (driver, runsheet) draws from a seeded generator: accept 40 %, decline 40 %, let it expire 20 %. A driver accepts
 * at most once (win or lose) and then lets their other offers be; one winner withdraws (X19).
 *
 * It prints how the day ended (won, unassigned by reason, the counts adding up), the checks (no driver over the
 * limit, no offer to an ineligible driver, no driver offered one runsheet twice), waves per runsheet, the time from
 * the job's start to each win, and the DynamoDB units of the job per pair, of an accept, and of the wave worker per
 * runsheet offered again (the tallies the host reports for each request, queued job and sweep part). Drivers and the
 * planner are seeded through the domain (a login is an argon2 hash: 700 of them would be the bench); every other
 * step is an HTTP call.
 */
import './env.ts';
import type WebSocket from 'ws';
import { type Tally, tallyObservers } from '#shared/db/capacity';
import { startBenchHost, stopBenchHost, subscribedSocket } from './host.ts';
import { benchOrganisation, call as httpCall, type Json } from './http.ts';

// Smaller days for a quick try: DISPATCH_DAY_RUNSHEETS=50 DISPATCH_DAY_DRIVERS=70 npx tsx bench/dispatch-day.ts
const RUNSHEETS = Number(process.env['DISPATCH_DAY_RUNSHEETS'] ?? 500);
const DRIVERS = Number(process.env['DISPATCH_DAY_DRIVERS'] ?? 700);
const SEED = 34;
const SETTINGS = { max_candidates: 3, offer_ttl_s: 10, max_waves: 3, max_runsheets_per_driver: 1 };
/** Drivers off duty, and drivers whose only service type is one no runsheet asks for. */
const OFF_DUTY_SHARE = 0.1;
const OTHER_SERVICE_SHARE = 0.1;
/** Runsheets that name a service type (the rest leave it open). */
const TYPED_RUNSHEET_SHARE = 0.8;
/** The successful accept whose driver withdraws (X19). */
const WITHDRAWING_ACCEPT = 25;
/** The day is called off after this long, whatever is still offered. */
const DAY_LIMIT_MS = 300_000;

type Answer = 'accept' | 'decline' | 'expire';
interface Driver {
  id: string;
  token: string;
  offDuty: boolean;
  serviceTypes: string[];
  accepted: boolean;
  seen: Set<string>;
}
interface Status {
  current_state: string;
  action: string;
  reason?: string | null;
  saved_at_utc: string;
}
interface PairRecord {
  id: string;
  pair: { runsheet: { id: string }; driver: { id: string } };
  statuses: Status[];
  current_state: string;
}
interface RunsheetSummary {
  id: string;
  service_type?: string;
  status: string;
  assigned_driver?: { id: string };
  assigned_at?: string;
  unassigned_reason?: { code: string; detail: string; excluded: Record<string, number> };
}

/** mulberry32: a small seeded generator, so the day's drivers and answers are the same on every run. */
function seeded(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A driver's answer to one runsheet: the same for the same driver and runsheet on every run. */
function answerOf(driverIndex: number, runsheetId: string): Answer {
  let hash = 2166136261 ^ SEED;
  for (const char of `${driverIndex}:${runsheetId}`) hash = Math.imul(hash ^ char.charCodeAt(0), 16777619);
  const u = seeded(hash)();
  return u < 0.4 ? 'accept' : u < 0.8 ? 'decline' : 'expire';
}

const quantile = (sorted: number[], q: number) =>
  sorted.length === 0 ? Number.NaN : sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
const pct = (part: number, whole: number) => `${((100 * part) / whole).toFixed(1)} %`;
const fmt = (n: number) => (Number.isInteger(n) ? String(n) : n.toFixed(2));

export async function benchDispatchDay() {
  process.env['TOKEN_GENERATION_CACHE_MS'] = '0';
  const host = await startBenchHost('dispatch-day');
  const base = host.url;
  const { createUser } = await import('#shared/accounts/users');
  const { mapLimited } = await import('#shared/concurrency');

  const call = (method: string, path: string, token: string, body?: unknown) =>
    httpCall(base, method, path, token, body);
  const must = async (method: string, path: string, token: string, body?: unknown) => {
    const reply = await call(method, path, token, body);
    if (reply.status >= 300) throw new Error(`${method} ${path} → ${reply.status} ${JSON.stringify(reply.body)}`);
    return reply.body;
  };

  const retried = async (method: string, path: string, token: string) => {
    for (let attempt = 0; ; attempt++) {
      const reply = await call(method, path, token);
      if (reply.status < 500 || attempt >= 10) {
        if (reply.status >= 300) throw new Error(`${method} ${path} → ${reply.status} ${JSON.stringify(reply.body)}`);
        return reply.body;
      }
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
  };

  // Every tally the host reports, by label (an operation id, `queue:<kind>` or `sweep:<part>`).
  const tallies: { label: string; tally: Tally; status: number | undefined; ms: number }[] = [];
  const observer = (tally: Tally, label: string, status?: number, ms = 0) => tallies.push({ label, tally, status, ms });

  // ----- the city: an organisation, its planner and its drivers -----
  const random = seeded(SEED);
  const { org, tokenFor, plannerUser } = await benchOrganisation('Dispatch day');
  const planner = await tokenFor(plannerUser.id, ['OrgAdmin']);
  const seedingStarted = performance.now();
  const profiles = Array.from({ length: DRIVERS }, () => {
    const offDuty = random() < OFF_DUTY_SHARE;
    const kind = random();
    const serviceTypes = kind < OTHER_SERVICE_SHARE ? ['ltl'] : kind < 0.4 ? ['car', 'motorcycle'] : [];
    // One city: a 20 km × 20 km box around the centre of Singapore.
    return { offDuty, serviceTypes, latitude: 1.26 + random() * 0.18, longitude: 103.72 + random() * 0.18 };
  });
  const drivers: Driver[] = await mapLimited(profiles, 8, async (profile, i) => {
    const user = await createUser({
      email: `dd${i}.${org.id.slice(0, 8)}@bench.example`,
      name: `Driver ${i}`,
      roles: ['OrgDriver'],
      org_id: org.id,
      confirmed_at: new Date().toISOString(),
    });
    const token = await tokenFor(user.id, ['OrgDriver']);
    if (profile.serviceTypes.length > 0) {
      const me = (await must('GET', '/v1/me', token)) as { user: { driver_profile: { version_rev: string } } };
      await must('PUT', '/v1/driver/me', token, {
        user: {
          user: {
            driver_profile: { version_rev: me.user.driver_profile.version_rev, service_types: profile.serviceTypes },
          },
        },
      });
    }
    if (profile.offDuty) await must('PUT', '/v1/driver/duty', token, { on_duty: false });
    await must('PUT', '/v1/driver/location', token, {
      latitude: profile.latitude,
      longitude: profile.longitude,
      client_time_utc: new Date().toISOString(),
    });
    return {
      id: user.id,
      token,
      offDuty: profile.offDuty,
      serviceTypes: profile.serviceTypes,
      accepted: false,
      seen: new Set<string>(),
    };
  });
  const driverIndex = new Map(drivers.map((d, i) => [d.id, i]));

  // ----- the planning: runsheets (P5), drivers (P7) -----
  const planning = (await must('POST', '/v1/plannings', planner, { name: 'Dispatch day' })) as { id: string };
  const planId = planning.id;
  const runsheetTypes = new Map<string, string | undefined>();
  for (let i = 0; i < RUNSHEETS; i += 90) {
    const runsheets = Array.from({ length: Math.min(90, RUNSHEETS - i) }, (_, j) => {
      const id = `RS-${i + j}`;
      const serviceType = random() < TYPED_RUNSHEET_SHARE ? 'car' : undefined;
      runsheetTypes.set(id, serviceType);
      return {
        id,
        name: `Runsheet ${i + j}`,
        ...(serviceType ? { service_type: serviceType } : {}),
        tasks: [
          { id: `t-${i + j}`, from_address: { latitude: 1.26 + random() * 0.18, longitude: 103.72 + random() * 0.18 } },
        ],
      };
    });
    await must('POST', `/v1/plannings/${planId}/runsheets`, planner, { runsheets });
  }
  for (let i = 0; i < DRIVERS; i += 90) {
    await must('POST', `/v1/plannings/${planId}/drivers`, planner, {
      drivers: drivers.slice(i, i + 90).map((d) => ({ id: d.id })),
    });
  }
  const seedingSeconds = (performance.now() - seedingStarted) / 1000;

  // ----- the day -----
  // The planner watches the planning; each `pair.broadcast` wakes its driver, who reads their offers (X12).
  const socket: WebSocket = await subscribedSocket(base, planner, `planning.${planId}`);
  const broadcasts: { runsheet_id: string; driver_id: string; wave: number; pair_id: string }[] = [];
  const wake = new Set<number>();
  let wakeUp: (() => void) | undefined;
  socket.on('message', (raw) => {
    const frame = JSON.parse(raw.toString()) as { type?: string; name?: string; data?: Json };
    if (frame.type !== 'event' || frame.name !== 'pair.broadcast' || !frame.data) return;
    const data = frame.data as { runsheet_id: string; driver_id: string; wave?: number; pair_id: string };
    broadcasts.push({ ...data, wave: data.wave ?? 1 });
    const index = driverIndex.get(data.driver_id);
    if (index !== undefined) wake.add(index);
    wakeUp?.();
  });

  const answers = { accepted: 0, refused: 0, declined: 0, left: 0, late: 0, failed: 0, polls: 0 };
  /** How long each accept took, as the driver's app saw it (ms). */
  const acceptMs: number[] = [];
  let withdrawn: { driver: string; runsheet: string } | undefined;
  const answer = async (index: number) => {
    const driver = drivers[index]!;
    answers.polls++;
    const polled = await call('GET', '/v1/driver/offers?per_page=200', driver.token);
    if (polled.status !== 200) {
      // The busy host failed the poll: the app asks again on its next wake.
      wake.add(index);
      return;
    }
    const page = polled.body as { offers: PairRecord[] };
    for (const offer of page.offers) {
      if (offer.current_state !== 'broadcasted' || driver.seen.has(offer.id)) continue;
      driver.seen.add(offer.id);
      const choice = driver.accepted ? 'expire' : answerOf(index, offer.pair.runsheet.id);
      if (choice === 'expire') {
        answers.left++;
        continue;
      }
      const action = choice === 'accept' ? 'accepted' : 'rejected';
      const asked = performance.now();
      const reply = await call('POST', `/v1/broadcast-plans/${planId}/pairs/${offer.id}/${action}`, driver.token, {
        happened_at_utc: new Date().toISOString(),
      });
      if (choice === 'accept') acceptMs.push(performance.now() - asked);
      if (reply.status >= 500 || reply.status === 0) {
        // The host gave up on it (API Gateway's 29 s, a dependency, a reset connection): the driver's app would retry;
        // this one does not.
        answers.failed++;
        if (choice === 'accept') driver.accepted = true;
        continue;
      }
      if (choice === 'decline') {
        if (reply.status === 200) answers.declined++;
        else answers.late++;
        continue;
      }
      driver.accepted = true;
      if (reply.status !== 200) {
        // Another driver won it first, or the offer closed (at capacity, expired) while the driver read it.
        answers[reply.status === 409 ? 'refused' : 'late']++;
        continue;
      }
      answers.accepted++;
      if (answers.accepted === WITHDRAWING_ACCEPT && !withdrawn) {
        withdrawn = { driver: driver.id, runsheet: offer.pair.runsheet.id };
        await must('POST', `/v1/broadcast-plans/${planId}/pairs/${offer.id}/withdrawn`, driver.token, {
          happened_at_utc: new Date().toISOString(),
          reason: 'the van broke down',
        });
      }
    }
  };
  let dayOver = false;
  const drivingApps = Array.from({ length: 6 }, async () => {
    while (!dayOver) {
      const next = wake.values().next();
      if (next.done) {
        await new Promise<void>((resolve) => {
          wakeUp = resolve;
          setTimeout(resolve, 500);
        });
        continue;
      }
      wake.delete(next.value);
      await answer(next.value);
    }
  });

  /** X14, every page; a page the busy host fails (5xx) is asked again. */
  const runsheetsNow = async () => {
    const all: RunsheetSummary[] = [];
    let token: string | null = null;
    do {
      const page = (await retried(
        'GET',
        `/v1/plannings/${planId}/runsheets?per_page=200${token ? `&page_token=${encodeURIComponent(token)}` : ''}`,
        planner,
      )) as { runsheets: RunsheetSummary[]; meta: { next_page_token: string | null } };
      all.push(...page.runsheets);
      token = page.meta.next_page_token;
    } while (token);
    return all;
  };

  tallyObservers.add(observer);
  const { version_rev } = (await must('GET', `/v1/plannings/${planId}`, planner)) as { version_rev: string };
  const jobStart = Date.now();
  await must('POST', `/v1/plannings/${planId}/job`, planner, { version_rev, ...SETTINGS });
  let final: RunsheetSummary[] = [];
  let settled = false;
  while (Date.now() - jobStart < DAY_LIMIT_MS) {
    await new Promise((resolve) => setTimeout(resolve, 10_000));
    // A poll the overloaded host fails is skipped; the next one comes 10 s later.
    const now = await runsheetsNow().catch(() => undefined);
    if (!now) continue;
    final = now;
    if (final.every((r) => r.status !== 'offered' && r.status !== 'open')) {
      settled = true;
      break;
    }
  }
  const daySeconds = (Date.now() - jobStart) / 1000;
  dayOver = true;
  await Promise.all(drivingApps);
  tallyObservers.delete(observer);

  // ----- what the day left -----
  // R2 pages (1 000 a page): a large day is several pages.
  const pairs: PairRecord[] = [];
  for (let token = ''; ; ) {
    const page = (await must('GET', `/v1/broadcast-plans/${planId}/pairs${token}`, planner)) as {
      pair_records: PairRecord[];
      meta: { next_page_token: string | null };
    };
    pairs.push(...page.pair_records);
    if (!page.meta.next_page_token) break;
    token = `?page_token=${encodeURIComponent(page.meta.next_page_token)}`;
  }
  const byStatus = new Map<string, number>();
  for (const r of final) byStatus.set(r.status, (byStatus.get(r.status) ?? 0) + 1);
  const won = final.filter((r) => r.status === 'assigned');
  const unassigned = final.filter((r) => r.status === 'unassigned');
  const byCode = new Map<string, number>();
  for (const r of unassigned) {
    const code = r.unassigned_reason?.code ?? '(none)';
    byCode.set(code, (byCode.get(code) ?? 0) + 1);
  }
  const winsPerDriver = new Map<string, number>();
  for (const r of won) winsPerDriver.set(r.assigned_driver!.id, (winsPerDriver.get(r.assigned_driver!.id) ?? 0) + 1);
  const overLimit = [...winsPerDriver.values()].filter((n) => n > SETTINGS.max_runsheets_per_driver).length;

  // An offer is to an ineligible driver when the driver was off duty, lacks the runsheet's service type, or had
  // already won a runsheet (and not withdrawn it) when it was sent.
  const savedAt = (pair: PairRecord, action: string) =>
    pair.statuses.find((s) => s.action === action)?.saved_at_utc ?? undefined;
  const wonAt = new Map<string, string>();
  for (const pair of pairs) {
    const at = savedAt(pair, 'accepted');
    if (at && pair.current_state === 'accepted') wonAt.set(pair.pair.driver.id, at);
  }
  const ineligible = { off_duty: 0, service_type: 0, at_capacity: 0, offered_twice: 0 };
  const offeredPairs = new Set<string>();
  for (const pair of pairs) {
    const driver = drivers[driverIndex.get(pair.pair.driver.id)!]!;
    const runsheetType = runsheetTypes.get(pair.pair.runsheet.id);
    const key = `${pair.pair.runsheet.id}/${driver.id}`;
    if (offeredPairs.has(key)) ineligible.offered_twice++;
    offeredPairs.add(key);
    if (driver.offDuty) ineligible.off_duty++;
    if (runsheetType && driver.serviceTypes.length > 0 && !driver.serviceTypes.includes(runsheetType)) {
      ineligible.service_type++;
    }
    const sent = savedAt(pair, 'broadcast');
    const win = wonAt.get(driver.id);
    if (sent && win && win < sent && pair.current_state !== 'accepted') ineligible.at_capacity++;
  }

  const wavesOf = new Map<string, number>();
  for (const b of broadcasts) wavesOf.set(b.runsheet_id, Math.max(wavesOf.get(b.runsheet_id) ?? 0, b.wave));
  const waveHistogram = new Map<number, number>();
  for (const r of final) {
    const waves = wavesOf.get(r.id) ?? 0;
    waveHistogram.set(waves, (waveHistogram.get(waves) ?? 0) + 1);
  }
  const waveOnePairs = broadcasts.filter((b) => b.wave === 1).length;
  const laterWaves = new Set(broadcasts.filter((b) => b.wave > 1).map((b) => `${b.runsheet_id}#${b.wave}`)).size;
  const laterPairs = broadcasts.filter((b) => b.wave > 1).length;
  const winSeconds = won.map((r) => (Date.parse(r.assigned_at!) - jobStart) / 1000).sort((a, b) => a - b);

  const sum = (label: string, status?: number) => {
    const mine = tallies.filter((t) => t.label === label && (status === undefined || t.status === status));
    return mine.reduce(
      (acc, { tally }) => ({
        n: acc.n + 1,
        rcu: acc.rcu + tally.rcu,
        wcu: acc.wcu + tally.wcu,
        calls: acc.calls + tally.calls,
      }),
      { n: 0, rcu: 0, wcu: 0, calls: 0 },
    );
  };
  const job = sum('queue:planning');
  const accepts = sum('R6', 200);
  const waveWorker = sum('sweep:waves');
  const expiry = sum('sweep:expiry');

  // ----- the figures -----
  console.log(
    `\n## Dispatch day: ${RUNSHEETS} runsheets, ${DRIVERS} drivers in one city (seed ${SEED}); P9 ${JSON.stringify(SETTINGS)}`,
  );
  console.log(
    `drivers: ${drivers.filter((d) => d.offDuty).length} off duty, ${drivers.filter((d) => d.serviceTypes.includes('ltl')).length} with only a service type no runsheet has (ltl); runsheets: ${[...runsheetTypes.values()].filter(Boolean).length} ask for 'car', the rest any; seeding ${seedingSeconds.toFixed(1)} s`,
  );
  console.log(
    `the day: ${daySeconds.toFixed(1)} s from P9 until no runsheet was offered${settled ? '' : ` (NOT SETTLED: called off after ${DAY_LIMIT_MS / 1000} s)`}`,
  );
  console.log(
    `answers: ${answers.accepted} accepts won, ${answers.refused} accepts refused (409: a rival had won, or the offer had closed), ${answers.declined} declines, ${answers.left} offers left to expire or close, ${answers.late} answers too late, ${answers.failed} answers failed (5xx or no answer); ${answers.polls} X12 polls`,
  );
  const acceptSorted = acceptMs.sort((a, b) => a - b);
  console.log(
    `an accept as the driver saw it: median ${Math.round(quantile(acceptSorted, 0.5))} ms, p90 ${Math.round(quantile(acceptSorted, 0.9))} ms, max ${Math.round(quantile(acceptSorted, 1))} ms`,
  );
  if (withdrawn) console.log(`withdrawn (X19): driver ${withdrawn.driver} gave back ${withdrawn.runsheet}`);
  console.log(`runsheets won: ${won.length} of ${RUNSHEETS} (${pct(won.length, RUNSHEETS)})`);
  console.log(
    `unassigned: ${unassigned.length} (${pct(unassigned.length, RUNSHEETS)}): ${[...byCode].map(([code, n]) => `${code} ${n}`).join(', ') || 'none'}`,
  );
  const sample = unassigned.find((r) => r.unassigned_reason?.detail)?.unassigned_reason?.detail;
  if (sample) console.log(`  e.g. "${sample}"`);
  const statusLine = [...byStatus].map(([s, n]) => `${s} ${n}`).join(' + ');
  const total = [...byStatus.values()].reduce((a, b) => a + b, 0);
  const codes = [...byCode.values()].reduce((a, b) => a + b, 0);
  console.log(
    `adds up: ${statusLine} = ${total} of ${RUNSHEETS} ${total === RUNSHEETS ? 'yes' : 'NO'}; reason codes ${codes} = unassigned ${unassigned.length} ${codes === unassigned.length ? 'yes' : 'NO'}`,
  );
  console.log(
    `drivers over the limit (${SETTINGS.max_runsheets_per_driver}): ${overLimit}; drivers with a runsheet: ${winsPerDriver.size}`,
  );
  console.log(
    `offers to ineligible drivers: ${ineligible.off_duty} off duty, ${ineligible.service_type} wrong service type, ${ineligible.at_capacity} at capacity, ${ineligible.offered_twice} offered the same runsheet twice (of ${pairs.length} offers)`,
  );
  console.log(
    `waves per runsheet: ${[...waveHistogram]
      .sort(([a], [b]) => a - b)
      .map(([w, n]) => `${w} wave${w === 1 ? '' : 's'}: ${n}`)
      .join(', ')}; offers by wave: ${[1, 2, 3, 4, 5]
      .map((w) => broadcasts.filter((b) => b.wave === w).length)
      .filter((n, i) => n > 0 || i < 3)
      .join(' / ')}`,
  );
  console.log(
    `time from the job's start to a win: median ${quantile(winSeconds, 0.5).toFixed(1)} s, p90 ${quantile(winSeconds, 0.9).toFixed(1)} s, last ${quantile(winSeconds, 1).toFixed(1)} s (offer_ttl_s ${SETTINGS.offer_ttl_s})`,
  );
  // How long the background movers took: a sweep that outlasts its period delays the next (one sweep at a time).
  const durations = (label: string) => {
    const ms = tallies
      .filter((t) => t.label === label)
      .map((t) => t.ms)
      .sort((a, b) => a - b);
    return `${ms.length} runs, median ${(quantile(ms, 0.5) / 1000).toFixed(1)} s, p90 ${(quantile(ms, 0.9) / 1000).toFixed(1)} s, max ${(quantile(ms, 1) / 1000).toFixed(1)} s`;
  };
  console.log(
    `background: the job ${durations('queue:planning')}; sweep:expiry ${durations('sweep:expiry')}; sweep:waves ${durations('sweep:waves')}`,
  );
  console.log('\n| DynamoDB units | scopes | RCU | WCU | per |');
  console.log('|---|---|---|---|---|');
  console.log(
    `| the job (queue:planning) | ${job.n} | ${fmt(job.rcu)} | ${fmt(job.wcu)} | ${fmt(job.rcu / waveOnePairs)} RCU, ${fmt(job.wcu / waveOnePairs)} WCU per pair (${waveOnePairs} pairs of wave 1) |`,
  );
  console.log(
    `| accepts won (R6, 200) | ${accepts.n} | ${fmt(accepts.rcu)} | ${fmt(accepts.wcu)} | ${fmt(accepts.rcu / accepts.n)} RCU, ${fmt(accepts.wcu / accepts.n)} WCU per accept (rivals' closes included) |`,
  );
  console.log(
    `| the wave worker (sweep:waves) | ${waveWorker.n} sweeps | ${fmt(waveWorker.rcu)} | ${fmt(waveWorker.wcu)} | ${fmt(waveWorker.rcu / laterWaves)} RCU, ${fmt(waveWorker.wcu / laterWaves)} WCU per runsheet offered again (${laterWaves} waves after the first, ${laterPairs} offers; ${fmt(waveWorker.wcu / laterPairs)} WCU per offer; the unassigned judgements included) |`,
  );
  console.log(`| the offer expiry (sweep:expiry) | ${expiry.n} sweeps | ${fmt(expiry.rcu)} | ${fmt(expiry.wcu)} | |`);
  const others = [...new Set(tallies.map((t) => t.label))]
    .filter((label) => !['queue:planning', 'sweep:waves', 'sweep:expiry'].includes(label))
    .sort();
  for (const label of others) {
    const all = sum(label);
    console.log(
      `| ${label} | ${all.n} | ${fmt(all.rcu)} | ${fmt(all.wcu)} | ${fmt(all.rcu / all.n)} RCU, ${fmt(all.wcu / all.n)} WCU each |`,
    );
  }
  socket.close();
}

if (process.argv[1]?.endsWith('dispatch-day.ts')) {
  await benchDispatchDay();
  await stopBenchHost();
}
