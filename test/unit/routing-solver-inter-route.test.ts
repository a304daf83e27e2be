import { describe, expect, it } from 'vitest';
import { InterRoute } from '../../shared/routing/solver/inter-route.ts';
import type { RoutingProblem } from '../../shared/routing/solver/model.ts';
import type { Solution } from '../../shared/routing/solver/solution.ts';
import { randomProblem, replay, spreadSolution } from '../support/routing-problems.ts';

/**
 * The inter-route moves of large problems (inter-route.ts) against brute force on small ones, where a task's granular
 * neighbourhood holds every other task: each move must find the best the brute force finds (every route, every pair
 * of positions, replayed from the problem's own specs), and no move may break a constraint.
 */

/** The cheapest feasible way to put task t into `nodes` on vehicle v: the added distance, Infinity when none. */
function bruteInsert(problem: RoutingProblem, v: number, nodes: readonly number[], t: number): number {
  const before = replay(problem, v, nodes);
  let best = Number.POSITIVE_INFINITY;
  for (let i = 0; i <= nodes.length; i++)
    for (let j = i; j <= nodes.length; j++) {
      const order = nodes.slice();
      order.splice(j, 0, 2 * t + 1);
      order.splice(i, 0, 2 * t);
      best = Math.min(best, replay(problem, v, order) - before);
    }
  return best;
}

const without = (nodes: readonly number[], t: number) => nodes.filter((n) => n >> 1 !== t);

/** Every route replays feasibly to its cached distance; returns the total. */
function checked(problem: RoutingProblem, solution: Solution): number {
  let total = 0;
  for (const route of solution.routes) {
    const d = replay(problem, route.vehicle, route.nodes);
    expect(d).toBeLessThan(Number.POSITIVE_INFINITY);
    if (route.nodes.length > 0) expect(d).toBeCloseTo(route.distance, 6);
    total += d;
  }
  for (let t = 0; t < problem.tasks.length; t++)
    if (solution.taskRoute[t]! >= 0) {
      const nodes = solution.routes[solution.taskRoute[t]!]!.nodes;
      expect(nodes.filter((n) => n >> 1 === t)).toHaveLength(2);
    }
  return total;
}

const problems = [1, 2, 3, 4, 5, 6, 7, 8].map((seed) =>
  randomProblem(seed, {
    tasks: 12,
    vehicles: 4,
    window: seed % 2 ? 3600 : 7200,
    capacity: 5 + (seed % 3),
    side: 15,
    horizon: 5 * 3600,
    ...(seed % 4 === 0 ? { depotPickups: true } : {}),
  }),
);

describe('relocate against brute force', () => {
  it('moves a task exactly when some other used route takes it for less than it saves, by the best such saving', () => {
    let moved = 0;
    let kept = 0;
    for (const problem of problems) {
      const { inst, solution } = spreadSolution(problem);
      const inter = new InterRoute(inst);
      for (const t of solution.planned()) {
        const a = solution.taskRoute[t]!;
        const own = solution.routes[a]!.nodes;
        const saved = replay(problem, a, own) - replay(problem, a, without(own, t));
        let brute = Number.POSITIVE_INFINITY;
        for (const route of solution.routes)
          if (route.vehicle !== a && route.nodes.length > 0)
            brute = Math.min(brute, bruteInsert(problem, route.vehicle, route.nodes, t) - saved);
        const before = checked(problem, solution);
        const did = inter.relocate(solution, t);
        const after = checked(problem, solution);
        expect(did).toBe(brute < -1e-6);
        if (did) {
          moved++;
          expect(after - before).toBeCloseTo(brute, 6);
          expect(solution.taskRoute[t]).not.toBe(a);
        } else {
          kept++;
          expect(after).toBeCloseTo(before, 9);
        }
      }
    }
    expect(moved).toBeGreaterThan(0);
    expect(kept).toBeGreaterThan(0);
  });
});

describe('exchange against brute force', () => {
  it('swaps a task with another route’s task exactly when the best swap (each at its best place) shortens the plan', () => {
    let swapped = 0;
    for (const problem of problems) {
      const { inst, solution } = spreadSolution(problem);
      const inter = new InterRoute(inst);
      for (const t of solution.planned()) {
        const a = solution.taskRoute[t]!;
        const nodesA = solution.routes[a]!.nodes;
        const aWithout = without(nodesA, t);
        const distA = replay(problem, a, nodesA);
        let brute = Number.POSITIVE_INFINITY;
        if (replay(problem, a, aWithout) < Number.POSITIVE_INFINITY)
          for (const u of solution.planned()) {
            const b = solution.taskRoute[u]!;
            if (b === a) continue;
            const nodesB = solution.routes[b]!.nodes;
            const bWithout = without(nodesB, u);
            const intoA = replay(problem, a, aWithout) + bruteInsert(problem, a, aWithout, u);
            const intoB = replay(problem, b, bWithout) + bruteInsert(problem, b, bWithout, t);
            brute = Math.min(brute, intoA + intoB - distA - replay(problem, b, nodesB));
          }
        const before = checked(problem, solution);
        const did = inter.exchange(solution, t);
        const after = checked(problem, solution);
        expect(did).toBe(brute < -1e-6);
        if (did) {
          swapped++;
          expect(after - before).toBeCloseTo(brute, 6);
        } else expect(after).toBeCloseTo(before, 9);
      }
    }
    expect(swapped).toBeGreaterThan(0);
  });
});

describe('route minimisation and the whole inter-route search', () => {
  it('empties a route only when every task finds room for less than a vehicle is worth, else changes nothing', () => {
    let emptied = 0;
    let refused = 0;
    for (const problem of problems)
      for (const value of [0, 1e9]) {
        const { inst, solution } = spreadSolution(problem);
        const inter = new InterRoute(inst);
        const used = solution.routes.filter((r) => r.nodes.length > 0).map((r) => r.vehicle);
        for (const r of used) {
          const before = checked(problem, solution);
          const snapshot = solution.routes.map((route) => route.nodes.slice());
          const planned = solution.planned().length;
          if (inter.emptyRoute(solution, r, value)) {
            emptied++;
            expect(solution.routes[r]!.nodes).toHaveLength(0);
            expect(checked(problem, solution) - before).toBeLessThan(value);
          } else {
            refused++;
            expect(solution.routes.map((route) => route.nodes)).toEqual(snapshot);
            expect(checked(problem, solution)).toBeCloseTo(before, 9);
          }
          expect(solution.planned()).toHaveLength(planned);
        }
      }
    expect(emptied).toBeGreaterThan(0);
    expect(refused).toBeGreaterThan(0);
  });

  it('improve never breaks a constraint nor lengthens the plan, and leaves no improving relocate', () => {
    let improved = 0;
    for (const problem of problems) {
      const { inst, solution } = spreadSolution(problem);
      const inter = new InterRoute(inst);
      const before = checked(problem, solution);
      const planned = solution.planned();
      inter.improve(solution, planned, 50);
      const after = checked(problem, solution);
      expect(solution.planned()).toEqual(planned);
      expect(after).toBeLessThanOrEqual(before + 1e-6);
      if (after < before - 1e-6) improved++;
      for (const t of solution.planned()) {
        const a = solution.taskRoute[t]!;
        const own = solution.routes[a]!.nodes;
        const saved = replay(problem, a, own) - replay(problem, a, without(own, t));
        for (const route of solution.routes)
          if (route.vehicle !== a && route.nodes.length > 0)
            expect(bruteInsert(problem, route.vehicle, route.nodes, t) - saved).toBeGreaterThan(-1e-6);
      }
    }
    expect(improved).toBeGreaterThan(0);
  });
});
