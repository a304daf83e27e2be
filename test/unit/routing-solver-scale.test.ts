import { describe, expect, it } from 'vitest';
import { solve } from '../../shared/routing/solver/index.ts';
import { checkRouting, cityDay } from '../support/routing-problems.ts';

describe('the solver at the contract bound', () => {
  it('plans a day of 2 000 tasks and 200 vehicles, every stop feasible', () => {
    const problem = cityDay(3, 2000, 200);
    let progressed = 0;
    const solution = solve(problem, {
      seed: 1,
      now: () => performance.now(),
      // Far off: the budget of iterations ends this run; the assertion is completion and feasibility, not a time.
      deadlineMs: performance.now() + 600_000,
      maxIterations: 3,
      onProgress: () => progressed++,
      progressEveryMs: 0,
    });
    expect(checkRouting(problem, solution).errors).toEqual([]);
    expect(solution.unplanned.filter((u) => u.code === 'not_enough_vehicles')).toEqual([]);
    expect(solution.routes.length).toBeGreaterThan(0);
    expect(solution.routes.length).toBeLessThanOrEqual(200);
    expect(progressed).toBeGreaterThan(0);
    // The first plan's local search takes a few CPU seconds: on a loaded 2-core machine, many more of wall time.
  }, 180_000);
});
