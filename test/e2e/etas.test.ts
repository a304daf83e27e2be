/**
 * Issue 52 item 1 over HTTP (contract 4.11): live ETAs on X22. A runsheet built by X23 (with travel settings of its
 * own) and given by X16 to a driver who sends a fix (L1), and a hand-made runsheet (P5): each stop's ETA is checked
 * from the answer alone against the tests' own model (test/support/eta-model.ts: its own great-circle distance), from
 * the fix at the answer's `eta_updated_at`, along the built order or the task order, with the windows and service
 * times the answer's tasks carry. A pickup reported makes its ETA null; a driver without a recent fix gets null with
 * `no_recent_position`; the service's clock moved on moves the ETAs of a driver standing still. Real host, real tokens.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { RunningHost } from '../../lib/local/start.ts';
import { ROLES } from '../../shared/auth/roles.ts';
import { resetClock, setClock } from '../../shared/clock.ts';
import { expectedEtas, MODEL_DEFAULTS, type ModelPoint, type ModelTravel } from '../support/eta-model.ts';
import { type Client, client, invitedMember, loginAs, newOrganisation } from '../support/http.ts';
import { importCsv } from '../support/imports.ts';
import { ADMIN, startTestHost } from '../support/local.ts';
import { planningWithDrivers } from '../support/runsheets.ts';
import { until } from '../support/until.ts';

let host: RunningHost;
let api: Client;
let admin: string;
let planner: string;
type User = { id: string; token: string };
let builtDriver: User;
let handDriver: User;

beforeAll(async () => {
  host = await startTestHost();
  api = client(host.url);
  admin = (await loginAs(api, ADMIN.email, ADMIN.password)).bearer_token;
  const org = await newOrganisation(api, admin, 'ETA day');
  planner = (await invitedMember(api, admin, 'OrgAdmin', ROLES.OrgAdmin, org)).token;
  builtDriver = await invitedMember(api, admin, 'OrgDriver', ROLES.OrgDriver, org);
  handDriver = await invitedMember(api, admin, 'OrgDriver', ROLES.OrgDriver, org);
}, 120_000);

afterEach(() => resetClock());
afterAll(() => host?.stop());

type Window = { start_time_utc?: string | null; end_time_utc?: string | null } | null;
type Address = { latitude?: number | null; longitude?: number | null } | null;
type Task = {
  id: string;
  status: string;
  from_address: Address;
  to_address: Address;
  from_time_window: Window;
  to_time_window: Window;
  from_service_s?: number | null;
  to_service_s?: number | null;
  planned_pickup_utc?: string;
  planned_dropoff_utc?: string;
  eta_pickup_utc?: string | null;
  eta_dropoff_utc?: string | null;
  late_by_s?: number | null;
};
type Stop = { task_id: string; kind: 'pickup' | 'dropoff'; latitude: number; longitude: number };
type Runsheet = {
  id: string;
  status: string;
  tasks: Task[];
  stops?: Stop[];
  eta_updated_at?: string | null;
  delay_s?: number | null;
  eta_reason?: string | null;
};

const soon = (minutes: number) => new Date(Date.now() + minutes * 60_000).toISOString();
const DEPOT: ModelPoint = { latitude: 1.3343, longitude: 103.8563 };

const readRunsheet = async (planning: string, runsheet: string, token = planner) => {
  const read = await api.get<{ runsheet: Runsheet }>(
    `/v1/plannings/${planning}/runsheets/${encodeURIComponent(runsheet)}`,
    token,
  );
  expect(read.status, JSON.stringify(read.body)).toBe(200);
  return read.body.runsheet;
};

const sendFix = async (driver: User, at: ModelPoint) => {
  const sent = await api.put('/v1/driver/location', { ...at, client_time_utc: new Date().toISOString() }, driver.token);
  expect(sent.status).toBe(200);
};

/** The stops still to do as the answer orders them: its `stops[]` when built, else each task's pickup then drop-off. */
function orderOf(runsheet: Runsheet): [Task, 'pickup' | 'dropoff'][] {
  const byId = new Map(runsheet.tasks.map((t) => [t.id, t]));
  const all: [Task, 'pickup' | 'dropoff'][] = runsheet.stops
    ? runsheet.stops.map((s) => [byId.get(s.task_id)!, s.kind])
    : runsheet.tasks.flatMap((t): [Task, 'pickup' | 'dropoff'][] => [
        [t, 'pickup'],
        [t, 'dropoff'],
      ]);
  return all.filter(
    ([t, kind]) => !['delivered', 'failed'].includes(t.status) && !(kind === 'pickup' && t.status === 'picked_up'),
  );
}

/**
 * Checks every ETA of the answer against the model, from the answer alone (and the fix the test sent): its stops'
 * coordinates, windows and service times, from `eta_updated_at`. Answers the ETAs by stop (`<task>:<kind>`).
 */
function checkAgainstModel(runsheet: Runsheet, fix: ModelPoint, travel: ModelTravel) {
  expect(runsheet.eta_reason).toBeNull();
  const order = orderOf(runsheet);
  const expected = expectedEtas(
    fix,
    Date.parse(runsheet.eta_updated_at!),
    order.map(([t, kind]) => {
      const side = kind === 'pickup' ? 'from' : 'to';
      const address = t[`${side}_address`]!;
      const stop = runsheet.stops?.find((s) => s.task_id === t.id && s.kind === kind);
      const service = t[`${side}_service_s`];
      return {
        point: stop ?? { latitude: address.latitude!, longitude: address.longitude! },
        opens: t[`${side}_time_window`]?.start_time_utc,
        closes: t[`${side}_time_window`]?.end_time_utc,
        serviceS:
          typeof service === 'number' ? service : kind === 'pickup' ? MODEL_DEFAULTS.pickupS : MODEL_DEFAULTS.dropoffS,
      };
    }),
    travel,
  );
  const etas = new Map<string, number>();
  const lateness = new Map<string, number>();
  order.forEach(([t, kind], i) => {
    const eta = t[kind === 'pickup' ? 'eta_pickup_utc' : 'eta_dropoff_utc'];
    expect(eta, `${t.id} ${kind}`).toEqual(expect.any(String));
    expect(Math.abs(Date.parse(eta!) - expected[i]!.etaMs), `${t.id} ${kind}`).toBeLessThanOrEqual(50);
    etas.set(`${t.id}:${kind}`, Date.parse(eta!));
    lateness.set(t.id, Math.max(lateness.get(t.id) ?? 0, expected[i]!.lateByS));
  });
  for (const t of runsheet.tasks)
    expect(Math.abs(t.late_by_s! - (lateness.get(t.id) ?? 0)), t.id).toBeLessThanOrEqual(1);
  expect(Math.abs(runsheet.delay_s! - Math.max(0, ...lateness.values()))).toBeLessThanOrEqual(1);
  return etas;
}

/** Imports tasks with coordinates, windows and (for some) service times of their own; their ids in file order. */
async function importTasks(
  rows: { ref: string; from: ModelPoint; to: ModelPoint; opensIn: number; service?: number }[],
) {
  const header =
    'task_ref,from_street_address,from_city,from_country,to_street_address,to_city,to_country,from_start_time_utc,from_end_time_utc,from_timezone,to_start_time_utc,to_end_time_utc,to_timezone,from_latitude,from_longitude,to_latitude,to_longitude,from_service_s,to_service_s';
  const lines = rows.map(
    (r) =>
      `${r.ref},1 Depot Rd,Singapore,SG,1 Mall,Singapore,SG,${soon(r.opensIn)},${soon(240)},Asia/Singapore,${soon(0)},${soon(360)},Asia/Singapore,${r.from.latitude},${r.from.longitude},${r.to.latitude},${r.to.longitude},${r.service ?? ''},${r.service ?? ''}`,
  );
  return (await importCsv(api, planner, [header, ...lines].join('\n'))).taskIds;
}

const planningWith = (driver: User) => planningWithDrivers(api, planner, 'ETA day', [driver.id]);

const assign = async (planning: string, runsheet: string, driver: User) => {
  const given = await api.post(
    `/v1/plannings/${planning}/runsheets/${encodeURIComponent(runsheet)}/assign`,
    { driver_id: driver.id },
    planner,
  );
  expect(given.status, JSON.stringify(given.body)).toBe(200);
};

describe('X22 live ETAs', () => {
  it('follows a built runsheet’s planned order with its build’s travel, without a stop once it is picked up', async () => {
    const planning = await planningWith(builtDriver);
    const ids = await importTasks([
      {
        ref: 'ETA-1',
        from: { latitude: 1.3443, longitude: 103.8563 },
        to: { latitude: 1.3043, longitude: 103.8363 },
        opensIn: 0,
      },
      // Its pickup opens in 90 minutes: the driver waits for it.
      {
        ref: 'ETA-2',
        from: { latitude: 1.3543, longitude: 103.8663 },
        to: { latitude: 1.3143, longitude: 103.8263 },
        opensIn: 90,
        service: 300,
      },
      {
        ref: 'ETA-3',
        from: { latitude: 1.3643, longitude: 103.8463 },
        to: { latitude: 1.2943, longitude: 103.8463 },
        opensIn: 0,
      },
    ]);
    const travel = { speed_kmh: 40, detour_factor: 1.2 };
    const queued = await api.post<{ route_build: { id: string } }>(
      `/v1/plannings/${planning.id}/routes`,
      {
        task_ids: ids,
        vehicles: [{ id: 'van', start: DEPOT, shift_start_utc: soon(0), shift_end_utc: soon(600) }],
        travel,
        time_limit_s: 1,
        version_rev: planning.version_rev,
      },
      planner,
    );
    expect(queued.status, JSON.stringify(queued.body)).toBe(202);
    const built = await until(
      () =>
        api.get<{ route_build: { status: string; result?: { runsheets: { id: string }[] } } }>(
          `/v1/plannings/${planning.id}/routes/${queued.body.route_build.id}`,
          planner,
        ),
      (r) => ['completed', 'failed'].includes(r.body.route_build.status),
      60_000,
      100,
    );
    expect(built.body.route_build.status).toBe('completed');
    const runsheetId = built.body.route_build.result!.runsheets[0]!.id;

    // Open: no ETA members (the contract gives ETAs to runsheets assigned or in progress only).
    const open = await readRunsheet(planning.id, runsheetId);
    expect(open.status).toBe('open');
    expect(open).not.toHaveProperty('eta_updated_at');
    expect(open.tasks[0]).not.toHaveProperty('eta_pickup_utc');

    await assign(planning.id, runsheetId, builtDriver);
    // Assigned, and no fix yet: null, and why.
    const blind = await readRunsheet(planning.id, runsheetId);
    expect(blind).toMatchObject({
      status: 'assigned',
      eta_updated_at: null,
      delay_s: null,
      eta_reason: 'no_recent_position',
    });
    for (const task of blind.tasks)
      expect(task).toMatchObject({ eta_pickup_utc: null, eta_dropoff_utc: null, late_by_s: null });

    const fix = { latitude: 1.3, longitude: 103.85 };
    await sendFix(builtDriver, fix);
    const seen = await readRunsheet(planning.id, runsheetId);
    expect(seen.stops).toHaveLength(6);
    const etas = checkAgainstModel(seen, fix, travel);
    // The planned times beside the ETAs; the waiting pickup is due when its window opens.
    for (const task of seen.tasks) expect(task).toMatchObject({ planned_pickup_utc: expect.any(String) });
    const waiting = seen.tasks.find((t) => t.id === ids[1])!;
    expect(etas.get(`${waiting.id}:pickup`)).toBeGreaterThanOrEqual(
      Date.parse(waiting.from_time_window!.start_time_utc!),
    );
    // Not the default model: the first stop at 30 km/h × 1.3 would be later (unless it waits for its window).
    const first = seen.stops![0]!;
    if (first.task_id !== waiting.id) {
      const slower = expectedEtas(
        fix,
        Date.parse(seen.eta_updated_at!),
        [{ point: first, serviceS: 0 }],
        MODEL_DEFAULTS.travel,
      );
      expect(etas.get(`${first.task_id}:${first.kind}`)!).toBeLessThan(slower[0]!.etaMs - 1000);
    }
    // The driver sees the same on their own runsheet.
    const mine = await readRunsheet(planning.id, runsheetId, builtDriver.token);
    checkAgainstModel(mine, fix, travel);

    // The first stop is a pickup (a built route picks up before it drops off): reported, its ETA is null, and the rest
    // run from the fix now, without that stop.
    expect(first.kind).toBe('pickup');
    const picked = await api.post(
      `/v1/driver/runsheets/${encodeURIComponent(runsheetId)}/tasks/${first.task_id}/events`,
      { type: 'picked_up', happened_at_utc: new Date().toISOString() },
      builtDriver.token,
    );
    expect(picked.status, JSON.stringify(picked.body)).toBe(201);
    const after = await readRunsheet(planning.id, runsheetId);
    expect(after.status).toBe('in_progress');
    const pickedTask = after.tasks.find((t) => t.id === first.task_id)!;
    expect(pickedTask.eta_pickup_utc).toBeNull();
    expect(pickedTask.eta_dropoff_utc).toEqual(expect.any(String));
    checkAgainstModel(after, fix, travel);
  }, 120_000);

  it('takes a hand-made runsheet in task order with the default model, and moves with the clock', async () => {
    const planning = await planningWith(handDriver);
    const task = (id: string, from: ModelPoint, to: ModelPoint, closesIn: number) => ({
      id,
      from_address: { city: 'Singapore', ...from },
      to_address: { city: 'Singapore', ...to },
      from_time_window: { start_time_utc: soon(-30), end_time_utc: soon(closesIn) },
      to_time_window: { start_time_utc: soon(-30), end_time_utc: soon(240) },
    });
    const added = await api.post(
      `/v1/plannings/${planning.id}/runsheets`,
      {
        runsheets: [
          {
            id: 'RS-HAND',
            tasks: [
              // Its pickup closes in 2 minutes, some 5 km away: at risk.
              task('H-1', { latitude: 1.345, longitude: 103.85 }, { latitude: 1.3, longitude: 103.8 }, 2),
              {
                ...task('H-2', { latitude: 1.29, longitude: 103.86 }, { latitude: 1.33, longitude: 103.84 }, 240),
                from_service_s: 600,
              },
            ],
          },
        ],
      },
      planner,
    );
    expect(added.status, JSON.stringify(added.body)).toBe(200);
    await assign(planning.id, 'RS-HAND', handDriver);
    expect((await readRunsheet(planning.id, 'RS-HAND')).eta_reason).toBe('no_recent_position');

    const fix = { latitude: 1.3, longitude: 103.85 };
    await sendFix(handDriver, fix);
    const seen = await readRunsheet(planning.id, 'RS-HAND');
    expect(seen.stops).toBeUndefined();
    const etas = checkAgainstModel(seen, fix, MODEL_DEFAULTS.travel);
    expect(seen.tasks[0]!.late_by_s).toBeGreaterThan(0);
    expect(seen.delay_s).toBe(Math.max(...seen.tasks.map((t) => t.late_by_s!)));
    expect(etas.get('H-1:dropoff')!).toBeLessThan(etas.get('H-2:pickup')!);

    // The service's clock five minutes on, the driver where they were: every ETA five minutes later (no window waits
    // here), still by the model.
    const ahead = Date.now() + 5 * 60_000;
    setClock(() => ahead);
    const later = await readRunsheet(planning.id, 'RS-HAND');
    checkAgainstModel(later, fix, MODEL_DEFAULTS.travel);
    const moved = Date.parse(later.tasks[0]!.eta_pickup_utc!) - etas.get('H-1:pickup')!;
    expect(
      Math.abs(moved - (Date.parse(later.eta_updated_at!) - Date.parse(seen.eta_updated_at!))),
    ).toBeLessThanOrEqual(1000);
    expect(moved).toBeGreaterThan(4 * 60_000);
    expect(later.tasks[0]!.late_by_s!).toBeGreaterThan(seen.tasks[0]!.late_by_s!);

    // Eleven minutes on, the fix is too old: null, and why.
    setClock(() => Date.now() + 11 * 60_000);
    const stale = await readRunsheet(planning.id, 'RS-HAND');
    expect(stale).toMatchObject({ eta_updated_at: null, delay_s: null, eta_reason: 'no_recent_position' });
    expect(stale.tasks[0]).toMatchObject({ eta_pickup_utc: null, eta_dropoff_utc: null, late_by_s: null });
  }, 120_000);
});
