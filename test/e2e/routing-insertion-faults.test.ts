/**
 * X30's apply under DynamoDB faults (contract 4.10/4.11, issue 54): an insertion that changes two runsheets is one
 * change of the planning, never half of one. The host's DynamoDB sits behind the fault proxy (test/support/
 * fault-proxy.ts) and its runsheet writes fail after the first:
 * - X31 applying an insertion's dry run answers 503 with one runsheet written and the other not; its retry with the
 *   same Idempotency-Key finishes it: both runsheets hold their tasks, the planning moved once (before, X31 refused
 *   every insertion whose runsheets held tasks: it took their own tasks for tasks planned elsewhere);
 * - X30 applying itself (no dry run): its worker's run is handed back, and the next run finishes it once the fault
 *   clears: the build `completed`, both runsheets holding their tasks.
 * Checked from the answers and the records (P3, X24), as a planner would.
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type RunningHost, startLocal } from '../../lib/local/start.ts';
import { ROLES } from '../../shared/auth/roles.ts';
import { type FaultProxy, startFaultProxy } from '../support/fault-proxy.ts';
import { type Client, client, invitedMember, loginAs, newOrganisation } from '../support/http.ts';
import { importCsv } from '../support/imports.ts';
import { ADMIN } from '../support/local.ts';
import { until } from '../support/until.ts';

let host: RunningHost;
let proxy: FaultProxy;
let api: Client;
let planner: string;

beforeAll(async () => {
  const endpoints = inject('endpoints');
  proxy = await startFaultProxy(endpoints.dynamodb, 'dynamodb');
  host = await startLocal({
    port: 0,
    dataDir: join(inject('dataDir'), `insertion-faults-${randomBytes(4).toString('hex')}`),
    fresh: false,
    persistent: false,
    adminEmail: ADMIN.email,
    adminPassword: ADMIN.password,
    tablePrefix: `if${randomBytes(4).toString('hex')}-`,
    endpoints: { dynamodb: proxy.url },
  });
  api = client(host.url);
  const admin = (await loginAs(api, ADMIN.email, ADMIN.password)).bearer_token;
  const org = await newOrganisation(api, admin, 'Faulty afternoon');
  planner = (await invitedMember(api, admin, 'OrgAdmin', ROLES.OrgAdmin, org)).token;
}, 120_000);

afterAll(async () => {
  await proxy?.set('pass');
  await host?.stop();
  await proxy?.close();
});

const soon = (minutes: number) => new Date(Date.now() + minutes * 60_000).toISOString();
type Point = { latitude: number; longitude: number };
/** Two depots 30 km apart: each van's new task is near it, so an insertion changes both runsheets. */
const EAST: Point = { latitude: 1.3343, longitude: 103.9563 };
const WEST: Point = { latitude: 1.3343, longitude: 103.6863 };
const near = (p: Point, d: number): Point => ({ latitude: p.latitude + d, longitude: p.longitude + d });

async function importTasks(rows: { ref: string; from: Point; to: Point }[]) {
  const header =
    'task_ref,from_street_address,from_city,from_country,to_street_address,to_city,to_country,from_start_time_utc,from_end_time_utc,from_timezone,to_start_time_utc,to_end_time_utc,to_timezone,from_latitude,from_longitude,to_latitude,to_longitude';
  const lines = rows.map(
    (r) =>
      `${r.ref},1 Depot Rd,Singapore,SG,1 Mall,Singapore,SG,${soon(-30)},${soon(240)},Asia/Singapore,${soon(-30)},${soon(360)},Asia/Singapore,${r.from.latitude},${r.from.longitude},${r.to.latitude},${r.to.longitude}`,
  );
  return (await importCsv(api, planner, [header, ...lines].join('\n'))).taskIds;
}

interface Build {
  id: string;
  status: string;
  applied_at?: string;
  error?: { code: string; detail: string };
  result?: { runsheets: { id: string; added?: string[] }[]; summary: { planned: number } };
}

async function ended(planningId: string, buildId: string): Promise<Build> {
  const read = await until(
    () => api.get<{ route_build: Build }>(`/v1/plannings/${planningId}/routes/${buildId}`, planner),
    (r) => ['completed', 'failed'].includes(r.body.route_build?.status),
    60_000,
    100,
  );
  return read.body.route_build;
}

const planningOf = (id: string) =>
  api.get<{ version_rev: string; version_seq: number; runsheets: { id: string; tasks: { id: string }[] }[] }>(
    `/v1/plannings/${id}`,
    planner,
  );

/** A planning with two built runsheets (one van at each depot, one task each) and two new tasks, one near each. */
async function twoVanDay(name: string) {
  const made = await api.post<{ id: string }>('/v1/plannings', { name }, planner);
  const planningId = made.body.id;
  const runsheets: string[] = [];
  for (const [ref, depot] of [
    ['E', EAST],
    ['W', WEST],
  ] as const) {
    const tasks = await importTasks([{ ref: `${name}-${ref}-AM`, from: near(depot, 0.002), to: near(depot, -0.01) }]);
    const built = await api.post<{ route_build: Build }>(
      `/v1/plannings/${planningId}/routes`,
      {
        task_ids: tasks,
        vehicles: [{ id: `van-${ref}`, start: depot, shift_start_utc: soon(-60), shift_end_utc: soon(600) }],
        time_limit_s: 1,
        version_rev: (await planningOf(planningId)).body.version_rev,
      },
      planner,
    );
    expect(built.status, JSON.stringify(built.body)).toBe(202);
    const done = await ended(planningId, built.body.route_build.id);
    expect(done.status, JSON.stringify(done.error)).toBe('completed');
    runsheets.push(done.result!.runsheets[0]!.id);
  }
  const fresh = await importTasks([
    { ref: `${name}-E-PM`, from: near(EAST, 0.003), to: near(EAST, -0.008) },
    { ref: `${name}-W-PM`, from: near(WEST, 0.003), to: near(WEST, -0.008) },
  ]);
  return { planningId, runsheets, fresh };
}

/** What each runsheet holds of the new tasks, by runsheet (P3). */
async function heldNew(planningId: string, runsheets: string[], fresh: string[]) {
  const planning = (await planningOf(planningId)).body;
  return runsheets.map((id) =>
    planning.runsheets
      .find((r) => r.id === id)!
      .tasks.map((t) => t.id)
      .filter((t) => fresh.includes(t)),
  );
}

describe('an insertion’s apply under DynamoDB faults', () => {
  it('X31: a fault between the two runsheets’ writes answers 503; the retry with its Idempotency-Key finishes it', async () => {
    const { planningId, runsheets, fresh } = await twoVanDay('X31');
    const before = (await planningOf(planningId)).body;
    const dry = await api.post<{ route_build: Build }>(
      `/v1/plannings/${planningId}/routes/insertions`,
      { task_ids: fresh, version_rev: before.version_rev, time_limit_s: 1, dry_run: true },
      planner,
    );
    expect(dry.status, JSON.stringify(dry.body)).toBe(202);
    const answered = await ended(planningId, dry.body.route_build.id);
    expect(answered.status, JSON.stringify(answered.error)).toBe('completed');
    expect(answered.result!.runsheets.map((r) => r.id).sort()).toEqual([...runsheets].sort());

    // One PutItem of the request before its apply and the first runsheet's write pass; every later PutItem fails,
    // past the SDK's retries.
    await proxy.set('error', 1, ['PutItem'], 2);
    const key = { 'idempotency-key': `insertion-apply-${randomBytes(4).toString('hex')}` };
    const path = `/v1/plannings/${planningId}/routes/${answered.id}/apply`;
    const failed = await api.post(path, { version_rev: before.version_rev }, planner, key);
    await proxy.set('pass');
    expect(failed.status, JSON.stringify(failed.body)).toBe(503);
    expect(failed.headers.get('content-type')).toBe('application/problem+json');
    // Half-done, as the fault left it: one runsheet holds its new task, the other not yet.
    const half = await heldNew(planningId, runsheets, fresh);
    expect(half.flat()).toHaveLength(1);

    const retried = await api.post<{ route_build: Build }>(path, { version_rev: before.version_rev }, planner, key);
    expect(retried.status, JSON.stringify(retried.body)).toBe(200);
    expect(retried.body.route_build.applied_at).toEqual(expect.any(String));
    const whole = await heldNew(planningId, runsheets, fresh);
    expect(whole.map((held) => held.length)).toEqual([1, 1]);
    expect(whole.flat().sort()).toEqual([...fresh].sort());
    // One change of the planning: its version moved once.
    expect((await planningOf(planningId)).body.version_seq).toBe(before.version_seq + 1);
    // Another apply of it is refused: it was applied once.
    const again = await api.post(path, { version_rev: (await planningOf(planningId)).body.version_rev }, planner);
    expect(again.status).toBe(409);
  }, 150_000);

  it('X30: a fault between the two runsheets’ writes hands the run back; the next run finishes it', async () => {
    const { planningId, runsheets, fresh } = await twoVanDay('X30');
    const before = (await planningOf(planningId)).body;
    // The solve writes nothing with PutItem; the apply's first runsheet write passes, the next fails (3 SDK
    // attempts: the run fails), then the fault clears.
    await proxy.set('error', 1, ['PutItem'], 1, 3);
    const queued = await api.post<{ route_build: Build }>(
      `/v1/plannings/${planningId}/routes/insertions`,
      { task_ids: fresh, version_rev: before.version_rev, time_limit_s: 1 },
      planner,
    );
    expect(queued.status, JSON.stringify(queued.body)).toBe(202);
    const done = await ended(planningId, queued.body.route_build.id);
    const faults = proxy.counts.error;
    await proxy.set('pass');
    expect(done.status, JSON.stringify(done.error)).toBe('completed');
    expect(faults).toBeGreaterThanOrEqual(3);
    expect(done.result!.summary.planned).toBe(2);
    const whole = await heldNew(planningId, runsheets, fresh);
    expect(whole.map((held) => held.length)).toEqual([1, 1]);
    expect((await planningOf(planningId)).body.version_seq).toBe(before.version_seq + 1);
  }, 150_000);
});
