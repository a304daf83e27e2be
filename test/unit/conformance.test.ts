/**
 * The conformance check of test/support/conformance.ts against the document lib/openapi.ts builds: reply schemas are
 * closed (contract section 1), so a crafted reply with one member the contract does not name — a storage key at the
 * top, a lease inside the job, `entity` on a pair record, an extra member of a problem — is refused, while the same
 * reply without it passes. Pair-record tasks must carry `version_seq` (spec); a task's own client members stay open.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openApiDocument } from '../../lib/openapi.ts';
import { checkConformance } from '../support/conformance.ts';

let server: Server;
let baseUrl: string;

beforeAll(async () => {
  const document = JSON.stringify(openApiDocument());
  server = createServer((_request, response) => {
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(document);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const JSON_TYPE = 'application/json; charset=utf-8';
const PLANNING_ID = '6f1e1a2b-3c4d-4e5f-8a9b-0c1d2e3f4a5b';
const PAIR_ID = '7a1e1a2b-3c4d-4e5f-8a9b-0c1d2e3f4a5b';
const NOW = '2026-11-21T09:30:00.000Z';

const planning = (job: Record<string, unknown> = {}) => ({
  id: PLANNING_ID,
  org_id: '8b1e1a2b-3c4d-4e5f-8a9b-0c1d2e3f4a5b',
  name: 'Morning run',
  version_seq: 4,
  version_rev: '4-abcdefgh',
  total_runsheets: 1,
  total_drivers: 1,
  created_at: NOW,
  last_executed_at_client_time_utc: null,
  last_executed_at_client_timezone: null,
  last_executed_at_server_time: null,
  runsheets: [{ id: 'RS-1', name: 'Runsheet 1', tasks: [{ id: 't1', customer_ref: 'kept as sent' }], status: 'open' }],
  drivers: [{ id: '9c1e1a2b-3c4d-4e5f-8a9b-0c1d2e3f4a5b' }],
  job: {
    id: 'ad1e1a2b-3c4d-4e5f-8a9b-0c1d2e3f4a5b',
    current_status: 'processing',
    statuses: [{ status: 'queued', set_at_utc: NOW }],
    status_updated_at: NOW,
    max_candidates: 5,
    offer_ttl_s: 900,
    max_waves: 3,
    max_runsheets_per_driver: 1,
    max_location_age_s: 1800,
    ...job,
  },
  server_time: NOW,
});

const pairRecord = (task: Record<string, unknown> = { id: 't1', version_seq: 4 }) => ({
  id: PAIR_ID,
  pair: {
    id: PAIR_ID,
    runsheet: { id: 'RS-1', name: 'Runsheet 1', tasks: [task] },
    driver: { id: '9c1e1a2b-3c4d-4e5f-8a9b-0c1d2e3f4a5b', name: 'Dee' },
  },
  plan: { id: PLANNING_ID, name: 'Morning run' },
  statuses: [
    {
      current_state: 'created',
      action: 'created',
      reason: null,
      expired_time: null,
      happened_at_utc: NOW,
      saved_at_utc: NOW,
    },
  ],
  current_state: 'created',
});

const p3 = (body: unknown) => checkConformance(baseUrl, 'GET', `/v1/plannings/${PLANNING_ID}`, 200, JSON_TYPE, body);
const r1 = (body: unknown) =>
  checkConformance(baseUrl, 'GET', `/v1/broadcast-plans/${PLANNING_ID}/pairs/${PAIR_ID}`, 200, JSON_TYPE, body);

describe('the conformance check', () => {
  it('accepts a reply with the contract’s members, a task keeping its own members', async () => {
    await expect(p3(planning())).resolves.toBeUndefined();
    await expect(r1({ pair_record: pairRecord() })).resolves.toBeUndefined();
  });

  it('refuses a storage member at the top of a reply', async () => {
    for (const member of ['PK', 'SK', 'GSI1PK', 'GSI2SK', '_w', 'entity']) {
      await expect(p3({ ...planning(), [member]: 'x' })).rejects.toThrow(/must NOT have additional properties/);
    }
  });

  it('refuses a member inside a nested object: the job’s lease, a pair record’s entity, a status entry’s extra', async () => {
    await expect(p3(planning({ lease_owner: 'worker-1' }))).rejects.toThrow(/additional properties/);
    await expect(p3(planning({ lease_until: 1_800_000_000_000 }))).rejects.toThrow(/additional properties/);
    await expect(r1({ pair_record: { ...pairRecord(), entity: 'pair_record' } })).rejects.toThrow(
      /additional properties/,
    );
    const record = pairRecord();
    const statuses = [{ ...record.statuses[0]!, rev: 2 }];
    await expect(r1({ pair_record: { ...record, statuses } })).rejects.toThrow(/additional properties/);
  });

  it('refuses a pair-record task without version_seq', async () => {
    await expect(r1({ pair_record: pairRecord({ id: 't1' }) })).rejects.toThrow(/version_seq/);
  });

  it('refuses an extra member on a list reply, a message reply and a problem', async () => {
    const list = { pair_records: [pairRecord()], PK: `BPLAN#${PLANNING_ID}` };
    await expect(
      checkConformance(baseUrl, 'GET', `/v1/broadcast-plans/${PLANNING_ID}/pairs`, 200, JSON_TYPE, list),
    ).rejects.toThrow(/additional properties/);
    await expect(
      checkConformance(baseUrl, 'DELETE', `/v1/plannings/${PLANNING_ID}/drivers/${PAIR_ID}`, 200, JSON_TYPE, {
        message: 'removed',
        SK: 'DRIVER#x',
      }),
    ).rejects.toThrow(/additional properties/);
    const problem = {
      type: 'https://dispatch.internal/problems/not-found',
      title: 'Not found',
      status: 404,
      code: 'not_found',
      detail: 'planning not found',
      errors: [],
      request_id: 'r-1',
    };
    const read404 = (body: unknown) =>
      checkConformance(baseUrl, 'GET', `/v1/plannings/${PLANNING_ID}`, 404, 'application/problem+json', body);
    await expect(read404(problem)).resolves.toBeUndefined();
    await expect(read404({ ...problem, stack: 'Error: at …' })).rejects.toThrow(/additional properties/);
  });
});
