/**
 * X10 lists an organisation's tasks oldest job first (`order=asc`), each job's in file order. Job ids cannot give that
 * order: they carry whole seconds only, and none at all when derived from an Idempotency-Key (docs/idempotency.md),
 * so the index sort key begins with the job's creation time.
 */
import { describe, expect, it } from 'vitest';
import { taskIndexKeys } from '../../shared/imports/tasks.ts';

describe('the sort key of an imported task', () => {
  it('orders by the job’s creation time whatever its id, then by row', () => {
    // Two jobs of the same second; the later one's id sorts first (a derived id is random).
    const earlier = { id: 'ffffffff0000000000000001', created_at: '2026-11-24T10:00:00.100Z' };
    const later = { id: '0000000000000000000000ff', created_at: '2026-11-24T10:00:00.900Z' };
    const keys = [
      taskIndexKeys('org', later, 1),
      taskIndexKeys('org', earlier, 2),
      taskIndexKeys('org', earlier, 10),
      taskIndexKeys('org', later, 0),
    ];
    const sorted = [...keys].sort((a, b) => Buffer.compare(Buffer.from(a.GSI1SK), Buffer.from(b.GSI1SK)));
    expect(sorted).toEqual([keys[1], keys[2], keys[3], keys[0]]);
    expect(keys.every((k) => k.GSI1SK === k.GSI2SK)).toBe(true);
  });
});
