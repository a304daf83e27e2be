/**
 * What each operation costs in DynamoDB capacity, measured through the local host (the emulator applies AWS's rules:
 * 1 KB write units, 4 KB read units, transactions double, an index entry whose key moves is a delete and a put),
 * next to its floor: the least its semantics need. `measureCapacity` is also the cost model's input (bench/cost.ts).
 *
 * Every authenticated request also reads the caller's token generation (0.5 RCU) unless the container's cache holds
 * it: the bench runs with that cache off, as the worst case, and the floors include it.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from '#lib/paths';
import { type Tally, tallyObservers } from '#shared/db/capacity';
import { BENCH_ADMIN, startBenchHost } from './host.ts';

export interface Measured {
  id: string;
  what: string;
  tally: Tally;
  floor: { rcu: number; wcu: number; why: string };
  /** Units per `per` (a pair, a runsheet, a driver) where the operation handles many. */
  per?: { count: number; unit: string };
}

const GEN = 0.5; // the handler kit's token-generation read, cache cold

type Json = Record<string, unknown>;

export async function measureCapacity(): Promise<Measured[]> {
  process.env['TOKEN_GENERATION_CACHE_MS'] = '0';
  const host = await startBenchHost('capacity');
  return capacityScenario(host.url, BENCH_ADMIN);
}

/**
 * The scenario, against any local host in this process (the tallies come from its in-process observers): the bench
 * prints it, test/e2e/capacity.test.ts pins it.
 */
export async function capacityScenario(
  base: string,
  sysAdmin: { email: string; password: string },
): Promise<Measured[]> {
  const seen: { label: string; tally: Tally }[] = [];
  const observer = (tally: Tally, label: string) => seen.push({ label, tally });
  tallyObservers.add(observer);

  const call = async (method: string, path: string, body?: unknown, token?: string) => {
    const response = await fetch(`${base}${path}`, {
      method,
      headers: {
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...(token ? { authorization: `Bearer ${token}` } : {}),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    const parsed = (text ? JSON.parse(text) : {}) as Json;
    if (response.status >= 400) throw new Error(`${method} ${path} → ${response.status} ${text.slice(0, 200)}`);
    return parsed;
  };
  /** The tally of the one scope labelled `label` that `run` causes (a request, or a queued job). */
  const measure = async (label: string, run: () => Promise<unknown>, settle?: () => Promise<void>) => {
    seen.length = 0;
    await run();
    await settle?.();
    // A queued job reports its tally when its worker returns, a little after the status it sets says it ended.
    for (let i = 0; i < 200 && !seen.some((entry) => entry.label === label); i++) {
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    const mine = seen.filter((entry) => entry.label === label);
    if (mine.length !== 1) throw new Error(`expected one ${label} scope, saw ${mine.length}`);
    return mine[0]!.tally;
  };
  const login = async (email: string, password: string) =>
    (await call('POST', '/v1/auth/login', { user: { email, password } })) as {
      bearer_token: string;
      refresh_token: string;
      user: { id: string };
    };
  const admin = (await login(sysAdmin.email, sysAdmin.password)).bearer_token;
  const org = (await call('POST', '/v1/admin/organisations', { name: 'Capacity', kind: 'transporter' }, admin)) as {
    id: string;
  };
  const roleIds = (await call('GET', '/v1/roles', undefined, admin)) as { roles: { id: string; name: string }[] };
  const roleId = (name: string) => roleIds.roles.find((role) => role.name === name)!.id;
  let n = 0;
  const member = async (role: string) => {
    const email = `cap${n++}.${org.id.slice(0, 6)}@example.com`;
    await call('POST', '/v1/admin/invitations', { user: { email, org_id: org.id, role_id: roleId(role) } }, admin);
    const outbox = (await call('GET', `/_local/outbox?to=${encodeURIComponent(email)}`)) as {
      messages: { data: Record<string, string> }[];
    };
    const token = outbox.messages[0]!.data['invitation_token'];
    await call('POST', '/v1/auth/accept-invitation', {
      user: { name: `${role} ${n}`, password: 'a-good-long-password', invitation_token: token },
    });
    const session = await login(email, 'a-good-long-password');
    return { id: session.user.id, token: session.bearer_token, email };
  };
  const fix = (latitude: number, longitude: number, secondsAgo: number) => ({
    latitude,
    longitude,
    client_time_utc: new Date(Date.now() - secondsAgo * 1000).toISOString(),
  });

  const results: Measured[] = [];
  const add = (id: string, what: string, tally: Tally, floor: Measured['floor'], per?: Measured['per']) =>
    results.push({ id, what, tally, floor, ...(per ? { per } : {}) });

  // Sign-in.
  const planner = await member('OrgAdmin');
  let session = { refresh_token: '' };
  add(
    'A1',
    'login',
    await measure('A1', async () => {
      session = await login(planner.email, 'a-good-long-password');
    }),
    { rcu: 0.5, wcu: 1, why: 'read the user by email; write the refresh family' },
  );
  add(
    'T1',
    'refresh',
    await measure('T1', () => call('POST', '/v1/auth/refresh', { refresh_token: session.refresh_token })),
    { rcu: 0.5, wcu: 2, why: 'read the token; retire it and write its successor' },
  );
  add('X9', 'me', await measure('X9', () => call('GET', '/v1/me', undefined, admin)), {
    rcu: GEN + 0.5,
    wcu: 0,
    why: 'the caller check and the user',
  });

  // Locations: eight drivers within a kilometre, one that moves.
  const drivers: { id: string; token: string; email: string }[] = [];
  for (let i = 0; i < 8; i++) drivers.push(await member('OrgDriver'));
  const mover = drivers[0]!;
  add(
    'L1',
    'first fix',
    await measure('L1', () => call('PUT', '/v1/driver/location', fix(1.3, 103.8, 60), mover.token)),
    { rcu: GEN + 0.5, wcu: 4, why: 'the user once; item and index entry put; two directory counts' },
  );
  add(
    'L1',
    'a fix moving 30 m',
    await measure('L1', () => call('PUT', '/v1/driver/location', fix(1.30027, 103.8, 50), mover.token)),
    { rcu: GEN, wcu: 1, why: 'the caller check; the item (its index entry stays: same precision-6 cell and granule)' },
  );
  add(
    'L1',
    'crossing a precision-5 cell',
    await measure('L1', () => call('PUT', '/v1/driver/location', fix(1.30027, 103.85, 40), mover.token)),
    { rcu: GEN, wcu: 5, why: 'the move, one count up, one count down' },
  );
  for (const [i, driver] of drivers.slice(1).entries()) {
    await call('PUT', '/v1/driver/location', fix(1.3 + i * 0.001, 103.85, 30), driver.token);
  }
  add(
    'L2',
    'one location',
    await measure('L2', () => call('GET', `/v1/driver-locations/${mover.id}`, undefined, planner.token)),
    {
      rcu: GEN + 0.5,
      wcu: 0,
      why: 'the caller check and the item',
    },
  );
  // Searches and a list, as planner (an OrgAdmin) and SysAdmin.
  const reads: [string, string, string, string, string][] = [
    [
      'L3',
      'nearest (8 drivers within 1 km)',
      '/v1/driver-locations/nearest?latitude=1.301&longitude=103.851',
      planner.token,
      'the caller check, one Query of the cell (its shards), the candidates’ items (one BatchGetItem)',
    ],
    [
      'L4',
      'radius 1 km (8 drivers)',
      '/v1/driver-locations?latitude=1.301&longitude=103.851&radius=1000',
      planner.token,
      'the caller check, one Query per covering cell, the candidates’ items (one BatchGetItem)',
    ],
    [
      'A14',
      'users of an organisation, a page of 20',
      `/v1/admin/users?org_id=${org.id}&per_page=20`,
      admin,
      'the caller check, the listing counter and one Query; the page’s records come on top (GSI1 holds keys only)',
    ],
  ];
  for (const [id, what, path, token, why] of reads) {
    add(id, what, await measure(id, () => call('GET', path, undefined, token)), { rcu: GEN + 0.5, wcu: 0, why });
  }

  // Planning: 10 runsheets, 8 drivers, 3 candidates a runsheet (30 pairs), and an accept closing 2 rivals.
  const created = (await measure('P2', () =>
    call('POST', '/v1/plannings', { name: 'Capacity day' }, planner.token),
  )) as Tally;
  add('P2', 'create a planning', created, { rcu: GEN, wcu: 2, why: 'the planning item and its list counter' });
  const list = (await call('GET', '/v1/plannings?per_page=1', undefined, planner.token)) as {
    plannings: { id: string }[];
  };
  const planningId = list.plannings[0]!.id;
  const runsheets = Array.from({ length: 10 }, (_, i) => ({
    id: `RS-${i}`,
    name: `Runsheet ${i}`,
    tasks: [{ id: `t-${i}`, from_address: { latitude: 1.3 + i * 0.0005, longitude: 103.85 } }],
  }));
  add(
    'P5',
    'add 10 runsheets',
    await measure('P5', () => call('POST', `/v1/plannings/${planningId}/runsheets`, { runsheets }, planner.token)),
    { rcu: GEN + 0.5, wcu: 11, why: 'one item per runsheet and the planning' },
    { count: 10, unit: 'runsheet' },
  );
  add(
    'P7',
    'add 8 drivers',
    await measure('P7', () =>
      call(
        'POST',
        `/v1/plannings/${planningId}/drivers`,
        { drivers: drivers.map((d) => ({ id: d.id })) },
        planner.token,
      ),
    ),
    { rcu: GEN + 0.5 + 8 * 0.5, wcu: 9, why: 'each driver checked; one item per driver and the planning' },
    { count: 8, unit: 'driver' },
  );
  const planning = (await call('GET', `/v1/plannings/${planningId}`, undefined, planner.token)) as {
    version_rev: string;
  };
  const settled = async () => {
    for (let i = 0; i < 200; i++) {
      const status = (await call('GET', `/v1/plannings/${planningId}/job/status`, undefined, planner.token)) as {
        current_status?: string;
      };
      if (status.current_status === 'completed' || status.current_status === 'failed') return;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };
  add(
    'P9',
    'the planning job: 10 runsheets × 3 candidates',
    await measure(
      'queue:planning',
      () =>
        call(
          'POST',
          `/v1/plannings/${planningId}/job`,
          // Room for every runsheet a driver may win: R6 measures an accept and its rivals' closes, not the closes
          // of the winner's other offers at their runsheet limit (contract 4.7; tests pin those apart).
          { version_rev: planning.version_rev, max_candidates: 3, max_runsheets_per_driver: 10 },
          planner.token,
        ),
      settled,
    ),
    { rcu: 1 + 8 * 0.5, wcu: 30 + 4, why: 'one item per pair; the job status; the drivers’ locations read once' },
    { count: 30, unit: 'pair' },
  );
  const pairs = (await call('GET', `/v1/broadcast-plans/${planningId}/pairs`, undefined, planner.token)) as {
    pair_records: { id: string; pair: { runsheet: { id: string }; driver: { id: string } } }[];
  };
  const offer = pairs.pair_records.find((p) => p.pair.runsheet.id === 'RS-0')!;
  const driver = drivers.find((d) => d.id === offer.pair.driver.id)!;
  add(
    'R6',
    'accept, closing 2 rival offers',
    await measure('R6', () =>
      call(
        'POST',
        `/v1/broadcast-plans/${planningId}/pairs/${offer.id}/accepted`,
        { happened_at_utc: new Date().toISOString() },
        driver.token,
      ),
    ),
    {
      rcu: GEN + 0.5 + 0.5,
      wcu: 2 * 2 + 2,
      why: 'the pair and the runsheet’s claim in one transaction; two rivals closed',
    },
  );
  // An import of 100 tasks by a merchant: the worker's units per task.
  const shop = (await call('POST', '/v1/admin/organisations', { name: 'Capacity shop', kind: 'merchant' }, admin)) as {
    id: string;
  };
  const merchantEmail = `shop.${shop.id.slice(0, 6)}@example.com`;
  await call(
    'POST',
    '/v1/admin/invitations',
    { user: { email: merchantEmail, org_id: shop.id, role_id: roleId('Merchant') } },
    admin,
  );
  const invitation = (await call('GET', `/_local/outbox?to=${encodeURIComponent(merchantEmail)}`)) as {
    messages: { data: Record<string, string> }[];
  };
  await call('POST', '/v1/auth/accept-invitation', {
    user: {
      name: 'Shop',
      password: 'a-good-long-password',
      invitation_token: invitation.messages[0]!.data['invitation_token'],
    },
  });
  const merchant = (await login(merchantEmail, 'a-good-long-password')).bearer_token;
  const [header, row] = readFileSync(join(ROOT, 'test/fixtures/tasks.csv'), 'utf8').split(/\r?\n(?=T\d)/);
  const first = row!.split(/\r?\nT\d/)[0]!;
  const csv = [header, ...Array.from({ length: 100 }, (_, i) => first.replace(/^T1,/, `C${i},`))].join('\n');
  const presigned = (await call('GET', '/v1/task-import-jobs/upload-url?filename=tasks.csv', undefined, merchant)) as {
    file: { url: string; storage_upload_key: string };
  };
  // The URL signs Content-Type text/csv: S3 refuses a PUT without it.
  await fetch(presigned.file.url, { method: 'PUT', body: csv, headers: { 'content-type': 'text/csv' } });
  const job = (await call(
    'POST',
    '/v1/task-import-jobs',
    {
      files: [{ storage_upload_key: presigned.file.storage_upload_key }],
      start_timezone: 'Asia/Singapore',
      start_time: '2026-11-22T00:00:00+08:00',
      end_timezone: 'Asia/Singapore',
      end_time: '2026-11-22T23:00:00+08:00',
      service_type: 'van_1.7m',
    },
    merchant,
  )) as { id: string };
  const imported = async () => {
    for (let i = 0; i < 400; i++) {
      const status = (await call('GET', `/v1/task-import-jobs/${job.id}/status`, undefined, merchant)) as {
        import_status?: string;
      };
      if (status.import_status === 'completed' || status.import_status === 'failed') return;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };
  add(
    'I6',
    'an import of 100 tasks (the worker)',
    await measure('queue:import', () => call('POST', `/v1/task-import-jobs/${job.id}/start`, {}, merchant), imported),
    { rcu: 1, wcu: 100 + 2, why: 'one item per task; the job read and closed' },
    { count: 100, unit: 'task' },
  );
  tallyObservers.delete(observer);
  return results;
}

const fmt = (n: number) => (Number.isInteger(n) ? String(n) : n.toFixed(2));

export async function benchCapacity(): Promise<Measured[]> {
  const results = await measureCapacity();
  console.log(
    '\n## DynamoDB capacity per operation (measured through the local host; floors include the 0.5 RCU caller check)',
  );
  console.log('| op | what | calls | RCU | WCU | floor RCU / WCU | ratio (WCU, RCU) | per unit |');
  console.log('|---|---|---|---|---|---|---|---|');
  for (const r of results) {
    const ratio = (measured: number, floor: number) =>
      floor === 0 ? (measured === 0 ? '1.00' : '∞') : (measured / floor).toFixed(2);
    const per = r.per ? `${fmt(r.tally.wcu / r.per.count)} WCU per ${r.per.unit}` : '';
    console.log(
      `| ${r.id} | ${r.what} | ${r.tally.calls} | ${fmt(r.tally.rcu)} | ${fmt(r.tally.wcu)} | ${fmt(r.floor.rcu)} / ${fmt(r.floor.wcu)} (${r.floor.why}) | ${ratio(r.tally.wcu, r.floor.wcu)}, ${ratio(r.tally.rcu, r.floor.rcu)} | ${per} |`,
    );
  }
  return results;
}
