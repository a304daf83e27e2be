import { describe, expect, it } from 'vitest';
import { buildInstance } from '../../shared/routing/solver/instance.ts';
import { LocalSearch } from '../../shared/routing/solver/local-search.ts';
import type { RoutingProblem } from '../../shared/routing/solver/model.ts';
import { Random } from '../../shared/routing/solver/random.ts';
import { removalGain, takeOut } from '../../shared/routing/solver/removal.ts';
import { bestInsertion, insertAt } from '../../shared/routing/solver/route.ts';
import { Solution } from '../../shared/routing/solver/solution.ts';
import { randomProblem, replay } from '../support/routing-problems.ts';

/** A solution of the problem built by putting tasks one by one at their cheapest place (bestInsertion itself). */
function greedySolution(problem: RoutingProblem, skip: ReadonlySet<number>) {
  const inst = buildInstance(problem);
  const solution = new Solution(inst);
  const out = { cost: 0, i: 0, j: 0 };
  for (let t = 0; t < problem.tasks.length; t++) {
    if (skip.has(t)) continue;
    let best = { cost: Number.POSITIVE_INFINITY, r: -1, i: 0, j: 0 };
    for (let r = 0; r < problem.vehicles.length; r++) {
      bestInsertion(inst, solution.routes[r]!, t, 0, out);
      if (out.cost < best.cost) best = { cost: out.cost, r, i: out.i, j: out.j };
    }
    if (best.r < 0) continue;
    insertAt(solution.routes[best.r]!, t, best.i, best.j);
    expect(solution.refresh(best.r)).toBe(true);
  }
  return { inst, solution };
}

const problems = [1, 2, 3, 4, 5, 6].map((seed) =>
  randomProblem(seed, {
    tasks: 14,
    vehicles: 3,
    window: seed % 2 ? 3600 : 7200,
    capacity: 5 + (seed % 3),
    side: 15,
    horizon: 5 * 3600,
  }),
);

describe('bestInsertion against every position', () => {
  it('finds the cheapest feasible (pickup, drop-off) positions, and none when none is feasible', () => {
    let compared = 0;
    let infeasible = 0;
    for (const problem of problems) {
      const skip = new Set([0, 5, 9]);
      const { inst, solution } = greedySolution(problem, skip);
      for (const t of skip)
        for (let r = 0; r < problem.vehicles.length; r++) {
          const route = solution.routes[r]!;
          const nodes = route.nodes;
          const before = replay(problem, r, nodes);
          let brute = Number.POSITIVE_INFINITY;
          for (let i = 0; i <= nodes.length; i++)
            for (let j = i; j <= nodes.length; j++) {
              const order = nodes.slice();
              order.splice(j, 0, 2 * t + 1);
              order.splice(i, 0, 2 * t);
              brute = Math.min(brute, replay(problem, r, order) - (nodes.length === 0 ? 0 : before));
            }
          const found = bestInsertion(inst, route, t, 0, { cost: 0, i: 0, j: 0 });
          if (brute === Number.POSITIVE_INFINITY) {
            infeasible++;
            expect(found.cost).toBe(Number.POSITIVE_INFINITY);
          } else {
            compared++;
            expect(found.cost).toBeCloseTo(brute, 6);
            const order = nodes.slice();
            insertAt({ nodes: order } as never, t, found.i, found.j);
            expect(replay(problem, r, order) - (nodes.length === 0 ? 0 : before)).toBeCloseTo(brute, 6);
          }
        }
    }
    expect(compared).toBeGreaterThan(10);
    expect(infeasible).toBeGreaterThan(0);
  });
});

describe('removal', () => {
  it("removalGain is the route's distance before less after; takeOut keeps the rest feasible", () => {
    for (const problem of problems) {
      const { solution } = greedySolution(problem, new Set());
      for (const t of solution.planned()) {
        const r = solution.taskRoute[t]!;
        const nodes = solution.routes[r]!.nodes;
        const without = nodes.filter((n) => n >> 1 !== t);
        const expected = replay(problem, r, nodes) - (without.length === 0 ? 0 : replay(problem, r, without));
        expect(removalGain(solution, t)).toBeCloseTo(expected, 6);
      }
      const copy = solution.clone();
      const some = copy.planned().slice(0, 4);
      expect(takeOut(copy, some)).toBe(true);
      for (const t of some) expect(copy.taskRoute[t]).toBe(-1);
      for (const route of copy.routes)
        if (route.nodes.length > 0) expect(replay(problem, route.vehicle, route.nodes)).toBeCloseTo(route.distance, 6);
    }
  });
});

describe('local search', () => {
  it('never breaks a constraint, never lengthens a route, and leaves no improving or-opt move of one stop', () => {
    let improved = 0;
    for (const problem of problems) {
      const { inst, solution } = greedySolution(problem, new Set());
      // Shuffle each route's order within what stays feasible, to give the search something to do.
      const random = new Random(3);
      for (const route of solution.routes) {
        if (route.nodes.length < 4) continue;
        for (let k = 0; k < 30; k++) {
          const order = route.nodes.slice();
          const a = random.below(order.length);
          const b = random.below(order.length);
          [order[a], order[b]] = [order[b]!, order[a]!];
          if (replay(problem, route.vehicle, order) < Number.POSITIVE_INFINITY) route.nodes = order;
        }
        solution.refresh(route.vehicle);
      }
      const local = new LocalSearch(inst);
      for (const route of solution.routes) {
        const before = route.distance;
        local.improve(solution, route.vehicle);
        const after = replay(problem, route.vehicle, route.nodes);
        expect(after).toBeCloseTo(route.distance, 6);
        expect(after).toBeLessThanOrEqual(before + 1e-6);
        if (after < before - 1e-6) improved++;
        // No single stop moves elsewhere in the route for a shorter feasible route.
        const nodes = route.nodes;
        for (let a = 0; a < nodes.length; a++)
          for (let j = 0; j <= nodes.length; j++) {
            const order = nodes.slice();
            const [node] = order.splice(a, 1);
            order.splice(j > a ? j - 1 : j, 0, node!);
            expect(replay(problem, route.vehicle, order)).toBeGreaterThanOrEqual(after - 1e-6);
          }
      }
    }
    expect(improved).toBeGreaterThan(0);
  });
});
