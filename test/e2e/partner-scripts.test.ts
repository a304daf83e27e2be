/**
 * docs/partners.md's two complete scripts, run as an integrator would run them against `npm start`: a partner
 * from its credentials (T3, X5) through invitations (A9), an import (I1, I4b, I6, I9, I7) and a planning (P2, P5, P7,
 * P9, P12) to every runsheet assigned (X14). Python with its standard library only; TypeScript with Node's fetch.
 * Twice: in local mode (nothing set: they play the seeded SysAdmin to make their keys), and given partner keys alone,
 * against a service whose SysAdmin password they do not have, as against a deployed stage.
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

/** Runs `command` against `target`, as its docs say: nothing set but where the service is (and `env`). */
function run(command: string, args: string[], target = url, env: Record<string, string> = {}) {
  const environment: NodeJS.ProcessEnv = { ...process.env, DISPATCH_URL: target, ...env };
  for (const key of ['DISPATCH_ADMIN_EMAIL', 'DISPATCH_ADMIN_PASSWORD']) delete environment[key];
  const child = spawn(command, args, { cwd: ROOT, env: environment });
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

describe("docs/partners.md's scripts given partner keys only", () => {
  // A service whose SysAdmin password the scripts cannot know: a sign-in as the SysAdmin would be a 401.
  const adminPassword = `not-the-default-${Math.random().toString(36).slice(2)}`;
  let keyed: Awaited<ReturnType<typeof npmStart>>;
  let keys: Record<string, string>;

  /** One call as the platform's operator makes it (the test, not the scripts). */
  const call = async (path: string, token: string | undefined, body: unknown) => {
    const response = await fetch(`${keyed.url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body: JSON.stringify(body),
    });
    expect(response.status, await response.clone().text()).toBeLessThan(300);
    return (await response.json()) as Record<string, string>;
  };

  beforeAll(async () => {
    const adminEmail = 'operator@dispatch.local';
    keyed = await npmStart({
      env: { DISPATCH_ADMIN_EMAIL: adminEmail, DISPATCH_ADMIN_PASSWORD: adminPassword },
      name: 'partner-keys',
    });
    const admin = (await call('/v1/auth/login', undefined, { user: { email: adminEmail, password: adminPassword } }))[
      'bearer_token'
    ]!;
    const org = await call('/v1/admin/organisations', admin, { name: 'Keyed partner', kind: 'transporter' });
    const partner = await call('/v1/admin/partner-authorizations', admin, {
      name: 'Keyed partner',
      webhook_url: 'https://hooks.example.com/dispatch',
      org_id: org['id'],
      scopes: ['users:invite', 'imports', 'plannings', 'locations:read'],
    });
    keys = {
      PARTNER_CLIENT_KEY: partner['client_key']!,
      PARTNER_SECRET_KEY: partner['secret_key']!,
      PARTNER_ORG_ID: org['id']!,
    };
  }, 120_000);
  afterAll(() => keyed?.stop());

  it('the Python one runs on the partner credentials alone (no SysAdmin sign-in)', async () => {
    const out = await run('python3', ['examples/partner/partner.py'], keyed.url, keys);
    expectFinished(out);
    expect(out.stdout).toContain('(no SysAdmin)');
  }, 120_000);

  it('the TypeScript one runs on the partner credentials alone (no SysAdmin sign-in)', async () => {
    const out = await run(resolve(ROOT, 'node_modules/.bin/tsx'), ['examples/partner/partner.ts'], keyed.url, keys);
    expectFinished(out);
    expect(out.stdout).toContain('(no SysAdmin)');
  }, 120_000);
});
