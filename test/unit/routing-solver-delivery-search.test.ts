import { describe, expect, it } from 'vitest';
import { DeliverySearch } from '../../shared/routing/solver/delivery-search.ts';
import { solve } from '../../shared/routing/solver/index.ts';
import type { RoutingProblem } from '../../shared/routing/solver/model.ts';
import { checkRouting, randomProblem, replay, spreadSolution } from '../support/routing-problems.ts';

/**
 * The delivery-only moves of depot loads (delivery-search.ts) against brute force on small VRPTW-like problems, where
 * a task's granular neighbourhood holds every other task: after `improve` no relocate, swap, 2-opt* or or-opt move
 * between two routes, enumerated here over every position and replayed from the problem's own specs, may shorten the
 * plan (a local optimum); every route stays feasible; no vehicle is opened; routes holding other tasks are left alone.
 */

/** A route of drop-off nodes as the vehicle drives it: every pickup loaded at the head, in the drop-offs' order. */
const loaded = (drops: readonly number[]) => [...drops.map((x) => x - 1), ...drops];
const dropsOf = (nodes: readonly number[]) => nodes.filter((x) => (x & 1) === 1);

/**
 * The best distance change of any one inter-route move on these routes (drop-off sequences), every position tried and
 * each new route replayed: relocate, swap, 2-opt* (every pair of cuts) and or-opt (runs of 2 and 3, kept in order).
 */
function bestMove(problem: RoutingProblem, routes: readonly (readonly number[])[]): number {
  const cost = (v: number, drops: readonly number[]) => replay(problem, v, loaded(drops));
  let best = Number.POSITIVE_INFINITY;
  for (let a = 0; a < routes.length; a++)
    for (let b = 0; b < routes.length; b++) {
      if (a === b) continue;
      const A = routes[a]!;
      const B = routes[b]!;
      if (A.length === 0) continue;
      const before = cost(a, A) + cost(b, B);
      const consider = (newA: number[], newB: number[]) => {
        best = Math.min(best, cost(a, newA) + cost(b, newB) - before);
      };
      if (B.length > 0)
        for (let len = 1; len <= 3; len++)
          for (let i = 0; i + len <= A.length; i++)
            for (let j = 0; j <= B.length; j++) {
              const run = A.slice(i, i + len);
              consider([...A.slice(0, i), ...A.slice(i + len)], [...B.slice(0, j), ...run, ...B.slice(j)]);
            }
      for (let i = 0; i < A.length; i++)
        for (let j = 0; j < B.length; j++) {
          const newA = A.slice();
          const newB = B.slice();
          newA[i] = B[j]!;
          newB[j] = A[i]!;
          consider(newA, newB);
        }
      for (let i = -1; i < A.length; i++)
        for (let j = 0; j <= B.length; j++)
          consider([...A.slice(0, i + 1), ...B.slice(j)], [...B.slice(0, j), ...A.slice(i + 1)]);
    }
  return best;
}

/**
 * The best distance change of one cross-exchange (a run of 1 to 3 drop-offs of one route and a run of 1 to 3 of
 * another trade places, each kept in order or reversed) or one move within a route (a run of 1 to 3 moved elsewhere in
 * its route, kept or reversed; two drop-offs trading places; a stretch reversed), every position tried and replayed.
 */
function bestRicherMove(problem: RoutingProblem, routes: readonly (readonly number[])[]): number {
  const cost = (v: number, drops: readonly number[]) => replay(problem, v, loaded(drops));
  const runs = (R: readonly number[], s: number, len: number, rev: boolean) => {
    const run = R.slice(s, s + len);
    return rev ? run.reverse() : run;
  };
  let best = Number.POSITIVE_INFINITY;
  for (let a = 0; a < routes.length; a++) {
    const A = routes[a]!;
    const own = cost(a, A);
    // Within route a.
    for (let len = 1; len <= 3; len++)
      for (let i = 0; i + len <= A.length; i++)
        for (const rev of [false, true]) {
          const rest = [...A.slice(0, i), ...A.slice(i + len)];
          for (let j = 0; j <= rest.length; j++)
            best = Math.min(best, cost(a, [...rest.slice(0, j), ...runs(A, i, len, rev), ...rest.slice(j)]) - own);
        }
    for (let i = 0; i < A.length; i++)
      for (let j = i + 1; j < A.length; j++) {
        const swapped = A.slice();
        swapped[i] = A[j]!;
        swapped[j] = A[i]!;
        best = Math.min(best, cost(a, swapped) - own);
        best = Math.min(best, cost(a, [...A.slice(0, i), ...A.slice(i, j + 1).reverse(), ...A.slice(j + 1)]) - own);
      }
    // Cross-exchange with every later route.
    for (let b = a + 1; b < routes.length; b++) {
      const B = routes[b]!;
      const before = own + cost(b, B);
      for (let la = 1; la <= 3; la++)
        for (let lb = 1; lb <= 3; lb++)
          for (let s = 0; s + la <= A.length; s++)
            for (let t = 0; t + lb <= B.length; t++)
              for (const ra of [false, true])
                for (const rb of [false, true]) {
                  const newA = [...A.slice(0, s), ...runs(B, t, lb, rb), ...A.slice(s + la)];
                  const newB = [...B.slice(0, t), ...runs(A, s, la, ra), ...B.slice(t + lb)];
                  best = Math.min(best, cost(a, newA) + cost(b, newB) - before);
                }
    }
  }
  return best;
}

const problems = Array.from({ length: 10 }, (_, k) =>
  randomProblem(k + 1, {
    tasks: 9 + (k % 4),
    vehicles: 4,
    window: k % 2 ? 2400 : 5400,
    capacity: 6 + (k % 3) * 2,
    side: 15,
    horizon: 4 * 3600,
    depotPickups: true,
  }),
);

describe('delivery-only moves of depot loads against brute force', () => {
  it('ends at a local optimum: no relocate, swap, 2-opt* or or-opt between two routes shortens the plan', () => {
    let improved = 0;
    for (const problem of problems) {
      const { inst, solution } = spreadSolution(problem);
      const usedBefore = solution.used();
      const planned = solution.planned().length;
      const before = solution.distance();
      const search = new DeliverySearch(inst);
      expect(search.applies()).toBe(true);
      const moves = search.improve(solution);
      if (moves > 0) improved++;
      // Every route feasible as the problem says, at its cached distance, its pickups in a run at its head.
      let total = 0;
      for (const route of solution.routes) {
        const d = replay(problem, route.vehicle, route.nodes);
        expect(d).toBeLessThan(Number.POSITIVE_INFINITY);
        if (route.nodes.length > 0) expect(d).toBeCloseTo(route.distance, 6);
        const half = route.nodes.length / 2;
        expect(route.nodes.every((x, k) => (x & 1) === (k < half ? 0 : 1))).toBe(true);
        total += d;
      }
      expect(total).toBeCloseTo(solution.distance(), 6);
      expect(solution.planned()).toHaveLength(planned);
      expect(solution.used()).toBeLessThanOrEqual(usedBefore);
      if (moves > 0) expect(solution.distance()).toBeLessThan(before);
      else expect(solution.distance()).toBe(before);
      // No inter-route move left that the brute force finds.
      const routes = solution.routes.map((r) => dropsOf(r.nodes));
      expect(bestMove(problem, routes)).toBeGreaterThan(-1e-6);
      // Nor a cross-exchange or a move within a route.
      expect(bestRicherMove(problem, routes)).toBeGreaterThan(-1e-6);
    }
    // The cases are not all trivial: most first plans had moves to make.
    expect(improved).toBeGreaterThan(problems.length / 2);
  });

  it('counts each kind of move it applies, and the brute force confirms some of each kind exist on these cases', () => {
    const totals = { relocate: 0, swap: 0, twoOptStar: 0, orOpt: 0, cross: 0, intra: 0 };
    for (const problem of problems) {
      const { inst, solution } = spreadSolution(problem);
      const search = new DeliverySearch(inst);
      search.improve(solution);
      for (const kind of Object.keys(totals) as (keyof typeof totals)[]) totals[kind] += search.applied[kind];
    }
    expect(totals.relocate).toBeGreaterThan(0);
    expect(totals.twoOptStar + totals.swap + totals.orOpt).toBeGreaterThan(0);
    expect(totals.cross).toBeGreaterThan(0);
    expect(totals.intra).toBeGreaterThan(0);
  });

  it('without the richer kinds stops where the brute force still finds a cross-exchange or a move within a route', () => {
    // The richer kinds are what reaches those optima: switched off, some plan keeps an improving one.
    let left = 0;
    for (const problem of problems) {
      const { inst, solution } = spreadSolution(problem);
      const search = new DeliverySearch(inst);
      Object.assign(search.kinds, { cross: false, intra: false });
      search.improve(solution);
      const routes = solution.routes.map((r) => dropsOf(r.nodes));
      if (bestRicherMove(problem, routes) < -1e-6) left++;
    }
    expect(left).toBeGreaterThan(0);
  });

  it('moves within a route only: each route keeps its own drop-offs, replays feasible, and reaches a local optimum', () => {
    let moved = 0;
    for (const problem of problems) {
      const { inst, solution } = spreadSolution(problem);
      const search = new DeliverySearch(inst);
      Object.assign(search.kinds, { inter: false, cross: false });
      const before = solution.routes.map((r) => r.nodes.slice());
      search.improve(solution);
      expect(search.applied.relocate + search.applied.swap + search.applied.twoOptStar + search.applied.orOpt).toBe(0);
      expect(search.applied.cross).toBe(0);
      moved += search.applied.intra;
      for (const [r, route] of solution.routes.entries()) {
        const d = replay(problem, route.vehicle, route.nodes);
        expect(d).toBeLessThan(Number.POSITIVE_INFINITY);
        // The same drop-offs; a route no move touched is exactly as it was.
        expect(dropsOf(route.nodes).sort((x, y) => x - y)).toEqual(dropsOf(before[r]!).sort((x, y) => x - y));
        if (d >= replay(problem, route.vehicle, before[r]!) - 1e-9) expect(route.nodes).toEqual(before[r]);
        // No move within this route improves it any more.
        const own = dropsOf(route.nodes);
        const alone = solution.routes.map((_, k) => (k === r ? own : []));
        expect(bestRicherMove(problem, alone)).toBeGreaterThan(-1e-6);
      }
    }
    expect(moved).toBeGreaterThan(0);
  });

  it('leaves alone a route that holds a task picked up elsewhere, and does nothing without depot loads', () => {
    for (const [k, base] of problems.entries()) {
      // Task 0 is picked up at its own place: whatever route holds it is not a depot-load route.
      const problem: RoutingProblem = {
        ...base,
        tasks: base.tasks.map((t, i) =>
          i === 0 ? { ...t, pickup: { location: t.dropoff.location, open: 0, close: 4 * 3600, serviceS: 60 } } : t,
        ),
      };
      const { inst, solution } = spreadSolution(problem);
      const r = solution.taskRoute[0]!;
      if (r < 0) continue;
      const held = solution.routes[r]!.nodes.slice();
      new DeliverySearch(inst).improve(solution);
      expect(solution.routes[r]!.nodes, `problem ${k}`).toEqual(held);
      for (const route of solution.routes)
        expect(replay(problem, route.vehicle, route.nodes)).toBeLessThan(Number.POSITIVE_INFINITY);
    }
    const pdp = randomProblem(3, { tasks: 10, vehicles: 3, window: 3600, capacity: 6 });
    const { inst, solution } = spreadSolution(pdp);
    const search = new DeliverySearch(inst);
    expect(search.applies()).toBe(false);
    expect(search.improve(solution)).toBe(0);
  });

  it('on a large depot-load problem the solver (which runs these moves above 400 tasks) answers a feasible plan', () => {
    const problem = randomProblem(7, {
      tasks: 450,
      vehicles: 60,
      window: 3600,
      capacity: 40,
      side: 30,
      horizon: 8 * 3600,
      service: 60,
      depotPickups: true,
    });
    const solution = solve(problem, { seed: 1, now: () => 0, deadlineMs: 1, maxIterations: 30 });
    expect(checkRouting(problem, solution).errors).toEqual([]);
    expect(solution.unplanned).toEqual([]);
  });
});
