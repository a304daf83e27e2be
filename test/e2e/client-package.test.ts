/**
 * The typed client as an app gets it (issue 36 item 3): `npm pack` of the `@dispatch/client` workspace, the tarball
 * installed into a fresh project outside this repository, a small driver app type-checked against the package's
 * declarations (a wrong path or body fails to compile) and run against the running service.
 */
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningHost } from '../../lib/local/start.ts';
import { ROLES } from '../../shared/auth/roles.ts';
import { type Client, client, invitedMember, loginAs, newOrganisation } from '../support/http.ts';
import { ADMIN, startTestHost } from '../support/local.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const TSC = join(ROOT, 'node_modules/.bin/tsc');

let host: RunningHost;
let api: Client;
let admin: string;
let driver: { id: string; token: string; refresh_token: string };
let app: string;
let tarball: string;

beforeAll(async () => {
  host = await startTestHost();
  api = client(host.url);
  admin = (await loginAs(api, ADMIN.email, ADMIN.password)).bearer_token;
  const org = await newOrganisation(api, admin, 'Packaged Ltd', 'transporter');
  driver = await invitedMember(api, admin, 'OrgDriver', ROLES.OrgDriver, org);

  // Packed as `npm publish` would (its prepack builds dist/), then installed from the tarball alone: with
  // docs/client.md's own commands, into a folder that does not exist yet, as a newcomer's app folder (issue 55 item 6).
  const packs = join(mkdtempSync(join(tmpdir(), 'client-pack-')), 'my-driver-app');
  const commands = /```sh\n([^`]*)```/
    .exec(readFileSync(join(ROOT, 'docs/client.md'), 'utf8'))![1]!
    .split('\n')
    .filter((line) => /^(mkdir|npm pack)/.test(line))
    .map((line) => line.replace(/#.*$/, '').replaceAll('../my-driver-app', packs));
  for (const command of commands) execFileSync('sh', ['-c', command], { cwd: ROOT, encoding: 'utf8' });
  tarball = join(packs, readdirSync(packs).find((name) => name.endsWith('.tgz'))!);
  app = mkdtempSync(join(tmpdir(), 'driver-app-'));
  writeFileSync(
    join(app, 'package.json'),
    JSON.stringify({
      name: 'driver-app',
      private: true,
      type: 'module',
      dependencies: { '@dispatch/client': tarball },
    }),
  );
  execFileSync('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', '--ignore-scripts'], {
    cwd: app,
    encoding: 'utf8',
  });
  writeFileSync(
    join(app, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        target: 'ES2022',
        module: 'NodeNext',
        moduleResolution: 'NodeNext',
        lib: ['ES2023', 'DOM'],
        types: [],
        strict: true,
        skipLibCheck: false,
        outDir: 'out',
      },
      files: ['app.ts'],
    }),
  );
}, 240_000);
afterAll(() => host?.stop());

/** docs/driver-app.md's positions snippet, exactly: a driver app built from it must send its fixes. */
const DOCS_SNIPPET = /```ts\n(const uploader = new LocationUploader[^`]*)```/.exec(
  readFileSync(join(ROOT, 'docs/driver-app.md'), 'utf8'),
)![1]!;

/** docs/driver-app.md's visiting order (X22's stops[], planned times and ETAs): type-checked against the package. */
const VISITING_ORDER = /```ts\nimport type \{ paths \} from '@dispatch\/client';\n([^`]*)```/.exec(
  readFileSync(join(ROOT, 'docs/driver-app.md'), 'utf8'),
)![1]!;

const DRIVER_APP = `
import {
  dispatchClient,
  type DriverEvents,
  isEvent,
  LocationUploader,
  must,
  type paths,
  type ServerFrame,
  TokenSession,
} from '@dispatch/client';
${VISITING_ORDER}

declare const process: { env: Record<string, string | undefined> };
const url = process.env.DISPATCH_URL!;
const token = process.env.DRIVER_TOKEN!;
const api = dispatchClient(url, token);
const me = must(await api.GET('/v1/me'), 'who am I');
const uploader = new LocationUploader({ baseUrl: url, token: () => token });
const at = Date.now();
for (const [i, latitude] of [1.3, 1.301, 1.302].entries()) {
  uploader.record({ latitude, longitude: 103.8, client_time_utc: new Date(at - (3 - i) * 60_000).toISOString() });
}
await uploader.flush();
uploader.stop();
// docs/driver-app.md's positions snippet as the docs give it (issue 55 item 2): storage, and no start().
const storage = { load: () => [], save: () => undefined };
const watchPosition = (callback: (p: { lat: number; lng: number }) => void) => callback({ lat: 1.302, lng: 103.8 });
const docsSession = new TokenSession({ baseUrl: url, tokens: { bearer_token: token, refresh_token: 'unused' } });
{
  const session = docsSession;
  ${DOCS_SNIPPET}
  for (let i = 0; i < 50 && uploader.stats.sent === 0; i++) await new Promise((r) => setTimeout(r, 100));
  var docsSent = uploader.stats.sent;
  var docsFlush = await uploader.flush();
  uploader.stop();
}
const offers = must(await api.GET('/v1/driver/offers', { params: { query: { state: 'all' } } }), 'my offers');
const frame: ServerFrame = {
  type: 'event',
  channel: 'user.' + me.user.id,
  name: 'offer.new',
  id: 'evt_1',
  data: { pair_id: 'p', planning_id: 'q', runsheet_id: 'RS-1', expired_time: null },
};
const runsheet = isEvent<DriverEvents, 'offer.new'>(frame, 'offer.new') ? frame.data.runsheet_id : undefined;
// T1 through the session: three callers at once share one renewal; the next renewal presents the new refresh token.
const session = new TokenSession({
  baseUrl: url,
  tokens: { bearer_token: token, refresh_token: process.env.REFRESH_TOKEN! },
});
const renewed = await Promise.all([session.renew(), session.renew(), session.renew()]);
await session.renew();
const again = must(await dispatchClient(url, await session.token(), session.fetch).GET('/v1/me'), 'who am I, renewed');
console.log(
  JSON.stringify({
    id: me.user.id,
    sent: uploader.stats.sent,
    docsSent,
    docsFlush,
    offers: offers.offers.length,
    runsheet,
    renewals: new Set(renewed).size,
    renewed: again.user.id,
  }),
);
`;

function compile(source: string) {
  writeFileSync(join(app, 'app.ts'), source);
  return spawnSync(TSC, ['-p', app], { cwd: app, encoding: 'utf8' });
}

describe('the client package, installed from its tarball', () => {
  it('holds built ESM and declarations only, and imports nothing outside itself but openapi-fetch', () => {
    const installed = join(app, 'node_modules/@dispatch/client');
    const manifest = JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8')) as {
      exports: Record<string, { types: string; import: string }>;
    };
    expect(manifest.exports['.']).toEqual({ types: './dist/index.d.ts', import: './dist/index.js' });
    const files = readdirSync(join(installed, 'dist'));
    expect(files).toEqual(expect.arrayContaining(['index.js', 'index.d.ts', 'location-uploader.js', 'events.d.ts']));
    expect(files.filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'))).toEqual([]);
    for (const file of files.filter((f) => f.endsWith('.js') || f.endsWith('.d.ts'))) {
      const text = readFileSync(join(installed, 'dist', file), 'utf8');
      const specifiers = [...text.matchAll(/(?:from|import)\s*\(?\s*['"]([^'"]+)['"]/g)].map((m) => m[1]!);
      for (const specifier of specifiers) {
        expect(specifier.startsWith('./') || specifier === 'openapi-fetch', `${file} imports ${specifier}`).toBe(true);
      }
    }
  });

  it('docs/client.md says the app is an ES module (its snippets use top-level await), as this app is', () => {
    const doc = readFileSync(join(ROOT, 'docs/client.md'), 'utf8');
    expect(doc).toContain('"type": "module"');
    expect(doc).toContain('TS1309');
    expect(JSON.parse(readFileSync(join(app, 'package.json'), 'utf8'))).toMatchObject({ type: 'module' });
  });

  it('type-checks a driver app against its declarations, and refuses a path the service does not have', () => {
    const good = compile(DRIVER_APP);
    expect(good.status, good.stdout + good.stderr).toBe(0);
    const bad = compile(DRIVER_APP.replace("api.GET('/v1/driver/offers'", "api.GET('/v1/driver/offerz'"));
    expect(bad.status).not.toBe(0);
    expect(bad.stdout).toContain('/v1/driver/offerz');
    // Put back the good app for the run below.
    expect(compile(DRIVER_APP).status).toBe(0);
  }, 120_000);

  it('runs the driver app against the service: who am I, three fixes sent by the uploader, the docs snippet sending without start(), my offers, a renewal', async () => {
    // Not spawnSync: the host answers from this very process.
    const child = spawn(process.execPath, [join(app, 'out/app.js')], {
      cwd: app,
      env: { ...process.env, DISPATCH_URL: host.url, DRIVER_TOKEN: driver.token, REFRESH_TOKEN: driver.refresh_token },
    });
    const run = { stdout: '', stderr: '', status: null as number | null };
    child.stdout.on('data', (chunk: Buffer) => {
      run.stdout += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      run.stderr += chunk.toString();
    });
    run.status = await new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
    expect(run.status, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout.trim())).toEqual({
      id: driver.id,
      sent: 3,
      docsSent: 1,
      docsFlush: { sent: 0, pending: 0, reason: 'nothing_waiting' },
      offers: 0,
      runsheet: 'RS-1',
      renewals: 1,
      renewed: driver.id,
    });
    // The session renewed twice and kept only the newest refresh token: the first one is retired (T1 401).
    const retired = await api.post('/v1/auth/refresh', { refresh_token: driver.refresh_token });
    expect(retired.status).toBe(401);
    // The fixes reached the service: the driver's last known position is the last one sent.
    const location = await api.get<{ location: { latitude: number } }>(`/v1/driver-locations/${driver.id}`, admin);
    expect(location.status).toBe(200);
    expect(location.body.location.latitude).toBeCloseTo(1.302, 5);
  }, 120_000);
});
