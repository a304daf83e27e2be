/**
 * A dispatch day, played over HTTP as the people in it would (issue 34, contract 4.7): a planner puts 40 runsheets
 * and 60 drivers of one city into a planning and starts its job; the drivers' apps poll their offers (X12) and answer
 * them (R6/R7) as a seeded die says: accept 40 %, decline 40 %, let 20 % expire. Four drivers are off duty, four
 * drive the wrong kind of vehicle for these runsheets, two phones are offline all day (their offers expire), and one
 * driver gives a won runsheet back (X19). 40 runsheets, so that 97 % leaves room for one the dice refuse. At the end, what the dispatcher sees (X14, R2, the planning's channel):
 * at least 97 % of the runsheets won, every other one unassigned with a reason whose counts add up; no driver over
 * the limit; no offer to a driver who was off duty or of the wrong type; no wave sent twice.
 *
 * Also run by the `latency` project (every DynamoDB call 2–20 ms late), where the waves' races are wider.
 */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningHost } from '../../lib/local/start.ts';
import { ROLES } from '../../shared/auth/roles.ts';
import { type Client, client, invitedMember, loginAs } from '../support/http.ts';
import { ADMIN, startTestHost } from '../support/local.ts';
import type { RunsheetSummary } from '../support/runsheets.ts';
import { openSocket } from '../support/sockets.ts';

let host: RunningHost;
let api: Client;
let planner: string;
let org: string;

const RUNSHEETS = 40;
const DRIVERS = 60;
const OFF_DUTY = new Set([3, 17, 31, 45]);
const WRONG_TYPE = new Set([5, 22, 39, 56]);
const OFFLINE = new Set([8, 50]);
/**
 * The settings, with more waves than the default 3: at 40 % acceptance a runsheet's last drivers are few
 * (the others hold a runsheet already), and it is the waves that reach them.
 */
const SETTINGS = { max_candidates: 3, offer_ttl_s: 10, max_waves: 8, max_runsheets_per_driver: 1 };

type Driver = { index: number; id: string; token: string };
type Offer = { id: string; plan: { id: string }; pair: { runsheet: { id: string } } };
type Pair = {
  id: string;
  pair: { runsheet: { id: string }; driver: { id: string } };
  current_state: string;
  statuses: { action: string; reason: string | null; current_state: string }[];
};
type Runsheet = RunsheetSummary;

const drivers: Driver[] = [];

/** The seeded die: what driver `d` does with an offer of runsheet `r` (the same every time it is asked). */
function answerOf(driver: Driver, runsheetId: string): 'accept' | 'decline' | 'expire' {
  if (OFFLINE.has(driver.index)) return 'expire';
  const roll = createHash('sha256').update(`day-1:${driver.index}:${runsheetId}`).digest().readUInt32BE(0) / 2 ** 32;
  return roll < 0.4 ? 'accept' : roll < 0.8 ? 'decline' : 'expire';
}

/** `items` by `key` (Map.groupBy, which Node 20 lacks). */
function groupBy<T, K>(items: readonly T[], key: (item: T) => K): Map<K, T[]> {
  const groups = new Map<K, T[]>();
  for (const item of items) groups.set(key(item), [...(groups.get(key(item)) ?? []), item]);
  return groups;
}

/**
 * Sends an answer as a driver's app does on a flaky network: a 503 is retried with the same event (same
 * `happened_at_utc`), which the service records once.
 */
async function answer503<T extends { status: number }>(send: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    const reply = await send();
    if (reply.status !== 503 || attempt === 6) return reply;
    await sleep(250 * attempt);
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

beforeAll(async () => {
  host = await startTestHost();
  api = client(host.url);
  const admin = (await loginAs(api, ADMIN.email, ADMIN.password)).bearer_token;
  org = (await api.post<{ id: string }>('/v1/admin/organisations', { name: 'Day', kind: 'transporter' }, admin)).body
    .id;
  planner = (await invitedMember(api, admin, 'OrgAdmin', ROLES.OrgAdmin, org)).token;
  for (let i = 0; i < DRIVERS; i += 6) {
    const batch = await Promise.all(
      Array.from({ length: Math.min(6, DRIVERS - i) }, () =>
        invitedMember(api, admin, 'OrgDriver', ROLES.OrgDriver, org),
      ),
    );
    for (const [j, member] of batch.entries()) drivers.push({ index: i + j, id: member.id, token: member.token });
  }
  // Every driver somewhere in the city; the wrong-type ones drive lorries, the others motorcycles or say nothing.
  await Promise.all(
    drivers.map(async (driver) => {
      const at = {
        latitude: 1.28 + (driver.index % 10) * 0.011,
        longitude: 103.78 + Math.floor(driver.index / 10) * 0.012,
      };
      await api.put('/v1/driver/location', { ...at, client_time_utc: new Date().toISOString() }, driver.token);
      if (OFF_DUTY.has(driver.index)) await api.put('/v1/driver/duty', { on_duty: false }, driver.token);
      const types = WRONG_TYPE.has(driver.index) ? ['lorry_10ft'] : driver.index % 2 === 0 ? ['motorcycle'] : [];
      if (types.length > 0) {
        const me = await api.get<{ user: { driver_profile: { version_rev: string } } }>('/v1/me', driver.token);
        const edit = await api.put(
          '/v1/driver/me',
          {
            user: {
              user: { driver_profile: { version_rev: me.body.user.driver_profile.version_rev, service_types: types } },
            },
          },
          driver.token,
        );
        expect(edit.status, JSON.stringify(edit.body)).toBe(200);
      }
    }),
  );
}, 300_000);
afterAll(() => host?.stop());

describe('a dispatch day (issue 34)', () => {
  it('ends with at least 97 % of runsheets won and every other one unassigned with a reason that adds up', async () => {
    const created = await api.post<{ id: string }>('/v1/plannings', { name: 'Tuesday' }, planner);
    const planId = created.body.id;
    const runsheets = Array.from({ length: RUNSHEETS }, (_, i) => ({
      id: `RS-${String(i).padStart(2, '0')}`,
      name: `Route ${i}`,
      service_type: 'motorcycle',
      tasks: [
        {
          id: `T-${i}`,
          from_address: { latitude: 1.28 + (i % 8) * 0.014, longitude: 103.78 + Math.floor(i / 8) * 0.015 },
        },
      ],
    }));
    await api.post(`/v1/plannings/${planId}/runsheets`, { runsheets }, planner);
    const ready = await api.post<{ version_rev: string }>(
      `/v1/plannings/${planId}/drivers`,
      { drivers: drivers.map((d) => ({ id: d.id })) },
      planner,
    );
    // The dispatcher's screen: the planning's channel.
    const screen = await openSocket(host.url, planner);
    screen.subscribe([`planning.${planId}`]);
    expect(await screen.when(() => screen.frames.some((f) => f.type === 'subscribed'))).toBe(true);

    const started = Date.now();
    const job = await api.post(
      `/v1/plannings/${planId}/job`,
      { version_rev: ready.body.version_rev, ...SETTINGS },
      planner,
    );
    expect(job.status).toBe(202);

    // The drivers' apps: each polls its open offers and answers each once, as its die says.
    const answered = new Set<string>();
    const refused: string[] = [];
    let withdrawn: { pairId: string; runsheetId: string; driverId: string } | undefined;
    let done = false;
    const app = async (driver: Driver) => {
      while (!done) {
        // A poll that fails (503 on a loaded machine, as on a flaky network) is simply made again next time.
        const open = await api.get<{ offers: Offer[] }>('/v1/driver/offers', driver.token);
        for (const offer of open.status === 200 ? open.body.offers : []) {
          if (answered.has(offer.id)) continue;
          const answer = answerOf(driver, offer.pair.runsheet.id);
          if (answer === 'expire') continue;
          answered.add(offer.id);
          const happened_at_utc = new Date().toISOString();
          const path = `/v1/broadcast-plans/${offer.plan.id}/pairs/${offer.id}/${answer === 'accept' ? 'accepted' : 'rejected'}`;
          const reply = await answer503(() => api.post<{ code?: string }>(path, { happened_at_utc }, driver.token));
          if (reply.status === 409) refused.push(String(reply.body.code));
          else expect(reply.status, JSON.stringify(reply.body)).toBe(200);
          // The first winner of the day gives the runsheet back a moment later (a flat tyre).
          if (reply.status === 200 && answer === 'accept' && !withdrawn) {
            withdrawn = { pairId: offer.id, runsheetId: offer.pair.runsheet.id, driverId: driver.id };
            await sleep(300);
            const event = { happened_at_utc: new Date().toISOString(), reason: 'flat tyre' };
            const back = await answer503(() =>
              api.post(`/v1/broadcast-plans/${planId}/pairs/${offer.id}/withdrawn`, event, driver.token),
            );
            expect(back.status, JSON.stringify(back.body)).toBe(200);
          }
        }
        await sleep(1500 + (driver.index % 7) * 100);
      }
    };
    const apps = drivers.map(app);

    // The dispatcher waits until no runsheet is in dispatch any more.
    let board: Runsheet[] = [];
    const deadline = Date.now() + 170_000;
    for (;;) {
      board = (await api.get<{ runsheets: Runsheet[] }>(`/v1/plannings/${planId}/runsheets?per_page=200`, planner)).body
        .runsheets;
      if (board.every((r) => r.status === 'assigned' || r.status === 'unassigned')) break;
      if (Date.now() > deadline) break;
      await sleep(1000);
    }
    done = true;
    await Promise.all(apps);
    const elapsedS = (Date.now() - started) / 1000;

    const won = board.filter((r) => r.status === 'assigned');
    const unassigned = board.filter((r) => r.status === 'unassigned');
    console.log(
      `dispatch day: ${won.length}/${RUNSHEETS} won (${((100 * won.length) / RUNSHEETS).toFixed(1)} %), ${unassigned.length} unassigned, ${refused.length} answers refused (${[...new Set(refused)].join(', ')}), ${elapsedS.toFixed(0)} s`,
    );
    for (const r of unassigned) console.log(`unassigned ${r.id}: ${JSON.stringify(r.unassigned_reason)}`);
    expect(board).toHaveLength(RUNSHEETS);
    expect(board.filter((r) => r.status !== 'assigned' && r.status !== 'unassigned')).toEqual([]);
    expect(won.length / RUNSHEETS).toBeGreaterThanOrEqual(0.97);

    const pairs = (await api.get<{ pair_records: Pair[] }>(`/v1/broadcast-plans/${planId}/pairs`, planner)).body
      .pair_records;
    const byRunsheet = groupBy(pairs, (p) => p.pair.runsheet.id);
    // Every unassigned runsheet's reason: offers counted by outcome, one per driver asked, and the drivers left out.
    for (const runsheet of unassigned) {
      const reason = runsheet.unassigned_reason!;
      const asked = byRunsheet.get(runsheet.id) ?? [];
      expect(reason.offers.rejected + reason.offers.expired + reason.offers.closed).toBe(asked.length);
      expect(reason.code).toBe(asked.length > 0 ? 'no_driver_accepted' : 'no_eligible_driver');
      expect(Object.values(reason.excluded).reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(DRIVERS);
      expect(reason.detail).toMatch(/\w/);
    }
    // No driver holds more than one runsheet; every winner is a driver who said yes to it.
    const holders = won.map((r) => r.assigned_driver!.id);
    expect(new Set(holders).size).toBe(holders.length);
    for (const runsheet of won) {
      const winner = drivers.find((d) => d.id === runsheet.assigned_driver!.id)!;
      expect(answerOf(winner, runsheet.id)).toBe('accept');
    }
    // Nobody off duty or of the wrong type was offered anything; nobody was offered one runsheet twice.
    const ineligible = new Set(
      drivers.filter((d) => OFF_DUTY.has(d.index) || WRONG_TYPE.has(d.index)).map((d) => d.id),
    );
    expect(pairs.filter((p) => ineligible.has(p.pair.driver.id))).toEqual([]);
    for (const [runsheetId, offered] of byRunsheet) {
      const to = offered.map((p) => p.pair.driver.id);
      expect(new Set(to).size, `${runsheetId} offered twice to one driver`).toBe(to.length);
    }
    // No wave sent twice: each (runsheet, wave) holds at most max_candidates offers, and each offer's event is one
    // event. A look that finds a wave's claim still standing sends that wave's records again, and an offer already
    // written is announced again with the same event id (contract 4.3: stable across redelivery; the apps
    // de-duplicate by it): a second wave would be other offers, or another id for the same offer.
    // A wave announces its offers after writing them: a driver can take one (and the board settle) before the frames
    // of that last wave reach the screen. Heard once they arrive; one never announced still fails below.
    const heard = () => new Set(screen.events('pair.broadcast').map((f) => f.data!['pair_id']));
    await screen.when(() => pairs.every((p) => heard().has(p.id)), 30_000);
    const broadcasts = screen.events('pair.broadcast');
    const waveOf = new Map(broadcasts.map((f) => [f.data!['pair_id'] as string, f.data!['wave'] as number]));
    for (const [runsheetId, offered] of byRunsheet) {
      const waves = groupBy(offered, (p) => waveOf.get(p.id) ?? 0);
      for (const [wave, inWave] of waves) {
        expect(wave, `${runsheetId}: an offer whose broadcast was not heard`).toBeGreaterThan(0);
        expect(inWave.length).toBeLessThanOrEqual(SETTINGS.max_candidates);
      }
    }
    const idsOfOffer = groupBy(broadcasts, (f) => f.data!['pair_id'] as string);
    const announcedTwice = [...idsOfOffer].filter(([, frames]) => new Set(frames.map((f) => f.id)).size > 1);
    expect(
      announcedTwice.map(([pairId]) => pairId),
      'offers announced as two events',
    ).toEqual([]);
    // The runsheet given back went back to dispatch without its driver, and the driver's pair says so.
    expect(withdrawn).toBeDefined();
    const back = pairs.find((p) => p.id === withdrawn!.pairId)!;
    expect(back.current_state).toBe('withdrawn');
    expect(back.statuses.at(-1)).toMatchObject({ action: 'withdrawn', reason: 'flat tyre' });
    const retaken = board.find((r) => r.id === withdrawn!.runsheetId)!;
    expect(retaken.assigned_driver?.id).not.toBe(withdrawn!.driverId);
    expect(screen.events('pair.withdrawn').map((f) => f.data!['pair_id'])).toEqual([withdrawn!.pairId]);
    // The dispatcher heard of every unassigned runsheet on the planning's channel (the last may be on its way).
    const unassignedHeard = () => new Set(screen.events('runsheet.unassigned').map((f) => f.data!['runsheet_id']));
    await screen.when(() => unassigned.every((r) => unassignedHeard().has(r.id)), 30_000);
    expect(new Set(screen.events('runsheet.unassigned').map((f) => f.data!['runsheet_id']))).toEqual(
      new Set(unassigned.map((r) => r.id)),
    );
    screen.socket.close();
  }, 240_000);
});
