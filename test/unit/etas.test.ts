/**
 * Live ETAs (contract 4.11, shared/planning/etas.ts) as data: the stops still to do in a built and a hand-made
 * runsheet's order, waits for windows, service times, stops done, lateness and the runsheet's delay, the fix's age and
 * time, checked against the tests' own model (test/support/eta-model.ts).
 */
import { describe, expect, it } from 'vitest';
import { type LastFix, remainingStops, runsheetEtas } from '#shared/planning/etas';
import type { TaskStatus } from '#shared/planning/lifecycle';
import { expectedEtas, MODEL_DEFAULTS, type ModelStop, type ModelTravel } from '../support/eta-model.ts';

const NOW = Date.parse('2026-11-24T08:00:00Z');
const iso = (ms: number) => new Date(ms).toISOString();
const minutes = (n: number) => n * 60_000;

/** A point `km` east of the depot along the equator (about 111.2 km a degree). */
const east = (km: number) => ({ latitude: 0, longitude: km / 111.19508 });
const DEPOT = east(0);

type Task = Record<string, unknown> & { id: string };

/** A task from `from` to `to` (km east), windows as minutes after NOW (open-ended when not given). */
function task(
  id: string,
  from: number,
  to: number,
  extra: { pickup?: [number, number]; dropoff?: [number, number]; service?: [number, number] } = {},
): Task {
  const window = (w: [number, number] | undefined) =>
    w ? { start_time_utc: iso(NOW + minutes(w[0])), end_time_utc: iso(NOW + minutes(w[1])) } : undefined;
  return {
    id,
    task_ref: id,
    from_address: { city: 'Here', ...east(from) },
    to_address: { city: 'There', ...east(to) },
    from_time_window: window(extra.pickup),
    to_time_window: window(extra.dropoff),
    ...(extra.service ? { from_service_s: extra.service[0], to_service_s: extra.service[1] } : {}),
  };
}

/** A built stop (4.10's `stops[]` entry) of a task. */
const builtStop = (t: Task, kind: 'pickup' | 'dropoff') => {
  const address = t[kind === 'pickup' ? 'from_address' : 'to_address'] as { latitude: number; longitude: number };
  return { task_id: t.id, kind, latitude: address.latitude, longitude: address.longitude };
};

/** The model's stop of a task (its window and service time as the task says, else 4.10's defaults). */
const modelStop = (t: Task, kind: 'pickup' | 'dropoff'): ModelStop => {
  const side = kind === 'pickup' ? 'from' : 'to';
  const window = t[`${side}_time_window`] as { start_time_utc: string; end_time_utc: string } | undefined;
  const service = t[`${side}_service_s`];
  return {
    point: t[`${side}_address`] as { latitude: number; longitude: number },
    opens: window?.start_time_utc,
    closes: window?.end_time_utc,
    serviceS:
      typeof service === 'number' ? service : kind === 'pickup' ? MODEL_DEFAULTS.pickupS : MODEL_DEFAULTS.dropoffS,
  };
};

const fixAt = (point: { latitude: number; longitude: number }, agoMs = 0): LastFix => ({
  ...point,
  server_time: iso(NOW - agoMs),
});

const pending = (): TaskStatus => 'pending';
const statuses = (of: Record<string, TaskStatus>) => (id: string) => of[id] ?? 'pending';

/** Stops named `<task id>:<kind>`, in that order. */
const visits = (tasks: Task[], ...names: string[]) =>
  names.map((name): [Task, 'pickup' | 'dropoff'] => {
    const [id, kind] = name.split(':') as [string, 'pickup' | 'dropoff'];
    return [tasks.find((t) => t.id === id)!, kind];
  });

/** The service's ETAs and the model's, stop by stop, in the given order. */
function compare(
  answer: ReturnType<typeof runsheetEtas>,
  order: [Task, 'pickup' | 'dropoff'][],
  from: { latitude: number; longitude: number },
  startMs: number,
  travel: ModelTravel = MODEL_DEFAULTS.travel,
) {
  const expected = expectedEtas(
    from,
    startMs,
    order.map(([t, kind]) => modelStop(t, kind)),
    travel,
  );
  order.forEach(([t, kind], i) => {
    const got = answer.taskEtas(t.id)[kind === 'pickup' ? 'eta_pickup_utc' : 'eta_dropoff_utc'];
    expect(got, `${t.id} ${kind}`).not.toBeNull();
    expect(Math.abs(Date.parse(got!) - expected[i]!.etaMs), `${t.id} ${kind}`).toBeLessThanOrEqual(500);
  });
  return expected;
}

describe('runsheetEtas', () => {
  it('takes a hand-made runsheet in task order, each pickup before its drop-off, with 4.10’s default model', () => {
    const tasks = [task('A', 2, 5), task('B', 1, 8)];
    const answer = runsheetEtas({ tasks, statusOf: pending, fix: fixAt(DEPOT), nowMs: NOW });
    compare(answer, visits(tasks, 'A:pickup', 'A:dropoff', 'B:pickup', 'B:dropoff'), DEPOT, NOW);
    expect(answer.runsheet).toEqual({ eta_updated_at: iso(NOW), delay_s: 0, eta_reason: null });
    // 2 km at 30 km/h × 1.3: 312 s to A's pickup.
    expect(Date.parse(answer.taskEtas('A').eta_pickup_utc!) - NOW).toBe(312_000);
  });

  it('takes a built runsheet in its planned order, with its build’s travel model', () => {
    const tasks = [task('A', 2, 5), task('B', 1, 8)];
    const order = visits(tasks, 'B:pickup', 'A:pickup', 'A:dropoff', 'B:dropoff');
    const travel = { speed_kmh: 45, detour_factor: 1.1 };
    const answer = runsheetEtas({
      tasks,
      stops: order.map(([t, kind]) => builtStop(t, kind)),
      travel,
      statusOf: pending,
      fix: fixAt(DEPOT),
      nowMs: NOW,
    });
    compare(answer, order, DEPOT, NOW, travel);
    expect(answer.taskEtas('B').eta_pickup_utc! < answer.taskEtas('A').eta_pickup_utc!).toBe(true);
    expect(answer.taskEtas('B').eta_dropoff_utc! > answer.taskEtas('A').eta_dropoff_utc!).toBe(true);
  });

  it('drives a road-built runsheet’s legs between planned stops as its plan did, and the straight line from the driver', () => {
    const tasks = [task('A', 2, 5), task('B', 1, 8)];
    const order = visits(tasks, 'B:pickup', 'A:pickup', 'A:dropoff', 'B:dropoff');
    // The plan's road legs: 10, 20 and 30 minutes between stops (arrival less the previous stop's departure), each
    // far from what the straight line would take; the plan's own times are an hour before now.
    const roadLegsS = [600, 1200, 1800];
    let clockMs = NOW - minutes(60);
    const stops = order.map(([t, kind], i) => {
      if (i > 0) clockMs += roadLegsS[i - 1]! * 1000;
      const arrival = clockMs;
      clockMs += (kind === 'pickup' ? MODEL_DEFAULTS.pickupS : MODEL_DEFAULTS.dropoffS) * 1000;
      return { ...builtStop(t, kind), arrival_utc: iso(arrival), start_utc: iso(arrival), departure_utc: iso(clockMs) };
    });
    const reckon = (model?: string) =>
      runsheetEtas({
        tasks,
        stops,
        travel: { ...MODEL_DEFAULTS.travel, ...(model ? { model } : {}) },
        statusOf: pending,
        fix: fixAt(DEPOT),
        nowMs: NOW,
      });
    const road = reckon('amazon-location');
    // From the driver to the first stop: the straight line (1 km at 30 km/h × 1.3: 156 s).
    const first = Date.parse(road.taskEtas('B').eta_pickup_utc!);
    expect(first - NOW).toBe(156_000);
    // Then each planned leg as planned, after each stop's service.
    const second = Date.parse(road.taskEtas('A').eta_pickup_utc!);
    expect(second - first).toBe((MODEL_DEFAULTS.pickupS + roadLegsS[0]!) * 1000);
    const third = Date.parse(road.taskEtas('A').eta_dropoff_utc!);
    expect(third - second).toBe((MODEL_DEFAULTS.pickupS + roadLegsS[1]!) * 1000);
    const fourth = Date.parse(road.taskEtas('B').eta_dropoff_utc!);
    expect(fourth - third).toBe((MODEL_DEFAULTS.dropoffS + roadLegsS[2]!) * 1000);
    // A straight-line build's runsheet ignores the plan's legs: the model alone.
    compare(reckon(), order, DEPOT, NOW);
    // A stop done out of the plan's order: the leg from the driver's last place to the next is the straight line.
    const skipped = runsheetEtas({
      tasks,
      stops,
      travel: { ...MODEL_DEFAULTS.travel, model: 'amazon-location' },
      statusOf: statuses({ A: 'picked_up' }),
      fix: fixAt(DEPOT),
      nowMs: NOW,
    });
    const bPickup = Date.parse(skipped.taskEtas('B').eta_pickup_utc!);
    const aDropoff = Date.parse(skipped.taskEtas('A').eta_dropoff_utc!);
    // B's pickup (1 km east) to A's drop-off (5 km east): 4 km by the straight line, not the plan's legs.
    expect(aDropoff - bPickup).toBe((MODEL_DEFAULTS.pickupS + 624) * 1000);
  });

  it('waits for a window to open, and counts the next leg from the service that follows', () => {
    // A's pickup opens an hour from now, 2 km away: the driver waits there.
    const tasks = [task('A', 2, 5, { pickup: [60, 90], dropoff: [0, 240] })];
    const answer = runsheetEtas({ tasks, statusOf: pending, fix: fixAt(DEPOT), nowMs: NOW });
    expect(answer.taskEtas('A').eta_pickup_utc).toBe(iso(NOW + minutes(60)));
    // Then 120 s of service and 3 km (468 s at the default model).
    expect(Date.parse(answer.taskEtas('A').eta_dropoff_utc!)).toBe(NOW + minutes(60) + 120_000 + 468_000);
    compare(answer, visits(tasks, 'A:pickup', 'A:dropoff'), DEPOT, NOW);
  });

  it('spends the task’s own service times where it gives them, 4.10’s defaults elsewhere', () => {
    const own = [task('A', 1, 1.5, { service: [600, 30] }), task('B', 2, 2.5)];
    const answer = runsheetEtas({ tasks: own, statusOf: pending, fix: fixAt(DEPOT), nowMs: NOW });
    const order = visits(own, 'A:pickup', 'A:dropoff', 'B:pickup', 'B:dropoff');
    compare(answer, order, DEPOT, NOW);
    // A's drop-off comes 600 s (its pickup's own service) and 0.5 km (78 s) after its pickup.
    const a = answer.taskEtas('A');
    expect(Date.parse(a.eta_dropoff_utc!) - Date.parse(a.eta_pickup_utc!)).toBe(678_000);
    // B's pickup comes 30 s (A's drop-off's own) and 0.5 km after; B's drop-off 120 s (the default) and 0.5 km after.
    const b = answer.taskEtas('B');
    expect(Date.parse(b.eta_pickup_utc!) - Date.parse(a.eta_dropoff_utc!)).toBe(108_000);
    expect(Date.parse(b.eta_dropoff_utc!) - Date.parse(b.eta_pickup_utc!)).toBe(198_000);
  });

  it('leaves out the stops done: a pickup once picked up, both once delivered or failed', () => {
    const tasks = [task('A', 2, 5), task('B', 1, 8), task('C', 3, 4), task('D', 6, 7)];
    const statusOf = statuses({ A: 'picked_up', B: 'delivered', C: 'failed' });
    const answer = runsheetEtas({ tasks, statusOf, fix: fixAt(east(2)), nowMs: NOW });
    expect(answer.taskEtas('A').eta_pickup_utc).toBeNull();
    expect(answer.taskEtas('B')).toEqual({ eta_pickup_utc: null, eta_dropoff_utc: null, late_by_s: 0 });
    expect(answer.taskEtas('C')).toEqual({ eta_pickup_utc: null, eta_dropoff_utc: null, late_by_s: 0 });
    compare(answer, visits(tasks, 'A:dropoff', 'D:pickup', 'D:dropoff'), east(2), NOW);
    // The same on a built runsheet: its planned order, less the stops done.
    const built = runsheetEtas({
      tasks,
      stops: visits(tasks, 'D:pickup', 'A:pickup', 'A:dropoff', 'D:dropoff').map(([t, kind]) => builtStop(t, kind)),
      statusOf,
      fix: fixAt(east(2)),
      nowMs: NOW,
    });
    compare(built, visits(tasks, 'D:pickup', 'A:dropoff', 'D:dropoff'), east(2), NOW);
    expect(remainingStops(tasks, undefined, statusOf).map((s) => `${s.taskId}:${s.kind}`)).toEqual([
      'A:dropoff',
      'D:pickup',
      'D:dropoff',
    ]);
  });

  it('drives 0 m between equal coordinates: a stop where the driver stands is due now', () => {
    const tasks = [task('A', 0, 0, { service: [90, 60] })];
    const answer = runsheetEtas({ tasks, statusOf: pending, fix: fixAt(DEPOT), nowMs: NOW });
    expect(answer.taskEtas('A')).toEqual({
      eta_pickup_utc: iso(NOW),
      eta_dropoff_utc: iso(NOW + 90_000),
      late_by_s: 0,
    });
  });

  it('is null with no_recent_position without a fix, or with one more than 10 minutes old', () => {
    const tasks = [task('A', 2, 5)];
    const none = { eta_pickup_utc: null, eta_dropoff_utc: null, late_by_s: null };
    const reason = { eta_updated_at: null, delay_s: null, eta_reason: 'no_recent_position' };
    for (const fix of [undefined, fixAt(DEPOT, minutes(10) + 1)]) {
      const answer = runsheetEtas({ tasks, statusOf: pending, fix, nowMs: NOW });
      expect(answer.runsheet).toEqual(reason);
      expect(answer.taskEtas('A')).toEqual(none);
    }
    const fresh = runsheetEtas({ tasks, statusOf: pending, fix: fixAt(DEPOT, minutes(10)), nowMs: NOW });
    expect(fresh.runsheet.eta_reason).toBeNull();
  });

  it('starts at now from a fix older than now, and at the fix’s time from one stamped after it', () => {
    const tasks = [task('A', 2, 5)];
    const order = visits(tasks, 'A:pickup', 'A:dropoff');
    const older = runsheetEtas({ tasks, statusOf: pending, fix: fixAt(DEPOT, minutes(7)), nowMs: NOW });
    expect(older.runsheet.eta_updated_at).toBe(iso(NOW));
    compare(older, order, DEPOT, NOW);
    // A fix stored by a host whose clock runs 2 s ahead of this one's.
    const ahead = runsheetEtas({ tasks, statusOf: pending, fix: fixAt(DEPOT, -2000), nowMs: NOW });
    expect(ahead.runsheet.eta_updated_at).toBe(iso(NOW + 2000));
    compare(ahead, order, DEPOT, NOW + 2000);
    // Moved with the clock while the driver stands still.
    const later = runsheetEtas({ tasks, statusOf: pending, fix: fixAt(DEPOT, 0), nowMs: NOW + minutes(5) });
    expect(Date.parse(later.taskEtas('A').eta_pickup_utc!) - Date.parse(older.taskEtas('A').eta_pickup_utc!)).toBe(
      minutes(5),
    );
  });

  it('says by how much each stop is past its window’s end, and the runsheet’s delay is the largest', () => {
    // A's pickup closes 2 minutes from now but is 312 s away; B's drop-off closes long after; C's closes before.
    const tasks = [
      task('A', 2, 5, { pickup: [-30, 2], dropoff: [-30, 240] }),
      task('B', 1, 8, { pickup: [-30, 240], dropoff: [-30, 240] }),
      task('C', 0, 1, { pickup: [-30, 240], dropoff: [-30, 20] }),
    ];
    const answer = runsheetEtas({ tasks, statusOf: pending, fix: fixAt(DEPOT), nowMs: NOW });
    const expected = compare(
      answer,
      visits(tasks, 'A:pickup', 'A:dropoff', 'B:pickup', 'B:dropoff', 'C:pickup', 'C:dropoff'),
      DEPOT,
      NOW,
    );
    expect(answer.taskEtas('A').late_by_s).toBe(312 - 120);
    expect(answer.taskEtas('B').late_by_s).toBe(0);
    const cLate = Math.max(expected[4]!.lateByS, expected[5]!.lateByS);
    expect(cLate).toBeGreaterThan(192);
    expect(Math.abs(answer.taskEtas('C').late_by_s! - cLate)).toBeLessThanOrEqual(1);
    expect(answer.runsheet.delay_s).toBe(answer.taskEtas('C').late_by_s);
  });

  it('cannot reckon past a stop without coordinates: it and the stops after it are null', () => {
    const lost = { ...task('B', 1, 8), to_address: { city: 'Nowhere' } };
    const tasks = [task('A', 2, 5), lost, task('C', 3, 4)];
    const answer = runsheetEtas({ tasks, statusOf: pending, fix: fixAt(DEPOT), nowMs: NOW });
    expect(answer.taskEtas('A').eta_dropoff_utc).not.toBeNull();
    expect(answer.taskEtas('B').eta_pickup_utc).not.toBeNull();
    expect(answer.taskEtas('B')).toMatchObject({ eta_dropoff_utc: null, late_by_s: null });
    expect(answer.taskEtas('C')).toEqual({ eta_pickup_utc: null, eta_dropoff_utc: null, late_by_s: null });
  });
});
