/**
 * Issue 14, the chaos run: the demo's day of dispatch (lib/demo.ts: an organisation, its planner, five drivers, a
 * CSV import through S3 with presigned uploads, a planning job broadcasting offers, accepts and a rejection) runs
 * twice against one host: once with every dependency healthy, once with 20 % of DynamoDB and S3 calls (the
 * presigned uploads included) throttled or reset mid-answer, the fault decisions drawn from a seeded generator. The
 * client does what the contract asks: an Idempotency-Key on every POST, and 503s (and GETs) retried after
 * Retry-After. The two days must end alike (users, counters, import jobs, tasks, items, the planning, its pairs and
 * assignments, locations: compared with ids, times and the run's tag taken out), with no 500 and no 401.
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type RetryTally, retryingFetch } from '../../lib/client/index.ts';
import { type DemoSummary, runDemo } from '../../lib/demo.ts';
import { LOCAL_CREDENTIALS } from '../../lib/local/emulators.ts';
import { type RunningHost, startLocal } from '../../lib/local/start.ts';
import { pairFromItem } from '../../shared/planning/pair-records.ts';
import { type FaultProxy, seededRandom, startFaultProxy } from '../support/fault-proxy.ts';
import { ADMIN } from '../support/local.ts';

const SEED = 14;
const FAULT_SHARE = 0.2;

let host: RunningHost;
let dynamodb: FaultProxy;
let s3: FaultProxy | undefined;

beforeAll(async () => {
  const endpoints = inject('endpoints');
  dynamodb = await startFaultProxy(endpoints.dynamodb, 'dynamodb', seededRandom(SEED));
  // A client's retry may find the first attempt's idempotency record still in progress: it lapses within 2 s here.
  process.env['IDEMPOTENCY_IN_PROGRESS_MS'] = '2000';
  host = await startLocal({
    port: 0,
    dataDir: join(inject('dataDir'), `chaos-${randomBytes(4).toString('hex')}`),
    fresh: false,
    persistent: false,
    adminEmail: ADMIN.email,
    adminPassword: ADMIN.password,
    tablePrefix: `c${randomBytes(4).toString('hex')}-`,
    endpoints: { dynamodb: dynamodb.url },
    frontS3: async (endpoint) => {
      s3 = await startFaultProxy(endpoint, 's3', seededRandom(SEED + 1));
      return s3.url;
    },
  });
}, 60_000);

afterAll(async () => {
  await dynamodb?.set('pass');
  await s3?.set('pass');
  await host?.stop();
  await dynamodb?.close();
  await s3?.close();
});

const tally = (): RetryTally => ({ requests: 0, retries: 0, statuses: {} });

async function day(tag: string, counts: RetryTally): Promise<DemoSummary> {
  return runDemo({
    // The final positions are compared between the two days: drivers stop after their first batch.
    keepMoving: false,
    url: host.url,
    adminEmail: ADMIN.email,
    adminPassword: ADMIN.password,
    tag,
    // Retry-After is 1 s; the test waits a fifth of it to stay quick. (The day takes about 45 s on 2 idle cores; the
    // test allows 600 s for a machine busy with other work.)
    fetch: retryingFetch({ tally: counts, retryAfterScale: 0.2 }),
  });
}

type Item = Record<string, unknown>;

async function scan(table: string): Promise<Item[]> {
  const client = DynamoDBDocumentClient.from(
    new DynamoDBClient({ endpoint: inject('endpoints').dynamodb, region: 'us-east-1', credentials: LOCAL_CREDENTIALS }),
  );
  const items: Item[] = [];
  let cursor: Record<string, unknown> | undefined;
  do {
    const out = await client.send(new ScanCommand({ TableName: table, ExclusiveStartKey: cursor }));
    items.push(...((out.Items ?? []) as Item[]));
    cursor = out.LastEvaluatedKey;
  } while (cursor);
  return items;
}

const byJson = (a: unknown, b: unknown) => JSON.stringify(a).localeCompare(JSON.stringify(b));

/** What the day left behind for one organisation, with ids, times and the run's tag replaced by stable names. */
async function endState(summary: DemoSummary, tag: string) {
  const main = await scan(process.env['MAIN_TABLE']!);
  const locations = await scan(process.env['LOCATIONS_TABLE']!);
  const org = summary.organisationId;
  const users = main.filter((i) => i['entity'] === 'user' && i['org_id'] === org);
  const names = new Map(users.map((u) => [String(u['id']), String(u['name'])]));
  const clean = (value: unknown): unknown =>
    JSON.parse(
      [...names].reduce(
        (text, [id, name]) => text.replaceAll(id, `<${name}>`),
        JSON.stringify(value)
          .replaceAll(org, '<org>')
          .replaceAll(summary.planningId, '<planning>')
          .replaceAll(tag, '<tag>'),
      ),
    );
  const jobs = main.filter((i) => i['entity'] === 'import_job' && i['org_id'] === org);
  const jobIds = jobs.map((j) => String(j['id']));
  const planning = main.find((i) => i['entity'] === 'planning' && i['id'] === summary.planningId)!;
  const emails = users.map((u) => `EMAIL#${String(u['email']).toLowerCase()}`);
  const state = clean({
    users: users.map((u) => ({
      email: u['email'],
      name: u['name'],
      roles: u['roles'],
      confirmed: Boolean(u['confirmed_at']),
    })),
    email_claims: main.filter((i) => emails.includes(String(i['PK']))).length,
    counters: main
      .filter((i) => String(i['PK']).startsWith('COUNT#') && String(i['PK']).includes(org))
      .map((i) => ({ scope: i['PK'], count: i['count'] ?? i['total'] ?? i['value'] })),
    import_jobs: jobs.map((j) => ({
      status: j['current_status'],
      files: ((j['upload_record'] as Item)['files'] as Item[]).map(({ storage_upload_key, url, ...file }) => file),
    })),
    import_results: main.filter(
      (i) => i['entity'] === 'import_result' && jobIds.some((id) => String(i['PK']).includes(id)),
    ).length,
    // A task's key and index entries name its id and job (derived per day): the task_ref names it on both days.
    tasks: main
      .filter((i) => i['entity'] === 'task' && i['org_id'] === org)
      .map(({ id, PK, import_job_id, created_at, client_time_utc, _w, GSI1SK, GSI2SK, ...rest }) => ({
        key: `TASK#${String(rest['task_ref'])}`,
        ...rest,
      })),
    items: main
      .filter((i) => i['entity'] === 'task_item' && i['org_id'] === org)
      .map(({ id, PK, import_job_id, created_at, _w, ...rest }) => ({
        key: `TASK#${String(rest['task_ref'])}`,
        ...rest,
      })),
    planning: {
      name: planning['name'],
      job: (planning['job'] as Item)['current_status'],
      statuses: ((planning['job'] as Item)['statuses'] as Item[]).map((s) => s['status']),
      // Each runsheet with its tasks as P5 copied them (by task_ref: task ids are per day): the job pairs by their
      // pickups, so a task copied wrong (as nulls, once, from a claim whose answer was lost) offers it to others.
      runsheets: main
        .filter((i) => i['entity'] === 'runsheet' && i['PK'] === planning['PK'])
        .map((r) => ({
          id: r['id'],
          tasks: (r['tasks'] as Item[]).map((t) => ({ task_ref: t['task_ref'], from_address: t['from_address'] })),
        }))
        .sort(byJson),
      drivers: main.filter((i) => i['entity'] === 'planning_driver' && i['PK'] === planning['PK']).length,
      results: main.filter((i) => i['entity'] === 'planning_result' && i['PK'] === planning['PK']).length,
    },
    pairs: main
      .filter((i) => i['entity'] === 'pair_record' && i['org_id'] === org)
      // Who is offered what, and who took it, as on the calm day: the job pairs by the drivers' positions and the
      // runsheets' pickups, which faults must not change (a storm day once offered RS-2 and RS-6 to other drivers:
      // P5 had copied a task as nulls after its claim's answer was lost; test/e2e/planning-faults.test.ts).
      .map((p) => ({
        runsheet: (p['pair'] as { runsheet: { id: string } }).runsheet.id,
        driver: (p['pair'] as { driver: { id: string } }).driver.id,
        state: p['current_state'],
        history: pairFromItem(p).statuses.map((s) => `${s.action}:${s.reason ?? ''}`),
      })),
    assignments: main
      .filter(
        (i) => i['entity'] === 'runsheet_assignment' && String(i['PK']).startsWith(`BPLAN#${summary.planningId}#`),
      )
      .map((a) => ({ runsheet: a['SK'], driver: a['driver_id'] })),
    locations: locations
      .filter((l) => names.has(String(l['user_id'] ?? '')))
      .map((l) => ({ driver: l['user_id'], latitude: l['latitude'], longitude: l['longitude'] })),
  }) as Record<string, unknown>;
  // Sorted after the ids became names, so that both days list alike.
  for (const [key, value] of Object.entries(state)) if (Array.isArray(value)) state[key] = value.sort(byJson);
  return state;
}

describe('the day of dispatch under chaos', () => {
  it('ends as the fault-free day does: nothing missing, nothing twice, no 500, no 401', async () => {
    const calm = tally();
    let started = Date.now();
    const calmDay = await day('calm', calm);
    const calmMs = Date.now() - started;
    const calmState = await endState(calmDay, 'calm');

    await dynamodb.set(['throttle', 'reset'], FAULT_SHARE);
    await s3!.set(['throttle', 'reset'], FAULT_SHARE);
    const storm = tally();
    let stormDay: DemoSummary;
    started = Date.now();
    try {
      stormDay = await day('storm', storm);
    } finally {
      await dynamodb.set('pass');
      await s3!.set('pass');
    }
    const stormMs = Date.now() - started;
    const stormState = await endState(stormDay, 'storm');

    const faults = (p: FaultProxy) =>
      `${p.counts.throttle} throttled, ${p.counts.reset} reset, ${p.counts.pass} passed`;
    console.log(
      [
        `chaos (seed ${SEED}, ${FAULT_SHARE * 100} % of DynamoDB and S3 calls throttled or reset):`,
        `  DynamoDB: ${faults(dynamodb)}; S3: ${faults(s3!)}`,
        `  fault-free day (${calmMs} ms): ${calm.requests} requests, statuses ${JSON.stringify(calm.statuses)}`,
        `  chaos day (${stormMs} ms): ${storm.requests} requests (${storm.retries} retries), 503s seen ${storm.statuses['503'] ?? 0}, statuses ${JSON.stringify(storm.statuses)}`,
      ].join('\n'),
    );

    expect(dynamodb.counts.throttle + dynamodb.counts.reset).toBeGreaterThan(0);
    expect(s3!.counts.throttle + s3!.counts.reset).toBeGreaterThan(0);
    expect(storm.statuses['500'] ?? 0).toBe(0);
    expect(storm.statuses['401'] ?? 0).toBe(0);
    expect(stormDay.importStatus).toBe('completed');
    expect(stormDay.jobStatus).toBe('completed');
    expect(stormState).toEqual(calmState);
    // The state is the demo's day: six tasks and items, twelve pairs, six runsheets assigned.
    expect(calmState).toMatchObject({ tasks: { length: 6 }, items: { length: 6 }, assignments: { length: 6 } });
    expect((calmState as { pairs: unknown[] }).pairs).toHaveLength(12);
    // Both days take 3 to 5 minutes on a shared, loaded 2-core machine (passing runs took 195 s and 267 s); 600 s made
    // the test time out before any assertion.
  }, 600_000);
});
