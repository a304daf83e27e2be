/**
 * The fourth probe's hostile bodies (issue 51, findings 1 and 5), sent as the probe sent them, through the local host:
 * X23 with tens of thousands of `{}` vehicles answers a 400 naming its first 100 problems while `/health` keeps
 * answering, a body past X23's bound is a 413 naming it, a coordinate DynamoDB cannot store is a 400 at its path
 * (not a 500), and an import whose rows hold such numbers imports its good rows and names the bad ones.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningHost } from '../../lib/local/start.ts';
import { ROLES } from '../../shared/auth/roles.ts';
import { MAX_BUILD_BODY_BYTES } from '../../shared/routing/schemas.ts';
import { type Client, client, invitedMember, loginAs, newOrganisation } from '../support/http.ts';
import { importCsv } from '../support/imports.ts';
import { ADMIN, startTestHost } from '../support/local.ts';

let host: RunningHost;
let api: Client;
let merchant: string;

beforeAll(async () => {
  host = await startTestHost();
  api = client(host.url);
  const admin = (await loginAs(api, ADMIN.email, ADMIN.password)).bearer_token;
  const org = await newOrganisation(api, admin, 'Probe Four Ltd', 'merchant');
  merchant = (await invitedMember(api, admin, 'Merchant', ROLES.Merchant, org)).token;
}, 60_000);
afterAll(() => host?.stop());

interface ProblemBody {
  code: string;
  detail: string;
  errors: { path: string; message: string }[];
  errors_truncated?: boolean;
  errors_count?: number;
}

const TASKS_HEADER =
  'task_ref,from_street_address,from_city,from_country,to_street_address,to_city,to_country,from_start_time_utc,from_end_time_utc,from_timezone,to_start_time_utc,to_end_time_utc,to_timezone,from_latitude,from_longitude,total_item_weight,total_weight_unit';
const row = (ref: string, latitude: string, weight: string) =>
  `${ref},1 Depot Way,Singapore,SG,1 Mall,Singapore,SG,2026-11-22T01:00:00Z,2026-11-22T03:00:00Z,Asia/Singapore,2026-11-22T04:00:00Z,2026-11-22T06:00:00Z,Asia/Singapore,${latitude},103.85,${weight},kg`;

describe('X23 against a body of 40 000 `{}` vehicles (issue 51.1)', () => {
  it('answers 400 with the first 100 problems and their count, and /health answers all the while', async () => {
    // 120 KB, as the probe sent: before, 17.7 s of validation on the host's one thread, then a 502.
    const body = { task_ids: ['0'.repeat(24)], vehicles: Array.from({ length: 40_000 }, () => ({})) };
    let pending = true;
    const big = api.post<ProblemBody>(`/v1/plannings/${randomUUID()}/routes`, body, merchant).finally(() => {
      pending = false;
    });
    const health: number[] = [];
    do health.push((await fetch(`${host.url}/health`)).status);
    while (pending);
    const answer = await big;
    expect(health.every((status) => status === 200)).toBe(true);
    expect(answer.status, JSON.stringify(answer.body).slice(0, 500)).toBe(400);
    expect(answer.body.code).toBe('validation_failed');
    expect(answer.body.errors).toHaveLength(100);
    expect(answer.body.errors[0]).toEqual({
      path: 'vehicles',
      message: 'must hold at most 200 entries (it holds 40000)',
    });
    expect(answer.body).toMatchObject({ errors_truncated: true, errors_count: 802 });
  }, 60_000);

  it('refuses a body past X23’s bound with 413 naming it, and takes a maximal legitimate body', async () => {
    const tooLarge = { vehicles: Array.from({ length: 200_000 }, () => ({})) };
    const refused = await api.post<ProblemBody>(`/v1/plannings/${randomUUID()}/routes`, tooLarge, merchant);
    expect(refused.status).toBe(413);
    expect(refused.body).toMatchObject({
      code: 'payload_too_large',
      detail: `the body exceeds ${MAX_BUILD_BODY_BYTES} bytes`,
    });
    // 2 000 task ids and 200 vehicle entries with every field, indented: past validation (to the planning, unknown).
    const vehicle = (i: number) => ({
      id: `vehicle-${i}`.padEnd(60, 'x'),
      count: 2,
      start: { latitude: -33.868820123456786, longitude: 151.2092951234568 },
      end: { latitude: -33.868820123456786, longitude: 151.2092951234568 },
      shift_start_utc: '2026-11-28T08:00:00.000+11:00',
      shift_end_utc: '2026-11-28T18:00:00.000+11:00',
      capacity: { weight_kg: 999999.123456789, volume_m3: 99999.123456789, items: 9999999 },
      service_types: ['ltl', 'motorcycle', 'car', 'mpv', 'van_1.7m', 'van_2.4m', 'lorry_10ft', 'lorry_14ft'],
      max_stops: 400,
    });
    const maximal = {
      task_ids: Array.from({ length: 2000 }, (_, i) => i.toString(16).padStart(24, '0')),
      vehicles: Array.from({ length: 200 }, (_, i) => vehicle(i)),
      travel: { speed_kmh: 30.5, detour_factor: 1.35 },
      time_limit_s: 300,
      version_rev: '1-abc',
    };
    const text = JSON.stringify(maximal, null, 4);
    expect(Buffer.byteLength(text)).toBeGreaterThan(250_000);
    const response = await fetch(`${host.url}/v1/plannings/${randomUUID()}/routes`, {
      method: 'POST',
      headers: { authorization: `Bearer ${merchant}`, 'content-type': 'application/json' },
      body: text,
    });
    expect(response.status, await response.clone().text()).toBe(404);
  }, 60_000);
});

describe('numbers DynamoDB cannot store (issue 51.5)', () => {
  it('imports the good rows of a file and names each row whose number is out of range', async () => {
    const csv = [
      TASKS_HEADER,
      row('GOOD-1', '1.30', '5'),
      row('HEAVY', '1.30', '1e16'),
      row('TINY', '1e-200', '5'),
      row('GOOD-2', '0', '0.5'),
    ].join('\n');
    // Before: three attempts, then the whole import failed, its good rows with it.
    const { importJobId, taskIds } = await importCsv(api, merchant, csv);
    expect(taskIds).toHaveLength(2);
    const result = await api.get<{ total_tasks_imported: number; errors: string[] }>(
      `/v1/task-import-jobs/${importJobId}/result`,
      merchant,
    );
    expect(result.body.total_tasks_imported).toBe(2);
    expect(result.body.errors).toEqual([
      'tasks.csv row 3 (task_ref HEAVY): total_item_weight: must be at most 1000000000',
      'tasks.csv row 4 (task_ref TINY): from_latitude: must be 0 or between 1e-130 and 9007199254740991 in magnitude',
    ]);
  }, 240_000);

  it('answers X23 with a coordinate of 5e-324 with a 400 at its path, not a 500', async () => {
    const planning = await api.post<{ id: string; version_rev: string }>('/v1/plannings', { name: 'Tiny' }, merchant);
    expect(planning.status).toBe(201);
    const { taskIds } = await importCsv(api, merchant, [TASKS_HEADER, row('T-1', '1.3', '5')].join('\n'));
    const answer = await api.post<ProblemBody>(
      `/v1/plannings/${planning.body.id}/routes`,
      {
        task_ids: taskIds,
        vehicles: [
          {
            id: 'v1',
            start: { latitude: 5e-324, longitude: 103.85 },
            shift_start_utc: '2026-11-22T00:00:00Z',
            shift_end_utc: '2026-11-22T12:00:00Z',
          },
        ],
        dry_run: true,
        time_limit_s: 1,
        version_rev: planning.body.version_rev,
      },
      merchant,
    );
    expect(answer.status, JSON.stringify(answer.body)).toBe(400);
    expect(answer.body.errors).toEqual([
      {
        path: 'vehicles[0].start.latitude',
        message: 'must be 0 or between 1e-130 and 9007199254740991 in magnitude',
      },
    ]);
  }, 240_000);
});
