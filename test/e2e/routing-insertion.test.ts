/**
 * X30 over HTTP (contract 4.11, issue 54 item 3): tasks added to the live routes. A day is driven as the live-day
 * tests drive it: X23 builds a route for a driver's vehicle, the driver sends a fix and picks up the first task; a
 * hand-made runsheet (P5, imported tasks) waits far away. X30 then places a new task: checked from the answer alone
 * (the stop done absent, the on-board drop-off present on the same runsheet, no stop before the request, every stop
 * within its window and each arrival as the tests' own model drives it from the driver's position), the driver told
 * on `user.<id>` (`runsheet.updated`), the runsheet left alone in its own order, X22 following the new order; a dry run
 * adds nothing; tenancy and bad bodies. Real host, real tokens, `time_limit_s: 1`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningHost } from '../../lib/local/start.ts';
import { ROLES } from '../../shared/auth/roles.ts';
import { expectedEtas, MODEL_DEFAULTS, type ModelPoint } from '../support/eta-model.ts';
import { type Client, client, invitedMember, loginAs, newOrganisation } from '../support/http.ts';
import { importCsv } from '../support/imports.ts';
import { ADMIN, startTestHost } from '../support/local.ts';
import { planningWithDrivers } from '../support/runsheets.ts';
import { openSocket } from '../support/sockets.ts';
import { until } from '../support/until.ts';

let host: RunningHost;
let api: Client;
let admin: string;
let planner: string;
type User = { id: string; token: string };
let driver: User;
let orgId: string;

beforeAll(async () => {
  host = await startTestHost();
  api = client(host.url);
  admin = (await loginAs(api, ADMIN.email, ADMIN.password)).bearer_token;
  const org = await newOrganisation(api, admin, 'Afternoon');
  orgId = org;
  planner = (await invitedMember(api, admin, 'OrgAdmin', ROLES.OrgAdmin, org)).token;
  driver = await invitedMember(api, admin, 'OrgDriver', ROLES.OrgDriver, org);
}, 120_000);

afterAll(() => host?.stop());

const soon = (minutes: number) => new Date(Date.now() + minutes * 60_000).toISOString();
const DEPOT: ModelPoint = { latitude: 1.3343, longitude: 103.8563 };

interface Row {
  ref: string;
  from: ModelPoint;
  to: ModelPoint;
  /** Minutes from now the drop-off window opens and closes: 30 minutes ago to 6 h on unless told. */
  dropoff?: [number, number];
  weightKg?: number;
}
/** One import job of these tasks, their pickup windows open from half an hour ago to 4 h on: its id and the tasks'. */
async function importJob(rows: Row[]) {
  const header =
    'task_ref,from_street_address,from_city,from_country,to_street_address,to_city,to_country,from_start_time_utc,from_end_time_utc,from_timezone,to_start_time_utc,to_end_time_utc,to_timezone,from_latitude,from_longitude,to_latitude,to_longitude,total_item_weight,total_weight_unit';
  const lines = rows.map((r) => {
    const [opens, closes] = r.dropoff ?? [-30, 360];
    return `${r.ref},1 Depot Rd,Singapore,SG,1 Mall,Singapore,SG,${soon(-30)},${soon(240)},Asia/Singapore,${soon(opens)},${soon(closes)},Asia/Singapore,${r.from.latitude},${r.from.longitude},${r.to.latitude},${r.to.longitude},${r.weightKg ?? 1},kg`;
  });
  return importCsv(api, planner, [header, ...lines].join('\n'));
}
const importTasks = async (rows: Row[]) => (await importJob(rows)).taskIds;

interface Stop {
  task_id: string;
  kind: 'pickup' | 'dropoff';
  latitude: number;
  longitude: number;
  arrival_utc: string;
  start_utc: string;
  departure_utc: string;
}
interface Build {
  id: string;
  kind: string;
  status: string;
  dry_run: boolean;
  error?: { code: string; detail: string };
  result?: {
    runsheets: {
      id: string;
      vehicle_id: string;
      driver_id?: string;
      planned_start_utc: string;
      stops: Stop[];
      added?: string[];
    }[];
    unplanned: { task_id: string; code: string }[];
    summary: { tasks: number; planned: number; unplanned: number };
  };
}
type Window = { start_time_utc: string; end_time_utc: string };
type Task = {
  id: string;
  status: string;
  from_time_window: Window;
  to_time_window: Window;
  eta_dropoff_utc?: string | null;
};

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

const planningOf = (id: string) =>
  api.get<{
    version_rev: string;
    runsheets: { id: string; status: string; stops?: Stop[]; tasks: { id: string }[] }[];
  }>(`/v1/plannings/${id}`, planner);

const insertion = (planningId: string, body: Record<string, unknown>, token = planner) =>
  api.post<{ route_build: Build }>(`/v1/plannings/${planningId}/routes/insertions`, body, token);

describe('X30 adds tasks to the live routes', () => {
  it('after a done pickup: the stop done absent, the load on board dropped off by the same runsheet, the driver told', async () => {
    const planning = await planningWithDrivers(api, planner, 'Afternoon', [driver.id]);
    // The morning: two tasks near the depot, built for the driver's van and given to them.
    const morning = await importTasks([
      { ref: 'AM-1', from: { latitude: 1.3363, longitude: 103.8573 }, to: { latitude: 1.3143, longitude: 103.8363 } },
      { ref: 'AM-2', from: { latitude: 1.3383, longitude: 103.8593 }, to: { latitude: 1.3243, longitude: 103.8463 } },
    ]);
    const built = await api.post<{ route_build: Build }>(
      `/v1/plannings/${planning.id}/routes`,
      {
        task_ids: morning,
        vehicles: [
          {
            id: 'van',
            driver_id: driver.id,
            start: DEPOT,
            shift_start_utc: soon(-60),
            shift_end_utc: soon(600),
            capacity: { weight_kg: 500 },
          },
        ],
        time_limit_s: 1,
        version_rev: planning.version_rev,
      },
      planner,
    );
    expect(built.status, JSON.stringify(built.body)).toBe(202);
    const morningBuild = await ended(planning.id, built.body.route_build.id);
    expect(morningBuild.status, JSON.stringify(morningBuild.error)).toBe('completed');
    const route = morningBuild.result!.runsheets[0]!;
    expect(route.driver_id).toBe(driver.id);
    // A hand-made runsheet of imported tasks, far to the west (P5), not given to anyone: no task of X30's goes there.
    const far = await importTasks([
      { ref: 'FAR-1', from: { latitude: 1.35, longitude: 103.7 }, to: { latitude: 1.36, longitude: 103.69 } },
      { ref: 'FAR-2', from: { latitude: 1.34, longitude: 103.71 }, to: { latitude: 1.33, longitude: 103.7 } },
    ]);
    const hand = await api.post(
      `/v1/plannings/${planning.id}/runsheets`,
      { runsheets: [{ id: 'RS-FAR', task_ids: [far[1], far[0]] }] },
      planner,
    );
    expect(hand.status, JSON.stringify(hand.body)).toBe(200);

    // The driver is at the first pickup, and picks it up.
    const first = route.stops[0]!;
    expect(first.kind).toBe('pickup');
    const fix = { latitude: first.latitude, longitude: first.longitude };
    const sent = await api.put(
      '/v1/driver/location',
      { ...fix, client_time_utc: new Date().toISOString() },
      driver.token,
    );
    expect(sent.status).toBe(200);
    const picked = await api.post(
      `/v1/driver/runsheets/${encodeURIComponent(route.id)}/tasks/${first.task_id}/events`,
      { type: 'picked_up', happened_at_utc: new Date().toISOString() },
      driver.token,
    );
    expect(picked.status, JSON.stringify(picked.body)).toBe(201);
    const listening = await openSocket(host.url, driver.token);
    listening.subscribe([`user.${driver.id}`]);

    // The afternoon: a new task near the van's route.
    const [fresh] = (await importTasks([
      { ref: 'PM-1', from: { latitude: 1.3353, longitude: 103.8583 }, to: { latitude: 1.3193, longitude: 103.8413 } },
    ])) as [string];
    const before = await planningOf(planning.id);
    const farBefore = before.body.runsheets.find((r) => r.id === 'RS-FAR')!;

    // A dry run first: the answer, nothing added.
    const dry = await insertion(planning.id, {
      task_ids: [fresh],
      version_rev: before.body.version_rev,
      time_limit_s: 1,
      dry_run: true,
    });
    expect(dry.status, JSON.stringify(dry.body)).toBe(202);
    expect(dry.body.route_build).toMatchObject({ kind: 'insertion', dry_run: true, status: 'queued' });
    const dryDone = await ended(planning.id, dry.body.route_build.id);
    expect(dryDone.status, JSON.stringify(dryDone.error)).toBe('completed');
    expect(dryDone.result!.runsheets.map((r) => r.id)).toEqual([route.id]);
    expect((await planningOf(planning.id)).body.version_rev).toBe(before.body.version_rev);

    const askedAt = Date.now();
    const queued = await insertion(planning.id, {
      task_ids: [fresh],
      version_rev: before.body.version_rev,
      time_limit_s: 1,
    });
    expect(queued.status, JSON.stringify(queued.body)).toBe(202);
    expect(queued.body.route_build).toMatchObject({ kind: 'insertion', dry_run: false, tasks: 1 });
    const done = await ended(planning.id, queued.body.route_build.id);
    expect(done.status, JSON.stringify(done.error)).toBe('completed');
    const result = done.result!;
    expect(result.summary).toMatchObject({ tasks: 1, planned: 1, unplanned: 0 });
    expect(result.unplanned).toEqual([]);
    // Only the van's runsheet changed, and it says what it took.
    expect(result.runsheets).toHaveLength(1);
    const changed = result.runsheets[0]!;
    expect(changed).toMatchObject({ id: route.id, driver_id: driver.id, added: [fresh] });
    const names = changed.stops.map((s) => `${s.task_id}:${s.kind}`);
    // The stop done is absent; the drop-off of the task on board is present (on this runsheet, the only one it may be
    // on); the other morning task and the new one, both stops each, pickup first.
    expect(names).not.toContain(`${first.task_id}:pickup`);
    expect(names).toContain(`${first.task_id}:dropoff`);
    const other = morning.find((id) => id !== first.task_id)!;
    for (const id of [other, fresh]) {
      expect(names.indexOf(`${id}:pickup`)).toBeGreaterThanOrEqual(0);
      expect(names.indexOf(`${id}:dropoff`)).toBeGreaterThan(names.indexOf(`${id}:pickup`));
    }
    expect(names).toHaveLength(5);
    // No stop before the request; each within its window; feasible from the driver's position as the model drives it.
    const tasks = new Map(
      (
        await api.get<{ runsheet: { tasks: Task[] } }>(
          `/v1/plannings/${planning.id}/runsheets/${encodeURIComponent(route.id)}`,
          planner,
        )
      ).body.runsheet.tasks.map((t) => [t.id, t]),
    );
    const startMs = Date.parse(changed.planned_start_utc);
    expect(startMs).toBeGreaterThanOrEqual(askedAt - 1000);
    const model = expectedEtas(
      fix,
      startMs,
      changed.stops.map((s) => {
        const task = tasks.get(s.task_id)!;
        const window = s.kind === 'pickup' ? task.from_time_window : task.to_time_window;
        return {
          point: s,
          opens: window.start_time_utc,
          closes: window.end_time_utc,
          serviceS: s.kind === 'pickup' ? MODEL_DEFAULTS.pickupS : MODEL_DEFAULTS.dropoffS,
        };
      }),
      MODEL_DEFAULTS.travel,
    );
    changed.stops.forEach((stop, i) => {
      expect(Date.parse(stop.arrival_utc)).toBeGreaterThanOrEqual(askedAt - 1000);
      expect(
        Math.abs(Date.parse(stop.start_utc) - model[i]!.etaMs),
        `${stop.task_id}:${stop.kind}`,
      ).toBeLessThanOrEqual(1000);
      expect(model[i]!.lateByS).toBe(0);
    });

    // The driver was told, with the new order.
    expect(await listening.when(() => listening.events('runsheet.updated').length > 0)).toBe(true);
    const [told] = listening.events('runsheet.updated') as unknown as { data: Record<string, unknown> }[];
    expect(told!.data).toMatchObject({
      planning_id: planning.id,
      runsheet_id: route.id,
      route_build_id: done.id,
      added: [fresh],
      stops: changed.stops.map((s) => ({ task_id: s.task_id, kind: s.kind })),
    });
    listening.socket.close();

    // X22: the new task on the runsheet, its stops the done one then the new order, the ETAs following it.
    const mine = await api.get<{
      runsheet: { tasks: Task[]; stops: Stop[]; tasks_total: number; eta_reason: string | null };
    }>(`/v1/plannings/${planning.id}/runsheets/${encodeURIComponent(route.id)}`, driver.token);
    expect(mine.status).toBe(200);
    expect(mine.body.runsheet.tasks.map((t) => t.id).sort()).toEqual([...morning, fresh].sort());
    expect(mine.body.runsheet.stops.map((s) => `${s.task_id}:${s.kind}`)).toEqual([
      `${first.task_id}:pickup`,
      ...names,
    ]);
    expect(mine.body.runsheet.eta_reason).toBeNull();
    expect(mine.body.runsheet.tasks.find((t) => t.id === fresh)!.eta_dropoff_utc).toEqual(expect.any(String));
    // The task is planned there (X10), and cannot be asked for again (409, as X23).
    const again = await insertion(planning.id, {
      task_ids: [fresh],
      version_rev: (await planningOf(planning.id)).body.version_rev,
    });
    expect(again.status).toBe(409);

    // The runsheet X30 left alone is as it was, in its own order.
    const after = await planningOf(planning.id);
    expect(after.body.version_rev).not.toBe(before.body.version_rev);
    const farAfter = after.body.runsheets.find((r) => r.id === 'RS-FAR')!;
    expect(farAfter.tasks.map((t) => t.id)).toEqual(farBefore.tasks.map((t) => t.id));
    expect(farAfter.stops).toEqual(farBefore.stops);
    // X25 lists it as an insertion.
    const listed = await api.get<{ route_builds: Build[] }>(`/v1/plannings/${planning.id}/routes`, planner);
    expect(listed.body.route_builds.find((b) => b.id === done.id)).toMatchObject({ kind: 'insertion' });
    expect(listed.body.route_builds.find((b) => b.id === morningBuild.id)).toMatchObject({ kind: 'build' });
  }, 180_000);

  it('answers problem+json for a bad body, 409 for a stale version, 404 to another organisation', async () => {
    const planning = await planningWithDrivers(api, planner, 'Checks', [driver.id]);
    const [task] = (await importTasks([{ ref: 'CHK-1', from: DEPOT, to: { latitude: 1.32, longitude: 103.84 } }])) as [
      string,
    ];
    const bad = await insertion(planning.id, {
      task_ids: ['nope'],
      runsheet_ids: [],
      vehicles: [],
      time_limit_s: 61,
      dry_run: 'yes',
      version_rev: planning.version_rev,
    });
    expect(bad.status).toBe(400);
    expect(bad.headers.get('content-type')).toContain('application/problem+json');
    const paths = (bad.body as unknown as { errors: { path: string }[] }).errors.map((e) => e.path);
    expect(paths).toEqual(
      expect.arrayContaining(['task_ids[0]', 'runsheet_ids', 'vehicles', 'time_limit_s', 'dry_run']),
    );
    const neither = await insertion(planning.id, { version_rev: planning.version_rev });
    expect(neither.status).toBe(400);
    const unknown = await insertion(planning.id, {
      task_ids: [task],
      runsheet_ids: ['RS-NONE'],
      version_rev: planning.version_rev,
    });
    expect(unknown.status).toBe(400);
    expect((unknown.body as unknown as { errors: { path: string }[] }).errors[0]!.path).toBe('runsheet_ids[0]');
    const stale = await insertion(planning.id, { task_ids: [task], version_rev: '1-0000000000' });
    expect(stale.status).toBe(409);

    const other = await newOrganisation(api, admin, 'Elsewhere');
    const stranger = (await invitedMember(api, admin, 'OrgAdmin', ROLES.OrgAdmin, other)).token;
    const theirs = await insertion(planning.id, { task_ids: [task], version_rev: planning.version_rev }, stranger);
    expect(theirs.status).toBe(404);
    expect(theirs.headers.get('content-type')).toContain('application/problem+json');
    // A driver may not ask (as X23).
    expect(
      (await insertion(planning.id, { task_ids: [task], version_rev: planning.version_rev }, driver.token)).status,
    ).toBe(403);
  }, 60_000);
});

/** A route for `driverId`'s van (capacity 100 kg) of one task near the depot, built and applied (X23): its runsheet. */
async function builtRoute(planningId: string, versionRev: string, ref: string, driverId?: string) {
  const tasks = await importTasks([
    { ref, from: { latitude: 1.3363, longitude: 103.8573 }, to: { latitude: 1.3143, longitude: 103.8363 } },
  ]);
  const built = await api.post<{ route_build: Build }>(
    `/v1/plannings/${planningId}/routes`,
    {
      task_ids: tasks,
      vehicles: [
        {
          id: `van-${ref}`,
          ...(driverId ? { driver_id: driverId } : {}),
          start: DEPOT,
          shift_start_utc: soon(-60),
          shift_end_utc: soon(600),
          capacity: { weight_kg: 100 },
        },
      ],
      time_limit_s: 1,
      version_rev: versionRev,
    },
    planner,
  );
  expect(built.status, JSON.stringify(built.body)).toBe(202);
  const done = await ended(planningId, built.body.route_build.id);
  expect(done.status, JSON.stringify(done.error)).toBe('completed');
  return { runsheet: done.result!.runsheets[0]!, tasks };
}

describe('X30 in the planner’s afternoon', () => {
  it('takes an import job’s tasks, and gives a new runsheet of vehicles[] the one that fits no live route', async () => {
    const planning = await planningWithDrivers(api, planner, 'Job and truck', [driver.id]);
    const { runsheet: van, tasks: morning } = await builtRoute(planning.id, planning.version_rev, 'JT-AM');
    // One job: a parcel the van can carry, and a pallet it cannot (800 kg against its 100).
    const job = await importJob([
      {
        ref: 'JT-LIGHT',
        from: { latitude: 1.3353, longitude: 103.8583 },
        to: { latitude: 1.3193, longitude: 103.8413 },
      },
      {
        ref: 'JT-PALLET',
        from: { latitude: 1.3373, longitude: 103.8553 },
        to: { latitude: 1.3293, longitude: 103.8493 },
        weightKg: 800,
      },
    ]);
    const [light, pallet] = job.taskIds as [string, string];
    const rev = (await planningOf(planning.id)).body.version_rev;
    // Without a truck the pallet fits nowhere, and says why.
    const alone = await insertion(planning.id, {
      import_job_id: job.importJobId,
      version_rev: rev,
      time_limit_s: 1,
      dry_run: true,
    });
    expect(alone.status, JSON.stringify(alone.body)).toBe(202);
    const aloneDone = await ended(planning.id, alone.body.route_build.id);
    expect(aloneDone.result!.unplanned).toEqual([expect.objectContaining({ task_id: pallet, code: 'capacity' })]);

    const truck = {
      id: 'truck',
      driver_id: driver.id,
      start: DEPOT,
      shift_start_utc: soon(-10),
      shift_end_utc: soon(600),
      capacity: { weight_kg: 2000 },
    };
    const queued = await insertion(planning.id, {
      import_job_id: job.importJobId,
      vehicles: [truck],
      version_rev: rev,
      time_limit_s: 1,
    });
    expect(queued.status, JSON.stringify(queued.body)).toBe(202);
    expect(queued.body.route_build).toMatchObject({ kind: 'insertion', tasks: 2 });
    const done = await ended(planning.id, queued.body.route_build.id);
    expect(done.status, JSON.stringify(done.error)).toBe('completed');
    const result = done.result!;
    expect(result.summary).toMatchObject({ tasks: 2, planned: 2, unplanned: 0, vehicles_used: 2 });
    const onVan = result.runsheets.find((r) => r.id === van.id)!;
    expect(onVan).toMatchObject({ vehicle_id: van.vehicle_id, added: [light] });
    const onTruck = result.runsheets.find((r) => r.id !== van.id)!;
    expect(onTruck).toMatchObject({ vehicle_id: 'truck', driver_id: driver.id, added: [pallet] });
    expect(onTruck.stops.map((s) => `${s.task_id}:${s.kind}`)).toEqual([`${pallet}:pickup`, `${pallet}:dropoff`]);

    // The records: the van holds its morning task and the parcel, a new runsheet the pallet, given to the truck's
    // driver; each task planned where the answer put it (X10).
    const after = await planningOf(planning.id);
    const held = (id: string) => after.body.runsheets.find((r) => r.id === id)?.tasks.map((t) => t.id);
    expect(held(van.id)).toEqual([...morning, light]);
    expect(held(onTruck.id)).toEqual([pallet]);
    const listed = await api.get<{ runsheets: { id: string; status: string; assigned_driver?: { id: string } }[] }>(
      `/v1/plannings/${planning.id}/runsheets`,
      planner,
    );
    expect(listed.body.runsheets.find((r) => r.id === onTruck.id)).toMatchObject({
      status: 'assigned',
      assigned_driver: { id: driver.id },
    });
    const planned = await api.get<{ tasks: { id: string; runsheet_id?: string }[] }>(
      `/v1/tasks?import_job_id=${job.importJobId}&planned=true`,
      planner,
    );
    expect(planned.body.tasks.map((t) => t.id).sort()).toEqual([light, pallet].sort());
    // The job's tasks are planned now: asked again, a 409.
    const again = await insertion(planning.id, { import_job_id: job.importJobId, version_rev: after.body.version_rev });
    expect(again.status).toBe(409);
  }, 120_000);

  it('shows the added tasks in an open offer of the runsheet, as the driver reads it (X12)', async () => {
    const offered = await invitedMember(api, admin, 'OrgDriver', ROLES.OrgDriver, orgId);
    const planning = await planningWithDrivers(api, planner, 'Offered', [offered.id]);
    const { runsheet: van, tasks: morning } = await builtRoute(planning.id, planning.version_rev, 'OF-AM');
    await api.put('/v1/driver/location', { ...DEPOT, client_time_utc: new Date().toISOString() }, offered.token);
    const job = await api.post(
      `/v1/plannings/${planning.id}/job`,
      { version_rev: (await planningOf(planning.id)).body.version_rev, max_candidates: 1 },
      planner,
    );
    expect(job.status, JSON.stringify(job.body)).toBe(202);
    type Offers = { offers: { pair: { runsheet: { id: string; tasks: { id: string }[] } } }[] };
    const offerOf = async () =>
      (await api.get<Offers>('/v1/driver/offers', offered.token)).body.offers.find(
        (o) => o.pair.runsheet.id === van.id,
      );
    const open = await until(offerOf, (o) => o !== undefined, 30_000, 100);
    expect(open!.pair.runsheet.tasks.map((t) => t.id)).toEqual(morning);

    const [fresh] = (await importTasks([
      { ref: 'OF-PM', from: { latitude: 1.3353, longitude: 103.8583 }, to: { latitude: 1.3193, longitude: 103.8413 } },
    ])) as [string];
    const queued = await insertion(planning.id, {
      task_ids: [fresh],
      version_rev: (await planningOf(planning.id)).body.version_rev,
      time_limit_s: 1,
    });
    expect(queued.status, JSON.stringify(queued.body)).toBe(202);
    const done = await ended(planning.id, queued.body.route_build.id);
    expect(done.status, JSON.stringify(done.error)).toBe('completed');
    expect(done.result!.runsheets.map((r) => r.id)).toEqual([van.id]);
    // The offer still open, now with the task added: what the driver would accept.
    const shown = await offerOf();
    expect(shown!.pair.runsheet.tasks.map((t) => t.id)).toEqual([...morning, fresh]);
  }, 120_000);

  it('adds to a hand-made runsheet given to a driver (X16): no capacity limit, its shift to the day’s end', async () => {
    const handDriver = await invitedMember(api, admin, 'OrgDriver', ROLES.OrgDriver, orgId);
    const planning = await planningWithDrivers(api, planner, 'Hand-made', [handDriver.id]);
    const own = await importTasks([
      { ref: 'HM-1', from: { latitude: 1.35, longitude: 103.7 }, to: { latitude: 1.36, longitude: 103.69 } },
      { ref: 'HM-2', from: { latitude: 1.34, longitude: 103.71 }, to: { latitude: 1.33, longitude: 103.7 } },
    ]);
    const made = await api.post(
      `/v1/plannings/${planning.id}/runsheets`,
      { runsheets: [{ id: 'RS-HAND', task_ids: own }] },
      planner,
    );
    expect(made.status, JSON.stringify(made.body)).toBe(200);
    const given = await api.post(
      `/v1/plannings/${planning.id}/runsheets/RS-HAND/assign`,
      { driver_id: handDriver.id },
      planner,
    );
    expect(given.status, JSON.stringify(given.body)).toBe(200);
    const fix = { latitude: 1.35, longitude: 103.7 };
    await api.put('/v1/driver/location', { ...fix, client_time_utc: new Date().toISOString() }, handDriver.token);
    // Two tonnes, its drop-off late in the evening (9 to 10 h from now): only a vehicle without a capacity limit
    // whose shift runs to the day's end can take it.
    const [heavy] = (await importTasks([
      {
        ref: 'HM-HEAVY',
        from: { latitude: 1.345, longitude: 103.705 },
        to: { latitude: 1.355, longitude: 103.695 },
        weightKg: 2000,
        dropoff: [540, 600],
      },
    ])) as [string];
    const askedAt = Date.now();
    const queued = await insertion(planning.id, {
      task_ids: [heavy],
      runsheet_ids: ['RS-HAND'],
      version_rev: (await planningOf(planning.id)).body.version_rev,
      time_limit_s: 1,
    });
    expect(queued.status, JSON.stringify(queued.body)).toBe(202);
    const done = await ended(planning.id, queued.body.route_build.id);
    expect(done.status, JSON.stringify(done.error)).toBe('completed');
    const result = done.result!;
    expect(result.summary).toMatchObject({ tasks: 1, planned: 1 });
    const [changed] = result.runsheets;
    expect(changed).toMatchObject({ id: 'RS-HAND', vehicle_id: 'RS-HAND', driver_id: handDriver.id, added: [heavy] });
    const names = changed!.stops.map((s) => `${s.task_id}:${s.kind}`);
    for (const id of [...own, heavy])
      expect(names.indexOf(`${id}:dropoff`)).toBeGreaterThan(names.indexOf(`${id}:pickup`));
    expect(names).toHaveLength(6);
    // Nothing before the request; the heavy drop-off in its late window.
    for (const stop of changed!.stops) expect(Date.parse(stop.arrival_utc)).toBeGreaterThanOrEqual(askedAt - 1000);
    const drop = changed!.stops.find((s) => s.task_id === heavy && s.kind === 'dropoff')!;
    expect(Date.parse(drop.start_utc)).toBeGreaterThanOrEqual(Date.parse(soon(540)) - 60_000);
    expect(Date.parse(drop.start_utc)).toBeLessThanOrEqual(Date.parse(soon(600)));
    // The driver reads it on their runsheet (X22), the heavy task with its planned drop-off.
    const mine = await api.get<{ runsheet: { tasks: (Task & { planned_dropoff_utc?: string })[] } }>(
      `/v1/plannings/${planning.id}/runsheets/RS-HAND`,
      handDriver.token,
    );
    expect(mine.status).toBe(200);
    expect(mine.body.runsheet.tasks.map((t) => t.id)).toEqual([...own, heavy]);
    expect(mine.body.runsheet.tasks.find((t) => t.id === heavy)!.planned_dropoff_utc).toBe(drop.start_utc);
  }, 120_000);
});
