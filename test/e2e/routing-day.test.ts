/**
 * Issue 43 over HTTP (contract 4.10): a planner's day from a CSV to delivered. Tasks imported with coordinates and
 * service seconds, runsheets built by X23 and read by X24 (the result judged by the independent checker,
 * bench/vrp/checker.ts, never by the solver's own idea of feasible), shown by P3 and X22 with their stops and planned
 * times, dispatched by P9, accepted by a driver (R6), every task reported (X20) until the runsheet is completed. And a
 * dry run computes the same kind of result but adds nothing. Real host, real worker, time limits of a second.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type CheckTask,
  checkRouteBuild,
  checkTaskOf,
  type ListedTask,
  type RequestVehicle,
  type RouteBuildResult,
} from '../../bench/vrp/checker.ts';
import { type RoutingRow, routingCsv } from '../../bench/vrp/csv.ts';
import type { RunningHost } from '../../lib/local/start.ts';
import { ROLES } from '../../shared/auth/roles.ts';
import { type Client, client, invitedMember, loginAs, newOrganisation } from '../support/http.ts';
import { IMPORT_WINDOW, importCsv } from '../support/imports.ts';
import { ADMIN, startTestHost } from '../support/local.ts';
import { until } from '../support/until.ts';

type User = { id: string; token: string };
type RouteBuild = {
  id: string;
  status: string;
  result?: RouteBuildResult;
  error?: { code: string; detail: string };
};
type Stop = RouteBuildResult['runsheets'][number]['stops'][number];
type RunsheetReply = {
  runsheet: {
    id: string;
    status: string;
    stops?: Stop[];
    tasks: { id: string; status: string; planned_pickup_utc?: string; planned_dropoff_utc?: string }[];
  };
};

const HUB = { latitude: 1.3, longitude: 103.8 };
const DAY = Date.parse('2026-12-01T00:00:00Z');
const hour = (h: number) => DAY + h * 3_600_000;
/** Five parcels from the hub to five streets of one neighbourhood, each drop-off with its own service seconds. */
const ROWS: RoutingRow[] = [
  [1.31, 103.81],
  [1.315, 103.805],
  [1.32, 103.79],
  [1.305, 103.82],
  [1.312, 103.815],
].map(([latitude, longitude], i) => ({
  ref: `R-${i + 1}`,
  from: HUB,
  to: { latitude: latitude!, longitude: longitude! },
  fromOpenMs: hour(0),
  fromCloseMs: hour(2),
  toOpenMs: hour(1),
  toCloseMs: hour(6),
  fromServiceS: 60,
  toServiceS: 120 + 30 * i,
  weightKg: 5 + i,
}));
const VEHICLES: RequestVehicle[] = [
  {
    id: 'van',
    start: HUB,
    shift_start_utc: new Date(hour(0)).toISOString(),
    shift_end_utc: new Date(hour(10)).toISOString(),
    capacity: { weight_kg: 100 },
  },
];

let host: RunningHost;
let api: Client;
let planner: string;
let driver: User;
let importJobId: string;
let tasks: CheckTask[];

beforeAll(async () => {
  host = await startTestHost();
  api = client(host.url);
  const admin = (await loginAs(api, ADMIN.email, ADMIN.password)).bearer_token;
  const org = await newOrganisation(api, admin, 'Routing day');
  planner = (await invitedMember(api, admin, 'OrgAdmin', ROLES.OrgAdmin, org)).token;
  driver = await invitedMember(api, admin, 'OrgDriver', ROLES.OrgDriver, org);
  const fix = { ...HUB, client_time_utc: new Date().toISOString() };
  expect((await api.put('/v1/driver/location', fix, driver.token)).status).toBe(200);
  ({ importJobId } = await importCsv(api, planner, routingCsv(ROWS)));
  const listed = await api.get<{ tasks: ListedTask[] }>(`/v1/tasks?import_job_id=${importJobId}&per_page=100`, planner);
  tasks = listed.body.tasks.map((task) => checkTaskOf(task, IMPORT_WINDOW.service_type));
}, 180_000);

afterAll(async () => {
  await host?.stop();
});

const versionOf = async (planning: string) =>
  (await api.get<{ version_rev: string }>(`/v1/plannings/${planning}`, planner)).body.version_rev;

/** X23 on a fresh planning (after `prepare`), then X24 until the build ends. */
async function built(dryRun: boolean, prepare: (planning: string) => Promise<void> = async () => {}) {
  const planning = (await api.post<{ id: string }>('/v1/plannings', { name: 'Routing day' }, planner)).body.id;
  await prepare(planning);
  const before = await versionOf(planning);
  const asked = await api.post<{ route_build: RouteBuild }>(
    `/v1/plannings/${planning}/routes`,
    { import_job_id: importJobId, vehicles: VEHICLES, time_limit_s: 1, dry_run: dryRun, version_rev: before },
    planner,
  );
  expect(asked.status, JSON.stringify(asked.body)).toBe(202);
  expect(asked.body.route_build.status).toBe('queued');
  const ended = await until(
    () =>
      api.get<{ route_build: RouteBuild }>(`/v1/plannings/${planning}/routes/${asked.body.route_build.id}`, planner),
    (read) => ['completed', 'failed'].includes(read.body.route_build.status),
    60_000,
  );
  const build = ended.body.route_build;
  expect(build.status, JSON.stringify(build.error)).toBe('completed');
  const result = build.result!;
  expect(checkRouteBuild({ tasks, vehicles: VEHICLES, travel: { speed_kmh: 30, detour_factor: 1.3 }, result })).toEqual(
    [],
  );
  expect(result.summary).toMatchObject({ tasks: ROWS.length, planned: ROWS.length, unplanned: 0 });
  return { planning, before, build, result };
}

describe('a day built by route planning, from CSV to delivered', () => {
  it('a dry run answers a feasible result and adds nothing to the planning', async () => {
    const { planning, before } = await built(true);
    expect(await versionOf(planning)).toBe(before);
    const listed = await api.get<{ runsheets: unknown[] }>(`/v1/plannings/${planning}/runsheets`, planner);
    expect(listed.body.runsheets).toEqual([]);
    const open = await api.get<{ tasks: { id: string }[] }>(
      `/v1/tasks?import_job_id=${importJobId}&planned=false&per_page=100`,
      planner,
    );
    expect(open.body.tasks.map((task) => task.id).sort()).toEqual(tasks.map((task) => task.id).sort());
  });

  it('a route leaves as late as delays none of its stops: no hour-long wait at its first drop-off', async () => {
    // The pickups at the hub open at the shift's start, the drop-offs an hour later: the van picks up just in time.
    const { result } = await built(true);
    for (const runsheet of result.runsheets) {
      const leaves = Date.parse(runsheet.planned_start_utc);
      expect(leaves).toBeGreaterThan(hour(0.5));
      const firstDrop = runsheet.stops.find((stop) => stop.kind === 'dropoff')!;
      const waitedS = (Date.parse(firstDrop.start_utc) - Date.parse(firstDrop.arrival_utc)) / 1000;
      expect(waitedS).toBeLessThan(60);
      expect(runsheet.planned_duration_s).toBe(Math.round((Date.parse(runsheet.planned_end_utc) - leaves) / 1000));
    }
  });

  it('X18 releases the imported tasks of a cancelled runsheet: X10 lists them unplanned, X23 builds them again', async () => {
    const openTasks = async () =>
      (
        await api.get<{ tasks: { id: string }[] }>(
          `/v1/tasks?import_job_id=${importJobId}&planned=false&per_page=100`,
          planner,
        )
      ).body.tasks
        .map((task) => task.id)
        .sort();
    const cancelAll = async (planning: string, result: RouteBuildResult) => {
      for (const runsheet of result.runsheets) {
        const path = `/v1/plannings/${planning}/runsheets/${runsheet.id}`;
        const cancelled = await api.post(`${path}/cancel`, { reason: 'van off the road' }, planner);
        expect(cancelled.status, JSON.stringify(cancelled.body)).toBe(200);
        // The cancelled runsheet keeps its task list as history.
        const read = await api.get<RunsheetReply>(path, planner);
        expect(read.body.runsheet.status).toBe('cancelled');
        expect(read.body.runsheet.tasks.map((task) => task.id).sort()).toEqual(
          runsheet.stops
            .filter((s) => s.kind === 'pickup')
            .map((s) => s.task_id)
            .sort(),
        );
      }
    };
    const first = await built(false);
    expect(await openTasks()).toEqual([]);
    await cancelAll(first.planning, first.result);
    expect(await openTasks()).toEqual(tasks.map((task) => task.id).sort());
    // Before the release, X23 refused them (409: each task still in the cancelled runsheet).
    const again = await built(false);
    // Free them again for the day below.
    await cancelAll(again.planning, again.result);
    expect(await openTasks()).toHaveLength(ROWS.length);
  });

  it('import → X23 → X24 → P3/X22 with stops and planned times → P9 → accept → X20 → completed', async () => {
    const { planning, build, result } = await built(false, async (id) => {
      const added = await api.post(`/v1/plannings/${id}/drivers`, { drivers: [{ id: driver.id }] }, planner);
      expect(added.status).toBe(200);
    });
    const listedBuilds = await api.get<{ route_builds: { id: string; result?: unknown }[] }>(
      `/v1/plannings/${planning}/routes`,
      planner,
    );
    expect(listedBuilds.body.route_builds.map((b) => b.id)).toEqual([build.id]);
    expect(listedBuilds.body.route_builds[0]).not.toHaveProperty('result');

    // P3 and X22 show each built runsheet's stops in order, and each task's planned times.
    const shown = await api.get<{ runsheets: { id: string; stops?: Stop[] }[] }>(`/v1/plannings/${planning}`, planner);
    expect(shown.body.runsheets.map((r) => r.id).sort()).toEqual(result.runsheets.map((r) => r.id).sort());
    for (const runsheet of result.runsheets) {
      const inP3 = shown.body.runsheets.find((r) => r.id === runsheet.id)!;
      expect(inP3.stops).toEqual(runsheet.stops);
      const read = await api.get<RunsheetReply>(`/v1/plannings/${planning}/runsheets/${runsheet.id}`, planner);
      expect(read.body.runsheet.stops).toEqual(runsheet.stops);
      for (const task of read.body.runsheet.tasks) {
        const startOf = (kind: string) =>
          runsheet.stops.find((s) => s.task_id === task.id && s.kind === kind)!.start_utc;
        expect(task.planned_pickup_utc).toBe(startOf('pickup'));
        expect(task.planned_dropoff_utc).toBe(startOf('dropoff'));
      }
    }

    // Dispatch: the one driver is offered each runsheet and accepts it.
    const started = await api.post(
      `/v1/plannings/${planning}/job`,
      { version_rev: await versionOf(planning), max_candidates: 1, offer_ttl_s: 300 },
      planner,
    );
    expect(started.status, JSON.stringify(started.body)).toBe(202);
    const offers = await until(
      () =>
        api.get<{ offers: { id: string; pair: { runsheet: { id: string } } }[] }>('/v1/driver/offers', driver.token),
      (read) => read.body.offers.length === result.runsheets.length,
    );
    for (const offer of offers.body.offers) {
      const accepted = await api.post(
        `/v1/broadcast-plans/${planning}/pairs/${offer.id}/accepted`,
        { happened_at_utc: new Date().toISOString() },
        driver.token,
      );
      expect(accepted.status, JSON.stringify(accepted.body)).toBe(200);
    }

    // Execution: every stop reported in the planned order; each runsheet ends completed.
    for (const runsheet of result.runsheets) {
      for (const stop of runsheet.stops) {
        const type = stop.kind === 'pickup' ? 'picked_up' : 'delivered';
        const reported = await api.post<{ task: { status: string } }>(
          `/v1/driver/runsheets/${runsheet.id}/tasks/${stop.task_id}/events`,
          { type, happened_at_utc: new Date().toISOString(), latitude: stop.latitude, longitude: stop.longitude },
          driver.token,
        );
        expect(reported.status, JSON.stringify(reported.body)).toBe(201);
        expect(reported.body.task.status).toBe(type);
      }
      const read = await api.get<RunsheetReply>(`/v1/plannings/${planning}/runsheets/${runsheet.id}`, planner);
      expect(read.body.runsheet.status).toBe('completed');
      expect(read.body.runsheet.tasks.every((task) => task.status === 'delivered')).toBe(true);
    }
  });
});
