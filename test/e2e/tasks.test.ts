/**
 * Imported tasks (X10, X11) and planning them by id (P5 `task_ids`, P6): two jobs of organisation X and one of Y,
 * imported through the real worker; listing with filters and paging, reading with items, bad ids, tenancy, the 400
 * for an unknown or foreign id, the 409 for a task in another planning's runsheet, two P5 racing for one task, and
 * P6 (and a replaced runsheet) freeing tasks.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningHost } from '../../lib/local/start.ts';
import { ROLES, type Role } from '../../shared/auth/roles.ts';
import { type Client, client, invitedMember, loginAs } from '../support/http.ts';
import { IMPORT_WINDOW, putUpload } from '../support/imports.ts';
import { ADMIN, startTestHost } from '../support/local.ts';

let host: RunningHost;
let api: Client;
let admin: string;
let orgX: string;
let orgY: string;
let merchantX: string;
let transporterX: string;
let adminY: string;

type Task = {
  id: string;
  task_ref: string;
  import_job_id: string;
  planning_id: string | null;
  runsheet_id: string | null;
  total_item_count: number | null;
  from_address: { street_address: string; latitude?: number };
};
type Problem = { code: string; errors: { path: string; message: string }[] };
type Planning = {
  id: string;
  runsheets: { id: string; service_type?: string; tasks: { id: string; task_ref: string }[] }[];
};

const HEADER =
  'task_ref,from_street_address,from_city,from_country,to_street_address,to_city,to_country,from_start_time_utc,from_end_time_utc,from_timezone,to_start_time_utc,to_end_time_utc,to_timezone,notes,from_latitude,from_longitude';
const tasksCsv = (refs: string[]) =>
  [
    HEADER,
    ...refs.map(
      (ref, i) =>
        `${ref},${i + 1} Depot Way,Singapore,SG,20 Collyer Quay,Singapore,SG,2026-11-22T01:00:00Z,2026-11-22T03:00:00Z,Asia/Singapore,2026-11-22T04:00:00Z,2026-11-22T06:00:00Z,Asia/Singapore,note ${ref},1.3,103.8`,
    ),
  ].join('\n');
const itemsCsv = (ref: string) =>
  ['task_ref,sku,description,quantity,weight,weight_unit', `${ref},SKU-1,Box,2,1.5,kg`, `${ref},,Envelope,3,,`].join(
    '\n',
  );

/** Imports `refs` (and two items for the first) as `token`'s organisation; answers the job id once completed. */
async function imported(token: string, refs: string[]): Promise<string> {
  const put = async (name: string, text: string) => {
    const url = await api.get<{ file: { url: string; storage_upload_key: string } }>(
      `/v1/task-import-jobs/upload-url?filename=${name}`,
      token,
    );
    expect((await putUpload(url.body.file.url, text)).status).toBe(200);
    return { storage_upload_key: url.body.file.storage_upload_key };
  };
  const job = await api.post<{ id: string }>(
    '/v1/task-import-jobs',
    { files: [await put('tasks.csv', tasksCsv(refs)), await put('items.csv', itemsCsv(refs[0]!))], ...IMPORT_WINDOW },
    token,
  );
  expect(job.status, JSON.stringify(job.body)).toBe(201);
  expect((await api.post(`/v1/task-import-jobs/${job.body.id}/start`, {}, token)).status).toBe(202);
  const deadline = Date.now() + 20_000;
  for (;;) {
    const status = await api.get<{ import_status: string }>(`/v1/task-import-jobs/${job.body.id}/status`, token);
    if (status.body.import_status === 'completed') return job.body.id;
    if (status.body.import_status === 'failed' || Date.now() > deadline)
      throw new Error(`import ended ${status.body.import_status}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const list = (query: string, token = merchantX) =>
  api.get<{ tasks: Task[]; meta: { next_page_token: string | null; page: number } }>(`/v1/tasks?${query}`, token);

/** Every task of a listing, walked by page_token. */
async function walk(query: string, perPage: number, token = merchantX): Promise<Task[]> {
  const all: Task[] = [];
  let next: string | null = null;
  let pages = 0;
  do {
    const page = await list(
      `${query}&per_page=${perPage}${next ? `&page_token=${encodeURIComponent(next)}` : ''}`,
      token,
    );
    expect(page.status, JSON.stringify(page.body)).toBe(200);
    expect(page.body.tasks.length).toBeLessThanOrEqual(perPage);
    all.push(...page.body.tasks);
    next = page.body.meta.next_page_token;
    pages++;
  } while (next && pages < 50);
  return all;
}

let job1: string;
let job2: string;
let jobY: string;
const byRef = new Map<string, Task>();
let foreignTask: Task;

const newPlanning = async (name: string, token = transporterX) =>
  (await api.post<{ id: string }>('/v1/plannings', { name }, token)).body.id;
const addRunsheets = (planningId: string, runsheets: unknown[], token = transporterX) =>
  api.post<Planning & Problem>(`/v1/plannings/${planningId}/runsheets`, { runsheets }, token);
const idOf = (ref: string) => byRef.get(ref)!.id;
const taskOf = async (ref: string) => (await api.get<{ task: Task }>(`/v1/tasks/${idOf(ref)}`, merchantX)).body.task;

beforeAll(async () => {
  host = await startTestHost();
  api = client(host.url);
  admin = (await loginAs(api, ADMIN.email, ADMIN.password)).bearer_token;
  const organisation = async (name: string) =>
    (await api.post<{ id: string }>('/v1/admin/organisations', { name, kind: 'merchant' }, admin)).body.id;
  orgX = await organisation('Tasks X');
  orgY = await organisation('Tasks Y');
  const member = async (role: Role, org: string) => (await invitedMember(api, admin, role, ROLES[role], org)).token;
  merchantX = await member('Merchant', orgX);
  transporterX = await member('OrgTransporter', orgX);
  adminY = await member('OrgAdmin', orgY);
  job1 = await imported(merchantX, ['A1', 'A2', 'A3', 'A4', 'A5', 'A6', 'A7']);
  job2 = await imported(merchantX, ['B1', 'B2', 'B3', 'B4', 'B5']);
  jobY = await imported(adminY, ['Y1', 'Y2']);
  for (const task of await walk('order=asc', 1000)) byRef.set(task.task_ref, task);
  foreignTask = (await list('', adminY)).body.tasks[0]!;
}, 120_000);
afterAll(() => host?.stop());

describe('X10 and X11: imported tasks', () => {
  it('lists the organisation’s tasks, oldest job first in file order with order=asc, newest first by default', async () => {
    const refs = [...byRef.keys()];
    expect(refs).toEqual(['A1', 'A2', 'A3', 'A4', 'A5', 'A6', 'A7', 'B1', 'B2', 'B3', 'B4', 'B5']);
    expect(byRef.get('A1')).toMatchObject({ import_job_id: job1, planning_id: null, runsheet_id: null });
    const desc = await walk('', 1000);
    expect(desc.map((t) => t.task_ref)).toEqual([...refs].reverse());
  });

  it('filters by import job, and walks pages by page_token and by page number without a gap or a repeat', async () => {
    const ofJob2 = await walk(`import_job_id=${job2}&order=asc`, 2);
    expect(ofJob2.map((t) => t.task_ref)).toEqual(['B1', 'B2', 'B3', 'B4', 'B5']);
    const walked = await walk('order=asc', 5);
    expect(walked.map((t) => t.task_ref)).toEqual([...byRef.keys()]);
    const third = await list(`order=asc&per_page=5&page=3`);
    expect(third.body.tasks.map((t) => t.task_ref)).toEqual(['B4', 'B5']);
    expect(third.body.meta).toMatchObject({ page: 3, next_page_token: null });
    expect((await list(`import_job_id=${jobY}`)).body.tasks).toEqual([]);
  });

  it('reads one task with its items, and nothing of the storage', async () => {
    const read = await api.get<{ task: Task & { items: { description: string; quantity: number }[] } }>(
      `/v1/tasks/${idOf('B1')}`,
      transporterX,
    );
    expect(read.status).toBe(200);
    expect(read.body.task).toMatchObject({
      id: idOf('B1'),
      task_ref: 'B1',
      import_job_id: job2,
      total_item_count: 5,
      notes: 'note B1',
      from_address: { street_address: '1 Depot Way', latitude: 1.3, longitude: 103.8 },
      planning_id: null,
    });
    expect(read.body.task.items.map((i) => [i.description, i.quantity])).toEqual([
      ['Box', 2],
      ['Envelope', 3],
    ]);
    expect(Object.keys(read.body.task)).not.toEqual(expect.arrayContaining(['PK']));
    for (const key of ['PK', 'SK', 'GSI1PK', 'GSI2PK', 'entity', 'org_id'])
      expect(read.body.task).not.toHaveProperty(key);
  });

  it('answers bad ids and bad filters with the contract’s 400, unknown ids with 404', async () => {
    const bad = await api.get<Problem>('/v1/tasks/not-an-id', merchantX);
    expect(bad.status).toBe(400);
    expect(bad.body.errors[0]!.path).toBe('path.taskID');
    expect((await api.get<Problem>(`/v1/tasks/${'0'.repeat(24)}`, merchantX)).status).toBe(404);
    for (const [query, path] of [
      ['planned=maybe', 'query.planned'],
      ['import_job_id=xyz', 'query.import_job_id'],
      ['per_page=1001', 'query.per_page'],
      ['page_token=forged', 'query.page_token'],
    ] as const) {
      const answer = await api.get<Problem>(`/v1/tasks?${query}`, merchantX);
      expect(answer.status, query).toBe(400);
      expect(answer.body.errors[0]!.path, query).toBe(path);
    }
  });

  it('keeps another organisation’s tasks out: 404 to read, absent from lists, 403 to name its org_id', async () => {
    expect((await api.get(`/v1/tasks/${idOf('A1')}`, adminY)).status).toBe(404);
    expect((await api.get(`/v1/tasks/${foreignTask.id}`, merchantX)).status).toBe(404);
    expect((await walk('', 1000, adminY)).map((t) => t.task_ref).sort()).toEqual(['Y1', 'Y2']);
    expect((await list(`import_job_id=${job1}`, adminY)).body.tasks).toEqual([]);
    expect((await list(`org_id=${orgX}`, adminY)).status).toBe(403);
  });

  it('lets SysAdmin list one organisation named by org_id (required) and read any task', async () => {
    const missing = await api.get<Problem>('/v1/tasks', admin);
    expect(missing.status).toBe(400);
    expect(missing.body.errors[0]!.path).toBe('query.org_id');
    const ofY = await api.get<{ tasks: Task[] }>(`/v1/tasks?org_id=${orgY}`, admin);
    expect(ofY.body.tasks.map((t) => t.task_ref).sort()).toEqual(['Y1', 'Y2']);
    expect((await api.get(`/v1/tasks/${idOf('A1')}`, admin)).status).toBe(200);
  });
});

describe('P5 task_ids and P6: planning imported tasks', () => {
  let planning: string;

  it('holds the named tasks as imported, in the order named, and X10 shows where they are planned', async () => {
    planning = await newPlanning('Imported day');
    const added = await addRunsheets(planning, [
      { id: 'RS-1', name: 'North', task_ids: [idOf('A3'), idOf('A1')] },
      { id: 'RS-2', task_ids: [idOf('A2')] },
    ]);
    expect(added.status, JSON.stringify(added.body)).toBe(200);
    const rs1 = added.body.runsheets.find((r) => r.id === 'RS-1')!;
    expect(rs1.tasks.map((t) => t.task_ref)).toEqual(['A3', 'A1']);
    // Contract 4.7: a runsheet of imported tasks takes their import job's service_type when it names none.
    expect(added.body.runsheets.map((r) => [r.id, r.service_type])).toEqual([
      ['RS-1', IMPORT_WINDOW.service_type],
      ['RS-2', IMPORT_WINDOW.service_type],
    ]);
    expect(rs1.tasks[0]).toMatchObject({
      id: idOf('A3'),
      import_job_id: job1,
      from_address: { street_address: '3 Depot Way', latitude: 1.3 },
      from_time_window: { start_time_utc: '2026-11-22T01:00:00.000Z', start_timezone: 'Asia/Singapore' },
    });
    expect(rs1.tasks[0]).not.toHaveProperty('planning_id');
    // Read back from storage (P3), each task is whole as imported, its empty members null: the runsheet's item stores
    // its copies without them (issue 45: 41 KB less a runsheet of 200 tasks) and every read puts them back.
    expect(rs1.tasks[0]).toMatchObject({
      from_service_s: null,
      total_item_weight: null,
      from_address: { state: null },
    });
    const read = await api.get<{ runsheets: { id: string; tasks: Task[] }[] }>(`/v1/plannings/${planning}`, merchantX);
    expect(read.body.runsheets.map((r) => [r.id, r.tasks])).toEqual(added.body.runsheets.map((r) => [r.id, r.tasks]));
    expect(await taskOf('A1')).toMatchObject({ planning_id: planning, runsheet_id: 'RS-1' });
    const planned = await walk(`import_job_id=${job1}&planned=true&order=asc`, 1000);
    expect(planned.map((t) => [t.task_ref, t.runsheet_id])).toEqual([
      ['A1', 'RS-1'],
      ['A2', 'RS-2'],
      ['A3', 'RS-1'],
    ]);
    const free = await walk(`import_job_id=${job1}&planned=false&order=asc`, 2);
    expect(free.map((t) => t.task_ref)).toEqual(['A4', 'A5', 'A6', 'A7']);
    // Sent again (a retry, or the runsheet replaced with the same tasks): the same runsheet, no conflict.
    const again = await addRunsheets(planning, [{ id: 'RS-1', name: 'North', task_ids: [idOf('A3'), idOf('A1')] }]);
    expect(again.status).toBe(200);
    // A service type P5 names stands over the import job's.
    const named = await addRunsheets(planning, [
      { id: 'RS-1', name: 'North', task_ids: [idOf('A3'), idOf('A1')], service_type: 'motorcycle' },
    ]);
    expect(named.body.runsheets.find((r) => r.id === 'RS-1')?.service_type).toBe('motorcycle');
  });

  it('refuses an unknown or a foreign id with a 400 at runsheets[i].task_ids[j], and plans nothing', async () => {
    const other = await newPlanning('Refused');
    for (const wrong of ['f'.repeat(24), foreignTask.id]) {
      const refused = await addRunsheets(other, [
        { id: 'RS-X', tasks: [] },
        { id: 'RS-Y', task_ids: [idOf('A5'), wrong] },
      ]);
      expect(refused.status).toBe(400);
      expect(refused.body.errors).toEqual([{ path: 'runsheets[1].task_ids[1]', message: expect.any(String) }]);
      expect(await taskOf('A5')).toMatchObject({ planning_id: null, runsheet_id: null });
    }
    const malformed = await addRunsheets(other, [{ id: 'RS-Y', task_ids: ['nope'] }]);
    expect(malformed.status).toBe(400);
    expect(malformed.body.errors[0]!.path).toBe('runsheets[0].task_ids[0]');
    const both = await addRunsheets(other, [{ id: 'RS-Y', tasks: [], task_ids: [idOf('A5')] }]);
    expect(both.status).toBe(400);
    const neither = await addRunsheets(other, [{ id: 'RS-Y' }]);
    expect(neither.status).toBe(400);
    expect(neither.body.errors[0]!.path).toBe('runsheets[0].tasks');
    const twice = await addRunsheets(other, [{ id: 'RS-Y', task_ids: [idOf('A5'), idOf('A5')] }]);
    expect(twice.status).toBe(400);
    expect(twice.body.errors[0]!.path).toBe('runsheets[0].task_ids[1]');
    const view = await api.get<Planning>(`/v1/plannings/${other}`, transporterX);
    expect(view.body.runsheets).toEqual([]);
  });

  it('answers 409 at the path for a task in a runsheet of another planning, and frees what it took', async () => {
    const other = await newPlanning('Late');
    const refused = await addRunsheets(other, [{ id: 'RS-Z', task_ids: [idOf('A6'), idOf('A2')] }]);
    expect(refused.status).toBe(409);
    expect(refused.body.code).toBe('conflict');
    expect(refused.body.errors).toEqual([{ path: 'runsheets[0].task_ids[1]', message: expect.any(String) }]);
    expect(await taskOf('A6')).toMatchObject({ planning_id: null });
    expect(await taskOf('A2')).toMatchObject({ planning_id: planning, runsheet_id: 'RS-2' });
  });

  it('lets exactly one of two concurrent P5 calls have a task', async () => {
    const [p, q] = [await newPlanning('Race P'), await newPlanning('Race Q')];
    const answers = await Promise.all([
      addRunsheets(p, [{ id: 'RS-P', task_ids: [idOf('B1'), idOf('B2')] }]),
      addRunsheets(q, [{ id: 'RS-Q', task_ids: [idOf('B3'), idOf('B2')] }]),
    ]);
    expect(answers.map((a) => a.status).sort()).toEqual([200, 409]);
    const [winner, loserOwn] = answers[0]!.status === 200 ? [p, 'B3'] : [q, 'B1'];
    expect(await taskOf('B2')).toMatchObject({ planning_id: winner });
    expect(await taskOf(loserOwn)).toMatchObject({ planning_id: null });
  });

  it('frees the tasks of the runsheet P6 removes, and of a runsheet replaced without them', async () => {
    const replaced = await addRunsheets(planning, [{ id: 'RS-1', task_ids: [idOf('A1')] }]);
    expect(replaced.status).toBe(200);
    expect(await taskOf('A3')).toMatchObject({ planning_id: null, runsheet_id: null });
    expect(await taskOf('A1')).toMatchObject({ planning_id: planning, runsheet_id: 'RS-1' });
    expect((await api.delete(`/v1/plannings/${planning}/runsheets/RS-2`, undefined, transporterX)).status).toBe(200);
    expect(await taskOf('A2')).toMatchObject({ planning_id: null, runsheet_id: null });
    const free = await walk(`import_job_id=${job1}&planned=false&order=asc`, 1000);
    expect(free.map((t) => t.task_ref)).toEqual(['A2', 'A3', 'A4', 'A5', 'A6', 'A7']);
    // Free again, another planning may take them.
    const taken = await addRunsheets(await newPlanning('Next'), [{ id: 'RS-N', task_ids: [idOf('A2'), idOf('A3')] }]);
    expect(taken.status).toBe(200);
  });

  it('answers 409 for a task whose import has not completed: a retry of the import could still rewrite it', async () => {
    const { db, mainTableName } = await import('../../shared/db/client.ts');
    const { UpdateCommand } = await import('@aws-sdk/lib-dynamodb');
    const setStatus = (status: string) =>
      db().send(
        new UpdateCommand({
          TableName: mainTableName(),
          Key: { PK: `IMPORTJOB#${job2}`, SK: 'JOB' },
          UpdateExpression: 'SET current_status = :s',
          ExpressionAttributeValues: { ':s': status },
        }),
      );
    // What a worker that died in the middle of an import leaves: the job processing, some of its tasks written (and
    // listed by X10). Its retry writes them again as imported; a planned mark set in between would be lost.
    await setStatus('processing');
    try {
      const refused = await addRunsheets(await newPlanning('Too early'), [
        { id: 'RS-E', task_ids: [idOf('A7'), idOf('B4')] },
      ]);
      expect(refused.status).toBe(409);
      expect(refused.body.errors).toEqual([
        { path: 'runsheets[0].task_ids[1]', message: 'its import job is processing' },
      ]);
      expect(await taskOf('A7')).toMatchObject({ planning_id: null });
      expect(await taskOf('B4')).toMatchObject({ planning_id: null });
    } finally {
      await setStatus('completed');
    }
    const taken = await addRunsheets(await newPlanning('In time'), [{ id: 'RS-T', task_ids: [idOf('B4')] }]);
    expect(taken.status).toBe(200);
  });
});
