/**
 * Planning over HTTP: a planning of 20 runsheets and 10 located drivers, the job to completed, its result and every
 * pair record; ten drivers racing to accept one runsheet (exactly one wins); offers expiring; concurrency and bad input.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningHost } from '../../lib/local/start.ts';
import { ROLES, type Role } from '../../shared/auth/roles.ts';
import { type Client, client, invitedMember, loginAs } from '../support/http.ts';
import { ADMIN, startTestHost } from '../support/local.ts';

let host: RunningHost;
let api: Client;
let admin: string;
let org: string;
let otherOrg: string;
let planner: string;
const _PASSWORD = 'a-good-long-password';
const _tag = Math.random().toString(36).slice(2, 7);
const drivers: { id: string; token: string; latitude: number; longitude: number }[] = [];

const member = async (role: Role, org: string) => {
  const { id, token } = await invitedMember(api, admin, role, ROLES[role], org);
  return { id, token };
};

const runsheet = (i: number) => ({
  id: `RS-${i}`,
  name: `Runsheet ${i}`,
  tasks: [
    {
      id: `task-${i}`,
      total_item_count: 1,
      from_address: {
        street_address: `${i} Depot Rd`,
        city: 'Singapore',
        country: 'SG',
        latitude: 1.3 + i * 0.01,
        longitude: 103.8,
      },
    },
  ],
});

type PlanningView = {
  id: string;
  org_id: string;
  version_rev: string;
  version_seq: number;
  total_runsheets: number;
  total_drivers: number;
};
type PairRecord = {
  id: string;
  pair: { runsheet: { id: string }; driver: { id: string; name: string } };
  current_state: string;
  statuses: { action: string; current_state: string; reason: string | null; expired_time: string | null }[];
};

async function jobStatus(id: string) {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const status = await api.get<{ current_status: string }>(`/v1/plannings/${id}/job/status`, planner);
    if (!['queued', 'processing'].includes(status.body.current_status) || Date.now() > deadline) return status.body;
    await new Promise((r) => setTimeout(r, 50));
  }
}

beforeAll(async () => {
  host = await startTestHost();
  api = client(host.url);
  admin = (await loginAs(api, ADMIN.email, ADMIN.password)).bearer_token;
  org = (await api.post<{ id: string }>('/v1/admin/organisations', { name: 'Fleet', kind: 'transporter' }, admin)).body
    .id;
  otherOrg = (
    await api.post<{ id: string }>('/v1/admin/organisations', { name: 'Other fleet', kind: 'transporter' }, admin)
  ).body.id;
  planner = (await member('OrgAdmin', org)).token;
  for (let i = 0; i < 10; i++) {
    const driver = await member('OrgDriver', org);
    // Driver i stands next to runsheet 2i's pickup.
    const location = { latitude: 1.3 + 2 * i * 0.01 + 0.0005, longitude: 103.8 };
    await api.put('/v1/driver/location', { ...location, client_time_utc: new Date().toISOString() }, driver.token);
    drivers.push({ ...driver, ...location });
  }
}, 180_000);
afterAll(() => host?.stop());

describe('plannings', () => {
  it('count versions, and of two updates with one version_rev exactly one wins', async () => {
    const created = await api.post<PlanningView>('/v1/plannings', { name: 'Concurrency' }, planner);
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      version_seq: 1,
      version_rev: expect.stringMatching(/^1-/),
      total_runsheets: 0,
    });
    const [a, b] = await Promise.all([
      api.put<PlanningView>(
        `/v1/plannings/${created.body.id}`,
        { name: 'A', version_rev: created.body.version_rev },
        planner,
      ),
      api.put<PlanningView>(
        `/v1/plannings/${created.body.id}`,
        { name: 'B', version_rev: created.body.version_rev },
        planner,
      ),
    ]);
    expect([a.status, b.status].sort()).toEqual([200, 409]);
    const winner = a.status === 200 ? a : b;
    expect(winner.body.version_rev).toMatch(/^2-/);
    const read = await api.get<PlanningView & { name: string }>(`/v1/plannings/${created.body.id}`, planner);
    expect(read.body.name).toBe(winner === a ? 'A' : 'B');
    expect(
      (await api.post(`/v1/plannings/${created.body.id}/job`, { version_rev: created.body.version_rev }, planner))
        .status,
    ).toBe(409);
  });

  it('refuse a driver of another organisation, an unknown runsheet, and foreign callers', async () => {
    const planning = (await api.post<PlanningView>('/v1/plannings', { name: 'Checks' }, planner)).body;
    const foreignDriver = await member('OrgDriver', otherOrg);
    const refused = await api.post(
      `/v1/plannings/${planning.id}/drivers`,
      { drivers: [{ id: drivers[0]!.id }, { id: foreignDriver.id }] },
      planner,
    );
    expect(refused.body).toMatchObject({ status: 400, errors: [{ path: 'drivers[1].id' }] });
    expect((await api.get<PlanningView>(`/v1/plannings/${planning.id}`, planner)).body.total_drivers).toBe(0);
    expect((await api.delete(`/v1/plannings/${planning.id}/runsheets/NOPE`, undefined, planner)).status).toBe(404);
    const outsider = await member('OrgAdmin', otherOrg);
    expect((await api.get(`/v1/plannings/${planning.id}`, outsider.token)).status).toBe(404);
    expect(
      (await api.post(`/v1/plannings/${planning.id}/job`, { version_rev: '1-x', max_candidates: 51 }, planner)).body,
    ).toMatchObject({ status: 400, errors: [{ path: 'max_candidates' }] });
  });
});

describe('P9’s wave and eligibility settings (contract 4.7)', () => {
  type JobView = { job: Record<string, unknown> };

  it('refuses each one out of its range or not a whole number, with a 400 at its path', async () => {
    const planning = (await api.post<PlanningView>('/v1/plannings', { name: 'Settings' }, planner)).body;
    const refused: [string, unknown][] = [
      ['max_waves', 0],
      ['max_waves', 11],
      ['max_waves', 2.5],
      ['max_waves', '3'],
      ['max_runsheets_per_driver', 0],
      ['max_runsheets_per_driver', 51],
      ['max_runsheets_per_driver', null],
      ['max_location_age_s', 59],
      ['max_location_age_s', 86_401],
      ['max_location_age_s', true],
    ];
    for (const [field, value] of refused) {
      const answer = await api.post(
        `/v1/plannings/${planning.id}/job`,
        { version_rev: planning.version_rev, [field]: value },
        planner,
      );
      expect(answer.body, `${field} ${JSON.stringify(value)}`).toMatchObject({
        status: 400,
        code: 'validation_failed',
        errors: [{ path: field }],
      });
    }
    // Nothing was started: the planning's version is still the one sent.
    const read = await api.get<PlanningView & { job?: object }>(`/v1/plannings/${planning.id}`, planner);
    expect(read.body.version_rev).toBe(planning.version_rev);
    expect(read.body.job).toBeUndefined();
  });

  it('stores them on the job and shows them wherever the job is read; defaults 3, 1 and 1800', async () => {
    // A job needs runsheets and drivers to start (issue 36 item 6): each planning gets one of each.
    const ready = async (name: string) => {
      const { id } = (await api.post<PlanningView>('/v1/plannings', { name }, planner)).body;
      await api.post(`/v1/plannings/${id}/runsheets`, { runsheets: [runsheet(0)] }, planner);
      const withDriver = await api.post<PlanningView>(
        `/v1/plannings/${id}/drivers`,
        { drivers: [{ id: drivers[0]!.id }] },
        planner,
      );
      return withDriver.body;
    };
    const given = await ready('Given settings');
    const settings = { max_waves: 10, max_runsheets_per_driver: 50, max_location_age_s: 60 };
    const started = await api.post<JobView>(
      `/v1/plannings/${given.id}/job`,
      { version_rev: given.version_rev, ...settings },
      planner,
    );
    expect(started).toMatchObject({ status: 202, body: { job: settings } });
    await jobStatus(given.id);
    expect((await api.get<JobView>(`/v1/plannings/${given.id}`, planner)).body.job).toMatchObject(settings);

    const plain = await ready('Default settings');
    const defaults = { max_waves: 3, max_runsheets_per_driver: 1, max_location_age_s: 1800 };
    const startedPlain = await api.post<JobView>(
      `/v1/plannings/${plain.id}/job`,
      { version_rev: plain.version_rev },
      planner,
    );
    expect(startedPlain.body.job).toMatchObject({ ...defaults, max_candidates: 5, offer_ttl_s: 900 });
    await jobStatus(plain.id);
    expect((await api.get<JobView>(`/v1/plannings/${plain.id}`, planner)).body.job).toMatchObject(defaults);
  });
});

describe('a planning job', () => {
  let planning: PlanningView;
  let records: PairRecord[];

  it('pairs 20 runsheets with the 3 nearest of 10 drivers, records every pair, and completes', async () => {
    planning = (await api.post<PlanningView>('/v1/plannings', { name: 'Morning run' }, planner)).body;
    await api.post(
      `/v1/plannings/${planning.id}/runsheets`,
      { runsheets: Array.from({ length: 20 }, (_, i) => runsheet(i)) },
      planner,
    );
    const withDrivers = await api.post<PlanningView>(
      `/v1/plannings/${planning.id}/drivers`,
      { drivers: drivers.map((d) => ({ id: d.id })) },
      planner,
    );
    expect(withDrivers.body).toMatchObject({ total_runsheets: 20, total_drivers: 10, version_seq: 3 });
    const started = await api.post<PlanningView>(
      `/v1/plannings/${planning.id}/job`,
      { version_rev: withDrivers.body.version_rev, max_candidates: 3, offer_ttl_s: 600 },
      planner,
    );
    expect(started.status).toBe(202);
    const status = await jobStatus(planning.id);
    expect(status).toMatchObject({
      current_status: 'completed',
      statuses: [{ status: 'queued' }, { status: 'processing' }, { status: 'completed' }],
    });
    const result = await api.get(`/v1/plannings/${planning.id}/job/result`, planner);
    expect(result.body).toMatchObject({
      total_pairs_counted: 60,
      total_runsheets_counted: 20,
      total_drivers_counted: 10,
    });
    records = (await api.get<{ pair_records: PairRecord[] }>(`/v1/broadcast-plans/${planning.id}/pairs`, planner)).body
      .pair_records;
    expect(records).toHaveLength(60);
    expect(
      records.every(
        (r) => r.current_state === 'broadcasted' && r.statuses.map((s) => s.action).join() === 'created,broadcast',
      ),
    ).toBe(true);
    // Runsheet 4's pickup is next to driver 2; the next nearest are drivers 1 and 3.
    const forRunsheet4 = records
      .filter((r) => r.pair.runsheet.id === 'RS-4')
      .map((r) => r.pair.driver.id)
      .sort();
    expect(forRunsheet4).toEqual([drivers[1]!.id, drivers[2]!.id, drivers[3]!.id].sort());
    const one = await api.get<{ pair_record: PairRecord }>(
      `/v1/broadcast-plans/${planning.id}/pairs/${records[0]!.id}`,
      planner,
    );
    expect(one.body.pair_record.id).toBe(records[0]!.id);
    // Every pair names its driver (spec: driver (id, name)), on R2 and on R1.
    expect(records.every((r) => r.pair.driver.name === 'OrgDriver User')).toBe(true);
    expect(one.body.pair_record.pair.driver).toEqual({ id: records[0]!.pair.driver.id, name: 'OrgDriver User' });
    const outbox = await api.get<{ messages: { data: { planning_id: string } }[] }>(
      `/_local/push-outbox?user_id=${drivers[2]!.id}`,
    );
    expect(outbox.body.messages).toHaveLength(0); // no push keys registered: nothing to deliver
  });

  it('lets exactly one of the racing drivers win a runsheet; the others are closed by the system', async () => {
    const race = (await api.post<PlanningView>('/v1/plannings', { name: 'Race' }, planner)).body;
    await api.post(`/v1/plannings/${race.id}/runsheets`, { runsheets: [runsheet(0)] }, planner);
    const ready = await api.post<PlanningView>(
      `/v1/plannings/${race.id}/drivers`,
      { drivers: drivers.map((d) => ({ id: d.id })) },
      planner,
    );
    await api.post(
      `/v1/plannings/${race.id}/job`,
      { version_rev: ready.body.version_rev, max_candidates: 10 },
      planner,
    );
    await jobStatus(race.id);
    const pairs = (await api.get<{ pair_records: PairRecord[] }>(`/v1/broadcast-plans/${race.id}/pairs`, planner)).body
      .pair_records;
    expect(pairs).toHaveLength(10);
    const now = new Date().toISOString();
    const answers = await Promise.all(
      pairs.map((pair) => {
        const driver = drivers.find((d) => d.id === pair.pair.driver.id)!;
        return api.post(
          `/v1/broadcast-plans/${race.id}/pairs/${pair.id}/accepted`,
          { happened_at_utc: now },
          driver.token,
        );
      }),
    );
    expect(answers.filter((a) => a.status === 200)).toHaveLength(1);
    // Every loser hears the same thing, whether its claim lost the race or its pair was closed before it arrived.
    const losers = answers.filter((a) => a.status === 409).map((a) => a.body as { code: string; detail: string });
    expect(losers).toHaveLength(9);
    for (const loser of losers) {
      expect(loser.code).toBe('runsheet_already_assigned');
      expect(loser.detail).toMatch(
        /^another driver has runsheet "Runsheet 0" \(accepted at .+\): this offer is closed$/,
      );
    }
    const after = (await api.get<{ pair_records: PairRecord[] }>(`/v1/broadcast-plans/${race.id}/pairs`, planner)).body
      .pair_records;
    expect(after.filter((p) => p.current_state === 'accepted')).toHaveLength(1);
    const closed = after.filter((p) => p.current_state === 'rejected');
    expect(closed).toHaveLength(9);
    expect(
      closed.every(
        (p) =>
          p.statuses.at(-1)?.action === 'system_rejected' && p.statuses.at(-1)?.reason === 'assigned_to_other_driver',
      ),
    ).toBe(true);

    const winner = after.find((p) => p.current_state === 'accepted')!;
    const winnerToken = drivers.find((d) => d.id === winner.pair.driver.id)!.token;
    const rejectWon = await api.post<{ code: string; detail: string }>(
      `/v1/broadcast-plans/${race.id}/pairs/${winner.id}/rejected`,
      { happened_at_utc: now },
      winnerToken,
    );
    expect(rejectWon.status).toBe(409);
    expect(rejectWon.body.code).toBe('conflict');
    expect(rejectWon.body.detail).toBe(`you accepted this offer at ${now}; it cannot be rejected now`);
    // A loser whose pair the system closed, answering later: the same code, and its own rejection is told in words.
    const loser = after.find((p) => p.current_state === 'rejected')!;
    const loserToken = drivers.find((d) => d.id === loser.pair.driver.id)!.token;
    const late = await api.post<{ code: string; detail: string }>(
      `/v1/broadcast-plans/${race.id}/pairs/${loser.id}/accepted`,
      { happened_at_utc: new Date().toISOString() },
      loserToken,
    );
    expect(late.status).toBe(409);
    expect(late.body.code).toBe('runsheet_already_assigned');
    const lateReject = await api.post<{ code: string; detail: string }>(
      `/v1/broadcast-plans/${race.id}/pairs/${loser.id}/rejected`,
      { happened_at_utc: new Date().toISOString() },
      loserToken,
    );
    expect(lateReject.status).toBe(409);
    expect(lateReject.body.detail).toMatch(
      /^another driver has runsheet "Runsheet 0": this offer was closed at .+; it cannot be rejected now$/,
    );
    expect(
      (
        await api.post(
          `/v1/broadcast-plans/${race.id}/pairs/${winner.id}/accepted`,
          { happened_at_utc: now },
          winnerToken,
        )
      ).status,
    ).toBe(200);
    const again = (
      await api.get<{ pair_record: PairRecord }>(`/v1/broadcast-plans/${race.id}/pairs/${winner.id}`, planner)
    ).body.pair_record;
    expect(again.statuses.filter((s) => s.action === 'accepted')).toHaveLength(1);
    const stranger = drivers.find((d) => d.id !== winner.pair.driver.id)!;
    expect(
      (
        await api.post(
          `/v1/broadcast-plans/${race.id}/pairs/${winner.id}/rejected`,
          { happened_at_utc: now },
          stranger.token,
        )
      ).status,
    ).toBe(404);
  });

  it('closes an unanswered offer with reason expired', async () => {
    const short = (await api.post<PlanningView>('/v1/plannings', { name: 'Short offers' }, planner)).body;
    await api.post(`/v1/plannings/${short.id}/runsheets`, { runsheets: [runsheet(1)] }, planner);
    const ready = await api.post<PlanningView>(
      `/v1/plannings/${short.id}/drivers`,
      { drivers: [{ id: drivers[0]!.id }] },
      planner,
    );
    await api.post(
      `/v1/plannings/${short.id}/job`,
      { version_rev: ready.body.version_rev, max_candidates: 1, offer_ttl_s: 5 },
      planner,
    );
    await jobStatus(short.id);
    const deadline = Date.now() + 15_000;
    let pair: PairRecord | undefined;
    while (Date.now() < deadline) {
      pair = (await api.get<{ pair_records: PairRecord[] }>(`/v1/broadcast-plans/${short.id}/pairs`, planner)).body
        .pair_records[0];
      if (pair?.current_state === 'rejected') break;
      await new Promise((r) => setTimeout(r, 250));
    }
    expect(pair?.current_state).toBe('rejected');
    expect(pair?.statuses.at(-1)).toMatchObject({ action: 'system_rejected', reason: 'expired' });
    // The driver's late answer is told what happened, in words.
    const expiry = pair!.statuses.find((s) => s.action === 'broadcast')!.expired_time;
    const late = await api.post<{ code: string; detail: string }>(
      `/v1/broadcast-plans/${short.id}/pairs/${pair!.id}/accepted`,
      { happened_at_utc: new Date().toISOString() },
      drivers[0]!.token,
    );
    expect(late.status).toBe(409);
    expect(late.body).toMatchObject({
      code: 'conflict',
      detail: `this offer expired at ${expiry}; it cannot be accepted now`,
    });
  }, 30_000);
});

/** A planning of `runsheets` and the first two drivers whose job (two candidates a runsheet) has completed. */
async function offeredPlanning(name: string, runsheets: ReturnType<typeof runsheet>[]) {
  const planning = (await api.post<PlanningView>('/v1/plannings', { name }, planner)).body;
  await api.post(`/v1/plannings/${planning.id}/runsheets`, { runsheets }, planner);
  const ready = await api.post<PlanningView>(
    `/v1/plannings/${planning.id}/drivers`,
    { drivers: drivers.slice(0, 2).map((d) => ({ id: d.id })) },
    planner,
  );
  await api.post(
    `/v1/plannings/${planning.id}/job`,
    { version_rev: ready.body.version_rev, max_candidates: 2 },
    planner,
  );
  expect((await jobStatus(planning.id)).current_status).toBe('completed');
  return planning;
}

describe('an offered runsheet the planning changes afterwards', () => {
  it('keeps its pairs showing the tasks that were offered; a later job offers the new ones', async () => {
    const planning = await offeredPlanning('Changed after', [runsheet(5), runsheet(7)]);
    type Shown = PairRecord & { pair: { runsheet: { id: string; tasks: { id: string }[] } } };
    const pairs = async () =>
      (await api.get<{ pair_records: Shown[] }>(`/v1/broadcast-plans/${planning.id}/pairs`, planner)).body.pair_records;
    const taskIds = (records: Shown[], runsheetId: string) =>
      records.filter((r) => r.pair.runsheet.id === runsheetId).map((r) => r.pair.runsheet.tasks.map((t) => t.id));
    const offered = await pairs();
    expect(taskIds(offered, 'RS-5')).toEqual([['task-5'], ['task-5']]);
    // P5 replaces RS-5 (new tasks), P6 removes RS-7.
    const replaced = { ...runsheet(5), tasks: [{ ...runsheet(5).tasks[0]!, id: 'task-5-new' }] };
    const p5 = await api.post<PlanningView & { runsheets: { id: string; tasks: { id: string }[] }[] }>(
      `/v1/plannings/${planning.id}/runsheets`,
      { runsheets: [replaced] },
      planner,
    );
    expect(p5.body.runsheets.map((r) => [r.id, r.tasks[0]!.id])).toEqual([
      ['RS-5', 'task-5-new'],
      ['RS-7', 'task-7'],
    ]);
    expect((await api.delete(`/v1/plannings/${planning.id}/runsheets/RS-7`, undefined, planner)).status).toBe(200);
    // The records show what each driver was offered (before: the new tasks, and no tasks at all for RS-7).
    const after = await pairs();
    expect(taskIds(after, 'RS-5')).toEqual([['task-5'], ['task-5']]);
    expect(taskIds(after, 'RS-7')).toEqual([['task-7'], ['task-7']]);
    const one = await api.get<{ pair_record: Shown }>(
      `/v1/broadcast-plans/${planning.id}/pairs/${after.find((r) => r.pair.runsheet.id === 'RS-7')!.id}`,
      planner,
    );
    expect(one.body.pair_record.pair.runsheet).toMatchObject({
      id: 'RS-7',
      name: 'Runsheet 7',
      tasks: [{ id: 'task-7' }],
    });
    // A pair answered after the copy still records its event on the copied record.
    const answered = after.find((r) => r.pair.runsheet.id === 'RS-7')!;
    const driver = drivers.find((d) => d.id === answered.pair.driver.id)!;
    expect(
      (
        await api.post(
          `/v1/broadcast-plans/${planning.id}/pairs/${answered.id}/rejected`,
          { happened_at_utc: new Date().toISOString() },
          driver.token,
        )
      ).status,
    ).toBe(200);
    // A second job offers the runsheet as the planning holds it now.
    const current = (await api.get<PlanningView>(`/v1/plannings/${planning.id}`, planner)).body;
    await api.post(
      `/v1/plannings/${planning.id}/job`,
      { version_rev: current.version_rev, max_candidates: 2 },
      planner,
    );
    expect((await jobStatus(planning.id)).current_status).toBe('completed');
    const second = await pairs();
    expect(taskIds(second, 'RS-5').sort()).toEqual([['task-5'], ['task-5'], ['task-5-new'], ['task-5-new']]);
    expect(taskIds(second, 'RS-7')).toEqual([['task-7'], ['task-7']]);
    // The runsheet's offers of both jobs are its: X14 counts the four open, and an accept of the second job's closes
    // the first job's still open.
    const listed = await api.get<{ runsheets: { id: string; offers_open?: number }[] }>(
      `/v1/plannings/${planning.id}/runsheets`,
      planner,
    );
    expect(listed.body.runsheets.find((r) => r.id === 'RS-5')).toMatchObject({ status: 'offered', offers_open: 4 });
    const won = second.find((r) => r.pair.runsheet.id === 'RS-5' && r.pair.runsheet.tasks[0]!.id === 'task-5-new')!;
    const winner = drivers.find((d) => d.id === won.pair.driver.id)!;
    const accept = await api.post(
      `/v1/broadcast-plans/${planning.id}/pairs/${won.id}/accepted`,
      { happened_at_utc: new Date().toISOString() },
      winner.token,
    );
    expect(accept.status).toBe(200);
    const closed = (await pairs()).filter((r) => r.pair.runsheet.id === 'RS-5' && r.id !== won.id);
    expect(closed.map((r) => r.current_state)).toEqual(['rejected', 'rejected', 'rejected']);
  });
});

/**
 * A planning of runsheets 3 and 6 and the first `driverCount` drivers whose job a worker had claimed and then lost
 * (processing, its lease lapsed, `attempts` runs so far): the state a worker that died leaves behind.
 */
async function abandonedJob(name: string, driverCount: number, jobId: string, maxCandidates: number, attempts: number) {
  const planning = (await api.post<PlanningView>('/v1/plannings', { name }, planner)).body;
  await api.post(`/v1/plannings/${planning.id}/runsheets`, { runsheets: [runsheet(3), runsheet(6)] }, planner);
  await api.post(
    `/v1/plannings/${planning.id}/drivers`,
    { drivers: drivers.slice(0, driverCount).map((d) => ({ id: d.id })) },
    planner,
  );
  await abandon(planning.id, jobId, maxCandidates, attempts);
  return planning;
}

/** The planning's job a worker had claimed and then lost: processing, its lease lapsed, `attempts` runs so far. */
async function abandon(planningId: string, jobId: string, maxCandidates: number, attempts: number) {
  const { findPlanning } = await import('../../shared/planning/planning-records.ts');
  const { changePlanning } = await import('../../shared/planning/plannings.ts');
  const now = new Date().toISOString();
  await changePlanning((await findPlanning(planningId))!, undefined, {
    job: {
      id: jobId,
      current_status: 'processing',
      statuses: [
        { status: 'queued', set_at_utc: now },
        { status: 'processing', set_at_utc: now },
      ],
      status_updated_at: now,
      max_candidates: maxCandidates,
      offer_ttl_s: 900,
      lease_until: Date.now() - 1,
      attempts,
    },
  });
}

describe('a planning job whose worker died', () => {
  it('is taken over when its lease lapses, writes each pair once, and keeps an answered pair as it is', async () => {
    const { runPlanningJob, pairIdOf } = await import('../../shared/planning/job.ts');
    const { pairKey } = await import('../../shared/planning/keys.ts');
    const jobId = '5e5e5e5e-0000-4000-8000-00000000005e';
    // The dead worker had claimed the job and written one pair, which its driver then accepted.
    const planning = await abandonedJob('Crashed', 4, jobId, 2, 1);
    const { db, mainTableName } = await import('../../shared/db/client.ts');
    const { PutCommand } = await import('@aws-sdk/lib-dynamodb');
    const answered = pairIdOf(jobId, 'RS-3', drivers[1]!.id);
    await db().send(
      new PutCommand({
        TableName: mainTableName(),
        Item: {
          ...pairKey(planning.id, answered),
          id: answered,
          current_state: 'accepted',
          statuses: [],
          pair: {
            id: answered,
            runsheet: { id: 'RS-3', tasks: [] },
            driver: { id: drivers[1]!.id, name: 'OrgDriver User' },
          },
          plan: { id: planning.id },
        },
      }),
    );
    const runs = await Promise.all(
      [1, 2, 3].map(() => runPlanningJob({ kind: 'planning', planning_id: planning.id, job_id: jobId })),
    );
    expect(runs.filter(Boolean)).toHaveLength(1);
    expect((await jobStatus(planning.id)).current_status).toBe('completed');
    const pairs = (await api.get<{ pair_records: PairRecord[] }>(`/v1/broadcast-plans/${planning.id}/pairs`, planner))
      .body.pair_records;
    expect(pairs).toHaveLength(4);
    expect(pairs.find((p) => p.id === answered)?.current_state).toBe('accepted');
    expect(await runPlanningJob({ kind: 'planning', planning_id: planning.id, job_id: jobId })).toBeUndefined();
  });
});

describe('a second job whose worker died before it reached a runsheet the first job offered', () => {
  it('offers it beside the first job’s open offers, X14 counting both', async () => {
    const { runPlanningJob } = await import('../../shared/planning/job.ts');
    const planning = await offeredPlanning('Two jobs', [runsheet(3)]);
    // The second job's first run claimed it and died before writing anything; this run takes it over.
    const jobId = '5e5e5e5e-0000-4000-8000-0000000000a2';
    await abandon(planning.id, jobId, 2, 1);
    await runPlanningJob({ kind: 'planning', planning_id: planning.id, job_id: jobId });
    expect((await jobStatus(planning.id)).current_status).toBe('completed');
    const listed = await api.get<{ runsheets: { id: string }[] }>(`/v1/plannings/${planning.id}/runsheets`, planner);
    expect(listed.body.runsheets.find((r) => r.id === 'RS-3')).toMatchObject({
      status: 'offered',
      wave: 1,
      offers_open: 4,
    });
  });
});

describe('a planning job that fails for good after a sweep dropped the offer watch', () => {
  it('leaves the pairs it wrote watched: they still expire', async () => {
    const { runPlanningJob, MAX_JOB_ATTEMPTS } = await import('../../shared/planning/job.ts');
    const { expireOffers, watchOffers } = await import('../../shared/planning/offer-expiry.ts');
    const { watchKey } = await import('../../shared/planning/keys.ts');
    const { db, mainTableName } = await import('../../shared/db/client.ts');
    const { GetCommand } = await import('@aws-sdk/lib-dynamodb');
    const { withMiddleware } = await import('../support/middleware.ts');
    // This job is on its last attempt.
    const jobId = '5e5e5e5e-0000-4000-8000-0000000000f1';
    const planning = await abandonedJob('Failed for good', 2, jobId, 1, MAX_JOB_ATTEMPTS - 1);
    // An earlier job's watch, due already (its pairs long closed).
    await watchOffers(planning.id, planning.org_id, new Date(Date.now() - 60_000).toISOString());
    // Before its first pair a sweep runs (it sees nothing open and drops the watch); the second pair's write fails
    // with an error of the job's own, on its last attempt.
    let puts = 0;
    await withMiddleware(
      'fail-for-good',
      (next, context) => async (args) => {
        const item = (args.input as { Item?: { SK?: string; plan?: { id?: string } } }).Item;
        if (
          context.commandName === 'PutItemCommand' &&
          item?.SK?.startsWith('PAIR#') &&
          item.plan?.id === planning.id
        ) {
          // This call's number: the job writes pairs concurrently, so `puts` may move on while the sweep runs.
          const put = ++puts;
          if (put === 1) await expireOffers();
          if (put === 2) throw new Error('the job broke');
        }
        return next(args);
      },
      () => runPlanningJob({ kind: 'planning', planning_id: planning.id, job_id: jobId }),
    );
    expect((await jobStatus(planning.id)).current_status).toBe('failed');
    const pairs = (await api.get<{ pair_records: PairRecord[] }>(`/v1/broadcast-plans/${planning.id}/pairs`, planner))
      .body.pair_records;
    expect(pairs.map((p) => p.current_state)).toEqual(['broadcasted']);
    // The watch is due at the pair's expiry (before: dropped, and the pair would have stayed open for ever).
    const watch = await db().send(new GetCommand({ TableName: mainTableName(), Key: watchKey(planning.id) }));
    const expiry = pairs[0]!.statuses.find((s) => s.action === 'broadcast')!.expired_time;
    expect(watch.Item?.['GSI3SK']).toBe(`${expiry}#${planning.id}#OFFERS`);
  });
});

describe('removing a driver (P8) and an external worker failing a job (P15)', () => {
  it('count the planning down, and move a running job to failed', async () => {
    const jobId = '5e5e5e5e-0000-4000-8000-0000000000f8';
    const planning = await abandonedJob('Shrinking', 2, jobId, 1, 1);
    const removed = await api.delete(`/v1/plannings/${planning.id}/drivers/${drivers[1]!.id}`, undefined, planner);
    expect(removed.status).toBe(200);
    expect((await api.get<PlanningView>(`/v1/plannings/${planning.id}`, planner)).body.total_drivers).toBe(1);
    expect(
      (await api.delete(`/v1/plannings/${planning.id}/drivers/${drivers[1]!.id}`, undefined, planner)).status,
    ).toBe(404);
    const failed = await api.post<{ current_status: string }>(`/v1/plannings/${planning.id}/job/failed`, {}, admin);
    expect(failed.status).toBe(200);
    expect((await jobStatus(planning.id)).current_status).toBe('failed');
    expect((await api.post(`/v1/plannings/${planning.id}/job/failed`, {}, admin)).status).toBe(409);
  });
});

/** Every member name at any depth of a reply, except inside tasks (a task keeps its sender's own members). */
function storageMembers(value: unknown, path = '$'): string[] {
  if (Array.isArray(value)) return value.flatMap((item, i) => storageMembers(item, `${path}[${i}]`));
  if (!value || typeof value !== 'object') return [];
  return Object.entries(value).flatMap(([key, inner]) => [
    ...(/^(PK|SK|GSI\d+(PK|SK)|_w|entity|rev|lease_.*|attempts|announced|org_id_ref|runsheet_ref|plan_swept|position)$/.test(
      key,
    )
      ? [`${path}.${key}`]
      : []),
    ...(key === 'tasks' ? [] : storageMembers(inner, `${path}.${key}`)),
  ]);
}

describe('planning replies (issue 23.1, 23.2, 28.6)', () => {
  it('carry no storage member (P2–P5, P7, P9, and a completed job’s lease on P3), and pair tasks carry version_seq', async () => {
    const created = await api.post<PlanningView>('/v1/plannings', { name: 'Hygiene' }, planner);
    const renamed = await api.put<PlanningView>(
      `/v1/plannings/${created.body.id}`,
      { name: 'Hygiene run', version_rev: created.body.version_rev },
      planner,
    );
    const withRunsheets = await api.post<PlanningView>(
      `/v1/plannings/${created.body.id}/runsheets`,
      { runsheets: [runsheet(2), runsheet(4)] },
      planner,
    );
    const withDrivers = await api.post<PlanningView>(
      `/v1/plannings/${created.body.id}/drivers`,
      { drivers: drivers.slice(1, 3).map((d) => ({ id: d.id })) },
      planner,
    );
    const started = await api.post<PlanningView>(
      `/v1/plannings/${created.body.id}/job`,
      { version_rev: withDrivers.body.version_rev, max_candidates: 2 },
      planner,
    );
    expect(started.status).toBe(202);
    expect((await jobStatus(created.body.id)).current_status).toBe('completed');
    const read = await api.get<PlanningView & { job: object; drivers: object[] }>(
      `/v1/plannings/${created.body.id}`,
      planner,
    );
    for (const reply of [created, renamed, withRunsheets, withDrivers, started, read]) {
      expect(storageMembers(reply.body)).toEqual([]);
    }
    expect(Object.keys(read.body.job).sort()).toEqual(
      [
        'current_status',
        'id',
        'max_candidates',
        'max_location_age_s',
        'max_runsheets_per_driver',
        'max_waves',
        'offer_ttl_s',
        'status_updated_at',
        'statuses',
      ].sort(),
    );
    expect(read.body.drivers).toEqual(drivers.slice(1, 3).map((d) => ({ id: d.id })));
    // P9 made version 5 (P2 1, P4 2, P5 3, P7 4): the pairs took their runsheets at it.
    expect(read.body.version_seq).toBe(5);
    type Shown = PairRecord & { pair: { runsheet: { tasks: { id: string; version_seq?: number }[] } } };
    const listed = (await api.get<{ pair_records: Shown[] }>(`/v1/broadcast-plans/${created.body.id}/pairs`, planner))
      .body.pair_records;
    expect(listed).toHaveLength(4);
    const one = await api.get<{ pair_record: Shown }>(
      `/v1/broadcast-plans/${created.body.id}/pairs/${listed[0]!.id}`,
      planner,
    );
    for (const record of [...listed, one.body.pair_record]) {
      expect(storageMembers(record)).toEqual([]);
      expect(record.pair.runsheet.tasks).not.toHaveLength(0);
      expect(record.pair.runsheet.tasks.map((t) => t.version_seq)).toEqual(record.pair.runsheet.tasks.map(() => 5));
    }
  });
});

describe('a planning job pairing the whole planning at once (issue 26.3)', () => {
  it('offers each of two runsheets to its own driver where nearest-first would offer both to one', async () => {
    // Driver A stands between the two pickups, driver B a little beyond the second: the nearest driver of both is A.
    const placed = [];
    for (const longitude of [103.91, 103.935]) {
      const driver = await member('OrgDriver', org);
      await api.put(
        '/v1/driver/location',
        { latitude: 1.2, longitude, client_time_utc: new Date().toISOString() },
        driver.token,
      );
      placed.push(driver);
    }
    const [a, b] = placed;
    const planning = (await api.post<PlanningView>('/v1/plannings', { name: 'Two pickups' }, planner)).body;
    await api.post(
      `/v1/plannings/${planning.id}/runsheets`,
      {
        runsheets: [103.9, 103.92].map((longitude, i) => ({
          id: `PAIR-${i}`,
          tasks: [{ id: `pair-task-${i}`, from_address: { street_address: `${i} Pair Rd`, latitude: 1.2, longitude } }],
        })),
      },
      planner,
    );
    const ready = await api.post<PlanningView>(
      `/v1/plannings/${planning.id}/drivers`,
      { drivers: [{ id: a!.id }, { id: b!.id }] },
      planner,
    );
    await api.post(
      `/v1/plannings/${planning.id}/job`,
      { version_rev: ready.body.version_rev, max_candidates: 1 },
      planner,
    );
    expect((await jobStatus(planning.id)).current_status).toBe('completed');
    const offered = (
      await api.get<{ pair_records: PairRecord[] }>(`/v1/broadcast-plans/${planning.id}/pairs`, planner)
    ).body.pair_records.map((r) => [r.pair.runsheet.id, r.pair.driver.id]);
    expect(offered.sort()).toEqual([
      ['PAIR-0', a!.id],
      ['PAIR-1', b!.id],
    ]);
  });
});
