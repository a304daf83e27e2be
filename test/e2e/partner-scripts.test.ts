/**
 * docs/partners.md's two complete scripts, run as an integrator would run them against `npm start`: a partner
 * from its credentials (T3, X5) through invitations (A9), an import (I1, I4b, I6, I9, I7) and a planning (P2, P5, P7,
 * P9, P12) to every runsheet assigned (X14). Python with its standard library only; TypeScript with Node's fetch.
 */
import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { npmStart } from '../support/npm-start.ts';

const ROOT = resolve(import.meta.dirname, '../..');
let service: Awaited<ReturnType<typeof npmStart>>;
let url: string;

// `npm start` as a newcomer runs it (its seeded SysAdmin, its defaults), on ports and a data folder of its own.
beforeAll(async () => {
  service = await npmStart({ unset: ['DISPATCH_ADMIN_EMAIL', 'DISPATCH_ADMIN_PASSWORD'], name: 'partner-start' });
  url = service.url;
}, 120_000);
afterAll(() => service?.stop());

/** Runs `command` against the service, as its docs say: nothing set but where the service is. */
function run(command: string, args: string[]) {
  const child = spawn(command, args, { cwd: ROOT, env: { ...process.env, DISPATCH_URL: url } });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((done, fail) => {
    child.once('error', fail);
    child.once('exit', (code) => done({ code, stdout, stderr }));
  });
}

const expectFinished = (out: { code: number | null; stdout: string; stderr: string }) => {
  expect(out.code, out.stderr || out.stdout).toBe(0);
  const lines = out.stdout.trim().split('\n');
  expect(JSON.parse(lines.at(-1)!)).toMatchObject({ runsheets: 3, assigned: 3 });
  for (const step of [
    'T3: partner',
    'X5: partner token issued',
    'A9: 3 drivers invited',
    'imports: 3 tasks imported',
  ]) {
    expect(out.stdout).toContain(step);
  }
  expect(lines.filter((line) => /^• RS-P-\d: assigned to Driver \d$/.test(line))).toHaveLength(3);
};

describe("docs/partners.md's scripts", () => {
  it('the Python one (standard library only) takes a partner to a finished planning', async () => {
    expectFinished(await run('python3', ['examples/partner/partner.py']));
  }, 120_000);

  it('the TypeScript one (Node’s fetch) takes a partner to a finished planning', async () => {
    expectFinished(await run(resolve(ROOT, 'node_modules/.bin/tsx'), ['examples/partner/partner.ts']));
  }, 120_000);
});
