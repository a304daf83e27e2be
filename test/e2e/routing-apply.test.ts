/**
 * X31 over HTTP (contract 4.10, issue 54 item 1): a completed dry run applied exactly as it was answered. The planner
 * reviews a dry run (X23 `dry_run: true`, X24), applies it, and the planning holds the very runsheets, stops and
 * planned times X24 showed, stop for stop (P3, X22), its driver's runsheet assigned, the tasks planned (X10), told
 * on the planning's channel and to partners; an insertion's dry run (X30) applied into a runsheet that holds tasks
 * (only the tasks it places are judged). Refused: a stale `version_rev` or a planning moved since the dry run
 * (409 `planning_changed`), a task planned elsewhere since (409 naming it), a second apply (409, and of two at once
 * exactly one wins), a result past its 24 hours (410), a build that is no completed dry run (409), another
 * organisation's build (404), a driver (403). One host; every build has `time_limit_s: 1`.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { RunningHost } from '../../lib/local/start.ts';
import { ROLES } from '../../shared/auth/roles.ts';
import { resetClock, setClock } from '../../shared/clock.ts';
import { type Client, client, invitedMember, loginAs } from '../support/http.ts';
import { IMPORT_WINDOW, putUpload } from '../support/imports.ts';
import { ADMIN, startTestHost } from '../support/local.ts';
import { openSocket } from '../support/sockets.ts';
import { until } from '../support/until.ts';
import { partnerHook } from '../support/webhooks.ts';

let host: RunningHost;
let api: Client;
let admin: string;
let planner: { email: string; password: string; token: string };
let driver: { id: string; token: string };
let webhooks: Awaited<ReturnType<typeof partnerHook>>;

beforeAll(async () => {
  host = await startTestHost();
  api = client(host.url);
  admin = (await loginAs(api, ADMIN.email, ADMIN.password)).bearer_token;
  const org = (
    await api.post<{ id: string }>('/v1/admin/organisations', { name: 'Applies', kind: 'transporter' }, admin)
  ).body.id;
  planner = await invitedMember(api, admin, 'OrgAdmin', ROLES.OrgAdmin, org);
  driver = await invitedMember(api, admin, 'OrgDriver', ROLES.OrgDriver, org);
  webhooks = await partnerHook(api, admin, org);
}, 60_000);

afterEach(() => resetClock());

afterAll(async () => {
  await host?.stop();
  await webhooks?.close();
});

const HEADER =
  'task_ref,from_street_address,from_city,from_country,to_street_address,to_city,to_country,from_start_time_utc,from_end_time_utc,from_timezone,to_start_time_utc,to_end_time_utc,to_timezone,from_latitude,from_longitude,to_latitude,to_longitude,total_item_weight,total_weight_unit';
const DAY = '2026-11-22';
const at = (hhmm: string) => `${DAY}T${hhmm}:00Z`;
const DEPOT = { latitude: 1.3343, longitude: 103.8563 };

/** Imports `n` nearby tasks as one job (pickups around the depot, drop-offs a few km away); their ids in file order. */
async function importTasks(prefix: string, n: number): Promise<string[]> {
  const lines = Array.from({ length: n }, (_, i) => {
    const from = `${1.3343 + i * 0.002},103.8563`;
    const to = `${1.3043 + i * 0.003},${103.8363 + i * 0.002}`;
    return `${prefix}-${i + 1},1 Depot Rd,Singapore,SG,1 Mall,Singapore,SG,${at('01:00')},${at('09:00')},Asia/Singapore,${at('01:00')},${at('09:30')},Asia/Singapore,${from},${to},5,kg`;
  });
  const link = await api.get<{ file: { url: string; storage_upload_key: string } }>(
    '/v1/task-import-jobs/upload-url?filename=tasks.csv',
    planner.token,
  );
  expect((await putUpload(link.body.file.url, [HEADER, ...lines].join('\n'))).status).toBe(200);
  const job = await api.post<{ id: string }>(
    '/v1/task-import-jobs',
    { files: [{ storage_upload_key: link.body.file.storage_upload_key }], ...IMPORT_WINDOW, service_type: 'van_1.7m' },
    planner.token,
  );
  expect(job.status, JSON.stringify(job.body)).toBe(201);
  expect((await api.post(`/v1/task-import-jobs/${job.body.id}/start`, {}, planner.token)).status).toBe(202);
  const status = await until(
    () => api.get<{ import_status: string }>(`/v1/task-import-jobs/${job.body.id}/status`, planner.token),
    (s) => ['completed', 'failed'].includes(s.body.import_status),
  );
  expect(status.body.import_status).toBe('completed');
  const listed = await api.get<{ tasks: { id: string; task_ref: string }[] }>(
    `/v1/tasks?import_job_id=${job.body.id}&per_page=1000`,
    planner.token,
  );
  expect(listed.body.tasks).toHaveLength(n);
  return [...listed.body.tasks].sort((a, b) => a.task_ref.localeCompare(b.task_ref)).map((t) => t.id);
}

async function newPlanning(name: string, withDriver = false): Promise<{ id: string; version_rev: string }> {
  const made = await api.post<{ id: string; version_rev: string }>('/v1/plannings', { name }, planner.token);
  expect(made.status).toBe(201);
  if (!withDriver) return made.body;
  const added = await api.post<{ id: string; version_rev: string }>(
    `/v1/plannings/${made.body.id}/drivers`,
    { drivers: [{ id: driver.id }] },
    planner.token,
  );
  expect(added.status).toBe(200);
  return added.body;
}

const van = (id: string, extra: Record<string, unknown> = {}) => ({
  id,
  start: DEPOT,
  shift_start_utc: at('00:00'),
  shift_end_utc: at('12:00'),
  capacity: { weight_kg: 800 },
  ...extra,
});

interface Stop {
  task_id: string;
  kind: 'pickup' | 'dropoff';
  start_utc: string;
}
interface Result {
  runsheets: { id: string; vehicle_id: string; driver_id?: string; stops: Stop[] }[];
  unplanned: unknown[];
  summary: { planned: number; vehicles_used: number };
}
interface Build {
  id: string;
  status: string;
  dry_run: boolean;
  applied_at?: string;
  error?: { code: string };
  result?: Result;
}
interface Problem {
  status: number;
  code: string;
  detail: string;
}

/** X23 (a one-second solve, a dry run unless told), then X24 until it ends: the build as it ended. */
async function builtDry(
  planning: { id: string; version_rev: string },
  taskIds: string[],
  vehicles: object[],
  dryRun = true,
): Promise<Build> {
  const queued = await api.post<{ route_build: Build }>(
    `/v1/plannings/${planning.id}/routes`,
    { task_ids: taskIds, vehicles, time_limit_s: 1, dry_run: dryRun, version_rev: planning.version_rev },
    planner.token,
  );
  expect(queued.status, JSON.stringify(queued.body)).toBe(202);
  const read = await until(
    () =>
      api.get<{ route_build: Build }>(
        `/v1/plannings/${planning.id}/routes/${queued.body.route_build.id}`,
        planner.token,
      ),
    (r) => ['completed', 'failed'].includes(r.body.route_build?.status),
    60_000,
    100,
  );
  expect(read.body.route_build.status, JSON.stringify(read.body.route_build.error)).toBe('completed');
  return read.body.route_build;
}

const applyPath = (planningId: string, buildId: string) => `/v1/plannings/${planningId}/routes/${buildId}/apply`;

const apply = (
  planningId: string,
  buildId: string,
  versionRev: string,
  token = planner.token,
  headers?: Record<string, string>,
) =>
  api.post<{ route_build: Build } & Problem>(
    applyPath(planningId, buildId),
    { version_rev: versionRev },
    token,
    headers,
  );

const planningOf = (id: string) =>
  api.get<{
    version_rev: string;
    total_runsheets: number;
    runsheets: { id: string; status: string; stops?: Stop[]; tasks: Record<string, unknown>[] }[];
  }>(`/v1/plannings/${id}`, planner.token);

/** The planning holds nothing and every task is still free (X10). */
async function expectNothingAdded(planningId: string, taskIds: string[]) {
  const after = await planningOf(planningId);
  expect(after.body.runsheets.filter((r) => !r.id.startsWith('HAND'))).toEqual([]);
  for (const id of taskIds) {
    const task = await api.get<{ task: { planning_id: string | null } }>(`/v1/tasks/${id}`, planner.token);
    expect(task.body.task.planning_id, id).toBeNull();
  }
}

describe('X31 applies a dry run', () => {
  it('a dry run applied equals its answer stop for stop; told as a build’s apply is; a repeat is refused', async () => {
    const planning = await newPlanning('Reviewed', true);
    const ids = await importTasks('REV', 6);
    const dry = await builtDry(planning, ids, [
      van('driven', { driver_id: driver.id, max_stops: 6 }),
      van('spare', { max_stops: 6 }),
    ]);
    expect(dry.result!.summary).toMatchObject({ planned: 6, vehicles_used: 2 });
    // The dry run added nothing: the planning is as it was.
    expect((await planningOf(planning.id)).body).toMatchObject({
      total_runsheets: 0,
      version_rev: planning.version_rev,
    });
    const watcher = await openSocket(host.url, planner.token);
    watcher.subscribe([`planning.${planning.id}`]);
    expect(await watcher.when(() => watcher.frames.some((f) => f.type === 'subscribed'))).toBe(true);

    const applied = await apply(planning.id, dry.id, planning.version_rev, planner.token, {
      'idempotency-key': 'apply-reviewed-1',
    });
    expect(applied.status, JSON.stringify(applied.body)).toBe(200);
    expect(applied.body.route_build).toMatchObject({ id: dry.id, status: 'completed', dry_run: true });
    expect(applied.body.route_build.applied_at).toEqual(expect.any(String));
    // The answer's result is the dry run's, unchanged.
    expect(applied.body.route_build.result).toEqual(dry.result);

    // The planning holds exactly the reviewed runsheets, stop for stop, with the same planned times.
    const after = await planningOf(planning.id);
    expect(after.body.version_rev).not.toBe(planning.version_rev);
    expect(after.body.total_runsheets).toBe(dry.result!.runsheets.length);
    const stored = new Map(after.body.runsheets.map((r) => [r.id, r]));
    expect([...stored.keys()].sort()).toEqual(dry.result!.runsheets.map((r) => r.id).sort());
    for (const answered of dry.result!.runsheets) {
      const runsheet = stored.get(answered.id)!;
      expect(runsheet.stops).toEqual(answered.stops);
      expect(runsheet.status).toBe(answered.vehicle_id === 'driven' ? 'assigned' : 'open');
      const detail = await api.get<{ runsheet: { stops: Stop[]; tasks: Record<string, unknown>[] } }>(
        `/v1/plannings/${planning.id}/runsheets/${encodeURIComponent(answered.id)}`,
        planner.token,
      );
      expect(detail.body.runsheet.stops).toEqual(answered.stops);
      // Its tasks in pickup order, each with the planned times the dry run answered.
      const pickups = answered.stops.filter((s) => s.kind === 'pickup');
      expect(detail.body.runsheet.tasks.map((t) => t['id'])).toEqual(pickups.map((s) => s.task_id));
      for (const task of detail.body.runsheet.tasks) {
        const stops = answered.stops.filter((s) => s.task_id === task['id']);
        expect(task).toMatchObject({
          planned_pickup_utc: stops.find((s) => s.kind === 'pickup')!.start_utc,
          planned_dropoff_utc: stops.find((s) => s.kind === 'dropoff')!.start_utc,
        });
      }
    }
    // The driver's vehicle is theirs, as X16 gives it: they read it.
    const driven = dry.result!.runsheets.find((r) => r.vehicle_id === 'driven')!;
    const mine = await api.get<{ runsheet: { stops: Stop[] } }>(
      `/v1/plannings/${planning.id}/runsheets/${encodeURIComponent(driven.id)}`,
      driver.token,
    );
    expect(mine.body.runsheet.stops).toEqual(driven.stops);
    // Every task is planned now (X10).
    const planned = await api.get<{ tasks: { id: string }[] }>('/v1/tasks?planned=true&per_page=1000', planner.token);
    expect(planned.body.tasks.map((t) => t.id)).toEqual(expect.arrayContaining(ids));

    // X24 and X25 show when it was applied.
    const read = await api.get<{ route_build: Build }>(`/v1/plannings/${planning.id}/routes/${dry.id}`, planner.token);
    expect(read.body.route_build.applied_at).toBe(applied.body.route_build.applied_at);
    const listed = await api.get<{ route_builds: Build[] }>(`/v1/plannings/${planning.id}/routes`, planner.token);
    expect(listed.body.route_builds.find((b) => b.id === dry.id)?.applied_at).toBe(applied.body.route_build.applied_at);
    // Told: route_build.completed once more, with applied_at, on the planning's channel and to partners.
    const told = await until(
      async () => webhooks.received.filter((m) => m.data['route_build_id'] === dry.id && m.data['applied_at']),
      (found) => found.length > 0,
    );
    expect(told.map((m) => m.type)).toEqual(['route_build.completed']);
    expect(
      await watcher.when(() =>
        watcher.events('route_build.completed').some((e) => e.data?.['applied_at'] !== undefined),
      ),
    ).toBe(true);
    watcher.socket.close();

    // The same request with its Idempotency-Key answers the first apply again; any other apply is refused.
    const replay = await apply(planning.id, dry.id, planning.version_rev, planner.token, {
      'idempotency-key': 'apply-reviewed-1',
    });
    expect(replay.status).toBe(200);
    expect(replay.body.route_build.applied_at).toBe(applied.body.route_build.applied_at);
    for (const versionRev of [planning.version_rev, after.body.version_rev]) {
      const again = await apply(planning.id, dry.id, versionRev);
      expect(again.status).toBe(409);
      expect(again.body.detail).toMatch(/applied already/);
    }
    const unchanged = await planningOf(planning.id);
    expect(unchanged.body.version_rev).toBe(after.body.version_rev);
    expect(unchanged.body.total_runsheets).toBe(dry.result!.runsheets.length);
  }, 90_000);

  it('of two applies at once exactly one wins; the runsheets are added once', async () => {
    const planning = await newPlanning('Twice at once');
    const ids = await importTasks('TWO', 4);
    const dry = await builtDry(planning, ids, [van('v', { count: 2 })]);
    const answers = await Promise.all([
      apply(planning.id, dry.id, planning.version_rev),
      apply(planning.id, dry.id, planning.version_rev),
      apply(planning.id, dry.id, planning.version_rev),
    ]);
    expect(answers.map((a) => a.status).sort()).toEqual([200, 409, 409]);
    const after = await planningOf(planning.id);
    expect(after.body.runsheets.map((r) => r.id).sort()).toEqual(dry.result!.runsheets.map((r) => r.id).sort());
    expect(after.body.total_runsheets).toBe(dry.result!.runsheets.length);
    const held = after.body.runsheets.flatMap((r) => r.tasks.map((t) => t['id']));
    expect(held.sort()).toEqual([...ids].sort());
  }, 60_000);

  it('an insertion’s dry run (X30) applied: the tasks its runsheet already held are not refused, the new ones join', async () => {
    // The day the tasks are for, an hour into it (X30 plans from now), the clock moving.
    const [dayMs, realMs] = [Date.parse(at('01:00')), Date.now()];
    setClock(() => dayMs + (Date.now() - realMs));
    const planning = await newPlanning('Insertion applied');
    const ids = await importTasks('INS', 3);
    const [morning, later] = [ids.slice(0, 2), ids.slice(2)];
    const built = await builtDry(planning, morning, [van('ins')], false);
    const route = built.result!.runsheets[0]!;
    const before = await planningOf(planning.id);
    const queued = await api.post<{ route_build: Build }>(
      `/v1/plannings/${planning.id}/routes/insertions`,
      { task_ids: later, time_limit_s: 1, dry_run: true, version_rev: before.body.version_rev },
      planner.token,
    );
    expect(queued.status, JSON.stringify(queued.body)).toBe(202);
    const dry = (
      await until(
        () =>
          api.get<{
            route_build: Omit<Build, 'result'> & {
              result?: Omit<Result, 'runsheets'> & {
                runsheets: (Result['runsheets'][number] & { added?: string[] })[];
              };
            };
          }>(`/v1/plannings/${planning.id}/routes/${queued.body.route_build.id}`, planner.token),
        (r) => ['completed', 'failed'].includes(r.body.route_build?.status),
        60_000,
        100,
      )
    ).body.route_build;
    expect(dry.status).toBe('completed');
    expect(
      dry.result!.runsheets.map((r) => [r.id, r.added]),
      JSON.stringify(dry.result!.unplanned),
    ).toEqual([[route.id, later]]);
    // Its runsheet holds the morning's tasks: X31 judges only the tasks the insertion places.
    const applied = await apply(planning.id, dry.id, before.body.version_rev);
    expect(applied.status, JSON.stringify(applied.body)).toBe(200);
    const after = await planningOf(planning.id);
    const sheet = after.body.runsheets.find((r) => r.id === route.id)!;
    expect(sheet.tasks.map((t) => t['id']).sort()).toEqual([...ids].sort());
    expect(sheet.stops!.map((stop) => `${stop.task_id}:${stop.kind}`)).toEqual(
      dry.result!.runsheets[0]!.stops.map((stop) => `${stop.task_id}:${stop.kind}`),
    );
  }, 60_000);
});

describe('X31 refuses', () => {
  it('a stale version_rev and a planning moved since the dry run (planning_changed), adding nothing', async () => {
    const planning = await newPlanning('Moved');
    const ids = await importTasks('MOV', 2);
    const dry = await builtDry(planning, ids, [van('v')]);
    const stale = await apply(planning.id, dry.id, '1-stale');
    expect(stale.status).toBe(409);
    expect(stale.body.code).toBe('planning_changed');
    // The planning moves (a runsheet by hand, P5): the dry run no longer answers for it, whatever version is sent.
    const p5 = await api.post<{ version_rev: string }>(
      `/v1/plannings/${planning.id}/runsheets`,
      { runsheets: [{ id: 'HAND-1', tasks: [{ id: 'hand-1' }] }] },
      planner.token,
    );
    expect(p5.status).toBe(200);
    const moved = await planningOf(planning.id);
    for (const versionRev of [planning.version_rev, moved.body.version_rev]) {
      const refused = await apply(planning.id, dry.id, versionRev);
      expect(refused.status).toBe(409);
      expect(refused.body.code).toBe('planning_changed');
    }
    await expectNothingAdded(planning.id, ids);
    expect((await planningOf(planning.id)).body.version_rev).toBe(moved.body.version_rev);
  }, 60_000);

  it('a dry run one of whose tasks is in a runsheet now (409 naming it), and a later one is applied', async () => {
    const planning = await newPlanning('Taken');
    const ids = await importTasks('TKN', 3);
    const dry = await builtDry(planning, ids, [van('v')]);
    // Another planning takes one task (P5): this planning has not moved, the task has.
    const other = await newPlanning('Took one');
    expect(
      (
        await api.post(
          `/v1/plannings/${other.id}/runsheets`,
          { runsheets: [{ id: 'OTHER', task_ids: [ids[1]] }] },
          planner.token,
        )
      ).status,
    ).toBe(200);
    const refused = await apply(planning.id, dry.id, planning.version_rev);
    expect(refused.status).toBe(409);
    expect(refused.body.detail).toContain(ids[1]!);
    expect(refused.body.detail).toContain('TKN-2');
    await expectNothingAdded(planning.id, [ids[0]!, ids[2]!]);
    expect((await planningOf(planning.id)).body.version_rev).toBe(planning.version_rev);
    // Built again without it, the new dry run applies.
    const again = await builtDry(planning, [ids[0]!, ids[2]!], [van('v')]);
    const applied = await apply(planning.id, again.id, planning.version_rev);
    expect(applied.status, JSON.stringify(applied.body)).toBe(200);
    expect((await planningOf(planning.id)).body.runsheets.map((r) => r.stops)).toEqual(
      again.result!.runsheets.map((r) => r.stops),
    );
  }, 60_000);

  it('a result past its 24 hours (410), a build that applied itself (409), others’ builds (404), a driver (403)', async () => {
    const planning = await newPlanning('Old');
    const ids = await importTasks('OLD', 2);
    const dry = await builtDry(planning, [ids[0]!], [van('v')]);
    // A day and a minute later (the planner signed in then: a bearer token lasts an hour).
    const later = Date.now() + 24 * 3_600_000 + 60_000;
    setClock(() => later);
    const signedIn = (await loginAs(api, planner.email, planner.password)).bearer_token;
    const expired = await apply(planning.id, dry.id, planning.version_rev, signedIn);
    expect(expired.status).toBe(410);
    expect(expired.body.code).toBe('gone');
    resetClock();
    await expectNothingAdded(planning.id, [ids[0]!]);

    // A build that was no dry run added its runsheets itself: nothing to apply.
    const real = await builtDry(planning, [ids[1]!], [van('w')], false);
    const current = await planningOf(planning.id);
    const notDry = await apply(planning.id, real.id, current.body.version_rev);
    expect(notDry.status).toBe(409);
    expect(notDry.body.detail).toMatch(/not a dry run/);

    // Another organisation's planner sees no such build; a driver may not apply; an unknown build is a 404.
    const elsewhere = (
      await api.post<{ id: string }>('/v1/admin/organisations', { name: 'Elsewhere', kind: 'transporter' }, admin)
    ).body.id;
    const stranger = (await invitedMember(api, admin, 'OrgAdmin', ROLES.OrgAdmin, elsewhere)).token;
    const fresh = await newPlanning('Fresh');
    const other = await builtDry(fresh, [(await importTasks('FRS', 1))[0]!], [van('v')]);
    expect((await apply(fresh.id, other.id, fresh.version_rev, stranger)).status).toBe(404);
    expect((await apply(fresh.id, other.id, fresh.version_rev, driver.token)).status).toBe(403);
    expect((await apply(fresh.id, crypto.randomUUID(), fresh.version_rev)).status).toBe(404);
    // A bad body is a 400 at its path.
    const bad = await api.post<{ errors: { path: string }[] }>(applyPath(fresh.id, other.id), {}, planner.token);
    expect(bad.status).toBe(400);
    expect(bad.body.errors.map((e) => e.path)).toEqual(['version_rev']);
    // None of these changed the planning: the planner applies it still.
    expect((await apply(fresh.id, other.id, fresh.version_rev)).status).toBe(200);
  }, 90_000);
});
