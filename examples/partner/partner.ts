/**
 * A partner's day, from its credentials to a finished planning (docs/partners.md), in TypeScript with nothing but
 * Node's fetch: `npx tsx examples/partner/partner.ts` against `npm start`.
 *
 * With PARTNER_CLIENT_KEY, PARTNER_SECRET_KEY and PARTNER_ORG_ID set it acts on those partner credentials alone: it never signs in as the SysAdmin. Without them (local mode) it first plays the
 * platform's SysAdmin to make an organisation and a partner of it with every scope (T3), as the platform would hand
 * you your keys. Its drivers are people with phones; locally the script plays them too (the mail outbox, a location,
 * an answer to each offer).
 */
export {}; // a module: top-level await

const URL_ = process.env['DISPATCH_URL'] ?? 'http://localhost:3000';
const tag = Math.random().toString(36).slice(2, 7);
// biome-ignore lint/suspicious/noExplicitAny: a script reading JSON as it comes (an app would use @dispatch/client)
type Json = Record<string, any>;

/** One call; a refusal throws with the service's problem (`detail` says why). */
async function call(
  method: string,
  path: string,
  token?: string,
  body?: unknown,
  headers: Record<string, string> = {},
) {
  const response = await fetch(`${URL_}${path}`, {
    method,
    headers: {
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...headers,
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  const json = (text ? JSON.parse(text) : {}) as Json;
  if (!response.ok) throw new Error(`${method} ${path} → ${response.status}: ${json['detail'] ?? text}`);
  return json;
}
const step = (text: string) => console.log(`• ${text}`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, what: string): Promise<T> {
  for (let i = 0; i < 150; i++) {
    const value = await read();
    if (done(value)) return value;
    await sleep(200);
  }
  throw new Error(`gave up waiting for ${what}`);
}

// ----- 0. Local mode only (no keys given): the platform makes the organisation and its partner (T3) -----
let clientKey = process.env['PARTNER_CLIENT_KEY'];
let secretKey = process.env['PARTNER_SECRET_KEY'];
let orgId = process.env['PARTNER_ORG_ID'] ?? '';
if (!clientKey || !secretKey) {
  const adminEmail = process.env['DISPATCH_ADMIN_EMAIL'] || 'admin@dispatch.local';
  const adminPassword = process.env['DISPATCH_ADMIN_PASSWORD'] || 'admin-password-change-me';
  const admin = (
    await call('POST', '/v1/auth/login', undefined, { user: { email: adminEmail, password: adminPassword } })
  )['bearer_token'] as string;
  orgId = (await call('POST', '/v1/admin/organisations', admin, { name: `Partnered ${tag}`, kind: 'transporter' }))[
    'id'
  ];
  const partner = await call('POST', '/v1/admin/partner-authorizations', admin, {
    name: `Partner ${tag}`,
    webhook_url: 'https://hooks.example.com/dispatch',
    org_id: orgId,
    scopes: ['users:invite', 'imports', 'plannings', 'locations:read'],
  });
  clientKey = partner['client_key'];
  secretKey = partner['secret_key'];
  step(`T3: partner ${partner['id']} of organisation ${orgId} with scopes ${partner['scopes'].join(', ')}`);
} else if (!orgId) {
  throw new Error('PARTNER_ORG_ID is needed with PARTNER_CLIENT_KEY: the organisation your partner acts for (T3)');
} else {
  step(`T3: partner of organisation ${orgId} from PARTNER_CLIENT_KEY (no SysAdmin)`);
}

// ----- 1. X5: a bearer token from the client credentials (an hour; ask again when it expires) -----
const basic = Buffer.from(`${clientKey}:${secretKey}`).toString('base64');
const token = (
  await call(
    'POST',
    '/v1/auth/token',
    undefined,
    { grant_type: 'client_credentials' },
    { authorization: `Basic ${basic}` },
  )
)['bearer_token'] as string;
step('X5: partner token issued');

// ----- 2. A9: invite the drivers (X4 read with the partner's own token; locally the script accepts for them) -----
const driverRole = ((await call('GET', '/v1/roles', token))['roles'] as Json[]).find((r) => r['name'] === 'OrgDriver')!;
const drivers: { id: string; token: string }[] = [];
for (let i = 0; i < 3; i++) {
  const email = `driver${i}.${tag}@partner.example`;
  await call('POST', '/v1/partner/invitations', token, { user: { email, org_id: orgId, role_id: driverRole['id'] } });
  const outbox = await call('GET', `/_local/outbox?to=${encodeURIComponent(email)}`);
  const invitation_token = outbox['messages'][0]['data']['invitation_token'];
  const password = 'a-good-long-password';
  await call('POST', '/v1/auth/accept-invitation', undefined, {
    user: { name: `Driver ${i}`, password, invitation_token },
  });
  const session = await call('POST', '/v1/auth/login', undefined, { user: { email, password } });
  const fix = { latitude: 1.3 + i * 0.002, longitude: 103.85, client_time_utc: new Date().toISOString() };
  await call('PUT', '/v1/driver/location', session['bearer_token'], fix);
  drivers.push({ id: session['user']['id'], token: session['bearer_token'] });
}
step(`A9: ${drivers.length} drivers invited; they joined and sent their positions`);

// ----- 3. Imports: upload a CSV through its presigned URL (I1), make the job (I4b), start it (I6), read the result -----
const header =
  'task_ref,from_street_address,from_city,from_country,to_street_address,to_city,to_country,from_start_time_utc,' +
  'from_end_time_utc,from_timezone,to_start_time_utc,to_end_time_utc,to_timezone,from_latitude,from_longitude';
const rows = [0, 1, 2].map(
  (i) =>
    `P-${i + 1},${10 + i} Anson Rd,Singapore,SG,${20 + i} Collyer Quay,Singapore,SG,2026-12-01T00:00:00Z,` +
    `2026-12-01T02:00:00Z,Asia/Singapore,2026-12-01T03:00:00Z,2026-12-01T05:00:00Z,Asia/Singapore,${1.3 + i * 0.002},103.851`,
);
const upload = (await call('GET', '/v1/task-import-jobs/upload-url?filename=tasks.csv', token))['file'];
const put = await fetch(upload['url'], {
  method: 'PUT',
  body: `${header}\n${rows.join('\n')}\n`,
  headers: { 'content-type': 'text/csv' },
});
if (!put.ok) throw new Error(`upload failed: ${put.status}`);
const job = await call('POST', '/v1/task-import-jobs', token, {
  files: [{ storage_upload_key: upload['storage_upload_key'] }],
  start_timezone: 'Asia/Singapore',
  start_time: '2026-12-01T08:00:00+08:00',
  end_timezone: 'Asia/Singapore',
  end_time: '2026-12-01T20:00:00+08:00',
  service_type: 'van_1.7m', // the vehicle these tasks need (docs/imports.md)
});
await call('POST', `/v1/task-import-jobs/${job['id']}/start`, token);
await until(
  () => call('GET', `/v1/task-import-jobs/${job['id']}/status`, token),
  (s) => ['completed', 'failed'].includes(s['import_status']),
  'the import',
);
const result = await call('GET', `/v1/task-import-jobs/${job['id']}/result`, token);
if (result['errors'].length > 0) throw new Error(`rows rejected: ${result['errors'].join('; ')}`);
step(`imports: ${result['total_tasks_imported']} tasks imported (I1, I4b, I6, I9, I7)`);

// ----- 4. A planning of those tasks (P2, P5 with task_ids, P7), its job (P9) offering them to the drivers -----
const tasks = (await call('GET', `/v1/tasks?import_job_id=${job['id']}&order=asc`, token))['tasks'] as Json[];
const planning = await call('POST', '/v1/plannings', token, { name: `Partner run ${tag}` });
await call('POST', `/v1/plannings/${planning['id']}/runsheets`, token, {
  runsheets: tasks.map((t) => ({ id: `RS-${t['task_ref']}`, name: `Run ${t['task_ref']}`, task_ids: [t['id']] })),
});
const ready = await call('POST', `/v1/plannings/${planning['id']}/drivers`, token, {
  drivers: drivers.map((d) => ({ id: d.id })),
});
await call('POST', `/v1/plannings/${planning['id']}/job`, token, {
  version_rev: ready['version_rev'],
  max_candidates: 3,
  offer_ttl_s: 600,
});
const status = await until(
  () => call('GET', `/v1/plannings/${planning['id']}/job/status`, token),
  (s) => !['queued', 'processing'].includes(s['current_status']),
  'the planning job',
);
step(
  `planning ${planning['id']}: ${tasks.length} runsheets, ${drivers.length} drivers; job ${status['current_status']}`,
);

// ----- 5. The drivers answer (locally played here): each takes the first offer it can still win -----
for (const driver of drivers) {
  const offers = (await call('GET', '/v1/driver/offers', driver.token))['offers'] as Json[];
  for (const offer of offers) {
    const path = `/v1/broadcast-plans/${offer['plan']['id']}/pairs/${offer['id']}/accepted`;
    const won = await call('POST', path, driver.token, { happened_at_utc: new Date().toISOString() }).then(
      () => true,
      () => false, // 409: another driver won that runsheet first
    );
    if (won) break;
  }
}

// ----- 6. The finished planning as the partner reads it (X14): every runsheet with its driver -----
const runsheets = (await call('GET', `/v1/plannings/${planning['id']}/runsheets`, token))['runsheets'] as Json[];
for (const r of runsheets)
  step(`${r['id']}: ${r['status']}${r['assigned_driver'] ? ` to ${r['assigned_driver']['name']}` : ''}`);
const assigned = runsheets.filter((r) => r['status'] === 'assigned').length;
console.log(JSON.stringify({ planning_id: planning['id'], runsheets: runsheets.length, assigned }));
if (assigned !== runsheets.length) process.exit(1);
