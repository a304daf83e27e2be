/**
 * Issue 15.5, every operation measured: each test file recorded the DynamoDB tally of every request it made
 * (test/support/record-setup.ts). Here, after all of them: every operation of the route table answered 2xx at least
 * once with its tally recorded, so `npm run bench` can print what each one costs (bench/operations.ts).
 */
import { describe, expect, it } from 'vitest';
import { costByOperation, readTallies } from '../../bench/operations.ts';
import { routes } from '../../shared/routes.ts';

const tallies = readTallies();

describe('the capacity of every operation', () => {
  it('was measured on a successful request of each', () => {
    expect(tallies.length, 'no recorded requests: run the whole suite (npm test)').toBeGreaterThan(0);
    const measured = new Set(costByOperation(tallies).map((cost) => cost.op));
    expect(routes.map((route) => route.id).filter((id) => !measured.has(id))).toEqual([]);
  });
});
