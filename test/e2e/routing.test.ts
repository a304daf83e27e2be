/**
 * Route planning, the service side (contract 4.10, issue 43): X23 checks its body field by field and queues a build;
 * a worker of its own solves it (in a thread) and, unless `dry_run`, adds the runsheets to the planning as P5 would,
 * with their stops and planned times (P3, X22), a driver's vehicle assigned as X16 would; every task left out is
 * named with its code; a repeat with one Idempotency-Key builds once; two builds racing, a P5 during a build and a
 * worker killed mid-solve never add a runsheet twice. One host; every build has `time_limit_s: 1`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningHost } from '../../lib/local/start.ts';
import { ROLES } from '../../shared/auth/roles.ts';
import { solvingThreads } from '../../shared/routing/solve-runner.ts';
import { type Client, client, invitedMember, loginAs } from '../support/http.ts';
import { IMPORT_WINDOW, putUpload } from '../support/imports.ts';
import { ADMIN, startTestHost } from '../support/local.ts';
import { type Middleware, withMiddleware } from '../support/middleware.ts';
import { openSocket } from '../support/sockets.ts';
import { until } from '../support/until.ts';
import { partnerHook } from '../support/webhooks.ts';

let host: RunningHost;
let api: Client;
let admin: string;
let planner: string;
let driver: { id: string; token: string };
let webhooks: Awaited<ReturnType<typeof partnerHook>>;
/** A partner holding users:invite alone: route builds are not its to hear of (issue 51.6). */
let inviteOnly: Awaited<ReturnType<typeof partnerHook>>;

beforeAll(async () => {
  host = await startTestHost();
  api = client(host.url);
  admin = (await loginAs(api, ADMIN.email, ADMIN.password)).bearer_token;
  const org = (
    await api.post<{ id: string }>('/v1/admin/organisations', { name: 'Routes', kind: 'transporter' }, admin)
  ).body.id;
  planner = (await invitedMember(api, admin, 'OrgAdmin', ROLES.OrgAdmin, org)).token;
  driver = await invitedMember(api, admin, 'OrgDriver', ROLES.OrgDriver, org);
  webhooks = await partnerHook(api, admin, org);
  inviteOnly = await partnerHook(api, admin, org, 'Invite only', ['users:invite']);
}, 60_000);

afterAll(async () => {
  await host?.stop();
  await webhooks?.close();
  await inviteOnly?.close();
});

const HEADER =
  'task_ref,from_street_address,from_city,from_country,to_street_address,to_city,to_country,from_start_time_utc,from_end_time_utc,from_timezone,to_start_time_utc,to_end_time_utc,to_timezone,from_latitude,from_longitude,to_latitude,to_longitude,total_item_weight,total_weight_unit,from_service_s,to_service_s';

/** A task row: pickup and drop-off coordinates (empty for none), windows on 2026-11-22 (UTC hours), weight in kg. */
interface Row {
  ref: string;
  from?: [number, number];
  to?: [number, number];
  pickup?: [string, string];
  dropoff?: [string, string];
  kg?: number;
  service?: [number, number];
}

const DAY = '2026-11-22';
const at = (hhmm: string) => `${DAY}T${hhmm}:00Z`;
const DEPOT: [number, number] = [1.3343, 103.8563];

/** Imports the rows as one job of `serviceType` through the CSV path; the tasks' ids by ref. */
async function importRows(rows: Row[], serviceType = 'van_1.7m'): Promise<Record<string, string>> {
  const lines = rows.map((r) => {
    const [ps, pe] = r.pickup ?? ['01:00', '09:00'];
    const [ds, de] = r.dropoff ?? ['01:00', '09:30'];
    const from = r.from ? `${r.from[0]},${r.from[1]}` : ',';
    const to = r.to ? `${r.to[0]},${r.to[1]}` : ',';
    const service = r.service ? `${r.service[0]},${r.service[1]}` : ',';
    return `${r.ref},1 Depot Rd,Singapore,SG,1 Mall,Singapore,SG,${at(ps)},${at(pe)},Asia/Singapore,${at(ds)},${at(de)},Asia/Singapore,${from},${to},${r.kg ?? 5},kg,${service}`;
  });
  const link = await api.get<{ file: { url: string; storage_upload_key: string } }>(
    '/v1/task-import-jobs/upload-url?filename=tasks.csv',
    planner,
  );
  expect((await putUpload(link.body.file.url, [HEADER, ...lines].join('\n'))).status).toBe(200);
  const job = await api.post<{ id: string }>(
    '/v1/task-import-jobs',
    { files: [{ storage_upload_key: link.body.file.storage_upload_key }], ...IMPORT_WINDOW, service_type: serviceType },
    planner,
  );
  expect(job.status, JSON.stringify(job.body)).toBe(201);
  expect((await api.post(`/v1/task-import-jobs/${job.body.id}/start`, {}, planner)).status).toBe(202);
  const status = await until(
    () => api.get<{ import_status: string }>(`/v1/task-import-jobs/${job.body.id}/status`, planner),
    (s) => ['completed', 'failed'].includes(s.body.import_status),
  );
  expect(status.body.import_status).toBe('completed');
  const listed = await api.get<{ tasks: { id: string; task_ref: string }[] }>(
    `/v1/tasks?import_job_id=${job.body.id}&per_page=1000`,
    planner,
  );
  expect(listed.body.tasks).toHaveLength(rows.length);
  return Object.fromEntries(listed.body.tasks.map((t) => [t.task_ref, t.id]));
}

/** Nearby tasks any van can take: pickups around the depot, drop-offs a few km away. */
const easyRows = (prefix: string, n: number): Row[] =>
  Array.from({ length: n }, (_, i) => ({
    ref: `${prefix}-${i + 1}`,
    from: [1.3343 + i * 0.002, 103.8563],
    to: [1.3043 + i * 0.003, 103.8363 + i * 0.002],
  }));

async function newPlanning(name: string, withDriver = false) {
  const made = await api.post<{ id: string; version_rev: string }>('/v1/plannings', { name }, planner);
  expect(made.status).toBe(201);
  if (!withDriver) return made.body;
  const added = await api.post<{ id: string; version_rev: string }>(
    `/v1/plannings/${made.body.id}/drivers`,
    { drivers: [{ id: driver.id }] },
    planner,
  );
  expect(added.status).toBe(200);
  return added.body;
}

const van = (id: string, extra: Record<string, unknown> = {}) => ({
  id,
  start: { latitude: DEPOT[0], longitude: DEPOT[1] },
  shift_start_utc: at('00:00'),
  shift_end_utc: at('12:00'),
  capacity: { weight_kg: 800 },
  ...extra,
});

interface Stop {
  task_id: string;
  kind: 'pickup' | 'dropoff';
  latitude: number;
  longitude: number;
  arrival_utc: string;
  start_utc: string;
  departure_utc: string;
  distance_from_previous_m: number;
}
interface Build {
  id: string;
  status: string;
  dry_run: boolean;
  error?: { code: string; detail: string };
  result?: {
    runsheets: { id: string; vehicle_id: string; driver_id?: string; stops: Stop[] }[];
    unplanned: { task_id: string; code: string; detail: string }[];
    summary: { tasks: number; planned: number; unplanned: number; vehicles_used: number; stopped: string };
  };
}

async function build(planningId: string, body: Record<string, unknown>, headers?: Record<string, string>) {
  return api.post<{ route_build: Build }>(`/v1/plannings/${planningId}/routes`, body, planner, headers);
}

/** Reads the build until it has ended. */
async function ended(planningId: string, buildId: string): Promise<Build> {
  const read = await until(
    () => api.get<{ route_build: Build }>(`/v1/plannings/${planningId}/routes/${buildId}`, planner),
    (r) => ['completed', 'failed'].includes(r.body.route_build?.status),
    60_000,
    100,
  );
  expect(read.status).toBe(200);
  return read.body.route_build;
}

/** Queues a build of one-second solves against the planning's version; its id. */
async function queueBuild(planning: { id: string; version_rev: string }, body: object): Promise<string> {
  const queued = await build(planning.id, { ...body, time_limit_s: 1, version_rev: planning.version_rev });
  expect(queued.status, JSON.stringify(queued.body)).toBe(202);
  return queued.body.route_build.id;
}

const planningOf = (id: string) =>
  api.get<{
    version_rev: string;
    total_runsheets: number;
    runsheets: { id: string; status: string; stops?: Stop[]; tasks: Record<string, unknown>[] }[];
  }>(`/v1/plannings/${id}`, planner);

describe('X23 checks its body', () => {
  it('answers 400 at the path of each bad field, and 409 for a stale version or a planned task', async () => {
    const planning = await newPlanning('Checks');
    const ids = await importRows(easyRows('CHK', 2));
    const [first, second] = Object.values(ids) as [string, string];
    const bad = await build(planning.id, {
      task_ids: [],
      vehicles: [
        { ...van('v1'), start: { latitude: 91, longitude: 103.8 } },
        { ...van('v2'), count: 0, max_stops: 1 },
      ],
      travel: { speed_kmh: 4, detour_factor: 3.5 },
      service_s: { pickup: 7201, dropoff: -1 },
      objective: 'fastest',
      time_limit_s: 301,
      dry_run: 'yes',
      version_rev: planning.version_rev,
    });
    expect(bad.status).toBe(400);
    const paths = (bad.body as unknown as { errors: { path: string }[] }).errors.map((e) => e.path);
    expect(paths).toEqual(
      expect.arrayContaining([
        'task_ids',
        'vehicles[0].start.latitude',
        'vehicles[1].count',
        'vehicles[1].max_stops',
        'travel.speed_kmh',
        'travel.detour_factor',
        'service_s.pickup',
        'service_s.dropoff',
        'objective',
        'time_limit_s',
        'dry_run',
      ]),
    );
    // Rules across fields: a driver's vehicle is one vehicle; a shift ends after it starts; 500 vehicles in all.
    const crossed = await build(planning.id, {
      task_ids: [first],
      vehicles: [van('v1', { driver_id: driver.id, count: 2 }), van('v2', { shift_end_utc: at('00:00') })],
      version_rev: planning.version_rev,
    });
    expect(crossed.status).toBe(400);
    expect((crossed.body as unknown as { errors: { path: string }[] }).errors.map((e) => e.path)).toEqual([
      'vehicles[0].count',
      'vehicles[1].shift_end_utc',
    ]);
    const fleet = await build(planning.id, {
      task_ids: [first],
      vehicles: [van('v1', { count: 2 }), van('v1'), van('v3', { count: 499 })],
      version_rev: planning.version_rev,
    });
    expect(fleet.status).toBe(400);
    expect((fleet.body as unknown as { errors: { path: string }[] }).errors.map((e) => e.path)).toEqual([
      'vehicles[1].id',
      'vehicles[2].count',
    ]);
    // A vehicle's id is unique after `count` expands it (`v` × 2 is `v-1`, `v-2`): a later `v-1` repeats one.
    for (const vehicles of [
      [van('v', { count: 2 }), van('v-1')],
      [van('v-2'), van('v', { count: 2 })],
    ]) {
      const clash = await build(planning.id, { task_ids: [first], vehicles, version_rev: planning.version_rev });
      expect(clash.status).toBe(400);
      expect((clash.body as unknown as { errors: { path: string }[] }).errors.map((e) => e.path)).toEqual([
        'vehicles[1].id',
      ]);
    }
    // One driver, one vehicle: a second vehicle naming the same driver is refused at its path.
    const shared = await build(planning.id, {
      task_ids: [first],
      vehicles: [van('v1', { driver_id: driver.id }), van('v2', { driver_id: driver.id })],
      version_rev: planning.version_rev,
    });
    expect(shared.status).toBe(400);
    expect((shared.body as unknown as { errors: { path: string }[] }).errors.map((e) => e.path)).toEqual([
      'vehicles[1].driver_id',
    ]);
    const neither = await build(planning.id, { vehicles: [van('v1')], version_rev: planning.version_rev });
    expect(neither.status).toBe(400);
    expect((neither.body as unknown as { errors: { path: string }[] }).errors.map((e) => e.path)).toEqual(['task_ids']);
    // The rules across fields are judged with the fields' own problems, all in one answer (docs/routing.md).
    const empty = await build(planning.id, {});
    expect((empty.body as unknown as { errors: { path: string }[] }).errors.map((e) => e.path).sort()).toEqual([
      'task_ids',
      'vehicles',
      'version_rev',
    ]);
    const both = await build(planning.id, {
      task_ids: [first],
      vehicles: [
        van('v1', { driver_id: driver.id, count: 2, start: { latitude: 91, longitude: 0 } }),
        van('v2', { shift_end_utc: at('00:00'), capacity: { weight_kg: -1 } }),
      ],
      version_rev: planning.version_rev,
    });
    expect((both.body as unknown as { errors: { path: string }[] }).errors.map((e) => e.path).sort()).toEqual([
      'vehicles[0].count',
      'vehicles[0].start.latitude',
      'vehicles[1].capacity.weight_kg',
      'vehicles[1].shift_end_utc',
    ]);
    // Against the planning: an unknown task, a driver not in the planning (P7), a stale version.
    const unknown = await build(planning.id, {
      task_ids: [first, 'ffffffffffffffffffffffff'],
      vehicles: [van('v1')],
      version_rev: planning.version_rev,
    });
    expect(unknown.status).toBe(400);
    expect(unknown.body).toMatchObject({ errors: [{ path: 'task_ids[1]' }] });
    const stranger = await build(planning.id, {
      task_ids: [first],
      vehicles: [van('v1', { driver_id: driver.id })],
      version_rev: planning.version_rev,
    });
    expect(stranger.status).toBe(400);
    expect(stranger.body).toMatchObject({ errors: [{ path: 'vehicles[0].driver_id' }] });
    const stale = await build(planning.id, { task_ids: [first], vehicles: [van('v1')], version_rev: '1-stale' });
    expect(stale.status).toBe(409);
    // A task already in a runsheet (P5): 409 at its path, as P5 says it.
    const other = await newPlanning('Has the task');
    expect(
      (
        await api.post(
          `/v1/plannings/${other.id}/runsheets`,
          { runsheets: [{ id: 'RS', task_ids: [second] }] },
          planner,
        )
      ).status,
    ).toBe(200);
    const taken = await build(planning.id, {
      task_ids: [first, second],
      vehicles: [van('v1')],
      version_rev: planning.version_rev,
    });
    expect(taken.status).toBe(409);
    expect(taken.body).toMatchObject({ errors: [{ path: 'task_ids[1]' }] });
    // Issue 51: the named tasks of one import are checked from its index entries, the others read; the first refusal
    // in request order is still the one answered, and an import job with a planned task is a 409 at import_job_id.
    const refusalAt = async (names: Record<string, unknown>) => {
      const r = await build(planning.id, { ...names, vehicles: [van('v1')], version_rev: planning.version_rev });
      return [r.status, (r.body as unknown as { errors: { path: string }[] }).errors.map((e) => e.path)];
    };
    const unknownId = 'ffffffffffffffffffffffff';
    expect(await refusalAt({ task_ids: [first, unknownId, second] })).toEqual([400, ['task_ids[1]']]);
    expect(await refusalAt({ task_ids: [second, unknownId] })).toEqual([409, ['task_ids[0]']]);
    expect(await refusalAt({ task_ids: [unknownId, second] })).toEqual([400, ['task_ids[0]']]);
    const jobOf = await api.get<{ task: { import_job_id: string } }>(`/v1/tasks/${second}`, planner);
    expect(await refusalAt({ import_job_id: jobOf.body.task.import_job_id })).toEqual([409, ['import_job_id']]);
    // Nothing was queued by any of these.
    const list = await api.get<{ route_builds: unknown[] }>(`/v1/plannings/${planning.id}/routes`, planner);
    expect(list.body.route_builds).toEqual([]);
  }, 60_000);
  it('holds its bounds to the contract: 1–200 entries, 500 vehicles, 1–2 000 tasks, whole seconds 1–300', async () => {
    const planning = await newPlanning('Bounds');
    const ids = await importRows(easyRows('BND', 1));
    const [first] = Object.values(ids) as [string];
    const paths = async (body: Record<string, unknown>) => {
      const r = await build(planning.id, {
        task_ids: [first],
        vehicles: [van('v1')],
        dry_run: true,
        time_limit_s: 1,
        version_rev: planning.version_rev,
        ...body,
      });
      expect(r.status, JSON.stringify(r.body)).toBe(400);
      return (r.body as unknown as { errors: { path: string }[] }).errors.map((e) => e.path);
    };
    expect(await paths({ vehicles: Array.from({ length: 201 }, (_, i) => van(`v${i}`)) })).toEqual(['vehicles']);
    expect(await paths({ vehicles: [] })).toEqual(['vehicles']);
    expect(await paths({ vehicles: [van('v1', { count: 501 })] })).toEqual(['vehicles[0].count']);
    expect(await paths({ vehicles: [van('v1', { count: 1.5 })] })).toEqual(['vehicles[0].count']);
    expect(await paths({ task_ids: Array.from({ length: 2001 }, () => first) })).toEqual(['task_ids']);
    expect(await paths({ time_limit_s: 0 })).toEqual(['time_limit_s']);
    expect(await paths({ time_limit_s: 2.5 })).toEqual(['time_limit_s']);
    expect(await paths({ service_s: { pickup: 1.5 } })).toEqual(['service_s.pickup']);
    expect(await paths({ travel: { detour_factor: 0.9 } })).toEqual(['travel.detour_factor']);
    expect(await paths({ version_rev: 7 })).toEqual(['version_rev']);
    expect(await paths({ vehicles: [van('v1', { end: { latitude: 1 } })] })).toEqual(['vehicles[0].end.longitude']);
    // At the bounds, and `end: null` (the route ends at its last stop), `objective: vehicles`: accepted.
    const edge = await build(planning.id, {
      task_ids: [first],
      vehicles: [van('v1', { end: null, count: 500 })],
      travel: { speed_kmh: 200, detour_factor: 1 },
      service_s: { pickup: 0, dropoff: 7200 },
      objective: 'vehicles',
      time_limit_s: 1,
      dry_run: true,
      version_rev: planning.version_rev,
    });
    expect(edge.status, JSON.stringify(edge.body)).toBe(202);
    expect((await ended(planning.id, edge.body.route_build.id)).status).toBe('completed');
  }, 60_000);

  it('is the planning’s: a driver is refused (403), another organisation sees nothing (404)', async () => {
    const planning = await newPlanning('Access');
    const ids = await importRows(easyRows('ACC', 1));
    const [first] = Object.values(ids) as [string];
    const body = {
      task_ids: [first],
      vehicles: [van('v1')],
      dry_run: true,
      time_limit_s: 1,
      version_rev: planning.version_rev,
    };
    const made = await build(planning.id, body);
    expect(made.status).toBe(202);
    const buildId = made.body.route_build.id;
    const other = (
      await api.post<{ id: string }>('/v1/admin/organisations', { name: 'Elsewhere', kind: 'transporter' }, admin)
    ).body.id;
    const stranger = (await invitedMember(api, admin, 'OrgAdmin', ROLES.OrgAdmin, other)).token;
    const base = `/v1/plannings/${planning.id}/routes`;
    const answers = async (token: string) => [
      (await api.post(base, body, token)).status,
      (await api.get(`${base}/${buildId}`, token)).status,
      (await api.get(base, token)).status,
    ];
    expect(await answers(driver.token)).toEqual([403, 403, 403]);
    expect(await answers(stranger)).toEqual([404, 404, 404]);
    expect((await api.get(`${base}/${crypto.randomUUID()}`, planner)).status).toBe(404);
    // X25 pages newest first: a later build on page 1, the first on page 2, then no further page.
    const later = await build(planning.id, body);
    expect(later.status).toBe(202);
    type Page = { route_builds: Build[]; meta: { next_page_token: string | null } };
    const one = await api.get<Page>(`${base}?per_page=1`, planner);
    expect(one.status).toBe(200);
    expect(one.body.route_builds.map((b) => b.id)).toEqual([later.body.route_build.id]);
    expect(one.body.meta.next_page_token).toEqual(expect.any(String));
    const two = await api.get<Page>(
      `${base}?per_page=1&page_token=${encodeURIComponent(one.body.meta.next_page_token!)}`,
      planner,
    );
    expect(two.body.route_builds.map((b) => b.id)).toEqual([buildId]);
    const rest = two.body.meta.next_page_token
      ? await api.get<Page>(
          `${base}?per_page=1&page_token=${encodeURIComponent(two.body.meta.next_page_token)}`,
          planner,
        )
      : undefined;
    expect(rest?.body.route_builds ?? []).toEqual([]);
    // Section 1: `per_page` goes up to 1000 outside user lists; past it is a 400 at its path.
    expect((await api.get<Page>(`${base}?per_page=1000`, planner)).body.route_builds).toHaveLength(2);
    expect((await api.get(`${base}?per_page=1001`, planner)).body).toMatchObject({
      errors: [{ path: 'query.per_page' }],
    });
    await ended(planning.id, buildId);
    await ended(planning.id, later.body.route_build.id);
  }, 60_000);
});

describe('a dry run', () => {
  it('answers every task, planned or unplanned with its code, and adds nothing', async () => {
    const planning = await newPlanning('Dry');
    const ids = await importRows([
      { ref: 'OK', from: [1.3343, 103.8563], to: [1.3, 103.85], service: [60, 300] },
      { ref: 'NOCOORD' },
      // Its pickup window closed before any shift began.
      { ref: 'LATE', from: [1.35, 103.86], to: [1.3, 103.85], pickup: ['00:00', '00:00'] },
      { ref: 'HEAVY', from: [1.34, 103.86], to: [1.3, 103.85], kg: 5000 },
      // Its drop-off, 20 km from its pickup, closes ten minutes after the pickup window opens.
      { ref: 'LATEDROP', from: [1.34, 103.86], to: [1.35, 104.0], dropoff: ['01:00', '01:10'] },
      // Two pickups 25 km apart in the same five minutes: one van serves either, not both.
      { ref: 'EAST', from: [1.35, 104.0], to: [1.35, 104.0], pickup: ['02:00', '02:05'], dropoff: ['02:00', '02:30'] },
      { ref: 'WEST', from: [1.35, 103.7], to: [1.35, 103.7], pickup: ['02:00', '02:05'], dropoff: ['02:00', '02:30'] },
    ]);
    const lorry = await importRows([{ ref: 'LORRY', from: [1.34, 103.86], to: [1.3, 103.85] }], 'lorry_24ft');
    const body = {
      task_ids: [...Object.values(ids), lorry['LORRY']],
      vehicles: [van('van', { service_types: ['van_1.7m'], end: null })],
      time_limit_s: 1,
      dry_run: true,
      version_rev: planning.version_rev,
    };
    const queued = await build(planning.id, body);
    expect(queued.status, JSON.stringify(queued.body)).toBe(202);
    expect(queued.body.route_build).toMatchObject({ status: 'queued', dry_run: true, tasks: 8, vehicles: 1 });
    const done = await ended(planning.id, queued.body.route_build.id);
    expect(done.status, JSON.stringify(done.error)).toBe('completed');
    const result = done.result!;
    const code = (ref: string, id = ids[ref]) => result.unplanned.find((u) => u.task_id === id)?.code;
    expect(code('NOCOORD')).toBe('no_coordinates');
    expect(code('LATE')).toBe('time_window');
    expect(code('LATEDROP')).toBe('time_window');
    // The reason names the window that cannot be met.
    const detail = (ref: string) => result.unplanned.find((u) => u.task_id === ids[ref])?.detail;
    expect(detail('LATE')).toMatch(/its pickup window \(from_end_time_utc\) closes/);
    expect(detail('LATEDROP')).toMatch(/its drop-off window \(to_end_time_utc\) closes/);
    expect(code('HEAVY')).toBe('capacity');
    expect(code('LORRY', lorry['LORRY'])).toBe('service_type');
    // One of the two is planned, the other left out for want of a second van.
    expect([code('EAST'), code('WEST')].filter((c) => c !== undefined)).toEqual(['not_enough_vehicles']);
    for (const u of result.unplanned) expect(u.detail.length).toBeGreaterThan(20);
    expect(result.summary).toMatchObject({ tasks: 8, planned: 2, unplanned: 6, vehicles_used: 1 });
    // The one runsheet: each task picked up before it is dropped off, every stop within its window, OK's own service.
    const [sheet] = result.runsheets;
    expect(sheet!.vehicle_id).toBe('van');
    const kinds = sheet!.stops.map((s) => `${s.kind}:${s.task_id}`);
    expect(kinds).toContain(`pickup:${ids['OK']}`);
    expect(kinds.indexOf(`pickup:${ids['OK']}`)).toBeLessThan(kinds.indexOf(`dropoff:${ids['OK']}`));
    const okDrop = sheet!.stops.find((s) => s.kind === 'dropoff' && s.task_id === ids['OK'])!;
    expect(Date.parse(okDrop.departure_utc) - Date.parse(okDrop.start_utc)).toBe(300_000);
    for (const stop of sheet!.stops) {
      expect(Date.parse(stop.start_utc)).toBeGreaterThanOrEqual(Date.parse(stop.arrival_utc));
      expect(Date.parse(stop.start_utc)).toBeGreaterThanOrEqual(Date.parse(at('01:00')));
    }
    // Nothing added: no runsheet, the version as it was, every task still unplanned.
    const after = await planningOf(planning.id);
    expect(after.body).toMatchObject({ total_runsheets: 0, version_rev: planning.version_rev });
    const task = await api.get<{ task: { planning_id: string | null; from_service_s: number | null } }>(
      `/v1/tasks/${ids['OK']}`,
      planner,
    );
    expect(task.body.task).toMatchObject({ planning_id: null, from_service_s: 60 });
    // X25 lists it, without its result; the partners heard of it.
    const list = await api.get<{ route_builds: Build[] }>(`/v1/plannings/${planning.id}/routes`, planner);
    expect(list.body.route_builds.map((b) => [b.id, b.status, b.result])).toEqual([[done.id, 'completed', undefined]]);
    const told = await until(
      async () => webhooks.received.filter((m) => m.data['route_build_id'] === done.id),
      (found) => found.length > 0,
    );
    expect(told.map((m) => m.type)).toEqual(['route_build.completed']);
    // Queued with the other's (and as fast, before issue 51.6): a second more lets a stray one arrive.
    const strays = await until(
      async () => inviteOnly.received,
      (found) => found.length > 0,
      1000,
    );
    expect(strays).toEqual([]);
  }, 60_000);
});

describe('a build', () => {
  it('adds its runsheets once with their stops and planned times; a driver’s vehicle is assigned', async () => {
    const planning = await newPlanning('Applied', true);
    const ids = await importRows(easyRows('APP', 6));
    const body = {
      task_ids: Object.values(ids),
      // Three tasks (six stops) a vehicle at most: both vehicles are used.
      vehicles: [van('driven', { driver_id: driver.id, max_stops: 6 }), van('spare', { max_stops: 6 })],
      time_limit_s: 1,
      version_rev: planning.version_rev,
    };
    // The same request twice with one Idempotency-Key: one build.
    const key = { 'idempotency-key': 'routes-applied-1' };
    const first = await build(planning.id, body, key);
    const again = await build(planning.id, body, key);
    expect(first.status, JSON.stringify(first.body)).toBe(202);
    expect(again.body.route_build.id).toBe(first.body.route_build.id);
    const done = await ended(planning.id, first.body.route_build.id);
    expect(done.status, JSON.stringify(done.error)).toBe('completed');
    const result = done.result!;
    expect(result.summary).toMatchObject({ tasks: 6, planned: 6, unplanned: 0, vehicles_used: 2 });
    const list = await api.get<{ route_builds: Build[] }>(`/v1/plannings/${planning.id}/routes`, planner);
    expect(list.body.route_builds).toHaveLength(1);

    const after = await planningOf(planning.id);
    expect(after.body.total_runsheets).toBe(2);
    expect(after.body.version_rev).not.toBe(planning.version_rev);
    const driven = result.runsheets.find((r) => r.vehicle_id === 'driven')!;
    const spare = result.runsheets.find((r) => r.vehicle_id === 'spare')!;
    expect(driven.driver_id).toBe(driver.id);
    const stored = new Map(after.body.runsheets.map((r) => [r.id, r]));
    expect(stored.get(driven.id)).toMatchObject({ status: 'assigned', stops: driven.stops });
    expect(stored.get(spare.id)).toMatchObject({ status: 'open', stops: spare.stops });
    // Tasks in pickup order, each with its planned times; X22 shows the same, and X10 the tasks planned there.
    const detail = await api.get<{ runsheet: { stops: Stop[]; tasks: Record<string, unknown>[] } }>(
      `/v1/plannings/${planning.id}/runsheets/${encodeURIComponent(spare.id)}`,
      planner,
    );
    expect(detail.status).toBe(200);
    expect(detail.body.runsheet.stops).toEqual(spare.stops);
    const pickups = spare.stops.filter((s) => s.kind === 'pickup');
    expect(detail.body.runsheet.tasks.map((t) => t['id'])).toEqual(pickups.map((s) => s.task_id));
    for (const task of detail.body.runsheet.tasks) {
      const stops = spare.stops.filter((s) => s.task_id === task['id']);
      expect(task).toMatchObject({
        planned_pickup_utc: stops.find((s) => s.kind === 'pickup')!.start_utc,
        planned_dropoff_utc: stops.find((s) => s.kind === 'dropoff')!.start_utc,
      });
    }
    const mine = await api.get<{ runsheet: { stops: Stop[] } }>(
      `/v1/plannings/${planning.id}/runsheets/${encodeURIComponent(driven.id)}`,
      driver.token,
    );
    expect(mine.body.runsheet.stops).toEqual(driven.stops);
    const planned = await api.get<{ tasks: { id: string; runsheet_id: string | null }[] }>(
      `/v1/tasks?planned=true&per_page=1000`,
      planner,
    );
    const placed = planned.body.tasks.filter((t) => Object.values(ids).includes(t.id));
    expect(placed).toHaveLength(6);
  }, 60_000);

  it('of two racing on one planning, one adds its runsheets and the other fails with planning_changed', async () => {
    const planning = await newPlanning('Race');
    const ids = await importRows(easyRows('RACE', 4));
    const body = { task_ids: Object.values(ids), vehicles: [van('v', { count: 2 })], time_limit_s: 1 };
    const [a, b] = await Promise.all([
      build(planning.id, { ...body, version_rev: planning.version_rev }),
      build(planning.id, { ...body, version_rev: planning.version_rev }),
    ]);
    expect([a.status, b.status]).toEqual([202, 202]);
    const ends = await Promise.all([a, b].map((r) => ended(planning.id, r.body.route_build.id)));
    expect(ends.map((e) => e.status).sort()).toEqual(['completed', 'failed']);
    const won = ends.find((e) => e.status === 'completed')!;
    expect(ends.find((e) => e.status === 'failed')!.error?.code).toBe('planning_changed');
    const after = await planningOf(planning.id);
    expect(after.body.total_runsheets).toBe(won.result!.summary.vehicles_used);
    expect(after.body.runsheets.map((r) => r.id).sort()).toEqual(won.result!.runsheets.map((r) => r.id).sort());
  }, 60_000);

  it('fails with planning_changed when a P5 lands while it solves, and adds nothing', async () => {
    const planning = await newPlanning('Changed');
    const ids = await importRows(easyRows('CHG', 3));
    // The planner watches the planning's channel (4.10: the build's end goes out on `planning.<id>`).
    const watcher = await openSocket(host.url, planner);
    watcher.subscribe([`planning.${planning.id}`]);
    expect(await watcher.when(() => watcher.frames.some((f) => f.type === 'subscribed'))).toBe(true);
    const queued = await build(planning.id, {
      task_ids: Object.values(ids),
      vehicles: [van('v')],
      time_limit_s: 1,
      version_rev: planning.version_rev,
    });
    expect(queued.status).toBe(202);
    const p5 = await api.post(
      `/v1/plannings/${planning.id}/runsheets`,
      { runsheets: [{ id: 'RS-BY-HAND', tasks: [{ id: 'hand-1' }] }] },
      planner,
    );
    expect(p5.status).toBe(200);
    const done = await ended(planning.id, queued.body.route_build.id);
    expect(done).toMatchObject({ status: 'failed', error: { code: 'planning_changed' } });
    const after = await planningOf(planning.id);
    expect(after.body.runsheets.map((r) => r.id)).toEqual(['RS-BY-HAND']);
    const task = await api.get<{ task: { planning_id: string | null } }>(`/v1/tasks/${ids['CHG-1']}`, planner);
    expect(task.body.task.planning_id).toBeNull();
    const told = await until(
      async () => webhooks.received.filter((m) => m.data['route_build_id'] === done.id),
      (found) => found.length > 0,
    );
    expect(told.map((m) => m.type)).toEqual(['route_build.failed']);
    expect(await watcher.when(() => watcher.events('route_build.failed').length > 0)).toBe(true);
    expect(watcher.events('route_build.failed')[0]).toMatchObject({
      channel: `planning.${planning.id}`,
      data: { route_build_id: done.id, status: 'failed', error: { code: 'planning_changed' } },
    });
    watcher.socket.close();
  }, 60_000);

  it('whose worker is killed mid-solve is retried and adds its runsheets once', async () => {
    const planning = await newPlanning('Killed');
    const ids = await importRows(easyRows('KILL', 4));
    const buildId = await queueBuild(planning, { task_ids: Object.values(ids), vehicles: [van('v', { count: 2 })] });
    // The first solve's thread is stopped as a dying worker's would be.
    const thread = await until(
      async () => [...solvingThreads][0],
      (found) => found !== undefined,
      30_000,
      5,
    );
    expect(thread).toBeDefined();
    await thread!.terminate();
    const done = await ended(planning.id, buildId);
    expect(done.status, JSON.stringify(done.error)).toBe('completed');
    const after = await planningOf(planning.id);
    expect(after.body.total_runsheets).toBe(done.result!.summary.vehicles_used);
    const held = after.body.runsheets.flatMap((r) => r.tasks.map((t) => t['id']));
    expect(held.sort()).toEqual(Object.values(ids).sort());
  }, 60_000);
  /** An error of the build's own (no dependency's fault): DynamoDB refusing the write, as for an item too large. */
  const refused = () =>
    Object.assign(new Error('Item size has exceeded the maximum allowed size'), {
      name: 'ValidationException',
      $fault: 'client',
      $metadata: { httpStatusCode: 400 },
    });

  /** Runs a build while each batch write of runsheets whose ids `refuses` picks out is refused; its end. */
  async function buildRefused(planning: { id: string; version_rev: string }, body: object, refuses: RegExp) {
    const refuseRunsheets: Middleware = (next, context) => async (args) => {
      const input = args.input as { RequestItems?: Record<string, { PutRequest?: { Item?: { id?: string } } }[]> };
      const ids = Object.values(input.RequestItems ?? {})
        .flat()
        .map((w) => String(w.PutRequest?.Item?.id ?? ''))
        .join(' ');
      if (context.commandName === 'BatchWriteItemCommand' && refuses.test(ids)) throw refused();
      return next(args);
    };
    return withMiddleware('refuse-runsheets', refuseRunsheets, async () =>
      ended(planning.id, await queueBuild(planning, body)),
    );
  }

  /** The build failed for good, nothing of it is in the planning, and its tasks are free (X10 lists them). */
  async function expectNothingAdded(done: Build, planningId: string, taskIds: string[]) {
    expect(done.status).toBe('failed');
    expect(done.error?.code).toBe('build_failed');
    const after = await planningOf(planningId);
    expect(after.body.runsheets).toEqual([]);
    expect(after.body.total_runsheets).toBe(0);
    const free = await api.get<{ tasks: { id: string }[] }>('/v1/tasks?planned=false&per_page=1000', planner);
    expect(free.body.tasks.map((t) => t.id)).toEqual(expect.arrayContaining(taskIds));
    return after.body;
  }

  it('that fails after marking its tasks frees them and adds nothing (build_failed)', async () => {
    const planning = await newPlanning('Refused');
    const taskIds = Object.values(await importRows(easyRows('REF', 4)));
    const body = { task_ids: taskIds, vehicles: [van('refused', { count: 2 })] };
    // Every write of the build's runsheets is refused: each run fails after it has marked the tasks.
    const done = await buildRefused(planning, body, /(^| )refused-/);
    const after = await expectNothingAdded(done, planning.id, taskIds);
    // The next build plans them.
    const built = await ended(planning.id, await queueBuild({ id: planning.id, version_rev: after.version_rev }, body));
    expect(built.status, JSON.stringify(built.error)).toBe('completed');
    const held = (await planningOf(planning.id)).body.runsheets.flatMap((r) => r.tasks.map((t) => t['id']));
    expect(held.sort()).toEqual([...taskIds].sort());
  }, 60_000);

  it('whose runsheets were written in part before its runs failed takes them out and frees its tasks', async () => {
    const planning = await newPlanning('Cut');
    const taskIds = Object.values(await importRows(easyRows('CUT', 26)));
    // 26 runsheets of one task each, written 25 a batch: the second batch (one runsheet alone) is refused every run.
    const vehicles = [van('cut', { count: 26, max_stops: 2 })];
    const done = await buildRefused(planning, { task_ids: taskIds, vehicles }, /^cut-[^ ]+$/);
    await expectNothingAdded(done, planning.id, taskIds);
  }, 60_000);

  it('that marked its tasks and then lost the planning to another build frees them (planning_changed)', async () => {
    const planning = await newPlanning('Overtaken');
    const mine = Object.values(await importRows(easyRows('MINE', 3)));
    const theirs = Object.values(await importRows(easyRows('THEIRS', 3)));
    // The first run has moved the planning and marked its tasks when its runsheets' write is refused; before that
    // answer, another build is asked against the planning as it now is and applies (the planning is no longer its).
    let other: Build | undefined;
    const overtaken: Middleware = (next, context) => async (args) => {
      const ids = JSON.stringify((args.input as { RequestItems?: unknown }).RequestItems ?? {});
      if (context.commandName === 'BatchWriteItemCommand' && !other && ids.includes('"id":"mine-')) {
        const now = await planningOf(planning.id);
        const body = { task_ids: theirs, vehicles: [van('theirs')] };
        other = await ended(
          planning.id,
          await queueBuild({ id: planning.id, version_rev: now.body.version_rev }, body),
        );
        throw refused();
      }
      return next(args);
    };
    const done = await withMiddleware('overtaken', overtaken, async () =>
      ended(planning.id, await queueBuild(planning, { task_ids: mine, vehicles: [van('mine')] })),
    );
    expect(other?.status, JSON.stringify(other?.error)).toBe('completed');
    expect(done.status).toBe('failed');
    expect(done.error?.code).toBe('planning_changed');
    // Only the other build's runsheet is there; this one's tasks are free again.
    const after = await planningOf(planning.id);
    expect(after.body.runsheets.map((r) => r.id)).toEqual(other!.result!.runsheets.map((r) => r.id));
    const free = await api.get<{ tasks: { id: string }[] }>('/v1/tasks?planned=false&per_page=1000', planner);
    expect(free.body.tasks.map((t) => t.id)).toEqual(expect.arrayContaining(mine));
  }, 60_000);

  it('whose runsheets were added before its runs failed is completed by its last run', async () => {
    const planning = await newPlanning('Counted');
    const ids = await importRows(easyRows('CNT', 4));
    // The planning's count after the runsheets are written is refused for each of the build's three runs.
    let faults = 0;
    const refuseCount: Middleware = (next) => async (args) => {
      const text = JSON.stringify(args.input);
      if (faults < 3 && text.includes('total_runsheets') && text.includes(planning.id) && text.includes('SET')) {
        faults++;
        throw refused();
      }
      return next(args);
    };
    const body = { task_ids: Object.values(ids), vehicles: [van('v', { count: 2 })] };
    const done = await withMiddleware('refuse-count', refuseCount, async () =>
      ended(planning.id, await queueBuild(planning, body)),
    );
    expect(faults).toBe(3);
    expect(done.status, JSON.stringify(done.error)).toBe('completed');
    const after = await planningOf(planning.id);
    expect(after.body.total_runsheets).toBe(done.result!.summary.vehicles_used);
    expect(after.body.runsheets.map((r) => r.id).sort()).toEqual(done.result!.runsheets.map((r) => r.id).sort());
    const held = after.body.runsheets.flatMap((r) => r.tasks.map((t) => t['id']));
    expect(held.sort()).toEqual(Object.values(ids).sort());
  }, 60_000);
});
