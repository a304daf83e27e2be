/** R3–R8 through worker clients: the pair state machine, duplicates, and statuses in the order events happened. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningHost } from '../../lib/local/start.ts';
import { type Client, client, internalClientToken, loginAs } from '../support/http.ts';
import { ADMIN, startTestHost } from '../support/local.ts';

let host: RunningHost;
let api: Client;
let admin: string;
let recordWorker: string;
let planWorker: string;
let planId: string;

const workerToken = (roles: string[]) => internalClientToken(api, admin, roles.join('+'), roles);

/**
 * `minute` minutes after this run's start (whole minutes): an offer broadcast at(10) expires 15 minutes later, well
 * after the file ends. With a fixed past date its expiry had passed, and the local sweep (every 2 s) could close the
 * offer between two steps of a test.
 */
const START = Math.floor(Date.now() / 60_000) * 60_000;
const at = (minute: number) => new Date(START + minute * 60_000).toISOString();
const pairBody = (pairId: string, happened: string) => ({
  pair: {
    id: pairId,
    runsheet: { id: 'RS-1', name: 'Runsheet 1', tasks: [{ id: 't1' }] },
    driver: { id: '0d0d0d0d-0000-4000-8000-00000000000d', name: 'Dee' },
  },
  plan: { id: planId, name: 'Records' },
  happened_at_utc: happened,
});

type PairView = {
  current_state: string;
  statuses: {
    action: string;
    current_state: string;
    happened_at_utc: string;
    saved_at_utc: string;
    expired_time: string | null;
    reason: string | null;
  }[];
};

beforeAll(async () => {
  host = await startTestHost();
  api = client(host.url);
  admin = (await loginAs(api, ADMIN.email, ADMIN.password)).bearer_token;
  const org = (
    await api.post<{ id: string }>('/v1/admin/organisations', { name: 'Records org', kind: 'transporter' }, admin)
  ).body.id;
  const email = `planner.${Math.random().toString(36).slice(2, 7)}@example.com`;
  await api.post('/v1/admin/invitations', { user: { email, org_id: org } }, admin);
  const outbox = await api.get<{ messages: { data: Record<string, string> }[] }>(`/_local/outbox?to=${email}`);
  await api.post('/v1/auth/accept-invitation', {
    user: {
      name: 'Planner',
      password: 'a-good-long-password',
      invitation_token: (outbox.body.messages[0]!.data as unknown as { invitation_token: string }).invitation_token,
    },
  });
  const planner = await loginAs(api, email, 'a-good-long-password');
  planId = (await api.post<{ id: string }>('/v1/plannings', { name: 'Records' }, planner.bearer_token)).body.id;
  recordWorker = await workerToken(['RunsheetBroadcastRecordWorker']);
  planWorker = await workerToken(['RunsheetBroadcastPlanWorker']);
});
afterAll(() => host?.stop());

describe('the pair state machine', () => {
  const pairId = '1a1a1a1a-0000-4000-8000-00000000001a';
  const read = async () =>
    (await api.get<{ pair_record: PairView }>(`/v1/broadcast-plans/${planId}/pairs/${pairId}`, admin)).body.pair_record;
  const event = (action: string, token: string, minute: number, extra: object = {}) =>
    api.post(
      `/v1/broadcast-plans/${planId}/pairs/${pairId}/${action}`,
      { happened_at_utc: at(minute), ...extra },
      token,
    );

  it('records creation once, refuses an unknown plan, and only the right workers may write', async () => {
    expect((await api.post('/v1/broadcast-plans/pairs', pairBody(pairId, at(0)), recordWorker)).status).toBe(201);
    expect((await api.post('/v1/broadcast-plans/pairs', pairBody(pairId, at(0)), recordWorker)).status).toBe(201);
    expect((await api.post('/v1/broadcast-plans/pairs', pairBody(pairId, at(1)), recordWorker)).status).toBe(409);
    const unknown = await api.post(
      '/v1/broadcast-plans/pairs',
      { ...pairBody(pairId, at(0)), plan: { id: '00000000-0000-4000-8000-000000000000' } },
      recordWorker,
    );
    expect(unknown.body).toMatchObject({ status: 400, errors: [{ path: 'plan.id' }] });
    expect((await api.post('/v1/broadcast-plans/pairs', pairBody(pairId, at(0)), planWorker)).status).toBe(403);
    expect((await read()).statuses).toHaveLength(1);
  });

  it('refuses illegal moves and records nothing for them; the same event twice is recorded once', async () => {
    expect((await event('accepted', planWorker, 5)).status).toBe(409);
    expect((await event('rejected', recordWorker, 5)).status).toBe(409);
    expect((await read()).statuses).toHaveLength(1);
    expect((await event('broadcast', planWorker, 10)).status).toBe(200);
    expect((await event('broadcast', planWorker, 10)).status).toBe(200);
    const broadcast = await read();
    expect(broadcast.current_state).toBe('broadcasted');
    expect(broadcast.statuses.filter((s) => s.action === 'broadcast')).toHaveLength(1);
    expect(broadcast.statuses.at(-1)?.expired_time).toBe(new Date(Date.parse(at(10)) + 900_000).toISOString());
  });

  it('keeps statuses in the order events happened, whatever order they arrived in', async () => {
    // A rejection that happened at minute 20 arrives; then a deletion that happened at minute 15 arrives.
    expect((await event('rejected', recordWorker, 20)).status).toBe(200);
    expect((await event('deleted', recordWorker, 15)).status).toBe(200);
    const record = await read();
    expect(record.statuses.map((s) => [s.action, s.happened_at_utc])).toEqual([
      ['created', at(0)],
      ['broadcast', at(10)],
      ['deleted', at(15)],
      ['rejected', at(20)],
    ]);
    // The state reached by the last accepted event (in arrival order).
    expect(record.current_state).toBe('deleted');
    expect(record.statuses.every((s) => typeof s.saved_at_utc === 'string')).toBe(true);
    expect((await event('deleted', recordWorker, 30)).status).toBe(409);
    expect((await event('system-rejected', recordWorker, 31, { reason: 'x' })).status).toBe(409);
  });

  it('records a system rejection with its reason', async () => {
    const second = '2b2b2b2b-0000-4000-8000-00000000002b';
    await api.post('/v1/broadcast-plans/pairs', pairBody(second, at(0)), recordWorker);
    expect(
      (
        await api.post(
          `/v1/broadcast-plans/${planId}/pairs/${second}/system-rejected`,
          { happened_at_utc: at(2), reason: 'no longer needed' },
          recordWorker,
        )
      ).status,
    ).toBe(200);
    const record = (await api.get<{ pair_record: PairView }>(`/v1/broadcast-plans/${planId}/pairs/${second}`, admin))
      .body.pair_record;
    expect(record).toMatchObject({ current_state: 'rejected' });
    expect(record.statuses.at(-1)).toMatchObject({
      action: 'system_rejected',
      reason: 'no longer needed',
      current_state: 'rejected',
    });
    expect(
      (await api.get(`/v1/broadcast-plans/${planId}/pairs/00000000-0000-4000-8000-000000000000`, admin)).status,
    ).toBe(404);
  });
});

describe('planning job moves by an external plan worker (P10–P16)', () => {
  it('follows the job machine, records one result, and refuses what the machine does not allow', async () => {
    const { findPlanning } = await import('../../shared/planning/planning-records.ts');
    const { changePlanning } = await import('../../shared/planning/plannings.ts');
    const planning = (await findPlanning(planId))!;
    const jobId = '3c3c3c3c-0000-4000-8000-00000000003c';
    const now = new Date().toISOString();
    // A job queued for an external worker (P9 would also hand it to the built-in one).
    await changePlanning(planning, undefined, {
      job: {
        id: jobId,
        current_status: 'queued',
        statuses: [{ status: 'queued', set_at_utc: now }],
        status_updated_at: now,
        max_candidates: 5,
        offer_ttl_s: 900,
      },
    });
    const move = (to: string, token = planWorker) =>
      api.post<{ current_status: string; statuses: unknown[] }>(`/v1/plannings/${planId}/job/${to}`, {}, token);
    expect((await move('completed')).status).toBe(409);
    expect((await move('processing')).body).toMatchObject({ current_status: 'processing', planning_job_id: jobId });
    expect((await move('processing', recordWorker)).status).toBe(403);
    const result = {
      planning_job_id: jobId,
      total_pairs_counted: 7,
      total_runsheets_counted: 3,
      total_drivers_counted: 2,
      start_time: now,
      end_time: new Date().toISOString(),
    };
    expect((await api.put(`/v1/plannings/${planId}/job/result`, result, planWorker)).status).toBe(201);
    expect((await api.put(`/v1/plannings/${planId}/job/result`, result, planWorker)).status).toBe(409);
    expect(
      (
        await api.put(
          `/v1/plannings/${planId}/job/result`,
          { ...result, planning_job_id: '4d4d4d4d-0000-4000-8000-00000000004d' },
          planWorker,
        )
      ).body,
    ).toMatchObject({ status: 400, errors: [{ path: 'planning_job_id' }] });
    expect((await api.get(`/v1/plannings/${planId}/job/result`, admin)).body).toMatchObject({
      total_pairs_counted: 7,
      planning_job_id: jobId,
    });
    const completed = await move('completed');
    expect(completed.body.statuses).toHaveLength(3);
    expect((await move('failed')).status).toBe(409);
    expect((await move('cancelled', admin)).status).toBe(409);
    expect(
      (await api.get<{ current_status: string }>(`/v1/plannings/${planId}/job/status`, admin)).body.current_status,
    ).toBe('completed');
  });
});

describe('the driver of a pair', () => {
  it('is named on R1 and R2: the worker’s name, else the user’s', async () => {
    const me = (await api.get<{ user: { id: string; name: string } }>('/v1/me', admin)).body.user;
    const unnamed = '3c3c3c3c-0000-4000-8000-00000000003c';
    const body = pairBody(unnamed, at(40));
    const created = await api.post(
      '/v1/broadcast-plans/pairs',
      { ...body, pair: { ...body.pair, driver: { id: me.id } } },
      recordWorker,
    );
    expect(created.status).toBe(201);
    type Named = { id: string; pair: { driver: { id: string; name: string } } };
    const one = await api.get<{ pair_record: Named }>(`/v1/broadcast-plans/${planId}/pairs/${unnamed}`, admin);
    expect(one.body.pair_record.pair.driver).toEqual({ id: me.id, name: me.name });
    const all = await api.get<{ pair_records: Named[] }>(`/v1/broadcast-plans/${planId}/pairs`, admin);
    expect(all.body.pair_records.find((r) => r.id === unnamed)!.pair.driver.name).toBe(me.name);
    expect(all.body.pair_records.every((r) => typeof r.pair.driver.name === 'string')).toBe(true);
  });
});

describe('a pair record R3 wrote, as R1 and R2 show it (issue 23.1, 23.2)', () => {
  it('has tasks carrying the planning’s version_seq and no storage member', async () => {
    const pairId = '5f5f5f5f-0000-4000-8000-00000000005f';
    const version = (await api.get<{ version_seq: number }>(`/v1/plannings/${planId}`, admin)).body.version_seq;
    expect(version).toBeGreaterThanOrEqual(1);
    const created = await api.post('/v1/broadcast-plans/pairs', pairBody(pairId, at(40)), recordWorker);
    expect(created.status).toBe(201);
    const one = await api.get<{ pair_record: Record<string, unknown> & { pair: { runsheet: { tasks: object[] } } } }>(
      `/v1/broadcast-plans/${planId}/pairs/${pairId}`,
      admin,
    );
    const listed = await api.get<{ pair_records: { id: string }[] }>(`/v1/broadcast-plans/${planId}/pairs`, admin);
    const fromList = listed.body.pair_records.find((r) => r.id === pairId)!;
    for (const record of [one.body.pair_record, fromList]) {
      expect(Object.keys(record).sort()).toEqual(['current_state', 'id', 'pair', 'plan', 'statuses']);
      // The planning's version when R3 recorded the pair.
      expect(record).toMatchObject({ pair: { runsheet: { id: 'RS-1', tasks: [{ id: 't1', version_seq: version }] } } });
    }
  });
});

describe('R2 a page at a time (issue 35)', () => {
  it('walks every pair once by its page tokens, and refuses a token of another list', async () => {
    const ids = Array.from({ length: 5 }, (_, i) => `7e7e7e7e-0000-4000-8000-00000000007${i}`);
    for (const id of ids)
      expect((await api.post('/v1/broadcast-plans/pairs', pairBody(id, at(50)), recordWorker)).status).toBe(201);
    type Listed = { pair_records: { id: string }[]; meta: { per_page: number; next_page_token: string | null } };
    const everything = (await api.get<Listed>(`/v1/broadcast-plans/${planId}/pairs`, admin)).body;
    expect(everything.meta).toMatchObject({ per_page: 1000, next_page_token: null });
    const seen: string[] = [];
    let path = `/v1/broadcast-plans/${planId}/pairs?per_page=2`;
    let pages = 0;
    for (;;) {
      const page = await api.get<Listed>(path, admin);
      expect(page.status).toBe(200);
      expect(page.body.pair_records.length).toBeLessThanOrEqual(2);
      seen.push(...page.body.pair_records.map((r) => r.id));
      pages++;
      if (!page.body.meta.next_page_token) break;
      path = `/v1/broadcast-plans/${planId}/pairs?per_page=2&page_token=${encodeURIComponent(page.body.meta.next_page_token)}`;
    }
    expect(seen).toEqual(everything.pair_records.map((r) => r.id));
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen).toEqual(expect.arrayContaining(ids));
    expect(pages).toBe(Math.ceil(seen.length / 2));
    // A token of X12 (another list) or an edited one: a 400 at query.page_token, never another list's rows.
    const first = await api.get<Listed>(`/v1/broadcast-plans/${planId}/pairs?per_page=2`, admin);
    const token = first.body.meta.next_page_token!;
    const otherSize = await api.get(
      `/v1/broadcast-plans/${planId}/pairs?per_page=3&page_token=${encodeURIComponent(token)}`,
      admin,
    );
    expect(otherSize.status).toBe(400);
    expect(otherSize.body).toMatchObject({ errors: [{ path: 'query.page_token' }] });
    const tooBig = await api.get(`/v1/broadcast-plans/${planId}/pairs?per_page=1001`, admin);
    expect(tooBig.status).toBe(400);
  });
});

describe('a pair broadcast one by one (R5) that closes', () => {
  /** The pair's entries in the expiry sweep's index (GSI3 `OFFERS#<org>`), as the sweep's own Query finds them. */
  const sweepEntries = async (pairId: string) => {
    const { dueEntriesByOrg } = await import('../../shared/db/shards.ts');
    const out = await dueEntriesByOrg('OFFERS', '9999', 1000);
    return out.items.filter((item) => item['SK'] === `PAIR#${pairId}`);
  };

  it('leaves the sweep’s index: it was kept there, and every sweep read it again', async () => {
    const pairId = '5e5e5e5e-0000-4000-8000-00000000005e';
    // Now, so that the offer is open (its expiry 15 minutes on) and no sweep closes it meanwhile.
    const now = Date.now();
    const when = (s: number) => new Date(now + s * 1000).toISOString();
    expect((await api.post('/v1/broadcast-plans/pairs', pairBody(pairId, when(0)), recordWorker)).status).toBe(201);
    const path = `/v1/broadcast-plans/${planId}/pairs/${pairId}`;
    expect((await api.post(`${path}/broadcast`, { happened_at_utc: when(1) }, planWorker)).status).toBe(200);
    expect(await sweepEntries(pairId)).toHaveLength(1);
    expect((await api.post(`${path}/rejected`, { happened_at_utc: when(2) }, recordWorker)).status).toBe(200);
    const closed = await api.get<{ pair_record: PairView }>(path, admin);
    expect(closed.body.pair_record.current_state).toBe('rejected');
    expect(await sweepEntries(pairId)).toEqual([]);
  });
});

describe('a closed pair that an earlier version left in the sweep’s index', () => {
  it('has its entry removed by the next sweep, which would otherwise read it again every time', async () => {
    const { db, mainTableName } = await import('../../shared/db/client.ts');
    const { GetCommand, PutCommand } = await import('@aws-sdk/lib-dynamodb');
    const { expireOffers } = await import('../../shared/planning/offer-expiry.ts');
    const pairId = '6f6f6f6f-0000-4000-8000-00000000006f';
    expect((await api.post('/v1/broadcast-plans/pairs', pairBody(pairId, at(40)), recordWorker)).status).toBe(201);
    const path = `/v1/broadcast-plans/${planId}/pairs/${pairId}`;
    expect((await api.post(`${path}/broadcast`, { happened_at_utc: at(41) }, planWorker)).status).toBe(200);
    expect((await api.post(`${path}/rejected`, { happened_at_utc: at(42) }, recordWorker)).status).toBe(200);
    const { pairKey } = await import('../../shared/planning/keys.ts');
    const { orgSweepPartition } = await import('../../shared/db/shards.ts');
    const key = pairKey(planId, pairId);
    const stored = (await db().send(new GetCommand({ TableName: mainTableName(), Key: key }))).Item!;
    // As the code before the fix stored it: rejected, and still in GSI3, at an expiry the sweep finds due. (The
    // events happen now, so that no sweep closes the open offer between them.)
    const due = `2026-11-21T10:16:00.000Z#${planId}#${pairId}`;
    await db().send(
      new PutCommand({
        TableName: mainTableName(),
        Item: { ...stored, GSI3PK: orgSweepPartition('OFFERS', String(stored['org_id'])), GSI3SK: due },
      }),
    );
    await expireOffers();
    const after = (await db().send(new GetCommand({ TableName: mainTableName(), Key: key }))).Item!;
    expect(after['current_state']).toBe('rejected');
    expect(after['GSI3PK']).toBeUndefined();
    expect(after['GSI3SK']).toBeUndefined();
  });
});
