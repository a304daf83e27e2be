/**
 * The task machine of contract 4.8 as data (shared/planning/lifecycle.ts `TASK_MOVES`): every status against every
 * event type, so a change to the table shows here as a changed row.
 */
import { describe, expect, it } from 'vitest';
import { isFinished, nextStatus, TASK_MOVES } from '../../shared/planning/lifecycle.ts';
import { TASK_EVENT_TYPES, TASK_STATUSES } from '../../shared/planning/schemas.ts';

describe('the task machine', () => {
  it('moves pending → picked_up → delivered | failed, failed also from pending; arrived changes nothing', () => {
    const table = Object.fromEntries(
      TASK_STATUSES.map((status) => [
        status,
        Object.fromEntries(TASK_EVENT_TYPES.map((type) => [type, nextStatus(status, type) ?? 'refused'])),
      ]),
    );
    expect(table).toEqual({
      pending: { arrived: 'pending', picked_up: 'picked_up', delivered: 'refused', failed: 'failed' },
      picked_up: { arrived: 'picked_up', picked_up: 'refused', delivered: 'delivered', failed: 'failed' },
      delivered: { arrived: 'refused', picked_up: 'refused', delivered: 'refused', failed: 'refused' },
      failed: { arrived: 'refused', picked_up: 'refused', delivered: 'refused', failed: 'refused' },
    });
  });

  it('ends a task at delivered or failed, and only there', () => {
    expect(TASK_STATUSES.filter(isFinished)).toEqual(['delivered', 'failed']);
    expect(Object.keys(TASK_MOVES).sort()).toEqual([...TASK_EVENT_TYPES].sort());
  });
});
