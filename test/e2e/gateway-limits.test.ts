/**
 * The local host refuses what API Gateway and Lambda refuse (issue 35, items 7, 10 and 11): routing on the decoded
 * path with no trailing slash, repeated headers joined as API Gateway joins them, Lambda's 6 291 556 bytes for an
 * event and for an answer; and the service keeps within them (a list's page ends before 6 MB, I8 redirects a file
 * whose base64 would not fit, I3's limit fits once base64-encoded, a planning holds no more than P3 can answer and
 * R2's and X12's pages end before 6 MB with their runsheets' tasks in them).
 */
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GATEWAY_HEAD_BYTES } from '../../lib/local/gateway-limits.ts';
import { LAMBDA_PAYLOAD_BYTES } from '../../lib/local/host.ts';
import type { RunningHost } from '../../lib/local/start.ts';
import { ROLES } from '../../shared/auth/roles.ts';
import { MAX_MULTIPART_BYTES } from '../../shared/imports/create.ts';
import { INLINE_DOWNLOAD_BYTES } from '../../shared/imports/uploads.ts';
import { type Client, client, invitedMember, loginAs, newOrganisation } from '../support/http.ts';
import { IMPORT_WINDOW } from '../support/imports.ts';
import { ADMIN, startTestHost } from '../support/local.ts';

let host: RunningHost;
let api: Client;
let admin: string;
let merchant: string;

beforeAll(async () => {
  host = await startTestHost();
  api = client(host.url);
  admin = (await loginAs(api, ADMIN.email, ADMIN.password)).bearer_token;
  const org = await newOrganisation(api, admin, 'Big Fields Ltd', 'merchant');
  merchant = (await invitedMember(api, admin, 'Merchant', ROLES.Merchant, org)).token;
});
afterAll(() => host?.stop());

/** A raw request: the path exactly as written (no URL normalisation) and headers that may repeat. */
function raw(method: string, path: string, headers: [string, string][] = [], body?: Buffer) {
  return new Promise<{ status: number; body: string; headers: Record<string, unknown> }>((resolve, reject) => {
    const url = new URL(host.url);
    const req = request({ host: url.hostname, port: url.port, method, path }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (c: Buffer) => chunks.push(c));
      response.on('end', () =>
        resolve({
          status: response.statusCode ?? 0,
          body: Buffer.concat(chunks).toString('utf8'),
          headers: response.headers,
        }),
      );
    });
    req.on('error', reject);
    const grouped = new Map<string, string[]>();
    for (const [name, value] of headers) grouped.set(name, [...(grouped.get(name) ?? []), value]);
    for (const [name, values] of grouped) req.setHeader(name, values.length === 1 ? values[0]! : values);
    req.end(body);
  });
}

const bearer = (token: string): [string, string] => ['authorization', `Bearer ${token}`];

describe('routing as API Gateway routes', () => {
  it('matches no route for a trailing slash', async () => {
    expect((await raw('GET', '/v1/me', [bearer(admin)])).status).toBe(200);
    const slashed = await raw('GET', '/v1/me/', [bearer(admin)]);
    expect(slashed.status).toBe(404);
    expect(JSON.parse(slashed.body)).toMatchObject({ code: 'not_found' });
  });

  it('decodes the path before matching: %2F ends a segment, an encoded letter still spells a static segment', async () => {
    // `/v1/admin/users/abc/def` is no route: the same answer as any unknown path, not A16's unknown user.
    const noRoute = JSON.parse((await raw('GET', '/v1/no/such/route', [bearer(admin)])).body) as { detail: string };
    const unknownUser = JSON.parse((await raw('GET', '/v1/admin/users/abcdef', [bearer(admin)])).body);
    const user = await raw('GET', '/v1/admin/users/abc%2Fdef', [bearer(admin)]);
    expect(user.status).toBe(404);
    expect(JSON.parse(user.body).detail).toBe(noRoute.detail);
    expect(unknownUser.detail).not.toBe(noRoute.detail);
    // `%6Eearest` is `nearest`: L3's route (a 400 for its missing query), not L2 for a driver named "nearest".
    const nearest = await raw('GET', '/v1/driver-locations/%6Eearest', [bearer(admin)]);
    expect(nearest.status).toBe(400);
    expect(JSON.parse(nearest.body).errors.map((e: { path: string }) => e.path)).toContain('query.latitude');
  });

  it('answers a malformed percent-encoding with a 400, never a 500', async () => {
    const malformed = await raw('GET', '/v1/admin/users/%E0%A4%A', [bearer(admin)]);
    expect(malformed.status).toBe(400);
    expect(JSON.parse(malformed.body)).toMatchObject({ code: 'validation_failed', errors: [{ path: 'path' }] });
  });
});

describe('headers as API Gateway passes them', () => {
  it('joins two Authorization headers with a comma, which no authorizer accepts', async () => {
    const twice = await raw('GET', '/v1/me', [bearer(admin), ['authorization', 'Bearer not-a-token']]);
    expect(twice.status).toBe(401);
    const twiceValid = await raw('GET', '/v1/me', [bearer(admin), bearer(admin)]);
    expect(twiceValid.status).toBe(401);
  });

  it('refuses a request line plus headers over 10 240 bytes with API Gateway’s 431, before any route (issue 42 item 11)', async () => {
    /** A header that makes the request line plus headers `total` bytes (the line and `host` are ~50 of them). */
    const padded = (total: number): [string, string] => ['x-padding', 'p'.repeat(total)];
    const fits = await raw('GET', '/v1/me', [bearer(admin), padded(GATEWAY_HEAD_BYTES - 1_000)]);
    expect(fits.status).toBe(200);
    for (const size of [10_752, 15_360]) {
      for (const path of ['/v1/me', '/health', '/v1/no/such/route']) {
        const refused = await raw('GET', path, [bearer(admin), padded(size)]);
        expect(refused.status, `${size} bytes, ${path}`).toBe(431);
        expect(JSON.parse(refused.body)).toEqual({ message: 'Request Header Fields Too Large' });
        expect(refused.headers['apigw-requestid']).toBeDefined();
      }
    }
    // Not only one long header: many that add up.
    const many = Array.from({ length: 12 }, (_, i): [string, string] => [`x-part-${i}`, 'p'.repeat(1_000)]);
    expect((await raw('GET', '/v1/me', [bearer(admin), ...many])).status).toBe(431);
  });
});

describe('what API Gateway adds to a request and an answer (issue 35 item 13)', () => {
  const GATEWAY_ID = /^[A-Za-z0-9+/]{15}=$/;

  it('names each request by an API Gateway id: the apigw-requestid of every answer, the function’s id when the client sends none', async () => {
    const me = await raw('GET', '/v1/me', [bearer(admin)]);
    expect(me.status).toBe(200);
    expect(me.headers['apigw-requestid']).toMatch(GATEWAY_ID);
    // The host adds no X-Request-Id to the event: the function falls back to requestContext.requestId, as deployed.
    expect(me.headers['x-request-id']).toBe(me.headers['apigw-requestid']);
    const traced = await raw('GET', '/v1/me', [bearer(admin), ['x-request-id', 'trace-35']]);
    expect(traced.headers['x-request-id']).toBe('trace-35');
    expect(traced.headers['apigw-requestid']).toMatch(GATEWAY_ID);
    const refused = await raw('GET', '/v1/me');
    expect(refused.status).toBe(401);
    expect(refused.headers['apigw-requestid']).toMatch(GATEWAY_ID);
  });

  it('answers an OPTIONS to any path itself, with the CORS headers, before any route or function', async () => {
    for (const path of ['/v1/me', '/v1/admin/users/abc', '/v1/no/such/route', '/elsewhere']) {
      const preflight = await raw('OPTIONS', path, [
        ['origin', 'https://app.example'],
        ['access-control-request-method', 'PUT'],
      ]);
      expect(preflight.status, path).toBe(204);
      expect(preflight.body).toBe('');
      expect(preflight.headers['access-control-allow-origin']).toBe('*');
      expect(preflight.headers['apigw-requestid']).toMatch(GATEWAY_ID);
    }
  });
});

describe('Lambda’s 6 MB for an event and an answer', () => {
  it('refuses an event over 6 291 556 bytes as the platform does, before the function runs', async () => {
    const body = Buffer.from(JSON.stringify({ user: { name: 'x'.repeat(6_400_000) } }));
    const refused = await raw('PUT', '/v1/me/account', [bearer(admin), ['content-type', 'application/json']], body);
    expect(refused.status).toBe(500);
    expect(JSON.parse(refused.body)).toEqual({ message: 'Internal Server Error' });
    // Below Lambda's limit the function's own 1 MiB limit answers, as in the cloud.
    const big = Buffer.from(JSON.stringify({ user: { name: 'x'.repeat(2_000_000) } }));
    const own = await raw('PUT', '/v1/me/account', [bearer(admin), ['content-type', 'application/json']], big);
    expect(own.status).toBe(413);
  });

  it('keeps I3’s limit below what base64 makes of Lambda’s 6 MB', async () => {
    expect(Math.ceil(MAX_MULTIPART_BYTES / 3) * 4).toBeLessThan(LAMBDA_PAYLOAD_BYTES - 200_000);
    const form = new FormData();
    form.append('files', new Blob([Buffer.alloc(MAX_MULTIPART_BYTES + 1000, 0x61)], { type: 'text/csv' }), 'tasks.csv');
    const response = await api.upload<{ detail: string }>('/v1/task-import-jobs/uploads', form, merchant);
    expect(response.status).toBe(413);
    expect(response.body.detail).toContain(`at most ${MAX_MULTIPART_BYTES} bytes`);
  });

  it('ends a page of tasks before its answer passes 6 MB, and the token walks every task once', async () => {
    const TASKS = 200;
    // 200 tasks, each with nine fields of 1 000 quotes and backslashes: 1.8 MB stored, about 7 MB as the answer would
    // carry them (each character escaped in the JSON body, and again in the result that holds the body as a string).
    const long = (c: string) => `${c}${'"\\'.repeat(500)}`.slice(0, 1000);
    const header =
      'task_ref,from_building_name,from_street_address,from_city,from_state,from_country,to_building_name,' +
      'to_street_address,to_city,to_state,to_country,notes,from_start_time_utc,from_end_time_utc,from_timezone,' +
      'to_start_time_utc,to_end_time_utc,to_timezone';
    const csvField = (s: string) => `"${s.replace(/"/g, '""')}"`;
    const rows = Array.from({ length: TASKS }, (_, i) =>
      [
        `T${i}`,
        csvField(long('a')),
        csvField(long('b')),
        csvField(long('c')),
        csvField(long('d')),
        'SG',
        csvField(long('e')),
        csvField(long('f')),
        csvField(long('g')),
        csvField(long('h')),
        'SG',
        csvField(long('n')),
        '2026-11-22T01:00:00Z',
        '2026-11-22T03:00:00Z',
        'Asia/Singapore',
        '2026-11-22T04:00:00Z',
        '2026-11-22T06:00:00Z',
        'Asia/Singapore',
      ].join(','),
    );
    const csv = Buffer.from(`${header}\n${rows.join('\n')}\n`);
    const presigned = await api.get<{ file: { url: string; storage_upload_key: string } }>(
      '/v1/task-import-jobs/upload-url?filename=tasks.csv',
      merchant,
    );
    expect(
      (await fetch(presigned.body.file.url, { method: 'PUT', body: csv, headers: { 'content-type': 'text/csv' } }))
        .status,
    ).toBe(200);
    const job = await api.post<{ id: string }>(
      '/v1/task-import-jobs',
      { files: [{ storage_upload_key: presigned.body.file.storage_upload_key }], ...IMPORT_WINDOW },
      merchant,
    );
    expect(job.status, JSON.stringify(job.body)).toBe(201);
    expect((await api.post(`/v1/task-import-jobs/${job.body.id}/start`, {}, merchant)).status).toBe(202);
    const deadline = Date.now() + 150_000;
    let status = '';
    while (!['completed', 'failed'].includes(status) && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 200));
      status = (await api.get<{ import_status: string }>(`/v1/task-import-jobs/${job.body.id}/status`, merchant)).body
        .import_status;
    }
    const result = await api.get<{ total_tasks_imported: number; errors: string[] }>(
      `/v1/task-import-jobs/${job.body.id}/result`,
      merchant,
    );
    expect(result.body.errors).toEqual([]);
    expect(result.body.total_tasks_imported).toBe(TASKS);

    const seen: string[] = [];
    let path = `/v1/tasks?import_job_id=${job.body.id}&per_page=1000`;
    let pages = 0;
    for (;;) {
      const page = await raw('GET', path, [bearer(merchant)]);
      expect(page.status).toBe(200);
      expect(Buffer.byteLength(page.body)).toBeLessThan(LAMBDA_PAYLOAD_BYTES);
      const parsed = JSON.parse(page.body) as { tasks: { task_ref: string }[]; meta: { next_page_token: string } };
      pages++;
      seen.push(...parsed.tasks.map((t) => t.task_ref));
      if (!parsed.meta.next_page_token) break;
      path = `/v1/tasks?import_job_id=${job.body.id}&per_page=1000&page_token=${encodeURIComponent(parsed.meta.next_page_token)}`;
    }
    expect(pages).toBeGreaterThan(1);
    expect(new Set(seen).size).toBe(TASKS);
    expect(seen).toHaveLength(TASKS);
  }, 180_000);

  it('redirects a file whose base64 would not fit in an answer (I8)', async () => {
    const presigned = await api.get<{
      file: { url: string; storage_upload_key: string; storage_upload_bucket: string };
    }>('/v1/task-import-jobs/upload-url?filename=big.csv', merchant);
    const bytes = Buffer.alloc(INLINE_DOWNLOAD_BYTES + 1, 0x61);
    expect(
      (await fetch(presigned.body.file.url, { method: 'PUT', body: bytes, headers: { 'content-type': 'text/csv' } }))
        .status,
    ).toBe(200);
    const file = presigned.body.file;
    const path = `/v1/files?bucket=${file.storage_upload_bucket}&object_key=${encodeURIComponent(file.storage_upload_key)}`;
    const big = await raw('GET', path, [bearer(merchant)]);
    expect(big.status).toBe(302);
    expect(Math.ceil(INLINE_DOWNLOAD_BYTES / 3) * 4).toBeLessThan(LAMBDA_PAYLOAD_BYTES - 10_000);
  });

  it('holds a planning to what P3 can answer, and ends R2’s and X12’s pages before 6 MB', async () => {
    const transporter = await newOrganisation(api, admin, 'Heavy Runsheets Ltd', 'transporter');
    const planner = (await invitedMember(api, admin, 'OrgAdmin', ROLES.OrgAdmin, transporter)).token;
    const drivers: { id: string; token: string }[] = [];
    for (let j = 0; j < 3; j++) {
      const driver = await invitedMember(api, admin, 'OrgDriver', ROLES.OrgDriver, transporter);
      const fix = { latitude: 1.3 + j / 1000, longitude: 103.8, client_time_utc: new Date().toISOString() };
      expect((await api.put('/v1/driver/location', fix, driver.token)).status).toBe(200);
      drivers.push(driver);
    }
    // A runsheet of 200 tasks whose addresses are quotes at their longest: about 290 KB stored (under DynamoDB's
    // 400 KB an item), 580 KB as P5's body (under its 1 MiB), about 1.2 MB in an answer (each quote escaped twice).
    const quotes = (n: number) => '"'.repeat(n);
    const heavy = (id: string) => ({
      id,
      tasks: Array.from({ length: 200 }, (_, k) => ({
        id: `${id}-T${k}`,
        from_address: { street_address: quotes(500), building_name: quotes(200), latitude: 1.3, longitude: 103.8 },
        to_address: { street_address: quotes(500), building_name: quotes(200) },
      })),
    });
    const newPlanning = async (name: string) =>
      (await api.post<{ id: string }>('/v1/plannings', { name }, planner)).body.id;
    const readPlanning = (id: string) => raw('GET', `/v1/plannings/${id}`, [bearer(planner)]);

    // P5 one runsheet at a time: each answer carries the whole planning, under 6 MB, until the one that would pass it.
    const full = await newPlanning('Full');
    let held = 0;
    let refused: { status: number; body: { errors?: { path: string; message: string }[] } } | undefined;
    for (let i = 0; i < 8 && !refused; i++) {
      const added = await api.post<{ errors?: { path: string; message: string }[] }>(
        `/v1/plannings/${full}/runsheets`,
        { runsheets: [heavy(`RS-${i}`)] },
        planner,
      );
      if (added.status === 400) refused = added;
      else {
        expect(added.status, JSON.stringify(added.body).slice(0, 300)).toBe(200);
        held++;
        const read = await readPlanning(full);
        expect(read.status).toBe(200);
        expect(Buffer.byteLength(read.body)).toBeLessThan(LAMBDA_PAYLOAD_BYTES);
      }
    }
    expect(held).toBeGreaterThanOrEqual(3);
    expect(refused?.body.errors?.[0]).toMatchObject({ path: 'runsheets' });
    expect(refused?.body.errors?.[0]?.message).toContain('another planning');
    // Refused before anything was written: the planning holds what it held.
    const after = JSON.parse((await readPlanning(full)).body) as { total_runsheets: number; runsheets: unknown[] };
    expect(after.total_runsheets).toBe(held);
    expect(after.runsheets).toHaveLength(held);

    // Its job offers every runsheet to the three drivers: each pair carries its runsheet's tasks, 1.2 MB.
    const start = async (planId: string) => {
      const ready = await api.post<{ version_rev: string }>(
        `/v1/plannings/${planId}/drivers`,
        { drivers: drivers.map((d) => ({ id: d.id })) },
        planner,
      );
      expect(ready.status).toBe(200);
      const started = await api.post(
        `/v1/plannings/${planId}/job`,
        { version_rev: ready.body.version_rev, max_candidates: 3, offer_ttl_s: 3600 },
        planner,
      );
      expect(started.status, JSON.stringify(started.body)).toBe(202);
    };
    /** Every page of a list, each answer under Lambda's limit; the items by id, each seen once. */
    const walk = async (first: string, key: 'pair_records' | 'offers', token: string) => {
      const ids: string[] = [];
      let pages = 0;
      for (let path = first; ; pages++) {
        const page = await raw('GET', path, [bearer(token)]);
        expect(page.status, page.body.slice(0, 300)).toBe(200);
        expect(Buffer.byteLength(page.body)).toBeLessThan(LAMBDA_PAYLOAD_BYTES);
        const parsed = JSON.parse(page.body) as Record<string, { id: string }[]> & {
          meta: { next_page_token: string | null };
        };
        ids.push(...parsed[key]!.map((p) => p.id));
        if (!parsed.meta.next_page_token) return { ids, pages: pages + 1 };
        path = `${first}${first.includes('?') ? '&' : '?'}page_token=${encodeURIComponent(parsed.meta.next_page_token)}`;
      }
    };
    await start(full);
    const deadline = Date.now() + 60_000;
    let pairs = await walk(`/v1/broadcast-plans/${full}/pairs`, 'pair_records', planner);
    while (pairs.ids.length < held * 3 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 500));
      pairs = await walk(`/v1/broadcast-plans/${full}/pairs`, 'pair_records', planner);
    }
    expect(pairs.ids).toHaveLength(held * 3);
    expect(new Set(pairs.ids).size).toBe(held * 3);
    expect(pairs.pages).toBeGreaterThan(1);

    // A second planning of two such runsheets: each driver now has more offers than one answer carries.
    const second = await newPlanning('Second');
    for (const id of ['RS-A', 'RS-B']) {
      expect((await api.post(`/v1/plannings/${second}/runsheets`, { runsheets: [heavy(id)] }, planner)).status).toBe(
        200,
      );
    }
    await start(second);
    const offers = async () => walk('/v1/driver/offers?per_page=1000', 'offers', drivers[0]!.token);
    let mine = await offers();
    while (mine.ids.length < held + 2 && Date.now() < deadline + 30_000) {
      await new Promise((r) => setTimeout(r, 500));
      mine = await offers();
    }
    expect(mine.ids).toHaveLength(held + 2);
    expect(new Set(mine.ids).size).toBe(held + 2);
    expect(mine.pages).toBeGreaterThan(1);
  }, 240_000);
});
