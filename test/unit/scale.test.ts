/** docs/scale.md holds exactly the table bench/scale.ts computes, and the sharded geo index stays under the limits. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LIMITS, SCENARIO, scaleRows, scaleTable } from '../../bench/scale.ts';

describe('scale on paper', () => {
  it('docs/scale.md shows the table the script computes (npm run scale)', () => {
    const doc = readFileSync(join(import.meta.dirname, '../../docs/scale.md'), 'utf8');
    expect(doc).toContain(scaleTable());
  });

  it('leaves every partition key under DynamoDB’s limits, sharding the one that would reach them', () => {
    for (const row of scaleRows()) {
      const wcu = row.sharded?.wcu ?? row.wcu;
      const rcu = row.sharded?.rcu ?? row.rcu;
      expect(wcu, row.partition).toBeLessThan(LIMITS.wcu);
      expect(rcu, row.partition).toBeLessThan(LIMITS.rcu);
    }
    // Issue 27: a fix no longer moves its entry every time (a precision-6 sort key), so the geo index's key takes a
    // tenth of the limit unsharded (under a fifth, here); before, 5 000 drivers' fixes took it to the limit itself (2 WCU a fix).
    const geo = scaleRows().find((row) => row.sharded)!;
    expect(geo.wcu).toBeLessThan((SCENARIO.driversInCell / SCENARIO.fixIntervalS) * 2);
    expect(geo.wcu).toBeLessThan(LIMITS.wcu / 5);
  });
});
