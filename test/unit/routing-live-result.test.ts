/**
 * X30's result from a solution (shared/routing/live.ts `toLiveResult`): a live route the search answered without a
 * task of its own (on board, or still to pick up) is answered as it was, never changed to lose the task, and the new
 * tasks the search put on it are unplanned (`not_enough_vehicles`); a route that keeps its own is answered with its
 * added tasks.
 */
import { describe, expect, it } from 'vitest';
import type { RouteBuild } from '../../shared/routing/builds.ts';
import { type LivePrepared, type LiveRoute, toLiveResult } from '../../shared/routing/live.ts';
import type { PlannedRoute, RoutingSolution, TaskSpec } from '../../shared/routing/solver/model.ts';

const BASE = Date.parse('2026-12-01T02:00:00Z');
const spot = { location: 0, open: 0, close: 1e6, serviceS: 0 };
const load = { weight: 1, volume: 0, items: 1 };
const task = (id: string, extra: Partial<TaskSpec> = {}): TaskSpec => ({
  id,
  pickup: spot,
  dropoff: spot,
  load,
  ...extra,
});
const live = (id: string): LiveRoute => ({
  id,
  name: id,
  tasks: [],
  taskIds: [],
  stops: undefined,
  travel: undefined,
  vehicle: undefined,
  status: 'in_progress',
  driverId: `driver-of-${id}`,
  remaining: [],
  doneTasks: 0,
  doneStops: 0,
  fix: undefined,
});
const route = (vehicle: number, stops: [number, 'pickup' | 'dropoff'][]): PlannedRoute => ({
  vehicle,
  stops: stops.map(([t, kind], k) => ({
    task: t,
    kind,
    location: 0,
    arrival: 60 * k,
    start: 60 * k,
    departure: 60 * k,
    distanceFromPreviousM: 0,
  })),
  departure: 0,
  arrival: 600,
  distanceM: 1000,
  durationS: 600,
  peakLoad: load,
});

describe('toLiveResult', () => {
  it('answers a route that lost a task of its own as it was, its new tasks unplanned', () => {
    // Tasks 0 (on board RS-A) and 1 (pending on RS-B) are the live routes' own; 2 and 3 were asked for.
    const tasks = [
      task('own-a', { vehicles: [0], onBoard: 0 }),
      task('own-b', { vehicles: [1] }),
      task('new-1'),
      task('new-2'),
    ];
    const prepared = {
      problem: { tasks, vehicles: [], travel: undefined, objective: 'distance' },
      baseMs: BASE,
      routes: [live('RS-A'), live('RS-B')],
      vehicles: [],
      asked: [],
      firstNew: 2,
      noCoordinates: [],
      points: [{ latitude: 1.3, longitude: 103.8 }],
    } as unknown as LivePrepared;
    const solution: RoutingSolution = {
      routes: [
        // RS-A keeps its parcel on board and takes new-1.
        route(0, [
          [0, 'pickup'],
          [2, 'pickup'],
          [0, 'dropoff'],
          [2, 'dropoff'],
        ]),
        // RS-B's own task is missing: it took new-2 instead.
        route(1, [
          [3, 'pickup'],
          [3, 'dropoff'],
        ]),
      ],
      unplanned: [{ task: 1, code: 'not_enough_vehicles' }],
      distanceM: 2000,
      durationS: 1200,
      stopped: 'time_limit',
      iterations: 1,
    };
    const result = toLiveResult({ id: 'build-1', task_count: 2 } as RouteBuild, prepared, solution, 5);
    expect(result.runsheets.map((r) => [r.id, r.added])).toEqual([['RS-A', ['new-1']]]);
    expect(result.runsheets[0]!.driver_id).toBe('driver-of-RS-A');
    expect(result.unplanned).toEqual([expect.objectContaining({ task_id: 'new-2', code: 'not_enough_vehicles' })]);
    expect(result.summary).toMatchObject({ tasks: 2, planned: 1, unplanned: 1, vehicles_used: 1 });
  });
});
