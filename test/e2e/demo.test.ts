/** `npm run demo` is this story: run against a test host, it must tell the same day every time. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runDemo } from '../../lib/demo.ts';
import type { RunningHost } from '../../lib/local/start.ts';
import { ADMIN, startTestHost } from '../support/local.ts';

let host: RunningHost;
beforeAll(async () => {
  host = await startTestHost();
});
afterAll(() => host?.stop());

describe('the demo', () => {
  it('drives a whole day of dispatch through the typed client', async () => {
    const lines: string[] = [];
    const summary = await runDemo({
      url: host.url,
      adminEmail: ADMIN.email,
      adminPassword: ADMIN.password,
      log: (line) => lines.push(line),
    });
    expect(summary).toMatchObject({
      drivers: 5,
      importStatus: 'completed',
      tasksImported: 6,
      jobStatus: 'completed',
      pairs: 12,
      // Six runsheets, two offers each: six accepted, one rejected by its driver, five closed for the winner.
      states: { accepted: 6, rejected: 6 },
    });
    expect(summary.events.filter((name) => name === 'pair.broadcast')).toHaveLength(12);
    expect(summary.events).toContain('pair.accepted');
    expect(summary.ops.url).toBe(`${host.url}/ops`);
    expect(lines.some((line) => line.includes(`watch the day live at ${host.url}/ops, signed in as planner.`))).toBe(
      true,
    );
    expect(lines.some((line) => line.includes('6 runsheets assigned, 1 offer rejected, 5 rival offers closed'))).toBe(
      true,
    );
  }, 60_000);
});
