/** `npm run demo` is this story: run against a test host, it must tell the same day every time. */
import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
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
    // A driver's refusal and the system's closures told apart.
    expect(summary.outcomes).toEqual({ accepted: 6, declined: 1, closed: { assigned_to_other_driver: 5 }, open: 0 });
    expect(
      lines.some((line) =>
        line.includes(
          '6 runsheets assigned; offers: 6 accepted, 1 declined by their driver, 5 assigned_to_other_driver closed by the system, 0 still open',
        ),
      ),
    ).toBe(true);
    // Each step names the operations behind it.
    const calls = lines.filter((line) => line.trim().startsWith('↳')).map((line) => line.trim());
    for (const call of [
      '↳ A1 POST /v1/auth/login',
      '↳ I4b POST /v1/task-import-jobs',
      '↳ P9 POST /v1/plannings/{planningID}/job',
      '↳ X12 GET /v1/driver/offers ×5',
      '↳ R7 POST /v1/broadcast-plans/{plan_id}/pairs/{pair_id}/rejected',
    ]) {
      expect(calls, call).toContain(call);
    }
    expect(calls.some((call) => /^↳ X13 POST \/v1\/driver\/locations( ×\d+)?$/.test(call))).toBe(true);
    expect(calls.some((call) => call.startsWith('↳ ?'))).toBe(false);
    // The drivers kept moving through the day (a batch every three seconds each).
    expect(summary.positionBatches).toBeGreaterThan(0);
  }, 60_000);

  it('ends cleanly on Ctrl-C: no stack trace, exit 130, nothing left running', async () => {
    const tsx = resolve(import.meta.dirname, '../../node_modules/.bin/tsx');
    const child = spawn(tsx, [resolve(import.meta.dirname, '../../bin/demo.ts')], {
      env: {
        ...process.env,
        DISPATCH_URL: host.url,
        DISPATCH_ADMIN_EMAIL: ADMIN.email,
        DISPATCH_ADMIN_PASSWORD: ADMIN.password,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      err += chunk.toString();
    });
    const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
    // Interrupted once the drivers move (a timer and in-flight calls to stop, not only a pending await).
    const deadline = Date.now() + 45_000;
    while (!out.includes('drivers joined') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    expect(out).toContain('drivers joined');
    child.kill('SIGINT');
    const code = await Promise.race([exited, new Promise((r) => setTimeout(() => r('still running'), 15_000))]);
    if (code === 'still running') child.kill('SIGKILL');
    expect(code).toBe(130);
    expect(out).toContain('Stopped (Ctrl-C)');
    expect(err).not.toMatch(/at .+\(.+:\d+:\d+\)/);
  }, 90_000);
});
