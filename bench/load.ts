/**
 * `npm run load`: autocannon against the local host, 50 connections for 20 seconds. 40 connections are drivers
 * (each its own account: X9 who-am-I, an L1 location write with a fresh fix, L2 reading the fix back); 10 are the
 * organisation's admin (A19 member list, L3 nearest, L4 radius search). Prints requests/s, p50/p99 latency and the
 * error count (connection errors, timeouts and non-2xx answers), and exits non-zero if there was any error.
 *
 * Without DISPATCH_URL it starts its own host in a child process (fresh data, request logs off), so the load
 * generator and the service do not share an event loop. LOAD_CONNECTIONS and LOAD_SECONDS change the shape.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon, { type Request } from 'autocannon';
import { dispatchClient, joinFromOutbox, must } from '#lib/client/index';
import { ROOT } from '#lib/paths';

export interface LoadOptions {
  url: string;
  adminEmail: string;
  adminPassword: string;
  connections: number;
  seconds: number;
}

export interface LoadResult {
  requests: number;
  requestsPerSecond: number;
  p50: number;
  p99: number;
  errors: number;
  non2xx: number;
  timeouts: number;
}

const PASSWORD = 'a-good-long-password';
const CENTRE = { latitude: 1.3521, longitude: 103.8198 };

/** An organisation with its admin and `drivers` drivers, each signed in (the invitation accepted from the outbox). */
async function prepare(options: LoadOptions, drivers: number) {
  const client = (token?: string) => dispatchClient(options.url, token);
  const admin = must(
    await client().POST('/v1/auth/login', {
      body: { user: { email: options.adminEmail, password: options.adminPassword } },
    }),
    'log in as SysAdmin',
  );
  const sysadmin = client(admin.bearer_token);
  const tag = Math.random().toString(36).slice(2, 8);
  const org = must(
    await sysadmin.POST('/v1/admin/organisations', { body: { name: `Load ${tag}`, kind: 'transporter' } }),
    'create the organisation',
  );
  const adminEmail = `admin.${tag}@load.example`;
  must(
    await sysadmin.POST('/v1/admin/invitations', { body: { user: { email: adminEmail, org_id: org.id } } }),
    'invite the admin',
  );
  const orgAdmin = await joinFromOutbox(options.url, adminEmail, 'Load admin', PASSWORD);
  const planner = client(orgAdmin.bearer_token);
  const roles = must(await planner.GET('/v1/roles'), 'list roles');
  const driverRole = roles.roles.find((role) => role.name === 'OrgDriver')!.id;
  const sessions = await Promise.all(
    Array.from({ length: drivers }, async (_, i) => {
      const email = `driver${i}.${tag}@load.example`;
      must(
        await planner.POST('/v1/org-admin/invitations', { body: { user: { email, role_id: driverRole } } }),
        `invite ${email}`,
      );
      return joinFromOutbox(options.url, email, `Driver ${i}`, PASSWORD);
    }),
  );
  return {
    adminToken: orgAdmin.bearer_token,
    drivers: sessions.map((s) => ({ id: s.user.id, token: s.bearer_token })),
  };
}

export async function runLoad(options: LoadOptions): Promise<LoadResult> {
  const driverConnections = Math.max(1, Math.round(options.connections * 0.8));
  const { adminToken, drivers } = await prepare(options, driverConnections);
  const json = { 'content-type': 'application/json' };
  const query = `latitude=${CENTRE.latitude}&longitude=${CENTRE.longitude}`;
  let next = 0;
  const result = await autocannon({
    url: options.url,
    connections: options.connections,
    duration: options.seconds,
    // Each connection is one person: the first ones drivers, the rest the organisation's admin.
    setupClient: (client) => {
      const index = next++;
      const driver = index < driverConnections ? drivers[index % drivers.length] : undefined;
      const auth = { authorization: `Bearer ${driver?.token ?? adminToken}` };
      const requests: Request[] = driver
        ? [
            { method: 'GET', path: '/v1/me', headers: auth },
            {
              method: 'PUT',
              path: '/v1/driver/location',
              headers: { ...auth, ...json },
              setupRequest: (request) => ({
                ...request,
                body: JSON.stringify({
                  latitude: CENTRE.latitude + (Math.random() - 0.5) * 0.2,
                  longitude: CENTRE.longitude + (Math.random() - 0.5) * 0.2,
                  client_time_utc: new Date().toISOString(),
                  client_timezone: 'Asia/Singapore',
                }),
              }),
            },
            { method: 'GET', path: `/v1/driver-locations/${driver.id}`, headers: auth },
          ]
        : [
            { method: 'GET', path: '/v1/org/users?per_page=20', headers: auth },
            { method: 'GET', path: `/v1/driver-locations/nearest?${query}`, headers: auth },
            { method: 'GET', path: `/v1/driver-locations?${query}&radius=3000`, headers: auth },
          ];
      client.setRequests(requests);
    },
  });
  return {
    requests: result.requests.total,
    requestsPerSecond: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors + result.non2xx,
    non2xx: result.non2xx,
    timeouts: result.timeouts,
  };
}

async function startHostProcess(): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'bin', 'local.ts'), '--fresh'], {
    cwd: ROOT,
    env: {
      ...process.env,
      PORT: '0',
      LOG_LEVEL: 'SILENT',
      DISPATCH_DATA_DIR: mkdtempSync(join(tmpdir(), 'dispatch-load-')),
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const url = await new Promise<string>((resolve, reject) => {
    let seen = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      seen += chunk.toString();
      const match = /ready in \d+ ms at (http:\/\/\S+)/.exec(seen);
      if (match) resolve(match[1]!);
    });
    child.once('exit', (code) => reject(new Error(`the host exited with ${code} before it was ready:\n${seen}`)));
  });
  return { url, child };
}

if (process.argv[1]?.endsWith('load.ts')) {
  const external = process.env['DISPATCH_URL'];
  const host = external ? undefined : await startHostProcess();
  const options: LoadOptions = {
    url: external ?? host!.url,
    adminEmail: process.env['DISPATCH_ADMIN_EMAIL'] || 'admin@dispatch.local',
    adminPassword: process.env['DISPATCH_ADMIN_PASSWORD'] || 'admin-password-change-me',
    connections: Number(process.env['LOAD_CONNECTIONS'] ?? 50),
    seconds: Number(process.env['LOAD_SECONDS'] ?? 20),
  };
  console.log(
    `load: ${options.connections} connections for ${options.seconds} s against ${options.url}` +
      ' (drivers: X9 + L1 write + L2; admin: A19 + L3 + L4)',
  );
  try {
    const r = await runLoad(options);
    console.log(
      `requests ${r.requests}  req/s ${r.requestsPerSecond.toFixed(0)}  p50 ${r.p50} ms  p99 ${r.p99} ms  ` +
        `errors ${r.errors} (non-2xx ${r.non2xx}, timeouts ${r.timeouts})`,
    );
    process.exitCode = r.errors === 0 ? 0 : 1;
  } finally {
    host?.child.kill('SIGTERM');
  }
}
