/**
 * Who the planning job offers a runsheet to must not depend on faults the day met before it ran (issue 26 note: the
 * chaos day offered RS-2 and RS-6 to other drivers than the calm day). The cause: P5's claim of an imported task
 * answered the task from its old image (ALL_OLD); when the claim's answer was lost after DynamoDB applied it, the
 * SDK's retry was recognised as our own write and answered without that image, so the runsheet stored a task of
 * nulls: no pickup, and the job ranked its drivers in planning order instead of by distance. And a job's rerun after
 * a first run that wrote part of its offers keeps that run's decision, whatever the drivers' positions are by then.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { LOCAL_CREDENTIALS } from '../../lib/local/emulators.ts';
import type { RunningHost } from '../../lib/local/start.ts';
import { ROLES } from '../../shared/auth/roles.ts';
import { locationKey } from '../../shared/locations/locations.ts';
import { type FaultProxy, startFaultProxy } from '../support/fault-proxy.ts';
import { type Client, client, invitedMember, loginAs } from '../support/http.ts';
import { IMPORT_WINDOW, putUpload } from '../support/imports.ts';
import { ADMIN, startTestHost } from '../support/local.ts';
import { withMiddleware } from '../support/middleware.ts';
import { until } from '../support/until.ts';

let host: RunningHost;
let proxy: FaultProxy;
let api: Client;
let planner: string;
let orgId: string;
let admin: string;

beforeAll(async () => {
  proxy = await startFaultProxy(inject('endpoints').dynamodb, 'dynamodb');
  host = await startTestHost({ dynamodb: proxy.url });
  api = client(host.url);
  admin = (await loginAs(api, ADMIN.email, ADMIN.password)).bearer_token;
  orgId = (
    await api.post<{ id: string }>('/v1/admin/organisations', { name: 'Lost Answers', kind: 'transporter' }, admin)
  ).body.id;
  planner = (await invitedMember(api, admin, 'OrgAdmin', ROLES.OrgAdmin, orgId)).token;
}, 60_000);

afterAll(async () => {
  await proxy?.set('pass');
  await host?.stop();
  await proxy?.close();
});

const HEADER =
  'task_ref,from_street_address,from_city,from_country,to_street_address,to_city,to_country,from_start_time_utc,from_end_time_utc,from_timezone,to_start_time_utc,to_end_time_utc,to_timezone,from_latitude,from_longitude';

/** Imports one task picked up at (1.3343, 103.8563) through the CSV path; its id. */
async function importedTaskId(): Promise<string> {
  const tasks = `${HEADER}\nT1,1 Depot Rd,Singapore,SG,1 Mall,Singapore,SG,2026-11-22T01:00:00Z,2026-11-22T03:00:00Z,Asia/Singapore,2026-11-22T04:00:00Z,2026-11-22T08:00:00Z,Asia/Singapore,1.3343,103.8563\n`;
  const items = 'task_ref,sku,description,quantity,weight,weight_unit\nT1,SKU-1,Parcel,2,1.5,kg\n';
  const files = [];
  for (const [name, text] of [
    ['tasks.csv', tasks],
    ['items.csv', items],
  ] as const) {
    const link = await api.get<{ file: { url: string; storage_upload_key: string } }>(
      `/v1/task-import-jobs/upload-url?filename=${name}`,
      planner,
    );
    expect((await putUpload(link.body.file.url, text)).status).toBe(200);
    files.push({ storage_upload_key: link.body.file.storage_upload_key });
  }
  const job = await api.post<{ id: string }>('/v1/task-import-jobs', { files, ...IMPORT_WINDOW }, planner);
  expect(job.status, JSON.stringify(job.body)).toBe(201);
  expect((await api.post(`/v1/task-import-jobs/${job.body.id}/start`, {}, planner)).status).toBe(202);
  const status = await until(
    () => api.get<{ import_status: string }>(`/v1/task-import-jobs/${job.body.id}/status`, planner),
    (s) => ['completed', 'failed'].includes(s.body.import_status),
  );
  expect(status.body.import_status).toBe('completed');
  const listed = await api.get<{ tasks: { id: string }[] }>(`/v1/tasks?import_job_id=${job.body.id}`, planner);
  expect(listed.body.tasks).toHaveLength(1);
  return listed.body.tasks[0]!.id;
}

describe('a runsheet whose imported task was claimed by a write whose answer was lost', () => {
  it('keeps the task as imported, and the job offers it to the nearest driver as on a day without faults', async () => {
    // Two drivers: the first in the planning's order far from the pickup, the second next to it.
    const drivers: string[] = [];
    for (const latitude of [1.284, 1.3347]) {
      const driver = await invitedMember(api, admin, 'OrgDriver', ROLES.OrgDriver, orgId);
      const fix = await api.put(
        '/v1/driver/location',
        { latitude, longitude: 103.8563, client_time_utc: new Date().toISOString(), client_timezone: 'Asia/Singapore' },
        driver.token,
      );
      expect(fix.status).toBe(200);
      drivers.push(driver.id);
    }
    const taskId = await importedTaskId();
    const planning = await api.post<{ id: string }>('/v1/plannings', { name: 'Lost claim answer' }, planner);

    // The first UpdateItem of P5 is the task's claim: DynamoDB applies it, then the connection resets mid-answer.
    const resets = proxy.counts.reset;
    await proxy.set('reset', 1, ['UpdateItem'], 0, 1);
    const added = await api.post<{ runsheets: { id: string; tasks: Record<string, unknown>[] }[] }>(
      `/v1/plannings/${planning.body.id}/runsheets`,
      { runsheets: [{ id: 'RS-1', task_ids: [taskId] }] },
      planner,
    );
    await proxy.set('pass');
    expect(proxy.counts.reset).toBe(resets + 1);
    expect(added.status, JSON.stringify(added.body)).toBe(200);
    const expected = { id: taskId, from_address: expect.objectContaining({ latitude: 1.3343, longitude: 103.8563 }) };
    expect(added.body.runsheets[0]!.tasks).toEqual([expect.objectContaining(expected)]);
    const stored = await api.get<{ runsheets: { tasks: Record<string, unknown>[] }[] }>(
      `/v1/plannings/${planning.body.id}`,
      planner,
    );
    // Whole as P5 answered it (its null members put back: the runsheet's item stores the copy without them).
    expect(stored.body.runsheets[0]!.tasks).toEqual(added.body.runsheets[0]!.tasks);

    const ready = await api.post<{ version_rev: string }>(
      `/v1/plannings/${planning.body.id}/drivers`,
      { drivers: drivers.map((id) => ({ id })) },
      planner,
    );
    await api.post(
      `/v1/plannings/${planning.body.id}/job`,
      { version_rev: ready.body.version_rev, max_candidates: 1, offer_ttl_s: 900 },
      planner,
    );
    const done = await until(
      () => api.get<{ current_status: string }>(`/v1/plannings/${planning.body.id}/job/status`, planner),
      (s) => !['queued', 'processing'].includes(s.body.current_status),
    );
    expect(done.body.current_status).toBe('completed');
    const pairs = await api.get<{
      pair_records: { pair: { driver: { id: string }; runsheet: { tasks: Record<string, unknown>[] } } }[];
    }>(`/v1/broadcast-plans/${planning.body.id}/pairs`, planner);
    // The nearest driver (without a pickup, the first in the planning's order was offered it).
    expect(pairs.body.pair_records.map((p) => p.pair.driver.id)).toEqual([drivers[1]]);
    // R2 fills the pair's runsheet in from the stored copies, each task whole.
    expect(pairs.body.pair_records[0]!.pair.runsheet.tasks).toEqual(
      added.body.runsheets[0]!.tasks.map((task) => ({ ...task, version_seq: expect.any(Number) })),
    );
    expect(pairs.body.pair_records[0]!.pair.runsheet.tasks[0]).toMatchObject({ notes: null, from_service_s: null });
  }, 60_000);
});

describe('a planning job whose first run wrote part of its offers, the drivers having moved before the rerun', () => {
  it('reruns with the first run’s decision: each runsheet offered once, to the driver first chosen', async () => {
    // Two drivers, each next to half of 26 runsheets (26 pairs with max_candidates 1: two BatchWriteItems of pairs).
    const here = { latitude: 1.284, longitude: 103.8515 };
    const there = { latitude: 1.3343, longitude: 103.8563 };
    const drivers: string[] = [];
    for (const point of [here, there]) {
      const driver = await invitedMember(api, admin, 'OrgDriver', ROLES.OrgDriver, orgId);
      const fix = { ...point, client_time_utc: new Date().toISOString(), client_timezone: 'Asia/Singapore' };
      expect((await api.put('/v1/driver/location', fix, driver.token)).status).toBe(200);
      drivers.push(driver.id);
    }
    const planning = await api.post<{ id: string }>('/v1/plannings', { name: 'Moved before the rerun' }, planner);
    const runsheets = Array.from({ length: 26 }, (_, i) => ({
      id: `RS-${String(i + 1).padStart(2, '0')}`,
      tasks: [{ id: `T${i + 1}`, from_address: { street_address: `${i + 1} Rd`, ...(i < 13 ? here : there) } }],
    }));
    expect((await api.post(`/v1/plannings/${planning.body.id}/runsheets`, { runsheets }, planner)).status).toBe(200);
    const ready = await api.post<{ version_rev: string }>(
      `/v1/plannings/${planning.body.id}/drivers`,
      { drivers: drivers.map((id) => ({ id })) },
      planner,
    );

    // The groups' two batches and one batch of pairs land; the other batch of pairs is throttled: the run dies.
    const throttled = proxy.counts.throttle;
    await proxy.set('throttle', 1, ['BatchWriteItem'], 3);
    await api.post(
      `/v1/plannings/${planning.body.id}/job`,
      { version_rev: ready.body.version_rev, max_candidates: 1, offer_ttl_s: 900 },
      planner,
    );
    // Once the SDK gave up on it (three attempts), reads fail too: the queue's retry waits while the drivers swap
    // places (written past the proxy, as their phones would).
    await until(
      async () => proxy.counts.throttle,
      (n) => n >= throttled + 3,
    );
    await proxy.set('throttle', 1, ['GetItem']);
    const direct = DynamoDBDocumentClient.from(
      new DynamoDBClient({
        endpoint: inject('endpoints').dynamodb,
        region: 'us-east-1',
        credentials: LOCAL_CREDENTIALS,
      }),
    );
    for (const [id, point] of [
      [drivers[0]!, there],
      [drivers[1]!, here],
    ] as const) {
      await direct.send(
        new UpdateCommand({
          TableName: process.env['LOCATIONS_TABLE']!,
          Key: locationKey(id, orgId),
          UpdateExpression: 'SET latitude = :lat, longitude = :lng',
          ExpressionAttributeValues: { ':lat': point.latitude, ':lng': point.longitude },
        }),
      );
    }
    await proxy.set('pass');
    const done = await until(
      () => api.get<{ current_status: string }>(`/v1/plannings/${planning.body.id}/job/status`, planner),
      (s) => !['queued', 'processing'].includes(s.body.current_status),
    );
    expect(done.body.current_status).toBe('completed');
    const pairs = await api.get<{ pair_records: { pair: { runsheet: { id: string }; driver: { id: string } } }[] }>(
      `/v1/broadcast-plans/${planning.body.id}/pairs`,
      planner,
    );
    const offered = pairs.body.pair_records
      .map((p) => `${p.pair.runsheet.id}:${p.pair.driver.id === drivers[0] ? 'first' : 'second'}`)
      .sort();
    // As the first run decided (each half to the driver then next to it), not again from where they are now.
    expect(offered).toEqual(runsheets.map((r, i) => `${r.id}:${i < 13 ? 'first' : 'second'}`));
  }, 60_000);
});

describe('a P6 that removed its runsheet and failed before freeing its imported tasks', () => {
  it('is finished by its retry: 200, and the tasks are free again (not left planned in a runsheet that is gone)', async () => {
    const taskId = await importedTaskId();
    const planning = await api.post<{ id: string }>('/v1/plannings', { name: 'Interrupted removal' }, planner);
    const path = `/v1/plannings/${planning.body.id}/runsheets`;
    expect((await api.post(path, { runsheets: [{ id: 'RS-1', task_ids: [taskId] }] }, planner)).status).toBe(200);
    const task = async () =>
      (await api.get<{ task: { planning_id: string | null } }>(`/v1/tasks/${taskId}`, planner)).body.task;
    expect(await task()).toMatchObject({ planning_id: planning.body.id });

    // The runsheet's removal is a transaction; freeing its task an UpdateItem, which DynamoDB keeps throttling.
    await proxy.set('throttle', 1, ['UpdateItem']);
    const failed = await api.delete(`${path}/RS-1`, undefined, planner);
    await proxy.set('pass');
    expect(failed.status).toBe(503);
    const view = await api.get<{ runsheets: unknown[] }>(`/v1/plannings/${planning.body.id}`, planner);
    expect(view.body.runsheets).toEqual([]);
    expect(await task()).toMatchObject({ planning_id: planning.body.id });

    // The client retries, as a 503 invites.
    expect((await api.delete(`${path}/RS-1`, undefined, planner)).status).toBe(200);
    expect(await task()).toMatchObject({ planning_id: null });
    // Done: another removal of it is a 404 again, and the task may be planned elsewhere.
    expect((await api.delete(`${path}/RS-1`, undefined, planner)).status).toBe(404);
    const next = await api.post<{ id: string }>('/v1/plannings', { name: 'Next' }, planner);
    const taken = await api.post(
      `/v1/plannings/${next.body.id}/runsheets`,
      { runsheets: [{ id: 'RS-9', task_ids: [taskId] }] },
      planner,
    );
    expect(taken.status).toBe(200);
  }, 60_000);
});

describe('a big planning whose writes are slow', () => {
  // Issue 34's bench: 1 500 offers took the job a minute to write, and every offer expired `offer_ttl_s` after the
  // run began, so the last runsheets reached their drivers with their offers expired or about to.
  it('offers each chunk of runsheets for offer_ttl_s from its own broadcast, not from the run’s start', async () => {
    const driver = await invitedMember(api, admin, 'OrgDriver', ROLES.OrgDriver, orgId);
    const at = { latitude: 1.3, longitude: 103.8 };
    expect(
      (await api.put('/v1/driver/location', { ...at, client_time_utc: new Date().toISOString() }, driver.token)).status,
    ).toBe(200);
    const planning = await api.post<{ id: string }>('/v1/plannings', { name: 'Slow writes' }, planner);
    // 51 runsheets: the job writes 50 at a time, so RS-51 is the second chunk's.
    const runsheets = Array.from({ length: 51 }, (_, i) => ({
      id: `RS-${String(i + 1).padStart(2, '0')}`,
      tasks: [{ id: `S${i + 1}`, from_address: { street_address: `${i + 1} Rd`, ...at } }],
    }));
    expect((await api.post(`/v1/plannings/${planning.body.id}/runsheets`, { runsheets }, planner)).status).toBe(200);
    const ready = await api.post<{ version_rev: string }>(
      `/v1/plannings/${planning.body.id}/drivers`,
      { drivers: [{ id: driver.id }] },
      planner,
    );
    // The first chunk's pairs take three seconds to write (a store under load): the second chunk goes out that late.
    await withMiddleware(
      'slow-first-chunk',
      (next, context) => async (args) => {
        const input = args.input as {
          RequestItems?: Record<string, { PutRequest?: { Item?: { pair?: { runsheet?: { id?: string } } } } }[]>;
        };
        const items = Object.values(input.RequestItems ?? {}).flat();
        const slow = items.some((w) => w.PutRequest?.Item?.pair?.runsheet?.id === 'RS-01');
        if (context.commandName === 'BatchWriteItemCommand' && slow) {
          await new Promise((resolve) => setTimeout(resolve, 3000));
        }
        return next(args);
      },
      async () => {
        await api.post(
          `/v1/plannings/${planning.body.id}/job`,
          { version_rev: ready.body.version_rev, max_candidates: 1, offer_ttl_s: 5, max_waves: 1 },
          planner,
        );
        await until(
          () => api.get<{ current_status: string }>(`/v1/plannings/${planning.body.id}/job/status`, planner),
          (s) => !['queued', 'processing'].includes(s.body.current_status),
        );
      },
    );
    type Pair = {
      pair: { runsheet: { id: string } };
      statuses: { action: string; expired_time: string | null; happened_at_utc: string }[];
    };
    const pairs = await api.get<{ pair_records: Pair[] }>(`/v1/broadcast-plans/${planning.body.id}/pairs`, planner);
    const broadcastOf = (id: string) =>
      pairs.body.pair_records.find((p) => p.pair.runsheet.id === id)!.statuses.find((s) => s.action === 'broadcast')!;
    const first = broadcastOf('RS-01');
    const last = broadcastOf('RS-51');
    // Each offer runs 5 s from its own broadcast; the second chunk's broadcast, and so its expiry, came 3 s later.
    for (const offer of [first, last]) {
      expect(Date.parse(offer.expired_time!) - Date.parse(offer.happened_at_utc)).toBe(5000);
    }
    expect(Date.parse(last.expired_time!) - Date.parse(first.expired_time!)).toBeGreaterThanOrEqual(2500);
  }, 60_000);
});

describe('a P9 whose answer was lost after the job was queued', () => {
  // The chaos day (chaos.test.ts) once met this: the planning's write committed, its answer was lost, P9 answered 503,
  // and the client's retry with the same Idempotency-Key found "a job of this planning is already queued or running".
  it('answers the retry with the same Idempotency-Key 202 with that one job, not a 409', async () => {
    const driver = await invitedMember(api, admin, 'OrgDriver', ROLES.OrgDriver, orgId);
    const fix = { latitude: 1.3, longitude: 103.8, client_time_utc: new Date().toISOString() };
    expect((await api.put('/v1/driver/location', fix, driver.token)).status).toBe(200);
    const planning = await api.post<{ id: string }>('/v1/plannings', { name: 'Lost start' }, planner);
    const path = `/v1/plannings/${planning.body.id}`;
    const runsheets = [{ id: 'RS-1', tasks: [{ id: 'T1', from_address: { street_address: '1 Rd', ...fix } }] }];
    expect((await api.post(`${path}/runsheets`, { runsheets }, planner)).status).toBe(200);
    const ready = await api.post<{ version_rev: string }>(`${path}/drivers`, { drivers: [{ id: driver.id }] }, planner);
    const start = { version_rev: ready.body.version_rev, max_candidates: 1, offer_ttl_s: 600 };
    const key = { 'idempotency-key': `start-${planning.body.id}` };

    // The write that queues the job reaches DynamoDB; its answer does not (a connection reset after it was applied).
    const lost = await withMiddleware(
      'lose-job-start',
      (next) => async (args) => {
        const out = await next(args);
        const values = Object.values(
          (args.input as { ExpressionAttributeValues?: object }).ExpressionAttributeValues ?? {},
        );
        if (values.some((v) => (v as { current_status?: string } | null)?.current_status === 'queued')) {
          throw Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' });
        }
        return out;
      },
      () => api.post(`${path}/job`, start, planner, key),
    );
    expect(lost.status).toBe(503);

    const retried = await api.post(`${path}/job`, start, planner, key);
    expect(retried.status, JSON.stringify(retried.body)).toBe(202);
    const done = await until(
      () => api.get<{ current_status: string }>(`${path}/job/status`, planner),
      (s) => !['queued', 'processing'].includes(s.body.current_status),
    );
    expect(done.body.current_status).toBe('completed');
    // One job, offered once: the runsheet to its one driver.
    const pairs = await api.get<{ pair_records: unknown[] }>(`/v1/broadcast-plans/${planning.body.id}/pairs`, planner);
    expect(pairs.body.pair_records).toHaveLength(1);
    // Another key is another request: its version_rev is stale now (the start moved it).
    const other = await api.post(`${path}/job`, start, planner, { 'idempotency-key': 'other' });
    expect(other.status).toBe(409);
  }, 60_000);
});
