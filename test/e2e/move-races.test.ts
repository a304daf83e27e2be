/**
 * Moves a request makes while a worker moves the same job (defects issue 23 item 6). A request reads the job, judges
 * its move and writes it on the condition that the job is still as read; when the worker moved the job in between
 * (`queued` → `processing`), the request used to answer 409 without reading again, refusing a move that was still
 * legal. Here the worker's move runs exactly between the request's read and its write (a hook on the functions'
 * DynamoDB client, as in test/integration/offer-watch.test.ts), every time, over real HTTP.
 */
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningHost } from '../../lib/local/start.ts';
import { ROLES } from '../../shared/auth/roles.ts';
import { type Client, client, invitedMember, loginAs } from '../support/http.ts';
import { IMPORT_WINDOW, importTasks, putUpload } from '../support/imports.ts';
import { ADMIN, startTestHost } from '../support/local.ts';

let host: RunningHost;
let api: Client;
let admin: string;
let merchant: string;
let planner: string;
let fleetDrivers: string[];

beforeAll(async () => {
  host = await startTestHost();
  api = client(host.url);
  admin = (await loginAs(api, ADMIN.email, ADMIN.password)).bearer_token;
  const shop = (await api.post<{ id: string }>('/v1/admin/organisations', { name: 'Shop', kind: 'merchant' }, admin))
    .body.id;
  const fleet = (
    await api.post<{ id: string }>('/v1/admin/organisations', { name: 'Fleet', kind: 'transporter' }, admin)
  ).body.id;
  merchant = (await invitedMember(api, admin, 'OrgAdmin', ROLES.OrgAdmin, shop)).token;
  planner = (await invitedMember(api, admin, 'OrgAdmin', ROLES.OrgAdmin, fleet)).token;
  fleetDrivers = [
    (await invitedMember(api, admin, 'OrgDriver', ROLES.OrgDriver, fleet)).id,
    (await invitedMember(api, admin, 'OrgDriver', ROLES.OrgDriver, fleet)).id,
  ];
}, 60_000);
afterAll(() => host?.stop());

const { withMiddleware } = await import('../support/middleware.ts');

/**
 * Runs `request` with `worker` run once, just before the first UpdateItem or TransactWriteItems whose condition contains
 * `condition` (the request's write, after its read). The worker's own calls pass untouched.
 */
async function interleaved<T>(condition: string, worker: () => Promise<void>, request: () => Promise<T>) {
  let ran = false;
  const out = await withMiddleware(
    'worker-between',
    (next, context) => async (args) => {
      const writes = context.commandName?.startsWith('Update') || context.commandName?.startsWith('TransactWrite');
      if (!ran && writes && JSON.stringify(args.input).includes(condition)) {
        ran = true;
        await worker();
      }
      return next(args);
    },
    request,
  );
  expect(ran).toBe(true);
  return out;
}

type StatusRecord = { import_status: string; statuses: { status: string }[] };

describe('an import job moved by its worker while a request moves it', () => {
  /** A job in `queued` that no worker will take on its own (I10 moves it there without enqueueing a run). */
  async function queuedJob(): Promise<string> {
    const presigned = await api.get<{ file: { url: string; storage_upload_key: string } }>(
      '/v1/task-import-jobs/upload-url?filename=tasks.csv',
      merchant,
    );
    expect((await putUpload(presigned.body.file.url, 'from_street_address\n')).status).toBe(200);
    const created = await api.post<{ id: string }>(
      '/v1/task-import-jobs',
      {
        files: [{ storage_upload_key: presigned.body.file.storage_upload_key }],
        ...IMPORT_WINDOW,
      },
      merchant,
    );
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const id = created.body.id;
    const queued = await api.put(
      `/v1/task-import-jobs/${id}/status`,
      { prev_status: 'new', next_status: 'queued' },
      merchant,
    );
    expect(queued.status).toBe(200);
    return id;
  }

  /** What the import worker's claim writes: `queued` → `processing`, with its lease. */
  async function workerTakes(id: string, then?: 'completed') {
    const { findJob, moveStatus } = await import('../../shared/imports/jobs.ts');
    const taken = await moveStatus((await findJob(id, true))!, 'queued', 'processing', {
      lease_owner: 'worker',
      lease_until: Date.now() + 60_000,
      attempts: 1,
    });
    if (then) await moveStatus(taken, 'processing', then);
  }

  it('I11 fails a job the worker took after the request read it (was 409)', async () => {
    const id = await queuedJob();
    const failed = await interleaved(
      '#status = :from',
      () => workerTakes(id),
      () => api.post<StatusRecord>(`/v1/task-import-jobs/${id}/fail`, { reason: 'stopped' }, merchant),
    );
    expect(failed.status, JSON.stringify(failed.body)).toBe(200);
    expect(failed.body.import_status).toBe('failed');
    expect(failed.body.statuses.map((s) => s.status)).toEqual(['new', 'queued', 'processing', 'failed']);
  });

  it('I11 is 409 when the job ended in between, and says so', async () => {
    const id = await queuedJob();
    const refused = await interleaved(
      '#status = :from',
      () => workerTakes(id, 'completed'),
      () => api.post<{ detail: string }>(`/v1/task-import-jobs/${id}/fail`, {}, merchant),
    );
    expect(refused.status).toBe(409);
    expect(refused.body.detail).toContain('completed');
    expect((await api.get<StatusRecord>(`/v1/task-import-jobs/${id}/status`, merchant)).body.import_status).toBe(
      'completed',
    );
  });

  it('I11 gives up after a bounded number of lost writes: 409, and the job as it was', async () => {
    const { ConditionalCheckFailedException } = await import('@aws-sdk/client-dynamodb');
    const { MOVE_TRIES } = await import('../../shared/db/moves.ts');
    const id = await queuedJob();
    let writes = 0;
    // Every write of the job meets a changed job, as if another writer got in first each time.
    const refused = await withMiddleware(
      'always-changed',
      (next, context) => async (args) => {
        if (context.commandName?.startsWith('Update') && JSON.stringify(args.input).includes('#status = :from')) {
          writes++;
          throw new ConditionalCheckFailedException({ message: 'The conditional request failed', $metadata: {} });
        }
        return next(args);
      },
      () => api.post<{ detail: string }>(`/v1/task-import-jobs/${id}/fail`, {}, merchant),
    );
    expect(refused.status).toBe(409);
    expect(refused.body.detail).toContain('kept changing');
    expect(writes).toBe(MOVE_TRIES);
    expect((await api.get<StatusRecord>(`/v1/task-import-jobs/${id}/status`, merchant)).body.import_status).toBe(
      'queued',
    );
  });

  it('I10 from a prev_status the worker has just left is 409 naming the status the job is in', async () => {
    const id = await queuedJob();
    const refused = await interleaved(
      '#status = :from',
      () => workerTakes(id),
      () =>
        api.put<{ detail: string }>(
          `/v1/task-import-jobs/${id}/status`,
          { prev_status: 'queued', next_status: 'failed' },
          merchant,
        ),
    );
    expect(refused.status).toBe(409);
    expect(refused.body.detail).toContain('processing');
  });
});

describe('a planning job taken by its worker while a request moves it', () => {
  type JobView = { current_status: string; statuses: { status: string }[]; detail?: string };

  /** A planning whose job is `queued` and not enqueued: only the test's "worker" takes it. */
  async function queuedPlanning(): Promise<string> {
    const { findPlanning } = await import('../../shared/planning/planning-records.ts');
    const { changePlanning } = await import('../../shared/planning/plannings.ts');
    const planning = (await api.post<{ id: string }>('/v1/plannings', { name: 'Raced' }, planner)).body;
    const now = new Date().toISOString();
    await changePlanning((await findPlanning(planning.id, true))!, undefined, {
      job: {
        id: crypto.randomUUID(),
        current_status: 'queued',
        statuses: [{ status: 'queued', set_at_utc: now }],
        status_updated_at: now,
        max_candidates: 1,
        offer_ttl_s: 900,
      },
    });
    return planning.id;
  }

  /** What the planning worker's claim writes: `queued` → `processing`, with its lease. */
  async function workerTakes(id: string) {
    const { db, mainTableName } = await import('../../shared/db/client.ts');
    const now = new Date().toISOString();
    await db().send(
      new UpdateCommand({
        TableName: mainTableName(),
        Key: { PK: `PLANNING#${id}`, SK: 'PROFILE' },
        UpdateExpression:
          'SET job.current_status = :processing, job.status_updated_at = :now, job.statuses = list_append(job.statuses, :entry), job.lease_until = :lease, job.lease_owner = :owner, job.attempts = :one',
        ConditionExpression: 'job.current_status = :queued',
        ExpressionAttributeValues: {
          ':processing': 'processing',
          ':queued': 'queued',
          ':now': now,
          ':entry': [{ status: 'processing', set_at_utc: now }],
          ':lease': Date.now() + 60_000,
          ':owner': 'worker',
          ':one': 1,
        },
      }),
    );
  }

  it('P16 cancels a job the worker took after the request read it (was 409)', async () => {
    const id = await queuedPlanning();
    const cancelled = await interleaved(
      'job.current_status = :from',
      () => workerTakes(id),
      () => api.post<JobView>(`/v1/plannings/${id}/job/cancelled`, {}, planner),
    );
    expect(cancelled.status, JSON.stringify(cancelled.body)).toBe(200);
    const status = (await api.get<JobView>(`/v1/plannings/${id}/job/status`, planner)).body;
    expect(status.current_status).toBe('cancelled');
    expect(status.statuses.map((s) => s.status)).toEqual(['queued', 'processing', 'cancelled']);
  });

  it('P15 fails it likewise; P13 (to processing) is then 409 naming the status it is in', async () => {
    const id = await queuedPlanning();
    const failed = await interleaved(
      'job.current_status = :from',
      () => workerTakes(id),
      () => api.post<JobView>(`/v1/plannings/${id}/job/failed`, {}, admin),
    );
    expect(failed.status, JSON.stringify(failed.body)).toBe(200);
    const other = await queuedPlanning();
    const refused = await interleaved(
      'job.current_status = :from',
      () => workerTakes(other),
      () => api.post<JobView>(`/v1/plannings/${other}/job/processing`, {}, admin),
    );
    expect(refused.status).toBe(409);
    expect(refused.body.detail).toContain('from processing');
  });
});

describe('a planning changed by another request while a member is removed', () => {
  type PlanningView = { id: string; name: string; version_rev: string; total_drivers: number };

  it('P8 removes the driver and counts from the planning as it is now (was 409 stale, with no version sent)', async () => {
    const planning = (await api.post<PlanningView>('/v1/plannings', { name: 'Shrinking' }, planner)).body;
    const added = await api.post<PlanningView>(
      `/v1/plannings/${planning.id}/drivers`,
      { drivers: fleetDrivers.map((id) => ({ id })) },
      planner,
    );
    expect(added.body.total_drivers).toBe(2);
    const removed = await interleaved(
      'version_rev = :before',
      async () => {
        // P4 lands between P8's read and its write: a new version.
        const renamed = await api.put<PlanningView>(
          `/v1/plannings/${planning.id}`,
          { name: 'Renamed', version_rev: added.body.version_rev },
          planner,
        );
        expect(renamed.status).toBe(200);
      },
      () => api.delete(`/v1/plannings/${planning.id}/drivers/${fleetDrivers[0]}`, undefined, planner),
    );
    expect(removed.status, JSON.stringify(removed.body)).toBe(200);
    const after = (await api.get<PlanningView>(`/v1/plannings/${planning.id}`, planner)).body;
    expect(after).toMatchObject({ name: 'Renamed', total_drivers: 1 });
    // A driver the planning does not have is still 404.
    const again = await api.delete(`/v1/plannings/${planning.id}/drivers/${fleetDrivers[0]}`, undefined, planner);
    expect(again.status).toBe(404);
  });
});

describe('a P5 whose imported task another P5 takes between its check and its mark', () => {
  type Answer = { code: string; errors: { path: string; message: string }[]; runsheets: unknown[] };

  it('is a 409 at the task’s path, frees the tasks it had marked, and saves no runsheet', async () => {
    const [first, second, third] = await importTasks(api, planner, ['R1', 'R2', 'R3']);
    const plannings = [];
    for (const name of ['Slow', 'Quick'])
      plannings.push((await api.post<{ id: string }>('/v1/plannings', { name }, planner)).body.id);
    const [slow, quick] = plannings as [string, string];
    const task = async (id: string) =>
      (await api.get<{ task: { planning_id: string | null } }>(`/v1/tasks/${id}`, planner)).body.task;
    let rival: Promise<{ status: number }> | undefined;
    // Both of the slow call's tasks read free (its check); the quick call takes the second before the slow call's
    // marks are written (each of them waits for it).
    const refused = await withMiddleware(
      'rival-between',
      (next, context) => async (args) => {
        const input = JSON.stringify(args.input);
        if (
          context.commandName?.startsWith('Update') &&
          input.includes('attribute_not_exists(planning_id)') &&
          input.includes(slow)
        ) {
          rival ??= api.post(
            `/v1/plannings/${quick}/runsheets`,
            { runsheets: [{ id: 'RS-Q', task_ids: [second] }] },
            planner,
          );
          await rival;
        }
        return next(args);
      },
      () =>
        api.post<Answer>(
          `/v1/plannings/${slow}/runsheets`,
          { runsheets: [{ id: 'RS-S', task_ids: [first, third, second] }] },
          planner,
        ),
    );
    expect((await rival)?.status).toBe(200);
    expect(refused.status, JSON.stringify(refused.body)).toBe(409);
    expect(refused.body.errors).toEqual([
      { path: 'runsheets[0].task_ids[2]', message: expect.stringContaining('already in') },
    ]);
    expect(await task(second!)).toMatchObject({ planning_id: quick });
    expect(await task(first!)).toMatchObject({ planning_id: null });
    expect(await task(third!)).toMatchObject({ planning_id: null });
    const view = await api.get<{ runsheets: unknown[] }>(`/v1/plannings/${slow}`, planner);
    expect(view.body.runsheets).toEqual([]);
  }, 240_000);
});
