/**
 * The annealing's epochs on large problems (search.ts, EPOCH_MS): a run's first epochs are those of every shorter run,
 * so a longer limit can only add epochs that start from the best plan found. Under a clock the solver is given (one
 * tick a read), two runs of one seed make the same moves until the shorter one's deadline.
 */
import { describe, expect, it } from 'vitest';
import { solve } from '../../shared/routing/solver/index.ts';
import { epochEnd } from '../../shared/routing/solver/search.ts';
import { checkRouting, cityDay } from '../support/routing-problems.ts';

describe("the annealing's epochs", () => {
  it('end 10 s, 30 s, 70 s, 150 s … after the start; the last one runs to the deadline', () => {
    const ends = (deadlineMs: number) => {
      const out: number[] = [];
      let from = 0;
      for (;;) {
        const end = epochEnd(0, deadlineMs, from);
        if (end === Number.POSITIVE_INFINITY) return out;
        out.push(end);
        from = end;
      }
    };
    expect(ends(9_500)).toEqual([]);
    expect(ends(10_000)).toEqual([]);
    expect(ends(60_000)).toEqual([10_000, 30_000]);
    expect(ends(300_000)).toEqual([10_000, 30_000, 70_000, 150_000]);
    // From inside an epoch: its own end.
    expect(epochEnd(0, 300_000, 12_345)).toBe(30_000);
    expect(epochEnd(1_000, 300_000, 1_000)).toBe(11_000);
  });

  it('a longer limit never ends with a longer plan than a shorter one (same seed, same clock)', () => {
    const problem = cityDay(5, 450, 45);
    const run = (limitMs: number) => {
      // A clock that moves 40 ms at each read: the same reads give the same instants in both runs.
      let ticks = 0;
      const now = () => 40 * ticks++;
      return solve(problem, { seed: 3, now, deadlineMs: limitMs });
    };
    const short = run(10_000);
    const long = run(70_000);
    for (const solution of [short, long]) {
      expect(checkRouting(problem, solution).errors).toEqual([]);
      expect(solution.unplanned).toEqual([]);
    }
    expect(long.distanceM).toBeLessThanOrEqual(short.distanceM);
  }, 120_000);
});
