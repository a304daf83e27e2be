/**
 * `npm run load` in miniature, so the script cannot rot: the same mix (driver reads and location writes, admin
 * searches) from a handful of connections for two seconds, with no error of any kind. Nothing here asserts a speed:
 * the figures come from `npm run load`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runLoad } from '../../bench/load.ts';
import type { RunningHost } from '../../lib/local/start.ts';
import { ADMIN, startTestHost } from '../support/local.ts';

let host: RunningHost;
beforeAll(async () => {
  host = await startTestHost();
});
afterAll(() => host?.stop());

describe('the load script', () => {
  it('drives the mixed load without a single error', async () => {
    const result = await runLoad({
      url: host.url,
      adminEmail: ADMIN.email,
      adminPassword: ADMIN.password,
      connections: 5,
      seconds: 2,
    });
    expect(result.requests).toBeGreaterThan(0);
    expect(result).toMatchObject({ errors: 0, non2xx: 0, timeouts: 0 });
  }, 60_000);
});
