/** `npm run smoke` is meant for a deployed API; against a local host every step must work. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningHost } from '../../lib/local/start.ts';
import { runSmoke } from '../../lib/smoke.ts';
import { ADMIN, startTestHost } from '../support/local.ts';

let host: RunningHost;
beforeAll(async () => {
  host = await startTestHost();
});
afterAll(() => host?.stop());

describe('the smoke story', () => {
  it('works step by step against a host', async () => {
    const steps = await runSmoke({ url: host.url, email: ADMIN.email, password: ADMIN.password, log: () => {} });
    expect(steps.filter((step) => !step.ok)).toEqual([]);
    expect(steps).toHaveLength(7);
  });
});
