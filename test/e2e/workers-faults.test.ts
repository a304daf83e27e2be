/**
 * Issue 14, item 5: the queue workers under DynamoDB faults. An import whose writing pass is cut off after two
 * batches, and a planning job whose pair writes fail after three pairs, are handed back by the work queue; once the
 * fault clears the run finishes exactly once: no duplicate task, item or pair, one result, the statuses walked once,
 * nothing left `processing`, nothing in the dead-letter queue, and every pair offered (its event sent) at least once.
 */
import { ScanCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import WebSocket from 'ws';
import type { RunningHost } from '../../lib/local/start.ts';
import { ROLES } from '../../shared/auth/roles.ts';
import { pairFromItem } from '../../shared/planning/pair-records.ts';
import { localDeadLetters } from '../../shared/ports/queue.ts';
import { type FaultProxy, startFaultProxy } from '../support/fault-proxy.ts';
import { type Client, client, invitedMember, loginAs } from '../support/http.ts';
import { putUpload } from '../support/imports.ts';
import { ADMIN, startTestHost } from '../support/local.ts';
import { until } from '../support/until.ts';

let host: RunningHost;
let proxy: FaultProxy;
let api: Client;
let planner: string;
let admin: string;
let orgId: string;
const drivers: string[] = [];
const driverTokens = new Map<string, string>();

beforeAll(async () => {
  proxy = await startFaultProxy(inject('endpoints').dynamodb, 'dynamodb');
  host = await startTestHost({ dynamodb: proxy.url });
  api = client(host.url);
  admin = (await loginAs(api, ADMIN.email, ADMIN.password)).bearer_token;
  const org = await api.post<{ id: string }>(
    '/v1/admin/organisations',
    { name: 'Fault Freight', kind: 'transporter' },
    admin,
  );
  orgId = org.body.id;
  planner = (await invitedMember(api, admin, 'OrgAdmin', ROLES.OrgAdmin, orgId)).token;
}, 60_000);

afterAll(async () => {
  await proxy?.set('pass');
  await host?.stop();
  await proxy?.close();
});

async function scanMain() {
  const { db, mainTableName } = await import('../../shared/db/client.ts');
  const items: Record<string, unknown>[] = [];
  let cursor: Record<string, unknown> | undefined;
  do {
    const out = await db().send(new ScanCommand({ TableName: mainTableName(), ExclusiveStartKey: cursor }));
    items.push(...(out.Items ?? []));
    cursor = out.LastEvaluatedKey;
  } while (cursor);
  return items;
}

/** A planning of one runsheet (one task, no coordinates) offered to `driverIds` by its job, run to its end. */
async function offeredPlanning(
  name: string,
  driverIds: string[],
  job: { max_candidates: number; offer_ttl_s: number },
): Promise<{ body: { id: string } }> {
  const planning = await api.post<{ id: string }>('/v1/plannings', { name }, planner);
  await api.post(
    `/v1/plannings/${planning.body.id}/runsheets`,
    { runsheets: [{ id: 'RS-1', tasks: [{ id: 'T1', from_address: { street_address: '1 Rd' } }] }] },
    planner,
  );
  const ready = await api.post<{ version_rev: string }>(
    `/v1/plannings/${planning.body.id}/drivers`,
    { drivers: driverIds.map((id) => ({ id })) },
    planner,
  );
  await api.post(`/v1/plannings/${planning.body.id}/job`, { version_rev: ready.body.version_rev, ...job }, planner);
  await until(
    () => api.get<{ current_status: string }>(`/v1/plannings/${planning.body.id}/job/status`, planner),
    (s) => !['queued', 'processing'].includes(s.body.current_status),
  );
  return planning;
}

const HEADER =
  'task_ref,from_street_address,from_city,from_country,to_street_address,to_city,to_country,from_start_time_utc,from_end_time_utc,from_timezone,to_start_time_utc,to_end_time_utc,to_timezone';

/** An import job (status new) of `rows` tasks, each with one item, uploaded through presigned URLs. */
async function newImportJob(rows: number): Promise<string> {
  const tasks = [HEADER];
  const items = ['task_ref,sku,description,quantity,weight,weight_unit'];
  for (let i = 1; i <= rows; i++) {
    tasks.push(
      `T${i},${i} Depot Rd,Singapore,SG,${i} Mall,Singapore,SG,2026-11-22T01:00:00Z,2026-11-22T03:00:00Z,Asia/Singapore,2026-11-22T04:00:00Z,2026-11-22T08:00:00Z,Asia/Singapore`,
    );
    items.push(`T${i},SKU-${i},Parcel,2,1.5,kg`);
  }
  const files = [];
  for (const [name, text] of [
    ['tasks.csv', `${tasks.join('\n')}\n`],
    ['items.csv', `${items.join('\n')}\n`],
  ] as const) {
    const link = await api.get<{ file: { url: string; storage_upload_key: string } }>(
      `/v1/task-import-jobs/upload-url?filename=${name}`,
      planner,
    );
    expect((await putUpload(link.body.file.url, text)).status).toBe(200);
    files.push({ storage_upload_key: link.body.file.storage_upload_key });
  }
  const job = await api.post<{ id: string }>(
    '/v1/task-import-jobs',
    {
      files,
      start_timezone: 'Asia/Singapore',
      start_time: '2026-11-22T08:00:00+08:00',
      end_timezone: 'Asia/Singapore',
      end_time: '2026-11-22T20:00:00+08:00',
      service_type: 'van_1.7m',
    },
    planner,
  );
  expect(job.status, JSON.stringify(job.body)).toBe(201);
  return job.body.id;
}

describe('an import whose worker meets DynamoDB faults mid-run', () => {
  it('is retried by the queue and finishes exactly once when they clear', async () => {
    const rows = 120;
    const job = { body: { id: await newImportJob(rows) } };
    // Two batches of 25 land, then every batch write is throttled: the run dies with tasks half written.
    await proxy.set('throttle', 1, ['BatchWriteItem'], 2);
    expect((await api.post(`/v1/task-import-jobs/${job.body.id}/start`, {}, planner)).status).toBe(202);
    // At least two runs fail (each after the SDK's three attempts) before the fault clears.
    await until(
      async () => proxy.counts.throttle,
      (throttled) => throttled >= 6,
    );
    const midway = await api.get<{ import_status: string }>(`/v1/task-import-jobs/${job.body.id}/status`, planner);
    await proxy.set('pass');
    const status = await until(
      () => api.get<{ import_status: string }>(`/v1/task-import-jobs/${job.body.id}/status`, planner),
      (s) => ['completed', 'failed'].includes(s.body.import_status),
    );
    console.log(
      `import: ${proxy.counts.throttle} batch writes throttled; status while faulty: ${midway.body.import_status}`,
    );
    expect(midway.body.import_status).toBe('processing');
    expect(status.body.import_status).toBe('completed');

    const all = await scanMain();
    const mine = all.filter((i) => i['import_job_id'] === job.body.id);
    expect(mine.filter((i) => i['entity'] === 'task')).toHaveLength(rows);
    expect(mine.filter((i) => i['entity'] === 'task_item')).toHaveLength(rows);
    expect(all.filter((i) => i['entity'] === 'import_result' && String(i['PK']).includes(job.body.id))).toHaveLength(1);
    const stored = all.find((i) => i['entity'] === 'import_job' && i['id'] === job.body.id)!;
    expect((stored['statuses'] as { status: string }[]).map((s) => s.status)).toEqual([
      'new',
      'queued',
      'processing',
      'completed',
    ]);
    const result = await api.get<{ total_tasks_imported: number; total_items_imported: number; errors: string[] }>(
      `/v1/task-import-jobs/${job.body.id}/result`,
      planner,
    );
    expect(result.body).toMatchObject({ total_tasks_imported: rows, total_items_imported: rows, errors: [] });
    expect(localDeadLetters.filter((d) => d.message['job_id'] === job.body.id)).toEqual([]);
  }, 60_000);
});

describe('a planning job whose pair writes fail mid-run', () => {
  it('is retried by the queue, writes every pair once, offers each at least once, and completes once', async () => {
    for (let i = 0; i < 2; i++) {
      const driver = await invitedMember(api, admin, 'OrgDriver', ROLES.OrgDriver, orgId);
      drivers.push(driver.id);
      driverTokens.set(driver.id, driver.token);
      const fix = await api.put(
        '/v1/driver/location',
        {
          latitude: 1.3 + i * 0.01,
          longitude: 103.8,
          client_time_utc: new Date().toISOString(),
          client_timezone: 'Asia/Singapore',
        },
        driver.token,
      );
      expect(fix.status).toBe(200);
    }
    const planning = await api.post<{ id: string }>('/v1/plannings', { name: 'Fault run' }, planner);
    const runsheets = [1, 2, 3, 4].map((i) => ({
      id: `RS-${i}`,
      tasks: [{ id: `T${i}`, from_address: { street_address: `${i} Rd`, latitude: 1.3, longitude: 103.8 + i / 100 } }],
    }));
    await api.post(`/v1/plannings/${planning.body.id}/runsheets`, { runsheets }, planner);
    const ready = await api.post<{ version_rev: string }>(
      `/v1/plannings/${planning.body.id}/drivers`,
      { drivers: drivers.map((id) => ({ id })) },
      planner,
    );
    expect(ready.status, JSON.stringify(ready.body)).toBe(200);

    const socket = new WebSocket(`${host.url.replace(/^http/, 'ws')}/ws?token=${planner}`);
    const broadcast: string[] = [];
    await new Promise<void>((resolve, reject) => {
      socket.once('error', reject);
      socket.on('message', (data) => {
        const frame = JSON.parse(data.toString()) as { type: string; name?: string; data?: { pair_id: string } };
        if (frame.type === 'subscribed') resolve();
        if (frame.name === 'pair.broadcast') broadcast.push(frame.data!.pair_id);
      });
      socket.once('open', () =>
        socket.send(JSON.stringify({ action: 'subscribe', channels: [`planning.${planning.body.id}`] })),
      );
    });

    // Three pairs land, then every PutItem (the pair writes) is throttled: the run dies part way.
    await proxy.set('throttle', 1, ['PutItem'], 3);
    const started = await api.post(
      `/v1/plannings/${planning.body.id}/job`,
      { version_rev: ready.body.version_rev, max_candidates: 2, offer_ttl_s: 900 },
      planner,
    );
    expect(started.status, JSON.stringify(started.body)).toBe(202);
    await until(
      async () => proxy.counts.throttle,
      (throttled) => throttled >= 6,
    );
    await proxy.set('pass');
    const status = await until(
      () => api.get<{ current_status: string }>(`/v1/plannings/${planning.body.id}/job/status`, planner),
      (s) => !['queued', 'processing'].includes(s.body.current_status),
    );
    await new Promise((r) => setTimeout(r, 200));
    socket.close();
    console.log(
      `planning: ${proxy.counts.throttle} pair writes throttled; ${broadcast.length} pair.broadcast events for 8 pairs`,
    );
    expect(status.body.current_status).toBe('completed');

    const all = await scanMain();
    const pairs = all.filter(
      (i) => i['entity'] === 'pair_record' && String(i['PK']).startsWith(`BPLAN#${planning.body.id}#`),
    );
    expect(pairs).toHaveLength(8);
    for (const pair of pairs) {
      // Stored as compact entries (issue 45): read back as the service reads them.
      expect(pairFromItem(pair).statuses.map((s) => s.action)).toEqual(['created', 'broadcast']);
    }
    expect(new Set(broadcast)).toEqual(new Set(pairs.map((p) => String(p['id']))));
    const stored = all.find((i) => i['entity'] === 'planning' && i['id'] === planning.body.id)!;
    const job = stored['job'] as { statuses: { status: string }[] };
    expect(job.statuses.map((s) => s.status)).toEqual(['queued', 'processing', 'completed']);
    expect(
      all.filter((i) => i['entity'] === 'planning_result' && i['PK'] === `PLANNING#${planning.body.id}`),
    ).toHaveLength(1);
    expect(localDeadLetters.filter((d) => d.message['planning_id'] === planning.body.id)).toEqual([]);
  }, 60_000);
});

describe('an accept whose effects fail after its commit', () => {
  it('answers 503, and its retry closes the rival offer and announces the accept: nothing left half done', async () => {
    const planning = await offeredPlanning('Accept run', drivers, { max_candidates: 2, offer_ttl_s: 900 });
    type Pair = { id: string; current_state: string; pair: { driver: { id: string } }; statuses: { reason: string }[] };
    const pairs = async () =>
      (await api.get<{ pair_records: Pair[] }>(`/v1/broadcast-plans/${planning.body.id}/pairs`, planner)).body
        .pair_records;
    const [mine, rival] = await pairs();
    expect(rival).toBeDefined();
    const accept = () =>
      api.post(
        `/v1/broadcast-plans/${planning.body.id}/pairs/${mine!.id}/accepted`,
        { happened_at_utc: '2026-11-22T09:00:00Z' },
        driverTokens.get(mine!.pair.driver.id),
        { 'idempotency-key': `accept-${mine!.id}` },
      );
    // Batch reads fail: the accept's own reads and its transaction do not use one; closing the rival does (the
    // rivals' states, read by the offer group's ids).
    await proxy.set('throttle', 1, ['BatchGetItem']);
    const first = await accept();
    await proxy.set('pass');
    expect(first.status, JSON.stringify(first.body)).toBe(503);
    const between = await pairs();
    // The accept was recorded; its effects were not: the honest answer was 503, not a 200 with the rival open.
    expect(between.find((p) => p.id === mine!.id)!.current_state).toBe('accepted');
    expect(between.find((p) => p.id === rival!.id)!.current_state).toBe('broadcasted');
    const retried = await accept();
    expect(retried.status, JSON.stringify(retried.body)).toBe(200);
    const after = await pairs();
    expect(after.find((p) => p.id === mine!.id)!.current_state).toBe('accepted');
    const closed = after.find((p) => p.id === rival!.id)!;
    expect(closed.current_state).toBe('rejected');
    expect(closed.statuses.at(-1)!.reason).toBe('assigned_to_other_driver');
  }, 30_000);
});

describe('a job end whose announcement fails', () => {
  it('answers 503 with the move made; the retry announces it and marks it, a third call is 409', async () => {
    const { findPlanning } = await import('../../shared/planning/planning-records.ts');
    const { changePlanning } = await import('../../shared/planning/plannings.ts');
    const planning = await api.post<{ id: string }>('/v1/plannings', { name: 'Told late' }, planner);
    const now = new Date().toISOString();
    // A queued job that no worker will take (no work message): only the cancel below moves it.
    await changePlanning((await findPlanning(planning.body.id))!, undefined, {
      job: {
        id: 'a0a0a0a0-0000-4000-8000-0000000000a0',
        current_status: 'queued',
        statuses: [{ status: 'queued', set_at_utc: now }],
        status_updated_at: now,
        max_candidates: 1,
        offer_ttl_s: 900,
      },
    });
    const cancel = () => api.post(`/v1/plannings/${planning.body.id}/job/cancelled`, {}, planner);
    const marks = async () =>
      (await scanMain()).filter(
        (i) => i['entity'] === 'planning_job_announced' && i['PK'] === `PLANNING#${planning.body.id}`,
      );
    // The move (an UpdateItem) is written; the announcement's mark (a PutItem) is not.
    await proxy.set('throttle', 1, ['PutItem']);
    const first = await cancel();
    await proxy.set('pass');
    expect(first.status, JSON.stringify(first.body)).toBe(503);
    const status = await api.get<{ current_status: string }>(`/v1/plannings/${planning.body.id}/job/status`, planner);
    expect(status.body.current_status).toBe('cancelled');
    expect(await marks()).toEqual([]);
    // The retry finds the move unannounced: it announces it and answers as the first should have.
    const retried = await cancel();
    expect(retried.status, JSON.stringify(retried.body)).toBe(200);
    expect((await marks()).map((m) => m['status'])).toEqual(['cancelled']);
    // Announced: a cancelled job cannot be cancelled again.
    expect((await cancel()).status).toBe(409);
  }, 30_000);
});

describe('an expired offer whose close fails', () => {
  it('keeps the offer watch due, and a later sweep closes it once the fault clears', async () => {
    const planning = await offeredPlanning('Closed late', [drivers[0]!], { max_candidates: 1, offer_ttl_s: 5 });
    type Pair = { current_state: string; statuses: { reason: string | null }[] };
    const pair = async () =>
      (await api.get<{ pair_records: Pair[] }>(`/v1/broadcast-plans/${planning.body.id}/pairs`, planner)).body
        .pair_records[0]!;
    const watch = async () =>
      (await scanMain()).find((i) => String(i['PK']).startsWith(`BPLAN#${planning.body.id}#`) && i['SK'] === 'OFFERS');
    expect((await watch())?.['GSI3PK']).toBe(`OFFERS#${orgId}`);
    // The pair's close is a PutItem: it fails through the expiry and several sweeps (every 2 s) after it.
    await proxy.set('throttle', 1, ['PutItem']);
    await new Promise((r) => setTimeout(r, 9_000));
    const during = await pair();
    const due = await watch();
    await proxy.set('pass');
    expect(during.current_state).toBe('broadcasted');
    // Still due (before: the watch moved past the pair it failed to close, which then never expired).
    expect(due?.['GSI3PK']).toBe(`OFFERS#${orgId}`);
    expect(String(due?.['GSI3SK']) < new Date().toISOString()).toBe(true);
    const closed = await until(pair, (p) => p.current_state === 'rejected');
    expect(closed.current_state).toBe('rejected');
    expect(closed.statuses.at(-1)!.reason).toBe('expired');
    // Nothing left open: the watch is dropped.
    const done = await until(watch, (w) => w?.['GSI3PK'] === undefined);
    expect(done?.['GSI3PK']).toBeUndefined();
  }, 60_000);
});

describe('jobs whose work message was lost', () => {
  it('are given a new one by the sweep: nothing stays processing or queued', async () => {
    const { db, mainTableName } = await import('../../shared/db/client.ts');
    const { activeJobsPartition } = await import('../../shared/workers/active-jobs.ts');
    const past = new Date(Date.now() - 1000).toISOString();
    // An import whose run died and whose message reached the dead-letter queue: processing, its lease lapsed.
    const importId = await newImportJob(3);
    await db().send(
      new UpdateCommand({
        TableName: mainTableName(),
        Key: { PK: `IMPORTJOB#${importId}`, SK: 'JOB' },
        UpdateExpression:
          'SET current_status = :p, statuses = list_append(statuses, :entries), lease_until = :lapsed, attempts = :one, GSI3PK = :active, GSI3SK = :past',
        ExpressionAttributeValues: {
          ':p': 'processing',
          ':entries': [
            { status: 'queued', set_at_utc: past },
            { status: 'processing', set_at_utc: past },
          ],
          ':lapsed': Date.now() - 1000,
          ':one': 1,
          ':active': activeJobsPartition(orgId),
          ':past': past,
        },
      }),
    );
    // A planning job queued by P9 whose message never reached the queue.
    const planning = await api.post<{ id: string }>('/v1/plannings', { name: 'Lost message' }, planner);
    await api.post(
      `/v1/plannings/${planning.body.id}/runsheets`,
      { runsheets: [{ id: 'RS-L', tasks: [{ id: 'TL', from_address: { street_address: '9 Rd' } }] }] },
      planner,
    );
    await api.post(`/v1/plannings/${planning.body.id}/drivers`, { drivers: drivers.map((id) => ({ id })) }, planner);
    const jobId = 'lost-message-job';
    await db().send(
      new UpdateCommand({
        TableName: mainTableName(),
        Key: { PK: `PLANNING#${planning.body.id}`, SK: 'PROFILE' },
        UpdateExpression: 'SET job = :job, GSI3PK = :active, GSI3SK = :past',
        ExpressionAttributeValues: {
          ':job': {
            id: jobId,
            current_status: 'queued',
            statuses: [{ status: 'queued', set_at_utc: past }],
            status_updated_at: past,
            max_candidates: 2,
            offer_ttl_s: 900,
          },
          ':active': activeJobsPartition(orgId),
          ':past': past,
        },
      }),
    );
    const imported = await until(
      () => api.get<{ import_status: string }>(`/v1/task-import-jobs/${importId}/status`, planner),
      (s) => ['completed', 'failed'].includes(s.body.import_status),
    );
    const planned = await until(
      () => api.get<{ current_status: string }>(`/v1/plannings/${planning.body.id}/job/status`, planner),
      (s) => !['queued', 'processing'].includes(s.body.current_status),
    );
    expect(imported.body.import_status).toBe('completed');
    expect(planned.body.current_status).toBe('completed');
    const all = await scanMain();
    expect(all.filter((i) => i['entity'] === 'task' && i['import_job_id'] === importId)).toHaveLength(3);
    expect(
      all.filter((i) => i['entity'] === 'pair_record' && String(i['PK']).startsWith(`BPLAN#${planning.body.id}#`)),
    ).toHaveLength(2);
    // Ended jobs leave the watch list.
    expect(
      all.filter(
        (i) => String(i['GSI3PK']).startsWith('ACTIVEJOBS#') && [importId, planning.body.id].includes(String(i['id'])),
      ),
    ).toEqual([]);
  }, 30_000);
});

describe('a WebSocket subscribe that meets a DynamoDB fault', () => {
  it('answers an `unavailable` error frame (the client waited for ever before), and subscribing again works', async () => {
    const socket = new WebSocket(`${host.url.replace(/^http/, 'ws')}/ws?token=${planner}`);
    const frames: { type: string; code?: string }[] = [];
    socket.on('message', (data) => frames.push(JSON.parse(data.toString()) as { type: string; code?: string }));
    await new Promise<void>((resolve, reject) => {
      socket.once('open', () => resolve());
      socket.once('error', reject);
    });
    const subscribe = () => socket.send(JSON.stringify({ action: 'subscribe', channels: [`org.${orgId}`] }));
    await proxy.set('error', 1, ['GetItem']);
    subscribe();
    await until(
      async () => frames.length,
      (n) => n > 0,
    );
    await proxy.set('pass');
    expect(frames[0]).toMatchObject({ type: 'error', code: 'unavailable' });
    subscribe();
    await until(
      async () => frames.length,
      (n) => n > 1,
    );
    socket.close();
    expect(frames[1]).toMatchObject({ type: 'subscribed', channels: [`org.${orgId}`] });
  });
});
