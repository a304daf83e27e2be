/**
 * Issue 51 items 2 and 7 as a probe meets them, over HTTP through one local host (contract 4.10): an organisation
 * has at most 2 builds queued or solving (the 10th, 9th … of a burst answer 429 with Retry-After and a sentence), its
 * builds never hold back another organisation's (the host runs 2 at once, in turns by organisation), the requeue
 * sweep never sends a waiting build's message twice, the travel matrix is left to the solver's thread, and a build
 * whose caller lost access while it solved (a partner's scopes taken away at T5, a user deleted at A17) ends `failed`
 * with `access_revoked` and adds nothing. Builds are large enough (and their time limits long enough) to overlap.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RoutingRow, routingCsv } from '../../bench/vrp/csv.ts';
import type { RunningHost } from '../../lib/local/start.ts';
import { ROLES } from '../../shared/auth/roles.ts';
import { asFunction } from '../../shared/local-invocation.ts';
import { LOCAL_ROUTE_BUILDS_AT_ONCE, localMessagesSent } from '../../shared/ports/queue.ts';
import { solvingThreads } from '../../shared/routing/solve-runner.ts';
import { greatCircleM, matrixOf, straightLineTravel } from '../../shared/routing/travel.ts';
import { requeueStaleJobs } from '../../shared/workers/requeue.ts';
import {
  type Client,
  client,
  clientCredentialsToken,
  invitedMember,
  loginAs,
  newOrganisation,
} from '../support/http.ts';
import { importCsv } from '../support/imports.ts';
import { ADMIN, startTestHost } from '../support/local.ts';
import { until } from '../support/until.ts';

type Build = { id: string; status: string; updated_at: string; error?: { code: string; detail: string } };
type Problem = { code: string; detail: string };

let host: RunningHost;
let api: Client;
let admin: string;

/** An organisation with an OrgAdmin, its tasks (one import) and a planning. */
interface Org {
  id: string;
  planner: string;
  taskIds: string[];
}

const DAY = Date.parse('2026-12-01T00:00:00Z');
const hour = (h: number) => DAY + h * 3_600_000;
const HUB = { latitude: 1.3, longitude: 103.8 };

/** `n` tasks spread over a city, with windows that leave the search work to do for seconds. */
const cityRows = (prefix: string, n: number): RoutingRow[] =>
  Array.from({ length: n }, (_, i) => ({
    ref: `${prefix}-${i + 1}`,
    from: { latitude: 1.25 + ((i * 37) % 100) / 1000, longitude: 103.7 + ((i * 53) % 100) / 500 },
    to: { latitude: 1.25 + ((i * 71) % 100) / 1000, longitude: 103.7 + ((i * 29) % 100) / 500 },
    fromOpenMs: hour((i % 4) * 2),
    fromCloseMs: hour((i % 4) * 2 + 3),
    toOpenMs: hour((i % 4) * 2 + 1),
    toCloseMs: hour((i % 4) * 2 + 6),
    fromServiceS: 60,
    toServiceS: 120,
    weightKg: 5 + (i % 7),
  }));

const vans = (count: number) => [
  {
    id: 'van',
    count,
    start: HUB,
    shift_start_utc: new Date(hour(0)).toISOString(),
    shift_end_utc: new Date(hour(14)).toISOString(),
    capacity: { weight_kg: 60 },
  },
];

async function organisation(name: string, tasks: number): Promise<Org> {
  const id = await newOrganisation(api, admin, name);
  const planner = (await invitedMember(api, admin, 'OrgAdmin', ROLES.OrgAdmin, id)).token;
  const { taskIds } = await importCsv(api, planner, routingCsv(cityRows(name, tasks)));
  return { id, planner, taskIds };
}

async function newPlanning(token: string, name: string) {
  const made = await api.post<{ id: string; version_rev: string }>('/v1/plannings', { name }, token);
  expect(made.status).toBe(201);
  return made.body;
}

/** X23 as `token`, a dry run unless told: many builds of one planning may then run side by side. */
function build(token: string, planning: { id: string; version_rev: string }, taskIds: string[], extra = {}) {
  return api.post<{ route_build: Build } & Problem>(
    `/v1/plannings/${planning.id}/routes`,
    {
      task_ids: taskIds,
      vehicles: vans(12),
      time_limit_s: 3,
      dry_run: true,
      version_rev: planning.version_rev,
      ...extra,
    },
    token,
  );
}

const ended = (token: string, planningId: string, buildId: string) =>
  until(
    () => api.get<{ route_build: Build }>(`/v1/plannings/${planningId}/routes/${buildId}`, token),
    (read) => ['completed', 'failed'].includes(read.body.route_build.status),
    120_000,
  ).then((read) => read.body.route_build);

let a: Org;
let b: Org;

beforeAll(async () => {
  host = await startTestHost();
  api = client(host.url);
  admin = (await loginAs(api, ADMIN.email, ADMIN.password)).bearer_token;
  [a, b] = [await organisation('Fair A', 120), await organisation('Fair B', 120)];
}, 300_000);

afterAll(async () => {
  await host?.stop();
});

describe('fairness of route builds (issue 51 item 2)', () => {
  it('takes 2 builds of a burst of 10 (429 with Retry-After for the rest), runs B’s beside them, 2 at a time, never sending a waiting build twice', async () => {
    const planningA = await newPlanning(a.planner, 'A burst');
    const planningB = await newPlanning(b.planner, 'B one');
    // The most threads solving at once, sampled while the builds run.
    let most = 0;
    const sampler = setInterval(() => {
      most = Math.max(most, solvingThreads.size);
    }, 5);
    const sentBefore = localMessagesSent.get('route_build') ?? 0;
    const burst = await Promise.all(Array.from({ length: 10 }, () => build(a.planner, planningA, a.taskIds)));
    const accepted = burst.filter((reply) => reply.status === 202);
    const refused = burst.filter((reply) => reply.status === 429);
    expect(accepted).toHaveLength(2);
    expect(refused).toHaveLength(8);
    for (const reply of refused) {
      expect(reply.body.code).toBe('rate_limited');
      expect(reply.body.detail).toMatch(/at most|the most it may have/);
      expect(Number(reply.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    }
    // B's build is due to the requeue sweep at once (as if 120 s had passed) while it waits its turn.
    process.env['JOB_REQUEUE_AFTER_MS'] = '0';
    const fromB = await build(b.planner, planningB, b.taskIds).finally(() => {
      delete process.env['JOB_REQUEUE_AFTER_MS'];
    });
    expect(fromB.status, JSON.stringify(fromB.body)).toBe(202);
    const idB = fromB.body.route_build.id;
    // It waits behind A's two (the host runs 2 at once): the sweep, due for it, leaves it be.
    const waiting = await api.get<{ route_build: Build }>(`/v1/plannings/${planningB.id}/routes/${idB}`, b.planner);
    expect(waiting.body.route_build.status).toBe('queued');
    expect(await asFunction('workers/expire-offers', () => requeueStaleJobs([b.id]))).toBe(0);
    const endsA = await Promise.all(accepted.map((reply) => ended(a.planner, planningA.id, reply.body.route_build.id)));
    const endB = await ended(b.planner, planningB.id, idB);
    clearInterval(sampler);
    expect([...endsA, endB].map((done) => done.status)).toEqual(['completed', 'completed', 'completed']);
    expect(most).toBeLessThanOrEqual(LOCAL_ROUTE_BUILDS_AT_ONCE);
    expect(most).toBeGreaterThan(0);
    // One message each: three builds, three messages (neither this sweep nor the host's own, every 2 s, sent one).
    expect((localMessagesSent.get('route_build') ?? 0) - sentBefore).toBe(3);
    // B's build ended no later than one build after A's first: before A's last had ended plus one build's time.
    const endedAt = (done: Build) => Date.parse(done.updated_at);
    const firstA = Math.min(...endsA.map(endedAt));
    const lastA = Math.max(...endsA.map(endedAt));
    expect(endedAt(endB)).toBeLessThanOrEqual(lastA + (lastA - firstA) + 30_000);
    // Their places are given back: A may build again.
    const again = await build(a.planner, planningA, a.taskIds, { time_limit_s: 1 });
    expect(again.status, JSON.stringify(again.body)).toBe(202);
    await ended(a.planner, planningA.id, again.body.route_build.id);
  }, 300_000);

  it('leaves the straight-line matrix to the solver’s thread: the travel port answers its recipe, not a matrix built on the event loop', async () => {
    const points = [HUB, { latitude: 1.31, longitude: 103.81 }, HUB];
    const { source, indexOf } = await straightLineTravel({ speed_kmh: 36, detour_factor: 1 }).matrix(points);
    expect(source).not.toHaveProperty('built');
    expect(indexOf).toEqual([0, 1, 0]);
    const matrix = matrixOf(source);
    expect(matrix.size).toBe(2);
    expect(matrix.distanceM[1]).toBeCloseTo(greatCircleM(HUB, points[1]!), 6);
    expect(matrix.durationS[1]).toBeCloseTo(matrix.distanceM[1]! / 10, 6);
  });
});

describe('a build re-checks its caller (issue 51 item 7)', () => {
  /** Waits until the build is solving (its thread running). */
  const solving = (token: string, planningId: string, buildId: string) =>
    until(
      () => api.get<{ route_build: Build }>(`/v1/plannings/${planningId}/routes/${buildId}`, token),
      (read) => read.body.route_build.status !== 'queued',
      60_000,
      5,
    ).then((read) => read.body.route_build.status);

  const runsheetsOf = async (planningId: string) =>
    (await api.get<{ total_runsheets: number }>(`/v1/plannings/${planningId}`, a.planner)).body.total_runsheets;

  it('fails a partner’s build with access_revoked when T5 takes its scopes away while it solves; nothing is added', async () => {
    const partner = await api.post<{ id: string; client_key: string; secret_key: string }>(
      '/v1/admin/partner-authorizations',
      { name: 'Builder', webhook_url: 'https://hooks.example.com/builds', org_id: a.id, scopes: ['plannings'] },
      admin,
    );
    expect(partner.status).toBe(201);
    const token = await clientCredentialsToken(api, partner.body.client_key, partner.body.secret_key);
    const planning = await newPlanning(a.planner, 'Partner build');
    const queued = await build(token, planning, a.taskIds, { dry_run: false, time_limit_s: 10 });
    expect(queued.status, JSON.stringify(queued.body)).toBe(202);
    expect(await solving(a.planner, planning.id, queued.body.route_build.id)).toBe('solving');
    const scoped = await api.put(
      `/v1/admin/partner-authorizations/${partner.body.id}`,
      { name: 'Builder', webhook_url: 'https://hooks.example.com/builds', scopes: ['users:invite'] },
      admin,
    );
    expect(scoped.status).toBe(200);
    const done = await ended(a.planner, planning.id, queued.body.route_build.id);
    expect(done.status).toBe('failed');
    expect(done.error?.code).toBe('access_revoked');
    expect(await runsheetsOf(planning.id)).toBe(0);
  }, 120_000);

  it('fails a user’s build with access_revoked when A17 deletes them while it solves; nothing is added', async () => {
    const member = await invitedMember(api, admin, 'OrgAdmin', ROLES.OrgAdmin, a.id);
    const planning = await newPlanning(a.planner, 'Deleted planner');
    const queued = await build(member.token, planning, a.taskIds, { dry_run: false, time_limit_s: 10 });
    expect(queued.status, JSON.stringify(queued.body)).toBe(202);
    expect(await solving(a.planner, planning.id, queued.body.route_build.id)).toBe('solving');
    expect((await api.delete('/v1/admin/users', { user: { email: member.email } }, admin)).status).toBe(200);
    const done = await ended(a.planner, planning.id, queued.body.route_build.id);
    expect(done.status).toBe('failed');
    expect(done.error?.code).toBe('access_revoked');
    expect(await runsheetsOf(planning.id)).toBe(0);
  }, 120_000);
});
